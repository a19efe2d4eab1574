//! The least certain bits of a fingerprint: where a near copy's fingerprint most likely
//! differs, so where the query-directed probes of a quality mode look (docs/design.md §3a).

/// How many of a fingerprint's least certain bits a [`WeakBits`] keeps.
pub const WEAK_BITS: usize = 16;

/// A fingerprint's `WEAK_BITS` least certain bits, weakest first: those whose projection
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
        let max = sums
            .iter()
            .map(|s| s.unsigned_abs())
            .max()
            .unwrap_or(0)
            .max(1);
        // Each bit's key is `|sum|` then the bit (so keys are distinct); in a `u64` when
        // every `|sum|` leaves it 8 bits, as all but absurdly long texts' do.
        let bits: [u8; WEAK_BITS] = if max < 1 << 56 {
            let keys = sums.iter().enumerate();
            smallest(
                keys.map(|(b, s)| s.unsigned_abs() << 8 | b as u64),
                u64::MAX,
            )
            .map(|key| key as u8)
        } else {
            let keys = sums.iter().enumerate();
            smallest(
                keys.map(|(b, s)| u128::from(s.unsigned_abs()) << 8 | b as u128),
                u128::MAX,
            )
            .map(|key| key as u8)
        };
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

/// The [`WEAK_BITS`] smallest of `keys` (at least that many, distinct, all below `above`),
/// ascending: kept in a sorted array as they pass, the first [`WEAK_BITS`] of a full sort.
fn smallest<K: Copy + Ord>(keys: impl Iterator<Item = K>, above: K) -> [K; WEAK_BITS] {
    let mut kept = [above; WEAK_BITS];
    for key in keys {
        if key < kept[WEAK_BITS - 1] {
            let mut at = WEAK_BITS - 1;
            while at > 0 && kept[at - 1] > key {
                kept[at] = kept[at - 1];
                at -= 1;
            }
            kept[at] = key;
        }
    }
    kept
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The definition: all 64 bits sorted by `|sum|`, ties by the lower bit.
    fn sorted_weakest_first(sums: &[i64; 64]) -> Vec<u8> {
        let mut order: Vec<u8> = (0..64).collect();
        order.sort_by_key(|&b| (sums[usize::from(b)].unsigned_abs(), b));
        order.truncate(WEAK_BITS);
        order
    }

    #[test]
    fn the_weak_bits_are_the_first_of_the_full_order() {
        let mut x = 0x9E37_79B9_7F4A_7C15u64;
        for round in 0..2_000 {
            let sums: [i64; 64] = std::array::from_fn(|_| {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                // Few distinct magnitudes in some rounds, so that ties are common.
                let spread = if round % 2 == 0 { 7 } else { 1 << 40 };
                (x % spread) as i64 - (spread / 2) as i64
            });
            let got: Vec<u8> = WeakBits::from_sums(&sums)
                .iter()
                .map(|(b, _)| b as u8)
                .collect();
            assert_eq!(got, sorted_weakest_first(&sums), "round {round}");
        }
        let extremes: [i64; 64] =
            std::array::from_fn(|i| if i % 2 == 0 { i64::MIN } else { i64::MAX });
        let got: Vec<u8> = WeakBits::from_sums(&extremes)
            .iter()
            .map(|(b, _)| b as u8)
            .collect();
        assert_eq!(got, sorted_weakest_first(&extremes));
    }

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
