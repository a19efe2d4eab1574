//! The Manku permutation-table logic that needs no storage: the layout (blocks,
//! permutations, probe covers) and the pair scan over a sorted table, with the clusters
//! of its pairs (leader clustering, or connected components).

pub mod bands;
pub mod cluster;
pub mod groups;
pub mod layout;
pub mod leader;
pub mod near;
pub mod page;
pub mod probing;
pub mod quality;
