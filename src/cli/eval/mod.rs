//! `simstore eval`: detection quality on labelled pairs — precision, recall and F1 of
//! "distance ≤ k" for k = 0..8 (optionally verified by the sketches), of one quality mode as
//! a store of that mode answers it (`--quality`), or of the modes side by side (`--modes`).

use std::fs::File;
use std::io::{self, BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};
use clap::builder::{PossibleValuesParser, TypedValueParser};
use serde::de::DeserializeOwned;
use simstore::tools::eval::{self, EvalDoc, Pair, Predictor, Signature, Source};
use simstore::{Fingerprinter, Quality};

use super::Code;

mod modes_table;
mod report;
mod signatures;

/// The scales `--modes` compares the modes at.
const MODE_SCALES: [u64; 3] = [1_000_000, 10_000_000, 100_000_000];

/// Arguments of `simstore eval`.
#[derive(Debug, clap::Args)]
#[command(after_help = "\
The directory holds docs.jsonl.gz, variants.jsonl.gz and pairs.jsonl.gz (gzip optional):
documents {\"id\", \"lang\", \"title\", \"text\", \"html\"?, \"base_id\"? (variants)} and pairs {\"a\", \"b\", \"label\", \"class\", \"lang\"}.

What is evaluated:
  (default)           a pair is predicted duplicate when its fingerprints are within Hamming
                      distance k, for every k up to --max-k; --verify T also needs the shingle
                      sketches' similarity to reach T (the two-stage query).
  --quality MODE      the rule of a store created in quality mode MODE (standard, high) for
                      --scale documents (default 10,000,000), exactly as that store answers
                      it: a pair is a duplicate when the store's tables, probed for the mode's
                      k (and the mode's probes of the query's weak bits), put the two
                      fingerprints in one span within the mode's reach (12; high: 14), and
                      both sketches reach similarity 0.3 (Chinese text, sketched by its
                      characters: 0.25 + 0.025 a bit of distance; 0.8 when a text has fewer
                      than 16 shingles, 24 in Chinese; a side without a sketch: within k).
                      The tables depend on the scale, so the quality beyond k does too.
  --modes             the modes side by side, with plain \"distance <= 3\" for reference, at
                      1M, 10M and 100M documents: F1, precision, F1 per language, unrelated
                      base documents matched, the layout's tables, the cost model's candidates
                      and µs per query, and an estimate of the bytes per fingerprint on disk
                      (est.: fitted to the sizes measured in docs/benchmarks.md).

Unlabelled check: every pair of base documents (records without \"base_id\") predicted
duplicate whose texts are unrelated (character 3-gram Jaccard < 0.2) is a false match a store
would report; their number and the documents in them are printed.

Examples:
  simstore eval ../shared/data/dev --json quality.json
  simstore eval ../shared/data/dev --quality high --scale 1000000
  simstore eval ../shared/data/dev --modes")]
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
    /// Evaluate a quality mode's rule as a store of that mode created for --scale documents
    /// answers it (see below).
    #[arg(
        long,
        value_name = "MODE",
        conflicts_with = "verify",
        value_parser = PossibleValuesParser::new(["standard", "high"]).try_map(|s| s.parse::<Quality>())
    )]
    quality: Option<Quality>,
    /// With --quality: the documents the store is created for (its layout).
    #[arg(
        long,
        value_name = "N",
        requires = "quality",
        default_value_t = 10_000_000
    )]
    scale: u64,
    /// With --quality: the query-directed probes of the mode's rule instead of its own (as
    /// `bench --probes`), to measure a variant.
    #[arg(long, value_name = "N", requires = "quality")]
    probes: Option<u32>,
    /// With --quality: the sketch bands of the mode's rule instead of its own (0 to 4), to
    /// measure a variant (a store keeps its mode's: standard 2, high 4).
    #[arg(long, value_name = "N", requires = "quality", value_parser = clap::value_parser!(u32).range(0..=4))]
    bands: Option<u32>,
    /// Compare the quality modes side by side at 1M, 10M and 100M documents (see below).
    #[arg(long, conflicts_with_all = ["verify", "quality"])]
    modes: bool,
    /// Also write the full report (every row, language, length bucket and class) as JSON to FILE.
    #[arg(long, value_name = "FILE")]
    json: Option<PathBuf>,
    /// Also write every document's fingerprint, sketch and weak bits as JSON lines to FILE
    /// (for analyses outside simstore, e.g. scripts/sketch_bands.py).
    #[arg(long, value_name = "FILE")]
    signatures: Option<PathBuf>,
}

/// What the command evaluates.
enum Task {
    /// "distance ≤ k" for every k (optionally verified): the per-k tables.
    PerK(Predictor),
    /// One mode at one scale.
    Mode(Quality, u64, Predictor),
    /// The modes side by side.
    Modes,
}

/// The labelled set, fingerprinted.
pub(super) struct Loaded {
    docs: Vec<EvalDoc>,
    pairs: Vec<Pair>,
    fps: std::collections::HashMap<String, Option<Signature>>,
    fingerprinter: Fingerprinter,
    /// Bytes of text (or of web pages, with --html) fingerprinted.
    bytes: usize,
}

/// Runs the command; see [`Args`].
pub fn run(args: Args) -> Result<Code> {
    let task = task(&args)?;
    let start = Instant::now();
    let sketches = match &task {
        Task::PerK(p) | Task::Mode(_, _, p) => p.needs_sketches(),
        Task::Modes => true,
    } || args.signatures.is_some();
    let (set, loaded, fingerprinting) = load(&args, sketches)?;
    if let Some(path) = &args.signatures {
        signatures::write(path, &set.fps)?;
    }
    let mut out = io::stdout().lock();
    match &task {
        Task::PerK(p) => report::per_k(&mut out, &set, p, args.k as usize, args.json.as_deref())?,
        Task::Mode(q, scale, p) => {
            report::mode(&mut out, &set, *q, *scale, p, args.json.as_deref())?
        }
        Task::Modes => modes_table::run(&mut out, &set, args.json.as_deref())?,
    }
    writeln!(
        out,
        "\nload {:.2} s, fingerprint {:.2} s ({:.1} MB/s on {} threads), total {:.2} s",
        loaded.as_secs_f64(),
        fingerprinting.as_secs_f64(),
        set.bytes as f64 / 1e6 / fingerprinting.as_secs_f64().max(1e-9),
        rayon::current_num_threads(),
        start.elapsed().as_secs_f64()
    )?;
    if let Some(path) = &args.json {
        writeln!(out, "report written to {}", path.display())?;
    }
    Ok(0)
}

/// The arguments checked and turned into what to evaluate.
fn task(args: &Args) -> Result<Task> {
    if let Some(t) = args.verify
        && !(0.0..=1.0).contains(&t)
    {
        bail!("--verify {t}: the threshold is a similarity between 0 and 1");
    }
    if args.k > args.max_k {
        bail!("--k {} is larger than --max-k {}", args.k, args.max_k);
    }
    if args.scale == 0 {
        bail!("--scale 0: give the number of documents the store is created for (at least 1)");
    }
    Ok(match (args.quality, args.modes) {
        (Some(q), _) => {
            let mut p = Predictor::mode(q, args.scale)
                .with_context(|| format!("laying out a {q} store for {} documents", args.scale))?;
            if let Predictor::Rule { rule, .. } = &mut p {
                rule.probes = args.probes.unwrap_or(rule.probes);
                rule.bands = args.bands.unwrap_or(rule.bands);
            }
            Task::Mode(q, args.scale, p)
        }
        (None, true) => Task::Modes,
        (None, false) => Task::PerK(Predictor::Distance {
            max_k: args.max_k,
            verify: args.verify,
        }),
    })
}

/// Reads and fingerprints the labelled set: the set, and the time reading and
/// fingerprinting took.
fn load(args: &Args, sketches: bool) -> Result<(Loaded, Duration, Duration)> {
    let start = Instant::now();
    let mut docs: Vec<EvalDoc> = read_jsonl(&find(&args.dir, "docs")?)?;
    docs.extend(read_jsonl::<EvalDoc>(&find(&args.dir, "variants")?)?);
    let pairs: Vec<Pair> = read_jsonl(&find(&args.dir, "pairs")?)?;
    let loaded = start.elapsed();
    let fingerprinter = Fingerprinter::new();
    let source = if args.html {
        Source::Html
    } else {
        Source::Text
    };
    let t = Instant::now();
    let fps = eval::fingerprint_all(&fingerprinter, &docs, source, sketches);
    let fingerprinting = t.elapsed();
    let bytes: usize = docs
        .iter()
        .map(|d| match (&d.html, source) {
            (Some(h), Source::Html) => h.len(),
            _ => d.text.len() + d.title.as_ref().map_or(0, String::len),
        })
        .sum();
    let set = Loaded {
        docs,
        pairs,
        fps,
        fingerprinter,
        bytes,
    };
    Ok((set, loaded, fingerprinting))
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
