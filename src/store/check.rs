//! Integrity: [`Store::check`] proves tables, ids and documents agree; [`Store::repair`]
//! rebuilds the derived data from the documents.

use std::collections::HashMap;

use rocksdb::{ColumnFamily, DB, WriteBatch};

use super::{DOCS, EXACT, IDS, META, Store};
use crate::codec;
use crate::document::StoredDoc;
use crate::error::Result;

/// The findings of [`Store::check`].
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CheckReport {
    /// Documents in `docs`.
    pub docs: u64,
    /// Entries in `ids`.
    pub ids: u64,
    /// Entries per table.
    pub table_entries: Vec<u64>,
    /// Entries in `exact` (one per document stored with a content hash).
    pub exact_entries: u64,
    /// Number of problems found.
    pub problem_count: u64,
    /// The first [`CheckReport::MAX_LISTED`] problems, described.
    pub problems: Vec<String>,
}

impl CheckReport {
    /// How many problems are described in [`CheckReport::problems`].
    pub const MAX_LISTED: usize = 100;

    /// True when nothing is wrong.
    pub fn is_ok(&self) -> bool {
        self.problem_count == 0
    }

    fn problem(&mut self, what: String) {
        self.problem_count += 1;
        if self.problems.len() < Self::MAX_LISTED {
            self.problems.push(what);
        }
    }
}

impl Store {
    /// Verifies the store's invariants from one snapshot: every document is in `ids` and in
    /// every table exactly once under its permuted fingerprint; no table or `ids` entry
    /// lacks its document; the counters match. Reads everything; memory grows with the
    /// number of documents (~40 bytes each plus ids).
    pub fn check(&self) -> Result<CheckReport> {
        let _writer = self.lock();
        let view = self.view();
        let ro = || view.ro();
        let mut report = CheckReport::default();
        // seq -> (fp, id, content hash)
        let mut docs: HashMap<u64, (u64, String, Option<u128>)> = HashMap::new();
        let mut max_seq = None;
        let mut it = self.db.raw_iterator_cf_opt(self.cf(DOCS)?, ro());
        it.seek_to_first();
        while let (Some(k), Some(v)) = (it.key(), it.value()) {
            report.docs += 1;
            match (codec::decode_doc_key(k), codec::decode_doc(v)) {
                (Ok(seq), Ok(doc)) => {
                    max_seq = Some(seq);
                    docs.insert(seq, (doc.fp, doc.id, doc.content_hash));
                }
                (Err(e), _) | (_, Err(e)) => report.problem(format!("docs entry {k:02x?}: {e}")),
            }
            it.next();
        }
        it.status()?;
        let (next_seq, live) = match view.get(&self.db, self.cf(META)?, codec::COUNTERS_KEY)? {
            Some(b) => codec::decode_counters(&b)?,
            None => (0, 0),
        };
        if live != report.docs {
            report.problem(format!(
                "the counters say {live} documents, docs holds {}",
                report.docs
            ));
        }
        if max_seq.is_some_and(|m| m >= next_seq) {
            report.problem(format!(
                "the next sequence number {next_seq} is not above the largest in use"
            ));
        }
        // ids: each points at a document with that id and fingerprint; each document has one.
        let mut with_id: HashMap<u64, u32> = HashMap::new();
        let mut it = self.db.raw_iterator_cf_opt(self.cf(IDS)?, ro());
        it.seek_to_first();
        while let (Some(k), Some(v)) = (it.key(), it.value()) {
            report.ids += 1;
            let id = String::from_utf8_lossy(k);
            match codec::decode_id_value(v) {
                Ok(codec::IdValue { seq, fp, hash }) => match docs.get(&seq) {
                    Some((dfp, did, dhash))
                        if *dfp == fp && did.as_bytes() == k && *dhash == hash =>
                    {
                        *with_id.entry(seq).or_default() += 1
                    }
                    Some(_) => report.problem(format!("id {id:?} disagrees with document {seq}")),
                    None => report.problem(format!("id {id:?} points at missing document {seq}")),
                },
                Err(e) => report.problem(format!("id {id:?}: {e}")),
            }
            it.next();
        }
        it.status()?;
        for (seq, (_, id, _)) in &docs {
            match with_id.get(seq) {
                Some(1) => {}
                None => report.problem(format!("document {seq} ({id:?}) has no ids entry")),
                Some(n) => report.problem(format!("document {seq} ({id:?}) has {n} ids entries")),
            }
        }
        // exact: one entry per document with a content hash, under that hash; nothing else.
        let mut exact_seen: HashMap<u64, u32> = HashMap::new();
        let mut it = self.db.raw_iterator_cf_opt(self.cf(EXACT)?, ro());
        it.seek_to_first();
        while let Some(k) = it.key() {
            report.exact_entries += 1;
            match codec::decode_exact_key(k) {
                Ok((hash, seq)) => match docs.get(&seq) {
                    Some((_, _, Some(h))) if *h == hash => *exact_seen.entry(seq).or_default() += 1,
                    Some(_) => report.problem(format!(
                        "exact: entry for document {seq} has a wrong content hash"
                    )),
                    None => report.problem(format!("exact: entry for missing document {seq}")),
                },
                Err(e) => report.problem(format!("exact: {e}")),
            }
            it.next();
        }
        it.status()?;
        for (seq, (_, id, hash)) in &docs {
            if hash.is_some() && exact_seen.get(seq) != Some(&1) {
                report.problem(format!(
                    "exact: document {seq} ({id:?}) has {} entries, not 1",
                    exact_seen.get(seq).copied().unwrap_or(0)
                ));
            }
        }
        // Tables: one entry per document under its permuted fingerprint, nothing else.
        for (t, name) in self.table_cfs.iter().enumerate() {
            let mut seen: HashMap<u64, u32> = HashMap::with_capacity(docs.len());
            let mut entries = 0u64;
            let mut it = self.db.raw_iterator_cf_opt(self.cf(name)?, ro());
            it.seek_to_first();
            while let Some(k) = it.key() {
                entries += 1;
                match codec::decode_table_key(k) {
                    Ok((kfp, seq)) => match docs.get(&seq) {
                        Some((fp, _, _)) if self.manifest.layout.permute(t, *fp) == kfp => {
                            *seen.entry(seq).or_default() += 1
                        }
                        Some(_) => report.problem(format!(
                            "table {name}: entry for document {seq} has a wrong key"
                        )),
                        None => report
                            .problem(format!("table {name}: entry for missing document {seq}")),
                    },
                    Err(e) => report.problem(format!("table {name}: {e}")),
                }
                it.next();
            }
            it.status()?;
            for (seq, (_, id, _)) in &docs {
                if seen.get(seq) != Some(&1) {
                    report.problem(format!("table {name}: document {seq} ({id:?}) is missing"));
                }
            }
            report.table_entries.push(entries);
        }
        Ok(report)
    }

    /// Rebuilds the derived data (`ids`, `exact`, every table, the counters) from `docs`. When two
    /// documents claim one id, the later one is kept and the earlier one deleted. Returns
    /// the number of documents kept.
    pub fn repair(&self) -> Result<u64> {
        self.check_writable()?;
        let mut counters = self.lock();
        let mut docs: Vec<(u64, u64, String, Option<u128>)> = Vec::new();
        self.for_each_seq_doc(|seq, doc| {
            docs.push((seq, doc.fp, doc.id, doc.content_hash));
            Ok(())
        })?;
        let mut latest: HashMap<&str, u64> = HashMap::new();
        for (seq, _, id, _) in &docs {
            latest.insert(id, *seq);
        }
        let mut batch = WriteBatch::default();
        for name in [IDS, EXACT]
            .into_iter()
            .chain(self.table_cfs.iter().map(String::as_str))
        {
            clear_cf(&self.db, self.cf(name)?, &mut batch)?;
        }
        self.write(batch)?;
        let mut kept = 0u64;
        for chunk in docs.chunks(10_000) {
            let mut batch = WriteBatch::default();
            for (seq, fp, id, hash) in chunk {
                if latest[id.as_str()] != *seq {
                    batch.delete_cf(self.cf(DOCS)?, codec::doc_key(*seq));
                    continue;
                }
                kept += 1;
                let value = codec::IdValue {
                    seq: *seq,
                    fp: *fp,
                    hash: *hash,
                };
                batch.put_cf(self.cf(IDS)?, id.as_bytes(), codec::encode_id_value(value));
                if let Some(h) = hash {
                    batch.put_cf(self.cf(EXACT)?, codec::exact_key(*h, *seq), []);
                }
                for (t, name) in self.table_cfs.iter().enumerate() {
                    batch.put_cf(
                        self.cf(name)?,
                        codec::table_key(self.manifest.layout.permute(t, *fp), *seq),
                        [],
                    );
                }
            }
            self.write(batch)?;
        }
        let next = docs
            .iter()
            .map(|d| d.0 + 1)
            .max()
            .unwrap_or(0)
            .max(counters.next_seq);
        self.commit(&mut counters, WriteBatch::default(), next, kept, false)?;
        Ok(kept)
    }

    /// Like [`Store::for_each_doc`], with each document's sequence number.
    pub(super) fn for_each_seq_doc(
        &self,
        mut f: impl FnMut(u64, StoredDoc) -> Result<()>,
    ) -> Result<()> {
        let view = self.view();
        let mut it = self.db.raw_iterator_cf_opt(self.cf(DOCS)?, view.ro());
        it.seek_to_first();
        while let (Some(k), Some(v)) = (it.key(), it.value()) {
            f(codec::decode_doc_key(k)?, codec::decode_doc(v)?)?;
            it.next();
        }
        it.status()?;
        Ok(())
    }
}

/// Adds the deletion of every key of `cf` to `batch` (one range tombstone, plus the
/// largest keys, which a range's exclusive end cannot cover).
fn clear_cf(db: &DB, cf: &ColumnFamily, batch: &mut WriteBatch) -> Result<()> {
    let mut it = db.raw_iterator_cf(cf);
    it.seek_to_first();
    let Some(first) = it.key().map(<[u8]>::to_vec) else {
        return Ok(());
    };
    it.seek_to_last();
    let last = it
        .key()
        .map(<[u8]>::to_vec)
        .unwrap_or_else(|| first.clone());
    it.status()?;
    batch.delete_range_cf(cf, &first, &last);
    batch.delete_cf(cf, &last);
    Ok(())
}
