//! Bulk loading: on a backend with sorted ingest ([`crate::store::backend::BulkIngest`], RocksDB's SST files),
//! every space is written as one sorted run and ingested, instead of one change set per
//! group of documents.
//!
//! Protocol (crash-safe, docs/design.md §6): a `bulk-pending` marker (fsynced); `docs`
//! streamed into a run while `(id, seq, fp, hash)` rows go to an external sort ([`sort`]);
//! the merged rows give the `ids` run and the runs of `exact` and the tables; `docs`, then
//! `ids`, then the tables are ingested, so a concurrent query never meets a table entry
//! without its document; one fsynced change set removes repeated ids' records, sets the
//! counters and removes the marker. A store opened with the marker present is repaired
//! from `docs` (`Store::repair`): the state before the load, or the complete load.
//!
//! A load that fails before the ingest on a backend that stages its runs out of sight is
//! undone. One that fails later (or on Redis, whose runs are visible as written) keeps its
//! marker, and the handle refuses writes ([`crate::Error::BulkLoadFailed`]: its counters no
//! longer say which sequence numbers are used) until [`Store::repair`] or a reopen.

mod load;
mod sort;
mod stage;
mod tables;
#[cfg(test)]
mod tests;

use super::backend::MetaKey;
use super::{BatchOutcome, Counters, Store};
use crate::error::{Error, Result};
use crate::types::Entry;
use load::SortedLoad;

/// Entries per `insert_batch` when a bulk load falls back to batches.
const FALLBACK_BATCH: usize = 10_000;

/// Memory a bulk load's sorts use at most, unless the builder says otherwise.
pub(super) const DEFAULT_BULK_MEMORY: usize = 256 << 20;

/// A bulk load fed one entry at a time ([`Store::bulk_loader`]): what
/// [`Store::bulk_load`] does for an iterator, for callers that produce entries in a loop
/// of their own (reading files, say). Nothing is visible before [`BulkLoader::finish`] on
/// RocksDB; dropping the loader without finishing it abandons the load (the store stays
/// as it was; on a backend whose runs are visible as they are written, the handle is left
/// needing [`Store::repair`], as after a failed load).
pub struct BulkLoader<'a> {
    store: &'a Store,
    mode: Mode<'a>,
}

enum Mode<'a> {
    /// Into a non-empty store, or a backend without sorted ingest: `insert_batch` calls.
    Batches {
        chunk: Vec<Entry>,
        out: BatchOutcome,
    },
    /// On a backend many processes write: collected first, to reserve their sequence
    /// numbers at once.
    Collect(Vec<Entry>),
    /// Sorted runs.
    Sorted(Box<SortedLoad<'a>>),
}

impl std::fmt::Debug for BulkLoader<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let mode = match &self.mode {
            Mode::Batches { .. } => "batches",
            Mode::Collect(_) => "collect",
            Mode::Sorted(_) => "sorted",
        };
        f.debug_struct("BulkLoader").field("mode", &mode).finish()
    }
}

impl BulkLoader<'_> {
    /// Adds an entry. Errors: an invalid id ([`Error::InvalidId`]) or a title or url too
    /// long ([`Error::FieldTooLong`]), refused before anything is written; or what writing
    /// the sorted runs met (disk full, say); the load is then abandoned.
    pub fn push(&mut self, entry: Entry) -> Result<()> {
        crate::store::validate_entry(&entry.id, &entry.meta)?;
        match &mut self.mode {
            Mode::Batches { chunk, out } => {
                chunk.push(entry);
                if chunk.len() == FALLBACK_BATCH {
                    out.add(self.store.insert_batch(chunk.drain(..))?);
                }
                Ok(())
            }
            Mode::Collect(all) => {
                all.push(entry);
                Ok(())
            }
            Mode::Sorted(load) => load.push(entry),
        }
    }

    /// Completes the load and makes it visible; returns what it stored.
    pub fn finish(self) -> Result<BatchOutcome> {
        match self.mode {
            Mode::Batches { chunk, mut out } => {
                out.add(self.store.insert_batch(chunk)?);
                Ok(out)
            }
            Mode::Collect(all) => self.store.load_reserved(all),
            Mode::Sorted(load) => (*load).finish(),
        }
    }
}

impl Store {
    /// Loads many entries at once. Into an empty store on a backend with sorted ingest
    /// this sorts every table's keys and writes them in key order: RocksDB ingests them as
    /// SST files, Redis Cluster writes one command per bucket (both much faster than
    /// batches for millions of entries; the result is identical to
    /// [`Store::insert_batch`]). Otherwise it falls back to `insert_batch` in chunks of
    /// 10,000. Repeated ids: the last one wins.
    ///
    /// Memory: the sorts use at most [`crate::StoreBuilder::bulk_memory_bytes`] (256 MiB by
    /// default) and spill sorted runs to temporary files beyond it (under the store's
    /// directory; removed when the load ends), plus 8 bytes per repeated id. On Redis
    /// Cluster the entries are collected first, to reserve their sequence numbers.
    ///
    /// The load is all-or-nothing on RocksDB; on Redis Cluster entries become visible as
    /// they are written. If the process dies midway, the next writable open rebuilds the
    /// store from `docs`. If the load fails after part of it reached the store, the handle
    /// refuses writes ([`Error::BulkLoadFailed`]) until [`Store::repair`] or a reopen.
    pub fn bulk_load(&self, entries: impl IntoIterator<Item = Entry>) -> Result<BatchOutcome> {
        let mut loader = self.bulk_loader()?;
        for e in entries {
            loader.push(e)?;
        }
        loader.finish()
    }

    /// Starts a bulk load fed entry by entry; see [`Store::bulk_load`] and [`BulkLoader`].
    /// A sorted load holds the writer lock until it is finished or dropped.
    pub fn bulk_loader(&self) -> Result<BulkLoader<'_>> {
        self.check_writable()?;
        let batches = || Mode::Batches {
            chunk: Vec::with_capacity(FALLBACK_BATCH),
            out: BatchOutcome::default(),
        };
        let mode = match (self.backend.bulk_ingest(), self.backend.shared()) {
            (None, _) => batches(),
            (Some(_), Some(_)) if self.is_empty() => Mode::Collect(Vec::new()),
            (Some(ingest), None) => {
                let counters = self.lock();
                counters.usable()?;
                if counters.live > 0 {
                    batches()
                } else {
                    Mode::Sorted(Box::new(SortedLoad::start(self, counters, ingest)?))
                }
            }
            (Some(_), Some(_)) => batches(),
        };
        Ok(BulkLoader { store: self, mode })
    }

    /// The sorted load of `entries` on a backend many processes write: their sequence
    /// numbers are reserved first.
    fn load_reserved(&self, entries: Vec<Entry>) -> Result<BatchOutcome> {
        let ingest = self
            .backend
            .bulk_ingest()
            .expect("chosen for a bulk ingest");
        let mut counters = self.lock();
        counters.usable()?;
        self.reserve_seqs(&mut counters, entries.len() as u64)?;
        let mut load = SortedLoad::start(self, counters, ingest)?;
        for e in entries {
            load.push(e)?;
        }
        load.finish()
    }

    /// Completes or undoes a bulk load that was interrupted (the marker found on open):
    /// rebuilds the derived data from `docs`, then removes the marker.
    pub(super) fn recover_bulk_load(&mut self) -> Result<()> {
        self.repair()?;
        self.end_bulk_recovery()
    }

    /// After a repair through a handle whose bulk load failed midway: the repair rebuilt
    /// the store from `docs` (so the load is complete or undone, and the counters are
    /// right); the marker and staged runs go, and the handle takes writes again.
    pub(super) fn forget_failed_load(&self, counters: &mut Counters) -> Result<()> {
        if counters.failed.is_some() {
            self.end_bulk_recovery()?;
            counters.failed = None;
        }
        Ok(())
    }

    fn end_bulk_recovery(&self) -> Result<()> {
        if let Some(ingest) = self.backend.bulk_ingest() {
            ingest.discard_staged();
        }
        self.write_meta(MetaKey::BulkPending, None)
    }
}

impl Counters {
    /// Refuses writes through a handle whose bulk load failed midway (see the module docs).
    pub(super) fn usable(&self) -> Result<()> {
        match &self.failed {
            Some(cause) => Err(Error::BulkLoadFailed(cause.clone())),
            None => Ok(()),
        }
    }
}
