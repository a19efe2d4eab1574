//! How the spans of a query are read ([`crate::RocksOptions::probe_threads`]): one after
//! another on the calling thread, all at once on a pool of threads, or — the default — in
//! turn while the probes are fast (a hand-off costs more than a warm probe), and at once
//! from the moment one waits for the disk (so a cold query waits about one read, not one
//! per table). A probe waited for the disk when it was slower than [`SLOW_PROBE`] and its
//! thread read from disk (a major page fault: the tables are read through mmap); slow
//! alone may be preemption on a machine short of CPU (docs/design.md §5).

use std::cell::Cell;
use std::sync::OnceLock;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use rayon::prelude::*;

use super::snapshot::RocksSnapshot;
use crate::error::{Error, Result};
use crate::store::backend::Span;

/// Threads of the automatic mode's pool (started at its first slow probe).
const AUTO_PROBE_THREADS: usize = 8;

/// A probe read in turn that took this long is asked whether it read from disk: between a
/// warm probe and a disk read (measured: docs/benchmarks.md). Faster probes are not asked
/// (a system call each).
const SLOW_PROBE: Duration = Duration::from_micros(20);

/// A table entry as a scan passes it on.
type Entry = Result<(u64, u64)>;

/// What `Snapshot::scan_spans` hands each entry to: `(span index, entry)`.
type Each<'e> = dyn FnMut(usize, Entry) -> Result<bool> + 'e;

/// How a query's spans are read.
pub(super) enum Probes {
    /// One after another on the calling thread.
    InTurn,
    /// All at once on a pool of threads.
    Threads(rayon::ThreadPool),
    /// In turn, or at once after a probe that waited for the disk.
    Auto(Auto),
}

/// The state of the automatic mode.
pub(super) struct Auto {
    /// Started at the first probe that waited for the disk; `None` inside when threads
    /// could not be started (the spans are then read in turn).
    pool: OnceLock<Option<rayon::ThreadPool>>,
    /// Set by a probe that waited for the disk, cleared by a query none of whose probes
    /// read from disk: while set, a query reads its spans at once.
    cold: AtomicBool,
    /// A probe at least this long is slow.
    slow: Duration,
    /// Whether the calling thread read from disk since it last asked ([`read_from_disk`];
    /// `None`: unknown, and then a slow probe counts as one that did).
    read_from_disk: fn() -> Option<bool>,
}

impl Probes {
    /// `Some(0)`: in turn; `Some(n)`: at once on `n` threads; `None`: automatic.
    pub(super) fn new(threads: Option<usize>) -> Result<Self> {
        Ok(match threads {
            None => Probes::Auto(Auto::new(SLOW_PROBE)),
            Some(0) => Probes::InTurn,
            Some(n) => Probes::Threads(pool(n.min(super::RocksOptions::MAX_PROBE_THREADS))?),
        })
    }

    /// Reads `spans` through `snap`, handing every entry to `each` in span order (a span
    /// read on a thread is read to its end; `each` may stop it earlier).
    pub(super) fn scan(
        &self,
        snap: &RocksSnapshot<'_>,
        spans: &[Span],
        each: &mut Each<'_>,
    ) -> Result<()> {
        match self {
            _ if spans.len() < 2 => in_turn(snap, spans, each),
            Probes::InTurn => in_turn(snap, spans, each),
            Probes::Threads(pool) => at_once(pool, snap, spans, 0, &|_| false, each).map(drop),
            Probes::Auto(auto) => auto.scan(snap, spans, each),
        }
    }
}

impl Auto {
    fn new(slow: Duration) -> Self {
        Auto {
            pool: OnceLock::new(),
            cold: AtomicBool::new(false),
            slow,
            read_from_disk,
        }
    }

    /// Whether a probe read in turn that started at `start` (and has just ended) waited
    /// for the disk: it was slow, and read from disk (or that is unknown).
    fn waited(&self, start: Instant) -> bool {
        start.elapsed() >= self.slow && (self.read_from_disk)().unwrap_or(true)
    }

    /// Whether a probe read at once (while cold) waited for the disk: it read from disk
    /// (where that is unknown: it was slow). Every such probe asks, so that a cold store
    /// stays cold however fast its disk.
    fn read_disk(&self, start: Instant) -> bool {
        (self.read_from_disk)().unwrap_or_else(|| start.elapsed() >= self.slow)
    }

    fn pool(&self) -> Option<&rayon::ThreadPool> {
        self.pool
            .get_or_init(|| pool(AUTO_PROBE_THREADS).ok())
            .as_ref()
    }

    fn scan(&self, snap: &RocksSnapshot<'_>, spans: &[Span], each: &mut Each<'_>) -> Result<()> {
        if self.cold.load(Ordering::Relaxed)
            && let Some(pool) = self.pool()
        {
            let waited = at_once(pool, snap, spans, 0, &|t| self.read_disk(t), each)?;
            self.cold.store(waited, Ordering::Relaxed);
            return Ok(());
        }
        for (i, s) in spans.iter().enumerate() {
            let start = Instant::now();
            snap.scan_span(s, &mut |e| each(i, e))?;
            if !self.waited(start) {
                continue;
            }
            self.cold.store(true, Ordering::Relaxed);
            let rest = &spans[i + 1..];
            if let Some(pool) = self.pool().filter(|_| !rest.is_empty()) {
                at_once(pool, snap, rest, i + 1, &|t| self.read_disk(t), each)?;
                return Ok(());
            }
        }
        Ok(())
    }
}

/// Reads `spans` one after another on the calling thread.
fn in_turn(snap: &RocksSnapshot<'_>, spans: &[Span], each: &mut Each<'_>) -> Result<()> {
    for (i, s) in spans.iter().enumerate() {
        snap.scan_span(s, &mut |e| each(i, e))?;
    }
    Ok(())
}

/// A pool of `n` probe threads.
fn pool(n: usize) -> Result<rayon::ThreadPool> {
    rayon::ThreadPoolBuilder::new()
        .num_threads(n)
        .thread_name(|i| format!("simstore-probe-{i}"))
        .build()
        .map_err(|e| Error::storage("store", format!("cannot start probe threads: {e}")))
}

/// Reads `spans` at once on `pool`, each to its end, then hands their entries to `each` in
/// order (span `i` as `first + i`); whether any of the probes waited for the disk, as
/// `waited` (given the probe's start, called on its thread when it ends) judges it.
fn at_once(
    pool: &rayon::ThreadPool,
    snap: &RocksSnapshot<'_>,
    spans: &[Span],
    first: usize,
    waited: &(dyn Fn(Instant) -> bool + Sync),
    each: &mut Each<'_>,
) -> Result<bool> {
    if spans.is_empty() {
        return Ok(false);
    }
    let read = |s: &Span| -> Read {
        let start = Instant::now();
        let mut entries = Vec::new();
        snap.scan_span(s, &mut |e| {
            entries.push(e);
            Ok(true)
        })?;
        Ok((entries, waited(start)))
    };
    let found: Vec<Read> =
        if rayon::current_thread_index().is_some() && pool.current_thread_index().is_none() {
            // A worker of another rayon pool (a caller's parallel loop of queries) waiting
            // for `pool` runs other jobs of its own pool meanwhile — more queries, each
            // waiting in turn, until its stack overflows. Scoped threads are waited for.
            on_scoped_threads(pool.current_num_threads(), spans, read)
        } else {
            pool.install(|| spans.par_iter().map(read).collect())
        };
    let mut any_waited = false;
    for (i, read) in found.into_iter().enumerate() {
        let (entries, waited) = read?;
        any_waited |= waited;
        for e in entries {
            if !each(first + i, e)? {
                break;
            }
        }
    }
    Ok(any_waited)
}

/// A span read to its end, and whether its probe waited for the disk.
type Read = Result<(Vec<Entry>, bool)>;

thread_local! {
    /// This thread's major page faults when it last asked [`read_from_disk`].
    static FAULTS_SEEN: Cell<u64> = const { Cell::new(0) };
}

/// Whether this thread read from disk since it last asked: its major page faults grew
/// (Linux, `getrusage(RUSAGE_THREAD)`); `None` where that is not known.
fn read_from_disk() -> Option<bool> {
    let now = thread_major_faults()?;
    Some(FAULTS_SEEN.with(|seen| seen.replace(now)) < now)
}

#[cfg(target_os = "linux")]
#[expect(
    unsafe_code,
    reason = "getrusage(RUSAGE_THREAD): the one source of a thread's major page faults"
)]
fn thread_major_faults() -> Option<u64> {
    let mut usage = std::mem::MaybeUninit::<libc::rusage>::zeroed();
    // SAFETY: getrusage fills the rusage it is given a pointer to, or fails.
    let rc = unsafe { libc::getrusage(libc::RUSAGE_THREAD, usage.as_mut_ptr()) };
    // SAFETY: on success the struct is filled (and it was zeroed before).
    (rc == 0).then(|| unsafe { usage.assume_init() }.ru_majflt as u64)
}

#[cfg(not(target_os = "linux"))]
fn thread_major_faults() -> Option<u64> {
    None
}

/// `read` of every span, on at most `threads` scoped threads (the calling one among them),
/// each reading a run of the spans; in span order.
fn on_scoped_threads(
    threads: usize,
    spans: &[Span],
    read: impl Fn(&Span) -> Read + Copy + Send,
) -> Vec<Read> {
    let run = spans.len().div_ceil(threads.max(1)).max(1);
    std::thread::scope(|scope| {
        let mut runs = spans.chunks(run);
        let first = runs.next().unwrap_or_default();
        let others: Vec<_> = runs
            .map(|r| scope.spawn(move || r.iter().map(read).collect::<Vec<_>>()))
            .collect();
        let mut found: Vec<Read> = first.iter().map(read).collect();
        for h in others {
            match h.join() {
                Ok(part) => found.extend(part),
                Err(_) => found.push(Err(Error::storage("store", "a probe thread panicked"))),
            }
        }
        found
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::backend::Backend;
    use crate::store::rocks::RocksBackend;

    /// A store of one table holding the keys `0, 1 << 60, 2 << 60, ...` (16 of them), and
    /// spans that cover 4 of them each.
    fn fixture() -> (tempfile::TempDir, RocksBackend, Vec<Span>) {
        let dir = tempfile::tempdir().unwrap();
        let mut b =
            super::super::open::create(&dir.path().join("s"), 1, 8 << 20, |_| Ok(())).unwrap();
        b.attach_tables(&[16]).unwrap();
        for i in 0..16u64 {
            b.put_table_entry(0, i << 60, i);
        }
        let spans = (0..4u64)
            .map(|q| Span::new(0, (q * 4) << 60, (q < 3).then(|| ((q + 1) * 4) << 60)))
            .collect();
        (dir, b, spans)
    }

    /// Every entry as `(span, seq)`, in the order `scan` hands them on.
    fn read(b: &RocksBackend, auto: &Auto, spans: &[Span]) -> Vec<(usize, u64)> {
        let snap = RocksSnapshot::live(b);
        let mut got = Vec::new();
        auto.scan(&snap, spans, &mut |i, e| {
            got.push((i, e?.1));
            Ok(true)
        })
        .unwrap();
        got
    }

    /// The automatic mode judging every probe by `slow`, its threads always having read
    /// from disk.
    fn reading_disk(slow: Duration) -> Auto {
        Auto {
            read_from_disk: || Some(true),
            ..Auto::new(slow)
        }
    }

    fn expected() -> Vec<(usize, u64)> {
        (0..16u64).map(|s| ((s / 4) as usize, s)).collect()
    }

    /// Fast probes: read in turn, no thread started, the next query in turn too.
    #[test]
    fn fast_probes_stay_on_the_calling_thread() {
        let (_dir, b, spans) = fixture();
        let auto = Auto::new(Duration::MAX);
        assert_eq!(read(&b, &auto, &spans), expected());
        assert!(auto.pool.get().is_none(), "threads started for fast probes");
        assert!(!auto.cold.load(Ordering::Relaxed));
    }

    /// Slow probes whose thread read nothing from disk (it was preempted, on a machine short
    /// of CPU) stay in turn: threads would not help them.
    #[test]
    fn slow_probes_that_read_nothing_from_disk_stay_in_turn() {
        let (_dir, b, spans) = fixture();
        let auto = Auto {
            read_from_disk: || Some(false),
            ..Auto::new(Duration::ZERO)
        };
        assert_eq!(read(&b, &auto, &spans), expected());
        assert!(
            auto.pool.get().is_none(),
            "threads started for probes that read nothing"
        );
        assert!(!auto.cold.load(Ordering::Relaxed));
        // Where reads from disk cannot be counted, a slow probe counts as one.
        let unknown = Auto {
            read_from_disk: || None,
            ..Auto::new(Duration::ZERO)
        };
        assert_eq!(read(&b, &unknown, &spans), expected());
        assert!(unknown.cold.load(Ordering::Relaxed));
    }

    /// A slow first probe: the other spans are read at once on threads, handed on in span
    /// order, and the next query reads all of its spans at once; after a query none of
    /// whose probes read from disk, in turn again.
    #[test]
    fn a_slow_probe_reads_the_rest_at_once_until_probes_are_fast_again() {
        let (_dir, b, spans) = fixture();
        let mut auto = reading_disk(Duration::ZERO);
        assert_eq!(read(&b, &auto, &spans), expected());
        assert!(auto.pool.get().is_some_and(Option::is_some));
        assert!(auto.cold.load(Ordering::Relaxed));
        // Still cold: all spans at once, the same answer.
        assert_eq!(read(&b, &auto, &spans), expected());
        assert!(auto.cold.load(Ordering::Relaxed));
        // Probes no longer reading from disk: the flag clears after one query read at once.
        auto.read_from_disk = || Some(false);
        assert_eq!(read(&b, &auto, &spans), expected());
        assert!(!auto.cold.load(Ordering::Relaxed));
    }

    /// A span whose reader stops early stops only that span, on either path.
    #[test]
    fn a_stopped_span_does_not_stop_the_others() {
        let (_dir, b, spans) = fixture();
        for slow in [Duration::MAX, Duration::ZERO] {
            let auto = reading_disk(slow);
            auto.cold.store(slow == Duration::ZERO, Ordering::Relaxed);
            let snap = RocksSnapshot::live(&b);
            let mut got = Vec::new();
            auto.scan(&snap, &spans, &mut |i, e| {
                got.push((i, e?.1));
                Ok(got.last().is_some_and(|&(_, seq)| seq % 4 != 1))
            })
            .unwrap();
            let want: Vec<(usize, u64)> =
                expected().into_iter().filter(|(_, s)| s % 4 < 2).collect();
            assert_eq!(got, want, "slow = {slow:?}");
        }
    }

    /// Queries run by a parallel loop on another rayon pool (a caller's `par_iter`), every
    /// one reading at once: a worker waiting for the probe pool must not run the loop's
    /// other queries meanwhile, nested until its stack overflows; each answers as in turn.
    #[test]
    fn queries_from_another_rayon_pool_read_at_once_without_nesting() {
        use rayon::prelude::*;
        let (_dir, b, spans) = fixture();
        let auto = reading_disk(Duration::ZERO);
        let outer = rayon::ThreadPoolBuilder::new()
            .num_threads(2)
            .build()
            .unwrap();
        let answers: Vec<Vec<(usize, u64)>> = outer.install(|| {
            (0..5000)
                .into_par_iter()
                .map(|_| {
                    // Each job works a while before its query, as a caller's loop does (it
                    // fingerprints, checks): a waiting worker then has jobs to take.
                    let work = Instant::now();
                    while work.elapsed() < Duration::from_micros(100) {
                        std::hint::spin_loop();
                    }
                    read(&b, &auto, &spans)
                })
                .collect()
        });
        assert!(answers.iter().all(|a| *a == expected()));
        assert!(auto.cold.load(Ordering::Relaxed));
    }
}
