//! `simstore eval --modes`: the quality modes side by side at 1M, 10M and 100M documents.

use std::io::Write;
use std::path::Path;

use anyhow::{Context, Result};
use serde_json::{Value, json};
use simstore::tools::eval;
use simstore::tools::modes::{self, ModeFigures};

use super::report::{collisions_row, counts_json, write_json};
use super::{Loaded, MODE_SCALES};

/// Evaluates every compared predictor at every scale of [`MODE_SCALES`] and prints them in
/// one table (and as JSON to `json`).
pub(super) fn run(out: &mut impl Write, set: &Loaded, json: Option<&Path>) -> Result<()> {
    let (mut reach, mut bands) = (0, 0);
    for &scale in &MODE_SCALES {
        for (_, p) in modes::compared_predictors(scale)? {
            reach = reach.max(p.reach());
            bands = bands.max(p.bands());
        }
    }
    let base = eval::base_pairs(&set.docs, &set.fps, (reach, bands))
        .context("finding pairs of base documents")?;
    let figures = modes::compare_modes(&set.fps, &set.pairs, &base, &MODE_SCALES)?;
    writeln!(
        out,
        "quality modes side by side: quality on this set ({} pairs, {} base documents), cost of the layout a store created for N documents gets",
        figures.first().map_or(0, |f| f.overall.pairs()),
        base_documents(&figures)
    )?;
    print_table(out, &figures)?;
    writeln!(
        out,
        "(unrelated: base documents matched with an unrelated one; candidates and µs per query: the cost model's, for uniform fingerprints; est. B/fp: each table entry's packed bytes, the store's band tables' included (standard 2, high 4), records' sketches not, {:.1} B per bucket and {:.1} B per document, fitted to the store sizes in docs/benchmarks.md)",
        modes::BUCKET_BYTES,
        modes::DOCUMENT_BYTES
    )?;
    if let Some(path) = json {
        let spec = set.fingerprinter.spec();
        let rows: Vec<Value> = figures.iter().map(figures_json).collect();
        let v = json!({"spec": spec.to_string(), "spec_version": spec.version, "modes": rows});
        write_json(path, &v)?;
    }
    Ok(())
}

fn base_documents(figures: &[ModeFigures]) -> u64 {
    figures.first().map_or(0, |f| f.collisions.documents)
}

/// The table: one line per scale and mode.
fn print_table(out: &mut impl Write, figures: &[ModeFigures]) -> Result<()> {
    let langs: Vec<&String> = figures
        .first()
        .map_or(Vec::new(), |f| f.by_lang.keys().collect());
    write!(
        out,
        "\n{:>5} {:<9} {:>6} {:>6} {:>7} {:>9}",
        "N", "mode", "tables", "k/reach", "F1", "precision"
    )?;
    for lang in &langs {
        write!(out, " {:>7}", format!("{lang} F1"))?;
    }
    writeln!(
        out,
        " {:>16} {:>11} {:>9} {:>10}",
        "unrelated", "candidates", "query µs", "est. B/fp"
    )?;
    for f in figures {
        write!(
            out,
            "{:>5} {:<9} {:>6} {:>7} {:>7.4} {:>9.4}",
            scale_name(f.scale),
            f.name,
            f.layout.tables().len(),
            format!("{}/{}", f.rule.k, f.rule.reach),
            f.overall.f1(),
            f.overall.precision()
        )?;
        for lang in &langs {
            let f1 = f.by_lang.get(*lang).map_or(0.0, |c| c.f1());
            write!(out, " {f1:>7.4}")?;
        }
        writeln!(
            out,
            " {:>6} ({:>5.2} %) {:>11.1} {:>9.1} {:>10.1}",
            f.collisions.unrelated_documents[0],
            100.0 * f.unrelated_share(),
            f.expected_candidates(),
            f.expected_query_us(),
            f.estimated_bytes_per_fingerprint()
        )?;
    }
    Ok(())
}

/// `1M`, `10M`, `100M`, or the number.
fn scale_name(n: u64) -> String {
    if n.is_multiple_of(1_000_000) {
        format!("{}M", n / 1_000_000)
    } else {
        n.to_string()
    }
}

fn figures_json(f: &ModeFigures) -> Value {
    json!({
        "mode": f.name,
        "scale": f.scale,
        "layout": f.layout.to_string(),
        "tables": f.layout.tables().len(),
        "rule": {"k": f.rule.k, "reach": f.rule.reach, "min_similarity": f.rule.min_similarity},
        "overall": counts_json(&f.overall, None),
        "by_lang": f.by_lang.iter().map(|(l, c)| (l.clone(), counts_json(c, None))).collect::<serde_json::Map<_, _>>(),
        "base_collisions": collisions_row(&f.collisions),
        "unrelated_share": f.unrelated_share(),
        "expected_candidates": f.expected_candidates(),
        "expected_query_us": f.expected_query_us(),
        "estimated_bytes_per_fingerprint": f.estimated_bytes_per_fingerprint(),
    })
}
