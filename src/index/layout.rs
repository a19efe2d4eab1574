//! The permutation-table layout of Manku, Jain and Das Sarma (WWW 2007).
//!
//! The 64 fingerprint bits are split into `b` blocks (block 0 holds the most significant
//! bits). If two fingerprints differ in at most `k` bits, at least `b − k` blocks agree
//! exactly (pigeonhole). For every choice of `b − k_max` blocks there is one table whose
//! permutation moves those blocks to the top; a query probes, in each table, the run of
//! keys whose top `p` bits (the leading blocks) equal its own. The union over tables holds
//! every fingerprint within `k_max`, and for `k < k_max` a smaller set of tables suffices
//! ([`Layout::tables_for_k`]).

use std::collections::HashMap;
use std::sync::{LazyLock, Mutex};

use crate::error::{Error, Result};

/// The most tables a layout may have (each is a RocksDB column family).
pub const MAX_TABLES: usize = 100;

/// The largest `k_max` a layout may have.
pub const MAX_K: u32 = 16;

/// Cost model: time to probe one table (refresh a kept RocksDB iterator, seek, read the
/// block), in µs. Fitted on `simstore bench` (docs/benchmarks.md).
pub const PROBE_COST_US: f64 = 3.3;

/// Cost model: time to read one candidate in place from its table's bucket and test its
/// distance, in µs. Fitted on `simstore bench` (docs/benchmarks.md, "Tables in buckets").
pub const CANDIDATE_COST_US: f64 = 0.011;

/// One table: the order in which the blocks are laid out in its permuted key.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Table {
    /// Block indices in key order; the first `b − k_max` are the matched prefix.
    order: Vec<u8>,
    /// Number of leading key bits that a query must match exactly.
    prefix_bits: u32,
}

impl Table {
    /// Block indices in key order; the first `b − k_max` form the prefix.
    pub fn order(&self) -> &[u8] {
        &self.order
    }

    /// Number of leading bits of the permuted key that a probe matches exactly.
    pub fn prefix_bits(&self) -> u32 {
        self.prefix_bits
    }
}

/// A validated layout: block widths, `k_max`, and the tables' permutations.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Layout {
    k_max: u32,
    widths: Vec<u8>,
    /// Blocks in every table's prefix: `b − k_max` for Manku's layouts, fewer for a
    /// covering ([`Layout::covering`]).
    lead: usize,
    /// Shift of each block's least significant bit within the fingerprint.
    shifts: Vec<u32>,
    tables: Vec<Table>,
    /// For each k in 0..=k_max, the indices of the tables a query with that k probes.
    probe_sets: Vec<Vec<usize>>,
}

impl Layout {
    /// A layout of `blocks` blocks of near-equal width (wider blocks first, as in Manku
    /// et al.'s 11,11,11,11,10,10), exact for every `k ≤ k_max`.
    ///
    /// Errors when `k_max ≥ blocks`, `blocks` is 0 or above 64, or the layout would need
    /// more than `MAX_TABLES` tables.
    pub fn new(k_max: u32, blocks: u32) -> Result<Self> {
        if blocks == 0 || blocks > 64 {
            return Err(Error::InvalidLayout(format!(
                "the number of blocks must be between 1 and 64, got {blocks}"
            )));
        }
        let base = 64 / blocks;
        let extra = 64 % blocks;
        let widths = (0..blocks)
            .map(|i| (base + u32::from(i < extra)) as u8)
            .collect::<Vec<_>>();
        Self::with_widths(k_max, widths)
    }

    /// A layout with explicit block widths (most significant block first), exact for every
    /// `k ≤ k_max`. The widths must be positive and sum to 64.
    pub fn with_widths(k_max: u32, widths: Vec<u8>) -> Result<Self> {
        let lead = widths.len().saturating_sub(k_max as usize);
        Self::with_lead(k_max, widths, lead)
    }

    /// A layout of `blocks` near-equal blocks whose tables each lead with `lead` blocks
    /// (`1 ≤ lead ≤ blocks − k_max`), exact for every `k ≤ k_max`.
    ///
    /// Manku et al. lead with `blocks − k_max` blocks and need a table for every choice of
    /// them. With fewer leading blocks, fewer tables suffice: all that exactness needs is,
    /// for every set of `k_max` blocks that may differ, one table whose leading blocks avoid
    /// them all (a covering, here chosen greedily): shorter prefixes, more candidates per
    /// probe, far fewer probes and entries per fingerprint (docs/design.md §3).
    pub fn covering(k_max: u32, blocks: u32, lead: u32) -> Result<Self> {
        let widths = Self::new(0, blocks)?.widths;
        Self::with_lead(k_max, widths, lead as usize)
    }

    fn with_lead(k_max: u32, widths: Vec<u8>, lead: usize) -> Result<Self> {
        validate(k_max, &widths, lead)?;
        let b = widths.len();
        let leads = covering_leads(b, lead, k_max as usize)?;
        let tables = leads
            .into_iter()
            .map(|chosen| {
                let prefix_bits = chosen.iter().map(|&i| u32::from(widths[i])).sum();
                let mut order: Vec<u8> = chosen.iter().map(|&i| i as u8).collect();
                order.extend((0..b).filter(|i| !chosen.contains(i)).map(|i| i as u8));
                Table { order, prefix_bits }
            })
            .collect::<Vec<_>>();
        Self::from_parts(k_max, widths, lead, tables)
    }

    /// Rebuilds a layout from persisted parts, checking that they are consistent: every
    /// table's order is a permutation of the blocks, and the tables' leading blocks avoid
    /// every set of `k_max` blocks (the layout is exact).
    pub(crate) fn from_persisted(
        k_max: u32,
        widths: Vec<u8>,
        lead: usize,
        orders: Vec<Vec<u8>>,
    ) -> Result<Self> {
        validate(k_max, &widths, lead)?;
        if orders.len() > MAX_TABLES {
            return Err(Error::Corrupt(format!("{} tables", orders.len())));
        }
        let mut tables = Vec::with_capacity(orders.len());
        for order in orders {
            let mut sorted = order.clone();
            sorted.sort_unstable();
            if sorted != (0..widths.len() as u8).collect::<Vec<_>>() {
                return Err(Error::Corrupt(format!(
                    "table order {order:?} is not a permutation of the blocks"
                )));
            }
            let prefix_bits = order[..lead]
                .iter()
                .map(|&i| u32::from(widths[i as usize]))
                .sum();
            tables.push(Table { order, prefix_bits });
        }
        let masks: Vec<u64> = tables.iter().map(|t| lead_mask(t, lead)).collect();
        if !all_avoided(&masks, widths.len(), k_max as usize) {
            return Err(Error::Corrupt(
                "the persisted tables do not cover every choice of leading blocks".into(),
            ));
        }
        Self::from_parts(k_max, widths, lead, tables)
    }

    fn from_parts(k_max: u32, widths: Vec<u8>, lead: usize, tables: Vec<Table>) -> Result<Self> {
        let mut shifts = Vec::with_capacity(widths.len());
        let mut top = 64u32;
        for &w in &widths {
            top -= u32::from(w);
            shifts.push(top);
        }
        let probe_sets = (0..=k_max)
            .map(|k| cover(&tables, widths.len(), lead, k as usize))
            .collect();
        Ok(Self {
            k_max,
            widths,
            lead,
            shifts,
            tables,
            probe_sets,
        })
    }

    /// The layout the cost model picks for a store expected to hold `expected_docs`
    /// fingerprints: among `b = k_max + 1, ..., k_max + 12` blocks and every number of
    /// leading blocks ([`Layout::covering`]; `b − k_max` is Manku's layout), the one with
    /// the lowest [`Layout::expected_query_us`] (within 5 %, fewer tables win: they cost
    /// less space and fewer writes per insert). The choices by size: docs/design.md §3.
    pub fn for_expected_docs(expected_docs: u64, k_max: u32) -> Result<Self> {
        let n = expected_docs.max(1) as f64;
        let mut best: Option<(f64, Layout)> = None;
        for layout in Self::coverings(k_max) {
            let cost = layout.expected_query_us(n);
            // Within 5 % (the model's accuracy), fewer tables win.
            let better =
                best.as_ref()
                    .is_none_or(|(c, l)| match layout.tables.len().cmp(&l.tables.len()) {
                        std::cmp::Ordering::Less => cost <= c * 1.05,
                        std::cmp::Ordering::Equal => cost < *c,
                        std::cmp::Ordering::Greater => cost < c * 0.95,
                    });
            if better {
                best = Some((cost, layout));
            }
        }
        best.map(|(_, l)| l)
            .ok_or_else(|| Error::InvalidLayout(format!("no layout for k_max = {k_max}")))
    }

    /// The layouts a store's layout is chosen among: every covering
    /// ([`Layout::covering`]) of `b = k_max + 1, ..., k_max + 12` blocks, each number of
    /// leading blocks (those whose covering search would be too large are left out).
    pub fn coverings(k_max: u32) -> impl Iterator<Item = Layout> {
        ((k_max + 1)..=(k_max + 12).min(64))
            .flat_map(move |blocks| (1..=(blocks - k_max)).map(move |lead| (blocks, lead)))
            .filter_map(move |(blocks, lead)| Self::covering(k_max, blocks, lead).ok())
    }

    /// The layout of explicit options: `blocks` blocks leading with `lead` (a covering,
    /// [`Layout::covering`]) or with `blocks − k_max` ([`Layout::new`]); without `blocks`,
    /// the cost model's for `expected_docs` ([`Layout::for_expected_docs`]).
    pub fn choose(
        k_max: u32,
        blocks: Option<u32>,
        lead: Option<u32>,
        expected_docs: u64,
    ) -> Result<Self> {
        match (blocks, lead) {
            (Some(b), Some(l)) => Self::covering(k_max, b, l),
            (Some(b), None) => Self::new(k_max, b),
            (None, Some(_)) => Err(Error::InvalidLayout(
                "the leading blocks are given with the number of blocks (--blocks)".into(),
            )),
            (None, None) => Self::for_expected_docs(expected_docs, k_max),
        }
    }

    /// The cost model's estimate of a k_max query over `n` uniform fingerprints, in µs:
    /// `tables × PROBE_COST_US + candidates × CANDIDATE_COST_US`.
    pub fn expected_query_us(&self, n: f64) -> f64 {
        self.tables.len() as f64 * PROBE_COST_US + self.expected_candidates(n) * CANDIDATE_COST_US
    }

    /// Expected candidate keys scanned by one query over `n` uniform fingerprints.
    pub fn expected_candidates(&self, n: f64) -> f64 {
        self.tables
            .iter()
            .map(|t| n / 2f64.powi(t.prefix_bits as i32))
            .sum()
    }

    /// The largest Hamming distance the tables answer exactly.
    pub fn k_max(&self) -> u32 {
        self.k_max
    }

    /// Blocks in every table's prefix (`b − k_max` for Manku's layouts, fewer for a
    /// covering).
    pub fn lead(&self) -> usize {
        self.lead
    }

    /// Block widths in bits, most significant block first.
    pub fn widths(&self) -> &[u8] {
        &self.widths
    }

    /// The tables, in column-family order (`t00`, `t01`, ...).
    pub fn tables(&self) -> &[Table] {
        &self.tables
    }

    /// Each table's prefix length in bits, in table order.
    pub fn prefix_bits(&self) -> Vec<u32> {
        self.tables.iter().map(Table::prefix_bits).collect()
    }

    /// The tables a query with distance `k ≤ k_max` must probe to be exact. For `k = k_max`
    /// that is every table; for smaller `k`, a greedy cover: for every set of `k` blocks
    /// that may differ, some chosen table leads with none of them.
    pub fn tables_for_k(&self, k: u32) -> Result<&[usize]> {
        self.probe_sets
            .get(k as usize)
            .map(Vec::as_slice)
            .ok_or(Error::KTooLarge {
                k,
                k_max: self.k_max,
            })
    }

    /// Whether a probe of the tables for `k` puts fingerprints `a` and `b` in one span:
    /// some probed table's prefix is the same for both. Always true within `k` (the layout
    /// is exact); beyond it, true for the pairs that a query with a larger reach sees.
    pub fn finds(&self, k: u32, a: u64, b: u64) -> bool {
        let Ok(tables) = self.tables_for_k(k.min(self.k_max)) else {
            return false;
        };
        let x = a ^ b;
        tables.iter().any(|&t| {
            let p = self.tables[t].prefix_bits;
            p == 0 || self.permute(t, x) >> (64 - p) == 0
        })
    }

    /// Applies table `t`'s permutation: its blocks, in the table's order, from the top bit down.
    #[inline]
    pub fn permute(&self, t: usize, fp: u64) -> u64 {
        let mut out = 0u64;
        let mut top = 64u32;
        for &block in &self.tables[t].order {
            let w = u32::from(self.widths[block as usize]);
            let bits = (fp >> self.shifts[block as usize]) & low_mask(w);
            top -= w;
            out |= bits << top;
        }
        out
    }

    /// Inverts [`Layout::permute`] for table `t`.
    pub fn unpermute(&self, t: usize, key: u64) -> u64 {
        let mut out = 0u64;
        let mut top = 64u32;
        for &block in &self.tables[t].order {
            let w = u32::from(self.widths[block as usize]);
            top -= w;
            let bits = (key >> top) & low_mask(w);
            out |= bits << self.shifts[block as usize];
        }
        out
    }
}

impl std::fmt::Display for Layout {
    /// `k_max = 3, 4 blocks of [16, 16, 16, 16] bits, 4 tables`.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "k_max = {}, {} blocks of {:?} bits, {} tables",
            self.k_max,
            self.widths.len(),
            self.widths,
            self.tables.len()
        )?;
        if self.lead + (self.k_max as usize) < self.widths.len() {
            write!(f, " leading with {} blocks", self.lead)?;
        }
        Ok(())
    }
}

/// A mask of the `w` least significant bits (`w ≤ 64`).
#[inline]
fn low_mask(w: u32) -> u64 {
    if w >= 64 { u64::MAX } else { (1u64 << w) - 1 }
}

/// Checks the parts every layout needs: widths positive and summing to 64, `k_max` at most
/// [`MAX_K`] and below the number of blocks, `1 ≤ lead ≤ b − k_max`, and few enough sets of
/// k_max blocks to check exactness over.
fn validate(k_max: u32, widths: &[u8], lead: usize) -> Result<()> {
    let b = widths.len();
    if b == 0 || widths.contains(&0) || widths.iter().map(|&w| u32::from(w)).sum::<u32>() != 64 {
        return Err(Error::InvalidLayout(format!(
            "block widths must be positive and sum to 64, got {widths:?}"
        )));
    }
    if k_max > MAX_K {
        return Err(Error::InvalidLayout(format!(
            "k_max must be at most {MAX_K}, got {k_max}"
        )));
    }
    if k_max as usize >= b {
        return Err(Error::InvalidLayout(format!(
            "k_max = {k_max} needs more than {k_max} blocks (got {b}): at least one block must match"
        )));
    }
    if lead == 0 || lead > b - k_max as usize {
        return Err(Error::InvalidLayout(format!(
            "tables of {b} blocks with k_max = {k_max} lead with 1 to {} blocks, not {lead}",
            b - k_max as usize
        )));
    }
    // Exactness is checked over every set of k_max blocks: a bound on their number keeps a
    // damaged manifest from making that check (and the probe sets') run for ever. Every
    // layout `Layout::covering` can build is within it.
    if binomial(b as u64, u64::from(k_max)) > COVER_SEARCH_LIMIT {
        return Err(Error::InvalidLayout(format!(
            "{b} blocks with k_max = {k_max} are too many sets of blocks to check"
        )));
    }
    Ok(())
}

/// The blocks table `t` leads with, as a bit mask.
fn lead_mask(t: &Table, lead: usize) -> u64 {
    t.order[..lead].iter().fold(0, |m, &i| m | 1 << i)
}

/// True when, for every set of `k` of the `b` blocks, some lead mask avoids it.
fn all_avoided(masks: &[u64], b: usize, k: usize) -> bool {
    combinations(b, k)
        .iter()
        .all(|d| masks.iter().any(|&m| m & set_mask(d) == 0))
}

fn set_mask(set: &[usize]) -> u64 {
    set.iter().fold(0, |m, &i| m | 1 << i)
}

/// Largest (sets to cover × candidate lead sets) a covering search takes on.
const COVER_SEARCH_LIMIT: u64 = 1 << 16;

/// The leading-block sets of the tables: with `lead = b − k` every choice (Manku); with
/// fewer, a covering: sets of `lead` blocks such that every set of `b − k` blocks (those
/// that agree when `k` differ) contains one. The covering is greedy (most sets covered
/// first), the smallest of a few deterministic tie-break orders.
fn covering_leads(b: usize, lead: usize, k: usize) -> Result<Vec<Vec<usize>>> {
    let clean = b - k;
    let too_many = |count: u64| {
        Error::InvalidLayout(format!(
            "{b} blocks with k_max = {k} leading with {lead} need {count} tables; at most {MAX_TABLES} are allowed"
        ))
    };
    let candidates = binomial(b as u64, lead as u64);
    if lead == clean {
        return match candidates {
            c if c > MAX_TABLES as u64 => Err(too_many(c)),
            _ => Ok(combinations(b, lead)),
        };
    }
    if binomial(b as u64, clean as u64).saturating_mul(candidates) > COVER_SEARCH_LIMIT {
        return Err(Error::InvalidLayout(format!(
            "{b} blocks leading with {lead} are too many to search for a covering"
        )));
    }
    let mut chosen = searched_cover(b, lead, clean);
    if chosen.len() > MAX_TABLES {
        return Err(too_many(chosen.len() as u64));
    }
    chosen.sort_unstable_by_key(|&m| (0..64).filter(|i| m >> i & 1 == 1).collect::<Vec<_>>());
    Ok(chosen
        .into_iter()
        .map(|m| (0..b).filter(|&i| m >> i & 1 == 1).collect())
        .collect())
}

/// The greedy covering of `b` blocks' sets of `clean` by sets of `lead` (block masks), from
/// the process's memo when searched before: the search is deterministic and costly, and a
/// process that creates many stores (a test run, an evaluation) would repeat it for each.
fn searched_cover(b: usize, lead: usize, clean: usize) -> Vec<u64> {
    type Memo = HashMap<(usize, usize, usize), Vec<u64>>;
    static MEMO: LazyLock<Mutex<Memo>> = LazyLock::new(Mutex::default);
    // Not held during a search: two threads may search the same covering, to one result.
    let memo = || MEMO.lock().unwrap_or_else(|e| e.into_inner());
    if let Some(cover) = memo().get(&(b, lead, clean)) {
        return cover.clone();
    }
    let cover = search_cover(b, lead, clean);
    memo().insert((b, lead, clean), cover.clone());
    cover
}

/// [`searched_cover`]'s search: greedy (most sets covered first), the smallest of a few
/// deterministic tie-break orders.
fn search_cover(b: usize, lead: usize, clean: usize) -> Vec<u64> {
    let sets: Vec<u64> = combinations(b, clean).iter().map(|s| set_mask(s)).collect();
    let mut cands: Vec<u64> = combinations(b, lead).iter().map(|s| set_mask(s)).collect();
    let mut best: Option<Vec<u64>> = None;
    for round in 0..8u64 {
        let chosen = greedy_cover(&sets, &cands);
        if best.as_ref().is_none_or(|b| chosen.len() < b.len()) {
            best = Some(chosen);
        }
        // The next tie-break order: a deterministic shuffle.
        let mut x = round.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
        for i in (1..cands.len()).rev() {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            cands.swap(i, (x % (i as u64 + 1)) as usize);
        }
    }
    best.unwrap_or_default()
}

/// Greedy set cover of `sets` by candidates (a candidate covers a set it is a subset of):
/// the one covering most uncovered sets first, ties to the earliest.
fn greedy_cover(sets: &[u64], cands: &[u64]) -> Vec<u64> {
    let mut uncovered = sets.to_vec();
    let mut chosen = Vec::new();
    while !uncovered.is_empty() {
        let covered = |c: u64| uncovered.iter().filter(|&&s| c & !s == 0).count();
        let Some((_, &best)) = cands
            .iter()
            .enumerate()
            .max_by_key(|&(i, &c)| (covered(c), std::cmp::Reverse(i)))
        else {
            break;
        };
        chosen.push(best);
        uncovered.retain(|&s| best & !s != 0);
    }
    // Drop what later choices made redundant.
    let mut i = 0;
    while i < chosen.len() {
        let rest: Vec<u64> = [&chosen[..i], &chosen[i + 1..]].concat();
        if sets.iter().all(|&s| rest.iter().any(|&c| c & !s == 0)) {
            chosen = rest;
        } else {
            i += 1;
        }
    }
    chosen
}

/// Greedy set cover: tables such that for every set `D` of `k` blocks, one table's lead
/// blocks avoid `D` entirely.
fn cover(tables: &[Table], b: usize, lead: usize, k: usize) -> Vec<usize> {
    let mut uncovered: Vec<Vec<usize>> = combinations(b, k);
    let avoids =
        |t: &Table, d: &[usize]| t.order[..lead].iter().all(|&i| !d.contains(&(i as usize)));
    let mut chosen = Vec::new();
    while !uncovered.is_empty() {
        let (best, _) = tables
            .iter()
            .enumerate()
            .filter(|(i, _)| !chosen.contains(i))
            .map(|(i, t)| (i, uncovered.iter().filter(|d| avoids(t, d)).count()))
            .max_by_key(|&(i, n)| (n, std::cmp::Reverse(i)))
            .expect("every k-subset is avoided by the table that leads with its complement");
        chosen.push(best);
        uncovered.retain(|d| !avoids(&tables[best], d));
    }
    chosen.sort_unstable();
    chosen
}

/// All `r`-subsets of `0..n`, in lexicographic order.
fn combinations(n: usize, r: usize) -> Vec<Vec<usize>> {
    let mut out = Vec::new();
    let mut cur = Vec::with_capacity(r);
    fn rec(start: usize, n: usize, r: usize, cur: &mut Vec<usize>, out: &mut Vec<Vec<usize>>) {
        if cur.len() == r {
            out.push(cur.clone());
            return;
        }
        for i in start..n {
            if n - i < r - cur.len() {
                break;
            }
            cur.push(i);
            rec(i + 1, n, r, cur, out);
            cur.pop();
        }
    }
    rec(0, n, r, &mut cur, &mut out);
    out
}

fn binomial(n: u64, r: u64) -> u64 {
    let r = r.min(n - r);
    (0..r).fold(1u64, |acc, i| acc.saturating_mul(n - i) / (i + 1))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn manku_layouts() {
        let l = Layout::new(3, 4).unwrap();
        assert_eq!(l.tables().len(), 4);
        assert!(l.tables().iter().all(|t| t.prefix_bits() == 16));
        let l = Layout::new(3, 6).unwrap();
        assert_eq!(l.widths(), &[11, 11, 11, 11, 10, 10]);
        assert_eq!(l.tables().len(), 20);
        let p: Vec<u32> = l.tables().iter().map(Table::prefix_bits).collect();
        assert_eq!(*p.iter().min().unwrap(), 31);
        assert_eq!(*p.iter().max().unwrap(), 33);
    }

    /// `finds` is exact within k_max and, beyond it, "some table's prefix is equal",
    /// computed here from the permuted keys themselves.
    #[test]
    fn finds_every_pair_within_k_max_and_the_span_mates_beyond() {
        let l = Layout::covering(3, 6, 2).unwrap();
        let mut x = 0x2545_F491_4F6C_DD1Du64;
        let (mut beyond_found, mut beyond_missed) = (0, 0);
        for _ in 0..20_000 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let a = x;
            let b = a ^ (x.rotate_left(17) & x.rotate_left(31) & x.rotate_left(47));
            let d = (a ^ b).count_ones();
            let same_prefix = (0..l.tables().len()).any(|t| {
                let shift = 64 - l.tables()[t].prefix_bits();
                l.permute(t, a) >> shift == l.permute(t, b) >> shift
            });
            assert_eq!(l.finds(3, a, b), same_prefix);
            if d <= 3 {
                assert!(l.finds(3, a, b), "{a:x} {b:x} at {d}");
            } else if same_prefix {
                beyond_found += 1;
            } else {
                beyond_missed += 1;
            }
        }
        assert!(
            beyond_found > 0 && beyond_missed > 0,
            "{beyond_found} {beyond_missed}"
        );
    }

    #[test]
    fn invalid_layouts_are_errors() {
        assert!(Layout::new(3, 3).is_err());
        assert!(Layout::new(0, 0).is_err());
        assert!(Layout::new(3, 65).is_err());
        assert!(Layout::new(8, 20).is_err(), "C(20,8) tables is too many");
        assert!(Layout::with_widths(1, vec![32, 31]).is_err());
        assert!(Layout::with_widths(1, vec![64, 0]).is_err());
    }

    #[test]
    fn permute_round_trips_and_preserves_distance() {
        for (k, b) in [(3, 4), (3, 6), (2, 5), (0, 1), (1, 7)] {
            let l = Layout::new(k, b).unwrap();
            let mut x = 0x9E37_79B9_7F4A_7C15u64;
            for _ in 0..200 {
                x = x
                    .wrapping_mul(6364136223846793005)
                    .wrapping_add(1442695040888963407);
                let y = x.rotate_left(17) ^ 0x55;
                for t in 0..l.tables().len() {
                    assert_eq!(l.unpermute(t, l.permute(t, x)), x);
                    assert_eq!(
                        (l.permute(t, x) ^ l.permute(t, y)).count_ones(),
                        (x ^ y).count_ones()
                    );
                }
            }
        }
    }

    #[test]
    fn smaller_k_probes_fewer_tables() {
        let l = Layout::new(3, 6).unwrap();
        assert_eq!(l.tables_for_k(3).unwrap().len(), 20);
        assert_eq!(l.tables_for_k(0).unwrap().len(), 1);
        assert!(l.tables_for_k(1).unwrap().len() < 20);
        assert!(matches!(
            l.tables_for_k(4),
            Err(Error::KTooLarge { k: 4, k_max: 3 })
        ));
    }

    #[test]
    fn a_remembered_covering_is_the_one_searched() {
        for (b, lead, clean) in [(6, 2, 3), (9, 3, 6), (10, 2, 7)] {
            let first = searched_cover(b, lead, clean);
            assert_eq!(first, search_cover(b, lead, clean));
            assert_eq!(searched_cover(b, lead, clean), first, "from the memo");
        }
        // The layout for a size is the same however often it is chosen.
        let chosen = Layout::for_expected_docs(10_000_000, 3).unwrap();
        assert_eq!(Layout::for_expected_docs(10_000_000, 3).unwrap(), chosen);
    }

    #[test]
    fn coverings_are_exact_with_fewer_tables() {
        // Two triangles of block pairs: every 3 of 6 blocks hold one of the pairs.
        let l = Layout::covering(3, 6, 2).unwrap();
        assert_eq!(l.tables().len(), 6, "{l}");
        assert_eq!(l.lead(), 2);
        assert_eq!(
            Layout::covering(3, 6, 3).unwrap(),
            Layout::new(3, 6).unwrap()
        );
        for (k, b, lead) in [
            (3, 6, 2),
            (3, 7, 2),
            (3, 8, 3),
            (2, 6, 2),
            (4, 8, 2),
            (1, 4, 1),
        ] {
            let l = Layout::covering(k, b, lead).unwrap();
            let masks: Vec<u64> = l.tables().iter().map(|t| lead_mask(t, l.lead())).collect();
            assert!(all_avoided(&masks, b as usize, k as usize), "{l}");
            assert!(
                l.tables().len() < binomial(b as u64, k as u64) as usize,
                "{l}"
            );
            // Any two fingerprints within k share some table's prefix.
            let mut x = 0x2545_F491_4F6C_DD1Du64;
            for _ in 0..2000 {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                let mut y = x;
                for j in 0..k {
                    y ^= 1 << (x.rotate_left(j * 7) % 64);
                }
                assert!(l.tables().iter().enumerate().any(|(t, tab)| {
                    let shift = 64 - tab.prefix_bits();
                    l.permute(t, x) >> shift == l.permute(t, y) >> shift
                }));
            }
        }
        assert!(Layout::covering(3, 6, 4).is_err(), "more than b − k_max");
        assert!(Layout::covering(3, 6, 0).is_err());
    }

    #[test]
    fn layout_rule_grows_with_n() {
        let blocks = |n, k| Layout::for_expected_docs(n, k).unwrap().widths().len();
        assert_eq!(blocks(1_000, 3), 4);
        assert_eq!(blocks(1_000_000, 3), 4);
        assert_eq!(blocks(1_000, 0), 1);
        assert_eq!(blocks(1_000_000, 1), 2);
        // From 10M on, a covering beats Manku's 10 tables.
        let l = Layout::for_expected_docs(10_000_000, 3).unwrap();
        assert!(l.tables().len() < 10, "{l}");
        // The estimate is what the rule minimizes.
        let n = 10_000_000.0;
        for other in [
            Layout::new(3, 4),
            Layout::new(3, 5),
            Layout::covering(3, 7, 2),
        ] {
            assert!(l.expected_query_us(n) <= other.unwrap().expected_query_us(n));
        }
    }

    #[test]
    fn persisted_layout_is_validated() {
        let l = Layout::covering(3, 6, 2).unwrap();
        let orders: Vec<Vec<u8>> = l.tables().iter().map(|t| t.order().to_vec()).collect();
        assert_eq!(
            Layout::from_persisted(3, l.widths().to_vec(), 2, orders.clone()).unwrap(),
            l
        );
        let mut bad = orders.clone();
        bad[0] = vec![0, 0, 1, 2, 3, 4];
        assert!(Layout::from_persisted(3, l.widths().to_vec(), 2, bad).is_err());
        assert!(Layout::from_persisted(3, l.widths().to_vec(), 2, orders[1..].to_vec()).is_err());
        // A damaged manifest naming 64 blocks and k_max = 16 (C(64, 16) sets of blocks to
        // check) is refused at once.
        let one_bit = vec![1u8; 64];
        let order: Vec<u8> = (0..64).collect();
        assert!(Layout::from_persisted(16, one_bit, 1, vec![order]).is_err());
    }
}
