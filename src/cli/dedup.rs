//! `simstore dedup`: every near-duplicate pair within k, of a store or of input files,
//! clustered (connected components).

use std::io::{self, BufWriter, Write};
use std::path::Path;
use std::time::Instant;

use anyhow::Result;
use rayon::prelude::*;
use serde_json::json;
use simstore::index::cluster;
use simstore::index::layout::MAX_K;
use simstore::{DuplicatePair, Fingerprinter};

use super::input::{self, Format, Inputs};
use super::{Code, open_for_reading};

/// Arguments of `simstore dedup`.
#[derive(Debug, clap::Args)]
#[command(
    after_help = "Without FILEs, reads the store (--db); with FILEs, fingerprints them in memory \
                  (no store is written; a repeated id counts as another document).\n\
                  Output: one JSON line {\"cluster\": n, \"ids\": [...]} per cluster of 2 or more \
                  documents, or with --pairs one line {\"a\", \"b\", \"distance\"} per pair; a summary \
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
    /// Print every pair instead of the clusters.
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
    let mut out = BufWriter::new(io::stdout().lock());
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
    let mut failed = 0;
    let result = if args.files.is_empty() {
        let store = open_for_reading(db)?;
        args.k = args.k_arg.unwrap_or(store.layout().k_max());
        if args.pairs {
            store.dedup_pairs(args.k, &mut print_pair)
        } else {
            store.dedup(args.k)
        }
    } else {
        args.k = args.k_arg.unwrap_or(DEFAULT_FILES_K);
        let (docs, bad) = read_inputs(&args)?;
        if docs.is_empty() && bad > 0 {
            anyhow::bail!(
                "no record of the input could be read ({bad} failed, see above): nothing to compare"
            );
        }
        failed = bad;
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
    };
    let report = match result {
        Ok(r) => r,
        Err(_) if write_error.is_some() => {
            return Err(write_error.take().expect("checked").into());
        }
        Err(e) => return Err(anyhow::Error::from(e).context("dedup failed")),
    };
    if !args.pairs {
        for (n, ids) in report.clusters.iter().enumerate() {
            writeln!(out, "{}", json!({"cluster": n, "ids": ids}))?;
        }
    }
    out.flush()?;
    let histogram: Vec<String> = report
        .histogram()
        .iter()
        .map(|(size, count)| format!("{size}: {count}"))
        .collect();
    eprintln!(
        "{} documents: {} pairs within k = {}, {} clusters (largest {}); cluster sizes {{{}}}{} — {:.2} s",
        report.documents,
        report.pairs,
        args.k,
        report.clusters.len(),
        report.largest(),
        histogram.join(", "),
        if failed > 0 {
            format!("; {failed} records failed")
        } else {
            String::new()
        },
        start.elapsed().as_secs_f64()
    );
    Ok(if failed > 0 || report.pairs == 0 {
        1
    } else {
        0
    })
}

/// Reads and fingerprints every record of the inputs: `(id, fingerprint)` in input order,
/// and the number of records that failed (each reported on stderr).
fn read_inputs(args: &Args) -> Result<(Vec<(String, u64)>, u64)> {
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
                    Ok((r.id, fp.0))
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
    Ok((docs, failed))
}
