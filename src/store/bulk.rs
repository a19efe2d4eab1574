//! Bulk loading: sorted SST files written per column family and ingested, instead of one
//! `WriteBatch` per group of documents.
//!
//! Protocol (crash-safe): (1) a `bulk-pending` marker is written to `meta` (fsynced);
//! (2) `docs` is streamed into an SST file in sequence order while `(id, seq, fp)` rows are
//! kept; (3) `ids` and every table are sorted and written to SST files; (4) `docs`, then
//! `ids`, then the tables are ingested (so a concurrent query never meets a table entry
//! without its document); (5) one fsynced batch deletes the `docs` records of ids repeated
//! in the input (the last one wins), sets the counters and removes the marker. A store
//! opened with the marker present was interrupted between (1) and (5): it is repaired from
//! `docs` (`Store::repair`), which yields either the state before the load (`docs` not yet
//! ingested) or the complete load.

use std::path::Path;

use rayon::prelude::*;
use rocksdb::{IngestExternalFileOptions, SstFileWriter, WriteBatch};

use super::{
    BatchOutcome, DOCS, EXACT, Entry, IDS, META, Store, cf_options, now, validate_id, write_synced,
};
use crate::codec;
use crate::document::StoredDoc;
use crate::error::Result;

/// Entries per `insert_batch` when a bulk load falls back to batches.
const FALLBACK_BATCH: usize = 10_000;

impl Store {
    /// Loads many entries at once. Into an empty store this sorts every table's keys and
    /// ingests them as SST files (much faster than batches for millions of entries; the
    /// result is identical to [`Store::insert_batch`]). Into a non-empty store it falls back
    /// to `insert_batch` in chunks of 10,000. Repeated ids: the last one wins.
    ///
    /// Memory: about 70 bytes per entry plus its id. The load is all-or-nothing: if the
    /// process dies midway, the next writable open completes or undoes it.
    pub fn bulk_load(&self, entries: impl IntoIterator<Item = Entry>) -> Result<BatchOutcome> {
        self.check_writable()?;
        let mut counters = self.lock();
        if counters.live != 0 {
            drop(counters);
            let mut out = BatchOutcome::default();
            let mut chunk = Vec::with_capacity(FALLBACK_BATCH);
            for e in entries {
                chunk.push(e);
                if chunk.len() == FALLBACK_BATCH {
                    out.add(self.insert_batch(chunk.drain(..))?);
                }
            }
            out.add(self.insert_batch(chunk)?);
            return Ok(out);
        }
        let tmp = self.path().join("bulk-load.tmp");
        let _ = std::fs::remove_dir_all(&tmp);
        std::fs::create_dir_all(&tmp)?;
        self.write_meta(codec::BULK_PENDING_KEY, Some(&[]))?;
        let base = counters.next_seq;
        let prepared = self.prepare(entries, base, &tmp);
        let (n, winners, losers) = match prepared {
            Ok(p) => p,
            Err(e) => {
                // Nothing was ingested: the store is as before.
                let _ = std::fs::remove_dir_all(&tmp);
                self.write_meta(codec::BULK_PENDING_KEY, None)?;
                return Err(e);
            }
        };
        let mut ingest = IngestExternalFileOptions::default();
        ingest.set_move_files(true);
        let names: Vec<&str> = [DOCS, IDS, EXACT]
            .into_iter()
            .chain(self.table_cfs.iter().map(String::as_str))
            .collect();
        for name in names {
            let file = tmp.join(format!("{name}.sst"));
            if file.exists() {
                self.db
                    .ingest_external_file_cf_opts(self.cf(name)?, &ingest, vec![file])?;
            }
        }
        let mut batch = WriteBatch::default();
        for seq in &losers {
            batch.delete_cf(self.cf(DOCS)?, codec::doc_key(*seq));
        }
        let next = base + n;
        let live = winners as u64;
        batch.delete_cf(self.cf(META)?, codec::BULK_PENDING_KEY);
        self.commit(&mut counters, batch, next, live, true)?;
        let _ = std::fs::remove_dir_all(&tmp);
        Ok(BatchOutcome {
            inserted: live,
            replaced: losers.len() as u64,
        })
    }

    /// Writes the SST files of a bulk load into `tmp`. Returns (entries read, distinct ids,
    /// sequence numbers of the entries superseded by a later one with the same id).
    fn prepare(
        &self,
        entries: impl IntoIterator<Item = Entry>,
        base: u64,
        tmp: &Path,
    ) -> Result<(u64, usize, Vec<u64>)> {
        let docs_opts = cf_options(DOCS, &self.cache);
        let mut docs = SstFileWriter::create(&docs_opts);
        docs.open(tmp.join("docs.sst"))?;
        let time = now();
        let mut rows: Vec<(String, u64, u64, Option<u128>)> = Vec::new();
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
            docs.put(codec::doc_key(seq), codec::encode_doc(&record))?;
            rows.push((record.id, seq, record.fp, record.content_hash));
        }
        let n = rows.len() as u64;
        if rows.is_empty() {
            return Ok((0, 0, Vec::new()));
        }
        docs.finish()?;
        rows.par_sort_unstable_by(|a, b| (&a.0, a.1).cmp(&(&b.0, b.1)));
        let ids_opts = cf_options(IDS, &self.cache);
        let mut ids = SstFileWriter::create(&ids_opts);
        ids.open(tmp.join("ids.sst"))?;
        let mut winners: Vec<(u64, u64)> = Vec::with_capacity(rows.len());
        let mut hashes: Vec<(u128, u64)> = Vec::new();
        let mut losers = Vec::new();
        for (i, (id, seq, fp, hash)) in rows.iter().enumerate() {
            if rows.get(i + 1).is_some_and(|next| &next.0 == id) {
                losers.push(*seq);
                continue;
            }
            let value = codec::IdValue {
                seq: *seq,
                fp: *fp,
                hash: *hash,
            };
            ids.put(id.as_bytes(), codec::encode_id_value(value))?;
            winners.push((*seq, *fp));
            if let Some(h) = hash {
                hashes.push((*h, *seq));
            }
        }
        ids.finish()?;
        drop(rows);
        if !hashes.is_empty() {
            hashes.par_sort_unstable();
            let opts = cf_options(EXACT, &self.cache);
            let mut exact = SstFileWriter::create(&opts);
            exact.open(tmp.join(format!("{EXACT}.sst")))?;
            for (h, seq) in hashes {
                exact.put(codec::exact_key(h, seq), [])?;
            }
            exact.finish()?;
        }
        let layout = &self.manifest.layout;
        (0..self.table_cfs.len())
            .into_par_iter()
            .try_for_each(|t| -> Result<()> {
                let mut keys: Vec<(u64, u64)> = winners
                    .iter()
                    .map(|&(seq, fp)| (layout.permute(t, fp), seq))
                    .collect();
                keys.sort_unstable();
                let opts = cf_options(&self.table_cfs[t], &self.cache);
                let mut w = SstFileWriter::create(&opts);
                w.open(tmp.join(format!("{}.sst", self.table_cfs[t])))?;
                for (perm, seq) in keys {
                    w.put(codec::table_key(perm, seq), [])?;
                }
                w.finish()?;
                Ok(())
            })?;
        Ok((n, winners.len(), losers))
    }

    /// Sets (`Some`) or removes (`None`) a `meta` key with an fsynced write.
    pub(super) fn write_meta(&self, key: &[u8], value: Option<&[u8]>) -> Result<()> {
        let mut batch = WriteBatch::default();
        match value {
            Some(v) => batch.put_cf(self.cf(META)?, key, v),
            None => batch.delete_cf(self.cf(META)?, key),
        }
        write_synced(&self.db, batch)
    }

    /// Completes or undoes a bulk load that was interrupted: rebuilds the derived data from
    /// `docs`, then removes the marker.
    pub(super) fn recover_bulk_load(&self) -> Result<()> {
        self.repair()?;
        let _ = std::fs::remove_dir_all(self.path().join("bulk-load.tmp"));
        self.write_meta(codec::BULK_PENDING_KEY, None)
    }
}

impl BatchOutcome {
    fn add(&mut self, other: BatchOutcome) {
        self.inserted += other.inserted;
        self.replaced += other.replaced;
    }
}
