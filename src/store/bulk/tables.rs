//! The table runs of a bulk load: from every winner's `(fingerprint, seq)`, held in memory
//! when they fit in the budget, else through an external sort per table.

use std::cmp::Ordering;
use std::sync::Arc;

use rayon::prelude::*;

use super::sort::{Sorter, SpillDir};
use crate::error::Result;
use crate::index::layout::Layout;
use crate::store::backend::{BulkIngest, SortedEntry, SortedRun, SortedWriter, Space};

/// A table key held in memory: the permuted fingerprint and the sequence number's offset
/// from the load's first, in 12 bytes (so that two tables' keys of 10M documents fit in
/// the default 256 MiB together).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(C, packed(4))]
pub(super) struct MemKey {
    key: u64,
    seq: u32,
}

impl Ord for MemKey {
    fn cmp(&self, other: &Self) -> Ordering {
        // Copies: the fields of a packed struct cannot be borrowed.
        let (a, b) = ({ self.key }, { other.key });
        a.cmp(&b).then_with(|| { self.seq }.cmp(&{ other.seq }))
    }
}

impl PartialOrd for MemKey {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

/// How the table runs are sorted.
pub(super) enum TableKeys {
    /// Every winner's fingerprint and sequence number (its offset from `base`) in memory.
    Memory { keys: Vec<MemKey>, base: u64 },
    /// An external sort per table, each with its share of the budget.
    External(Vec<Sorter<(u64, u64)>>),
}

impl TableKeys {
    /// The table keys of a load of `entries` documents from sequence number `base`: in
    /// memory if they fit in `room` bytes, else one external sort of `share` bytes a table.
    pub(super) fn new(
        layout: &Layout,
        (base, entries): (u64, u64),
        room: usize,
        share: usize,
        spill: &Arc<SpillDir>,
    ) -> Self {
        let fits = u32::try_from(entries).is_ok()
            && usize::try_from(entries)
                .is_ok_and(|n| n.saturating_mul(size_of::<MemKey>()) <= room);
        if fits {
            return TableKeys::Memory {
                keys: Vec::with_capacity(entries as usize),
                base,
            };
        }
        let sorters = layout.tables().iter();
        TableKeys::External(sorters.map(|_| Sorter::new(spill.clone(), share)).collect())
    }

    /// Adds a winner.
    pub(super) fn push(&mut self, layout: &Layout, fp: u64, seq: u64) -> Result<()> {
        match self {
            TableKeys::Memory { keys, base } => keys.push(MemKey {
                key: fp,
                // Fits: fewer than 2^32 entries from `base` (see `new`).
                seq: (seq - *base) as u32,
            }),
            TableKeys::External(sorters) => {
                for (t, table) in sorters.iter_mut().enumerate() {
                    table.push((layout.permute(t, fp), seq))?;
                }
            }
        }
        Ok(())
    }

    /// Writes every table's run, using at most `room` bytes of memory.
    pub(super) fn write(
        self,
        ingest: &dyn BulkIngest,
        layout: &Layout,
        room: usize,
    ) -> Result<Vec<SortedRun>> {
        let runs = match self {
            TableKeys::Memory { keys, base } => in_memory(ingest, layout, keys, base, room)?,
            TableKeys::External(sorters) => sorters
                .into_par_iter()
                .enumerate()
                .map(|(t, keys)| {
                    let put =
                        |w: &mut dyn SortedWriter, (p, seq)| w.put(SortedEntry::Table(p, seq));
                    keys.finish()?.write_to(ingest, Space::Table(t), put)
                })
                .collect::<Result<Vec<_>>>()?,
        };
        Ok(runs.into_iter().flatten().collect())
    }
}

/// Writes the tables from the winners' keys in `keys` (unpermuted). Writing an SST file is
/// the costliest step and takes one thread, so the tables are made in lanes, as many as
/// there are threads and copies of the keys fit in `room`: each lane permutes its copy in
/// place for its next table (from its previous one), sorts and writes it.
fn in_memory(
    ingest: &dyn BulkIngest,
    layout: &Layout,
    keys: Vec<MemKey>,
    base: u64,
    room: usize,
) -> Result<Vec<Option<SortedRun>>> {
    let tables = layout.tables().len();
    let fit = room / (keys.len() * size_of::<MemKey>()).max(1);
    let lanes = rayon::current_num_threads().min(tables).min(fit).max(1);
    let mut copies = vec![keys];
    for _ in 1..lanes {
        copies.push(copies[0].clone());
    }
    let lane = |(first, mut keys): (usize, Vec<MemKey>)| -> Result<Vec<Option<SortedRun>>> {
        let mut runs = Vec::new();
        let mut previous = None;
        for t in (first..tables).step_by(lanes) {
            for k in keys.iter_mut() {
                let fp = previous.map_or(k.key, |p| layout.unpermute(p, k.key));
                k.key = layout.permute(t, fp);
            }
            sort(&mut keys, lanes == 1);
            let mut w = ingest.sorted_writer(Space::Table(t))?;
            for k in &keys {
                w.put(SortedEntry::Table(k.key, base + u64::from(k.seq)))?;
            }
            runs.push(w.finish()?);
            previous = Some(t);
        }
        Ok(runs)
    };
    let runs = copies
        .into_par_iter()
        .enumerate()
        .map(lane)
        .collect::<Result<Vec<_>>>()?;
    Ok(runs.into_iter().flatten().collect())
}

/// Sorts `keys`: by their top byte in place (American flag sort; permuted fingerprints
/// are uniform there by construction), then each of the 256 buckets, small enough for the
/// cache, on its own (on rayon's threads if `parallel`). At 10M keys on one thread this
/// takes about a third of the time of `sort_unstable` over the whole array.
fn sort(keys: &mut [MemKey], parallel: bool) {
    let digit = |k: &MemKey| (k.key >> 56) as usize;
    let mut ends = [0usize; 256];
    for k in keys.iter() {
        ends[digit(k)] += 1;
    }
    let mut next = [0usize; 256];
    let mut start = 0;
    for (b, end) in ends.iter_mut().enumerate() {
        next[b] = start;
        start += *end;
        *end = start;
    }
    for b in 0..256 {
        while next[b] < ends[b] {
            let d = digit(&keys[next[b]]);
            if d != b {
                keys.swap(next[b], next[d]);
            }
            next[d] += 1;
        }
    }
    let mut buckets = Vec::with_capacity(256);
    let mut rest = keys;
    let mut start = 0;
    for end in ends {
        let (bucket, tail) = rest.split_at_mut(end - start);
        buckets.push(bucket);
        (rest, start) = (tail, end);
    }
    if parallel {
        buckets.into_par_iter().for_each(|b| b.sort_unstable());
    } else {
        buckets.into_iter().for_each(|b| b.sort_unstable());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_in_memory_take_12_bytes_and_sort_as_key_then_seq() {
        assert_eq!(size_of::<MemKey>(), 12);
        let mut x = 0x9E37_79B9_7F4A_7C15u64;
        let mut keys: Vec<MemKey> = (0..2000u32)
            .map(|i| {
                x = x.wrapping_mul(6364136223846793005).wrapping_add(1);
                // Few distinct keys: ties are broken by the sequence number.
                MemKey {
                    key: x >> 60,
                    seq: i.wrapping_mul(2654435761),
                }
            })
            .collect();
        let mut pairs: Vec<(u64, u32)> = keys.iter().map(|k| ({ k.key }, { k.seq })).collect();
        keys.sort_unstable();
        pairs.sort_unstable();
        let sorted: Vec<(u64, u32)> = keys.iter().map(|k| ({ k.key }, { k.seq })).collect();
        assert_eq!(sorted, pairs);
    }

    fn keys(n: u32, spread: u32) -> Vec<MemKey> {
        let mut x = 0x2545_F491_4F6C_DD1Du64;
        (0..n)
            .map(|i| {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                MemKey {
                    // `spread` top bits random, the rest too: skewed when small.
                    key: (x >> (64 - spread)) << (64 - spread) | (x & 0xFFFF),
                    seq: i,
                }
            })
            .collect()
    }

    #[test]
    fn the_bucket_sort_equals_sort_unstable_on_uniform_and_skewed_keys() {
        for (n, spread) in [
            (0, 8),
            (1, 8),
            (300, 8),
            (50_000, 64),
            (20_000, 2),
            (5_000, 1),
        ] {
            for parallel in [false, true] {
                let mut got = keys(n, spread);
                let mut want = got.clone();
                sort(&mut got, parallel);
                want.sort_unstable();
                assert_eq!(got, want, "{n} keys, {spread} random top bits");
            }
        }
    }
}
