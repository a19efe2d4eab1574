//! Reading every stored document out, in sequence or id order, from one snapshot, from a
//! point where an earlier read stopped ([`Store::scan_by_seq`], [`Store::scan_by_id`]).

use crate::error::Result;
use crate::store::Store;
use crate::store::backend::Snapshot;
use crate::types::StoredDoc;

/// Documents fetched per read when the order is made here.
const FETCH: usize = 1024;

impl Store {
    /// Calls `f` with every stored document whose sequence number is at least `from`, in
    /// sequence (insertion) order, with that number, from one consistent snapshot; stops
    /// early when `f` returns `false`. To go on after the last document seen, call it
    /// again with `from` = its sequence number + 1 (a later snapshot: documents written
    /// since come after it, as does a document replaced with another fingerprint, under its
    /// new number).
    ///
    /// A backend that lists records in order (RocksDB, memory) is read as it goes; for one
    /// that does not (Redis Cluster) the sequence numbers are gathered and sorted first
    /// (8 bytes of memory per document).
    pub fn scan_by_seq(
        &self,
        from: u64,
        mut f: impl FnMut(u64, StoredDoc) -> Result<bool>,
    ) -> Result<()> {
        let snap = self.backend.snapshot();
        if snap.scans_in_order() {
            return snap.scan_docs(from, &mut |(_, item)| {
                let (seq, doc) = item?;
                f(seq, doc)
            });
        }
        let mut seqs = Vec::new();
        snap.scan_docs(from, &mut |(_, item)| {
            seqs.push(item?.0);
            Ok(true)
        })?;
        seqs.sort_unstable();
        self.fetch_all(&*snap, seqs.into_iter(), f)
    }

    /// Calls `f` with every stored document whose id is after `after` (all when `None`),
    /// in the byte order of the ids, with its sequence number, from one consistent
    /// snapshot; stops early when `f` returns `false`. To go on after the last document
    /// seen, call it again with `after` = its id.
    ///
    /// On a backend that does not list ids in order (Redis Cluster) the ids after `after`
    /// are gathered and sorted first, which takes memory for each of them.
    pub fn scan_by_id(
        &self,
        after: Option<&str>,
        mut f: impl FnMut(u64, StoredDoc) -> Result<bool>,
    ) -> Result<()> {
        let snap = self.backend.snapshot();
        let after = after.map(str::as_bytes);
        let mut ids = Vec::new();
        if snap.scans_in_order() {
            // Streamed: the ids are read as the documents are fetched.
            let mut pending = Vec::with_capacity(FETCH);
            let mut go_on = true;
            snap.scan_ids(&mut |(id, value)| {
                if after.is_none_or(|a| id > a) {
                    pending.push(value?.seq);
                }
                if pending.len() == FETCH {
                    let batch = std::mem::take(&mut pending);
                    go_on = self.fetch_docs(&*snap, &batch, &mut f)?;
                }
                Ok(go_on)
            })?;
            if go_on {
                self.fetch_docs(&*snap, &pending, &mut f)?;
            }
            return Ok(());
        }
        snap.scan_ids(&mut |(id, value)| {
            if after.is_none_or(|a| id > a) {
                ids.push((id.to_vec(), value?.seq));
            }
            Ok(true)
        })?;
        ids.sort_unstable();
        self.fetch_all(&*snap, ids.into_iter().map(|(_, seq)| seq), f)
    }

    /// Reads the documents of `seqs` in batches and calls `f` with each in turn.
    fn fetch_all(
        &self,
        snap: &dyn Snapshot,
        seqs: impl Iterator<Item = u64>,
        mut f: impl FnMut(u64, StoredDoc) -> Result<bool>,
    ) -> Result<()> {
        let mut batch = Vec::with_capacity(FETCH);
        for seq in seqs {
            batch.push(seq);
            if batch.len() == FETCH
                && !self.fetch_docs(snap, &std::mem::take(&mut batch), &mut f)?
            {
                return Ok(());
            }
        }
        self.fetch_docs(snap, &batch, &mut f)?;
        Ok(())
    }

    /// Reads the documents of `seqs` and calls `f` with each in turn; whether to go on.
    /// A record missing under an id is corruption, or on a backend atomic per key a
    /// document half written or half deleted, left out.
    fn fetch_docs(
        &self,
        snap: &dyn Snapshot,
        seqs: &[u64],
        f: &mut impl FnMut(u64, StoredDoc) -> Result<bool>,
    ) -> Result<bool> {
        let docs = snap.docs(seqs)?;
        for (&seq, doc) in seqs.iter().zip(docs) {
            match doc {
                Some(doc) => {
                    if !f(seq, doc)? {
                        return Ok(false);
                    }
                }
                None => {
                    self.missing_record(|| format!("an id points at missing document {seq}"))?
                }
            }
        }
        Ok(true)
    }
}
