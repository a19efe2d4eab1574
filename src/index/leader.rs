//! Leader clustering: which records a dedup keeps, and which kept record each dropped one
//! duplicates, without chaining.
//!
//! The records are taken in input order (dense indices `0..n`). Each joins the nearest
//! earlier *kept* record it duplicates (ties: the earliest), or else is kept itself. A
//! record joins a cluster only when it is itself a duplicate of the record the cluster
//! keeps, so one false pair drops at most one record; connected components
//! ([`super::cluster::UnionFind`]) would chain every record along a path of pairs into one
//! cluster, however far apart its ends.
//!
//! The scans find pairs in no useful order (table by table), so a pass gathers them (12
//! bytes each; 4 a record), sorts them by their later record and decides the records in
//! order. A group of copies has pairs quadratic in its size, so a pass narrows its window
//! of records whenever its pairs reach the budget, and the next pass skips the pairs whose
//! earlier record was dropped: one more pass, not quadratic memory (docs/design.md §6).
//!
//! A driver runs the scans:
//!
//! ```
//! use simstore::index::leader::Leaders;
//!
//! // 0–1 and 1–2 are duplicates, 0–2 are not: 1 joins 0, 2 is kept.
//! let pairs = [(1, 2, 3), (0, 1, 3)];
//! let mut leaders = Leaders::new(3).unwrap();
//! while leaders.next_pass() {
//!     for &(a, b, d) in &pairs {
//!         leaders.offer(a, b, d);
//!     }
//! }
//! assert_eq!(leaders.sets(2), vec![vec![0, 1]]);
//! assert_eq!(leaders.kept(), [true, false, true]);
//! ```

use std::collections::BTreeMap;
use std::ops::Range;

use rayon::prelude::*;

use crate::error::{Error, Result};

/// Pairs a pass gathers at most (12 bytes each: 96 MiB) before it narrows its window.
pub const PAIR_BUDGET: usize = 8 << 20;

/// A record not yet decided.
const UNDECIDED: u32 = u32::MAX;

/// The leader clustering of `n` records, built from passes over their pairs (see the
/// module documentation).
#[derive(Debug, Clone)]
pub struct Leaders {
    /// Each record's leader: itself when kept; [`UNDECIDED`] until its window is decided.
    leader: Vec<u32>,
    /// Pairs a pass gathers at most.
    budget: usize,
    /// Passes started.
    passes: u32,
    /// The records whose pairs the current pass gathers (those before it are decided).
    window: Range<u32>,
    /// The pairs gathered: (later record, distance, earlier record).
    pairs: Vec<(u32, u32, u32)>,
    /// Pairs offered in the first pass.
    total: u64,
}

impl Leaders {
    /// No record decided yet, with the default budget ([`PAIR_BUDGET`]). Errors when `n`
    /// does not fit in `u32`.
    pub fn new(n: usize) -> Result<Self> {
        Self::with_budget(n, PAIR_BUDGET)
    }

    /// [`Leaders::new`] gathering at most `budget` pairs (at least 1) in a pass.
    pub fn with_budget(n: usize, budget: usize) -> Result<Self> {
        if u32::try_from(n).is_err() {
            return Err(Error::TooLarge(format!(
                "{n} documents are too many to cluster (at most {})",
                u32::MAX
            )));
        }
        Ok(Leaders {
            leader: vec![UNDECIDED; n],
            budget: budget.max(1),
            passes: 0,
            window: 0..0,
            pairs: Vec::new(),
            total: 0,
        })
    }

    /// Decides the records of the pass just run (if any) and starts the next: then every
    /// pair should be offered ([`Leaders::offer`]) once more. False when every record is
    /// decided. Unless the pairs outgrow the budget, the first pass is the only one.
    pub fn next_pass(&mut self) -> bool {
        let n = self.leader.len() as u32;
        if self.passes > 0 {
            self.decide();
            if self.window.end >= n {
                return false;
            }
        }
        self.window = self.window.end..n;
        self.passes += 1;
        true
    }

    /// Whether the pass running is the first: every pair is offered exactly once in it
    /// (print or count pairs then, not in a later pass).
    pub fn first_pass(&self) -> bool {
        self.passes == 1
    }

    /// Whether offering the pair `a`, `b` matters in this pass: a filter to skip checking a
    /// pair that would be ignored anyway. In the first pass, every pair does (it is
    /// counted); in a later one, a pair whose later record is in the window and whose
    /// earlier record is in it too or kept.
    pub fn wants(&self, a: u32, b: u32) -> bool {
        self.passes == 1 || self.gathers(a, b)
    }

    /// Whether the pass gathers the pair `a`, `b` (see [`Leaders::wants`]).
    fn gathers(&self, a: u32, b: u32) -> bool {
        let (a, b) = (a.min(b), a.max(b));
        self.window.contains(&b) && (a >= self.window.start || self.leader[a as usize] == a)
    }

    /// Takes a pair of duplicates (`a`, `b`: two records in either order, at `distance`).
    pub fn offer(&mut self, a: u32, b: u32, distance: u32) {
        if a == b {
            return;
        }
        if self.passes == 1 {
            self.total += 1;
        }
        if !self.gathers(a, b) {
            return;
        }
        self.pairs.push((a.max(b), distance, a.min(b)));
        if self.pairs.len() >= self.budget {
            self.narrow();
        }
    }

    /// The pairs offered (in the first pass).
    pub fn pairs(&self) -> u64 {
        self.total
    }

    /// How many records there are.
    pub fn len(&self) -> usize {
        self.leader.len()
    }

    /// Whether there is no record.
    pub fn is_empty(&self) -> bool {
        self.leader.is_empty()
    }

    /// The record that `x` joined: `x` itself when it is kept.
    pub fn leader(&self, x: u32) -> u32 {
        self.leader[x as usize]
    }

    /// For every record in order, whether it is kept (a dedup keeps those and drops the
    /// others).
    pub fn kept(&self) -> Vec<bool> {
        let kept = self.leader.iter().enumerate();
        kept.map(|(x, &l)| l == x as u32).collect()
    }

    /// The clusters with at least `min` members, each sorted (the kept record first),
    /// ordered by their kept record.
    pub fn sets(&self, min: usize) -> Vec<Vec<u32>> {
        let mut slot = self.sizes();
        let mut sets: Vec<Vec<u32>> = Vec::new();
        for (x, &l) in self.leader.iter().enumerate() {
            // A leader comes before its members: its size becomes its set's number.
            if l == x as u32 {
                let size = slot[x] as usize;
                slot[x] = match size >= min {
                    true => sets.len() as u32,
                    false => UNDECIDED,
                };
                if size >= min {
                    sets.push(Vec::with_capacity(size));
                }
            }
            if slot[l as usize] != UNDECIDED {
                sets[slot[l as usize] as usize].push(x as u32);
            }
        }
        sets
    }

    /// How many clusters have each size, for the clusters of at least `min` members.
    pub fn set_sizes(&self, min: usize) -> BTreeMap<usize, u64> {
        let sizes = self.sizes();
        let mut out = BTreeMap::new();
        for (x, &l) in self.leader.iter().enumerate() {
            if l == x as u32 && sizes[x] as usize >= min {
                *out.entry(sizes[x] as usize).or_default() += 1;
            }
        }
        out
    }

    /// Each kept record's cluster size (0 for the others).
    fn sizes(&self) -> Vec<u32> {
        let mut sizes = vec![0u32; self.leader.len()];
        for &l in &self.leader {
            sizes[l as usize] += 1;
        }
        sizes
    }

    /// Ends the window before the median later record of the pairs gathered (at least one
    /// record wide) and forgets the pairs of the records after it (half of them or more,
    /// unless the window is then one record).
    /// A window of one record keeps all its pairs (fewer than the records before it).
    fn narrow(&mut self) {
        let lo = self.window.start;
        if self.window.end <= lo + 1 {
            return;
        }
        let mid = self.pairs.len() / 2;
        let median = self.pairs.select_nth_unstable(mid).1.0;
        let end = median.max(lo + 1);
        self.pairs.retain(|p| p.0 < end);
        self.window.end = end;
    }

    /// Decides the records of the window from the pairs gathered: each joins the nearest
    /// (then earliest) earlier kept record it has a pair with, else is kept.
    fn decide(&mut self) {
        let mut pairs = std::mem::take(&mut self.pairs);
        pairs.par_sort_unstable();
        let mut next = pairs.iter().peekable();
        for b in self.window.clone() {
            let mut leader = b;
            while let Some(&&(later, _, a)) = next.peek() {
                if later != b {
                    break;
                }
                next.next();
                if leader == b && self.leader[a as usize] == a {
                    leader = a;
                }
            }
            self.leader[b as usize] = leader;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The leader clustering of `pairs` over `n` records, by the definition.
    fn brute(n: u32, pairs: &[(u32, u32, u32)]) -> Vec<u32> {
        let mut leader: Vec<u32> = Vec::new();
        for b in 0..n {
            let best = pairs
                .iter()
                .filter_map(|&(x, y, d)| match (x.min(y), x.max(y)) {
                    (a, later) if later == b && leader[a as usize] == a => Some((d, a)),
                    _ => None,
                })
                .min();
            leader.push(best.map_or(b, |(_, a)| a));
        }
        leader
    }

    fn run(n: u32, pairs: &[(u32, u32, u32)], budget: usize) -> Leaders {
        let mut leaders = Leaders::with_budget(n as usize, budget).unwrap();
        while leaders.next_pass() {
            for &(a, b, d) in pairs {
                leaders.offer(a, b, d);
            }
        }
        leaders
    }

    #[test]
    fn a_chain_keeps_every_other_record() {
        // 0–1, 1–2, 2–3, 3–4: 1 joins 0, 2 is kept, 3 joins 2, 4 is kept.
        let pairs = [(3, 4, 1), (0, 1, 1), (2, 1, 1), (2, 3, 1)];
        let l = run(5, &pairs, 100);
        assert_eq!(l.kept(), [true, false, true, false, true]);
        assert_eq!(l.sets(2), vec![vec![0, 1], vec![2, 3]]);
        assert_eq!(l.sets(1).len(), 3);
        assert_eq!(l.set_sizes(2), BTreeMap::from([(2, 2)]));
        assert_eq!(l.pairs(), 4);
    }

    #[test]
    fn a_record_joins_the_nearest_then_earliest_kept_record() {
        // 3 duplicates 0 (d 3), 1 (d 2) and 2 (d 2); all three are kept: 3 joins 1.
        let l = run(4, &[(0, 3, 3), (2, 3, 2), (1, 3, 2)], 100);
        assert_eq!(
            (0..4).map(|x| l.leader(x)).collect::<Vec<_>>(),
            [0, 1, 2, 1]
        );
    }

    #[test]
    fn windows_decide_as_one_pass_does() {
        // Blocks of records with many pairs: a group of equal records, chains, strays.
        let n = 5197;
        let mut pairs = Vec::new();
        for a in 0..300u32 {
            for b in a + 1..300 {
                pairs.push((a * 13 % n, b * 13 % n, 0));
            }
        }
        let mut state = 7u64;
        for _ in 0..20_000 {
            state = state
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1);
            let a = (state >> 33) as u32 % n;
            let b = (a + 1 + (state >> 20) as u32 % 40).min(n - 1);
            if a != b {
                pairs.push((b, a, (state >> 8) as u32 % 4));
            }
        }
        let want = brute(n, &pairs);
        for budget in [usize::MAX, pairs.len(), 5000, 1] {
            let l = run(n, &pairs, budget);
            let got: Vec<u32> = (0..n).map(|x| l.leader(x)).collect();
            assert_eq!(got, want, "budget {budget}");
            assert_eq!(l.pairs(), pairs.len() as u64);
        }
    }

    #[test]
    fn no_records_no_clusters() {
        let l = run(0, &[], 10);
        assert!(l.is_empty() && l.sets(1).is_empty() && l.kept().is_empty());
    }
}
