//! `simstore dedup`: every near-duplicate pair within k, of a store or of input files,
//! clustered (connected components).

use std::collections::HashMap;
use std::io::{self, BufWriter, IsTerminal, Write};
use std::path::Path;
use std::time::Instant;

use anyhow::Result;
use rayon::prelude::*;
use serde_json::json;
use simstore::index::cluster;
use simstore::index::layout::MAX_K;
use simstore::{DedupReport, DuplicatePair, Fingerprinter, Store};

use super::input::{self, Format, Inputs};
use super::{Code, open_for_reading, output};

/// Arguments of `simstore dedup`.
#[derive(Debug, clap::Args)]
#[command(
    after_help = "Without FILEs, reads the store (--db); with FILEs, fingerprints them in memory \
                  (no store is written; a repeated id counts as another document).\n\
                  Output: each cluster of 2 or more documents, with their titles, on a terminal \
                  (or --pretty); else (or --json) one JSON line {\"cluster\": n, \"ids\": [...]} per \
                  cluster; with --pairs one line {\"a\", \"b\", \"distance\"} per pair; a summary \
                  on stderr.\n\
                  Exit status: 0 some pair found, 1 none (or some input records failed), 2 error."
)]
pub struct Args {
    /// Largest Hamming distance of a pair [default: the store's k_max; for FILEs, 3] (for a
    /// store: at most its k_max).
    #[arg(long = "k", short, value_name = "K", value_parser = clap::value_parser!(u32).range(0..=i64::from(MAX_K)))]
    k_arg: Option<u32>,
    /// The k in effect.
    #[arg(skip)]
    k: u32,
    /// Print the clusters as JSON lines (the default when stdout is not a terminal).
    #[arg(long, conflicts_with = "pretty")]
    json: bool,
    /// Print the clusters for reading, with titles (the default on a terminal).
    #[arg(long)]
    pretty: bool,
    /// Print every pair (JSON lines) instead of the clusters.
    #[arg(long)]
    pairs: bool,
    /// Input format of FILEs.
    #[arg(long, value_enum, default_value_t = Format::Auto)]
    format: Format,
    /// Input files ('-' = stdin); none: the store.
    files: Vec<String>,
}

/// The k of a dedup of files when --k is not given.
const DEFAULT_FILES_K: u32 = 3;

/// Runs the dedup; see [`Args`].
pub fn run(db: &Path, mut args: Args) -> Result<Code> {
    let start = Instant::now();
    let stdout = io::stdout();
    let pretty = args.pretty || (!args.json && stdout.is_terminal());
    let mut out = BufWriter::new(stdout.lock());
    // A write error (a closed pipe) stops the run; it is kept to be reported as itself.
    let mut write_error: Option<io::Error> = None;
    let mut print_pair = |p: DuplicatePair| -> simstore::Result<()> {
        let line = json!({"a": p.a, "b": p.b, "distance": p.distance});
        writeln!(out, "{line}").map_err(|e| {
            let kind = e.kind();
            write_error = Some(e);
            simstore::Error::Io(kind.into())
        })
    };
    let (result, titles, failed) = if args.files.is_empty() {
        let store = open_for_reading(db)?;
        args.k = args.k_arg.unwrap_or(store.layout().k_max());
        let result = if args.pairs {
            store.dedup_pairs(args.k, &mut print_pair)
        } else {
            store.dedup(args.k)
        };
        (result, Titles::Store(Box::new(store)), 0)
    } else {
        args.k = args.k_arg.unwrap_or(DEFAULT_FILES_K);
        let (docs, failed) = read_inputs(&args)?;
        let result = dedup_files(&docs, &args, &mut print_pair);
        (result, Titles::of_files(docs), failed)
    };
    let report = match result {
        Ok(r) => r,
        Err(_) if write_error.is_some() => {
            return Err(write_error.take().expect("checked").into());
        }
        Err(e) => return Err(anyhow::Error::from(e).context("dedup failed")),
    };
    if !args.pairs {
        print_clusters(&mut out, &report, pretty.then_some(&titles))?;
    }
    out.flush()?;
    print_summary(&report, args.k, failed, start);
    Ok(if failed > 0 || report.pairs == 0 {
        1
    } else {
        0
    })
}

/// A document read from the input files: id, fingerprint, title.
type FileDoc = (String, u64, Option<String>);

/// The pairs (printed as found, with `--pairs`) and clusters of the documents read.
fn dedup_files(
    docs: &[FileDoc],
    args: &Args,
    print_pair: &mut impl FnMut(DuplicatePair) -> simstore::Result<()>,
) -> simstore::Result<DedupReport> {
    let fps: Vec<u64> = docs.iter().map(|d| d.1).collect();
    cluster::near_duplicates(&fps, args.k, |a, b, distance| {
        if args.pairs {
            let (x, y) = (&docs[a as usize].0, &docs[b as usize].0);
            let (a, b) = if x <= y { (x, y) } else { (y, x) };
            print_pair(DuplicatePair {
                a: a.clone(),
                b: b.clone(),
                distance,
            })?;
        }
        Ok(())
    })
    .map(|summary| summary.to_report(|i| docs[i as usize].0.clone()))
}

/// Where the titles of a readable listing come from.
enum Titles {
    Store(Box<Store>),
    Files(HashMap<String, String>),
}

impl Titles {
    /// The titles of the documents read (of an id given twice, the first).
    fn of_files(docs: Vec<FileDoc>) -> Self {
        let mut titles = HashMap::new();
        for (id, _, title) in docs {
            if let Some(t) = title {
                titles.entry(id).or_insert(t);
            }
        }
        Titles::Files(titles)
    }

    fn title(&self, id: &str) -> Option<String> {
        match self {
            Titles::Store(store) => store.get(id).ok().flatten().and_then(|d| d.title),
            Titles::Files(titles) => titles.get(id).cloned(),
        }
    }
}

/// The clusters: with `titles`, readable ("cluster 3: 4 documents", then one indented
/// line per document with its title); without, one JSON line per cluster.
fn print_clusters(
    out: &mut impl Write,
    report: &DedupReport,
    titles: Option<&Titles>,
) -> io::Result<()> {
    for (n, ids) in report.clusters.iter().enumerate() {
        let Some(titles) = titles else {
            writeln!(out, "{}", json!({"cluster": n, "ids": ids}))?;
            continue;
        };
        let width = ids.iter().map(|id| id.chars().count()).max().unwrap_or(0);
        writeln!(
            out,
            "cluster {}: {}",
            n + 1,
            output::count(ids.len() as u64, "document")
        )?;
        for id in ids {
            let title = titles.title(id).unwrap_or_default();
            let id = output::escape_field(id);
            writeln!(out, "  {id:width$}  {}", output::escape_field(&title))?;
        }
    }
    Ok(())
}

/// The summary line on stderr.
fn print_summary(report: &DedupReport, k: u32, failed: u64, start: Instant) {
    let histogram: Vec<String> = report
        .histogram()
        .iter()
        .map(|(size, count)| format!("{size}: {count}"))
        .collect();
    eprintln!(
        "{}: {} within k = {k}, {} (largest {}); cluster sizes {{{}}}{} — {:.2} s",
        output::count(report.documents, "document"),
        output::count(report.pairs, "pair"),
        output::count(report.clusters.len() as u64, "cluster"),
        report.largest(),
        histogram.join(", "),
        if failed > 0 {
            format!("; {} failed", output::count(failed, "record"))
        } else {
            String::new()
        },
        start.elapsed().as_secs_f64()
    );
}

/// Reads and fingerprints every record of the inputs: `(id, fingerprint)` in input order,
/// and the number of records that failed (each reported on stderr).
fn read_inputs(args: &Args) -> Result<(Vec<FileDoc>, u64)> {
    let f = Fingerprinter::new();
    let mut docs = Vec::new();
    let mut failed = 0u64;
    let mut inputs = Inputs::new(&args.files, args.format, None);
    loop {
        let chunk = inputs.next_chunk(4096)?;
        if chunk.is_empty() {
            break;
        }
        let parsed: Vec<_> = chunk
            .into_par_iter()
            .map(|(place, raw)| {
                let r = raw.and_then(input::to_record).and_then(|r| {
                    let fp = r.fingerprint(&f).map_err(|e| e.to_string())?;
                    Ok((r.id, fp.0, r.title))
                });
                (place, r)
            })
            .collect();
        for (place, r) in parsed {
            match r {
                Ok(doc) => docs.push(doc),
                Err(e) => {
                    failed += 1;
                    eprintln!("error: {place}: {e}; {} skipped", place.skipped());
                }
            }
        }
    }
    if docs.is_empty() && failed > 0 {
        anyhow::bail!(
            "no record of the input could be read ({failed} failed, see above): nothing to compare"
        );
    }
    Ok((docs, failed))
}
