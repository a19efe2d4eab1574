//! Weighted SimHash (Charikar 2002): the "simhash" stage of the data flow.
//!
//! Each feature's 64-bit hash votes `+w` on the bits it has set and `−w` on the others;
//! the fingerprint has a bit set where the sum is positive. Weights are integers, so the
//! result does not depend on the order in which features are added.

/// Accumulates weighted feature hashes into a 64-bit SimHash.
#[derive(Debug, Clone)]
pub struct SimHasher {
    sums: [i64; 64],
    total_weight: u64,
}

impl Default for SimHasher {
    fn default() -> Self {
        Self::new()
    }
}

impl SimHasher {
    /// An empty accumulator.
    pub fn new() -> Self {
        Self {
            sums: [0; 64],
            total_weight: 0,
        }
    }

    /// Adds one feature with hash `hash` and weight `weight`.
    #[inline]
    pub fn add(&mut self, hash: u64, weight: u32) {
        let w = i64::from(weight);
        for (bit, sum) in self.sums.iter_mut().enumerate() {
            // +w where the bit is set, -w where it is clear.
            *sum += (((hash >> bit) & 1) as i64 * 2 - 1) * w;
        }
        self.total_weight += u64::from(weight);
    }

    /// The sum of all weights added so far (0 means no feature was added).
    pub fn total_weight(&self) -> u64 {
        self.total_weight
    }

    /// The fingerprint: bit `i` is set where the weighted vote for bit `i` is positive.
    pub fn finish(&self) -> u64 {
        self.sums.iter().enumerate().fold(
            0u64,
            |fp, (bit, &s)| if s > 0 { fp | (1u64 << bit) } else { fp },
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn single_feature_is_its_hash() {
        let mut h = SimHasher::new();
        h.add(0xDEAD_BEEF_0123_4567, 1);
        assert_eq!(h.finish(), 0xDEAD_BEEF_0123_4567);
    }

    #[test]
    fn heavier_feature_wins_and_order_does_not_matter() {
        let (a, b) = (0xFFFF_0000_FFFF_0000u64, 0x0000_FFFF_0000_FFFFu64);
        let mut x = SimHasher::new();
        x.add(a, 3);
        x.add(b, 2);
        let mut y = SimHasher::new();
        y.add(b, 2);
        y.add(a, 3);
        assert_eq!(x.finish(), a);
        assert_eq!(x.finish(), y.finish());
        assert_eq!(x.total_weight(), 5);
    }

    #[test]
    fn ties_are_zero() {
        let mut h = SimHasher::new();
        h.add(u64::MAX, 1);
        h.add(0, 1);
        assert_eq!(h.finish(), 0);
    }
}
