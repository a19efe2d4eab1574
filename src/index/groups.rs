//! The clusters of a dedup in memory (`simstore dedup FILE...`, a store's documents with
//! `--verify`, Python's `simstore.dedup`): leader clustering, or connected components, over
//! the records in the order of a keep policy ([`Clusters`]).

use std::collections::BTreeMap;

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

/// Finds every candidate pair of `fps` that the rule accepts, given the documents'
/// `sketches` (by index; empty when the rule does not verify), calls `on_pair(a, b,
/// distance)` once with each (`a < b`), and groups them: transitively, into connected
/// components; else by leader clustering.
fn group(
    fps: &[u64],
    sketches: &[Option<Sketch>],
    grouping: &Grouping,
    mut on_pair: impl FnMut(u32, u32, u32) -> Result<()>,
) -> Result<Groups> {
    let sketch = |i: u32| sketches.get(i as usize).and_then(Option::as_ref);
    let rule = &grouping.rule;
    let accept = |a: u32, b: u32, d: u32| rule.accepts(d, sketch(a), sketch(b));
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
        mut on_pair: impl FnMut(u32, u32, u32) -> Result<()>,
    ) -> Result<Self> {
        let Some(order) = order else {
            let groups = group(fps, sketches, grouping, on_pair)?;
            return Ok(Self {
                groups,
                order: None,
                len: fps.len(),
            });
        };
        let fps: Vec<u64> = order.iter().map(|&i| fps[i as usize]).collect();
        let sketches: Vec<Option<Sketch>> = match sketches.is_empty() {
            true => Vec::new(),
            false => order.iter().map(|&i| sketches[i as usize]).collect(),
        };
        let groups = group(&fps, &sketches, grouping, |a, b, d| {
            let (a, b) = (order[a as usize], order[b as usize]);
            on_pair(a.min(b), a.max(b), d)
        })?;
        Ok(Self {
            groups,
            order: Some(order),
            len: fps.len(),
        })
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
