//! One sorted bulk load, from its marker to its commit (see the module docs of `bulk`):
//! what is undone, and what leaves the handle refusing writes, when it fails.

use std::sync::{Arc, MutexGuard};

use super::sort::{Sorter, SpillDir};
use super::stage::{self, Staged};
use crate::error::Result;
use crate::index::bands;
use crate::store::backend::{
    BulkIngest, Change, ChangeSet, Durability, MetaKey, SortedEntry, SortedWriter, Space,
};
use crate::store::codec::spill::LoadRow;
use crate::store::{BatchOutcome, Counters, Store, validate_entry};
use crate::types::{Entry, StoredDoc};

/// How far a load got, which says what dropping it must do.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Phase {
    /// Marker set, runs being staged: undone if staging is out of sight.
    Staging,
    /// Runs being ingested, or the commit being written: the counters are stale.
    Ingesting,
    /// Committed, or already marked as failed.
    Done,
}

/// A sorted bulk load under way; holds the writer lock.
pub(super) struct SortedLoad<'a> {
    store: &'a Store,
    counters: MutexGuard<'a, Counters>,
    ingest: &'a dyn BulkIngest,
    docs: Option<Box<dyn SortedWriter + 'a>>,
    rows: Sorter<LoadRow>,
    spill: Arc<SpillDir>,
    /// The first sequence number of the load.
    base: u64,
    entries: u64,
    time: u64,
    /// Whether a given time out of order moved the timeline mark.
    timeline_moved: bool,
    phase: Phase,
}

impl<'a> SortedLoad<'a> {
    /// Sets the marker and opens the `docs` run.
    pub(super) fn start(
        store: &'a Store,
        counters: MutexGuard<'a, Counters>,
        ingest: &'a dyn BulkIngest,
    ) -> Result<Self> {
        ingest.discard_staged();
        store.write_meta(MetaKey::BulkPending, Some(Vec::new()))?;
        let spill = SpillDir::new(
            ingest
                .staging()
                .spill_dir
                .unwrap_or_else(std::env::temp_dir),
        );
        let base = counters.next_seq;
        let mut counters = counters;
        let time = store.next_time(&mut counters);
        let mut load = SortedLoad {
            store,
            counters,
            ingest,
            docs: None,
            rows: Sorter::new(spill.clone(), store.options.bulk_budget()),
            spill,
            base,
            entries: 0,
            time,
            timeline_moved: false,
            phase: Phase::Staging,
        };
        // From here on, dropping the load undoes it.
        load.docs = Some(ingest.sorted_writer(Space::Docs)?);
        Ok(load)
    }

    /// Writes the entry's record to the `docs` run and its row to the sort.
    pub(super) fn push(&mut self, e: Entry) -> Result<()> {
        validate_entry(&e.id, &e.meta)?;
        let seq = self.base + self.entries;
        let ((time, seen), moved) =
            self.store
                .entry_times(&mut self.counters, &e, (seq, None), self.time);
        self.timeline_moved |= moved;
        let record = StoredDoc {
            id: e.id,
            fp: e.fp.0,
            title: e.meta.title,
            url: e.meta.url,
            length: e.meta.length,
            time,
            seen,
            content_hash: e.meta.content_hash,
            sketch: e.meta.sketch,
        };
        let docs = self.docs.as_mut().expect("open until finish");
        docs.put(SortedEntry::Doc(seq, &record))?;
        self.rows.push(LoadRow {
            id: record.id.into_boxed_str(),
            seq,
            fp: record.fp,
            hash: record.content_hash,
            bands: bands::of(record.sketch.as_ref()),
        })?;
        self.entries += 1;
        Ok(())
    }

    /// Stages the other runs, ingests them all and commits.
    pub(super) fn finish(mut self) -> Result<BatchOutcome> {
        let docs = self.docs.take().expect("open until finish").finish()?;
        let rows = std::mem::replace(&mut self.rows, Sorter::new(self.spill.clone(), 0));
        let mut staged = match self.entries {
            0 => Staged::default(),
            _ => stage::derived(
                self.store,
                self.ingest,
                &self.spill,
                rows,
                (self.base, self.entries),
                self.store.options.bulk_budget(),
            )?,
        };
        staged.runs.extend(docs);
        self.phase = Phase::Ingesting;
        let outcome = self.ingest_and_commit(staged);
        if let Err(e) = &outcome {
            self.fail(e.to_string());
        }
        self.phase = Phase::Done;
        outcome
    }

    fn ingest_and_commit(&mut self, staged: Staged) -> Result<BatchOutcome> {
        self.ingest.ingest(staged.runs)?;
        let mut changes = ChangeSet::new();
        for seq in &staged.losers {
            changes.push(Change::DeleteDoc(*seq));
        }
        changes.push(Change::DeleteMeta(MetaKey::BulkPending));
        if self.timeline_moved {
            changes.push(self.store.timeline_change(&self.counters));
        }
        // On a backend many processes write, the live count moves by what this load
        // added (others may load into the same new store at once); elsewhere it is set.
        let counts = (
            self.base + self.entries,
            self.counters.live + staged.winners,
        );
        self.store
            .commit_write(&mut self.counters, changes, counts, Durability::Synced)?;
        self.ingest.discard_staged();
        Ok(BatchOutcome {
            inserted: staged.winners,
            replaced: staged.losers.len() as u64,
        })
    }

    /// Leaves the handle refusing writes until a repair (the marker stays for the next
    /// open).
    fn fail(&mut self, cause: String) {
        self.counters.failed = Some(cause);
    }
}

impl Drop for SortedLoad<'_> {
    fn drop(&mut self) {
        match self.phase {
            Phase::Done => {}
            Phase::Staging if self.ingest.staging().isolated => {
                // Nothing is visible: the store is as before the load. Should removing the
                // marker fail, the next writable open repairs from `docs`, which holds
                // nothing of the load; the counters are right either way.
                self.docs = None;
                self.ingest.discard_staged();
                let _ = self.store.write_meta(MetaKey::BulkPending, None);
            }
            _ => self.fail("it was abandoned after part of it was written".into()),
        }
    }
}
