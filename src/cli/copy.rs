//! `simstore copy --to DEST`: copy a store's documents (with their content hashes and
//! sketches) into another store — a local one into a cluster, or back — rebuilding the
//! tables in the destination's layout: a new destination gets the source's layout and
//! quality mode unless `--relayout`, `--k-max` or `--expected-docs` ask for another.

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
                  A new destination keeps the source's table layout and quality mode (--relayout: one\n\
                  chosen for its size).\n\
                  Exit status: 0 copied, 2 error."
)]
pub struct Args {
    /// The destination: a path or redis://HOST:PORT,.../NAME; created if missing.
    #[arg(long, value_name = "DEST")]
    to: PathBuf,
    /// When creating the destination: the largest k its tables answer exactly, in a
    /// layout chosen for it (implies --relayout; default: the source's k_max).
    #[arg(long)]
    k_max: Option<u32>,
    /// When creating the destination: the documents it is expected to hold, which picks
    /// its layout (implies --relayout; default: twice the source's documents).
    #[arg(long)]
    expected_docs: Option<u64>,
    /// When creating the destination: choose its table layout for its size (as `init`
    /// would) instead of keeping the source's tables, block widths and k_max.
    #[arg(long)]
    relayout: bool,
}

/// Whether a new destination is to get a layout chosen for it.
fn relayout_asked(args: &Args) -> bool {
    args.relayout || args.k_max.is_some() || args.expected_docs.is_some()
}

/// The options of the destination: the source's layout and quality mode, or with
/// `--relayout` (or `--k-max`, `--expected-docs`) a layout chosen for the size.
fn destination(args: &Args, source: &Store) -> simstore::StoreBuilder {
    let builder = Store::builder(&args.to).quality(source.quality());
    if !relayout_asked(args) {
        return builder.with_layout(source.layout().clone());
    }
    let total = source.len();
    builder
        .k_max(args.k_max.unwrap_or(source.layout().k_max()))
        .expected_docs(args.expected_docs.unwrap_or(total.saturating_mul(2).max(1)))
}

/// Runs the command; see [`Args`].
pub fn run(db: &Path, args: Args) -> Result<Code> {
    let source = open_for_reading(db)?;
    let total = source.len();
    let dest = destination(&args, &source)
        .open()
        .with_context(|| format!("cannot open or create {}", args.to.display()))?;
    if dest.layout() != source.layout() && !relayout_asked(&args) {
        eprintln!(
            "note: {} has layout {}, the source {} (an existing store keeps its own; \
             `simstore relayout` changes it)",
            args.to.display(),
            dest.layout(),
            source.layout()
        );
    }
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
