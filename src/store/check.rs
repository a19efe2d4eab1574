//! Integrity: [`Store::check`] proves tables, ids and documents agree; [`Store::repair`]
//! rebuilds the derived data from the documents.

use std::collections::HashMap;

use super::Store;
use super::backend::{Change, ChangeSet, Consistency, MetaKey, Snapshot};
use super::codec::{self, IdValue};
use super::salvage::RepairReport;
use crate::error::Result;
use crate::index::bands::{self, Bands};
use crate::types::StoredDoc;

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

/// What `check` keeps of each document: seq → (fingerprint, id, content hash, bands).
type DocIndex = HashMap<u64, (u64, String, Option<u128>, Bands)>;

/// What a repair keeps of each readable record: seq, fingerprint, id, content hash, bands.
type Salvaged = (u64, u64, String, Option<u128>, Bands);

/// Problems for documents that `seen` does not count as expected.
fn expect_once(
    report: &mut CheckReport,
    docs: &DocIndex,
    seen: &HashMap<u64, u32>,
    what: impl Fn(u64, &str, u32) -> Option<String>,
) {
    for (seq, (_, id, _, _)) in docs {
        if let Some(p) = what(*seq, id, seen.get(seq).copied().unwrap_or(0)) {
            report.problem(p);
        }
    }
}

impl Store {
    /// Verifies the store's invariants from one snapshot: every document is in `ids` and in
    /// every table exactly once under its permuted fingerprint; no table or `ids` entry
    /// lacks its document; the counters match. Reads everything; memory grows with the
    /// number of documents (~56 bytes each plus ids). It reads only its snapshot, so writers
    /// go on while it runs (it does not take the writer lock).
    pub fn check(&self) -> Result<CheckReport> {
        let snap = self.view(Consistency::PointInTime);
        let mut report = CheckReport::default();
        let docs = check_docs(snap.as_ref(), &mut report)?;
        check_ids(snap.as_ref(), &docs, &mut report)?;
        check_exact(snap.as_ref(), &docs, &mut report)?;
        for t in 0..self.manifest.tables() {
            self.check_table(snap.as_ref(), t, &docs, &mut report)?;
        }
        Ok(report)
    }

    /// Table `t`: one entry per document under its key (permuted fingerprint, or band key
    /// for a document that has that band), nothing else.
    fn check_table(
        &self,
        snap: &dyn Snapshot,
        t: usize,
        docs: &DocIndex,
        report: &mut CheckReport,
    ) -> Result<()> {
        let name = format!("t{t:02}");
        let mut seen: HashMap<u64, u32> = HashMap::with_capacity(docs.len());
        let mut entries = 0u64;
        snap.scan_table(t, 0, None, &mut |entry| {
            entries += 1;
            match entry {
                Ok((kfp, seq)) => match docs.get(&seq) {
                    Some((fp, _, _, bands))
                        if self.manifest.table_key(t, *fp, bands) == Some(kfp) =>
                    {
                        *seen.entry(seq).or_default() += 1
                    }
                    Some(_) => report.problem(format!(
                        "table {name}: entry for document {seq} has a wrong key"
                    )),
                    None => {
                        report.problem(format!("table {name}: entry for missing document {seq}"))
                    }
                },
                Err(e) => report.problem(format!("table {name}: {e}")),
            }
            Ok(true)
        })?;
        let keyed = |seq: u64| {
            let (fp, _, _, bands) = &docs[&seq];
            u32::from(self.manifest.table_key(t, *fp, bands).is_some())
        };
        expect_once(report, docs, &seen, |seq, id, n| {
            (n != keyed(seq)).then(|| format!("table {name}: document {seq} ({id:?}) is missing"))
        });
        report.table_entries.push(entries);
        Ok(())
    }

    /// Rebuilds the derived data (`ids`, `exact`, every table, the counters) from `docs`.
    /// When two documents claim one id, the later one is kept and the earlier one deleted.
    ///
    /// The documents are read first, stepping over damaged parts of `docs` (each such range
    /// of sequence numbers is lost and listed in the report), so a store whose documents
    /// cannot be read at all is left as it was. The derived spaces are then dropped unread
    /// — damage there cannot stop the repair — and rebuilt. Crash-safe: a `repair-pending`
    /// marker is set before they are dropped and removed last; a store opened for writing
    /// with it runs the repair again. It also recovers a handle whose bulk load failed
    /// midway ([`crate::Error::BulkLoadFailed`]): the load is complete or undone afterwards.
    pub fn repair(&mut self) -> Result<RepairReport> {
        self.check_writable()?;
        let mut report = RepairReport::default();
        let mut docs: Vec<Salvaged> = Vec::new();
        self.salvage_docs(&mut report, |seq, doc| {
            let b = bands::of(doc.sketch.as_ref());
            docs.push((seq, doc.fp, doc.id, doc.content_hash, b))
        })?;
        self.write_meta(MetaKey::RepairPending, Some(Vec::new()))?;
        self.delete_undecodable(&report.undecodable)?;
        let prefix_bits = self.manifest.prefix_bits();
        self.backend
            .reset_derived(&prefix_bits, &report.unreadable)?;
        let mut counters = self.lock();
        let live_before = counters.live;
        let kept = self.rebuild_derived(&docs)?;
        let next = docs
            .iter()
            .map(|d| d.0 + 1)
            .max()
            .unwrap_or(0)
            .max(counters.next_seq);
        self.commit(
            &mut counters,
            ChangeSet::new(),
            (next, kept),
            self.durability(),
        )?;
        self.write_meta(MetaKey::RepairPending, None)?;
        self.forget_failed_load(&mut counters)?;
        report.kept = kept;
        if !report.unreadable.is_empty() || !report.undecodable.is_empty() {
            report.lost = live_before.saturating_sub(kept);
        }
        Ok(report)
    }

    /// Deletes the document records at `seqs` (records that do not decode).
    fn delete_undecodable(&self, seqs: &[u64]) -> Result<()> {
        if seqs.is_empty() {
            return Ok(());
        }
        let mut changes = ChangeSet::new();
        for seq in seqs {
            changes.push(Change::DeleteDoc(*seq));
        }
        self.backend.write(&changes, self.durability())
    }

    /// Writes the derived entries of `docs` (seq, fingerprint, id, content hash) into the
    /// emptied derived spaces; of two documents with one id the earlier is deleted. Returns
    /// the number kept.
    fn rebuild_derived(&self, docs: &[Salvaged]) -> Result<u64> {
        let mut latest: HashMap<&str, u64> = HashMap::new();
        for (seq, _, id, _, _) in docs {
            latest.insert(id, *seq);
        }
        let mut kept = 0u64;
        for chunk in docs.chunks(10_000) {
            let mut changes = ChangeSet::new();
            for (seq, fp, id, hash, bands) in chunk {
                if latest[id.as_str()] != *seq {
                    changes.push(Change::DeleteDoc(*seq));
                    continue;
                }
                kept += 1;
                self.push_derived(&mut changes, (*seq, *fp, bands), id, *hash);
            }
            self.backend.write(&changes, self.durability())?;
        }
        Ok(kept)
    }

    /// Adds to `changes` the derived entries of document `seq`: tables, `exact`, `ids`.
    fn push_derived(
        &self,
        changes: &mut ChangeSet,
        (seq, fp, bands): (u64, u64, &Bands),
        id: &str,
        hash: Option<u128>,
    ) {
        for t in 0..self.manifest.tables() {
            if let Some(key) = self.manifest.table_key(t, fp, bands) {
                changes.push(Change::PutTable(t, key, seq));
            }
        }
        if let Some(h) = hash {
            changes.push(Change::PutExact(h, seq));
        }
        let fp = self.stored_fp(fp);
        changes.push(Change::PutId(id.to_owned(), IdValue { seq, fp, hash }));
    }
}

/// `docs`: every record decodes; the counters match them. Returns what the other checks
/// compare against.
fn check_docs(snap: &dyn Snapshot, report: &mut CheckReport) -> Result<DocIndex> {
    let mut docs: DocIndex = HashMap::new();
    let mut max_seq = None;
    snap.scan_docs(0, &mut |(k, item)| {
        report.docs += 1;
        match item {
            Ok((seq, doc)) => {
                max_seq = Some(seq);
                let bands = bands::of(doc.sketch.as_ref());
                let StoredDoc {
                    fp,
                    id,
                    content_hash,
                    ..
                } = doc;
                docs.insert(seq, (fp, id, content_hash, bands));
            }
            Err(e) => report.problem(format!("docs entry {k:02x?}: {e}")),
        }
        Ok(true)
    })?;
    let (next_seq, live) = match snap.meta(MetaKey::Counters)? {
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
    Ok(docs)
}

/// `ids`: each points at a document with that id and fingerprint; each document has one.
fn check_ids(snap: &dyn Snapshot, docs: &DocIndex, report: &mut CheckReport) -> Result<()> {
    let mut with_id: HashMap<u64, u32> = HashMap::new();
    snap.scan_ids(&mut |(k, value)| {
        report.ids += 1;
        let id = String::from_utf8_lossy(k);
        match value {
            Ok(IdValue { seq, fp, hash }) => match docs.get(&seq) {
                Some((dfp, did, dhash, _))
                    if fp.is_none_or(|fp| fp == *dfp) && did.as_bytes() == k && *dhash == hash =>
                {
                    *with_id.entry(seq).or_default() += 1
                }
                Some(_) => report.problem(format!("id {id:?} disagrees with document {seq}")),
                None => report.problem(format!("id {id:?} points at missing document {seq}")),
            },
            Err(e) => report.problem(format!("id {id:?}: {e}")),
        }
        Ok(true)
    })?;
    expect_once(report, docs, &with_id, |seq, id, n| match n {
        1 => None,
        0 => Some(format!("document {seq} ({id:?}) has no ids entry")),
        n => Some(format!("document {seq} ({id:?}) has {n} ids entries")),
    });
    Ok(())
}

/// `exact`: one entry per document with a content hash, under that hash; nothing else.
fn check_exact(snap: &dyn Snapshot, docs: &DocIndex, report: &mut CheckReport) -> Result<()> {
    let mut seen: HashMap<u64, u32> = HashMap::new();
    snap.scan_exact(&mut |entry| {
        report.exact_entries += 1;
        match entry {
            Ok((hash, seq)) => match docs.get(&seq) {
                Some((_, _, Some(h), _)) if *h == hash => *seen.entry(seq).or_default() += 1,
                Some(_) => report.problem(format!(
                    "exact: entry for document {seq} has a wrong content hash"
                )),
                None => report.problem(format!("exact: entry for missing document {seq}")),
            },
            Err(e) => report.problem(format!("exact: {e}")),
        }
        Ok(true)
    })?;
    for (seq, (_, id, hash, _)) in docs {
        if hash.is_some() && seen.get(seq) != Some(&1) {
            report.problem(format!(
                "exact: document {seq} ({id:?}) has {} entries, not 1",
                seen.get(seq).copied().unwrap_or(0)
            ));
        }
    }
    Ok(())
}
