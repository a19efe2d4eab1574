//! `simstore dedup`: every near-duplicate pair within k, of a store or of input files,
//! clustered (connected components); with `--output`, a dataset deduplicated
//! ([`dataset`]: the first record of every cluster kept).

mod dataset;
mod records;

use std::collections::{BTreeMap, HashMap};
use std::io::{self, BufWriter, IsTerminal, Write};
use std::path::{Path, PathBuf};
use std::time::Instant;

use anyhow::Result;
use serde_json::json;
use simstore::index::cluster;
use simstore::index::layout::MAX_K;
use simstore::{DedupReport, DuplicatePair, Sketch, Store};

use super::input::Format;
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
                  Dataset dedup: `dedup corpus.jsonl.gz --text-field content --output kept.jsonl.gz` \
                  writes the first record (in input order) of every cluster and every record \
                  in none, each line unchanged (gzip'd if the name ends in .gz), and prints \
                  only the summary; records that fail are reported and left out. A cluster is \
                  a connected component of the pairs: a chain of near duplicates is one \
                  cluster even where its ends are far apart. Reads FILEs twice (not stdin).\n\
                  Exit status: 0 some pair found, 1 none (or some input records failed), 2 error."
)]
pub struct Args {
    /// Largest Hamming distance of a pair (for a store without --verify: at most its
    /// k_max) [default, of a store: its quality mode's pairs (those within 8 that share a
    /// table prefix, kept when their sketches agree; without sketches, within k_max); of
    /// FILEs: 3].
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
    /// Write the records to keep to FILE: the first of every cluster (in input order) and
    /// every record in none, each JSONL line unchanged (all its fields); gzip'd if FILE ends
    /// in .gz. Needs FILEs (JSONL, not stdin: they are read twice, and must not change in
    /// between). A new or regular FILE is written beside it and renamed over it at the
    /// end; a symbolic link is followed; a FIFO or a character device is written through.
    #[arg(long, short = 'o', value_name = "FILE", conflicts_with = "pairs")]
    output: Option<PathBuf>,
    /// The JSONL field holding the text; no other field is then read (title, html, fp are
    /// data like the rest) [default: the record's text, title, html and fp].
    #[arg(long, value_name = "NAME")]
    text_field: Option<String>,
    /// The JSONL field holding the id (optional: a record without one is named by its line
    /// number; a number is an id as written).
    #[arg(long, value_name = "NAME", default_value = "id")]
    id_field: String,
    /// A pair within k counts only when the two texts' shingle sketches are at least T
    /// similar (estimated Jaccard, 0..1), as `query --verify` checks; a document without
    /// a sketch (stored from a fingerprint, or too short) is in no pair. Of a store: its
    /// documents' fingerprints and sketches are read once and compared in memory (as for
    /// FILEs, so K may exceed the store's k_max; about 100 bytes a document).
    #[arg(long, value_name = "T")]
    verify: Option<f64>,
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
    check_args(&args)?;
    if let Some(out) = args.output.clone() {
        args.k = args.k_arg.unwrap_or(DEFAULT_FILES_K);
        return dataset::run(&args, &out, start);
    }
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
    let tail = args
        .verify
        .map(|t| format!("; pairs verified at {t}"))
        .unwrap_or_default();
    let mut within = String::new();
    let (result, titles, failed) = if args.files.is_empty() {
        let store = open_for_reading(db)?;
        args.k = args.k_arg.unwrap_or(store.layout().k_max());
        // Given neither --k nor --verify, the store's quality mode decides the pairs.
        let mode = (args.k_arg.is_none() && args.verify.is_none()).then(|| store.mode_rule());
        let result = if args.verify.is_some() {
            stored_docs(&store).and_then(|docs| dedup_files(&docs, &args, &mut print_pair))
        } else if let Some(rule) = mode {
            within = format!(
                "in the store's {} mode ({})",
                store.quality(),
                super::rule::describe(&rule)
            );
            match args.pairs {
                true => store.dedup_pairs_rule(&rule, &mut print_pair),
                false => store.dedup_rule(&rule),
            }
        } else if args.pairs {
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
    if within.is_empty() {
        within = format!("within k = {}", args.k);
    }
    Summary::of(&report, failed).print(&within, &tail, start);
    Ok(if failed > 0 || report.pairs == 0 {
        1
    } else {
        0
    })
}

/// Refuses options that do not apply: --verify out of 0..1; --output, --text-field or
/// --id-field without FILEs.
fn check_args(args: &Args) -> Result<()> {
    if let Some(t) = args.verify
        && !(0.0..=1.0).contains(&t)
    {
        anyhow::bail!("--verify {t}: the threshold is a similarity between 0 and 1");
    }
    let file_only = [
        (args.output.is_some(), "--output"),
        (args.text_field.is_some(), "--text-field"),
        (args.id_field != "id", "--id-field"),
    ];
    if args.files.is_empty()
        && let Some((_, flag)) = file_only.iter().find(|(given, _)| *given)
    {
        anyhow::bail!(
            "{flag} applies to a dedup of FILEs, and none is given (a store's dedup has no \
             {flag}): name the input files, e.g. `simstore dedup corpus.jsonl {flag} ...`"
        );
    }
    Ok(())
}

/// Whether the pair `a`, `b` of a dedup counts: always without `--verify T`; with it, when
/// both have sketches at least T similar.
fn verified(verify: Option<f64>, sketches: &[Option<Sketch>], a: u32, b: u32) -> bool {
    let Some(t) = verify else {
        return true;
    };
    match (&sketches[a as usize], &sketches[b as usize]) {
        (Some(x), Some(y)) => x.similarity(y) >= t,
        _ => false,
    }
}

/// A document read from the input files.
struct FileDoc {
    id: String,
    fp: u64,
    title: Option<String>,
}

/// The documents read from the input files (or, with `--verify`, from a store), and their
/// sketches (with `--verify`).
struct FileDocs {
    docs: Vec<FileDoc>,
    sketches: Vec<Option<Sketch>>,
}

/// Every document of `store` with its sketch, for a dedup `--verify` of the store (titles
/// are read from the store when printed).
fn stored_docs(store: &Store) -> simstore::Result<FileDocs> {
    let mut files = FileDocs {
        docs: Vec::with_capacity(store.len() as usize),
        sketches: Vec::with_capacity(store.len() as usize),
    };
    store.for_each_doc(|d| {
        files.docs.push(FileDoc {
            id: d.id,
            fp: d.fp,
            title: None,
        });
        files.sketches.push(d.sketch);
        Ok(())
    })?;
    Ok(files)
}

/// The pairs (printed as found, with `--pairs`) and clusters of the documents read.
fn dedup_files(
    files: &FileDocs,
    args: &Args,
    print_pair: &mut impl FnMut(DuplicatePair) -> simstore::Result<()>,
) -> simstore::Result<DedupReport> {
    let docs = &files.docs;
    let fps: Vec<u64> = docs.iter().map(|d| d.fp).collect();
    let (mut uf, pairs) = cluster::link_near_duplicates(&fps, args.k, |a, b, distance| {
        if !verified(args.verify, &files.sketches, a, b) {
            return Ok(false);
        }
        if args.pairs {
            let (x, y) = (&docs[a as usize].id, &docs[b as usize].id);
            let (a, b) = if x <= y { (x, y) } else { (y, x) };
            print_pair(DuplicatePair {
                a: a.clone(),
                b: b.clone(),
                distance,
            })?;
        }
        Ok(true)
    })?;
    let summary = cluster::DedupSummary {
        documents: fps.len() as u64,
        pairs,
        clusters: uf.sets(2),
    };
    Ok(summary.to_report(|i| docs[i as usize].id.clone()))
}

/// Where the titles of a readable listing come from.
enum Titles {
    Store(Box<Store>),
    Files(HashMap<String, String>),
}

impl Titles {
    /// The titles of the documents read (of an id given twice, the first).
    fn of_files(files: FileDocs) -> Self {
        let mut titles = HashMap::new();
        for doc in files.docs {
            if let Some(t) = doc.title {
                titles.entry(doc.id).or_insert(t);
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

/// What the summary line says: documents, pairs, cluster sizes, failed records.
struct Summary {
    documents: u64,
    pairs: u64,
    /// How many clusters (of 2 or more) have each size.
    histogram: BTreeMap<usize, u64>,
    failed: u64,
}

impl Summary {
    fn of(report: &DedupReport, failed: u64) -> Self {
        Summary {
            documents: report.documents,
            pairs: report.pairs,
            histogram: report.histogram(),
            failed,
        }
    }

    /// The summary line on stderr: the pairs `within` (e.g. "within k = 3"), `tail` before
    /// the time taken.
    fn print(&self, within: &str, tail: &str, start: Instant) {
        let histogram: Vec<String> = self
            .histogram
            .iter()
            .map(|(size, count)| format!("{size}: {count}"))
            .collect();
        let clusters: u64 = self.histogram.values().sum();
        let largest = self.histogram.keys().last().copied().unwrap_or(0);
        eprintln!(
            "{}: {} {within}, {} (largest {largest}); cluster sizes {{{}}}{}{tail} — {:.2} s",
            output::count(self.documents, "document"),
            output::count(self.pairs, "pair"),
            output::count(clusters, "cluster"),
            histogram.join(", "),
            if self.failed > 0 {
                format!("; {} failed", output::count(self.failed, "record"))
            } else {
                String::new()
            },
            start.elapsed().as_secs_f64()
        );
    }
}

/// The documents read from the input files, with their item numbers (to drop those read
/// from a damaged gzip member).
struct ReadDocs {
    files: FileDocs,
    items: Vec<u64>,
    sketch: bool,
}

impl records::Sink for ReadDocs {
    fn push(&mut self, r: records::Read) {
        self.items.push(r.item);
        self.files.docs.push(FileDoc {
            id: r.id,
            fp: r.fp,
            title: r.title,
        });
        if self.sketch {
            self.files.sketches.push(r.sketch);
        }
    }

    fn drop_items(&mut self, items: std::ops::Range<u64>) -> u64 {
        let files = &mut self.files;
        records::drop_range(
            &mut self.items,
            (&mut files.docs, &mut files.sketches),
            items,
        )
    }
}

/// Reads and fingerprints every record of the inputs, in input order (a progress bar on
/// a terminal); also the number of records that failed (each reported on stderr).
fn read_inputs(args: &Args) -> Result<(FileDocs, u64)> {
    let opts = records::ReadOptions::of(args);
    let bar = records::progress(&args.files, "fingerprinting");
    let mut read = ReadDocs {
        files: FileDocs {
            docs: Vec::new(),
            sketches: Vec::new(),
        },
        items: Vec::new(),
        sketch: opts.sketch,
    };
    let counts = records::read_records(args, &opts, &bar, &mut read)?;
    let files = read.files;
    bar.finish_and_clear();
    if counts.records == 0 && counts.failed > 0 {
        anyhow::bail!(
            "no record of the input could be read ({} failed, see above): nothing to compare",
            counts.failed
        );
    }
    Ok((files, counts.failed))
}
