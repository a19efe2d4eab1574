//! The clusters of a dedup in memory (`simstore dedup FILE...`, a store's documents with
//! `--verify`, Python's `simstore.dedup`): leader clustering, or connected components, over
//! the records in the order of a keep policy ([`Clusters`]).

use std::collections::{BTreeMap, HashMap};

use crate::error::Result;
use crate::index::cluster::{self, Candidates, UnionFind};
use crate::index::leader::Leaders;
use crate::index::quality::{MatchRule, Quality};
use crate::types::sketch::Sketch;

/// The pairs of a dedup in memory, grouped.
enum Groups {
    /// Leader clustering in input order (the default).
    Leaders(Leaders),
    /// Connected components (`--transitive`), and the number of pairs.
    Components(UnionFind, u64),
}

/// How a dedup in memory pairs and groups records.
#[derive(Debug, Clone)]
pub struct Grouping {
    /// The rule that decides each candidate pair.
    pub rule: MatchRule,
    /// The pairs compared.
    pub candidates: Candidates,
    /// Connected components instead of leader clustering.
    pub transitive: bool,
}

impl Grouping {
    /// `rule` over `n` records: of a quality `mode`'s rule, the pairs a store of that mode
    /// created for `n` records compares ([`Candidates::of_mode`]); without a mode, every
    /// pair within the rule's reach (or its k, if larger).
    pub fn new(rule: MatchRule, mode: Option<Quality>, n: usize, transitive: bool) -> Result<Self> {
        let candidates = match mode {
            Some(mode) => Candidates::of_mode(mode, &rule, n)?,
            None => Candidates::Within(rule.reach.max(rule.k)),
        };
        Ok(Grouping {
            rule,
            candidates,
            transitive,
        })
    }
}

/// How far from its threshold the sketches' estimate of a pair's similarity may fall and
/// the pair still be checked against the texts, when a dedup can read them again
/// ([`Clusters::checked`]): three standard errors of an estimate from 63 minima at
/// similarity 0.5 (√(0.25 / 63) ≈ 0.063). A pair whose estimate is farther off is decided
/// by it: with 63 minima a pair of similarity 0.3 (or 0.7) passes (or fails) a threshold
/// of 0.5 about once in 10⁴ pairs.
pub const EXACT_MARGIN: f64 = 0.19;

/// At most this many pairs are checked against the texts in one dedup; beyond, the
/// sketches' estimate decides ([`ExactCheck::unchecked`]).
pub const MAX_EXACT_PAIRS: usize = 4 << 20;

/// Pairs near their threshold (records' own positions, `a < b`), to be checked.
pub type NearPairs = Vec<(u32, u32)>;

/// The texts' exact similarities of the pairs that could be checked.
pub type ExactSimilarities = HashMap<(u32, u32), f64>;

/// What checking the pairs near the threshold against the texts did.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ExactCheck {
    /// Pairs whose estimate was within [`EXACT_MARGIN`] of their threshold and whose
    /// texts were compared.
    pub checked: u64,
    /// Of those, the pairs the texts decided otherwise than the estimate: accepted (a copy
    /// the estimate missed) and rejected (a pair the estimate took).
    pub accepted: u64,
    /// See `accepted`.
    pub rejected: u64,
    /// Pairs near the threshold left to the estimate: beyond [`MAX_EXACT_PAIRS`], or
    /// whose texts could not be read.
    pub unchecked: u64,
}

/// A candidate pair near its threshold: positions in the scan's order, its estimate and
/// its threshold.
struct Near {
    a: u32,
    b: u32,
    estimate: f64,
    threshold: f64,
}

/// The candidate pairs of `fps` whose estimate is within [`EXACT_MARGIN`] of the rule's
/// threshold, at most [`MAX_EXACT_PAIRS`] of them, and how many more there were.
fn near_threshold(
    fps: &[u64],
    sketches: &[Option<Sketch>],
    grouping: &Grouping,
) -> Result<(Vec<Near>, u64)> {
    let sketch = |i: u32| sketches.get(i as usize).and_then(Option::as_ref);
    let (mut near, mut more) = (Vec::new(), 0u64);
    grouping.candidates.scan(fps, sketches, |a, b, d| {
        let (sa, sb) = (sketch(a), sketch(b));
        match grouping.rule.margin(d, sa, sb) {
            Some(m) if m.abs() <= EXACT_MARGIN && near.len() < MAX_EXACT_PAIRS => {
                let estimate = sa.zip(sb).map_or(0.0, |(x, y)| x.similarity(y));
                let threshold = estimate - m;
                near.push(Near {
                    a,
                    b,
                    estimate,
                    threshold,
                });
            }
            Some(m) if m.abs() <= EXACT_MARGIN => more += 1,
            _ => {}
        }
        Ok(())
    })?;
    Ok((near, more))
}

/// Finds every candidate pair of `fps` that the rule accepts, given the documents'
/// `sketches` (by index; empty when the rule does not verify) and the exact similarities
/// of some pairs (`exact(a, b)`, which overrides the sketches' estimate), calls
/// `on_pair(a, b, distance)` once with each (`a < b`), and groups them: transitively, into
/// connected components; else by leader clustering.
fn group(
    fps: &[u64],
    sketches: &[Option<Sketch>],
    grouping: &Grouping,
    exact: impl Fn(u32, u32) -> Option<f64>,
    mut on_pair: impl FnMut(u32, u32, u32) -> Result<()>,
) -> Result<Groups> {
    let sketch = |i: u32| sketches.get(i as usize).and_then(Option::as_ref);
    let rule = &grouping.rule;
    let accept = |a: u32, b: u32, d: u32| {
        let (sa, sb) = (sketch(a), sketch(b));
        let known = match rule.margin(d, sa, sb) {
            Some(m) if m.abs() <= EXACT_MARGIN => exact(a, b),
            _ => None,
        };
        rule.accepts_exact(d, sa, sb, known)
    };
    let candidates = &grouping.candidates;
    if grouping.transitive {
        let (uf, pairs) = cluster::link_near_duplicates(fps, sketches, candidates, |a, b, d| {
            let taken = accept(a, b, d);
            if taken {
                on_pair(a, b, d)?;
            }
            Ok(taken)
        })?;
        return Ok(Groups::Components(uf, pairs));
    }
    let accept = |a, b, d| Ok(accept(a, b, d));
    let leaders = cluster::lead_near_duplicates(fps, sketches, candidates, accept, on_pair)?;
    Ok(Groups::Leaders(leaders))
}

/// The clusters of records taken in the order `order` (positions into the records; `None`:
/// input order), answered by the records' own positions.
pub struct Clusters {
    groups: Groups,
    /// The texts' similarities of the pairs near the threshold ([`Clusters::checked`]).
    exact: ExactSimilarities,
    order: Option<Vec<u32>>,
    /// How many records there are.
    len: usize,
}

impl Clusters {
    /// Groups `fps` (with their `sketches`) as [`group`] does, taking the records in
    /// `order`; `on_pair` gets the records' own positions.
    pub fn new(
        fps: &[u64],
        sketches: &[Option<Sketch>],
        order: Option<Vec<u32>>,
        grouping: &Grouping,
        on_pair: impl FnMut(u32, u32, u32) -> Result<()>,
    ) -> Result<Self> {
        let records = (fps, sketches, order);
        Self::checked(records, grouping, None, on_pair).map(|(c, _)| c)
    }

    /// [`Clusters::new`] for a dedup that can read the texts again: `exact` is given the
    /// candidate pairs whose estimate falls within [`EXACT_MARGIN`] of their threshold
    /// (the records' own positions, `a < b`) and returns the exact similarities of their
    /// shingle sets it could compute ([`crate::text::sketch::jaccard`]), which decide those
    /// pairs. Also says what the check did.
    pub fn checked(
        (fps, sketches, order): (&[u64], &[Option<Sketch>], Option<Vec<u32>>),
        grouping: &Grouping,
        exact: Option<&mut dyn FnMut(NearPairs) -> Result<ExactSimilarities>>,
        mut on_pair: impl FnMut(u32, u32, u32) -> Result<()>,
    ) -> Result<(Self, ExactCheck)> {
        let reordered = order.as_ref().map(|order| {
            let fps: Vec<u64> = order.iter().map(|&i| fps[i as usize]).collect();
            let sketches: Vec<Option<Sketch>> = match sketches.is_empty() {
                true => Vec::new(),
                false => order.iter().map(|&i| sketches[i as usize]).collect(),
            };
            (fps, sketches)
        });
        let (fps, sketches) = reordered
            .as_ref()
            .map_or((fps, sketches), |(f, s)| (&f[..], &s[..]));
        let own = |i: u32| order.as_ref().map_or(i, |o| o[i as usize]);
        let key = |a: u32, b: u32| (own(a).min(own(b)), own(a).max(own(b)));
        let (similarities, check) = match exact {
            Some(exact) if grouping.rule.min_similarity.is_some() && !sketches.is_empty() => {
                check_near(fps, sketches, grouping, key, exact)?
            }
            _ => (HashMap::new(), ExactCheck::default()),
        };
        let known = |a: u32, b: u32| similarities.get(&key(a, b)).copied();
        let groups = group(fps, sketches, grouping, known, |a, b, d| {
            let (a, b) = key(a, b);
            on_pair(a, b, d)
        })?;
        let len = fps.len();
        let exact = similarities;
        Ok((
            Self {
                groups,
                exact,
                order,
                len,
            },
            check,
        ))
    }

    /// The exact similarities of the pairs near the threshold that the texts decided, by
    /// the records' own positions (`a < b`; empty unless [`Clusters::checked`]).
    pub fn exact(&self) -> &ExactSimilarities {
        &self.exact
    }

    /// The pairs found.
    pub fn pairs(&self) -> u64 {
        self.groups.pairs()
    }

    /// How many clusters of at least `min` records have each size.
    pub fn set_sizes(&self, min: usize) -> BTreeMap<usize, u64> {
        self.groups.set_sizes(min)
    }

    /// The clusters of at least `min` records, each with the record it formed around (the
    /// one the policy keeps) first, ordered by it in the policy's order.
    pub fn sets(&mut self, min: usize) -> Vec<Vec<u32>> {
        let mut sets = self.groups.sets(min);
        if let Some(order) = &self.order {
            for set in &mut sets {
                set.iter_mut().for_each(|x| *x = order[*x as usize]);
            }
        }
        sets
    }

    /// For every record in input order, whether the dedup keeps it: the record each
    /// cluster formed around, and every record in no cluster; with `none`, no member of a
    /// cluster of two or more.
    pub fn kept(&mut self, none: bool) -> Vec<bool> {
        if none {
            let mut kept = vec![true; self.len];
            for set in self.sets(2) {
                set.iter().for_each(|&x| kept[x as usize] = false);
            }
            return kept;
        }
        let kept = self.groups.kept();
        let Some(order) = &self.order else {
            return kept;
        };
        let mut mapped = vec![false; kept.len()];
        for (pos, k) in kept.into_iter().enumerate() {
            mapped[order[pos] as usize] = k;
        }
        mapped
    }
}

/// The exact similarities (by the records' own positions, `key`) of the candidate pairs
/// near their threshold that `exact` could compute, and what the check did.
fn check_near(
    fps: &[u64],
    sketches: &[Option<Sketch>],
    grouping: &Grouping,
    key: impl Fn(u32, u32) -> (u32, u32),
    exact: &mut dyn FnMut(NearPairs) -> Result<ExactSimilarities>,
) -> Result<(ExactSimilarities, ExactCheck)> {
    let (near, more) = near_threshold(fps, sketches, grouping)?;
    let mut check = ExactCheck {
        unchecked: more,
        ..ExactCheck::default()
    };
    if near.is_empty() {
        return Ok((HashMap::new(), check));
    }
    let mut similarities = exact(near.iter().map(|p| key(p.a, p.b)).collect())?;
    for p in &near {
        let Some(&s) = similarities.get(&key(p.a, p.b)) else {
            check.unchecked += 1;
            continue;
        };
        check.checked += 1;
        match (p.estimate >= p.threshold, s >= p.threshold) {
            (false, true) => check.accepted += 1,
            (true, false) => check.rejected += 1,
            _ => {}
        }
    }
    similarities.shrink_to_fit();
    Ok((similarities, check))
}

impl Groups {
    /// The pairs found.
    fn pairs(&self) -> u64 {
        match self {
            Groups::Leaders(l) => l.pairs(),
            Groups::Components(_, pairs) => *pairs,
        }
    }

    /// The clusters of at least `min` documents, each sorted, ordered by their first.
    fn sets(&mut self, min: usize) -> Vec<Vec<u32>> {
        match self {
            Groups::Leaders(l) => l.sets(min),
            Groups::Components(uf, _) => uf.sets(min),
        }
    }

    /// How many clusters of at least `min` documents have each size.
    fn set_sizes(&self, min: usize) -> BTreeMap<usize, u64> {
        match self {
            Groups::Leaders(l) => l.set_sizes(min),
            Groups::Components(uf, _) => uf.set_sizes(min),
        }
    }

    /// For every document in order, whether the dedup keeps it: of leader clustering, the
    /// kept ones; of components, the first of each.
    fn kept(&mut self) -> Vec<bool> {
        match self {
            Groups::Leaders(l) => l.kept(),
            Groups::Components(uf, _) => uf.firsts(),
        }
    }
}
