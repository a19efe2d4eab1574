//! `simstore dedup`: every near-duplicate pair of a store or of input files, clustered
//! without chaining (leader clustering: a document joins the nearest earlier kept document
//! it duplicates, else is kept); with `--output`, a dataset deduplicated ([`dataset`]: the
//! kept records written).

mod against;
mod columns;
mod dataset;
mod docs;
mod exact;
mod items;
mod keep;
mod kept;
mod pairs;
mod paths;
mod provenance;
mod records;
mod report;
mod rows;
mod shards;
mod timestamp;

pub use dataset::copy_kept_as_lines;

use docs::{FileDocs, read_inputs, stored_docs};
use pairs::{DEFAULT_FILES_K, FILES_MODE, files_mode, grouping, pairs_in, rule_of};

use std::collections::{BTreeMap, HashMap};
use std::io::{self, BufWriter, IsTerminal, Write};
use std::path::{Path, PathBuf};
use std::time::Instant;

use anyhow::Result;
use serde_json::json;
use simstore::index::cluster;
use simstore::index::groups::Clusters;
use simstore::index::layout::MAX_K;
use simstore::index::near::ExactCheck;
use simstore::{DedupReport, DuplicatePair, MatchRule, Quality, Rule, Store};

use super::input::{FieldArgs, Format};
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
                  Pairs: without --k or --verify, a quality mode's rule (of a store, its own, \
                  over its tables, kept when the two texts' shingle sketches are at least 0.3 \
                  similar (Chinese: 0.25 + 0.025 a bit of distance; 0.8 when a text has fewer \
                  than 16 shingles, 24 in Chinese; a side without a sketch: within 3); of \
                  FILEs, the standard mode's as a dataset's: over the pairs a store of that \
                  mode made for as many documents would compare (within 12 bits under one of \
                  its tables' prefixes, or sharing a band of the sketch), kept at sketch \
                  similarity 0.6 (Chinese: the same rising threshold, at least 0.55), so that \
                  records sharing only a passage stay apart); --k K alone: every pair at \
                  distance <= K, nothing else.\n\
                  Clusters, without chaining: in input order (of a store, insertion order) \
                  each document joins the nearest earlier kept document it duplicates (ties: \
                  the earliest), or else is kept; a cluster is a kept document and the ones \
                  that joined it, so one false pair drops at most one document. With \
                  --transitive (FILEs), clusters are connected components instead: a chain \
                  of near duplicates is one cluster even where its ends are far apart, and \
                  all but its first document are dropped.\n\
                  Dataset dedup: `dedup corpus.jsonl.gz --text-field content --output kept.jsonl.gz` \
                  writes the kept records (in input order: every record in no cluster and \
                  the kept one of every cluster), each line unchanged (gzip'd if the name \
                  ends in .gz), and prints only the summary; records that fail are reported \
                  and left out. Reads FILEs twice (stdin is copied beside the output first). \
                  --keep picks the record kept (first, longest, newest:FIELD, oldest:FIELD, \
                  none); --clusters FILE says why each record was dropped.\n\
                  Against a store: `dedup dump2.jsonl --against corpus.db --add --output kept.jsonl` \
                  drops the records a stored document (or an earlier record) duplicates, by the \
                  store's rule, and stores the rest.\n\
                  Exit status: 0 some pair found, 1 none (or some input records failed), 2 error; \
                  with --output or --add, 0 the kept records written or stored, 1 some input \
                  records failed."
)]
pub struct Args {
    /// Largest Hamming distance of a pair, and with no --verify the whole rule: distance
    /// <= K (for a store, K at most its k_max) [default, of a store: its quality mode's
    /// rule (pairs within its reach that share a table prefix, kept when their sketches
    /// agree; without sketches, within k_max); of FILEs: the standard mode's rule as a
    /// dataset's (the pairs within 12 that share a prefix of the tables of a store made for
    /// as many documents, and those sharing one of the 15 bands of the sketch, kept when
    /// their sketches are at least 0.6 similar — Chinese 0.25 + 0.025 a bit of distance, at
    /// least 0.55 —, 0.8 for texts of fewer than 16 shingles (24 in Chinese); without
    /// sketches, within 3)].
    #[arg(long = "k", short, value_name = "K", value_parser = clap::value_parser!(u32).range(0..=i64::from(MAX_K)))]
    k_arg: Option<u32>,
    /// The rule in effect.
    #[arg(skip = MatchRule::within(0))]
    rule: MatchRule,
    /// Print the clusters as JSON lines (the default when stdout is not a terminal).
    #[arg(long, conflicts_with = "pretty")]
    json: bool,
    /// Print the clusters for reading, with titles (the default on a terminal).
    #[arg(long)]
    pretty: bool,
    /// Print every pair (JSON lines) instead of the clusters.
    #[arg(long)]
    pairs: bool,
    /// Write the records to keep to FILE: every record in no cluster and the kept one of
    /// every cluster, in input order. JSONL lines are copied unchanged but for their line
    /// ends (`\n`; gzip'd if FILE ends in .gz); Parquet rows keep all their columns, written
    /// as shards when FILE ends in `/` or is a directory (a .jsonl/.ndjson/.json/.gz name:
    /// JSON lines; .parquet: one file). The inputs are read twice (stdin or a `<(...)` is
    /// copied to a scratch file beside FILE first) and must not change in between. A new or
    /// regular FILE is written beside it and renamed over it at the end; a symbolic link is
    /// followed; a FIFO or a character device is written through.
    #[arg(long, short = 'o', value_name = "FILE", conflicts_with = "pairs")]
    output: Option<PathBuf>,
    /// Parquet output: the compression of the shards written (uncompressed, snappy, gzip,
    /// lz4_raw, zstd) [default: the input's].
    #[arg(long, value_name = "CODEC", value_parser = shards::parse_compression)]
    compression: Option<parquet::basic::Compression>,
    /// Parquet output to a directory: rows per shard (part-00000.parquet, ...).
    #[arg(long, value_name = "N", default_value_t = kept::DEFAULT_SHARD_ROWS, value_parser = clap::value_parser!(u64).range(1..))]
    shard_rows: u64,
    /// Which JSONL fields hold the text and the id.
    #[command(flatten)]
    fields: FieldArgs,
    /// A pair within k counts only when the two texts' shingle sketches are at least T
    /// similar (estimated Jaccard, 0..1), as `query --verify` checks; a document without
    /// a sketch (stored from a fingerprint, or too short) is in no pair. Of a store: its
    /// documents' fingerprints and sketches are read once and compared in memory (as for
    /// FILEs, so K may exceed the store's k_max; about 100 bytes a document).
    #[arg(long, value_name = "T")]
    verify: Option<f64>,
    /// The quality mode whose rule decides the pairs of FILEs, as a store of that mode
    /// made for as many documents would: the pairs its tables put under one prefix within
    /// the mode's reach and those sharing one of its sketch bands (not the high mode's
    /// probes: they follow a query's weak bits) [default: standard]. A store's dedup
    /// applies the store's own mode.
    #[arg(long, value_name = "MODE", value_parser = crate::cli::init::quality_parser(), conflicts_with_all = ["k_arg", "verify"])]
    quality: Option<Quality>,
    /// Which record of a cluster is kept: first (in input order), longest (text),
    /// newest:FIELD or oldest:FIELD (the field's value: numbers, ISO 8601 timestamps as
    /// instants (a zone-less one as UTC; as seconds beside numbers), then other strings as
    /// text; a record without it comes last), or none (every member of a
    /// cluster of two or more is dropped). Ties go to the earlier record. A record joins
    /// the nearest record it duplicates among those the policy prefers to it.
    #[arg(long, value_name = "POLICY", default_value = "first", value_parser = keep::Keep::parse)]
    keep: keep::Keep,
    /// Write one JSON line per record in a cluster of two or more to FILE (gzip'd if it
    /// ends in .gz; a Parquet file of the same columns, typed, if it ends in .parquet): {"cluster", "id", "file", "line", "representative" (the id of the
    /// record the cluster formed around), "kept", "distance" (bits from the
    /// representative), "similarity" (of the sketches, when the rule verifies)}, to audit
    /// or undo a dedup.
    #[arg(long, value_name = "FILE")]
    clusters: Option<PathBuf>,
    /// Write a page to judge the dedup by eye to FILE (self-contained HTML): the cluster
    /// sizes, the distances and sketch similarities to each cluster's representative, and
    /// the largest clusters and some picked at random with their texts side by side, the
    /// words that differ marked (the inputs are read once more for those texts).
    #[arg(long, value_name = "FILE.html")]
    report: Option<PathBuf>,
    /// Dedup FILEs against the store at STORE (a path or a redis:// URL) too: a record that
    /// duplicates a stored document (by the store's rule: its quality mode's, or --k /
    /// --verify), or a record kept before it, is dropped; records are checked in input
    /// order, as `import --dedup` checks them (with --keep longest, newest:FIELD or
    /// oldest:FIELD in the policy's order, once all are read).
    #[arg(long, value_name = "STORE")]
    against: Option<PathBuf>,
    /// With --against: store the records kept (so the next dump is deduplicated against
    /// this one too); every record then needs its own id (--id-field). A stored document is
    /// never replaced: a kept record whose id is stored already is written out but not
    /// stored, with a warning. The store is created (standard mode) when missing.
    #[arg(long, requires = "against")]
    add: bool,
    /// With --add: take up a run of these inputs that was killed before it wrote its
    /// output. A record the store holds under its own id with its fingerprint (the killed
    /// run stored it) is kept and written out, not dropped as a duplicate of itself.
    #[arg(long, requires = "add")]
    resume: bool,
    /// Cluster FILEs by connected components (the old grouping) rather than by leader:
    /// chains near duplicates into one cluster, however far apart its ends, and keeps only
    /// its first record.
    #[arg(long)]
    transitive: bool,
    /// Input format of FILEs.
    #[arg(long, value_enum, default_value_t = Format::Auto)]
    format: Format,
    /// Input files ('-' = stdin); none: the store.
    files: Vec<String>,
}

/// Runs the dedup; see [`Args`].
pub fn run(db: &Path, mut args: Args) -> Result<Code> {
    let start = Instant::now();
    check_args(&args)?;
    for path in [&args.clusters, &args.report].into_iter().flatten() {
        paths::check_written(path, &args)?;
    }
    let _scratch = records::spool_streams(&mut args)?;
    if let (Some(_), Some(f)) = (&args.report, records::once_only(&args.files)) {
        anyhow::bail!(
            "--report reads the inputs again for the texts it shows, and {f} (stdin or a pipe) \
             cannot be read twice: save it to a file first"
        );
    }
    if let Some(store) = args.against.clone() {
        return against::run(&args, &store, start);
    }
    if !args.files.is_empty() {
        crate::purge_freed_memory_after(100);
        crate::small_pages();
        let mode = args.quality.unwrap_or(FILES_MODE);
        let rule = || mode.rule(mode.k_max()).for_datasets();
        args.rule = rule_of(&args, DEFAULT_FILES_K, rule);
    }
    if let Some(out) = args.output.clone() {
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
    let tail = summary_tail(&args);
    let mut within = pairs_in(&args, &files_mode(&args));
    let (result, titles, failed) = if args.files.is_empty() {
        let store = open_for_reading(db)?;
        // Given neither --k nor --verify, the store's quality mode decides the pairs (those
        // its tables hold: a store's dedup does not read its band tables).
        let mode = || MatchRule {
            bands: 0,
            ..store.rule(Rule::Mode)
        };
        args.rule = rule_of(&args, store.layout().k_max(), mode);
        within = pairs_in(&args, &format!("the store's {} mode", store.quality()));
        let result = if args.verify.is_some() {
            stored_docs(&store).and_then(|docs| dedup_files(&docs, &args, &mut print_pair))
        } else if args.pairs {
            store.dedup_pairs(args.rule, &mut print_pair).map(unchecked)
        } else {
            store.dedup(args.rule).map(unchecked)
        };
        (result, Titles::Store(Box::new(store)), 0)
    } else {
        let snapshot = crate::cli::input::Snapshot::of(&args.files);
        let (docs, failed) = read_inputs(&args, pretty)?;
        let result = dedup_files(&docs, &args, &mut print_pair);
        exact::unchanged(&snapshot)?;
        (result, Titles::of_files(docs), failed)
    };
    let (report, check) = match result {
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
    let tail = tail + &exact::summary(&check);
    Summary::of(&report, failed).print(&within, &tail, start);
    Ok(if failed > 0 || report.pairs == 0 {
        1
    } else {
        0
    })
}

/// A store's dedup report, which no text checked.
fn unchecked(report: DedupReport) -> (DedupReport, ExactCheck) {
    (report, ExactCheck::default())
}

/// What the summary adds before the time: the verification and the grouping.
fn summary_tail(args: &Args) -> String {
    let mut tail = args
        .verify
        .map(|t| format!("; pairs verified at {t}"))
        .unwrap_or_default();
    if args.transitive {
        tail.push_str("; clusters are connected components (--transitive)");
    }
    tail
}

/// Refuses options that do not apply: --verify out of 0..1; --output, --text-field,
/// --id-field or --transitive without FILEs.
fn check_args(args: &Args) -> Result<()> {
    if let Some(t) = args.verify
        && !(0.0..=1.0).contains(&t)
    {
        anyhow::bail!("--verify {t}: the threshold is a similarity between 0 and 1");
    }
    let file_only = [
        (args.output.is_some(), "--output"),
        (args.fields.given() == Some("--text-field"), "--text-field"),
        (args.fields.given() == Some("--id-field"), "--id-field"),
        (args.transitive, "--transitive"),
        (args.quality.is_some(), "--quality"),
        (args.keep != keep::Keep::First, "--keep"),
        (args.clusters.is_some(), "--clusters"),
        (args.against.is_some(), "--against"),
        (args.report.is_some(), "--report"),
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

/// The pairs (printed as found, with `--pairs`) and clusters of the documents read.
fn dedup_files(
    files: &FileDocs,
    args: &Args,
    print_pair: &mut impl FnMut(DuplicatePair) -> simstore::Result<()>,
) -> simstore::Result<(DedupReport, ExactCheck)> {
    let (ids, fps) = (&files.ids, &files.fps);
    let on_pair = |a: u32, b: u32, distance| {
        if !args.pairs {
            return Ok(());
        }
        let (x, y) = (&ids[a as usize], &ids[b as usize]);
        let (a, b) = if x <= y { (x, y) } else { (y, x) };
        print_pair(DuplicatePair {
            a: a.clone(),
            b: b.clone(),
            distance,
        })
    };
    let order = keep::order(&args.keep, &files.ranks);
    let grouping = grouping(args, fps.len())?;
    let records = (&fps[..], &files.sketches[..], order);
    let (mut clusters, check) = match files.items.is_empty() {
        true => (
            Clusters::new(records.0, records.1, records.2, &grouping, on_pair)?,
            Default::default(),
        ),
        false => {
            let texts = (&files.items, files.partial.as_slice());
            exact::clusters(args, texts, records, &grouping, on_pair)?
        }
    };
    let sets = clusters.sets(2);
    // Which records are kept matters to the rows and the report only.
    let kept = match args.clusters.is_some() || args.report.is_some() {
        true => clusters.kept(args.keep == keep::Keep::None),
        false => Vec::new(),
    };
    let records = provenance::Records {
        fps,
        sketches: &files.sketches,
        kept: &kept,
        exact: clusters.exact(),
    };
    let origin = |i: u32| provenance::Origin {
        id: &ids[i as usize],
        place: files.places.get(i as usize),
    };
    if let Some(path) = &args.clusters {
        provenance::write(path, &sets, &records, origin).map_err(provenance_error)?;
    }
    if let Some(path) = &args.report {
        let item = |i: u32| match files.items.is_empty() {
            true => 0,
            false => files.items.get(i as usize),
        };
        let report = report::Report::new(&sets, &records, item, origin);
        write_report(path, args, report).map_err(provenance_error)?;
    }
    let summary = cluster::DedupSummary {
        documents: fps.len() as u64,
        pairs: clusters.pairs(),
        clusters: sets,
    };
    Ok((summary.to_report(|i| ids[i as usize].clone()), check))
}

/// Reads the texts `report` shows and writes it to `path`.
fn write_report(path: &Path, args: &Args, report: report::Report) -> Result<()> {
    let texts = records::texts_of(args, &report.items())?;
    report.write(path, &texts)
}

/// A failure to write `--clusters`, in the library's error type (the dedup's callbacks
/// speak it).
fn provenance_error(e: anyhow::Error) -> simstore::Error {
    simstore::Error::Io(io::Error::other(format!("{e:#}")))
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
        for (id, title) in files.ids.into_iter().zip(files.titles) {
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
