//! `simstore stats`: what a store holds and how it is laid out.

use std::io::{self, Write};
use std::path::Path;

use anyhow::Result;
use serde_json::json;

use simstore::Rule;
use simstore::Store;
use simstore::store::{CandidateStats, Stats};

use super::{Code, open_for_reading, rule};

/// Arguments of `simstore stats`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Print the figures as one JSON object.
    #[arg(long)]
    json: bool,
    /// Print the fingerprint spec in full (what normalizes, tokenizes, weighs and hashes).
    #[arg(long, short)]
    verbose: bool,
}

/// Runs the command; see [`Args`].
pub fn run(db: &Path, args: Args) -> Result<Code> {
    let store = open_for_reading(db)?;
    let s = store.stats()?;
    let observed = store.observed_candidates(200)?;
    let mut out = io::stdout().lock();
    if args.json {
        writeln!(out, "{}", as_json(&store, &s, &observed))?;
    } else {
        print_text(&mut out, &store, &s, &observed, args.verbose)?;
    }
    Ok(0)
}

/// The figures as one JSON object.
fn as_json(store: &Store, s: &Stats, observed: &CandidateStats) -> serde_json::Value {
    let l = &s.layout;
    let prefixes: Vec<u32> = l.tables().iter().map(|t| t.prefix_bits()).collect();
    json!({
        "path": store.path(), "docs": s.docs, "format_version": s.format_version,
        "spec": s.spec.to_string(), "spec_version": s.spec.version,
        "k_max": l.k_max(), "blocks": l.widths(), "tables": l.tables().len(), "prefix_bits": prefixes,
        "band_tables": s.band_tables,
        "disk_bytes": s.disk_bytes, "memory_bytes": s.memory_bytes, "reclaimable_bytes": s.reclaimable_bytes, "expected_candidates_per_query": s.expected_candidates,
        "observed_candidates_per_query": observed.mean(), "observed_candidates_max": observed.max,
        "observed_queries": observed.queries, "expected_query_us": l.expected_query_us(s.docs as f64),
        "quality": store.quality().name(), "quality_rule": rule::rule_json(&store.rule(Rule::Mode)),
    })
}

/// The figures for reading, one per line.
fn print_text(
    out: &mut impl Write,
    store: &Store,
    s: &Stats,
    observed: &CandidateStats,
    verbose: bool,
) -> Result<()> {
    let l = &s.layout;
    let prefixes: Vec<u32> = l.tables().iter().map(|t| t.prefix_bits()).collect();
    let mode = store.rule(Rule::Mode);
    writeln!(out, "store:          {}", store.path().display())?;
    writeln!(out, "documents:      {}", s.docs)?;
    writeln!(out, "format version: {}", s.format_version)?;
    if verbose {
        writeln!(out, "spec:           {}", s.spec)?;
    } else {
        writeln!(
            out,
            "spec:           v{} (in full: --verbose)",
            s.spec.version
        )?;
    }
    writeln!(
        out,
        "quality:        {} ({})",
        store.quality(),
        rule::describe(&mode)
    )?;
    writeln!(out, "layout:         {l}")?;
    writeln!(out, "prefix bits:    {prefixes:?}")?;
    writeln!(
        out,
        "band tables:    {} (candidates from the sketch: docs/quality.md)",
        s.band_tables
    )?;
    writeln!(
        out,
        "candidates:     {:.1} expected per k_max query (uniform fingerprints; cost model {:.1} µs)",
        s.expected_candidates,
        l.expected_query_us(s.docs as f64)
    )?;
    writeln!(
        out,
        "observed:       {:.1} per k_max query, max {} (on {} stored fingerprints)",
        observed.mean(),
        observed.max,
        observed.queries
    )?;
    match s.memory_bytes {
        Some(m) => writeln!(
            out,
            "memory:         {:.1} MiB on the masters ({:.0} bytes per document)",
            m as f64 / (1u64 << 20) as f64,
            m as f64 / s.docs.max(1) as f64
        )?,
        None => writeln!(
            out,
            "disk:           {:.1} MiB",
            s.disk_bytes as f64 / (1u64 << 20) as f64
        )?,
    }
    if let Some(r) = s.reclaimable_bytes {
        writeln!(
            out,
            "reclaimable:    {:.1} MiB (left by deletes and replacements until compacted; `simstore compact`)",
            r as f64 / (1u64 << 20) as f64
        )?;
    }
    Ok(())
}
