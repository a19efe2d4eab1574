//! [`Store::dedup`]: every near-duplicate pair of a store, found by walking its tables, and
//! the clusters of leader clustering in insertion order ([`Leaders`]).

use std::sync::Mutex;

use rayon::prelude::*;

use super::Store;
use super::backend::{Consistency, Snapshot};
use super::request::Rule;
use crate::error::{Error, Result};
use crate::index::cluster::{DedupReport, DuplicatePair, PairScan};
use crate::index::leader::Leaders;
use crate::index::quality::MatchRule;
use crate::types::Sketch;

/// Whether a dedup run keeps every id in memory (to report pairs) or only sequence numbers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Ids {
    /// Every id, by dense index.
    Kept,
    /// Sequence numbers only; the clustered documents' ids are read at the end.
    Skipped,
}

/// The live documents of a dedup run, by dense index (position in the sorted list of live
/// sequence numbers), with their ids when pairs are reported.
struct Members {
    seqs: Vec<u64>,
    /// Ids by dense index; empty when only clusters are wanted (their ids are read later).
    names: Vec<String>,
}

impl Members {
    /// Reads the `ids` space: sequence numbers, and the ids if they are [`Ids::Kept`].
    fn read(snap: &dyn Snapshot, ids: Ids) -> Result<Members> {
        let with_ids = ids == Ids::Kept;
        let mut rows: Vec<(u64, String)> = Vec::new();
        let mut seqs: Vec<u64> = Vec::new();
        scan_ids(snap, |id, seq| {
            if with_ids {
                rows.push((seq, id.to_owned()));
            } else {
                seqs.push(seq);
            }
        })?;
        rows.sort_unstable();
        seqs.sort_unstable();
        if with_ids {
            seqs = rows.iter().map(|r| r.0).collect();
        }
        let names = rows.into_iter().map(|r| r.1).collect();
        Ok(Members { seqs, names })
    }

    /// The dense index of document `seq`.
    fn index(&self, seq: u64) -> Result<u32> {
        self.seqs
            .binary_search(&seq)
            .map(|i| i as u32)
            .map_err(|_| {
                Error::Corrupt(format!(
                    "a table entry points at document {seq}, which has no id"
                ))
            })
    }

    /// The dense indices of the pair `sa`, `sb` found in a table; `None` when one of
    /// them has no id: on a backend atomic per key a document a writer left half written
    /// (its id is written last), left out; else corruption.
    fn pair_of(&self, store: &Store, sa: u64, sb: u64) -> Result<Option<(u32, u32)>> {
        let (a, b) = (self.index(sa).ok(), self.index(sb).ok());
        if let (Some(a), Some(b)) = (a, b) {
            return Ok(Some((a, b)));
        }
        let seq = if a.is_none() { sa } else { sb };
        store.missing_record(|| {
            format!("a table entry points at document {seq}, which has no id")
        })?;
        Ok(None)
    }

    /// The pair of dense indices `a`, `b` at distance `d`, ids in order.
    fn pair(&self, a: u32, b: u32, distance: u32) -> DuplicatePair {
        let (x, y) = (&self.names[a as usize], &self.names[b as usize]);
        let (a, b) = if x <= y { (x, y) } else { (y, x) };
        DuplicatePair {
            a: a.clone(),
            b: b.clone(),
            distance,
        }
    }
}

impl Store {
    /// Every pair of stored documents that `rule` ([`Rule`]: a `u32` k, a
    /// [`crate::Quality`], a [`MatchRule`], or [`Rule::Mode`]) accepts, clustered.
    ///
    /// Walks each table of the probe set of the rule's k in key order, comparing each key
    /// only with the following keys of the same prefix (see `crate::index::cluster`); a
    /// pair is counted by the first table in which it shares the prefix, kept when within
    /// the rule's reach and accepted by it (a verifying rule reads every document's sketch
    /// first, about 72 more bytes per document). The band tables are not walked: a pair
    /// that only a band finds is not reported. The clusters are those of leader clustering
    /// in insertion order (`Leaders`): each document joins the nearest earlier kept
    /// document it duplicates, else is kept, so a chain of pairs is no cluster. Reads from
    /// one snapshot. Memory: about 12 bytes per document, 12 per pair, and the ids of the
    /// clustered documents; time: one scan of `ids`, of each probed table (again by windows
    /// of documents if the pairs outgrow `crate::index::leader::PAIR_BUDGET`), and of
    /// `ids` again.
    pub fn dedup(&self, rule: impl Into<Rule>) -> Result<DedupReport> {
        let rule = &self.rule_to_apply(rule.into(), "Store::dedup")?;
        let probe = self.manifest.layout.tables_for_k(rule.k)?.len();
        let snap = self.view(Consistency::PointInTime);
        let members = Members::read(snap.as_ref(), Ids::Skipped)?;
        let sketches = Sketches::read(snap.as_ref(), &members, rule)?;
        // The tables are walked in parallel (each pair is owned by one table, whatever the
        // order); the rare pairs meet in one locked clustering.
        let shared = Mutex::new(Leaders::new(members.seqs.len())?);
        let lock = || shared.lock().unwrap_or_else(|e| e.into_inner());
        while lock().next_pass() {
            (0..probe).into_par_iter().try_for_each(|pos| {
                self.walk_table(snap.as_ref(), pos, rule, |sa, sb, d| {
                    let Some((a, b)) = members.pair_of(self, sa, sb)? else {
                        return Ok(());
                    };
                    if sketches.accepts(rule, a, b, d) {
                        lock().offer(a, b, d);
                    }
                    Ok(())
                })
            })?;
        }
        let leaders = shared.into_inner().unwrap_or_else(|e| e.into_inner());
        self.report(snap.as_ref(), &members, &leaders)
    }

    /// [`Store::dedup`], calling `on_pair` with every pair (in table-walk order: one table
    /// after the other). Holds every id in memory while it runs.
    pub fn dedup_pairs(
        &self,
        rule: impl Into<Rule>,
        mut on_pair: impl FnMut(DuplicatePair) -> Result<()>,
    ) -> Result<DedupReport> {
        let rule = &self.rule_to_apply(rule.into(), "Store::dedup_pairs")?;
        let probe = self.manifest.layout.tables_for_k(rule.k)?.len();
        let snap = self.view(Consistency::PointInTime);
        let members = Members::read(snap.as_ref(), Ids::Kept)?;
        let sketches = Sketches::read(snap.as_ref(), &members, rule)?;
        let mut leaders = Leaders::new(members.seqs.len())?;
        while leaders.next_pass() {
            let first = leaders.first_pass();
            for pos in 0..probe {
                self.walk_table(snap.as_ref(), pos, rule, |sa, sb, d| {
                    let Some((a, b)) = members.pair_of(self, sa, sb)? else {
                        return Ok(());
                    };
                    if !leaders.wants(a, b) || !sketches.accepts(rule, a, b, d) {
                        return Ok(());
                    }
                    leaders.offer(a, b, d);
                    match first {
                        true => on_pair(members.pair(a, b, d)),
                        false => Ok(()),
                    }
                })?;
            }
        }
        self.report(snap.as_ref(), &members, &leaders)
    }

    /// The report: the clusters of `leaders` as sorted lists of ids (read from `members`,
    /// or from a second scan of `ids` for the clustered documents only).
    fn report(
        &self,
        snap: &dyn Snapshot,
        members: &Members,
        leaders: &Leaders,
    ) -> Result<DedupReport> {
        let sets = leaders.sets(2);
        let mut cluster_of = vec![u32::MAX; members.seqs.len()];
        for (c, set) in sets.iter().enumerate() {
            for &x in set {
                cluster_of[x as usize] = c as u32;
            }
        }
        let mut clusters: Vec<Vec<String>> =
            sets.iter().map(|s| Vec::with_capacity(s.len())).collect();
        drop(sets);
        if members.names.is_empty() {
            let mut failed = None;
            scan_ids(snap, |id, seq| match members.index(seq) {
                Ok(x) if cluster_of[x as usize] != u32::MAX => {
                    clusters[cluster_of[x as usize] as usize].push(id.to_owned())
                }
                Ok(_) => {}
                Err(e) => failed = Some(e),
            })?;
            if let Some(e) = failed {
                return Err(e);
            }
        } else {
            for (x, &c) in cluster_of.iter().enumerate() {
                if c != u32::MAX {
                    clusters[c as usize].push(members.names[x].clone());
                }
            }
        }
        for c in &mut clusters {
            c.sort_unstable();
        }
        clusters.sort_unstable();
        Ok(DedupReport {
            documents: members.seqs.len() as u64,
            pairs: leaders.pairs(),
            clusters,
        })
    }

    /// Walks table `probe[pos]` of the probe set of `rule.k` in key order and calls
    /// `emit(seq a, seq b, distance)` for every pair within `rule.reach` that this table
    /// owns.
    fn walk_table(
        &self,
        snap: &dyn Snapshot,
        pos: usize,
        rule: &MatchRule,
        emit: impl FnMut(u64, u64, u32) -> Result<()>,
    ) -> Result<()> {
        let layout = &self.manifest.layout;
        let probe = layout.tables_for_k(rule.k)?;
        let reach = rule.reach.max(rule.k);
        let mut scan = PairScan::new(layout, probe, pos, reach, emit);
        snap.scan_table(probe[pos], 0, None, &mut |entry| {
            let (key, seq) = entry?;
            scan.push(key, seq)?;
            Ok(true)
        })?;
        scan.finish()
    }
}

/// The sketches of a dedup's members by dense index, read only when its rule verifies.
struct Sketches(Option<Vec<Option<Sketch>>>);

impl Sketches {
    fn read(snap: &dyn Snapshot, members: &Members, rule: &MatchRule) -> Result<Sketches> {
        if rule.min_similarity.is_none() {
            return Ok(Sketches(None));
        }
        let mut out = vec![None; members.seqs.len()];
        snap.scan_docs(0, &mut |(_, item)| {
            let (seq, doc) = item?;
            // A record without an `ids` entry is in no table walk's pairs either.
            if let Ok(i) = members.seqs.binary_search(&seq) {
                out[i] = doc.sketch;
            }
            Ok(true)
        })?;
        Ok(Sketches(Some(out)))
    }

    /// Whether `rule` accepts the pair of members `a`, `b` at distance `d`.
    fn accepts(&self, rule: &MatchRule, a: u32, b: u32, d: u32) -> bool {
        let sketch = |i: u32| self.0.as_ref().and_then(|s| s[i as usize].as_ref());
        rule.accepts(d, sketch(a), sketch(b))
    }
}

/// Calls `f(id, seq)` for every `ids` entry.
fn scan_ids(snap: &dyn Snapshot, mut f: impl FnMut(&str, u64)) -> Result<()> {
    snap.scan_ids(&mut |(key, value)| {
        let id =
            std::str::from_utf8(key).map_err(|_| Error::Corrupt("an id is not UTF-8".into()))?;
        f(id, value?.seq);
        Ok(true)
    })
}
