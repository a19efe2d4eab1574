//! `simstore compact`: give back the disk space deletes, replacements and expiries left.

use std::path::Path;
use std::time::Instant;

use anyhow::{Context, Result};

use super::{Code, open_existing};

/// Arguments of `simstore compact`.
#[derive(Debug, clap::Args)]
#[command(after_help = "\
RocksDB compacts by itself, in its own time; this compacts every column family now and
prints the bytes before and after (`stats` shows the estimate of what is reclaimable).
Queries and writes of other threads go on meanwhile; it reads and rewrites the store's
files once.

Exit status: 0 success, 2 error.")]
pub struct Args {}

/// Runs the command; see [`Args`].
pub fn run(db: &Path, _args: Args) -> Result<Code> {
    let store = open_existing(db)?;
    let before = store.stats()?.disk_bytes;
    let start = Instant::now();
    store
        .compact()
        .with_context(|| format!("cannot compact {}", db.display()))?;
    let after = store.stats()?.disk_bytes;
    eprintln!(
        "compacted {}: {:.1} MiB → {:.1} MiB ({:.1} s)",
        db.display(),
        before as f64 / (1u64 << 20) as f64,
        after as f64 / (1u64 << 20) as f64,
        start.elapsed().as_secs_f64()
    );
    Ok(0)
}
