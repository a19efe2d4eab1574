//! Integration tests, one binary (ripgrep style): each module is a behaviour.

mod architecture;
mod bad_input;
mod bulk;
mod cli;
mod cluster;
mod cluster_harness;
mod compat;
mod crash;
mod crawler;
mod dedup;
mod dedup_dataset;
mod explain;
mod export;
mod fuzz;
mod golden;
mod inputs;
mod model;
mod quality;
mod readers;
mod serve;
mod soak;
mod store;
mod stress;
mod util;
mod ux;
