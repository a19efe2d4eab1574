//! Queries: the probe of the permutation tables (a prefix range per table, filtered by
//! popcount), the merge of candidates, and the fetch of their records.

use super::backend::{Atomicity, Consistency, MetaKey, Near, Snapshot, Span};
use super::request::{Query, Rule};
use super::verify::{Candidates, MAX_REJECTED};
use super::{CandidateStats, Store, View, codec};
use crate::error::{Error, Result};
use crate::index::bands::{self, MAX_BAND_CANDIDATES};
use crate::index::page;
use crate::index::probing::{self, Flip};
use crate::index::quality::MatchRule;
use crate::types::{Fingerprint, Match, QueryKey, StoredDoc};

/// Records read at a time by a scan of every document ([`Store::for_each_doc`]) before
/// those not committed are left out.
const SCAN_CHUNK: usize = 1024;

impl Store {
    /// The stored documents that `rule` counts as near duplicates of `query`, sorted by
    /// distance, then id.
    ///
    /// `query` is a [`Fingerprint`], a [`QueryKey`] (a fingerprint with its sketch and weak
    /// bits), an [`crate::Analysis`] or a [`crate::Document`] (fingerprinted first); `rule` is a
    /// `u32` k ("distance ≤ k", exact: equal to a brute-force scan for every `k ≤ k_max`),
    /// a [`crate::Quality`], a [`MatchRule`], or [`Rule::Mode`], the store's own mode (the
    /// one to use unless there is a reason not to). A rule's verification needs the
    /// query's sketch: a bare fingerprint is matched by distance alone where the rule
    /// allows it ([`MatchRule::unverifiable_within_k`]). [`Rule::Exhaustive`] reads every
    /// record instead of the tables, for any k. A verifying rule reads candidates until
    /// [`crate::store::MAX_REJECTED`] of them were rejected, the most promising first: a
    /// crowd of documents under one fingerprint that are not copies costs a bounded read.
    ///
    /// ```
    /// # fn main() -> simstore::Result<()> {
    /// use simstore::{Document, Rule, StoreBuilder};
    /// let store = StoreBuilder::in_memory().open()?;
    /// let page = Document::new("a", "an article about the weather in Beijing this spring");
    /// store.insert(&page)?;
    /// let found = store.query(&page, Rule::Mode)?;
    /// assert_eq!(found[0].doc.id, "a");
    /// let fp = store.fingerprinter().fingerprint_doc(&page)?;
    /// assert_eq!(store.query(fp, 3)?[0].distance, 0);
    /// # Ok(())
    /// # }
    /// ```
    ///
    /// Errors: [`Error::KTooLarge`] when the rule's k exceeds the store's `k_max`,
    /// [`Error::EmptyDocument`] for a document without words, storage errors.
    pub fn query<'a>(
        &self,
        query: impl Into<Query<'a>>,
        rule: impl Into<Rule>,
    ) -> Result<Vec<Match>> {
        let rule = rule.into();
        let key = self.key_of(query.into())?;
        if let Rule::Exhaustive(k) = rule {
            return self.scan_within(key.fp, k);
        }
        let snap = self.view(Consistency::Latest);
        self.matches_by_rule(&snap, &key, &self.rule(rule))
    }

    /// [`Store::query`] for many queries, by one rule, from one view: the answers, in
    /// order. On a backend with round trips (Redis Cluster) every table span of every query
    /// is read in one pipelined round trip per node, and every record in one more.
    pub fn query_batch<'a, Q: Into<Query<'a>>>(
        &self,
        queries: impl IntoIterator<Item = Q>,
        rule: impl Into<Rule>,
    ) -> Result<Vec<Vec<Match>>> {
        let rule = rule.into();
        let keys = queries
            .into_iter()
            .map(|q| self.key_of(q.into()))
            .collect::<Result<Vec<_>>>()?;
        if let Rule::Exhaustive(k) = rule {
            return keys.iter().map(|q| self.scan_within(q.fp, k)).collect();
        }
        self.query_keys(&keys, &self.rule(rule))
    }

    /// The query key of `query`: a document's is its analysis.
    fn key_of(&self, query: Query<'_>) -> Result<QueryKey> {
        match query {
            Query::Key(key) => Ok(key),
            Query::Doc(doc) => {
                let analysis = super::write::doc_analysis(&self.fingerprinter, doc)?;
                Ok(QueryKey::from(&analysis))
            }
        }
    }

    /// The records of `hits` (sequence number, distance; ascending by sequence number) as
    /// matches sorted by distance, then id. A hit whose record is missing is left out when
    /// `snap` reads the latest state (deleted since its table entry was read), or on a
    /// backend atomic per key (half written or half deleted); else it is corruption.
    pub(super) fn fetch(&self, snap: &View, hits: Vec<(u64, u32)>) -> Result<Vec<Match>> {
        let seqs: Vec<u64> = hits.iter().map(|h| h.0).collect();
        let docs = snap.committed(&seqs)?;
        let mut out = Vec::with_capacity(hits.len());
        for ((seq, distance), doc) in hits.into_iter().zip(docs) {
            match doc {
                Some(doc) => out.push(Match { distance, doc }),
                None => self.missing_hit(snap, seq)?,
            }
        }
        sort_matches(&mut out);
        Ok(out)
    }

    /// Scans, in every table that a query with distance `k` probes, the keys sharing the
    /// query's prefix, calling `each(seq, distance)` for every one (candidates, before the
    /// distance filter), or with `within`, for at least those within that distance.
    pub(super) fn probe(
        &self,
        snap: &dyn Snapshot,
        fp: u64,
        k: u32,
        within: Option<u32>,
        mut each: impl FnMut(u64, u32),
    ) -> Result<()> {
        self.probe_many(snap, &[(fp, Vec::new())], k, within, |_, seq, d| {
            each(seq, d)
        })
    }

    /// Probes the tables for `rule.k` (and the rule's query-directed probes, where the
    /// query's weak bits are known) and calls `each(seq, distance)` for the candidates
    /// within `rule.reach` (every stored document within `k`, and those of the spans up to
    /// the reach).
    fn probe_within(
        &self,
        snap: &dyn Snapshot,
        query: &QueryKey,
        rule: &MatchRule,
        mut each: impl FnMut(u64, u32),
    ) -> Result<()> {
        let flips = self.flips(query, rule)?;
        let reach = rule.reach.max(rule.k);
        self.probe_many(
            snap,
            &[(query.fp.0, flips)],
            rule.k,
            Some(reach),
            |_, seq, d| {
                if d <= reach {
                    each(seq, d)
                }
            },
        )
    }

    /// The query-directed probes of `query` under `rule` (none without its weak bits; as
    /// many as [`MatchRule::probes_for`] its sketch).
    fn flips(&self, query: &QueryKey, rule: &MatchRule) -> Result<Vec<Flip>> {
        let layout = &self.manifest.layout;
        layout.tables_for_k(rule.k)?;
        let probes = rule.probes_for(query.sketch.as_ref());
        Ok(probing::query_flips(
            layout,
            rule.k,
            probes,
            query.weak_bits.as_ref(),
        ))
    }

    /// [`Store::probe`] for many fingerprints, each with its query-directed probes, every
    /// span read by one [`Snapshot::scan_spans`]: calls `each(query index, seq, distance)`
    /// (a document may come more than once) for every candidate, or with `within`, for
    /// at least those within that distance (the backend may leave the others out).
    fn probe_many(
        &self,
        snap: &dyn Snapshot,
        queries: &[(u64, Vec<Flip>)],
        k: u32,
        within: Option<u32>,
        mut each: impl FnMut(usize, u64, u32),
    ) -> Result<()> {
        let layout = &self.manifest.layout;
        let tables = layout.tables_for_k(k)?;
        let mut spans = Vec::with_capacity(queries.len() * tables.len());
        let mut probes = Vec::with_capacity(spans.capacity());
        for (q, (fp, flips)) in queries.iter().enumerate() {
            for probe in probing::spans(layout, tables, flips, *fp) {
                spans.push(Span {
                    table: probe.table,
                    lo: probe.lo(),
                    hi: probe.hi(),
                    near: within.map(|within| Near {
                        permuted: probe.permuted,
                        within,
                    }),
                });
                probes.push((q, probe));
            }
        }
        snap.scan_spans(&spans, &mut |i, entry| {
            let (kfp, seq) = entry?;
            let (q, probe) = probes[i];
            if !probe.holds(kfp) {
                return Ok(false);
            }
            each(q, seq, (kfp ^ probe.permuted).count_ones());
            Ok(true)
        })
    }

    /// Calls `each(query index, seq)` for the documents that share a band with a query:
    /// up to [`MAX_BAND_CANDIDATES`] of each of its bands that the rule reads and the store
    /// keeps, every span read by one [`Snapshot::scan_spans`]. Nothing without bands, for
    /// a rule that does not verify, or for a query without an indexed sketch.
    fn band_candidates(
        &self,
        snap: &dyn Snapshot,
        queries: &[&QueryKey],
        rule: &MatchRule,
        mut each: impl FnMut(usize, u64),
    ) -> Result<()> {
        let count = rule.bands.min(self.manifest.bands);
        if count == 0 || rule.min_similarity.is_none() {
            return Ok(());
        }
        let mut spans = Vec::new();
        let mut owners = Vec::new();
        for (q, query) in queries.iter().enumerate() {
            let Some(sketch) = query.sketch.as_ref() else {
                continue;
            };
            for i in 0..count {
                if let Some(b) = bands::band(sketch, i) {
                    let (lo, hi) = bands::span(b);
                    spans.push(Span::new(self.manifest.band_table(i), lo, hi));
                    owners.push((q, 0usize));
                }
            }
        }
        snap.scan_spans(&spans, &mut |i, entry| {
            let (_, seq) = entry?;
            let (q, read) = &mut owners[i];
            each(*q, seq);
            *read += 1;
            Ok(*read < MAX_BAND_CANDIDATES)
        })
    }

    /// [`Store::query_batch`] of query keys by a rule.
    fn query_keys(&self, queries: &[QueryKey], rule: &MatchRule) -> Result<Vec<Vec<Match>>> {
        let probes = queries
            .iter()
            .map(|q| Ok((q.fp.0, self.flips(q, rule)?)))
            .collect::<Result<Vec<_>>>()?;
        let keys: Vec<&QueryKey> = queries.iter().collect();
        let mut answers = self.query_batch_reach(&probes, rule, &keys)?;
        for (matches, q) in answers.iter_mut().zip(queries) {
            let sketches = (q.sketch.as_ref(), q.main_sketch.as_ref());
            matches.retain(|m| page::accepts(rule, m.distance, sketches, m.doc.sketch.as_ref()));
        }
        Ok(answers)
    }

    /// [`Store::query_batch`] keeping the candidates within `rule`'s reach (≥ `rule.k`) that
    /// the tables for `rule.k` and each query's flips put in its spans, and those that share
    /// a band with its key in `keys` (before the rule accepts them).
    fn query_batch_reach(
        &self,
        queries: &[(u64, Vec<Flip>)],
        rule: &MatchRule,
        keys: &[&QueryKey],
    ) -> Result<Vec<Vec<Match>>> {
        let snap = self.view(Consistency::Latest);
        let k = rule.k;
        let reach = rule.reach.max(k);
        let mut hits: Vec<(u64, usize, u32)> = Vec::new();
        self.probe_many(snap.as_ref(), queries, k, Some(reach), |q, seq, d| {
            if d <= reach {
                hits.push((seq, q, d));
            }
        })?;
        let mut banded = Vec::new();
        self.band_candidates(snap.as_ref(), keys, rule, |q, seq| banded.push((q, seq)))?;
        hits.extend(banded.iter().map(|&(q, seq)| (seq, q, BAND_ONLY)));
        hits.sort_unstable();
        hits.dedup_by_key(|h| (h.0, h.1));
        let mut out = vec![Vec::new(); queries.len()];
        let hits = self.read_crowded(&snap, hits, (banded, &mut out), keys, rule)?;
        let mut seqs: Vec<u64> = hits.iter().map(|h| h.0).collect();
        seqs.dedup();
        let docs = snap.committed(&seqs)?;
        let mut next = seqs.iter().zip(docs).peekable();
        for (seq, q, distance) in hits {
            while next.peek().is_some_and(|(s, _)| **s < seq) {
                next.next();
            }
            match next.peek() {
                Some((_, Some(doc))) => out[q].push(Match {
                    distance,
                    doc: doc.clone(),
                }),
                _ => self.missing_hit(&snap, seq)?,
            }
        }
        for (matches, (fp, _)) in out.iter_mut().zip(queries) {
            with_distances(matches, Fingerprint(*fp));
        }
        Ok(out)
    }

    /// Answers in `out` (by [`Store::accepted`], its reads bounded) the queries of `keys`
    /// with more than [`MAX_REJECTED`] candidates among `hits` (`(seq, query, distance)`,
    /// sorted), given the `(query, seq)` pairs that share a band; returns the others' hits.
    fn read_crowded(
        &self,
        snap: &View,
        hits: Vec<(u64, usize, u32)>,
        (mut banded, out): (Vec<(usize, u64)>, &mut [Vec<Match>]),
        keys: &[&QueryKey],
        rule: &MatchRule,
    ) -> Result<Vec<(u64, usize, u32)>> {
        let mut count = vec![0usize; keys.len()];
        hits.iter().for_each(|h| count[h.1] += 1);
        if count.iter().all(|&n| n <= MAX_REJECTED) {
            return Ok(hits);
        }
        let (crowded, rest): (Vec<_>, Vec<_>) =
            hits.into_iter().partition(|h| count[h.1] > MAX_REJECTED);
        banded.sort_unstable();
        banded.dedup();
        let mut by_query = vec![Vec::new(); keys.len()];
        crowded
            .into_iter()
            .for_each(|(seq, q, d)| by_query[q].push((seq, d)));
        for (q, hits) in by_query.into_iter().enumerate() {
            if hits.is_empty() {
                continue;
            }
            let (lo, hi) = (
                banded.partition_point(|b| b.0 < q),
                banded.partition_point(|b| b.0 <= q),
            );
            let banded = banded[lo..hi].iter().map(|b| b.1).collect();
            out[q] = self.accepted(snap, Candidates { hits, banded }, keys[q], rule)?;
        }
        Ok(rest)
    }

    /// Candidates a k_max query scans, observed on `samples` stored fingerprints spread over
    /// the store (the real data, clusters included, unlike the uniform estimate).
    pub fn observed_candidates(&self, samples: usize) -> Result<CandidateStats> {
        let next_seq = self.lock().next_seq;
        let snap = self.view(Consistency::PointInTime);
        let mut stats = CandidateStats::default();
        for i in 0..samples as u64 {
            if next_seq == 0 {
                break;
            }
            let from = i.wrapping_mul(next_seq) / samples as u64;
            let mut fp = None;
            snap.scan_docs(from, &mut |(_, item)| {
                fp = Some(item?.1.fp);
                Ok(false)
            })?;
            let Some(fp) = fp else { continue };
            let mut n = 0u64;
            self.probe(
                snap.as_ref(),
                fp,
                self.manifest.layout.k_max(),
                None,
                |_, _| n += 1,
            )?;
            stats.queries += 1;
            stats.total += n;
            stats.max = stats.max.max(n);
        }
        Ok(stats)
    }

    /// Every stored document within distance `k` (any k ≤ 64) of `fp`, by a full scan of
    /// the records ([`Rule::Exhaustive`]).
    fn scan_within(&self, fp: Fingerprint, k: u32) -> Result<Vec<Match>> {
        let mut out = Vec::new();
        self.for_each_doc(|doc| {
            let distance = doc.fingerprint().distance(fp);
            if distance <= k {
                out.push(Match { distance, doc });
            }
            Ok(())
        })?;
        sort_matches(&mut out);
        Ok(out)
    }

    /// [`Store::query`] read through `snap`: the candidates within the rule's reach
    /// (each document once), their records, and those the rule accepts.
    pub(super) fn matches_by_rule(
        &self,
        snap: &View,
        query: &QueryKey,
        rule: &MatchRule,
    ) -> Result<Vec<Match>> {
        let mut hits: Vec<(u64, u32)> = Vec::new();
        let mut banded = Vec::new();
        self.probe_within(snap.as_ref(), query, rule, |seq, d| hits.push((seq, d)))?;
        self.band_candidates(snap.as_ref(), &[query], rule, |_, seq| banded.push(seq))?;
        banded.sort_unstable();
        banded.dedup();
        hits.extend(banded.iter().map(|&seq| (seq, BAND_ONLY)));
        // A table's hit sorts before the same document's band hit, and is kept.
        hits.sort_unstable();
        hits.dedup_by_key(|h| h.0);
        self.accepted(snap, Candidates { hits, banded }, query, rule)
    }

    /// Calls `f` with every stored document, in insertion order, from one consistent snapshot.
    pub fn for_each_doc(&self, mut f: impl FnMut(StoredDoc) -> Result<()>) -> Result<()> {
        self.for_each_seq_doc(|_, doc| f(doc))
    }

    /// Like [`Store::for_each_doc`], with each document's sequence number. On a backend
    /// atomic per key, only the committed records ([`View::committed`]: their ids are
    /// read for every [`SCAN_CHUNK`] records).
    pub(super) fn for_each_seq_doc(
        &self,
        mut f: impl FnMut(u64, StoredDoc) -> Result<()>,
    ) -> Result<()> {
        let snap = self.view(Consistency::PointInTime);
        let mut chunk: Vec<(u64, StoredDoc)> = Vec::new();
        let mut flush = |chunk: &mut Vec<(u64, StoredDoc)>| -> Result<()> {
            let seqs: Vec<u64> = chunk.iter().map(|c| c.0).collect();
            let live = snap.committed_of(&seqs, chunk.drain(..).map(|c| Some(c.1)).collect())?;
            for (seq, doc) in seqs.into_iter().zip(live) {
                if let Some(doc) = doc {
                    f(seq, doc)?;
                }
            }
            Ok(())
        };
        snap.scan_docs(0, &mut |(_, item)| {
            chunk.push(item?);
            if chunk.len() == SCAN_CHUNK {
                flush(&mut chunk)?;
            }
            Ok(true)
        })?;
        flush(&mut chunk)
    }

    /// Which of `ids` are stored, in their order: one lookup of the id index for all (one
    /// batch of round trips on a Redis Cluster), the documents not read.
    ///
    /// ```
    /// # let store = simstore::StoreBuilder::in_memory().open()?;
    /// store.insert(&simstore::Document::new("a", "some words of a page"))?;
    /// assert_eq!(store.contains(&["a", "b"])?, [true, false]);
    /// # Ok::<(), simstore::Error>(())
    /// ```
    pub fn contains(&self, ids: &[&str]) -> Result<Vec<bool>> {
        let snap = self.view(Consistency::PointInTime);
        Ok(snap.ids(ids)?.iter().map(Option::is_some).collect())
    }

    /// The stored document `id`, if any.
    pub fn get(&self, id: &str) -> Result<Option<StoredDoc>> {
        let snap = self.view(Consistency::PointInTime);
        let Some(value) = snap.ids(&[id])?.pop().flatten() else {
            return Ok(None);
        };
        let doc = snap.docs(&[value.seq])?.pop().flatten();
        if doc.is_none() {
            self.missing_record(|| format!("id {id:?} points at missing document {}", value.seq))?;
        }
        Ok(doc)
    }

    /// What a table hit on document `seq` whose record is missing means (see
    /// [`Store::fetch`]).
    fn missing_hit(&self, snap: &View, seq: u64) -> Result<()> {
        if !snap.consistent {
            return Ok(());
        }
        self.missing_record(|| format!("a table entry points at missing document {seq}"))
    }

    /// What a missing `docs` record found through another space means: on a backend that
    /// writes change sets atomically, corruption (`what` says where); on one that is atomic
    /// per key, a document half written or half deleted, which readers leave out.
    pub(super) fn missing_record(&self, what: impl FnOnce() -> String) -> Result<()> {
        match self.backend.properties().atomicity {
            Atomicity::PerKey => Ok(()),
            Atomicity::ChangeSet => Err(Error::Corrupt(what())),
        }
    }

    /// For a store opened with [`crate::RocksOptions::secondary`]: makes visible every write
    /// the writer process has made (its flushed files and its write-ahead log) since opening
    /// or the last catch-up. Queries that start afterwards see them; [`Store::len`] is
    /// updated.
    ///
    /// Errors: [`Error::ReadOnly`] when the store was not opened as a secondary;
    /// [`Error::Stale`] when the writer has changed the layout (a relayout): reopen.
    pub fn try_catch_up(&self) -> Result<()> {
        let mut counters = self.lock();
        if !self.backend.catch_up()? {
            return Err(Error::ReadOnly);
        }
        let snap = self.view(Consistency::PointInTime);
        let manifest = snap.meta(MetaKey::Manifest)?;
        if manifest.as_deref() != Some(&codec::encode_manifest(&self.manifest)[..]) {
            return Err(Error::Stale(
                "its manifest changed (a relayout or another store at the path)".into(),
            ));
        }
        if let Some(bytes) = snap.meta(MetaKey::Counters)? {
            let (next_seq, live) = codec::decode_counters(&bytes)?;
            counters.next_seq = next_seq;
            counters.live = live;
        }
        Ok(())
    }
}

/// The distance of a hit found by a band alone, until its record is read.
pub(super) const BAND_ONLY: u32 = u32::MAX;

/// Sets the distance of the matches found by a band alone, then sorts them all by
/// distance, then id.
pub(super) fn with_distances(matches: &mut [Match], fp: Fingerprint) {
    for m in matches.iter_mut().filter(|m| m.distance == BAND_ONLY) {
        m.distance = m.doc.fingerprint().distance(fp);
    }
    sort_matches(matches);
}

/// Sorts matches by distance, then id.
pub(super) fn sort_matches(matches: &mut [Match]) {
    matches.sort_unstable_by(|a, b| (a.distance, &a.doc.id).cmp(&(b.distance, &b.doc.id)));
}

#[cfg(test)]
mod tests {
    use crate::store::StoreBuilder;
    use crate::text::tokens::body_passes;
    use crate::types::Document;

    /// `query_verified` tokenized the query's text twice (once for the sketch, once for the
    /// fingerprint); one analysis gives both.
    #[test]
    fn query_verified_analyzes_the_text_once() {
        let store = StoreBuilder::in_memory().k_max(3).open().unwrap();
        let doc = Document {
            id: "a".into(),
            title: Some("Harbour crane".into()),
            text: "The harbour opened a new crane. Workers said it lifts containers faster.".into(),
            ..Document::default()
        };
        store.insert(&doc).unwrap();
        let before = body_passes();
        let matches = store
            .query(&doc, crate::MatchRule::verified(3, 0.9))
            .unwrap();
        assert_eq!(body_passes() - before, 1, "passes over the query's text");
        assert_eq!(matches.len(), 1);
        assert_eq!(matches[0].doc.id, "a");
    }
}
