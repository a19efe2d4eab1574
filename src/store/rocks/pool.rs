//! Table iterators (and `exact`'s) kept between queries.
//!
//! Creating a RocksDB iterator (a merging iterator over the memtables and files) costs more
//! than the one or two seeks a probe makes, so the pool keeps, per table (and for `exact`,
//! [`Kind::Exact`]), the iterators of finished probes. The next probe takes one and
//! refreshes it (`Iterator::Refresh`), so a query sees every write acknowledged before it
//! started, as a new iterator would. A query's view (`RocksSnapshot::live`) holds its leased
//! iterator per table until the query ends. The pool is sharded by thread ([`SHARDS`]).

use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};

use rocksdb::DBRawIterator;

use super::RocksBackend;
use super::storage;
use crate::error::Result;
use crate::store::backend::Space;

/// What a kept iterator reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Kind {
    /// Table `t`, in total order, for probes.
    Table(usize),
    /// `exact`, by its 16-byte prefix (the content hash), for [`Snapshot::first_exact`].
    ///
    /// [`Snapshot::first_exact`]: crate::store::backend::Snapshot::first_exact
    Exact,
}

impl Kind {
    /// The pool's slot of the kind.
    fn slot(self) -> usize {
        match self {
            Kind::Exact => 0,
            Kind::Table(t) => t + 1,
        }
    }
}

/// Iterators kept per table; more concurrent probes of a table than this create and drop
/// their own.
const KEPT_PER_TABLE: usize = 8;

/// A kept iterator not used by the last this many probes of its table is dropped.
///
/// A kept iterator holds its table's memtables and files as of its last refresh. Probes
/// take the most recently used iterator first, so after a burst of concurrent probes the
/// extra ones would stay idle, keeping obsolete files and memtables alive, for good.
const IDLE_PROBES: u64 = 256;

/// An iterator of the backend's database, kept past the probe that made it.
///
/// Safety: the `'static` stands for "as long as the database": [`IterPool`] is a field of
/// [`RocksBackend`] declared before its `db`, so the pool (and every iterator in it) is
/// dropped before the database; [`IterPool::clear`] runs before tables are dropped; a
/// leased iterator borrows the backend ([`Lease`]), so none outlives it.
struct Kept(DBRawIterator<'static>, u64);

// SAFETY: a RocksDB iterator may move between threads; it is used by one thread at a time
// (it is either in the pool, under its mutex, or leased to one probe).
#[expect(
    unsafe_code,
    reason = "rust-rocksdb's iterator is not Send; RocksDB's is, used by one thread at a time"
)]
unsafe impl Send for Kept {}

/// The iterators of finished probes of one table (or of `exact`), the most recently used
/// last.
#[derive(Default)]
struct Table {
    kept: Vec<Kept>,
    /// Probes of the table so far (a kept iterator's second field is this count when it
    /// was last given back).
    probes: u64,
}

/// Shards of the pool. A thread takes iterators from and gives them back to its own shard
/// (threads are dealt shards in turn), so two threads querying at once neither contend for
/// one mutex nor hand each other iterators whose state sits in the other core's cache
/// (measured: docs/benchmarks.md).
const SHARDS: usize = 8;

/// Every this many probes of a table in a shard, its thread looks at the other shards and
/// drops the iterators of those that had no probe since it last looked (their thread
/// stopped querying, or ended): a kept iterator holds obsolete memtables and files.
const SWEEP_EVERY: u64 = 1024;

/// The iterators of finished probes, per [`Kind`], in [`SHARDS`] shards.
pub(super) struct IterPool {
    shards: Vec<Shard>,
    /// Refresh a kept iterator before reuse: set for the writer; a read-only instance
    /// never changes and a secondary one empties the pool when it catches up (neither
    /// can refresh).
    refresh: bool,
}

/// One shard of the pool, on cache lines of its own.
#[derive(Default)]
#[repr(align(128))]
struct Shard(Mutex<ShardTables>);

/// A shard's iterators per [`Kind`].
#[derive(Default)]
struct ShardTables {
    tables: Vec<Table>,
    /// [`ShardTables::probes`] when another shard's sweep last looked ([`IterPool::sweep`]).
    seen: u64,
}

impl ShardTables {
    /// Probes of the shard's tables so far.
    fn probes(&self) -> u64 {
        self.tables.iter().map(|t| t.probes).sum()
    }

    /// The iterators of `kind` in the shard.
    fn table(&mut self, kind: Kind) -> &mut Table {
        let t = kind.slot();
        if self.tables.len() <= t {
            self.tables.resize_with(t + 1, Table::default);
        }
        &mut self.tables[t]
    }
}

/// Deals the shards to threads in turn.
static NEXT_SHARD: AtomicUsize = AtomicUsize::new(0);

thread_local! {
    /// This thread's shard (modulo the pool's number of shards).
    static SHARD: usize = NEXT_SHARD.fetch_add(1, Ordering::Relaxed);
}

impl IterPool {
    /// An empty pool; `refresh`: see the field.
    pub(super) fn new(refresh: bool) -> Self {
        IterPool {
            shards: (0..SHARDS).map(|_| Shard::default()).collect(),
            refresh,
        }
    }

    /// Drops every kept iterator (before a relayout drops the tables they read).
    pub(super) fn clear(&self) {
        for shard in &self.shards {
            lock(shard).tables.clear();
        }
    }

    /// This thread's shard, locked.
    #[cfg(test)]
    fn lock_own(&self) -> std::sync::MutexGuard<'_, ShardTables> {
        lock(&self.shards[self.own()])
    }

    /// This thread's shard.
    fn own(&self) -> usize {
        SHARD.with(|s| *s) % self.shards.len()
    }

    fn take(&self, kind: Kind) -> Option<Kept> {
        let mut shard = lock(&self.shards[self.own()]);
        let table = shard.table(kind);
        table.probes += 1;
        table.kept.pop()
    }

    /// Keeps `it` in this thread's shard (unless its table has enough there) and lets go
    /// of the iterators its table's last [`IDLE_PROBES`] probes in the shard did not use;
    /// they are dropped after the lock is released (dropping one may delete the files it
    /// was the last to hold). Every [`SWEEP_EVERY`] probes, sweeps the other shards.
    fn give(&self, kind: Kind, mut it: Kept) {
        let mut idle = Vec::new();
        let own = self.own();
        let sweep = {
            let mut shard = lock(&self.shards[own]);
            let table = shard.table(kind);
            let probes = table.probes;
            while table
                .kept
                .first()
                .is_some_and(|k| probes.saturating_sub(k.1) > IDLE_PROBES)
            {
                idle.push(table.kept.remove(0));
            }
            if table.kept.len() < KEPT_PER_TABLE {
                it.1 = probes;
                table.kept.push(it);
            }
            probes.is_multiple_of(SWEEP_EVERY)
        };
        if sweep {
            self.sweep(own, &mut idle);
        }
        drop(idle);
    }

    /// Moves into `idle` the iterators of every shard but `own` that had no probe since
    /// the previous sweep looked at it; a shard whose lock is held is in use and skipped.
    fn sweep(&self, own: usize, idle: &mut Vec<Kept>) {
        for (i, shard) in self.shards.iter().enumerate() {
            if i == own {
                continue;
            }
            let Ok(mut shard) = shard.0.try_lock() else {
                continue;
            };
            let probes = shard.probes();
            if probes == shard.seen {
                for table in &mut shard.tables {
                    idle.append(&mut table.kept);
                }
            }
            shard.seen = probes;
        }
    }
}

/// Locks a shard (a panic while it was held left its iterators consistent: each is whole
/// or absent).
fn lock(shard: &Shard) -> std::sync::MutexGuard<'_, ShardTables> {
    shard.0.lock().unwrap_or_else(|e| e.into_inner())
}

/// An iterator leased from the pool for one probe; goes back when dropped.
pub(super) struct Lease<'a> {
    backend: &'a RocksBackend,
    kind: Kind,
    it: Option<Kept>,
}

impl Lease<'_> {
    /// The iterator.
    pub(super) fn iter(&mut self) -> &mut DBRawIterator<'static> {
        &mut self.it.as_mut().expect("present until dropped").0
    }
}

impl Drop for Lease<'_> {
    fn drop(&mut self) {
        if let Some(it) = self.it.take()
            && it.0.status().is_ok()
        {
            self.backend.iters.give(self.kind, it);
        }
    }
}

impl RocksBackend {
    /// An iterator of `kind` that sees every write acknowledged before this call: a kept
    /// one, refreshed, or a new one.
    pub(super) fn kept_iter(&self, kind: Kind) -> Result<Lease<'_>> {
        let it = match self.iters.take(kind) {
            Some(mut kept) => {
                if self.iters.refresh {
                    kept.0.refresh().map_err(storage)?;
                }
                kept
            }
            None => {
                let (cf, ro) = match kind {
                    Kind::Table(t) => (self.space_cf(Space::Table(t))?, probe_read_options()),
                    Kind::Exact => (self.space_cf(Space::Exact)?, exact_read_options()),
                };
                Kept(extend(self.db.raw_iterator_cf_opt(cf, ro)), 0)
            }
        };
        Ok(Lease {
            backend: self,
            kind,
            it: Some(it),
        })
    }
}

/// The iterator as `'static`, to be kept in the pool.
#[expect(
    unsafe_code,
    reason = "an iterator kept beside its database in one struct (see `Kept` for why it is sound)"
)]
fn extend(it: DBRawIterator<'_>) -> DBRawIterator<'static> {
    // SAFETY: see `Kept`: the iterator never outlives the database.
    unsafe { std::mem::transmute::<DBRawIterator<'_>, DBRawIterator<'static>>(it) }
}

/// Read options of probe iterators: no snapshot (a refresh reads the latest state), no
/// upper bound (the probe stops at the end of its prefix itself), no readahead (a probe
/// reads one or two blocks).
fn probe_read_options() -> rocksdb::ReadOptions {
    let mut ro = rocksdb::ReadOptions::default();
    ro.set_readahead_size(0);
    ro.set_verify_checksums(false);
    ro
}

/// Read options of `exact` iterators: by prefix (the bloom of the content hash skips the
/// memtables and files without it; the iterator ends after the prefix's keys), no
/// snapshot, no readahead.
fn exact_read_options() -> rocksdb::ReadOptions {
    let mut ro = rocksdb::ReadOptions::default();
    ro.set_total_order_seek(false);
    ro.set_prefix_same_as_start(true);
    ro.set_readahead_size(0);
    ro
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::backend::Consistency;

    /// Versions of table 0's column family still alive (the current one and any that an
    /// iterator holds).
    fn live_versions(b: &RocksBackend) -> u64 {
        let cf = b.space_cf(Space::Table(0)).unwrap();
        b.db.property_int_value_cf(cf, "rocksdb.num-live-versions")
            .unwrap()
            .unwrap()
    }

    fn put_and_flush(b: &RocksBackend, i: u64) {
        b.put_table_entry(0, i, i);
        b.db.flush_cf(b.space_cf(Space::Table(0)).unwrap()).unwrap();
    }

    /// A store of one table of 16-bit buckets.
    fn backend(dir: &tempfile::TempDir) -> RocksBackend {
        use crate::store::backend::Backend;
        let mut b =
            super::super::open::create(&dir.path().join("s"), 1, 8 << 20, |_| Ok(())).unwrap();
        b.attach_tables(&[16]).unwrap();
        b
    }

    fn probe(b: &RocksBackend) {
        let mut lease = b.kept_iter(Kind::Table(0)).unwrap();
        lease.iter().seek_to_first();
        assert!(lease.iter().valid());
    }

    #[test]
    fn iterators_left_idle_after_a_burst_let_go_of_replaced_files() {
        let dir = tempfile::tempdir().unwrap();
        let b = backend(&dir);
        put_and_flush(&b, 1);
        // A burst of 4 concurrent probes leaves 4 iterators kept.
        let burst: Vec<_> = (0..4)
            .map(|_| b.kept_iter(Kind::Table(0)).unwrap())
            .collect();
        drop(burst);
        // A flush replaces the table's state; one probe at a time from here on.
        put_and_flush(&b, 2);
        assert!(
            live_versions(&b) > 1,
            "the kept iterators hold the old state"
        );
        for _ in 0..IDLE_PROBES + 2 {
            probe(&b);
        }
        assert_eq!(
            live_versions(&b),
            1,
            "idle iterators still hold replaced files"
        );
        // The one iterator in use is kept and sees the latest state.
        put_and_flush(&b, 3);
        probe(&b);
        assert_eq!(live_versions(&b), 1);
        assert_eq!(
            b.iters.lock_own().tables[Kind::Table(0).slot()].kept.len(),
            1
        );
    }

    /// A thread that stops probing leaves its iterators in its shard; another thread's
    /// sweeps let them go once the shard had no probe between two of them.
    #[test]
    fn a_thread_that_stopped_probing_lets_go_of_its_iterators() {
        let dir = tempfile::tempdir().unwrap();
        let b = backend(&dir);
        put_and_flush(&b, 1);
        // A thread of another shard than this one's (threads are dealt shards in turn).
        let own = b.iters.own();
        let probed_in_another_shard = || {
            let other = b.iters.own() != own;
            if other {
                probe(&b);
            }
            other
        };
        while !std::thread::scope(|s| s.spawn(probed_in_another_shard).join().unwrap()) {}
        put_and_flush(&b, 2);
        probe(&b);
        assert!(
            live_versions(&b) > 1,
            "the other thread's kept iterator holds the old state"
        );
        for _ in 0..2 * SWEEP_EVERY {
            probe(&b);
        }
        assert_eq!(
            live_versions(&b),
            1,
            "an idle shard's iterators still hold replaced files"
        );
    }

    /// A live view's probes of one table share one iterator, leased (and refreshed) once;
    /// it goes back to the pool with the view, and the next view sees later writes.
    #[test]
    fn a_views_probes_of_a_table_share_one_leased_iterator() {
        use crate::store::backend::{Backend, Snapshot};
        let dir = tempfile::tempdir().unwrap();
        let b = backend(&dir);
        put_and_flush(&b, 1);
        let scan = |view: &dyn Snapshot| {
            let mut seen = Vec::new();
            for (lo, hi) in [(0, Some(2)), (2, None), (0, None)] {
                view.scan_table(0, lo, hi, &mut |e| {
                    seen.push(e?.1);
                    Ok(true)
                })
                .unwrap();
            }
            seen
        };
        // A first view leaves an iterator in the pool.
        assert_eq!(scan(b.snapshot(Consistency::Latest).as_ref()), [1, 1]);
        let before = b.iters.lock_own().tables[Kind::Table(0).slot()].probes;
        let view = b.snapshot(Consistency::Latest);
        assert_eq!(scan(view.as_ref()), [1, 1]);
        assert_eq!(
            b.iters.lock_own().tables[Kind::Table(0).slot()].probes,
            before + 1,
            "one lease for the view's three spans"
        );
        assert!(
            b.iters.lock_own().tables[Kind::Table(0).slot()]
                .kept
                .is_empty(),
            "the view holds the iterator"
        );
        drop(view);
        assert_eq!(
            b.iters.lock_own().tables[Kind::Table(0).slot()].kept.len(),
            1,
            "back in the pool with the view"
        );
        // A write acknowledged after that view: the next one sees it.
        put_and_flush(&b, 2);
        b.put_table_entry(0, 3, 3);
        assert_eq!(
            scan(b.snapshot(Consistency::Latest).as_ref()),
            [1, 2, 3, 1, 2, 3]
        );
    }
}
