//! Reading every stored document out, in sequence or id order, from one snapshot — or, on
//! a backend without snapshots, through the ids listed at the start, following each
//! document replaced since — from a point where an earlier read stopped
//! ([`Store::scan_by_seq`], [`Store::scan_by_id`]).

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use crate::error::Result;
use crate::store::Store;
use crate::store::backend::{Consistency, Snapshot};
use crate::types::StoredDoc;

/// Documents fetched per read when the order is made here.
const FETCH: usize = 1024;

/// How long a listed id that still names a missing record is read again before it is left
/// out (see [`Store::fetch_following`]).
const MOVE_WAIT: Duration = Duration::from_secs(2);

impl Store {
    /// Calls `f` with every stored document whose sequence number is at least `from`, in
    /// sequence (insertion) order, with that number; stops early when `f` returns `false`.
    /// To go on after the last document seen, call it again with `from` = its sequence
    /// number + 1 (documents written since come after it, as does a document replaced with
    /// another fingerprint, under its new number).
    ///
    /// A backend with snapshots (RocksDB, memory) is read from one, as it goes. On one
    /// without (Redis Cluster) the ids are listed and sorted first (each id's bytes and 8
    /// more in memory) and each document is fetched through its id: every document stored
    /// before the call and not deleted during it comes exactly once, in its version when
    /// fetched. One replaced meanwhile by another fingerprint comes under its new number,
    /// in that number's place — or, when the scan is past it, at once, out of order.
    /// Documents stored during the call may or may not come.
    pub fn scan_by_seq(
        &self,
        from: u64,
        mut f: impl FnMut(u64, StoredDoc) -> Result<bool>,
    ) -> Result<()> {
        let snap = self.view(Consistency::PointInTime);
        if self.backend.properties().scans_in_order {
            return snap.scan_docs(from, &mut |(_, item)| {
                let (seq, doc) = item?;
                f(seq, doc)
            });
        }
        let mut listed = list_ids(&*snap, |_, seq| seq >= from)?;
        listed.sort_unstable_by_key(|&(_, seq)| seq);
        self.fetch_in_seq_order(&*snap, &listed, f)
    }

    /// [`Store::scan_by_seq`] of the listed (id, sequence number) pairs, sorted by number,
    /// on a backend without snapshots: a document found under a new number (replaced since
    /// the listing) waits for that number's place in the order, or the end.
    fn fetch_in_seq_order(
        &self,
        snap: &dyn Snapshot,
        listed: &[(Vec<u8>, u64)],
        mut f: impl FnMut(u64, StoredDoc) -> Result<bool>,
    ) -> Result<()> {
        // Found documents by number: one found under its listed number comes at once, one
        // found under a new number waits for that number's place (or comes at once, when
        // the scan is past it).
        let mut pending: BTreeMap<u64, StoredDoc> = BTreeMap::new();
        for chunk in listed.chunks(FETCH) {
            let found = self.fetch_following(snap, chunk)?;
            for (&(_, listed_seq), found) in chunk.iter().zip(found) {
                if let Some((seq, doc)) = found {
                    pending.insert(seq, doc);
                }
                while let Some(first) = pending.first_entry()
                    && *first.key() <= listed_seq
                {
                    let (seq, doc) = first.remove_entry();
                    if !f(seq, doc)? {
                        return Ok(());
                    }
                }
            }
        }
        for (seq, doc) in pending {
            if !f(seq, doc)? {
                break;
            }
        }
        Ok(())
    }

    /// Calls `f` with every stored document whose id is after `after` (all when `None`),
    /// in the byte order of the ids, with its sequence number; stops early when `f`
    /// returns `false`. To go on after the last document seen, call it again with
    /// `after` = its id.
    ///
    /// A backend with snapshots (RocksDB, memory) is read from one, as it goes. On one
    /// without (Redis Cluster) the ids after `after` are listed and sorted first (memory
    /// for each) and each document is fetched through its id: every document stored
    /// before the call and not deleted during it comes exactly once, in its version when
    /// fetched (a replaced one under its new number); documents stored during the call
    /// may or may not come.
    pub fn scan_by_id(
        &self,
        after: Option<&str>,
        mut f: impl FnMut(u64, StoredDoc) -> Result<bool>,
    ) -> Result<()> {
        let snap = self.view(Consistency::PointInTime);
        let after = after.map(str::as_bytes);
        if self.backend.properties().scans_in_order {
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
        let mut listed = list_ids(&*snap, |id, _| after.is_none_or(|a| id > a))?;
        listed.sort_unstable();
        for chunk in listed.chunks(FETCH) {
            for (seq, doc) in self.fetch_following(&*snap, chunk)?.into_iter().flatten() {
                if !f(seq, doc)? {
                    return Ok(());
                }
            }
        }
        Ok(())
    }

    /// The documents of `listed` (id, sequence number), in order, read from a backend
    /// without snapshots: a document whose record is gone by the time it is fetched was
    /// replaced or deleted since it was listed (or is being: a replace removes the old
    /// record before it points the id at the new one), so its id is read again and
    /// followed to its new record — `None` once the id is gone, or when the id still
    /// names the missing record after [`MOVE_WAIT`] (a writer that died midway; `check`
    /// reports it). On a backend with snapshots a missing record is corruption.
    fn fetch_following(
        &self,
        snap: &dyn Snapshot,
        listed: &[(Vec<u8>, u64)],
    ) -> Result<Vec<Option<(u64, StoredDoc)>>> {
        let first: Vec<u64> = listed.iter().map(|&(_, seq)| seq).collect();
        let mut docs = snap.docs(&first)?;
        let mut seqs: Vec<Option<u64>> = first.into_iter().map(Some).collect();
        let mut since = None;
        loop {
            let missing: Vec<usize> = (0..seqs.len())
                .filter(|&i| docs[i].is_none() && seqs[i].is_some())
                .collect();
            let Some(&one) = missing.first() else { break };
            let seq = listed[one].1;
            self.missing_record(|| format!("an id points at missing document {seq}"))?;
            // Measured from the first record missed, so that the ids are read again at
            // least once however long the first read took (a failover, say).
            if since.get_or_insert_with(Instant::now).elapsed() >= MOVE_WAIT {
                missing.iter().for_each(|&i| seqs[i] = None);
                break;
            }
            let ids: Vec<&str> = missing
                .iter()
                .map(|&i| std::str::from_utf8(&listed[i].0).unwrap_or_default())
                .collect();
            let mut moved = Vec::new();
            for (&i, now) in missing.iter().zip(snap.ids(&ids)?) {
                match now.map(|v| v.seq) {
                    None => seqs[i] = None,
                    Some(seq) if Some(seq) != seqs[i] => {
                        seqs[i] = Some(seq);
                        moved.push(i);
                    }
                    Some(_) => {}
                }
            }
            let at: Vec<u64> = moved.iter().filter_map(|&i| seqs[i]).collect();
            for (&i, doc) in moved.iter().zip(snap.docs(&at)?) {
                docs[i] = doc;
            }
            if moved.len() < missing.len() {
                std::thread::sleep(Duration::from_millis(2));
            }
        }
        Ok(seqs
            .into_iter()
            .zip(docs)
            .map(|(seq, doc)| Some((seq?, doc?)))
            .collect())
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

/// The `ids` entries `keep` accepts, as (id, sequence number), in the backend's order.
fn list_ids(
    snap: &dyn Snapshot,
    mut keep: impl FnMut(&[u8], u64) -> bool,
) -> Result<Vec<(Vec<u8>, u64)>> {
    let mut out = Vec::new();
    snap.scan_ids(&mut |(id, value)| {
        let seq = value?.seq;
        if keep(id, seq) {
            out.push((id.to_vec(), seq));
        }
        Ok(true)
    })?;
    Ok(out)
}
