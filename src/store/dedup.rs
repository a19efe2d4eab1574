//! Deduplication: [`Store::check_and_insert`] stores a document only when no stored
//! document is an exact or near duplicate of it, atomically; [`Store::dedup`] finds every
//! near-duplicate pair of a store and clusters them.

use std::sync::Mutex;

use rayon::prelude::*;
use rocksdb::ReadOptions;

use super::{DOCS, EXACT, Entry, IDS, Store, View, sort_matches, validate_id};
use crate::cluster::{DedupReport, DuplicatePair, UnionFind, scan_table};
use crate::codec;
use crate::document::{DocMeta, Document, Match};
use crate::error::{Error, Result};
use crate::fingerprint::Fingerprint;

/// What [`Store::check_and_insert`] found, and whether it stored the document.
///
/// Only [`CheckOutcome::New`] stores anything; a duplicate leaves the store unchanged.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum CheckOutcome {
    /// No stored document was a duplicate: the document was stored.
    #[non_exhaustive]
    New {
        /// The document's fingerprint.
        fp: Fingerprint,
        /// True when it replaced an earlier version stored under the same id (whose content
        /// was neither an exact nor a near duplicate of the new one).
        replaced: bool,
    },
    /// A stored document has the same content hash (same analyzed title and text); the
    /// document was not stored.
    #[non_exhaustive]
    ExactDuplicate {
        /// The id of the stored document (of several with that content: the one stored
        /// first, i.e. with the smallest sequence number).
        of: String,
        /// The document's fingerprint.
        fp: Fingerprint,
    },
    /// A stored document lies within Hamming distance k; the document was not stored.
    #[non_exhaustive]
    NearDuplicate {
        /// The id of the nearest stored document (ties: the smallest id).
        of: String,
        /// Its Hamming distance to the document (0 when the fingerprints are equal but no
        /// content hash matched, e.g. for fingerprint-only records).
        distance: u32,
        /// The document's fingerprint.
        fp: Fingerprint,
    },
}

impl CheckOutcome {
    /// True when the document was stored.
    pub fn is_new(&self) -> bool {
        matches!(self, CheckOutcome::New { .. })
    }

    /// The id of the stored document this one duplicates, if it is a duplicate.
    pub fn duplicate_of(&self) -> Option<&str> {
        match self {
            CheckOutcome::New { .. } => None,
            CheckOutcome::ExactDuplicate { of, .. } | CheckOutcome::NearDuplicate { of, .. } => {
                Some(of)
            }
        }
    }

    /// The Hamming distance to the duplicate: 0 for an exact duplicate, `None` when new.
    pub fn distance(&self) -> Option<u32> {
        match self {
            CheckOutcome::New { .. } => None,
            CheckOutcome::ExactDuplicate { .. } => Some(0),
            CheckOutcome::NearDuplicate { distance, .. } => Some(*distance),
        }
    }

    /// The checked document's fingerprint.
    pub fn fingerprint(&self) -> Fingerprint {
        match self {
            CheckOutcome::New { fp, .. }
            | CheckOutcome::ExactDuplicate { fp, .. }
            | CheckOutcome::NearDuplicate { fp, .. } => *fp,
        }
    }
}

impl Store {
    /// Stores `doc` unless a stored document duplicates it, atomically.
    ///
    /// 1. A stored document with the same content hash
    ///    ([`crate::Fingerprinter::content_hash`]) → [`CheckOutcome::ExactDuplicate`]
    ///    (no table probe).
    /// 2. Else a stored document within Hamming distance `k` →
    ///    [`CheckOutcome::NearDuplicate`] of the nearest (ties: smallest id).
    /// 3. Else the document is stored (with its content hash) → [`CheckOutcome::New`].
    ///
    /// The insert, and the check it depends on, run under the writer lock: of many threads
    /// checking near-identical documents at once, exactly one gets `New`, and every check
    /// sees every insert acknowledged before it. (A first check runs without the lock, so
    /// duplicates are answered in parallel; it is repeated under the lock only when some
    /// write happened in between.)
    ///
    /// **Same id:** a previously stored version under the same id is compared like any other
    /// stored document. A re-crawled unchanged page is an `ExactDuplicate` of itself (the
    /// store is not touched); a changed page within `k` of its old version is a
    /// `NearDuplicate` of itself (the old version stays); a page that changed beyond `k` (and
    /// duplicates nothing else) replaces its old version (`New { replaced: true }`).
    ///
    /// Errors: [`Error::KTooLarge`] for `k > k_max`, [`Error::EmptyDocument`],
    /// [`Error::InvalidId`], [`Error::ReadOnly`], storage errors.
    pub fn check_and_insert(&self, doc: &Document, k: u32) -> Result<CheckOutcome> {
        let (fp, meta) = self.fingerprint_with_meta(doc)?;
        self.check_and_insert_fingerprint(&doc.id, fp, meta, k)
    }

    /// [`Store::check_and_insert`] for a precomputed fingerprint. The exact path applies only
    /// when `meta.content_hash` is set; without it a stored equal fingerprint is a
    /// [`CheckOutcome::NearDuplicate`] at distance 0.
    pub fn check_and_insert_fingerprint(
        &self,
        id: &str,
        fp: Fingerprint,
        meta: DocMeta,
        k: u32,
    ) -> Result<CheckOutcome> {
        self.check_writable()?;
        validate_id(id)?;
        self.manifest.layout.tables_for_k(k)?;
        // Optimistic check without the writer lock (checks of many threads run in
        // parallel): a duplicate found here is a duplicate as of this call, and nothing is
        // written. Every write goes through the lock and raises RocksDB's sequence number,
        // so if it is unchanged once the lock is held, no write came in between and the
        // check need not be repeated.
        let before = self.db.latest_sequence_number();
        if let Some(dup) = self.find_duplicate(fp, meta.content_hash, k)? {
            return Ok(dup);
        }
        let mut counters = self.lock();
        if self.db.latest_sequence_number() != before {
            if let Some(dup) = self.find_duplicate(fp, meta.content_hash, k)? {
                return Ok(dup);
            }
        }
        let entry = Entry {
            id: id.to_owned(),
            fp,
            meta,
        };
        let out = self.write_entries(&mut counters, std::slice::from_ref(&entry))?;
        Ok(CheckOutcome::New {
            fp,
            replaced: out.replaced > 0,
        })
    }

    /// The exact duplicate (by `hash`), else the nearest near duplicate within `k`.
    fn find_duplicate(
        &self,
        fp: Fingerprint,
        hash: Option<u128>,
        k: u32,
    ) -> Result<Option<CheckOutcome>> {
        if let Some(hash) = hash {
            if let Some(of) = self.exact_match(hash)? {
                return Ok(Some(CheckOutcome::ExactDuplicate { of, fp }));
            }
        }
        Ok(self.nearest(fp, k)?.map(|m| CheckOutcome::NearDuplicate {
            of: m.doc.id,
            distance: m.distance,
            fp,
        }))
    }

    /// The id of the first stored document (smallest seq) with content hash `hash`.
    fn exact_match(&self, hash: u128) -> Result<Option<String>> {
        let prefix = codec::exact_prefix(hash);
        let mut ro = ReadOptions::default();
        if let Some(next) = hash.checked_add(1) {
            ro.set_iterate_upper_bound(codec::exact_prefix(next));
        }
        let mut it = self.db.raw_iterator_cf_opt(self.cf(EXACT)?, ro);
        it.seek(prefix);
        let found = match it.key() {
            Some(key) if key.starts_with(&prefix) => Some(codec::decode_exact_key(key)?.1),
            _ => None,
        };
        it.status()?;
        let Some(seq) = found else { return Ok(None) };
        match self.db.get_cf(self.cf(DOCS)?, codec::doc_key(seq))? {
            Some(bytes) => Ok(Some(codec::decode_doc(&bytes)?.id)),
            None => Err(Error::Corrupt(format!(
                "an exact entry points at missing document {seq}"
            ))),
        }
    }

    /// The nearest stored document within `k` of `fp` (ties: smallest id), reading only the
    /// records at the smallest distance.
    fn nearest(&self, fp: Fingerprint, k: u32) -> Result<Option<Match>> {
        let view = self.view();
        let mut best: Vec<u64> = Vec::new();
        let mut best_d = u32::MAX;
        self.probe(&view, fp.0, k, |seq, d| {
            if d <= k && d <= best_d {
                if d < best_d {
                    best.clear();
                    best_d = d;
                }
                best.push(seq);
            }
        })?;
        if best.is_empty() {
            return Ok(None);
        }
        best.sort_unstable();
        best.dedup();
        let ro = view.ro();
        let keys: Vec<[u8; 8]> = best.iter().map(|&seq| codec::doc_key(seq)).collect();
        let values = self
            .db
            .batched_multi_get_cf_opt(self.cf(DOCS)?, &keys, true, &ro);
        let mut out = Vec::with_capacity(best.len());
        for (seq, value) in best.iter().zip(values) {
            let bytes = value?.ok_or_else(|| {
                Error::Corrupt(format!("a table entry points at missing document {seq}"))
            })?;
            out.push(Match {
                distance: best_d,
                doc: codec::decode_doc(&bytes)?,
            });
        }
        sort_matches(&mut out);
        Ok(out.into_iter().next())
    }
}

impl Store {
    /// Every pair of stored documents within Hamming distance `k` (≤ k_max), clustered.
    ///
    /// Walks each table of the probe set of `k` in key order, comparing each key only with
    /// the following keys of the same prefix (see [`crate::cluster`]); a pair is counted by
    /// the first table in which it shares the prefix. Clusters are kept by a union-find over
    /// dense document indices. Reads from one snapshot. Memory: about 16 bytes per document
    /// plus the ids of the clustered documents; time: one scan of `ids`, of each probed
    /// table, and of `ids` again.
    pub fn dedup(&self, k: u32) -> Result<DedupReport> {
        self.dedup_inner(k, None)
    }

    /// [`Store::dedup`], calling `on_pair` with every pair (in table-walk order). Holds
    /// every id in memory while it runs.
    pub fn dedup_pairs(
        &self,
        k: u32,
        mut on_pair: impl FnMut(DuplicatePair) -> Result<()>,
    ) -> Result<DedupReport> {
        self.dedup_inner(k, Some(&mut on_pair))
    }

    fn dedup_inner(
        &self,
        k: u32,
        mut on_pair: Option<&mut dyn FnMut(DuplicatePair) -> Result<()>>,
    ) -> Result<DedupReport> {
        let layout = &self.manifest.layout;
        let probe = layout.tables_for_k(k)?;
        let view = self.view();
        let ro = || view.ro();
        // Dense indices: position in the sorted list of live sequence numbers.
        let want_ids = on_pair.is_some();
        let mut rows: Vec<(u64, String)> = Vec::new();
        let mut seqs: Vec<u64> = Vec::new();
        self.scan_ids(ro(), |id, seq| {
            if want_ids {
                rows.push((seq, id.to_owned()));
            } else {
                seqs.push(seq);
            }
        })?;
        let names: Vec<String> = if want_ids {
            rows.sort_unstable();
            seqs = rows.iter().map(|r| r.0).collect();
            rows.into_iter().map(|r| r.1).collect()
        } else {
            seqs.sort_unstable();
            Vec::new()
        };
        let index = |seq: u64| -> Result<u32> {
            seqs.binary_search(&seq).map(|i| i as u32).map_err(|_| {
                Error::Corrupt(format!(
                    "a table entry points at document {seq}, which has no id"
                ))
            })
        };
        let mut uf = UnionFind::new(seqs.len())?;
        let mut pairs = 0u64;
        if let Some(f) = on_pair.as_mut() {
            // Pairs go to the caller in table-walk order: one table after the other.
            for pos in 0..probe.len() {
                self.walk_table(&view, pos, k, |sa, sb, d| {
                    let (a, b) = (index(sa)?, index(sb)?);
                    pairs += 1;
                    uf.union(a, b);
                    let (x, y) = (&names[a as usize], &names[b as usize]);
                    let (a, b) = if x <= y { (x, y) } else { (y, x) };
                    f(DuplicatePair {
                        a: a.clone(),
                        b: b.clone(),
                        distance: d,
                    })
                })?;
            }
        } else {
            // The tables are walked in parallel (each pair is owned by one table, whatever
            // the order); the rare pairs meet in one locked union-find.
            let shared = Mutex::new((uf, 0u64));
            (0..probe.len()).into_par_iter().try_for_each(|pos| {
                self.walk_table(&view, pos, k, |sa, sb, _| {
                    let (a, b) = (index(sa)?, index(sb)?);
                    let mut s = shared.lock().unwrap_or_else(|e| e.into_inner());
                    s.0.union(a, b);
                    s.1 += 1;
                    Ok(())
                })
            })?;
            (uf, pairs) = shared.into_inner().unwrap_or_else(|e| e.into_inner());
        }
        // Ids of the clustered documents only.
        let sets = uf.sets(2);
        let mut cluster_of = vec![u32::MAX; seqs.len()];
        for (c, set) in sets.iter().enumerate() {
            for &x in set {
                cluster_of[x as usize] = c as u32;
            }
        }
        let mut clusters: Vec<Vec<String>> =
            sets.iter().map(|s| Vec::with_capacity(s.len())).collect();
        if want_ids {
            for (x, &c) in cluster_of.iter().enumerate() {
                if c != u32::MAX {
                    clusters[c as usize].push(names[x].clone());
                }
            }
        } else {
            let mut failed = None;
            self.scan_ids(ro(), |id, seq| match index(seq) {
                Ok(x) if cluster_of[x as usize] != u32::MAX => {
                    clusters[cluster_of[x as usize] as usize].push(id.to_owned())
                }
                Ok(_) => {}
                Err(e) => failed = Some(e),
            })?;
            if let Some(e) = failed {
                return Err(e);
            }
        }
        for c in &mut clusters {
            c.sort_unstable();
        }
        clusters.sort_unstable();
        Ok(DedupReport {
            documents: seqs.len() as u64,
            pairs,
            clusters,
        })
    }

    /// Walks table `probe[pos]` of the probe set of `k` in key order and calls
    /// `emit(seq a, seq b, distance)` for every pair within `k` that this table owns.
    fn walk_table(
        &self,
        view: &View<'_>,
        pos: usize,
        k: u32,
        emit: impl FnMut(u64, u64, u32) -> Result<()>,
    ) -> Result<()> {
        let layout = &self.manifest.layout;
        let probe = layout.tables_for_k(k)?;
        let mut it = self
            .db
            .raw_iterator_cf_opt(self.cf(&self.table_cfs[probe[pos]])?, view.ro());
        it.seek_to_first();
        let keys = std::iter::from_fn(|| {
            let key = it.key()?;
            let item = codec::decode_table_key(key);
            it.next();
            Some(item)
        });
        scan_table(layout, probe, pos, k, keys, emit)?;
        it.status()?;
        Ok(())
    }

    /// Calls `f(id, seq)` for every `ids` entry.
    fn scan_ids(&self, ro: ReadOptions, mut f: impl FnMut(&str, u64)) -> Result<()> {
        let mut it = self.db.raw_iterator_cf_opt(self.cf(IDS)?, ro);
        it.seek_to_first();
        while let (Some(k), Some(v)) = (it.key(), it.value()) {
            let id =
                std::str::from_utf8(k).map_err(|_| Error::Corrupt("an id is not UTF-8".into()))?;
            f(id, codec::decode_id_value(v)?.seq);
            it.next();
        }
        it.status()?;
        Ok(())
    }
}
