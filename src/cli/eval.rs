//! `simstore eval`: detection quality on labelled pairs (precision, recall, F1 for k = 0..8).

use std::fs::File;
use std::io::{self, BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::time::Instant;

use anyhow::{Context, Result, bail};
use serde::de::DeserializeOwned;
use serde_json::json;
use simstore::Fingerprinter;
use simstore::tools::eval::{self, Counts, EvalDoc, Pair, Report, Source};

use super::Code;

/// Arguments of `simstore eval`.
#[derive(Debug, clap::Args)]
#[command(after_help = "\
The directory holds docs.jsonl.gz, variants.jsonl.gz and pairs.jsonl.gz (gzip optional):
documents {\"id\", \"lang\", \"title\", \"text\", \"html\"?, \"base_id\"? (variants)} and pairs {\"a\", \"b\", \"label\", \"class\", \"lang\"}.
A pair is predicted duplicate when its fingerprints are within Hamming distance k.
Unlabelled check: every pair of base documents (records without \"base_id\") within k
whose texts are unrelated (character 3-gram Jaccard < 0.2) is a false match a store would
report; their number and the documents in them are printed per k.

Example:
  simstore eval ../shared/data/dev --json quality.json")]
pub struct Args {
    /// Directory of the labelled set.
    #[arg(default_value = "../shared/data/dev")]
    dir: PathBuf,
    /// The k of the per-language, per-length and per-class tables.
    #[arg(long, default_value_t = 3)]
    k: u32,
    /// Largest k evaluated.
    #[arg(long, default_value_t = 8)]
    max_k: u32,
    /// Fingerprint the web page (`html` field) where a document has one, instead of its text.
    #[arg(long)]
    html: bool,
    /// Evaluate the two-stage query: a pair is a duplicate when within distance k AND its
    /// shingle sketches' estimated Jaccard similarity is at least THRESHOLD.
    #[arg(long, value_name = "THRESHOLD")]
    verify: Option<f64>,
    /// Also write the full report (every k, language, length bucket and class) as JSON to FILE.
    #[arg(long, value_name = "FILE")]
    json: Option<PathBuf>,
}

/// Runs the command; see [`Args`].
pub fn run(args: Args) -> Result<Code> {
    if let Some(t) = args.verify
        && !(0.0..=1.0).contains(&t)
    {
        bail!("--verify {t}: the threshold is a similarity between 0 and 1");
    }
    if args.k > args.max_k {
        bail!("--k {} is larger than --max-k {}", args.k, args.max_k);
    }
    let start = Instant::now();
    let mut docs: Vec<EvalDoc> = read_jsonl(&find(&args.dir, "docs")?)?;
    docs.extend(read_jsonl::<EvalDoc>(&find(&args.dir, "variants")?)?);
    let pairs: Vec<Pair> = read_jsonl(&find(&args.dir, "pairs")?)?;
    let loaded = start.elapsed();

    let f = Fingerprinter::new();
    let source = if args.html {
        Source::Html
    } else {
        Source::Text
    };
    let t = Instant::now();
    let fps = eval::fingerprint_all(&f, &docs, source, args.verify.is_some());
    let fingerprinting = t.elapsed();
    let bytes: usize = docs
        .iter()
        .map(|d| match (&d.html, source) {
            (Some(h), Source::Html) => h.len(),
            _ => d.text.len() + d.title.as_ref().map_or(0, String::len),
        })
        .sum();
    let report = eval::evaluate(&fps, &pairs, args.max_k, args.verify);
    let collisions = eval::base_collisions(&docs, &fps, args.max_k, args.verify)
        .context("finding pairs of base documents")?;
    let mut out = io::stdout().lock();
    if let Some(t) = args.verify {
        writeln!(out, "two-stage: distance <= k and sketch similarity >= {t}")?;
    }
    writeln!(
        out,
        "spec v{}\n{} documents ({:.1} MB), {} pairs ({} naming unknown documents, {} with an unfingerprintable document)",
        f.spec().version,
        docs.len(),
        bytes as f64 / 1e6,
        report.pairs,
        report.missing,
        report.unfingerprinted
    )?;
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
    let k = args.k as usize;
    for (what, table, width) in [
        ("language", &report.by_lang, 6),
        ("length", &report.by_length, 12),
    ] {
        if table.is_empty() {
            continue;
        }
        writeln!(out, "\nper {what} at k = {k}")?;
        for (name, per_k) in table {
            let c = per_k[k];
            writeln!(
                out,
                "  {name:<width$} precision {:.4}  recall {:.4}  F1 {:.4}  ({} pairs)",
                c.precision(),
                c.recall(),
                c.f1(),
                c.pairs()
            )?;
        }
    }
    writeln!(
        out,
        "\nper class at k = {k} (recall of duplicate classes, false-positive rate of the others)"
    )?;
    for (class, per_k) in &report.by_class {
        let c = per_k[k];
        let (what, value) = class_figure(&c);
        writeln!(
            out,
            "  {class:<28} {what} {value:.4}  ({} pairs)",
            c.pairs()
        )?;
    }
    let c = &collisions;
    let d = c.documents.max(1) as f64;
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
            100.0 * c.unrelated_documents[k] as f64 / d,
            c.related_pairs[k]
        )?;
    }
    writeln!(
        out,
        "\nload {:.2} s, fingerprint {:.2} s ({:.1} MB/s on {} threads), total {:.2} s",
        loaded.as_secs_f64(),
        fingerprinting.as_secs_f64(),
        bytes as f64 / 1e6 / fingerprinting.as_secs_f64().max(1e-9),
        rayon::current_num_threads(),
        start.elapsed().as_secs_f64()
    )?;
    if let Some(path) = &args.json {
        write_json(path, &f, &report, &collisions, args.verify)?;
        writeln!(out, "report written to {}", path.display())?;
    }
    Ok(0)
}

/// Recall for duplicate classes, false-positive rate for non-duplicate classes.
fn class_figure(c: &Counts) -> (&'static str, f64) {
    if c.tp + c.fn_ > 0 {
        ("recall", c.recall())
    } else {
        ("FP rate", c.false_positive_rate())
    }
}

fn write_json(
    path: &Path,
    f: &Fingerprinter,
    r: &Report,
    collisions: &eval::Collisions,
    verify: Option<f64>,
) -> Result<()> {
    let per_k = |v: &[Counts]| {
        v.iter()
            .enumerate()
            .map(|(k, c)| {
                json!({
                    "k": k, "tp": c.tp, "fp": c.fp, "fn": c.fn_, "tn": c.tn,
                    "precision": c.precision(), "recall": c.recall(), "f1": c.f1(),
                    "false_positive_rate": c.false_positive_rate(),
                })
            })
            .collect::<Vec<_>>()
    };
    let v = json!({
        "verify": verify,
        "spec": f.spec().to_string(),
        "spec_version": f.spec().version,
        "pairs": r.pairs,
        "missing": r.missing,
        "unfingerprinted": r.unfingerprinted,
        "overall": per_k(&r.overall),
        "by_lang": r.by_lang.iter().map(|(l, v)| (l.clone(), serde_json::Value::from(per_k(v)))).collect::<serde_json::Map<_, _>>(),
        "by_class": r.by_class.iter().map(|(l, v)| (l.clone(), serde_json::Value::from(per_k(v)))).collect::<serde_json::Map<_, _>>(),
        "by_length": r.by_length.iter().map(|(l, v)| (l.clone(), serde_json::Value::from(per_k(v)))).collect::<serde_json::Map<_, _>>(),
        "base_collisions": collisions,
    });
    let text = serde_json::to_string_pretty(&v)?;
    std::fs::write(path, text + "\n").with_context(|| format!("cannot write {}", path.display()))
}

/// `dir/name.jsonl.gz` or `dir/name.jsonl`.
fn find(dir: &Path, name: &str) -> Result<PathBuf> {
    for candidate in [format!("{name}.jsonl.gz"), format!("{name}.jsonl")] {
        let path = dir.join(candidate);
        if path.is_file() {
            return Ok(path);
        }
    }
    bail!(
        "{} has no {name}.jsonl.gz or {name}.jsonl: `simstore eval DIR` needs the directory of a \
         labelled set (docs, variants and pairs files, gzip'd or not; their format is in \
         docs/quality.md); the default, ../shared/data/dev, is where a development set sits \
         beside a checkout",
        dir.display()
    )
}

fn read_jsonl<T: DeserializeOwned>(path: &Path) -> Result<Vec<T>> {
    let file = File::open(path).with_context(|| format!("cannot open {}", path.display()))?;
    let reader: Box<dyn BufRead> = if path.extension().is_some_and(|e| e == "gz") {
        Box::new(BufReader::new(flate2::read::MultiGzDecoder::new(file)))
    } else {
        Box::new(BufReader::new(file))
    };
    let mut out = Vec::new();
    for (i, line) in reader.lines().enumerate() {
        let line = line.with_context(|| format!("cannot read {}", path.display()))?;
        if line.trim().is_empty() {
            continue;
        }
        out.push(
            serde_json::from_str(&line)
                .with_context(|| format!("{}:{}: not a valid record", path.display(), i + 1))?,
        );
    }
    Ok(out)
}
