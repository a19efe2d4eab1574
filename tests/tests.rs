//! Integration tests, one binary (ripgrep style): each module is a behaviour.

mod bad_input;
mod cli;
mod compat;
mod crash;
mod fuzz;
mod golden;
mod inputs;
mod model;
mod serve;
mod store;
mod stress;
mod util;
