//! `simstore bench --cold N`: query latency with a cold page cache. The store is closed, its
//! files are dropped from the page cache (`posix_fadvise(DONTNEED)` on every file, which
//! needs no privilege and leaves the rest of the machine's cache alone), and it is opened
//! again; then N queries are timed one by one, each reading its blocks from disk: with the
//! store's default (automatic), with the probes one after another, and with them always
//! on threads (`RocksOptions::probe_threads`).

use std::path::Path;
use std::time::{Duration, Instant};

use anyhow::{Context, Result};

use super::Plan;
use super::measure::{percentiles, us};

/// The probe threads of the last cold pass.
pub(super) const COLD_PROBE_THREADS: usize = 8;

/// Latency of one cold pass.
pub(super) struct Cold {
    /// `RocksOptions::probe_threads` of the pass (`None`: the default, automatic).
    pub(super) probe_threads: Option<usize>,
    pub(super) p50: Duration,
    pub(super) p99: Duration,
    pub(super) mean: Duration,
    /// Major page faults during the pass (blocks read from disk), where the system
    /// counts them.
    pub(super) major_faults: Option<u64>,
}

/// The cold passes over `queries` on the store at `db` (closed by the caller): with the
/// store's default, then the probes in turn, then on [`COLD_PROBE_THREADS`] threads; none
/// without queries.
pub(super) fn measure_cold(db: &Path, queries: &[u64], plan: &Plan) -> Result<Vec<Cold>> {
    if queries.is_empty() {
        return Ok(Vec::new());
    }
    [None, Some(0), Some(COLD_PROBE_THREADS)]
        .into_iter()
        .map(|threads| cold_pass(db, queries, plan, threads))
        .collect()
}

fn cold_pass(
    db: &Path,
    queries: &[u64],
    plan: &Plan,
    probe_threads: Option<usize>,
) -> Result<Cold> {
    evict(db)?;
    let store = super::super::open_for_reading_with(db, probe_threads)?;
    let faults = major_faults();
    let lat: Vec<Duration> = queries
        .iter()
        .map(|&q| {
            let t = Instant::now();
            std::hint::black_box(plan.query(&store, q).expect("query"));
            t.elapsed()
        })
        .collect();
    let major_faults = faults.zip(major_faults()).map(|(a, b)| b - a);
    let mean = lat.iter().sum::<Duration>() / lat.len().max(1) as u32;
    let (p50, p99) = percentiles(lat);
    Ok(Cold {
        probe_threads,
        p50,
        p99,
        mean,
        major_faults,
    })
}

/// Drops every file under `dir` from the page cache.
fn evict(dir: &Path) -> Result<()> {
    for entry in std::fs::read_dir(dir).with_context(|| format!("cannot read {}", dir.display()))? {
        let path = entry?.path();
        if !path.is_file() {
            continue;
        }
        let file = std::fs::File::open(&path)
            .with_context(|| format!("cannot open {}", path.display()))?;
        rustix::fs::fadvise(&file, 0, None, rustix::fs::Advice::DontNeed)
            .with_context(|| format!("cannot drop {} from the page cache", path.display()))?;
    }
    Ok(())
}

/// The major page faults of this process so far (reads from disk of mapped pages), from
/// `/proc/self/stat`; `None` where there is no such file.
fn major_faults() -> Option<u64> {
    let stat = std::fs::read_to_string("/proc/self/stat").ok()?;
    // Fields after the command name (which may hold spaces) in parentheses: the 10th of
    // them (field 12 of the line) is majflt.
    let rest = &stat[stat.rfind(')')? + 1..];
    rest.split_whitespace().nth(9)?.parse().ok()
}

/// Prints the cold passes (nothing without any).
pub(super) fn print_cold(passes: &[Cold], queries: usize) {
    if passes.is_empty() {
        return;
    }
    println!(
        "cold page cache ({queries} queries, one at a time, after dropping the store's files from the page cache and reopening it):"
    );
    for c in passes {
        let how = match c.probe_threads {
            None => "automatic (default)".to_string(),
            Some(0) => "probes in turn".to_string(),
            Some(n) => format!("probes on {n} threads"),
        };
        println!(
            "  {how:<26} p50 {:>10}  p99 {:>10}  mean {:>10}{}",
            us(c.p50),
            us(c.p99),
            us(c.mean),
            c.major_faults
                .map(|f| format!("  ({f} major page faults)"))
                .unwrap_or_default()
        );
    }
}
