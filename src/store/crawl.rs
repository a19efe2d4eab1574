//! The crawler's question: [`Store::check_and_insert`] stores a document only when no
//! stored document is an exact or near duplicate of it, atomically.

use std::time::{Duration, Instant};

use super::backend::{Atomicity, Consistency, Shared};
use super::group::{Answer, Ask};
use super::request::{Incoming, Rule};
use super::{InsertOutcome, Store, View, validate_entry};
use crate::error::Result;
use crate::index::quality::MatchRule;
use crate::types::{Entry, Fingerprint, Match, QueryKey};

/// How long a claim on a content hash may wait for its document's record before it is
/// taken to be the claim of a process that died.
const CLAIM_WAIT: Duration = Duration::from_secs(2);

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
    /// Stores a document, or an id with its fingerprint ([`Incoming`]), unless a stored
    /// document duplicates it by `rule` ([`Rule`]: a `u32` k, a [`crate::Quality`], a
    /// [`MatchRule`], or [`Rule::Mode`], the store's own), atomically.
    ///
    /// 1. A stored document with the same content hash
    ///    ([`crate::Fingerprinter::content_hash`]) → [`CheckOutcome::ExactDuplicate`]
    ///    (no table probe). An [`Entry`] takes this path only when `meta.content_hash` is
    ///    set; without it a stored equal fingerprint is a near duplicate at distance 0.
    /// 2. Else the nearest stored document the rule accepts →
    ///    [`CheckOutcome::NearDuplicate`] (ties: smallest id); its distance may exceed the
    ///    rule's `k`, up to its reach.
    /// 3. Else the document is stored (with its content hash) → [`CheckOutcome::New`].
    ///
    /// The insert, and the check it depends on, run under the writer lock: of many threads
    /// checking near-identical documents at once, exactly one gets `New`, and every check
    /// sees every insert acknowledged before it. (A first check runs without the lock, so
    /// duplicates are answered in parallel; it is repeated under the lock only when some
    /// write happened in between.) Concurrent calls are checked and written in groups,
    /// with one write (one fsync) per group: each is also checked against the calls before
    /// it in its group, and none is answered before the group's write returned (group
    /// commit, see docs/design.md).
    ///
    /// **Same id:** a previously stored version under the same id is compared like any other
    /// stored document. A re-crawled unchanged page is an `ExactDuplicate` of itself (the
    /// store is not touched); a changed page the rule still accepts is a `NearDuplicate` of
    /// itself (the old version stays); a page that changed beyond it (and duplicates nothing
    /// else) replaces its old version (`New { replaced: true }`).
    ///
    /// With last-seen tracking on ([`Store::set_retention`]), the stored document a
    /// duplicate is found of gets its last-seen time refreshed (at most once a second).
    ///
    /// ```
    /// # fn main() -> simstore::Result<()> {
    /// use simstore::{Document, Rule, StoreBuilder};
    /// let store = StoreBuilder::in_memory().open()?;
    /// let page = Document::new("a", "the same article, reposted on another site today");
    /// assert!(store.check_and_insert(&page, Rule::Mode)?.is_new());
    /// let copy = Document::new("b", "the same article, reposted on another site today");
    /// assert_eq!(store.check_and_insert(&copy, 3)?.duplicate_of(), Some("a"));
    /// # Ok(())
    /// # }
    /// ```
    ///
    /// Errors: [`crate::Error::KTooLarge`] for a k above `k_max`, [`crate::Error::Unsupported`]
    /// for [`Rule::Exhaustive`], [`crate::Error::EmptyDocument`], [`crate::Error::InvalidId`],
    /// [`crate::Error::FieldTooLong`] (a title or url longer than is stored),
    /// [`crate::Error::ReadOnly`], storage errors.
    pub fn check_and_insert<'a>(
        &self,
        incoming: impl Into<Incoming<'a>>,
        rule: impl Into<Rule>,
    ) -> Result<CheckOutcome> {
        let rule = self.rule_to_apply(rule.into(), "Store::check_and_insert")?;
        let entry = match incoming.into() {
            Incoming::Doc(doc) => {
                let (fp, meta) = self.fingerprint_with_meta(doc)?;
                Entry::new(&doc.id, fp, meta)
            }
            Incoming::Entry(e) => e.clone(),
        };
        let out = self.check_then_insert(entry, rule)?;
        if let Some(of) = out.duplicate_of() {
            self.touch_seen(of)?;
        }
        Ok(out)
    }

    /// The body of [`Store::check_and_insert`].
    fn check_then_insert(&self, entry: Entry, rule: MatchRule) -> Result<CheckOutcome> {
        self.check_writable()?;
        validate_entry(&entry.id, &entry.meta)?;
        self.manifest.layout.tables_for_k(rule.k)?;
        // Optimistic check without the writer lock (checks of many threads run in
        // parallel): a duplicate found here is a duplicate as of this call, and nothing is
        // written. Every write goes through the lock and changes the backend's version, so
        // if it is unchanged once the lock is held, no write came in between and the check
        // need not be repeated.
        let before = self.backend.version();
        if let Some(dup) = self.find_duplicate(&entry, &rule)? {
            return Ok(dup);
        }
        if self.backend.shared().is_some() {
            return self.check_and_insert_shared(entry, rule, before);
        }
        match self.submit(entry, Ask::Check { rule, before })? {
            Answer::Checked(out) => Ok(out),
            Answer::Inserted(_) => unreachable!("a check is answered as a check"),
        }
    }

    /// [`Store::check_and_insert`] on a store many processes write at once
    /// (Redis Cluster), one request at a time under the writer lock: the content hash is
    /// claimed in the cluster ([`Store::claim_exact`]) before the entry is written.
    fn check_and_insert_shared(
        &self,
        entry: Entry,
        rule: MatchRule,
        before: u64,
    ) -> Result<CheckOutcome> {
        let (fp, hash) = (entry.fp, entry.meta.content_hash);
        let mut counters = self.lock();
        counters.usable()?;
        if self.backend.version() != before
            && let Some(dup) = self.find_duplicate(&entry, &rule)?
        {
            return Ok(dup);
        }
        let claimed = match (self.backend.shared(), hash) {
            (Some(shared), Some(hash)) => {
                self.reserve_seqs(&mut counters, 1)?;
                let seq = counters.next_seq;
                counters.next_seq += 1;
                if let Some(of) = self.claim_exact(shared, hash, seq)? {
                    return Ok(CheckOutcome::ExactDuplicate { of, fp });
                }
                Some(seq)
            }
            _ => None,
        };
        let out = self.write_entries(&mut counters, &[&entry], claimed)?;
        self.unlock(counters);
        Ok(CheckOutcome::New {
            fp,
            replaced: out.first() == Some(&InsertOutcome::Replaced),
        })
    }

    /// On a store written by many processes: claims content hash `hash` for document `seq`
    /// (so that of processes storing one page at once exactly one stores it). `Some(id)`
    /// when another document holds the claim: the id of that document, once its record is
    /// there. A claim whose record does not come within [`CLAIM_WAIT`] was left by a
    /// process that died before storing its document, and is taken over.
    fn claim_exact(&self, shared: &dyn Shared, hash: u128, seq: u64) -> Result<Option<String>> {
        let mut stale = None;
        loop {
            let Some(holder) = shared.claim_exact(hash, seq, stale)? else {
                return Ok(None);
            };
            let start = Instant::now();
            loop {
                let snap = self.view(Consistency::PointInTime);
                if let Some(doc) = snap.committed(&[holder])?.pop().flatten() {
                    return Ok(Some(doc.id));
                }
                if start.elapsed() >= CLAIM_WAIT {
                    break;
                }
                std::thread::sleep(Duration::from_millis(5));
            }
            stale = Some(holder);
        }
    }

    /// The exact duplicate of `e` (by its content hash), else the nearest near duplicate
    /// that `rule` accepts, read from one probe view. On a latest-state view, or a backend
    /// atomic only per key (Redis Cluster: its `exact` entry is there before its record), a
    /// write may land between the exact lookup and the probe; the exact lookup is then done
    /// again when the probe found a document, so that a page stored along with its exact
    /// copy is answered as exact.
    pub(super) fn find_duplicate(
        &self,
        e: &Entry,
        rule: &MatchRule,
    ) -> Result<Option<CheckOutcome>> {
        let (fp, hash) = (e.fp, e.meta.content_hash);
        let snap = self.view(Consistency::Latest);
        let exact = || match hash {
            Some(hash) => self.exact_match(&snap, hash),
            None => Ok(None),
        };
        if let Some(of) = exact()? {
            return Ok(Some(CheckOutcome::ExactDuplicate { of, fp }));
        }
        let Some(near) = self.nearest(&snap, e, rule)? else {
            return Ok(None);
        };
        let live = !snap.consistent || self.backend.properties().atomicity == Atomicity::PerKey;
        if live && let Some(of) = exact()? {
            return Ok(Some(CheckOutcome::ExactDuplicate { of, fp }));
        }
        Ok(Some(CheckOutcome::NearDuplicate {
            of: near.doc.id,
            distance: near.distance,
            fp,
        }))
    }

    /// The id of the first stored document (smallest seq) with content hash `hash`.
    fn exact_match(&self, snap: &View, hash: u128) -> Result<Option<String>> {
        let Some(seq) = snap.first_exact(hash)? else {
            return Ok(None);
        };
        let doc = snap.committed(&[seq])?.pop().flatten();
        // On a latest-state view a missing record is a document deleted since.
        if doc.is_none() && snap.consistent {
            self.missing_record(|| format!("an exact entry points at missing document {seq}"))?;
        }
        Ok(doc.map(|d| d.id))
    }

    /// The nearest stored document that `rule` accepts as a near duplicate of `e` (ties:
    /// smallest id). Without verification it reads only the records at the smallest
    /// distance; with it, those of every candidate within reach.
    fn nearest(&self, snap: &View, e: &Entry, rule: &MatchRule) -> Result<Option<Match>> {
        let rule = match (e.meta.sketch, rule.min_similarity) {
            (Some(_), Some(_)) => *rule,
            _ => match rule.without_sketch() {
                Some(plain) => plain,
                None => return Ok(None),
            },
        };
        if rule.min_similarity.is_none() {
            return self.nearest_within(snap, e.fp, rule.k);
        }
        let found = self.matches_by_rule(snap, &QueryKey::from(e), &rule)?;
        Ok(found.into_iter().next())
    }

    /// The nearest stored document within `k` of `fp` (ties: smallest id), reading only the
    /// records at the smallest distance.
    fn nearest_within(&self, snap: &View, fp: Fingerprint, k: u32) -> Result<Option<Match>> {
        let mut best: Vec<u64> = Vec::new();
        let mut best_d = u32::MAX;
        self.probe(snap.as_ref(), fp.0, k, Some(k), |seq, d| {
            if d <= k && d <= best_d {
                if d < best_d {
                    best.clear();
                    best_d = d;
                }
                best.push(seq);
            }
        })?;
        best.sort_unstable();
        best.dedup();
        let hits = best.into_iter().map(|seq| (seq, best_d)).collect();
        Ok(self.fetch(snap, hits)?.into_iter().next())
    }
}
