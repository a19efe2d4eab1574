//! `simstore bench`: the macro benchmark. Generates fingerprints with planted neighbours,
//! bulk-loads them, measures single-thread latency, batch throughput and recall, and the
//! same figures for two baselines measured in the same run: brute force over a `Vec<u64>`
//! and an in-memory sorted-table index of the same layout.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use anyhow::{Context, Result};
use clap::builder::{PossibleValuesParser, TypedValueParser};
use rayon::prelude::*;
use simstore::index::probing::{self, Flip};
use simstore::{
    BatchOutcome, DocMeta, Entry, Fingerprint, Layout, Match, MatchRule, Quality, QueryKey, Rule,
    Sketch, Store,
};

use super::Code;

mod baseline;
mod check_insert;
mod cluster;
mod cold;
mod data;
mod expire;
mod measure;

use baseline::{MemIndex, brute, brute_near};
use data::{Rng, planted_data, sketch_seeds, synthetic_sketch, synthetic_weak_bits};
use measure::{Figures, measure, print_table, throughput, us};

/// Arguments of `simstore bench`.
#[derive(Debug, clap::Args)]
#[command(after_help = "\
With --quality MODE the store is created in that quality mode (its layout for --n documents)
and queried with the mode's rule (Store::query): the tables probed for the mode's k, the
candidates within its reach (12; high: 14) fetched, and the mode's query-directed probes
(high: 28 more spans, of 16 weak bits drawn per query, as a text's would be), and the spans of
its sketch bands (standard 2, high 4). The benchmark's fingerprints have no text: each gets a random sketch, and
the planted neighbours within k the query's own, so the band tables are filled and read as a
text store's, and the rule keeps exactly the candidates within k, which brute force checks; the
ones beyond k that the store fetched are counted on the recall line.

Examples:
  simstore bench --n 10000000   (needs ~3 GB of memory and ~1 GB of disk per 10M)
  simstore bench --n 10000000 --quality high")]
pub struct Args {
    /// Number of fingerprints to store.
    #[arg(long, default_value_t = 1_000_000)]
    n: u64,
    /// Number of distinct queries (each at distance 0..=4 from planted neighbours).
    #[arg(long, default_value_t = 10_000)]
    queries: usize,
    /// Hamming distance of the queries.
    #[arg(long, default_value_t = 3)]
    k: u32,
    /// Create the store in quality mode MODE (standard, high) and query it with the mode's
    /// rule instead of "distance <= --k" (see below).
    #[arg(
        long,
        value_name = "MODE",
        conflicts_with_all = ["k", "blocks", "check_insert", "cluster"],
        value_parser = PossibleValuesParser::new(["standard", "high"]).try_map(|s| s.parse::<Quality>())
    )]
    quality: Option<Quality>,
    /// Force the number of blocks (default: the layout rule for --n).
    #[arg(long)]
    blocks: Option<u32>,
    /// With --blocks: the blocks each table leads with (1 to blocks − k_max; default
    /// blocks − k_max, Manku's layout; fewer gives fewer tables with shorter prefixes).
    #[arg(long, requires = "blocks")]
    lead: Option<u32>,
    /// Directory for the benchmark store (default: a temporary directory, removed after).
    #[arg(long)]
    dir: Option<PathBuf>,
    /// Seconds to spend on each throughput measurement.
    #[arg(long, default_value_t = 3.0)]
    seconds: f64,
    /// Queries whose answers are checked against brute force (recall, extra hits).
    #[arg(long, default_value_t = 2000)]
    check_queries: usize,
    /// Queries timed for the brute-force baseline's latency (it is slow).
    #[arg(long, default_value_t = 200)]
    brute_queries: usize,
    /// Block cache size in MiB (the store's default is 256).
    #[arg(long, default_value_t = 256)]
    cache_mb: usize,
    /// Skip the in-memory index baseline (it needs ~16 bytes × tables × N of memory).
    #[arg(long)]
    no_mem_index: bool,
    /// Queries timed with a cold page cache (the store's files dropped from it, the store
    /// reopened): with the automatic probes (the default), in turn, and on threads; 0 skips.
    #[arg(long, default_value_t = 1000)]
    cold: usize,
    /// With --quality: the query-directed probes of the rule instead of the mode's (to
    /// measure what they cost).
    #[arg(long, value_name = "N", requires = "quality")]
    probes: Option<u32>,
    /// With --quality: the sketch bands the rule reads instead of the mode's (0: none; at
    /// most the store's: standard 2, high 4), to measure what they cost.
    #[arg(long, value_name = "N", requires = "quality")]
    bands: Option<u32>,
    /// RNG seed.
    #[arg(long, default_value_t = 42)]
    seed: u64,
    /// Measure `Store::check_and_insert` instead: --n documents (half new, a quarter exact
    /// and a quarter near copies of earlier ones) checked into a fresh store by one thread,
    /// then by --threads threads, against plain inserts of the same documents.
    #[arg(long)]
    check_insert: bool,
    /// Measure expiry instead: a store of --n documents whose older half is expired while
    /// --queries queries run beside it; disk bytes before, after, and after `compact`.
    #[arg(long, conflicts_with = "check_insert")]
    expire: bool,
    /// Threads for the --check-insert throughput (default: the number of cores).
    #[arg(long)]
    threads: Option<usize>,
    /// With --check-insert: open the stores with `sync_writes(true)` (every write fsynced
    /// before it returns, as `simstore serve` does) instead of the library's default.
    #[arg(long)]
    sync: bool,
    /// Also build a store on this Redis Cluster (redis://HOST:PORT,.../NAME, a name not in
    /// use) and compare it with the RocksDB store on the same data.
    #[arg(long, value_name = "URL")]
    cluster: Option<String>,
}

/// Runs the benchmark; see [`Args`].
pub fn run(args: Args) -> Result<Code> {
    if args.check_insert {
        return check_insert::run(&args);
    }
    if args.expire {
        return expire::run(&args);
    }
    if let Some(url) = &args.cluster {
        return cluster::run(url, &args);
    }
    let n = args.n as usize;
    anyhow::ensure!(
        n >= 10 * args.queries.max(1),
        "--n must be at least 10 × --queries"
    );
    let (fps, queries) = planted_data(args.seed, n, args.queries);
    let dir = work_dir(&args)?;
    let db = dir.join("bench.db");
    let store = new_store(&db, &args)?;
    let layout = store.layout().clone();
    let plan = Plan::new(&store, &args);
    println!(
        "simstore bench: N = {n}, {} queries, {}, layout {layout}, {} threads",
        queries.len(),
        plan.describe(args.quality),
        rayon::current_num_threads()
    );
    let seeds = sketch_seeds(&fps, &queries);
    let (load, mem) = load(&store, &layout, (&fps, &seeds), &args)?;
    let recall = check_recall(&store, mem.as_ref(), &fps, &queries, &plan, &args);
    let figures = measure_all(&store, mem.as_ref(), &fps, &queries, &plan, &args);
    drop(store);
    let cold_queries = &queries[..args.cold.min(queries.len())];
    let cold = cold::measure_cold(&db, cold_queries, &plan)?;
    print_summary(n, &load, &recall, &plan);
    print_table(&figures);
    cold::print_cold(&cold, cold_queries.len());
    Ok(if recall.is_exact() { 0 } else { 1 })
}

/// How the benchmark queries the store: "distance ≤ --k" ([`Store::query`]), or with
/// --quality the store's mode rule ([`Store::query`]).
struct Plan {
    /// The distance the answers hold exactly (checked against brute force).
    k: u32,
    /// The mode's rule, with --quality.
    rule: Option<MatchRule>,
}

impl Plan {
    fn new(store: &Store, args: &Args) -> Self {
        match args.quality {
            Some(_) => {
                let mut rule = store.rule(Rule::Mode);
                rule.probes = args.probes.unwrap_or(rule.probes);
                rule.bands = args.bands.unwrap_or(rule.bands);
                Plan {
                    k: rule.k,
                    rule: Some(rule),
                }
            }
            None => Plan {
                k: args.k,
                rule: None,
            },
        }
    }

    /// The query-directed probes of the store's query of `q` (none without a mode's rule).
    fn flips(&self, layout: &Layout, q: u64) -> Vec<Flip> {
        match &self.rule {
            Some(rule) => {
                probing::query_flips(layout, rule.k, rule.probes, Some(&synthetic_weak_bits(q)))
            }
            None => Vec::new(),
        }
    }

    /// The farthest candidate the store fetches.
    fn reach(&self) -> u32 {
        self.rule.map_or(self.k, |r| r.reach.max(r.k))
    }

    /// The store's answer to `q`. With a rule the query has the sketch of its planted
    /// neighbours within k, and every other stored fingerprint a random one, so the rule
    /// keeps the candidates within k; the store still probes the tables for k, reads its
    /// bands and fetches every candidate: the cost of the mode's query.
    fn query(&self, store: &Store, q: u64) -> simstore::Result<Vec<Match>> {
        match &self.rule {
            Some(rule) => {
                let key = QueryKey {
                    fp: Fingerprint(q),
                    sketch: Some(synthetic_sketch(q)),
                    weak_bits: Some(synthetic_weak_bits(q)),
                    main_sketch: None,
                };
                store.query(key, rule)
            }
            None => store.query(Fingerprint(q), self.k),
        }
    }

    /// For the header: `k = 3`, or the mode and its rule.
    fn describe(&self, quality: Option<Quality>) -> String {
        match (quality, &self.rule) {
            (Some(q), Some(r)) => format!(
                "quality mode {q} (the tables for k = {} probed{}{}, candidates within {} fetched; random sketches but within k, so the answers are those within {})",
                r.k,
                match r.probes {
                    0 => String::new(),
                    n => format!(" and {n} spans of weak bits"),
                },
                match r.bands {
                    0 => String::new(),
                    n => format!(" and {n} sketch bands"),
                },
                r.reach,
                r.k
            ),
            _ => format!("k = {}", self.k),
        }
    }
}

/// A new benchmark store at `db` (which must not exist yet): k_max = max(--k, 3), or with
/// --quality the mode's; sized for --n documents, with --blocks if given.
fn new_store(db: &Path, args: &Args) -> Result<Store> {
    anyhow::ensure!(
        !db.exists(),
        "{} exists; remove it or choose another --dir",
        db.display()
    );
    let mut builder = Store::builder(db)
        .expected_docs(args.n)
        .sync_writes(args.sync);
    builder = match args.quality {
        Some(q) => builder.quality(q),
        None => builder.k_max(args.k.max(3)),
    };
    if let Some(b) = args.blocks {
        builder = builder.blocks(b);
    }
    if let Some(l) = args.lead {
        builder = builder.lead_blocks(l);
    }
    builder.open().context("cannot create the benchmark store")
}

/// What loading the data cost.
struct Load {
    /// The bulk import into the store (durable).
    import: Duration,
    /// The store's size on disk after the import, in bytes.
    size: u64,
    /// Building the in-memory index (zero without it).
    mem_build: Duration,
}

/// Bulk-loads `fps` into `store` (ids `d<index>`; in a quality mode, with the sketches
/// seeded by `seeds`) and builds the in-memory index baseline (unless --no-mem-index); what
/// it cost, and the index.
fn load<'a>(
    store: &Store,
    layout: &'a Layout,
    (fps, seeds): (&[u64], &[u64]),
    args: &Args,
) -> Result<(Load, Option<MemIndex<'a>>)> {
    let t = Instant::now();
    let entries = fps
        .iter()
        .zip(seeds)
        .enumerate()
        .map(|(i, (&f, &s))| Entry {
            id: format!("d{i}"),
            fp: Fingerprint(f),
            meta: DocMeta {
                sketch: args.quality.map(|_| synthetic_sketch(s)),
                ..DocMeta::default()
            },
        });
    let out: BatchOutcome = store.bulk_load(entries)?;
    let import = t.elapsed();
    anyhow::ensure!(
        out.inserted == args.n,
        "bulk load stored {} of {}",
        out.inserted,
        args.n
    );
    let size = store.stats()?.disk_bytes;
    let t = Instant::now();
    let mem = (!args.no_mem_index).then(|| MemIndex::build(layout, fps));
    let mem_build = t.elapsed();
    let load = Load {
        import,
        size,
        mem_build,
    };
    Ok((load, mem))
}

/// The answers of the store (and of the in-memory index) compared with brute force's.
#[derive(Default)]
struct Recall {
    /// Neighbours brute force finds, over all checked queries.
    expected: usize,
    /// Of those, how many the store finds.
    found: usize,
    /// Store answers that brute force does not give.
    extra: usize,
    /// Queries on which the in-memory index's answer differs from brute force's.
    mem_wrong: usize,
    /// Stored fingerprints beyond k and within the rule's reach that the tables put in a
    /// query's spans: fetched by the store, then dropped (without a rule, none).
    beyond: usize,
    /// Queries checked.
    queries: usize,
    /// How long the check took.
    time: Duration,
}

impl Recall {
    /// Whether the store and the in-memory index answered exactly as brute force.
    fn is_exact(&self) -> bool {
        self.found == self.expected && self.extra == 0 && self.mem_wrong == 0
    }
}

/// Checks the first --check-queries queries (in parallel) against brute force: recall and
/// extra hits of the store, exactness of the in-memory index, candidates beyond k fetched.
fn check_recall(
    store: &Store,
    mem: Option<&MemIndex>,
    fps: &[u64],
    queries: &[u64],
    plan: &Plan,
    args: &Args,
) -> Recall {
    let t = Instant::now();
    let checks: Vec<Recall> = queries[..args.check_queries.min(queries.len())]
        .par_iter()
        .map(|&q| check_query(store, mem, fps, q, plan))
        .collect();
    let mut recall = Recall::default();
    for c in checks {
        recall.expected += c.expected;
        recall.found += c.found;
        recall.extra += c.extra;
        recall.mem_wrong += c.mem_wrong;
        recall.beyond += c.beyond;
        recall.queries += 1;
    }
    recall.time = t.elapsed();
    recall
}

/// One query checked against brute force within k (and, with a rule, the stored
/// fingerprints beyond k in the query's spans within reach: what the store fetched beyond
/// its answer).
fn check_query(store: &Store, mem: Option<&MemIndex>, fps: &[u64], q: u64, plan: &Plan) -> Recall {
    let k = plan.k;
    let near = brute_near(fps, q, plan.reach());
    let want: Vec<u32> = near.iter().filter(|n| n.1 <= k).map(|n| n.0).collect();
    let layout = store.layout();
    let beyond = near
        .iter()
        .filter(|&&(i, d)| d > k && layout.finds(k, q, fps[i as usize]))
        .count();
    let mut got: Vec<u32> = plan
        .query(store, q)
        .expect("query")
        .iter()
        .map(bench_index)
        .collect();
    got.sort_unstable();
    let hits = got.iter().filter(|g| want.binary_search(g).is_ok()).count();
    Recall {
        expected: want.len(),
        found: hits,
        extra: got.len() - hits,
        mem_wrong: usize::from(mem.is_some_and(|m| m.query(q, k, &[]) != want)),
        beyond,
        queries: 1,
        time: Duration::ZERO,
    }
}

/// The index in `fps` of a match (its id is `d<index>`).
fn bench_index(m: &simstore::Match) -> u32 {
    m.doc.id[1..]
        .parse::<u32>()
        .expect("bench ids are d<index>")
}

/// The figures of every method, in table order: the store, the in-memory index (if
/// built), brute force (timed on the first --brute-queries queries only: it is slow).
fn measure_all(
    store: &Store,
    mem: Option<&MemIndex>,
    fps: &[u64],
    queries: &[u64],
    plan: &Plan,
    args: &Args,
) -> Vec<(&'static str, Figures)> {
    let k = plan.k;
    let simstore = measure(queries, args.seconds, |q| {
        plan.query(store, q).expect("query")
    });
    let few = &queries[..args.brute_queries.min(queries.len())];
    let brute_force = measure(few, args.seconds, |q| brute(fps, q, k));
    let mut figures = vec![("simstore (RocksDB)", simstore)];
    if let Some(mem) = mem {
        let layout = store.layout();
        let in_memory = measure(queries, args.seconds, |q| {
            mem.query(q, k, &plan.flips(layout, q))
        });
        figures.push(("in-memory sorted tables", in_memory));
    }
    figures.push(("brute force Vec<u64>", brute_force));
    figures
}

/// The bytes a sketch adds to a document's record: its `Option` tag and its 64 bytes.
const SKETCH_RECORD_BYTES: usize = 1 + Sketch::BYTES;

/// Prints the import, index build, size and recall lines.
fn print_summary(n: usize, load: &Load, recall: &Recall, plan: &Plan) {
    println!(
        "import (bulk, durable):  {:.2} s  ({:.0} fingerprints/s)",
        load.import.as_secs_f64(),
        n as f64 / load.import.as_secs_f64()
    );
    println!(
        "in-memory index build:   {:.2} s",
        load.mem_build.as_secs_f64()
    );
    let per = load.size as f64 / n as f64;
    // A record's sketch: its Option tag and 64 random (incompressible) bytes.
    let sketches = match plan.rule {
        Some(_) => format!(
            "; {:.1} without the {SKETCH_RECORD_BYTES} of each record's sketch, which a store of texts keeps in every mode",
            per - SKETCH_RECORD_BYTES as f64
        ),
        None => String::new(),
    };
    println!(
        "store size on disk:      {:.1} MiB ({per:.1} bytes/fingerprint{sketches})",
        load.size as f64 / 1048576.0,
    );
    let Recall {
        expected,
        found,
        extra,
        mem_wrong,
        beyond,
        queries,
        time,
    } = recall;
    println!(
        "recall vs brute force:   {found}/{expected} = {:.6}, extra hits {extra}; in-memory index wrong on {mem_wrong} queries (checked in {:.1} s)",
        *found as f64 / (*expected).max(1) as f64,
        time.as_secs_f64()
    );
    if let Some(rule) = plan.rule {
        println!(
            "fetched beyond k = {}:    {beyond} candidates within {} in the spans of the {queries} checked queries ({:.3} per query; dropped here for want of a sketch, verified by a query with one)",
            rule.k,
            rule.reach,
            *beyond as f64 / (*queries).max(1) as f64
        );
    }
}

/// Where a benchmark puts its stores: `--dir` (created if need be, left as it is), else a
/// fresh directory under the system temp dir, removed when this is dropped, however the
/// benchmark ends.
enum WorkDir {
    Given(PathBuf),
    Temp(tempfile::TempDir),
}

impl std::ops::Deref for WorkDir {
    type Target = Path;
    fn deref(&self) -> &Path {
        match self {
            WorkDir::Given(p) => p,
            WorkDir::Temp(t) => t.path(),
        }
    }
}

/// The [`WorkDir`] of `args`.
fn work_dir(args: &Args) -> Result<WorkDir> {
    match &args.dir {
        Some(d) => {
            std::fs::create_dir_all(d).with_context(|| format!("cannot create {}", d.display()))?;
            Ok(WorkDir::Given(d.clone()))
        }
        None => tempfile::Builder::new()
            .prefix("simstore-bench-")
            .tempdir()
            .map(WorkDir::Temp)
            .context("cannot create a directory for the benchmark's store"),
    }
}
