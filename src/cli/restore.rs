//! `simstore restore BACKUP PATH`: a backup made by `simstore backup` as a new store.

use std::path::PathBuf;
use std::time::Instant;

use anyhow::{Context, Result};

use super::Code;

/// Arguments of `simstore restore`.
#[derive(Debug, clap::Args)]
#[command(after_help = "\
The backup is verified (every file there, at its size), restored beside PATH and opened
before it is renamed to PATH: PATH is then a whole store, or absent. PATH must not exist.

Exit status: 0 success, 2 error.")]
pub struct Args {
    /// The backup directory (`simstore backup DEST`).
    backup: PathBuf,
    /// Where the restored store goes (must not exist).
    path: PathBuf,
    /// The backup to restore (see `simstore backup DEST --list`) [default: the newest].
    #[arg(long)]
    id: Option<u32>,
}

/// Runs the command; see [`Args`].
pub fn run(args: Args) -> Result<Code> {
    let start = Instant::now();
    let info = simstore::restore(&args.backup, args.id, &args.path).with_context(|| {
        format!(
            "cannot restore {} into {}",
            args.backup.display(),
            args.path.display()
        )
    })?;
    eprintln!(
        "restored backup {} of {} into {}: {} files, {} bytes ({:.1} s)",
        info.id,
        args.backup.display(),
        args.path.display(),
        info.files,
        info.bytes,
        start.elapsed().as_secs_f64()
    );
    Ok(0)
}
