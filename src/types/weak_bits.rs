//! The least certain bits of a fingerprint: where a near copy's fingerprint most likely
//! differs, so where the query-directed probes of a quality mode look (docs/design.md §3a).

/// How many of a fingerprint's least certain bits a [`WeakBits`] keeps.
pub const WEAK_BITS: usize = 16;

/// A fingerprint's [`WEAK_BITS`] least certain bits, weakest first: those whose projection
/// sums were nearest zero, which an edit of the text flips first. Each comes with its
/// margin, `|sum|` relative to the largest `|sum|` of the fingerprint (0 ..= 65,535): two
/// texts at angle θ differ in a bit of margin m with a probability that falls as m grows,
/// so flipping the bits of small margins finds the copies that a table prefix misses by a
/// bit or two (multi-probe LSH, Lv et al., VLDB 2007).
///
/// Computed with the fingerprint ([`crate::Fingerprinter::analyze`]); never stored.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct WeakBits {
    bits: [u8; WEAK_BITS],
    margins: [u16; WEAK_BITS],
}

impl WeakBits {
    /// The weak bits of a fingerprint from its 64 projection sums (bit `i` set where
    /// `sums[i] > 0`). Ties: the lower bit first.
    pub fn from_sums(sums: &[i64; 64]) -> Self {
        let mut order: [u8; 64] = std::array::from_fn(|i| i as u8);
        order.sort_by_key(|&b| (sums[usize::from(b)].unsigned_abs(), b));
        let max = sums
            .iter()
            .map(|s| s.unsigned_abs())
            .max()
            .unwrap_or(0)
            .max(1);
        let bits: [u8; WEAK_BITS] = std::array::from_fn(|i| order[i]);
        let margins = bits.map(|b| {
            let m = u128::from(sums[usize::from(b)].unsigned_abs()) * 65_535 / u128::from(max);
            m as u16
        });
        WeakBits { bits, margins }
    }

    /// Weak bits given directly, weakest first (`margins` ascending), e.g. for benchmarks.
    /// `None` when a bit is above 63 or repeated, or the margins are not ascending.
    pub fn from_parts(bits: [u8; WEAK_BITS], margins: [u16; WEAK_BITS]) -> Option<Self> {
        let distinct = bits.iter().fold(0u64, |seen, &b| seen | 1u64 << (b & 63));
        let ok = bits.iter().all(|&b| b < 64)
            && distinct.count_ones() as usize == WEAK_BITS
            && margins.windows(2).all(|w| w[0] <= w[1]);
        ok.then_some(WeakBits { bits, margins })
    }

    /// The bits and their margins, weakest first.
    pub fn iter(&self) -> impl Iterator<Item = (u32, u16)> + '_ {
        self.bits
            .iter()
            .zip(&self.margins)
            .map(|(&b, &m)| (u32::from(b), m))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_bits_nearest_zero_come_first_with_relative_margins() {
        let mut sums = [1_000i64; 64];
        sums[7] = 0;
        sums[3] = -10;
        sums[40] = 20;
        sums[9] = -2_000;
        let w = WeakBits::from_sums(&sums);
        let got: Vec<(u32, u16)> = w.iter().take(4).collect();
        assert_eq!(got, vec![(7, 0), (3, 327), (40, 655), (0, 32_767)]);
        assert!(
            w.iter().all(|(b, _)| b != 9),
            "the strongest bit is not weak"
        );
        assert_eq!(WeakBits::from_parts(w.bits, w.margins), Some(w));
        let mut repeated = w.bits;
        repeated[1] = repeated[0];
        assert_eq!(WeakBits::from_parts(repeated, w.margins), None);
        let mut descending = w.margins;
        descending[0] = u16::MAX;
        assert_eq!(WeakBits::from_parts(w.bits, descending), None);
    }
}
