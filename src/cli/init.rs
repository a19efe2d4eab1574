//! `simstore init`: create an empty store with a chosen layout.

use std::path::Path;

use anyhow::{Context, Result};
use simstore::store::RedisUrl;
use simstore::{Quality, Store};

use super::Code;

/// Arguments of `simstore init`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// The quality mode, recorded in the store: what a query or check given no --k or
    /// --verify counts as a near duplicate. standard: the candidates within 3 (the tables
    /// are exact there), those within 12 in the spans of the tables, and at any distance
    /// those sharing one of 2 bands of the query's shingle sketch, kept when their texts'
    /// shingle sketches agree (≥ 0.3;
    /// Chinese, sketched by its characters: ≥ 0.25 + 0.025 a bit of distance; ≥ 0.8 for
    /// texts of fewer than 16 shingles, 24 in Chinese, too little content to tell apart); high:
    /// candidates within 14 read also from 28 probes, in tables laid out for them, and 4
    /// bands of the sketch (more copies found, ~4× the reads a query, ~21 more bytes a
    /// document). See docs/quality.md.
    #[arg(long, value_name = "MODE", default_value = "standard", value_parser = quality_parser())]
    quality: Quality,
    /// Largest Hamming distance the tables answer exactly (1 to 16) [default: the quality
    /// mode's: 3].
    #[arg(long, value_parser = super::k_max_parser())]
    k_max: Option<u32>,
    /// Expected number of documents; picks the number of blocks (see docs/design.md).
    #[arg(long, default_value_t = 1_000_000)]
    expected_docs: u64,
    /// Force the number of blocks instead (the store gets C(blocks, k_max) tables).
    #[arg(long)]
    blocks: Option<u32>,
    /// With --blocks: the blocks each table leads with (1 to blocks − k_max; default
    /// blocks − k_max, Manku's layout; fewer gives fewer tables with shorter prefixes).
    #[arg(long, requires = "blocks")]
    lead: Option<u32>,
    /// The retention policy (changeable later with `simstore retention`).
    #[command(flatten)]
    policy: super::retention::PolicyArgs,
}

/// The parser of `--quality`: a mode's name (offered to shell completions).
pub(crate) fn quality_parser() -> impl clap::builder::TypedValueParser<Value = Quality> {
    use clap::builder::TypedValueParser;
    clap::builder::PossibleValuesParser::new(Quality::ALL.map(Quality::name))
        .try_map(|name| name.parse::<Quality>())
}

/// Runs the command; see [`Args`].
pub fn run(db: &Path, args: Args) -> Result<Code> {
    let remote = db.to_str().is_some_and(RedisUrl::is_redis);
    if remote && Store::builder(db).read_only(true).open().is_ok() {
        anyhow::bail!(
            "{} already holds a store; choose another name (redis://HOST:PORT/NAME)",
            db.display()
        );
    }
    if db.exists() {
        anyhow::bail!(
            "{} already exists; choose another --db path or remove it first",
            db.display()
        );
    }
    let mut builder = Store::builder(db)
        .quality(args.quality)
        .expected_docs(args.expected_docs);
    if let Some(k) = args.k_max {
        builder = builder.k_max(k);
    }
    if let Some(b) = args.blocks {
        builder = builder.blocks(b);
    }
    if let Some(l) = args.lead {
        builder = builder.lead_blocks(l);
    }
    let store = builder
        .open()
        .with_context(|| format!("cannot create {}", db.display()))?;
    eprintln!(
        "created {}: quality {}, {}",
        db.display(),
        store.quality(),
        store.layout()
    );
    if args.policy.any() {
        let r = args.policy.apply(store.retention())?;
        store
            .set_retention(r)
            .with_context(|| format!("cannot set the retention policy of {}", db.display()))?;
        eprintln!("{}", super::retention::describe(&r));
    }
    Ok(0)
}
