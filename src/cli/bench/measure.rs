//! Timing of one method: single-thread latency (wall clock and the thread's CPU time, the
//! latter steadier on a shared machine) and throughput on all cores.

use std::time::{Duration, Instant};

use rayon::prelude::*;

/// Latency figures of one method.
pub(super) struct Figures {
    pub(super) p50: Duration,
    pub(super) p99: Duration,
    /// The measuring thread's CPU time per query over the timed pass (user + system).
    pub(super) cpu: Duration,
    pub(super) qps: f64,
}

pub(super) fn percentiles(mut lat: Vec<Duration>) -> (Duration, Duration) {
    lat.sort_unstable();
    let at = |q: f64| lat[((lat.len() as f64 * q) as usize).min(lat.len() - 1)];
    (at(0.50), at(0.99))
}

/// Times `f` on every query once, single-threaded, after a warm-up pass over the same queries.
/// Also returns the thread's CPU time per query over the timed pass.
pub(super) fn latency<T>(queries: &[u64], f: impl Fn(u64) -> T) -> (Duration, Duration, Duration) {
    for &q in queries {
        std::hint::black_box(f(q));
    }
    let cpu = thread_cpu();
    let lat: Vec<Duration> = queries
        .iter()
        .map(|&q| {
            let t = Instant::now();
            std::hint::black_box(f(q));
            t.elapsed()
        })
        .collect();
    let cpu = (thread_cpu() - cpu) / queries.len().max(1) as u32;
    let (p50, p99) = percentiles(lat);
    (p50, p99, cpu)
}

/// CPU time this thread has used.
fn thread_cpu() -> Duration {
    let t = rustix::time::clock_gettime(rustix::time::ClockId::ThreadCPUTime);
    Duration::new(t.tv_sec as u64, t.tv_nsec as u32)
}

/// Queries per second over all cores (rayon): `f` on every item of `items` (a query, or a
/// batch of them), passes repeated for `seconds`; a pass answers `queries` queries.
pub(super) fn throughput<Q: Sync, T: Send>(
    items: &[Q],
    queries: usize,
    seconds: f64,
    f: impl Fn(&Q) -> T + Sync,
) -> f64 {
    let start = Instant::now();
    let mut done = 0usize;
    while start.elapsed().as_secs_f64() < seconds {
        items.par_iter().for_each(|q| {
            std::hint::black_box(f(q));
        });
        done += queries;
    }
    done as f64 / start.elapsed().as_secs_f64()
}

pub(super) fn us(d: Duration) -> String {
    format!("{:.1} µs", d.as_secs_f64() * 1e6)
}

/// Latency (single thread, warm cache) and throughput (all cores) of `f` over `queries`.
pub(super) fn measure<T: Send>(
    queries: &[u64],
    seconds: f64,
    f: impl Fn(u64) -> T + Sync,
) -> Figures {
    let (p50, p99, cpu) = latency(queries, &f);
    let qps = throughput(queries, queries.len(), seconds, |&q| f(q));
    Figures { p50, p99, cpu, qps }
}

/// Prints the table of latencies and throughputs, with ratios to the first row (the store).
pub(super) fn print_table(figures: &[(&str, Figures)]) {
    let base = &figures[0].1;
    println!(
        "{:<26} {:>12} {:>12} {:>12} {:>14} {:>12} {:>12}",
        "method", "p50", "p99", "CPU/query", "queries/s", "p50 ratio", "qps ratio"
    );
    for (name, f) in figures {
        println!(
            "{:<26} {:>12} {:>12} {:>12} {:>14.0} {:>11.2}x {:>11.2}x",
            name,
            us(f.p50),
            us(f.p99),
            us(f.cpu),
            f.qps,
            f.p50.as_secs_f64() / base.p50.as_secs_f64(),
            f.qps / base.qps
        );
    }
    println!(
        "(ratios are relative to simstore: p50 ratio > 1 means slower than simstore, qps ratio > 1 faster)"
    );
}
