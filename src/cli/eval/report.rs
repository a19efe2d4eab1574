//! The report of one predictor: "distance ≤ k" row by row, or one quality mode's single
//! row; printed, and written as JSON with `--json`.

use std::collections::BTreeMap;
use std::io::Write;
use std::path::Path;

use anyhow::{Context, Result};
use serde_json::{Value, json};
use simstore::Quality;
use simstore::tools::eval::{self, Collisions, Counts, Predictor, Report, Rows};

use super::Loaded;
use crate::cli::outfile::OutFile;
use crate::cli::rule::han_threshold;

/// The per-k report: the overall table for every k, the per-language, per-length and
/// per-class tables at `k`, the unlabelled pairs for every k.
pub(super) fn per_k(
    out: &mut impl Write,
    set: &Loaded,
    predictor: &Predictor,
    k: usize,
    json: Option<&Path>,
) -> Result<()> {
    let (report, collisions) = evaluate(set, predictor)?;
    if let Predictor::Distance {
        verify: Some(t), ..
    } = predictor
    {
        writeln!(out, "two-stage: distance <= k and sketch similarity >= {t}")?;
    }
    header(out, set, &report)?;
    writeln!(out, "\noverall")?;
    writeln!(
        out,
        "{:>3} {:>9} {:>9} {:>9} {:>6} {:>6} {:>6}",
        "k", "precision", "recall", "F1", "tp", "fp", "fn"
    )?;
    for (k, c) in report.overall.iter().enumerate() {
        writeln!(
            out,
            "{k:>3} {:>9.4} {:>9.4} {:>9.4} {:>6} {:>6} {:>6}",
            c.precision(),
            c.recall(),
            c.f1(),
            c.tp,
            c.fp,
            c.fn_
        )?;
    }
    breakdown(out, &report, k, &format!("at k = {k}"))?;
    let c = &collisions;
    writeln!(
        out,
        "\nunlabelled: pairs of the {} base documents within k whose texts are unrelated (3-gram Jaccard < {})",
        c.documents,
        eval::UNRELATED_JACCARD
    )?;
    writeln!(
        out,
        "{:>3} {:>9} {:>18} {:>9}",
        "k", "pairs", "documents", "related"
    )?;
    for k in 0..c.unrelated_pairs.len() {
        writeln!(
            out,
            "{k:>3} {:>9} {:>9} ({:>5.2} %) {:>9}",
            c.unrelated_pairs[k],
            c.unrelated_documents[k],
            100.0 * c.unrelated_documents[k] as f64 / c.documents.max(1) as f64,
            c.related_pairs[k]
        )?;
    }
    if let Some(path) = json {
        let verify = match predictor {
            Predictor::Distance { verify, .. } => *verify,
            Predictor::Rule { .. } => None,
        };
        let rows = |v: &Rows| {
            Value::from(
                v.iter()
                    .enumerate()
                    .map(|(k, c)| counts_json(c, Some(k)))
                    .collect::<Vec<_>>(),
            )
        };
        let mut v = report_json(set, &report, rows);
        v["verify"] = json!(verify);
        v["base_collisions"] = json!(collisions);
        write_json(path, &v)?;
    }
    Ok(())
}

/// The report of quality mode `quality` at `scale`: its layout and rule, then its single
/// row overall, per language, length and class, and the unlabelled pairs it matches.
pub(super) fn mode(
    out: &mut impl Write,
    set: &Loaded,
    quality: Quality,
    scale: u64,
    predictor: &Predictor,
    json: Option<&Path>,
) -> Result<()> {
    let Predictor::Rule { layout, rule } = predictor else {
        anyhow::bail!("a quality mode is evaluated by its rule");
    };
    let (report, collisions) = evaluate(set, predictor)?;
    let similarity = rule.min_similarity.unwrap_or(0.0);
    writeln!(
        out,
        "quality mode {quality}, a store created for {scale} documents: layout {layout}\n\
         rule: candidates within {} that the tables for k = {} put in the query's spans{}{}, kept when both sketches reach similarity {similarity}{} (a side without a sketch: within {})",
        rule.reach,
        rule.k,
        match rule.probes {
            0 => String::new(),
            n => format!(
                " (and {n} spans of the second document's weak bits, querying a store that holds the first)"
            ),
        },
        match rule.bands {
            0 => String::new(),
            n => format!(", and at any distance those sharing one of {n} bands of the sketch"),
        },
        match rule.min_shingles {
            0 => String::new(),
            _ => format!(", sketches of Chinese characters {}", han_threshold()),
        },
        rule.k
    )?;
    header(out, set, &report)?;
    let c = report.overall[0];
    writeln!(
        out,
        "\n{quality}: precision {:.4}  recall {:.4}  F1 {:.4}  (tp {}, fp {}, fn {})",
        c.precision(),
        c.recall(),
        c.f1(),
        c.tp,
        c.fp,
        c.fn_
    )?;
    breakdown(out, &report, 0, &format!("in the {quality} mode"))?;
    let (pairs, docs) = (
        collisions.unrelated_pairs[0],
        collisions.unrelated_documents[0],
    );
    let (lo, hi) = eval::wilson_interval(docs, collisions.documents);
    writeln!(
        out,
        "\nunlabelled: of the {} base documents, {docs} ({:.3} %, 95 % interval {:.3}–{:.3} %) are matched with an unrelated one (3-gram Jaccard < {}), in {pairs} pairs; {} pairs of related texts",
        collisions.documents,
        100.0 * docs as f64 / collisions.documents.max(1) as f64,
        100.0 * lo,
        100.0 * hi,
        eval::UNRELATED_JACCARD,
        collisions.related_pairs[0]
    )?;
    if let Some(path) = json {
        let mut v = report_json(set, &report, |r: &Rows| counts_json(&r[0], None));
        v["base_collisions_interval"] = json!([lo, hi]);
        v["quality"] = json!(quality.name());
        v["scale"] = json!(scale);
        v["layout"] = json!(layout.to_string());
        v["tables"] = json!(layout.tables().len());
        v["rule"] = crate::cli::rule::rule_json(rule);
        v["base_collisions"] = collisions_row(&collisions);
        write_json(path, &v)?;
    }
    Ok(())
}

/// The labelled pairs and the base documents' pairs under `predictor`.
fn evaluate(set: &Loaded, predictor: &Predictor) -> Result<(Report, Collisions)> {
    let report = eval::evaluate(&set.fps, &set.pairs, predictor);
    let collisions = eval::base_collisions(&set.docs, &set.fps, predictor)
        .context("finding pairs of base documents")?;
    Ok((report, collisions))
}

/// The spec and the counts of documents and pairs.
fn header(out: &mut impl Write, set: &Loaded, report: &Report) -> Result<()> {
    writeln!(
        out,
        "spec v{}\n{} documents ({:.1} MB), {} pairs ({} naming unknown documents, {} with an unfingerprintable document)",
        set.fingerprinter.spec().version,
        set.docs.len(),
        set.bytes as f64 / 1e6,
        report.pairs,
        report.missing,
        report.unfingerprinted
    )?;
    Ok(())
}

/// The per-language, per-length and per-class tables of row `row` (named `what`).
fn breakdown(out: &mut impl Write, report: &Report, row: usize, what: &str) -> Result<()> {
    for (name, table, width) in [
        ("language", &report.by_lang, 6),
        ("length", &report.by_length, 12),
    ] {
        if table.is_empty() {
            continue;
        }
        writeln!(out, "\nper {name} {what}")?;
        for (key, rows) in table {
            let c = rows[row];
            writeln!(
                out,
                "  {key:<width$} precision {:.4}  recall {:.4}  F1 {:.4}  ({} pairs)",
                c.precision(),
                c.recall(),
                c.f1(),
                c.pairs()
            )?;
        }
    }
    writeln!(
        out,
        "\nper class {what} (recall of duplicate classes, false-positive rate of the others)"
    )?;
    for (class, rows) in &report.by_class {
        let c = rows[row];
        let (name, value) = class_figure(&c);
        writeln!(
            out,
            "  {class:<28} {name} {value:.4}  ({} pairs)",
            c.pairs()
        )?;
    }
    Ok(())
}

/// Recall for duplicate classes, false-positive rate for non-duplicate classes.
fn class_figure(c: &Counts) -> (&'static str, f64) {
    if c.tp + c.fn_ > 0 {
        ("recall", c.recall())
    } else {
        ("FP rate", c.false_positive_rate())
    }
}

/// One row of counts as JSON (with its k, for the per-k report).
pub(super) fn counts_json(c: &Counts, k: Option<usize>) -> Value {
    let mut v = json!({
        "tp": c.tp, "fp": c.fp, "fn": c.fn_, "tn": c.tn,
        "precision": c.precision(), "recall": c.recall(), "f1": c.f1(),
        "false_positive_rate": c.false_positive_rate(),
    });
    if let Some(k) = k {
        v["k"] = json!(k);
    }
    v
}

/// The single row of a mode's collisions as JSON numbers.
pub(super) fn collisions_row(c: &Collisions) -> Value {
    json!({
        "documents": c.documents,
        "unrelated_pairs": c.unrelated_pairs[0],
        "unrelated_documents": c.unrelated_documents[0],
        "related_pairs": c.related_pairs[0],
    })
}

/// The spec, the pair counts and every table of `report`, each rendered by `rows`.
fn report_json(set: &Loaded, report: &Report, rows: impl Fn(&Rows) -> Value) -> Value {
    let table = |t: &BTreeMap<String, Rows>| {
        t.iter()
            .map(|(key, r)| (key.clone(), rows(r)))
            .collect::<serde_json::Map<_, _>>()
    };
    let spec = set.fingerprinter.spec();
    json!({
        "spec": spec.to_string(),
        "spec_version": spec.version,
        "pairs": report.pairs,
        "missing": report.missing,
        "unfingerprinted": report.unfingerprinted,
        "overall": rows(&report.overall),
        "by_lang": table(&report.by_lang),
        "by_class": table(&report.by_class),
        "by_length": table(&report.by_length),
    })
}

/// Writes `v` to `path`, pretty-printed (by the rule of [`OutFile`]).
pub(super) fn write_json(path: &Path, v: &Value) -> Result<()> {
    let text = serde_json::to_string_pretty(v)?;
    let mut file = OutFile::create(path)?;
    file.write_all((text + "\n").as_bytes())
        .with_context(|| format!("cannot write {}", path.display()))?;
    file.finish()
}
