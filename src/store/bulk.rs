//! Bulk loading: on a backend with sorted ingest ([`BulkIngest`], RocksDB's SST files),
//! every space is written as one sorted run and ingested, instead of one change set per
//! group of documents.
//!
//! Protocol (crash-safe): (1) a `bulk-pending` marker is written to `meta` (fsynced);
//! (2) `docs` is streamed into a run in sequence order while `(id, seq, fp)` rows are
//! kept; (3) `ids` and every table are sorted and written as runs; (4) `docs`, then `ids`,
//! then the tables are ingested (so a concurrent query never meets a table entry without
//! its document); (5) one fsynced change set deletes the `docs` records of ids repeated in
//! the input (the last one wins), sets the counters and removes the marker. A store opened
//! with the marker present was interrupted between (1) and (5): it is repaired from `docs`
//! (`Store::repair`), which yields either the state before the load (`docs` not yet
//! ingested) or the complete load.

use rayon::prelude::*;

use super::backend::{BulkIngest, Change, ChangeSet, Durability, MetaKey, SortedRun, Space};
use super::codec::IdValue;
use super::{BatchOutcome, Store, now, validate_id};
use crate::error::Result;
use crate::types::{Entry, StoredDoc};

/// Entries per `insert_batch` when a bulk load falls back to batches.
const FALLBACK_BATCH: usize = 10_000;

/// One loaded entry, as the sort of `ids` needs it: id, seq, fingerprint, content hash.
type Row = (String, u64, u64, Option<u128>);

/// What [`Store::stage`] staged.
struct Staged {
    runs: Vec<SortedRun>,
    /// Entries read.
    entries: u64,
    /// Distinct ids.
    winners: u64,
    /// Sequence numbers of the entries superseded by a later one with the same id.
    losers: Vec<u64>,
}

impl Store {
    /// Loads many entries at once. Into an empty store on a backend with sorted ingest
    /// this sorts every table's keys and writes them in key order: RocksDB ingests them as
    /// SST files, Redis Cluster writes one command per bucket (both much faster than
    /// batches for millions of entries; the result is identical to
    /// [`Store::insert_batch`]). Otherwise it falls back to `insert_batch` in chunks of
    /// 10,000. Repeated ids: the last one wins.
    ///
    /// Memory: about 70 bytes per entry plus its id (on Redis Cluster the entries are
    /// collected first, to reserve their sequence numbers). The load is all-or-nothing on
    /// RocksDB; on Redis Cluster entries become visible as they are written. Either way, if
    /// the process dies midway, the next writable open rebuilds the store from `docs`.
    pub fn bulk_load(&self, entries: impl IntoIterator<Item = Entry>) -> Result<BatchOutcome> {
        self.check_writable()?;
        let empty = self.is_empty();
        let mut counters = self.lock();
        let ingest = match self.backend.bulk_ingest() {
            Some(ingest) if empty => ingest,
            _ => {
                drop(counters);
                return self.load_in_batches(entries);
            }
        };
        // A store many processes write: the load's sequence numbers are reserved first.
        let entries: Box<dyn Iterator<Item = Entry>> = match self.backend.shared() {
            Some(_) => {
                let all: Vec<Entry> = entries.into_iter().collect();
                self.reserve_seqs(&mut counters, all.len() as u64)?;
                Box::new(all.into_iter())
            }
            None => Box::new(entries.into_iter()),
        };
        ingest.discard_staged();
        self.write_meta(MetaKey::BulkPending, Some(Vec::new()))?;
        let base = counters.next_seq;
        let staged = match self.stage(ingest, entries, base) {
            Ok(s) => s,
            Err(e) => {
                // Nothing was ingested: the store is as before.
                ingest.discard_staged();
                self.write_meta(MetaKey::BulkPending, None)?;
                return Err(e);
            }
        };
        ingest.ingest(staged.runs)?;
        let mut changes = ChangeSet::new();
        for seq in &staged.losers {
            changes.push(Change::DeleteDoc(*seq));
        }
        changes.push(Change::DeleteMeta(MetaKey::BulkPending));
        let counts = (base + staged.entries, staged.winners);
        self.commit(&mut counters, changes, counts, Durability::Synced)?;
        ingest.discard_staged();
        Ok(BatchOutcome {
            inserted: staged.winners,
            replaced: staged.losers.len() as u64,
        })
    }

    /// [`Store::bulk_load`] as `insert_batch` calls of [`FALLBACK_BATCH`] entries.
    fn load_in_batches(&self, entries: impl IntoIterator<Item = Entry>) -> Result<BatchOutcome> {
        let mut out = BatchOutcome::default();
        let mut chunk = Vec::with_capacity(FALLBACK_BATCH);
        for e in entries {
            chunk.push(e);
            if chunk.len() == FALLBACK_BATCH {
                out.add(self.insert_batch(chunk.drain(..))?);
            }
        }
        out.add(self.insert_batch(chunk)?);
        Ok(out)
    }

    /// Writes the sorted runs of a bulk load.
    fn stage(
        &self,
        ingest: &dyn BulkIngest,
        entries: impl IntoIterator<Item = Entry>,
        base: u64,
    ) -> Result<Staged> {
        let mut runs = Vec::new();
        let mut rows = stage_docs(ingest, entries, base, &mut runs)?;
        let entries = rows.len() as u64;
        if rows.is_empty() {
            return Ok(Staged {
                runs,
                entries,
                winners: 0,
                losers: Vec::new(),
            });
        }
        rows.par_sort_unstable_by(|a, b| (&a.0, a.1).cmp(&(&b.0, b.1)));
        let (winners, hashes, losers) = stage_ids(ingest, &rows, &mut runs)?;
        drop(rows);
        stage_exact(ingest, hashes, &mut runs)?;
        let tables = self.stage_tables(ingest, &winners)?;
        runs.extend(tables);
        Ok(Staged {
            runs,
            entries,
            winners: winners.len() as u64,
            losers,
        })
    }

    /// Completes or undoes a bulk load that was interrupted (the marker found on open):
    /// rebuilds the derived data from `docs`, then removes the marker.
    pub(super) fn recover_bulk_load(&self) -> Result<()> {
        self.repair()?;
        if let Some(ingest) = self.backend.bulk_ingest() {
            ingest.discard_staged();
        }
        self.write_meta(MetaKey::BulkPending, None)
    }

    /// One run per table of the `(seq, fingerprint)` pairs of `winners`, written in parallel.
    fn stage_tables(
        &self,
        ingest: &dyn BulkIngest,
        winners: &[(u64, u64)],
    ) -> Result<Vec<SortedRun>> {
        let layout = &self.manifest.layout;
        let runs = (0..layout.tables().len())
            .into_par_iter()
            .map(|t| -> Result<Option<SortedRun>> {
                let mut keys: Vec<(u64, u64)> = winners
                    .iter()
                    .map(|&(seq, fp)| (layout.permute(t, fp), seq))
                    .collect();
                keys.sort_unstable();
                let mut w = ingest.sorted_writer(Space::Table(t))?;
                for (perm, seq) in keys {
                    w.put_table(perm, seq)?;
                }
                w.finish()
            })
            .collect::<Result<Vec<_>>>()?;
        Ok(runs.into_iter().flatten().collect())
    }
}

/// Streams the entries into the `docs` run (in sequence order from `base`); returns one
/// row per entry.
fn stage_docs(
    ingest: &dyn BulkIngest,
    entries: impl IntoIterator<Item = Entry>,
    base: u64,
    runs: &mut Vec<SortedRun>,
) -> Result<Vec<Row>> {
    let mut docs = ingest.sorted_writer(Space::Docs)?;
    let time = now();
    let mut rows: Vec<Row> = Vec::new();
    for (i, e) in entries.into_iter().enumerate() {
        validate_id(&e.id)?;
        let seq = base + i as u64;
        let record = StoredDoc {
            id: e.id,
            fp: e.fp.0,
            title: e.meta.title,
            url: e.meta.url,
            length: e.meta.length,
            time,
            content_hash: e.meta.content_hash,
            sketch: e.meta.sketch,
        };
        docs.put_doc(seq, &record)?;
        rows.push((record.id, seq, record.fp, record.content_hash));
    }
    runs.extend(docs.finish()?);
    Ok(rows)
}

/// Writes the `ids` run from `rows` sorted by (id, seq): the last entry of each id wins.
/// Returns the winners' `(seq, fingerprint)`, their `(content hash, seq)` and the losers'
/// sequence numbers.
#[allow(clippy::type_complexity)]
fn stage_ids(
    ingest: &dyn BulkIngest,
    rows: &[Row],
    runs: &mut Vec<SortedRun>,
) -> Result<(Vec<(u64, u64)>, Vec<(u128, u64)>, Vec<u64>)> {
    let mut ids = ingest.sorted_writer(Space::Ids)?;
    let mut winners: Vec<(u64, u64)> = Vec::with_capacity(rows.len());
    let mut hashes: Vec<(u128, u64)> = Vec::new();
    let mut losers = Vec::new();
    for (i, (id, seq, fp, hash)) in rows.iter().enumerate() {
        if rows.get(i + 1).is_some_and(|next| &next.0 == id) {
            losers.push(*seq);
            continue;
        }
        let value = IdValue {
            seq: *seq,
            fp: *fp,
            hash: *hash,
        };
        ids.put_id(id, value)?;
        winners.push((*seq, *fp));
        if let Some(h) = hash {
            hashes.push((*h, *seq));
        }
    }
    runs.extend(ids.finish()?);
    Ok((winners, hashes, losers))
}

/// Writes the `exact` run.
fn stage_exact(
    ingest: &dyn BulkIngest,
    mut hashes: Vec<(u128, u64)>,
    runs: &mut Vec<SortedRun>,
) -> Result<()> {
    if hashes.is_empty() {
        return Ok(());
    }
    hashes.par_sort_unstable();
    let mut exact = ingest.sorted_writer(Space::Exact)?;
    for (h, seq) in hashes {
        exact.put_exact(h, seq)?;
    }
    runs.extend(exact.finish()?);
    Ok(())
}
