//! The baselines `simstore bench` measures the store against, in the same run: an in-memory
//! index of the same layout, and brute force over a `Vec<u64>`.

use rayon::prelude::*;
use simstore::Layout;
use simstore::index::probing::{self, Flip};

/// An in-memory index of the same layout: one sorted `Vec` of permuted fingerprints per
/// table, probed by binary search.
pub(super) struct MemIndex<'a> {
    layout: &'a Layout,
    tables: Vec<Vec<(u64, u32)>>,
}

impl<'a> MemIndex<'a> {
    pub(super) fn build(layout: &'a Layout, fps: &[u64]) -> Self {
        let tables = (0..layout.tables().len())
            .into_par_iter()
            .map(|t| {
                let mut v: Vec<(u64, u32)> = fps
                    .iter()
                    .enumerate()
                    .map(|(i, &f)| (layout.permute(t, f), i as u32))
                    .collect();
                v.sort_unstable();
                v
            })
            .collect();
        Self { layout, tables }
    }

    /// The stored fingerprints within `k` of `q`, read from the spans of the tables for `k`
    /// and of `flips` (the store's query-directed probes: the same spans as the store's).
    pub(super) fn query(&self, q: u64, k: u32, flips: &[Flip]) -> Vec<u32> {
        let mut out = Vec::new();
        let own = self.layout.tables_for_k(k).expect("k <= k_max");
        for probe in probing::spans(self.layout, own, flips, q) {
            let table = &self.tables[probe.table];
            let mut i = table.partition_point(|&(key, _)| key < probe.lo());
            while i < table.len() && probe.holds(table[i].0) {
                if (table[i].0 ^ probe.permuted).count_ones() <= k {
                    out.push(table[i].1);
                }
                i += 1;
            }
        }
        out.sort_unstable();
        out.dedup();
        out
    }
}

pub(super) fn brute(fps: &[u64], q: u64, k: u32) -> Vec<u32> {
    fps.iter()
        .enumerate()
        .filter(|(_, f)| (*f ^ q).count_ones() <= k)
        .map(|(i, _)| i as u32)
        .collect()
}

/// The stored fingerprints within `reach` of `q`: (index, distance), by index.
pub(super) fn brute_near(fps: &[u64], q: u64, reach: u32) -> Vec<(u32, u32)> {
    fps.iter()
        .enumerate()
        .map(|(i, f)| (i as u32, (f ^ q).count_ones()))
        .filter(|&(_, d)| d <= reach)
        .collect()
}
