//! `simstore copy --to DEST`: copy a store's documents (with their content hashes and
//! sketches) into another store — a local one into a cluster, or back — rebuilding the
//! tables in the destination's layout.

use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use simstore::{Entry, Store};

use super::{Code, open_for_reading};

/// Documents per write into the destination.
const CHUNK: usize = 5_000;

/// Arguments of `simstore copy`.
#[derive(Debug, clap::Args)]
#[command(
    after_help = "Example: simstore --db pages.db copy --to redis://127.0.0.1:7000/pages\n\
                  Idempotent: a copy run again (after an interruption, say) stores each document once.\n\
                  Exit status: 0 copied, 2 error."
)]
pub struct Args {
    /// The destination: a path or redis://HOST:PORT,.../NAME; created if missing.
    #[arg(long, value_name = "DEST")]
    to: PathBuf,
    /// When creating the destination: the largest k its tables answer exactly
    /// (default: the source's k_max).
    #[arg(long)]
    k_max: Option<u32>,
    /// When creating the destination: the documents it is expected to hold, which picks
    /// its layout (default: twice the source's documents).
    #[arg(long)]
    expected_docs: Option<u64>,
}

/// Runs the command; see [`Args`].
pub fn run(db: &Path, args: Args) -> Result<Code> {
    let source = open_for_reading(db)?;
    let total = source.len();
    let dest = Store::builder(&args.to)
        .k_max(args.k_max.unwrap_or(source.layout().k_max()))
        .expected_docs(args.expected_docs.unwrap_or(total.saturating_mul(2).max(1)))
        .open()
        .with_context(|| format!("cannot open or create {}", args.to.display()))?;
    let bar = ProgressBar::with_draw_target(Some(total), ProgressDrawTarget::stderr());
    bar.set_style(
        ProgressStyle::with_template("{bar:40} {pos}/{len} documents {per_sec} {eta}")
            .expect("valid template"),
    );
    let mut chunk = Vec::with_capacity(CHUNK);
    let write = |chunk: &mut Vec<Entry>| -> simstore::Result<()> {
        dest.insert_batch(chunk.drain(..))?;
        Ok(())
    };
    source
        .for_each_doc(|doc| {
            chunk.push(doc.into_entry());
            if chunk.len() == CHUNK {
                write(&mut chunk)?;
                bar.inc(CHUNK as u64);
            }
            Ok(())
        })
        .and_then(|()| write(&mut chunk))
        .with_context(|| format!("copy into {} stopped", args.to.display()))?;
    bar.finish_and_clear();
    eprintln!(
        "copied {total} documents from {} to {} ({} there now, layout {})",
        db.display(),
        args.to.display(),
        dest.len(),
        dest.layout()
    );
    Ok(0)
}
