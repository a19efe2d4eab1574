//! The clusters of a dedup in memory (`simstore dedup FILE...`, a store's documents with
//! `--verify`, Python's `simstore.dedup`): leader clustering, or connected components, over
//! the records in the order of a keep policy ([`Clusters`]).

use std::cell::RefCell;
use std::collections::BTreeMap;

use crate::error::Result;
use crate::index::cluster::{self, Candidates, UnionFind};
use crate::index::leader::Leaders;
use crate::index::near::{ExactCheck, ExactSimilarities, Judge, Texts};
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

/// Finds every candidate pair of `fps` that `judge` takes, given the documents'
/// `sketches` (by index; empty when the rule does not verify), calls `on_pair(a, b,
/// distance)` once with each (`a < b`), and groups them: transitively, into connected
/// components; else by leader clustering. The pairs the judge puts off are taken, or not,
/// after the first scan.
fn group(
    fps: &[u64],
    sketches: &[Option<Sketch>],
    grouping: &Grouping,
    judge: &mut Judge,
    on_pair: impl FnMut(u32, u32, u32) -> Result<()>,
) -> Result<Groups> {
    let judge = RefCell::new(judge);
    let late = || judge.borrow_mut().resolve();
    let candidates = &grouping.candidates;
    if grouping.transitive {
        let on_pair = RefCell::new(on_pair);
        let late_linked = || {
            let taken = late()?;
            let mut on_pair = on_pair.borrow_mut();
            taken.iter().try_for_each(|&(a, b, d)| on_pair(a, b, d))?;
            Ok(taken)
        };
        let take = |a, b, d| {
            let taken = judge.borrow_mut().takes(a, b, d);
            if taken {
                on_pair.borrow_mut()(a, b, d)?;
            }
            Ok(taken)
        };
        let linked = cluster::link_near_duplicates(fps, sketches, candidates, take, late_linked);
        let (uf, pairs) = linked?;
        return Ok(Groups::Components(uf, pairs));
    }
    let accept = |a, b, d| Ok(judge.borrow_mut().takes(a, b, d));
    let leaders = cluster::lead_near_duplicates(fps, sketches, candidates, accept, late, on_pair)?;
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

    /// [`Clusters::new`] for a dedup that can read the texts again: `texts.exact` is given
    /// the candidate pairs whose estimate falls within
    /// [`crate::index::near::EXACT_MARGIN`] of their threshold, and every candidate pair of
    /// a record in `texts.partial` (the records' own positions, `a < b`), and returns the
    /// exact similarities of their shingle sets it could compute
    /// ([`crate::text::sketch::jaccard`]), which decide those pairs. Also says what the
    /// check did.
    pub fn checked(
        (fps, sketches, order): (&[u64], &[Option<Sketch>], Option<Vec<u32>>),
        grouping: &Grouping,
        texts: Option<Texts>,
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
        let mut judge = Judge::new(&grouping.rule, sketches, texts, &key);
        let groups = group(fps, sketches, grouping, &mut judge, |a, b, d| {
            let (a, b) = key(a, b);
            on_pair(a, b, d)
        })?;
        let (exact, check) = judge.finish();
        let len = fps.len();
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
