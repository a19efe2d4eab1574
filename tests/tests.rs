//! Integration tests, one binary (ripgrep style): each module is a behaviour.

mod cli;
mod golden;
mod model;
mod store;
mod util;
