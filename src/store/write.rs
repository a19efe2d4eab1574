//! Writes: inserts (one, a batch), replacements and deletes, each one change set listed in
//! the order a non-atomic backend must apply it (see [`super::backend`]).

use std::collections::HashMap;
use std::sync::MutexGuard;

use super::backend::{Change, ChangeSet, Consistency, Maintenance, Snapshot};
use super::codec::{self, IdValue};
use super::group::{Answer, Ask};
use super::{BatchOutcome, Counters, InsertOutcome, Store, validate_entry};
use crate::error::Result;
use crate::index::bands::{self, Bands};
use crate::index::page::analyze_page;
use crate::text::fingerprint::{Analysis, Fingerprinter};
use crate::types::{DocMeta, Document, Entry, Fingerprint, StoredDoc};

/// Whether a stored entry needs table keys of its own.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum TableKeys {
    /// A new sequence number: one key per table.
    New,
    /// A replacement with the same fingerprint and band keys keeps its sequence number and
    /// table keys.
    Kept,
}

/// A stored document as its id names it, its fingerprint known (read from its record where
/// the `ids` value does not hold it).
#[derive(Debug, Clone, Copy)]
pub(super) struct Linked {
    pub(super) seq: u64,
    pub(super) fp: u64,
    pub(super) hash: Option<u128>,
    /// Its stored time, where its record was read.
    pub(super) time: Option<u64>,
    /// Its bands ([`bands::of`] its sketch, where its record was read): its band tables'
    /// keys.
    pub(super) bands: Bands,
    /// Whether its record was there to give `fp`, `time` and `bands`: not for a document a
    /// writer that died half replaced or half deleted (on a backend atomic per key), whose
    /// table entries are then left to [`Store::repair`].
    pub(super) has_record: bool,
}

/// What a record gives of a document's table keys: its fingerprint, stored time and bands.
type RecordKeys = (u64, u64, Bands);

/// Replaced or deleted documents after which the tables are flushed.
pub(super) const CHURN_FLUSH: u64 = 5_000;

/// `doc`'s analysis as the store keeps and queries it (a page by its whole visible text
/// where its reader left out much of it: [`analyze_page`]).
pub(super) fn doc_analysis(f: &Fingerprinter, doc: &Document) -> Result<Analysis> {
    analyze_page(f, doc.title.as_deref(), &doc.text, doc.left_out.as_deref())
}

impl Store {
    /// Fingerprints `doc` and stores it (with its content hash, so that a later
    /// [`Store::check_and_insert`] finds it as an exact duplicate); an existing document
    /// with the same id is replaced.
    pub fn insert(&self, doc: &Document) -> Result<InsertOutcome> {
        let (fp, meta) = self.fingerprint_with_meta(doc)?;
        self.insert_fingerprint(&doc.id, fp, meta)
    }

    /// `doc`'s fingerprint and its metadata with the content hash and sketch filled in.
    pub(super) fn fingerprint_with_meta(&self, doc: &Document) -> Result<(Fingerprint, DocMeta)> {
        // Refused before the work of fingerprinting it.
        crate::types::check_stored_fields(&doc.id, doc.title.as_deref(), doc.url.as_deref())?;
        let a = doc_analysis(&self.fingerprinter, doc)?;
        let mut meta = doc.meta();
        meta.content_hash = Some(a.content_hash);
        meta.sketch = a.sketch;
        meta.weak_bits = a.weak_bits;
        meta.main_sketch = a.main_sketch;
        Ok((a.fingerprint, meta))
    }

    /// Stores a precomputed fingerprint under `id`; an existing document with the same id
    /// is replaced. When this returns `Ok`, the write survives a crash of the process.
    ///
    /// Concurrent calls (and [`Store::check_and_insert`]s) are written together, as one
    /// change set with one fsync (group commit, see docs/design.md).
    ///
    /// Errors: [`Error::InvalidId`](crate::Error::InvalidId), [`Error::FieldTooLong`](crate::Error::FieldTooLong) (a title or url longer than is
    /// stored), [`Error::ReadOnly`](crate::Error::ReadOnly), storage errors.
    pub fn insert_fingerprint(
        &self,
        id: &str,
        fp: Fingerprint,
        meta: DocMeta,
    ) -> Result<InsertOutcome> {
        let entry = Entry {
            id: id.to_owned(),
            fp,
            meta,
        };
        if self.backend.shared().is_some() {
            let out = self.insert_batch([entry])?;
            return Ok(match out.replaced {
                0 => InsertOutcome::Inserted,
                _ => InsertOutcome::Replaced,
            });
        }
        self.check_writable()?;
        validate_entry(id, &entry.meta)?;
        match self.submit(entry, Ask::Insert)? {
            Answer::Inserted(out) => Ok(out),
            Answer::Checked(_) => unreachable!("an insert is answered as an insert"),
        }
    }

    /// Stores many entries in one atomic write (all or none, on a backend that writes
    /// change sets atomically). Later entries with an id already in the store, or earlier
    /// in the batch, replace the earlier ones.
    pub fn insert_batch(&self, entries: impl IntoIterator<Item = Entry>) -> Result<BatchOutcome> {
        self.check_writable()?;
        let entries: Vec<Entry> = entries.into_iter().collect();
        for e in &entries {
            validate_entry(&e.id, &e.meta)?;
        }
        let mut counters = self.lock();
        counters.usable()?;
        let refs: Vec<&Entry> = entries.iter().collect();
        let outcomes = self.write_entries(&mut counters, &refs, None)?;
        self.unlock(counters);
        let mut out = BatchOutcome::default();
        for o in outcomes {
            match o {
                InsertOutcome::Inserted => out.inserted += 1,
                InsertOutcome::Replaced => out.replaced += 1,
            }
        }
        Ok(out)
    }

    /// The body of [`Store::insert_batch`], under the writer lock held by the caller: writes
    /// `entries` in one change set and returns what each did. Entries must have valid ids.
    /// `claimed`: the sequence number under which a single entry's content hash was claimed
    /// ([`super::backend::Shared::claim_exact`]); the entry is stored under it.
    pub(super) fn write_entries(
        &self,
        counters: &mut Counters,
        entries: &[&Entry],
        claimed: Option<u64>,
    ) -> Result<Vec<InsertOutcome>> {
        self.reserve_seqs(counters, entries.len() as u64)?;
        let ids: Vec<&str> = entries.iter().map(|e| e.id.as_str()).collect();
        let existing = self.linked(&ids)?;
        let mut pending: HashMap<&str, Linked> = HashMap::new();
        let mut changes = ChangeSet::new();
        let (mut next, mut live, mut churn) = (counters.next_seq, counters.live, 0);
        let mut out = Vec::with_capacity(entries.len());
        let time = self.next_time(counters);
        let mut timeline_moved = false;
        for (e, old) in entries.iter().zip(existing) {
            let old = pending.get(e.id.as_str()).copied().or(old);
            // A replacement with the same fingerprint (a re-crawled page) keeps its sequence
            // number and table keys: only the record changes, and no table tombstones
            // accumulate under the fingerprint's prefix.
            let mut kept = None;
            let (seq, keys) = match old {
                Some(o) if self.same_keys(&o, e) && claimed.is_none() => {
                    out.push(InsertOutcome::Replaced);
                    kept = Some(o.time.unwrap_or(time));
                    (o.seq, TableKeys::Kept)
                }
                Some(o) => {
                    self.push_unlink(&mut changes, o);
                    out.push(InsertOutcome::Replaced);
                    churn += 1;
                    (take_seq(&mut next, claimed), TableKeys::New)
                }
                None => {
                    live += 1;
                    out.push(InsertOutcome::Inserted);
                    (take_seq(&mut next, claimed), TableKeys::New)
                }
            };
            if let Some(Linked {
                seq: old_seq,
                hash: Some(h),
                ..
            }) = old
            {
                // Before the new entry: when both are the same key, the put comes last.
                changes.push(Change::DeleteExact(h, old_seq));
            }
            let (times, moved) = self.entry_times(counters, e, (seq, kept), time);
            timeline_moved |= moved;
            let value = self.push_link(&mut changes, e, seq, keys, times);
            pending.insert(&e.id, value);
        }
        if timeline_moved {
            changes.push(self.timeline_change(counters));
        }
        self.commit_write(counters, changes, (next, live), self.durability())?;
        self.note_churn(counters, churn);
        Ok(out)
    }

    /// Adds to `changes` what stores entry `e` as document `seq`: its table entries (when
    /// [`TableKeys::New`]), its `exact` entry, the record that commits them, then its id.
    fn push_link(
        &self,
        changes: &mut ChangeSet,
        e: &Entry,
        seq: u64,
        keys: TableKeys,
        (time, seen): (u64, u64),
    ) -> Linked {
        let bands = bands::of(e.meta.sketch.as_ref());
        if keys == TableKeys::New {
            for t in 0..self.manifest.tables() {
                if let Some(key) = self.manifest.table_key(t, e.fp.0, &bands) {
                    changes.push(Change::PutTable(t, key, seq));
                }
            }
        }
        if let Some(h) = e.meta.content_hash {
            changes.push(Change::PutExact(h, seq));
        }
        let record = StoredDoc {
            id: e.id.clone(),
            fp: e.fp.0,
            title: e.meta.title.clone(),
            url: e.meta.url.clone(),
            length: e.meta.length,
            time,
            seen,
            content_hash: e.meta.content_hash,
            sketch: e.meta.sketch,
        };
        changes.push(Change::PutDoc(seq, Box::new(record)));
        let value = IdValue {
            seq,
            fp: self.stored_fp(e.fp.0),
            hash: e.meta.content_hash,
        };
        changes.push(Change::PutId(e.id.clone(), value));
        Linked {
            seq,
            fp: e.fp.0,
            hash: e.meta.content_hash,
            time: Some(time),
            bands,
            has_record: true,
        }
    }

    /// Whether entry `e` has the table keys of stored document `old`: the same fingerprint,
    /// and the same band keys (or none).
    fn same_keys(&self, old: &Linked, e: &Entry) -> bool {
        let kept = self.manifest.bands as usize;
        old.has_record
            && old.fp == e.fp.0
            && old.bands[..kept] == bands::of(e.meta.sketch.as_ref())[..kept]
    }

    /// The fingerprint an `ids` value of this store holds: none from
    /// [`codec::SHORT_IDS_FORMAT`] on (it is in the document's record).
    pub(super) fn stored_fp(&self, fp: u64) -> Option<u64> {
        (self.format < codec::SHORT_IDS_FORMAT).then_some(fp)
    }

    /// The documents `ids` name now, each with its fingerprint: from its `ids` value, or
    /// (format 6 on) from its record, read in one batch.
    pub(super) fn linked(&self, ids: &[&str]) -> Result<Vec<Option<Linked>>> {
        let snap = self.view(Consistency::PointInTime);
        let values = snap.ids(ids)?;
        let unknown: Vec<u64> = values
            .iter()
            .flatten()
            .filter(|v| v.fp.is_none())
            .map(|v| v.seq)
            .collect();
        let mut records = fps_of(&*snap, &unknown)?.into_iter();
        ids.iter()
            .zip(values)
            .map(|(id, value)| {
                let Some(v) = value else { return Ok(None) };
                let record = match v.fp {
                    Some(fp) => Some((fp, None, bands::of(None))),
                    None => records.next().flatten().map(|(fp, t, b)| (fp, Some(t), b)),
                };
                // On a backend atomic per key, an id naming a missing record is a document
                // a writer that died half replaced or half deleted: replaced or deleted
                // as one whose table keys are unknown. Elsewhere, corruption.
                let Some((fp, time, bands)) = record else {
                    self.missing_record(|| {
                        let seq = v.seq;
                        format!("id {id:?} names document {seq}, which has no record; Store::repair mends it")
                    })?;
                    return Ok(Some(Linked {
                        seq: v.seq,
                        fp: 0,
                        hash: v.hash,
                        time: None,
                        bands: bands::of(None),
                        has_record: false,
                    }));
                };
                Ok(Some(Linked {
                    seq: v.seq,
                    fp,
                    hash: v.hash,
                    time,
                    bands,
                    has_record: true,
                }))
            })
            .collect()
    }

    /// Adds to `changes` the removal of document `old`'s record (first: it commits the
    /// rest) and of its table entries — not of its `ids` or `exact` entries: the caller
    /// overwrites or deletes those.
    fn push_unlink(&self, changes: &mut ChangeSet, old: Linked) {
        changes.push(Change::DeleteDoc(old.seq));
        if !old.has_record {
            return;
        }
        for t in 0..self.manifest.tables() {
            if let Some(key) = self.manifest.table_key(t, old.fp, &old.bands) {
                changes.push(Change::DeleteTable(t, key, old.seq));
            }
        }
    }

    /// Counts replaced/deleted documents; past [`CHURN_FLUSH`] since the last flush, marks
    /// the tables to be flushed (by [`Store::unlock`]) so that their tombstones reach SST
    /// files, where the deletion-triggered compaction removes them (a query steps over
    /// every tombstone under its prefix, so heavy churn near one fingerprint slows it).
    fn note_churn(&self, counters: &mut Counters, churn: u64) {
        counters.churn += churn;
        if counters.churn >= CHURN_FLUSH {
            counters.churn = 0;
            counters.flush_due = true;
        }
    }

    /// Releases the writer lock, then starts the churn flush if one is due: the flush runs
    /// in the background and other writers never wait for it. Its failure is not the
    /// write's (which is already committed): it only delays the tombstones' compaction,
    /// and a backend that cannot write any more says so at the next write.
    pub(super) fn unlock(&self, mut counters: MutexGuard<'_, Counters>) {
        let due = std::mem::take(&mut counters.flush_due);
        drop(counters);
        if due {
            let _ = self.backend.maintain(Maintenance::FlushTables);
        }
    }

    /// Deletes the document `id` and its table entries. Returns whether it existed.
    pub fn delete(&self, id: &str) -> Result<bool> {
        Ok(self.delete_many(&[id])?[0])
    }

    /// Adds to `changes` the whole removal of document `old`, stored under `id`: its
    /// record and table entries ([`Store::push_unlink`]), its id and its `exact` entry.
    pub(super) fn push_delete(&self, changes: &mut ChangeSet, id: &str, old: Linked) {
        self.push_unlink(changes, old);
        changes.push(Change::DeleteId(id.to_owned()));
        if let Some(h) = old.hash {
            changes.push(Change::DeleteExact(h, old.seq));
        }
    }

    /// Writes `changes`, which delete `n` stored documents, and counts them as churn.
    pub(super) fn commit_deletes(
        &self,
        counters: &mut Counters,
        changes: ChangeSet,
        n: u64,
    ) -> Result<()> {
        let live = counters.live.saturating_sub(n);
        let next = counters.next_seq;
        self.commit_write(counters, changes, (next, live), self.durability())?;
        self.note_churn(counters, n);
        Ok(())
    }
}

/// The fingerprints, stored times and bands of the records of `seqs` (`None` where a
/// record is missing).
fn fps_of(snap: &dyn Snapshot, seqs: &[u64]) -> Result<Vec<Option<RecordKeys>>> {
    if seqs.is_empty() {
        return Ok(Vec::new());
    }
    Ok(snap
        .docs(seqs)?
        .into_iter()
        .map(|d| d.map(|d| (d.fp, d.time, bands::of(d.sketch.as_ref()))))
        .collect())
}

/// The claimed sequence number if there is one, else the next one of `next`.
fn take_seq(next: &mut u64, claimed: Option<u64>) -> u64 {
    claimed.unwrap_or_else(|| {
        *next += 1;
        *next - 1
    })
}

#[cfg(test)]
mod tests {
    use std::sync::mpsc;
    use std::sync::{Arc, Mutex};
    use std::time::Duration;

    use super::CHURN_FLUSH;
    use crate::store::hooked::Hooked;
    use crate::store::memory::MemoryBackend;
    use crate::store::{Store, StoreBuilder};
    use crate::types::{DocMeta, Fingerprint};

    /// The churn flush (due after [`CHURN_FLUSH`] deletes) runs outside the writer lock: a
    /// write goes on while it runs.
    #[test]
    fn the_churn_flush_never_blocks_other_writers() {
        let (started_tx, started) = mpsc::channel();
        let (release, release_rx) = mpsc::channel();
        let options = StoreBuilder::in_memory().k_max(3);
        let layout = options.layout().unwrap();
        // A flush as slow as it can be: it says it started, then waits for the test.
        let mut backend = Hooked::new(Box::new(MemoryBackend::new(
            options.backend_tables().unwrap(),
        )));
        let (started_tx, release_rx) = (Mutex::new(started_tx), Mutex::new(release_rx));
        backend.on_flush = Box::new(move || {
            let _ = started_tx.lock().unwrap().send(());
            let _ = release_rx.lock().unwrap().recv();
        });
        let store = Arc::new(Store::create(Box::new(backend), options, layout).unwrap());
        let meta = DocMeta::default;
        for i in 0..CHURN_FLUSH {
            store
                .insert_fingerprint(&format!("d{i}"), Fingerprint(i), meta())
                .unwrap();
        }
        let churner = Arc::clone(&store);
        let churn = std::thread::spawn(move || {
            for i in 0..CHURN_FLUSH {
                churner.delete(&format!("d{i}")).unwrap();
            }
        });
        started.recv().expect("the churn flush started");
        let (done_tx, done) = mpsc::channel();
        let writer = Arc::clone(&store);
        std::thread::spawn(move || {
            let out = writer.insert_fingerprint("other", Fingerprint(u64::MAX), meta());
            let _ = done_tx.send(out.is_ok());
        });
        // Generous: the write takes microseconds; one blocked by the flush never ends.
        let wrote = done.recv_timeout(Duration::from_secs(20));
        release.send(()).unwrap();
        churn.join().unwrap();
        assert_eq!(wrote, Ok(true), "a write waited for the churn flush");
        assert_eq!(store.len(), 1);
    }
}
