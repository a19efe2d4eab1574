//! `simstore delete`: remove documents and their table entries.

use std::path::Path;

use anyhow::{Context, Result};

use super::{Code, open_existing};

/// Arguments of `simstore delete`.
#[derive(Debug, clap::Args)]
#[command(after_help = "Exit status: 0 every id was deleted, 1 some ids were not stored, 2 error.")]
pub struct Args {
    /// Ids of the documents to delete.
    #[arg(required = true)]
    ids: Vec<String>,
}

/// Runs the command; see [`Args`].
pub fn run(db: &Path, args: Args) -> Result<Code> {
    let store = open_existing(db)?;
    let mut missing = 0;
    for id in &args.ids {
        if store
            .delete(id)
            .with_context(|| format!("cannot delete {id:?}"))?
        {
            eprintln!("deleted {id}");
        } else {
            missing += 1;
            eprintln!("not stored: {}", super::output::escape_field(id));
        }
    }
    Ok(if missing > 0 { 1 } else { 0 })
}
