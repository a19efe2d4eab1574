//! Tools around the engine, not part of its core: quality evaluation on labelled pairs.

pub mod eval;
