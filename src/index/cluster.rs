//! All near-duplicate pairs of a collection and their clusters (the "dedup" stage).
//!
//! Every pair within k ≤ k_max shares the full prefix of some table of the probe set of k,
//! so each of those tables is walked in key order, every key compared only with the
//! following keys of its prefix; a pair is reported by the first such table only (decided
//! from the two fingerprints). Clusters are those of leader clustering
//! ([`crate::index::leader`]), never a chain; the connected components ([`UnionFind`])
//! remain for `simstore dedup --transitive` and [`near_duplicates`] (docs/design.md §6).
//!
//! [`crate::Store::dedup`] runs the scan over a store's table column families;
//! [`lead_near_duplicates`] and [`near_duplicates`] over fingerprints in memory.

use std::collections::BTreeMap;

use rayon::prelude::*;

use crate::error::{Error, Result};
use crate::index::bands;
use crate::index::layout::Layout;
use crate::index::leader::Leaders;
use crate::index::quality::{MatchRule, Quality};
use crate::types::Sketch;

/// Union-find (disjoint sets) over `0..n`, with path halving and union by size.
#[derive(Debug, Clone)]
pub struct UnionFind {
    parent: Vec<u32>,
    size: Vec<u32>,
}

impl UnionFind {
    /// `n` singleton sets. Errors when `n` does not fit in `u32`.
    pub fn new(n: usize) -> Result<Self> {
        if u32::try_from(n).is_err() {
            return Err(Error::TooLarge(format!(
                "{n} documents are too many to cluster (at most {})",
                u32::MAX
            )));
        }
        Ok(Self {
            parent: (0..n as u32).collect(),
            size: vec![1; n],
        })
    }

    /// The representative of `x`'s set.
    pub fn find(&mut self, mut x: u32) -> u32 {
        while self.parent[x as usize] != x {
            let p = self.parent[x as usize];
            self.parent[x as usize] = self.parent[p as usize];
            x = p;
        }
        x
    }

    /// Merges the sets of `a` and `b`; true when they were different sets.
    pub fn union(&mut self, a: u32, b: u32) -> bool {
        let (mut ra, mut rb) = (self.find(a), self.find(b));
        if ra == rb {
            return false;
        }
        if self.size[ra as usize] < self.size[rb as usize] {
            std::mem::swap(&mut ra, &mut rb);
        }
        self.parent[rb as usize] = ra;
        self.size[ra as usize] += self.size[rb as usize];
        true
    }

    /// The sets with at least `min` members, each sorted, ordered by their smallest member.
    pub fn sets(&mut self, min: usize) -> Vec<Vec<u32>> {
        let n = self.parent.len();
        let mut by_root: BTreeMap<u32, Vec<u32>> = BTreeMap::new();
        for x in 0..n as u32 {
            let r = self.find(x);
            if self.size[r as usize] as usize >= min {
                by_root.entry(r).or_default().push(x);
            }
        }
        let mut sets: Vec<Vec<u32>> = by_root.into_values().collect();
        sets.sort_unstable_by_key(|s| s[0]);
        sets
    }

    /// Keep-first: for every element in order, whether it is the first (smallest) of its
    /// set. A dedup keeps those and drops the others. Two bytes per element.
    pub fn firsts(&mut self) -> Vec<bool> {
        let n = self.parent.len();
        let mut seen = vec![false; n];
        let mut first = vec![false; n];
        for x in 0..n as u32 {
            let r = self.find(x) as usize;
            first[x as usize] = !std::mem::replace(&mut seen[r], true);
        }
        first
    }

    /// How many sets have each size, for the sets of at least `min` members (without
    /// listing their members).
    pub fn set_sizes(&self, min: usize) -> BTreeMap<usize, u64> {
        let mut sizes = BTreeMap::new();
        for x in 0..self.parent.len() as u32 {
            let size = self.size[x as usize] as usize;
            if self.parent[x as usize] == x && size >= min {
                *sizes.entry(size).or_default() += 1;
            }
        }
        sizes
    }
}

/// Finds the pairs within `k` among keys of one table, given in key order.
///
/// `keys` yields `(permuted fingerprint, item)` sorted by the permuted fingerprint; `pos`
/// is the table's position in `probe` (the tables a k-query probes). `emit(a, b, distance)`
/// is called once for every pair this table owns (the first table of `probe` in which the
/// two share the prefix).
pub(crate) fn scan_table<I, T>(
    layout: &Layout,
    probe: &[usize],
    pos: usize,
    k: u32,
    keys: I,
    emit: impl FnMut(T, T, u32) -> Result<()>,
) -> Result<()>
where
    I: Iterator<Item = Result<(u64, T)>>,
    T: Copy,
{
    let mut scan = PairScan::new(layout, probe, pos, k, emit);
    for item in keys {
        let (key, it) = item?;
        scan.push(key, it)?;
    }
    scan.finish()
}

/// [`scan_table`] fed one key at a time (for scans that call back rather than iterate).
pub(crate) struct PairScan<'a, T, F> {
    layout: &'a Layout,
    /// The scanned table.
    t: usize,
    k: u32,
    shift: u32,
    /// The tables probed before this one, with their prefix shifts.
    earlier: Vec<(usize, u32)>,
    /// The keys sharing the current prefix.
    group: Vec<(u64, T)>,
    emit: F,
}

impl<'a, T: Copy, F: FnMut(T, T, u32) -> Result<()>> PairScan<'a, T, F> {
    /// A scan of table `probe[pos]` for pairs within `k`, calling `emit` with each it owns.
    pub(crate) fn new(layout: &'a Layout, probe: &[usize], pos: usize, k: u32, emit: F) -> Self {
        let t = probe[pos];
        let earlier = probe[..pos]
            .iter()
            .map(|&e| (e, 64 - layout.tables()[e].prefix_bits()))
            .collect();
        PairScan {
            layout,
            t,
            k,
            shift: 64 - layout.tables()[t].prefix_bits(),
            earlier,
            group: Vec::new(),
            emit,
        }
    }

    /// The next key of the table, in key order.
    pub(crate) fn push(&mut self, key: u64, item: T) -> Result<()> {
        let prefix = |key: u64| key.checked_shr(self.shift).unwrap_or(0);
        if self
            .group
            .last()
            .is_some_and(|&(last, _)| prefix(last) != prefix(key))
        {
            self.flush()?;
        }
        self.group.push((key, item));
        Ok(())
    }

    /// Emits the pairs of the last prefix group.
    pub(crate) fn finish(mut self) -> Result<()> {
        self.flush()
    }

    /// True when no earlier table of the probe set puts `a` and `b` under one prefix.
    fn owned(&self, a: u64, b: u64) -> bool {
        let (fa, fb) = (
            self.layout.unpermute(self.t, a),
            self.layout.unpermute(self.t, b),
        );
        !self.earlier.iter().any(|&(e, s)| {
            let (pa, pb) = (self.layout.permute(e, fa), self.layout.permute(e, fb));
            pa.checked_shr(s).unwrap_or(0) == pb.checked_shr(s).unwrap_or(0)
        })
    }

    fn flush(&mut self) -> Result<()> {
        let group = std::mem::take(&mut self.group);
        for (i, &(ka, a)) in group.iter().enumerate() {
            for &(kb, b) in &group[i + 1..] {
                let d = (ka ^ kb).count_ones();
                if d <= self.k && self.owned(ka, kb) {
                    (self.emit)(a, b, d)?;
                }
            }
        }
        self.group = group;
        self.group.clear();
        Ok(())
    }
}

/// What [`near_duplicates`] (or a dedup of files) found, by index into its fingerprints.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct DedupSummary {
    /// Documents looked at.
    pub documents: u64,
    /// Distinct pairs within k (that the rule accepts).
    pub pairs: u64,
    /// Clusters of two or more documents (of [`near_duplicates`], connected components of
    /// the pairs; of a dedup, [`Leaders::sets`]): each one's members sorted, the clusters
    /// ordered by their first member.
    pub clusters: Vec<Vec<u32>>,
}

impl DedupSummary {
    /// The same findings by id: `id(i)` is the id of fingerprint `i`. Ids are sorted within
    /// each cluster, and the clusters by their first id, as [`crate::Store::dedup`] does.
    pub fn to_report(&self, id: impl Fn(u32) -> String) -> DedupReport {
        let mut clusters: Vec<Vec<String>> = self
            .clusters
            .iter()
            .map(|c| {
                let mut ids: Vec<String> = c.iter().map(|&i| id(i)).collect();
                ids.sort_unstable();
                ids
            })
            .collect();
        clusters.sort_unstable();
        DedupReport {
            documents: self.documents,
            pairs: self.pairs,
            clusters,
        }
    }
}

/// One near-duplicate pair reported by [`crate::Store::dedup_pairs`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DuplicatePair {
    /// The smaller id of the two.
    pub a: String,
    /// The larger id.
    pub b: String,
    /// Their Hamming distance.
    pub distance: u32,
}

/// What [`crate::Store::dedup`] found (or `near_duplicates`, through
/// `DedupSummary::to_report`): pair count and clusters, by id.
///
/// ```
/// # fn main() -> simstore::Result<()> {
/// use simstore::{Document, Rule, StoreBuilder};
/// let store = StoreBuilder::in_memory().open()?;
/// store.insert(&Document::new("a", "the same story told twice on two sites"))?;
/// store.insert(&Document::new("b", "the same story told twice on two sites."))?;
/// let report = store.dedup(Rule::Mode)?;
/// assert_eq!(report.clusters, vec![vec!["a".to_string(), "b".to_string()]]);
/// # Ok(())
/// # }
/// ```
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct DedupReport {
    /// Documents looked at.
    pub documents: u64,
    /// Distinct pairs within k (that the rule accepts).
    pub pairs: u64,
    /// Clusters of two or more documents: of [`crate::Store::dedup`], its leader clustering
    /// (`Leaders`: each cluster a kept document and the later ones that duplicate it);
    /// each one's ids sorted, the clusters ordered by their first id.
    pub clusters: Vec<Vec<String>>,
}

impl DedupReport {
    /// The size of the largest cluster (0 when there is none).
    pub fn largest(&self) -> usize {
        self.clusters.iter().map(Vec::len).max().unwrap_or(0)
    }

    /// How many clusters have each size.
    pub fn histogram(&self) -> std::collections::BTreeMap<usize, u64> {
        let mut h = std::collections::BTreeMap::new();
        for c in &self.clusters {
            *h.entry(c.len()).or_default() += 1;
        }
        h
    }
}

/// All pairs of `fps` (indices into it) within Hamming distance `k`, and their clusters.
///
/// Builds a layout for `fps.len()` documents with `k_max = k` (so any `k` up to 16 whose
/// layout has at most 100 tables), then, one table at a time, sorts the permuted
/// fingerprints (12 bytes per document) and scans them. `on_pair(a, b, distance)` is called
/// once per pair, with `a < b`.
pub fn near_duplicates(
    fps: &[u64],
    k: u32,
    mut on_pair: impl FnMut(u32, u32, u32) -> Result<()>,
) -> Result<DedupSummary> {
    let within = Candidates::Within(k);
    let take = |a, b, d| on_pair(a, b, d).map(|()| true);
    let (mut uf, pairs) = link_near_duplicates(fps, &[], &within, take, || Ok(Vec::new()))?;
    Ok(DedupSummary {
        documents: fps.len() as u64,
        pairs,
        clusters: uf.sets(2),
    })
}

/// [`near_duplicates`] over the `candidates` pairs (given the records' `sketches`, read for
/// bands), with a second test: a candidate pair counts (is linked, and counted) only when
/// `accept(a, b, distance)` (with `a < b`) says so, e.g. when the two
/// texts' sketches agree (`simstore dedup --verify`). Returns the union-find of the pairs
/// taken (their clusters are its sets: connected components, so a chain of pairs is one
/// cluster) and how many there were; memory is the union-find's 8 bytes and the scan's 16
/// per document, whatever the clusters. `late()`, called once after the scan, gives the
/// pairs `accept` put off (answered false) and takes after all (`(a, b, distance)`).
pub fn link_near_duplicates(
    fps: &[u64],
    sketches: &[Option<Sketch>],
    candidates: &Candidates,
    mut accept: impl FnMut(u32, u32, u32) -> Result<bool>,
    late: impl FnOnce() -> Result<Vec<(u32, u32, u32)>>,
) -> Result<(UnionFind, u64)> {
    let mut uf = UnionFind::new(fps.len())?;
    let mut pairs = 0u64;
    candidates.scan(fps, sketches, |a, b, d| {
        if accept(a, b, d)? {
            pairs += 1;
            uf.union(a, b);
        }
        Ok(())
    })?;
    for (a, b, _) in late()? {
        pairs += 1;
        uf.union(a, b);
    }
    Ok((uf, pairs))
}

/// The leader clustering ([`Leaders`]) of `fps` in their order: the `candidates` pairs
/// (given the records' `sketches`, read for bands) that `accept(a, b, distance)` (with `a < b`) takes are the duplicates, so a record joins the
/// nearest earlier kept record it duplicates, or is kept. `on_pair` is called once with
/// every pair taken (`accept` may be asked again about a pair when a large group of
/// duplicates makes the scan run again by windows). Memory: the scan's 16 bytes and the
/// clustering's 4 per document, and 12 per pair taken (at most
/// [`crate::index::leader::PAIR_BUDGET`] at a time). `late()`, called once after the
/// first scan, gives the pairs `accept` put off (answered false) and takes after all
/// (`(a, b, distance)`); in a later scan `accept` decides every pair.
pub fn lead_near_duplicates(
    fps: &[u64],
    sketches: &[Option<Sketch>],
    candidates: &Candidates,
    mut accept: impl FnMut(u32, u32, u32) -> Result<bool>,
    late: impl FnOnce() -> Result<Vec<(u32, u32, u32)>>,
    mut on_pair: impl FnMut(u32, u32, u32) -> Result<()>,
) -> Result<Leaders> {
    let mut leaders = Leaders::new(fps.len())?;
    let mut late = Some(late);
    while leaders.next_pass() {
        let first = leaders.first_pass();
        candidates.scan(fps, sketches, |a, b, d| {
            if leaders.wants(a, b) && accept(a, b, d)? {
                leaders.offer(a, b, d);
                if first {
                    on_pair(a, b, d)?;
                }
            }
            Ok(())
        })?;
        for (a, b, d) in late.take().map_or(Ok(Vec::new()), |late| late())? {
            leaders.offer(a, b, d);
            on_pair(a, b, d)?;
        }
    }
    Ok(leaders)
}

/// Which pairs of a collection a dedup in memory compares (its rule then decides them).
#[derive(Debug, Clone, PartialEq)]
pub enum Candidates {
    /// Every pair within `k`, exactly: a layout for the collection with `k_max = k`, each
    /// of its tables sorted and scanned.
    Within(u32),
    /// The pairs a store of `layout` finds for a quality mode's rule: those within `reach`
    /// that one of its tables puts under one prefix (every pair within its `k_max`; beyond,
    /// as in LSH), and at any distance those whose sketches share one of their first
    /// `bands` bands ([`bands::share`]). A band shared by more than
    /// [`bands::MAX_BAND_CANDIDATES`] records pairs each with its next that many in key
    /// order only, as a store's query reads that many from a band.
    Tables {
        /// The store's layout (of its quality mode, for the collection's size).
        layout: Layout,
        /// The largest distance of a pair found by the tables.
        reach: u32,
        /// Sketch bands read (0: none).
        bands: u32,
    },
}

impl Candidates {
    /// What a store of quality mode `mode` created for `n` records compares under `rule`:
    /// its tables' spans within the rule's reach and the rule's bands
    /// ([`Candidates::Tables`]), when the rule reaches beyond its k; else every pair within
    /// its k.
    pub fn of_mode(mode: Quality, rule: &MatchRule, n: usize) -> Result<Self> {
        if rule.reach <= rule.k {
            return Ok(Candidates::Within(rule.k));
        }
        Ok(Candidates::Tables {
            layout: mode.layout(n as u64)?,
            reach: rule.reach,
            bands: rule.bands,
        })
    }

    /// Calls `emit(a, b, distance)` once with every candidate pair of `fps` (`a < b`),
    /// given the records' `sketches` (by index; read for bands only).
    pub(crate) fn scan(
        &self,
        fps: &[u64],
        sketches: &[Option<Sketch>],
        mut emit: impl FnMut(u32, u32, u32) -> Result<()>,
    ) -> Result<()> {
        match self {
            Candidates::Within(k) => {
                let layout = Layout::for_expected_docs(fps.len() as u64, *k)?;
                let keys = &mut Vec::with_capacity(fps.len());
                scan_tables(fps, &layout, layout.tables_for_k(*k)?, *k, keys, &mut emit)
            }
            Candidates::Tables {
                layout,
                reach,
                bands,
            } => {
                let probe = layout.tables_for_k(layout.k_max())?;
                let keys = &mut Vec::with_capacity(fps.len());
                scan_tables(fps, layout, probe, *reach, keys, &mut emit)?;
                let found = |a: u64, b: u64| {
                    (a ^ b).count_ones() <= *reach && layout.finds(layout.k_max(), a, b)
                };
                scan_bands((fps, sketches), *bands, found, keys, &mut emit)
            }
        }
    }
}

/// Calls `emit(a, b, distance)` once with every pair of `fps` within `k` that a table of
/// `probe` puts under one prefix (`a < b`): one table at a time, its permuted fingerprints
/// sorted (in `keys`, 16 bytes per document) and scanned.
fn scan_tables(
    fps: &[u64],
    layout: &Layout,
    probe: &[usize],
    k: u32,
    keys: &mut Vec<(u64, u32)>,
    emit: &mut impl FnMut(u32, u32, u32) -> Result<()>,
) -> Result<()> {
    for pos in 0..probe.len() {
        keys.clear();
        keys.par_extend(
            fps.par_iter()
                .enumerate()
                .map(|(i, &fp)| (layout.permute(probe[pos], fp), i as u32)),
        );
        keys.par_sort_unstable();
        scan_table(
            layout,
            probe,
            pos,
            k,
            keys.iter().map(|&key| Ok(key)),
            |a, b, d| emit(a.min(b), a.max(b), d),
        )?;
    }
    Ok(())
}

/// Calls `emit(a, b, distance)` once with every pair whose sketches share one of the first
/// `bands` bands and that `found(fp_a, fp_b)` (the tables) did not report: one band at a
/// time, the records' band keys sorted (in `keys`, written in place: a record without
/// the band sorts last, as `NO_KEY`, and is cut off), each compared with its next
/// [`bands::MAX_BAND_CANDIDATES`] of the same band.
fn scan_bands(
    (fps, sketches): (&[u64], &[Option<Sketch>]),
    bands: u32,
    found: impl Fn(u64, u64) -> bool,
    keys: &mut Vec<(u64, u32)>,
    emit: &mut impl FnMut(u32, u32, u32) -> Result<()>,
) -> Result<()> {
    // Positions fit in u32 and are below u32::MAX, so no record's key is this one.
    const NO_KEY: (u64, u32) = (u64::MAX, u32::MAX);
    let sketch = |i: u32| sketches.get(i as usize).and_then(Option::as_ref);
    let earlier = |a: u32, b: u32, band: u32| match (sketch(a), sketch(b)) {
        (Some(x), Some(y)) => bands::share(x, y, band),
        _ => false,
    };
    for band in 0..bands {
        keys.clear();
        keys.par_extend(fps.par_iter().enumerate().map(|(i, &fp)| {
            let of = sketches.get(i).and_then(Option::as_ref);
            of.and_then(|s| bands::band(s, band))
                .map_or(NO_KEY, |b| (bands::key_of(b, fp), i as u32))
        }));
        keys.par_sort_unstable();
        keys.truncate(keys.partition_point(|&k| k < NO_KEY));
        let band_of = |key: u64| key >> (64 - bands::BAND_BITS);
        for (i, &(ka, a)) in keys.iter().enumerate() {
            let next = keys[i + 1..].iter().take(bands::MAX_BAND_CANDIDATES);
            for &(_, b) in next.take_while(|&&(kb, _)| band_of(kb) == band_of(ka)) {
                let (fa, fb) = (fps[a as usize], fps[b as usize]);
                if !found(fa, fb) && !earlier(a, b, band) {
                    emit(a.min(b), a.max(b), (fa ^ fb).count_ones())?;
                }
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn union_find_sets() {
        let mut uf = UnionFind::new(6).unwrap();
        assert!(uf.union(4, 1));
        assert!(uf.union(1, 5));
        assert!(!uf.union(5, 4));
        assert!(uf.union(0, 2));
        assert_eq!(uf.sets(2), vec![vec![0, 2], vec![1, 4, 5]]);
        assert_eq!(uf.sets(3), vec![vec![1, 4, 5]]);
        assert_eq!(uf.sets(1).len(), 3);
        // Keep-first: 0 (of {0, 2}), 1 (of {1, 4, 5}), 3 alone.
        assert_eq!(uf.firsts(), [true, true, false, true, false, false]);
        let sizes: Vec<(usize, u64)> = uf.set_sizes(2).into_iter().collect();
        assert_eq!(sizes, [(2, 1), (3, 1)]);
        assert_eq!(uf.set_sizes(1).values().sum::<u64>(), 3);
    }

    #[test]
    fn rejected_pairs_neither_link_nor_count() {
        // 0–1 (d 1) and 1–2 (d 1) and 0–2 (d 2); refusing every pair with 1 unlinks it.
        let fps = [0u64, 1, 3, 0xffff_0000];
        let within = Candidates::Within(2);
        let none = || Ok(Vec::new());
        let refuse = |a, b, _| Ok(a != 1 && b != 1);
        let (mut uf, pairs) = link_near_duplicates(&fps, &[], &within, refuse, none).unwrap();
        assert_eq!(pairs, 1);
        assert_eq!(uf.sets(2), vec![vec![0, 2]]);
        let (mut uf, pairs) =
            link_near_duplicates(&fps, &[], &within, |_, _, _| Ok(true), none).unwrap();
        assert_eq!((pairs, uf.sets(2)), (3, vec![vec![0, 1, 2]]));
        // A pair put off and taken late links and counts.
        let late = || Ok(vec![(1, 2, 1)]);
        let (mut uf, pairs) = link_near_duplicates(&fps, &[], &within, refuse, late).unwrap();
        assert_eq!((pairs, uf.sets(2)), (2, vec![vec![0, 1, 2]]));
    }

    #[test]
    fn pairs_equal_brute_force_small() {
        let fps = [
            0u64,
            1,
            3,
            0xff,
            0xff00_0000_0000_0000,
            0xff00_0000_0000_0001,
            0,
        ];
        for k in 0..=4 {
            let mut got = Vec::new();
            let s = near_duplicates(&fps, k, |a, b, d| {
                got.push((a, b, d));
                Ok(())
            })
            .unwrap();
            got.sort_unstable();
            let mut want = Vec::new();
            for a in 0..fps.len() {
                for b in a + 1..fps.len() {
                    let d = (fps[a] ^ fps[b]).count_ones();
                    if d <= k {
                        want.push((a as u32, b as u32, d));
                    }
                }
            }
            assert_eq!(got, want, "k = {k}");
            assert_eq!(s.pairs, want.len() as u64);
        }
    }

    /// A pair whose sketches agree on one band only, the last, and whose fingerprints are
    /// far apart: a candidate when every band is read, not when the first two are.
    #[test]
    fn a_pair_sharing_only_the_last_band_is_a_candidate_of_every_band() {
        use crate::index::bands::{BAND_BYTES, SKETCH_BANDS};
        let (mut a, mut b) = (Sketch::uniform(1), Sketch::uniform(2));
        let last = (SKETCH_BANDS as usize - 1) * BAND_BYTES;
        a.0[last..last + BAND_BYTES].fill(9);
        b.0[last..last + BAND_BYTES].fill(9);
        let fps = [0u64, u64::MAX >> 4, 0x0F0F_0F0F_0F0F_0F0F];
        let sketches = [Some(a), Some(b), None];
        let layout = Quality::Standard.layout(3).unwrap();
        let reach = layout.k_max();
        let pairs = |bands| {
            let mut got = Vec::new();
            let tables = Candidates::Tables {
                layout: layout.clone(),
                reach,
                bands,
            };
            tables
                .scan(&fps, &sketches, |a, b, d| {
                    got.push((a, b, d));
                    Ok(())
                })
                .unwrap();
            got
        };
        assert_eq!(pairs(2), vec![]);
        assert_eq!(pairs(SKETCH_BANDS), vec![(0, 1, 60)]);
    }
}
