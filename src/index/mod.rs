//! The Manku permutation-table logic that needs no storage: the layout (blocks,
//! permutations, probe covers) and the pair scan over a sorted table with its union-find.

pub mod cluster;
pub mod layout;
pub mod probing;
pub mod quality;
