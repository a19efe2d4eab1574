//! `simstore relayout`: rebuild the tables under a layout chosen for the store's size.

use std::path::Path;
use std::time::Instant;

use anyhow::{Context, Result};

use super::{Code, open_existing};

/// Arguments of `simstore relayout`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Size to lay the store out for (default: the documents it holds now).
    #[arg(long)]
    expected_docs: Option<u64>,
    /// Force the number of blocks instead of the cost model's choice.
    #[arg(long)]
    blocks: Option<u32>,
    /// With --blocks: the blocks each table leads with (1 to blocks − k_max; default
    /// blocks − k_max, Manku's layout; fewer gives fewer tables with shorter prefixes).
    #[arg(long, requires = "blocks")]
    lead: Option<u32>,
    /// The new k_max, 1 to 16 (default: the store's current one).
    #[arg(long, value_parser = super::k_max_parser())]
    k_max: Option<u32>,
}

/// Runs the command; see [`Args`].
pub fn run(db: &Path, args: Args) -> Result<Code> {
    let store = open_existing(db)?;
    let old = store.layout().clone();
    // Without --k-max or --blocks, a store with its mode's k_max keeps to the mode's own
    // layout for the new size (Quality::layout), and so does one given its mode's k_max (a
    // high-mode store of the former k_max 4 with --k-max 3); otherwise the plain rule of
    // Layout::choose at the given or current k_max.
    let quality = store.quality();
    let mode_k_max = args.k_max.unwrap_or(old.k_max()) == quality.k_max();
    let own = args.blocks.is_none() && args.lead.is_none() && mode_k_max;
    let k_max = match own {
        true => None,
        false => Some(args.k_max.unwrap_or(old.k_max())),
    };
    let expected = args.expected_docs.unwrap_or(store.len());
    let layout = quality.choose_layout(k_max, args.blocks, args.lead, expected)?;
    if layout == old {
        eprintln!("the store already has this layout: {old}");
        return Ok(0);
    }
    let start = Instant::now();
    let docs = store.len();
    let store = store
        .relayout(layout)
        .context("relayout failed (reopen the store to finish it)")?;
    let new = store.layout();
    eprintln!(
        "relaid {docs} documents from {old} to {new} in {:.2} s",
        start.elapsed().as_secs_f64()
    );
    Ok(0)
}
