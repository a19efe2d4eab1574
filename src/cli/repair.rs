//! `simstore repair`: rebuild the derived data (tables, ids, counters) from the documents;
//! with `--salvage`, first keep what a damaged store still holds.

use std::path::Path;

use anyhow::{Context, Result};
use simstore::{LogDamage, RepairReport, Store};

use super::Code;

/// Arguments of `simstore repair`.
#[derive(Debug, clap::Args)]
#[command(
    after_help = "A store whose write-ahead log or file list (MANIFEST, CURRENT) is damaged is \
                  refused by every command; `repair --salvage` opens it anyway, drops the damaged \
                  log records (their writes are lost; every intact one is kept), rebuilds the \
                  file list if it must, and says what was lost. Copy the store's directory first \
                  if you may want to try another way."
)]
pub struct Args {
    /// Open a damaged store: replay its log without the damaged records and rebuild its
    /// file list from its files; reports what was lost.
    #[arg(long)]
    salvage: bool,
}

/// Runs the command; see [`Args`].
pub fn run(db: &Path, args: Args) -> Result<Code> {
    let (store, report) = if args.salvage {
        let (store, salvage) = Store::builder(db)
            .create_if_missing(false)
            .salvage()
            .with_context(|| format!("cannot salvage {}", db.display()))?;
        print_log_damage(&salvage.log);
        (store, salvage.repair)
    } else {
        Store::builder(db)
            .create_if_missing(false)
            .repair()
            .with_context(|| format!("cannot open {}", db.display()))?
    };
    print_repair(&store, &report);
    let check = store.check()?;
    if !check.is_ok() {
        anyhow::bail!(
            "the store still has {} problems after repair: {:?}",
            check.problem_count,
            check.problems
        );
    }
    Ok(0)
}

/// What the salvage dropped of the write-ahead log, on stderr.
fn print_log_damage(log: &LogDamage) {
    if log.is_clean() {
        eprintln!(
            "the write-ahead log is intact ({} write batches)",
            log.batches
        );
    } else {
        eprintln!(
            "warning: the write-ahead log had {log}: the damaged places were dropped with the \
             writes they held, the intact batches kept"
        );
    }
}

/// What the repair rebuilt and what it could not read, on stderr.
fn print_repair(store: &Store, r: &RepairReport) {
    for (from, to) in &r.unreadable {
        eprintln!(
            "warning: documents with sequence numbers {from} to {to} could not be read (a \
             damaged part of the store's files) and are lost"
        );
    }
    if !r.undecodable.is_empty() {
        eprintln!(
            "warning: {} document records could not be decoded and were deleted",
            r.undecodable.len()
        );
    }
    if r.lost > 0 {
        eprintln!(
            "warning: {} documents lost to damage (the store counted {} before)",
            r.lost,
            r.kept + r.lost
        );
    }
    eprintln!(
        "rebuilt ids and {} tables from {} documents",
        store.layout().tables().len(),
        r.kept
    );
}
