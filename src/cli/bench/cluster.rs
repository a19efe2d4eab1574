//! `simstore bench --cluster URL`: the same planted data into a RocksDB store and into a
//! store on Redis Cluster, in one run: import rate, single-query p50/p99, single and batch
//! throughput, recall against brute force, and bytes per fingerprint (on disk; in the
//! masters' memory).

use std::time::{Duration, Instant};

use anyhow::{Context, Result};
use simstore::{DocMeta, Entry, Fingerprint, Store, StoreBuilder};

use super::{
    Args, Figures, Plan, Recall, check_recall, measure as single_figures, new_store, planted_data,
    throughput, us, work_dir,
};
use crate::cli::Code;

/// Queries per `Store::query_batch` call in the batch throughput.
const BATCH: usize = 256;

/// What one store cost and answered.
struct Row {
    name: &'static str,
    import: Duration,
    bytes: u64,
    single: Figures,
    batch_qps: f64,
    recall: Recall,
}

/// Runs the comparison; see the module docs.
pub(super) fn run(url: &str, args: &Args) -> Result<Code> {
    let n = args.n as usize;
    let (fps, queries) = planted_data(args.seed, n, args.queries);
    let dir = work_dir(args)?;
    let rocks = new_store(&dir.join("bench.db"), args)?;
    println!(
        "simstore bench --cluster: N = {n}, {} queries, k = {}, layout {}, {} threads",
        queries.len(),
        args.k,
        rocks.layout(),
        rayon::current_num_threads()
    );
    let t = Instant::now();
    rocks.bulk_load(entries(&fps, 0))?;
    let rocks_import = t.elapsed();
    let size = rocks.stats()?.disk_bytes;
    let rocks_row = measure(
        "RocksDB (bulk load)",
        &rocks,
        rocks_import,
        size,
        &fps,
        &queries,
        args,
    );
    drop(rocks);
    let (cluster, import, memory) = import_cluster(url, &fps, args)?;
    let cluster_row = measure(
        "Redis Cluster (bulk)",
        &cluster,
        import,
        memory,
        &fps,
        &queries,
        args,
    );
    print(n, &[rocks_row, cluster_row]);
    Ok(0)
}

/// Entries `d<base + index>` of `fps`.
fn entries(fps: &[u64], base: usize) -> impl Iterator<Item = Entry> + '_ {
    fps.iter().enumerate().map(move |(i, &f)| Entry {
        id: format!("d{}", base + i),
        fp: Fingerprint(f),
        meta: DocMeta::default(),
    })
}

/// Bulk-loads `fps` into a new store at `url` (one bucket per command; see
/// `Store::bulk_load`); returns the store, the import time and the memory it added on the
/// masters.
fn import_cluster(url: &str, fps: &[u64], args: &Args) -> Result<(Store, Duration, u64)> {
    anyhow::ensure!(
        StoreBuilder::new(url).read_only(true).open().is_err(),
        "{url} already holds a store; give the benchmark a fresh name (redis://HOST:PORT/NAME)"
    );
    let store = StoreBuilder::new(url)
        .k_max(args.k.max(3))
        .expected_docs(args.n)
        .open()
        .with_context(|| format!("cannot open or create {url}"))?;
    let before = store.stats()?.memory_bytes.unwrap_or(0);
    let t = Instant::now();
    store.bulk_load(entries(fps, 0))?;
    let import = t.elapsed();
    let after = store.stats()?.memory_bytes.unwrap_or(0);
    Ok((store, import, after.saturating_sub(before)))
}

/// Recall, single-query latency and throughput, and batch throughput of one store.
fn measure(
    name: &'static str,
    store: &Store,
    import: Duration,
    bytes: u64,
    fps: &[u64],
    queries: &[u64],
    args: &Args,
) -> Row {
    let k = args.k;
    let recall = check_recall(store, None, fps, queries, &Plan::new(store, args), args);
    let single = single_figures(queries, args.seconds, |q| {
        store.query(Fingerprint(q), k).expect("query")
    });
    let batches: Vec<&[u64]> = queries.chunks(BATCH).collect();
    let batch_qps = throughput(&batches, queries.len(), args.seconds, |b| {
        let fps: Vec<Fingerprint> = b.iter().map(|&q| Fingerprint(q)).collect();
        store
            .query_batch(fps.iter().copied(), k)
            .expect("batch query")
    });
    Row {
        name,
        import,
        bytes,
        single,
        batch_qps,
        recall,
    }
}

fn print(n: usize, rows: &[Row]) {
    println!(
        "{:<22} {:>10} {:>12} {:>10} {:>10} {:>12} {:>12} {:>12}",
        "store", "import s", "imports/s", "p50", "p99", "single q/s", "batch q/s", "B/fp"
    );
    for r in rows {
        println!(
            "{:<22} {:>10.1} {:>12.0} {:>10} {:>10} {:>12.0} {:>12.0} {:>12.1}",
            r.name,
            r.import.as_secs_f64(),
            n as f64 / r.import.as_secs_f64(),
            us(r.single.p50),
            us(r.single.p99),
            r.single.qps,
            r.batch_qps,
            r.bytes as f64 / n as f64
        );
    }
    for r in rows {
        println!(
            "{}: recall vs brute force {}/{}, extra hits {}",
            r.name, r.recall.found, r.recall.expected, r.recall.extra
        );
    }
    println!(
        "(B/fp: RocksDB on disk; Redis Cluster: used_memory added on the masters, replicas hold as much again; batch: {BATCH} queries per Store::query_batch)"
    );
}
