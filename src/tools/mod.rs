//! Tools around the engine, not part of its core: quality evaluation on labelled pairs
//! (`eval`), and the quality modes compared on them with the cost of their layouts (`modes`).

pub mod eval;
pub mod modes;
