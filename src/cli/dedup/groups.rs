//! The clusters of a dedup in memory (of FILEs, or of a store's documents with `--verify`):
//! leader clustering, or with `--transitive` connected components.

use std::collections::BTreeMap;

use simstore::index::cluster::{self, UnionFind};
use simstore::index::leader::Leaders;
use simstore::{MatchRule, Sketch};

/// The pairs of a dedup in memory, grouped.
pub(super) enum Groups {
    /// Leader clustering in input order (the default).
    Leaders(Leaders),
    /// Connected components (`--transitive`), and the number of pairs.
    Components(UnionFind, u64),
}

/// Finds every pair of `fps` within `rule`'s reach (or its k, if larger) that `rule`
/// accepts, given the documents' `sketches` (by index; empty when the rule does not
/// verify), calls `on_pair(a, b, distance)` once with each (`a < b`), and groups them:
/// with `transitive`, into connected components; else by leader clustering.
pub(super) fn group(
    fps: &[u64],
    sketches: &[Option<Sketch>],
    rule: &MatchRule,
    transitive: bool,
    mut on_pair: impl FnMut(u32, u32, u32) -> simstore::Result<()>,
) -> simstore::Result<Groups> {
    let sketch = |i: u32| sketches.get(i as usize).and_then(Option::as_ref);
    let accept = |a: u32, b: u32, d: u32| rule.accepts(d, sketch(a), sketch(b));
    let within = rule.reach.max(rule.k);
    if transitive {
        let (uf, pairs) = cluster::link_near_duplicates(fps, within, |a, b, d| {
            let taken = accept(a, b, d);
            if taken {
                on_pair(a, b, d)?;
            }
            Ok(taken)
        })?;
        return Ok(Groups::Components(uf, pairs));
    }
    let leaders =
        cluster::lead_near_duplicates(fps, within, |a, b, d| Ok(accept(a, b, d)), on_pair)?;
    Ok(Groups::Leaders(leaders))
}

impl Groups {
    /// The pairs found.
    pub(super) fn pairs(&self) -> u64 {
        match self {
            Groups::Leaders(l) => l.pairs(),
            Groups::Components(_, pairs) => *pairs,
        }
    }

    /// The clusters of at least `min` documents, each sorted, ordered by their first.
    pub(super) fn sets(&mut self, min: usize) -> Vec<Vec<u32>> {
        match self {
            Groups::Leaders(l) => l.sets(min),
            Groups::Components(uf, _) => uf.sets(min),
        }
    }

    /// How many clusters of at least `min` documents have each size.
    pub(super) fn set_sizes(&self, min: usize) -> BTreeMap<usize, u64> {
        match self {
            Groups::Leaders(l) => l.set_sizes(min),
            Groups::Components(uf, _) => uf.set_sizes(min),
        }
    }

    /// For every document in order, whether the dedup keeps it: of leader clustering, the
    /// kept ones; of components, the first of each.
    pub(super) fn kept(&mut self) -> Vec<bool> {
        match self {
            Groups::Leaders(l) => l.kept(),
            Groups::Components(uf, _) => uf.firsts(),
        }
    }
}
