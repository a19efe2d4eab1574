//! `simstore backup DEST`: an online backup of the store into a backup directory; `--list`
//! shows the backups there.

use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::time::Instant;

use anyhow::{Context, Result};
use serde_json::json;
use simstore::BackupInfo;

use super::{Code, open_existing};
use simstore::format_time;

/// Arguments of `simstore backup`.
#[derive(Debug, clap::Args)]
#[command(after_help = "\
A consistent point in time of a live store: every write acknowledged before it started is
in it, none in part. Backups in one directory share the files that did not change, so the
next one costs what was written since. A backup killed mid-way is never listed nor
restored. While `simstore serve` holds the store, ask it instead: POST /backup
{\"dest\": \"DIR\"}. Restore with `simstore restore DEST PATH`.

Examples:
  simstore --db pages.db backup /backups/pages             a new backup
  simstore --db pages.db backup /backups/pages --keep 7    and keep the newest 7
  simstore backup /backups/pages --list                    what is there

Exit status: 0 success, 2 error.")]
pub struct Args {
    /// The backup directory (created if missing).
    dest: PathBuf,
    /// Keep only the newest N backups in DEST.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..))]
    keep: Option<u64>,
    /// List the backups in DEST instead (the store is not opened).
    #[arg(long, conflicts_with = "keep")]
    list: bool,
    /// Print JSON.
    #[arg(long)]
    json: bool,
}

/// Runs the command; see [`Args`].
pub fn run(db: &Path, args: Args) -> Result<Code> {
    let mut out = io::stdout().lock();
    if args.list {
        let all = simstore::list_backups(&args.dest)
            .with_context(|| format!("cannot list {}", args.dest.display()))?;
        for b in &all {
            print(&mut out, b, args.json)?;
        }
        return Ok(0);
    }
    let store = open_existing(db).map_err(|e| {
        // Only the lock says another process holds it (serve, or an import to wait for).
        let locked = matches!(e.downcast_ref(), Some(simstore::Error::Locked { .. }));
        match locked {
            true => e.context(
                "(another process holds the store: wait for it, or while `simstore serve` \
                 holds it, back it up with POST /backup)",
            ),
            false => e,
        }
    })?;
    let start = Instant::now();
    let info = store
        .backup(&args.dest, args.keep.map(|n| n as usize))
        .with_context(|| {
            format!(
                "cannot back {} up into {}",
                db.display(),
                args.dest.display()
            )
        })?;
    eprintln!(
        "backup {} of {} in {}: {} files, {} bytes ({:.1} s)",
        info.id,
        db.display(),
        args.dest.display(),
        info.files,
        info.bytes,
        start.elapsed().as_secs_f64()
    );
    if args.json {
        print(&mut out, &info, true)?;
    }
    Ok(0)
}

/// One backup, as a line of text or JSON.
fn print(out: &mut impl Write, b: &BackupInfo, json: bool) -> io::Result<()> {
    if json {
        writeln!(out, "{}", info_json(b))
    } else {
        writeln!(
            out,
            "{}\t{}\t{} bytes\t{} files",
            b.id,
            format_time(b.time),
            b.bytes,
            b.files
        )
    }
}

/// A backup as JSON: `{"id", "time", "bytes", "files"}`.
pub fn info_json(b: &BackupInfo) -> serde_json::Value {
    json!({ "id": b.id, "time": b.time, "bytes": b.bytes, "files": b.files })
}
