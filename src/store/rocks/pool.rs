//! Table iterators (and `exact`'s) kept between queries.
//!
//! A probe used to create a RocksDB iterator, seek it once or twice and drop it: creating
//! one takes a reference on the column family's current state and builds a merging
//! iterator over its memtables and files, which cost more than the seek itself. The pool
//! keeps, per table, the iterators of finished probes; the next probe of that table takes
//! one and refreshes it (`Iterator::Refresh`: when no flush or compaction came in between,
//! only its read sequence number moves on), so a query sees every write acknowledged
//! before it started, as a new iterator would. A query's view (`RocksSnapshot::live`)
//! holds the iterator it leased for a table until the query ends, so its other spans of
//! that table seek the same one without another lease or refresh. A crawler's check looks
//! its content hash up in `exact` the same way ([`Kind::Exact`]): creating an iterator for
//! that one seek cost as much as the seek.

use std::sync::Mutex;

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
/// A kept iterator holds the state of its table as of its last refresh: the memtables and
/// files of that moment, which a flush or compaction has replaced since. The probes of a
/// table take the most recently used iterator first, so after a burst of concurrent
/// probes the extra iterators would otherwise stay idle in the pool — and keep obsolete
/// files on disk and old memtables in memory — for as long as the process runs.
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

/// The iterators of finished probes, per [`Kind`].
pub(super) struct IterPool {
    tables: Mutex<Vec<Table>>,
    /// Refresh a kept iterator before reuse: set for the writer; a read-only instance
    /// never changes and a secondary one empties the pool when it catches up (neither
    /// can refresh).
    refresh: bool,
}

impl IterPool {
    /// An empty pool; `refresh`: see the field.
    pub(super) fn new(refresh: bool) -> Self {
        IterPool {
            tables: Mutex::default(),
            refresh,
        }
    }

    /// Drops every kept iterator (before a relayout drops the tables they read).
    pub(super) fn clear(&self) {
        self.lock().clear();
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Vec<Table>> {
        self.tables.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn take(&self, kind: Kind) -> Option<Kept> {
        let mut tables = self.lock();
        let table = tables.get_mut(kind.slot())?;
        table.probes += 1;
        table.kept.pop()
    }

    /// Keeps `it` (unless the table has enough) and lets go of the iterators its table's
    /// last [`IDLE_PROBES`] probes did not use; they are dropped after the lock is
    /// released (dropping one may delete the files it was the last to hold).
    fn give(&self, kind: Kind, mut it: Kept) {
        let mut idle = Vec::new();
        {
            let t = kind.slot();
            let mut tables = self.lock();
            if tables.len() <= t {
                tables.resize_with(t + 1, Table::default);
            }
            let table = &mut tables[t];
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
        }
        drop(idle);
    }
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
        assert_eq!(b.iters.lock()[Kind::Table(0).slot()].kept.len(), 1);
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
        assert_eq!(scan(b.probe_view().as_ref()), [1, 1]);
        let before = b.iters.lock()[Kind::Table(0).slot()].probes;
        let view = b.probe_view();
        assert_eq!(scan(view.as_ref()), [1, 1]);
        assert_eq!(
            b.iters.lock()[Kind::Table(0).slot()].probes,
            before + 1,
            "one lease for the view's three spans"
        );
        assert!(
            b.iters.lock()[Kind::Table(0).slot()].kept.is_empty(),
            "the view holds the iterator"
        );
        drop(view);
        assert_eq!(
            b.iters.lock()[Kind::Table(0).slot()].kept.len(),
            1,
            "back in the pool with the view"
        );
        // A write acknowledged after that view: the next one sees it.
        put_and_flush(&b, 2);
        b.put_table_entry(0, 3, 3);
        assert_eq!(scan(b.probe_view().as_ref()), [1, 2, 3, 1, 2, 3]);
    }
}
