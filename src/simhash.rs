//! Weighted SimHash (Charikar 2002): the "simhash" stage of the data flow.
//!
//! Each feature's 64-bit hash votes `+w` on the bits it has set and `−w` on the others;
//! the fingerprint has a bit set where the sum is positive. Weights are integers, so the
//! result does not depend on the order in which features are added.

/// For each byte value, a mask per bit (bit 0 first): −1 if the bit is set, 0 if clear.
static SET_MASKS: [[i32; 8]; 256] = {
    let mut table = [[0i32; 8]; 256];
    let mut b = 0;
    while b < 256 {
        let mut bit = 0;
        while bit < 8 {
            table[b][bit] = if (b >> bit) & 1 == 1 { -1 } else { 0 };
            bit += 1;
        }
        b += 1;
    }
    table
};

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
        // Byte by byte through a mask table: contiguous loads, no multiplies, vectorizable.
        for (byte, sums) in self.sums.chunks_exact_mut(8).enumerate() {
            let masks = &SET_MASKS[((hash >> (8 * byte)) & 0xFF) as usize];
            for (sum, &m) in sums.iter_mut().zip(masks) {
                // m = 0 where the bit is set (+w), m = -1 where it is clear ((w ^ -1) + 1 = -w).
                let m = i64::from(!m);
                *sum += (w ^ m) - m;
            }
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

/// The SimHash of `(hash, weight)` features all at once: the same as adding them one by one
/// to a [`SimHasher`] and calling [`SimHasher::finish`] (for weights up to 2^20; larger ones
/// count as 2^20), several times faster. The 64 sums are
/// built 16 at a time (two bytes of every hash per pass over the features), so they stay in
/// registers instead of being spilled to memory for every feature.
pub fn simhash(features: &[(u64, u32)]) -> u64 {
    // Bit i's vote is the weight of the features that set it minus the weight of those that
    // clear it, 2·S_i − W, with S_i the weight of the features that set bit i and W the total
    // weight: so only S_i is summed (one AND and one add per lane, where ±w takes three
    // operations) and bit i is set iff 2·S_i > W.
    // Weights up to 2^20 in 32-bit lanes: 2^10 features move a lane by at most 2^30, so the
    // lanes cannot overflow and are added into 64-bit sums every CHUNK features.
    const CHUNK: usize = 1 << 10;
    let total: i64 = features
        .iter()
        .map(|&(_, weight)| i64::from(weight.min(1 << 20)))
        .sum();
    let mut fp = 0u64;
    for block in 0..4 {
        let mut sums = [0i64; 16];
        for chunk in features.chunks(CHUNK) {
            let mut lanes = [0i32; 16];
            for &(hash, weight) in chunk {
                // Weights above 2^20 would risk overflow; callers stay below (saturate).
                let w = weight.min(1 << 20) as i32;
                let lo = &SET_MASKS[((hash >> (16 * block)) & 0xFF) as usize];
                let hi = &SET_MASKS[((hash >> (16 * block + 8)) & 0xFF) as usize];
                for (lane, &m) in lanes[..8].iter_mut().zip(lo) {
                    *lane += w & m;
                }
                for (lane, &m) in lanes[8..].iter_mut().zip(hi) {
                    *lane += w & m;
                }
            }
            for (sum, &lane) in sums.iter_mut().zip(&lanes) {
                *sum += i64::from(lane);
            }
        }
        for (bit, &s) in sums.iter().enumerate() {
            if 2 * s > total {
                fp |= 1u64 << (16 * block + bit);
            }
        }
    }
    fp
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn batch_equals_one_by_one() {
        let mut x = 0x2545_F491_4F6C_DD1Du64;
        let mut next = || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        };
        for n in [0usize, 1, 2, 3, 17, 500, 5000] {
            let features: Vec<(u64, u32)> = (0..n)
                .map(|_| (next(), (next() % (1 << 20)) as u32 + 1))
                .collect();
            let mut h = SimHasher::new();
            for &(hash, w) in &features {
                h.add(hash, w);
            }
            assert_eq!(simhash(&features), h.finish(), "{n} features");
        }
    }

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
