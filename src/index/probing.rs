//! Query-directed probes (multi-probe LSH, Lv et al., VLDB 2007, applied to SimHash's
//! bits): besides each table's own span, a quality mode's query reads the spans of its
//! prefix with one to three of the query's least certain bits ([`WeakBits`]) flipped —
//! where a near copy whose fingerprint drifted beyond `k_max` most likely lies. The
//! `budget` flips of least cost over all tables are probed, the cost of a flip being the
//! sum of its bits' squared margins (the log-likelihood of the flip under a Gaussian
//! model of each bit's sum). The tables and their keys are unchanged: a flip is one more
//! prefix scan of a table.

use crate::index::layout::Layout;
use crate::types::WeakBits;

/// Most weak bits of one table's prefix that its flips combine.
const BITS_PER_TABLE: usize = 6;

/// Most bits one flip changes.
const MAX_FLIP_BITS: u32 = 3;

/// One extra probe: table `table`'s span of the query's prefix with the bits of `mask`
/// (in fingerprint bit order) flipped.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Flip {
    /// The table (column-family index).
    pub table: usize,
    /// The fingerprint bits flipped before permuting (all within the table's prefix).
    pub mask: u64,
}

/// Whether a query of `a` with one of `flips` ([`query_flips`]) reads a span of its table
/// that holds `b`: a pair beyond `k` the probes bring.
pub fn probes_find(layout: &Layout, flips: &[Flip], a: u64, b: u64) -> bool {
    flips
        .iter()
        .any(|f| (a ^ f.mask ^ b) & prefix_mask(layout, f.table) == 0)
}

/// The fingerprint bits (unpermuted) of table `t`'s prefix.
pub fn prefix_mask(layout: &Layout, t: usize) -> u64 {
    match layout.tables()[t].prefix_bits() {
        0 => 0,
        p => layout.unpermute(t, !0u64 << (64 - p)),
    }
}

/// The `budget` flips of least cost over `tables` (see the module doc), cheapest first;
/// ties in table order. Empty when `budget` is 0.
pub fn flips(layout: &Layout, tables: &[usize], weak: &WeakBits, budget: usize) -> Vec<Flip> {
    if budget == 0 {
        return Vec::new();
    }
    let mut all: Vec<(u64, Flip)> = Vec::new();
    for &t in tables {
        let prefix = prefix_mask(layout, t);
        let bits: Vec<(u32, u64)> = weak
            .iter()
            .filter(|&(b, _)| prefix >> b & 1 == 1)
            .take(BITS_PER_TABLE)
            .map(|(b, m)| (b, u64::from(m) * u64::from(m)))
            .collect();
        // Every non-empty subset of at most MAX_FLIP_BITS of the table's weak bits.
        for subset in 1u32..1 << bits.len() {
            if subset.count_ones() > MAX_FLIP_BITS {
                continue;
            }
            let (mut mask, mut cost) = (0u64, 0u64);
            for (i, &(bit, c)) in bits.iter().enumerate() {
                if subset >> i & 1 == 1 {
                    mask |= 1u64 << bit;
                    cost += c;
                }
            }
            all.push((cost, Flip { table: t, mask }));
        }
    }
    let key = |&(cost, f): &(u64, Flip)| (cost, f.table, f.mask);
    if budget < all.len() {
        all.select_nth_unstable_by_key(budget, key);
        all.truncate(budget);
    }
    all.sort_unstable_by_key(key);
    all.into_iter().map(|(_, f)| f).collect()
}

/// The flips of a query for `k` with `weak` bits and `probes` of them (none without weak
/// bits, without probes, or when the layout cannot answer `k`).
pub fn query_flips(layout: &Layout, k: u32, probes: u32, weak: Option<&WeakBits>) -> Vec<Flip> {
    match (weak, layout.tables_for_k(k)) {
        (Some(w), Ok(tables)) if probes > 0 => flips(layout, tables, w, probes as usize),
        _ => Vec::new(),
    }
}

/// One span a query reads: the keys of table `table` whose top bits are `prefix` (the
/// query's prefix, flipped for a [`Flip`]), each candidate's distance taken to `permuted`
/// (the query itself, permuted for the table).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ProbeSpan {
    /// The table.
    pub table: usize,
    /// The query permuted for the table.
    pub permuted: u64,
    /// The span's prefix: its keys shifted right by `shift`.
    pub prefix: u64,
    /// 64 minus the table's prefix bits.
    pub shift: u32,
}

impl ProbeSpan {
    /// The first key of the span.
    pub fn lo(&self) -> u64 {
        self.prefix << self.shift
    }

    /// The first key past the span (`None`: the span runs to the end of the table).
    pub fn hi(&self) -> Option<u64> {
        self.lo().checked_add(1u64 << self.shift)
    }

    /// Whether `key` (a permuted fingerprint of the table) lies in the span.
    pub fn holds(&self, key: u64) -> bool {
        key >> self.shift == self.prefix
    }
}

/// The spans a query of `q` reads: each of `tables`' own, then each flip's.
pub fn spans<'a>(
    layout: &'a Layout,
    tables: &'a [usize],
    flips: &'a [Flip],
    q: u64,
) -> impl Iterator<Item = ProbeSpan> + 'a {
    let own = tables.iter().map(|&t| (t, 0));
    own.chain(flips.iter().map(|f| (f.table, f.mask)))
        .map(move |(t, flip)| {
            let shift = 64 - layout.tables()[t].prefix_bits();
            let permuted = layout.permute(t, q);
            // A table's own span (no flip) is the query's prefix: one permutation, not two.
            let flipped = match flip {
                0 => permuted,
                _ => layout.permute(t, q ^ flip),
            };
            let prefix = flipped >> shift;
            ProbeSpan {
                table: t,
                permuted,
                prefix,
                shift,
            }
        })
}

/// Whether a query for `k` with `flips` puts fingerprints `a` and `b` in one span: the
/// tables for `k` do ([`Layout::finds`]), or a flip's span does (its table's prefix of
/// `a` with the flip's bits changed is `b`'s).
pub fn finds(layout: &Layout, k: u32, flips: &[Flip], a: u64, b: u64) -> bool {
    let x = a ^ b;
    layout.finds(k, a, b)
        || flips
            .iter()
            .any(|f| x & prefix_mask(layout, f.table) == f.mask)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::types::weak_bits::WEAK_BITS;

    fn weak() -> WeakBits {
        let bits: [u8; WEAK_BITS] = std::array::from_fn(|i| (i * 4) as u8);
        let margins: [u16; WEAK_BITS] = std::array::from_fn(|i| (i as u16 + 1) * 100);
        WeakBits::from_parts(bits, margins).unwrap()
    }

    #[test]
    fn flips_are_the_cheapest_subsets_of_each_prefix() {
        let layout = Layout::new(3, 6).unwrap();
        let tables = layout.tables_for_k(3).unwrap();
        let w = weak();
        let got = flips(&layout, tables, &w, 12);
        assert_eq!(got.len(), 12);
        assert!(flips(&layout, tables, &w, 0).is_empty());
        // Bit 0 is the weakest: every table whose prefix holds it flips it first.
        let first: Vec<usize> = tables
            .iter()
            .copied()
            .filter(|&t| prefix_mask(&layout, t) & 1 == 1)
            .collect();
        assert!(!first.is_empty());
        for (f, &t) in got.iter().zip(&first) {
            assert_eq!(*f, Flip { table: t, mask: 1 });
        }
        for f in &got {
            assert_eq!(f.mask & !prefix_mask(&layout, f.table), 0);
            assert!(f.mask.count_ones() <= MAX_FLIP_BITS);
        }
    }

    #[test]
    fn a_span_holds_its_prefix_and_measures_to_the_query() {
        let layout = Layout::new(3, 6).unwrap();
        let tables = layout.tables_for_k(3).unwrap();
        let q = 0x0123_4567_89AB_CDEFu64;
        let fl = flips(&layout, tables, &weak(), 4);
        let got: Vec<ProbeSpan> = spans(&layout, tables, &fl, q).collect();
        assert_eq!(got.len(), tables.len() + fl.len());
        let targets = tables
            .iter()
            .map(|&t| (t, 0))
            .chain(fl.iter().map(|f| (f.table, f.mask)));
        for (s, (t, mask)) in got.iter().zip(targets) {
            assert_eq!((s.table, s.permuted), (t, layout.permute(t, q)));
            let key = layout.permute(t, q ^ mask);
            assert!(s.holds(key) && s.lo() <= key && s.hi().is_none_or(|hi| key < hi));
            assert_eq!(
                s.holds(layout.permute(t, q)),
                mask == 0,
                "a flip leaves the own span"
            );
            assert_eq!(s.hi(), Some(s.lo() + (1 << s.shift)));
        }
    }

    #[test]
    fn a_flip_finds_the_pair_its_bits_separate() {
        let layout = Layout::new(3, 6).unwrap();
        let tables = layout.tables_for_k(3).unwrap();
        let a = 0x0123_4567_89AB_CDEFu64;
        // Differ in five bits of five blocks: no table's prefix matches.
        let b = a ^ (1 << 0 | 1 << 12 | 1 << 24 | 1 << 32 | 1 << 44);
        assert!(!layout.finds(3, a, b));
        let w = weak();
        let fl = flips(&layout, tables, &w, usize::MAX);
        assert!(
            finds(&layout, 3, &fl, a, b),
            "bits 0, 12, 24, 32, 44 are all weak"
        );
        assert!(!finds(&layout, 3, &[], a, b));
        let far = a ^ (1 << 1 | 1 << 13 | 1 << 25 | 1 << 33 | 1 << 45);
        assert!(!finds(&layout, 3, &fl, a, far), "bits that are not weak");
    }
}
