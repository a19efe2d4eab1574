//! `simstore repair`: rebuild the derived data (tables, ids, counters) from the documents.

use std::path::Path;

use anyhow::Result;

use super::{Code, open_existing};

/// Arguments of `simstore repair`.
#[derive(Debug, clap::Args)]
pub struct Args {}

/// Runs the command; see [`Args`].
pub fn run(db: &Path, _args: Args) -> Result<Code> {
    let store = open_existing(db)?;
    let kept = store.repair()?;
    let report = store.check()?;
    eprintln!(
        "rebuilt ids and {} tables from {kept} documents",
        store.layout().tables().len()
    );
    if !report.is_ok() {
        anyhow::bail!(
            "the store still has {} problems after repair: {:?}",
            report.problem_count,
            report.problems
        );
    }
    Ok(0)
}
