//! Table iterators kept between queries.
//!
//! A probe used to create a RocksDB iterator, seek it once or twice and drop it: creating
//! one takes a reference on the column family's current state and builds a merging
//! iterator over its memtables and files, which cost more than the seek itself. The pool
//! keeps, per table, the iterators of finished probes; the next probe of that table takes
//! one and refreshes it (`Iterator::Refresh`: when no flush or compaction came in between,
//! only its read sequence number moves on), so a query sees every write acknowledged
//! before it started, as a new iterator would.

use std::sync::Mutex;

use rocksdb::DBRawIterator;

use super::RocksBackend;
use super::storage;
use crate::error::Result;

/// Iterators kept per table; more concurrent probes of a table than this create and drop
/// their own.
const KEPT_PER_TABLE: usize = 8;

/// An iterator of the backend's database, kept past the probe that made it.
///
/// Safety: the `'static` stands for "as long as the database": [`IterPool`] is a field of
/// [`RocksBackend`] declared before its `db`, so the pool (and every iterator in it) is
/// dropped before the database; [`IterPool::clear`] runs before tables are dropped; a
/// leased iterator borrows the backend ([`Lease`]), so none outlives it.
struct Kept(DBRawIterator<'static>);

// SAFETY: a RocksDB iterator may move between threads; it is used by one thread at a time
// (it is either in the pool, under its mutex, or leased to one probe).
#[expect(
    unsafe_code,
    reason = "rust-rocksdb's iterator is not Send; RocksDB's is, used by one thread at a time"
)]
unsafe impl Send for Kept {}

/// The iterators of finished probes, per table.
pub(super) struct IterPool {
    tables: Mutex<Vec<Vec<Kept>>>,
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

    fn lock(&self) -> std::sync::MutexGuard<'_, Vec<Vec<Kept>>> {
        self.tables.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn take(&self, t: usize) -> Option<Kept> {
        self.lock().get_mut(t).and_then(Vec::pop)
    }

    fn give(&self, t: usize, it: Kept) {
        let mut tables = self.lock();
        if tables.len() <= t {
            tables.resize_with(t + 1, Vec::new);
        }
        if tables[t].len() < KEPT_PER_TABLE {
            tables[t].push(it);
        }
    }
}

/// A table iterator leased from the pool for one probe; goes back when dropped.
pub(super) struct Lease<'a> {
    backend: &'a RocksBackend,
    table: usize,
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
            self.backend.iters.give(self.table, it);
        }
    }
}

impl RocksBackend {
    /// An iterator over table `t` that sees every write acknowledged before this call:
    /// a kept one, refreshed, or a new one.
    pub(super) fn table_iter(&self, t: usize) -> Result<Lease<'_>> {
        let it = match self.iters.take(t) {
            Some(mut kept) => {
                if self.iters.refresh {
                    kept.0.refresh().map_err(storage)?;
                }
                kept
            }
            None => {
                let cf = self.space_cf(crate::store::backend::Space::Table(t))?;
                Kept(extend(
                    self.db.raw_iterator_cf_opt(cf, probe_read_options()),
                ))
            }
        };
        Ok(Lease {
            backend: self,
            table: t,
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
