//! `simstore bench --expire`: the expiry of the older half of a store of --n documents —
//! how long it takes, query latency while it runs beside them (against the same queries
//! before it), and the disk bytes before and after (the expiry compacts what it emptied).

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use anyhow::Result;
use simstore::{DocMeta, Entry, ExpireOptions, Fingerprint, Store, TimeField};

use super::measure::{percentiles, us};
use super::{Args, Code, Rng, new_store, work_dir};

/// Documents per write while the store is filled.
const CHUNK: u64 = 100_000;

/// `simstore bench --expire`.
pub(super) fn run(args: &Args) -> Result<Code> {
    let dir = work_dir(args)?;
    let store = new_store(&dir.join("expire.db"), args)?;
    let mut rng = Rng(args.seed);
    let fps: Vec<u64> = (0..args.n).map(|_| rng.next()).collect();
    let half = args.n / 2;
    let t = Instant::now();
    let mut loader = store.bulk_loader()?;
    for (i, &fp) in fps[..half as usize].iter().enumerate() {
        loader.push(entry(i as u64, fp))?;
    }
    loader.finish()?;
    // The cutoff, then past the expiry's slack for a clock stepped back, so that the
    // expiry stops at the first document of the new half.
    std::thread::sleep(Duration::from_millis(1_100));
    let cutoff = ExpireOptions::older_than(0, TimeField::Stored).before;
    std::thread::sleep(Duration::from_secs(simstore::store::CLOCK_SLACK + 1));
    for start in (half..args.n).step_by(CHUNK as usize) {
        let end = (start + CHUNK).min(args.n);
        store.insert_batch((start..end).map(|i| entry(i, fps[i as usize])))?;
    }
    store.flush()?;
    println!(
        "simstore bench --expire: N = {} ({} bulk-loaded, then {} inserted a minute later), layout {}; filled in {:.1} s",
        args.n,
        half,
        args.n - half,
        store.layout(),
        t.elapsed().as_secs_f64()
    );
    let before = store.stats()?.disk_bytes;
    let queries: Vec<u64> = (0..args.queries)
        .map(|_| fps[(rng.next() % args.n) as usize] ^ 0b111)
        .collect();
    let k = store.layout().k_max();
    let quiet = timed_queries(&store, &queries, k, None);
    let stop = AtomicBool::new(false);
    let (report, took, during) = std::thread::scope(|s| {
        let worker = s.spawn(|| {
            let t = Instant::now();
            let opts = ExpireOptions::before(cutoff, TimeField::Stored);
            let r = store.expire(&opts, |_| {});
            stop.store(true, Ordering::Relaxed);
            (r, t.elapsed())
        });
        let during = timed_queries(&store, &queries, k, Some(&stop));
        let (r, took) = worker.join().expect("the expiry thread");
        (r, took, during)
    });
    let report = report?;
    store.flush()?;
    let after = store.stats()?.disk_bytes;
    let settled = timed_queries(&store, &queries, k, None);
    println!(
        "expired {} of {} documents ({} read) in {:.1} s, {:.0} documents/s (the compaction after it: {:.1} s)",
        report.expired,
        args.n,
        report.scanned,
        took.as_secs_f64(),
        report.expired as f64 / took.as_secs_f64().max(1e-9),
        report.compaction.as_secs_f64()
    );
    println!(
        "queries (k = {k}, 1 thread): before p50 {} p99 {}; during the expiry p50 {} p99 {} ({} queries); after p50 {} p99 {}",
        us(quiet.0),
        us(quiet.1),
        us(during.0),
        us(during.1),
        during.2,
        us(settled.0),
        us(settled.1)
    );
    println!(
        "disk: {} before, {} after the expiry",
        mib(before),
        mib(after)
    );
    Ok(0)
}

fn entry(i: u64, fp: u64) -> Entry {
    Entry {
        id: format!("d{i:09}"),
        fp: Fingerprint(fp),
        meta: DocMeta::default(),
    }
}

/// p50, p99 and count of the queries, in turn; with `until`, over and over until it is set
/// (at least once through).
fn timed_queries(
    store: &Store,
    queries: &[u64],
    k: u32,
    until: Option<&AtomicBool>,
) -> (Duration, Duration, usize) {
    let mut lat = Vec::new();
    loop {
        for &q in queries {
            let t = Instant::now();
            std::hint::black_box(store.query(Fingerprint(q), k).ok());
            lat.push(t.elapsed());
        }
        if until.is_none_or(|u| u.load(Ordering::Relaxed)) {
            break;
        }
    }
    let n = lat.len();
    let (p50, p99) = percentiles(lat);
    (p50, p99, n)
}

fn mib(bytes: u64) -> String {
    format!("{:.0} MiB", bytes as f64 / (1 << 20) as f64)
}
