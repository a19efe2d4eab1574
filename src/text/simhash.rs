//! Weighted SimHash with Gaussian projections (Charikar 2002): the "simhash" stage of the
//! data flow.
//!
//! Each of the 64 bits is the sign of a random projection of the document's weighted
//! feature vector: feature `f` with weight `w` adds `w · g(f, i)` to bit `i`'s sum, where
//! `g(f, i)` is a standard normal coefficient (scaled to integers) drawn from the feature's
//! hash, and the fingerprint has a bit set where the sum is positive. With Gaussian
//! coefficients two vectors at angle θ differ in each bit with probability θ/π, however
//! their weight is spread (test `differing_bits_follow_the_angle`). With ±1 coefficients
//! (the textbook SimHash) that holds only for many comparable weights: when a few features
//! carry most of the weight, equal weights tie in many bits, and the light features that
//! settle the tie are the ones edits change (docs/design.md §2).
//!
//! Coefficients come from [`COEFFICIENTS`], a 256-level quantized normal distribution, indexed
//! by the bytes of a splitmix64 stream seeded with the feature's hash (8 words, 64 bytes, one
//! per bit). All arithmetic is on integers, so the result is exact, the same on every
//! platform and independent of the order in which features are added.

#[cfg(target_arch = "x86_64")]
mod avx512;

/// Magnitudes of the coefficients: `round(4096 · Φ⁻¹((128 + i + 0.5) / 256))` for `i` in
/// `0..128`, with Φ the standard normal distribution function (Python:
/// `round(statistics.NormalDist().inv_cdf((128 + i + 0.5) / 256) * 4096)`). The negative half
/// mirrors them.
const MAGNITUDES: [i32; 128] = [
    20, 60, 100, 140, 181, 221, 261, 301, 341, 382, 422, 462, 503, 543, 584, 624, //
    665, 705, 746, 787, 828, 869, 910, 951, 992, 1034, 1075, 1117, 1158, 1200, 1242, 1284, //
    1326, 1369, 1411, 1454, 1497, 1539, 1583, 1626, 1669, 1713, 1757, 1801, 1845, 1890, 1935,
    1979, //
    2025, 2070, 2116, 2162, 2208, 2255, 2301, 2348, 2396, 2444, 2492, 2540, 2589, 2638, 2688,
    2738, //
    2788, 2839, 2890, 2942, 2994, 3046, 3100, 3153, 3207, 3262, 3318, 3374, 3430, 3487, 3545,
    3604, //
    3664, 3724, 3785, 3847, 3910, 3973, 4038, 4104, 4170, 4238, 4307, 4378, 4450, 4523, 4597,
    4673, //
    4751, 4830, 4912, 4995, 5080, 5168, 5258, 5351, 5447, 5545, 5647, 5753, 5863, 5977, 6095,
    6219, //
    6350, 6486, 6631, 6784, 6948, 7123, 7312, 7519, 7746, 8001, 8290, 8628, 9038, 9565, 10324,
    11820,
];

/// The projection coefficient of each byte value: the 256 quantiles `(j + 0.5) / 256` of a
/// normal distribution with standard deviation 4096, in increasing order (byte 0 is the most
/// negative, byte 255 the most positive; `COEFFICIENTS[255 − j] = −COEFFICIENTS[j]`).
pub static COEFFICIENTS: [i32; 256] = {
    let mut table = [0i32; 256];
    let mut i = 0;
    while i < 128 {
        table[128 + i] = MAGNITUDES[i];
        table[127 - i] = -MAGNITUDES[i];
        i += 1;
    }
    table
};

/// Largest weight a feature votes with; heavier ones count as this much. With coefficients
/// below 2^14, a vote moves a sum by less than 2^34, so 2^29 features cannot overflow it.
pub const MAX_WEIGHT: u32 = 1 << 20;

/// Word `j` (0..8) of the feature's coefficient stream: the splitmix64 output `j + 1` for
/// the seed `hash`. Byte `b` of word `j` is the coefficient index of bit `8j + b`.
#[inline(always)]
fn stream_word(hash: u64, j: u64) -> u64 {
    let mut z = hash.wrapping_add((j + 1).wrapping_mul(SPLITMIX_GAMMA));
    z = (z ^ (z >> 30)).wrapping_mul(SPLITMIX_MIX[0]);
    z = (z ^ (z >> 27)).wrapping_mul(SPLITMIX_MIX[1]);
    z ^ (z >> 31)
}

/// splitmix64's increment (γ) and its two mixing multipliers: the coefficient stream of
/// [`stream_word`] and of its vector form.
const SPLITMIX_GAMMA: u64 = 0x9E37_79B9_7F4A_7C15;
const SPLITMIX_MIX: [u64; 2] = [0xBF58_476D_1CE4_E5B9, 0x94D0_49BB_1331_11EB];

/// [`COEFFICIENTS`] as `f64`, the values `project` multiplies.
static COEFFICIENTS_F64: [f64; 256] = {
    let mut table = [0f64; 256];
    let mut i = 0;
    while i < 256 {
        table[i] = COEFFICIENTS[i] as f64;
        i += 1;
    }
    table
};

/// Features per batch chunk: a product `weight · coefficient` is an integer below 2^34, so
/// the sums of 2^18 of them stay below 2^52 and every `f64` operation on them is exact.
const CHUNK: usize = 1 << 18;

/// Adds feature `hash`'s projections, times `weight`, to the 64 sums: the one loop behind
/// [`SimHasher::add`] and [`simhash`]. Each product is an integer below 2^34, so it is
/// exact in `f64`, and so are sums below 2^52 (see `CHUNK`).
#[inline(always)]
fn project(sums: &mut [f64; 64], hash: u64, weight: u32) {
    let w = f64::from(weight.min(MAX_WEIGHT));
    for (j, block) in sums.chunks_exact_mut(8).enumerate() {
        let word = stream_word(hash, j as u64).to_le_bytes();
        for (sum, &byte) in block.iter_mut().zip(&word) {
            *sum += w * COEFFICIENTS_F64[usize::from(byte)];
        }
    }
}

/// Adds exact `f64` sums (integers below 2^52) into the `i64` totals.
fn fold_into(totals: &mut [i64; 64], sums: &[f64; 64]) {
    for (total, &sum) in totals.iter_mut().zip(sums) {
        // An integer below 2^52 in magnitude: the conversion is exact.
        *total += sum as i64;
    }
}

/// The fingerprint of 64 projection sums: bit `i` set where sum `i` is positive.
pub fn signs(sums: &[i64; 64]) -> u64 {
    sums.iter().enumerate().fold(
        0u64,
        |fp, (bit, &s)| if s > 0 { fp | (1u64 << bit) } else { fp },
    )
}

/// Accumulates weighted feature hashes into a 64-bit SimHash, one feature at a time.
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

    /// Adds one feature with hash `hash` and weight `weight` (at most [`MAX_WEIGHT`]; more
    /// counts as that).
    #[inline]
    pub fn add(&mut self, hash: u64, weight: u32) {
        let mut projections = [0f64; 64];
        project(&mut projections, hash, weight);
        fold_into(&mut self.sums, &projections);
        self.total_weight += u64::from(weight.min(MAX_WEIGHT));
    }

    /// The sum of all weights added so far (0 means no feature was added).
    pub fn total_weight(&self) -> u64 {
        self.total_weight
    }

    /// The fingerprint: bit `i` is set where the weighted projection for bit `i` is positive.
    pub fn finish(&self) -> u64 {
        signs(&self.sums)
    }
}

/// The SimHash of `(hash, weight)` features all at once: the same as adding them one by one
/// to a [`SimHasher`] and calling [`SimHasher::finish`]. The sums are taken in `f64`, whose
/// multiplies are faster than `i64`'s, and moved into `i64` every 2^18 features, so every
/// value is an integer below 2^52 and each operation is exact, whatever the order.
pub fn simhash(features: &[(u64, u32)]) -> u64 {
    signs(&projection_sums(features))
}

/// The 64 projection sums behind [`simhash`] (bit `i` is set where sum `i` is positive):
/// how certain each bit is ([`crate::WeakBits`]).
pub fn projection_sums(features: &[(u64, u32)]) -> [i64; 64] {
    #[cfg(target_arch = "x86_64")]
    if avx512::available() {
        return avx512::projection_sums(features);
    }
    scalar_projection_sums(features)
}

/// [`projection_sums`] one coefficient at a time: where the CPU lacks AVX-512, and the
/// model its vector form is tested against.
fn scalar_projection_sums(features: &[(u64, u32)]) -> [i64; 64] {
    let mut totals = [0i64; 64];
    for chunk in features.chunks(CHUNK) {
        let mut sums = [0f64; 64];
        for &(hash, weight) in chunk {
            project(&mut sums, hash, weight);
        }
        fold_into(&mut totals, &sums);
    }
    totals
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::text::test_input::xorshift;

    #[test]
    fn batch_equals_one_by_one_in_any_order() {
        let mut next = xorshift(0x2545_F491_4F6C_DD1D);
        for n in [0usize, 1, 2, 3, 17, 500, 5000, CHUNK + 3] {
            let mut features: Vec<(u64, u32)> = (0..n)
                .map(|_| (next(), (next() % u64::from(MAX_WEIGHT)) as u32 + 1))
                .collect();
            let mut h = SimHasher::new();
            for &(hash, w) in &features {
                h.add(hash, w);
            }
            assert_eq!(simhash(&features), h.finish(), "{n} features");
            features.reverse();
            assert_eq!(simhash(&features), h.finish(), "{n} features reversed");
        }
    }

    /// The vector form gives the scalar loop's sums to the bit, over weights up to and past
    /// [`MAX_WEIGHT`] and past one chunk of features.
    #[test]
    fn vector_sums_equal_scalar_sums() {
        #[cfg(not(target_arch = "x86_64"))]
        eprintln!("skipped: the vector form is x86-64's; the scalar loop runs");
        #[cfg(target_arch = "x86_64")]
        {
            if !avx512::available() {
                eprintln!(
                    "skipped: this CPU lacks AVX-512 F/BW/DQ/VBMI/VNNI; the scalar loop runs"
                );
                return;
            }
            let mut next = xorshift(0xA076_1D64_78BD_642F);
            for n in [0usize, 1, 2, 7, 64, 1000, CHUNK + 5] {
                let features: Vec<(u64, u32)> = (0..n)
                    .map(|i| {
                        let weight = match i % 4 {
                            0 => MAX_WEIGHT,
                            1 => u32::MAX,
                            _ => (next() % 5000) as u32,
                        };
                        (next(), weight)
                    })
                    .collect();
                let want = scalar_projection_sums(&features);
                assert_eq!(avx512::projection_sums(&features), want, "{n} features");
            }
        }
    }

    #[test]
    fn coefficients_are_normal_quantiles() {
        // Antisymmetric and strictly increasing.
        for j in 0..256 {
            assert_eq!(COEFFICIENTS[255 - j], -COEFFICIENTS[j]);
        }
        assert!(COEFFICIENTS.windows(2).all(|w| w[0] < w[1]));
        // Standard deviation 4096 up to the quantization of the tails (the 256 midpoint
        // quantiles of N(0, 1) have standard deviation 0.9975).
        let var = COEFFICIENTS
            .iter()
            .map(|&c| f64::from(c) * f64::from(c))
            .sum::<f64>()
            / 256.0;
        assert!(
            (var.sqrt() / 4096.0 - 0.9975).abs() < 0.001,
            "{}",
            var.sqrt()
        );
        // The median quantile and the extreme one: Φ⁻¹(128.5/256) = 0.004896, Φ⁻¹(255.5/256)
        // = 2.8856.
        assert_eq!(COEFFICIENTS[128], 20);
        assert_eq!(COEFFICIENTS[255], 11820);
    }

    #[test]
    fn single_feature_is_the_sign_of_its_coefficients() {
        let hash = 0xDEAD_BEEF_0123_4567u64;
        let mut want = 0u64;
        for bit in 0..64 {
            let word = stream_word(hash, bit / 8);
            let byte = (word >> (8 * (bit % 8))) & 0xFF;
            if byte >= 128 {
                want |= 1 << bit;
            }
        }
        assert_eq!(simhash(&[(hash, 7)]), want);
        // Pinned: the stream and the table are part of the fingerprint spec.
        assert_eq!(want, 0x8883_6FF5_F7CF_A8CE);
        assert_eq!(stream_word(0, 0), 0xE220_A839_7B1D_CDAF);
    }

    #[test]
    fn positive_scaling_and_empty_input() {
        let mut next = xorshift(7);
        let features: Vec<(u64, u32)> = (0..40)
            .map(|_| (next(), (next() % 1000) as u32 + 1))
            .collect();
        let scaled: Vec<(u64, u32)> = features.iter().map(|&(h, w)| (h, w * 3)).collect();
        assert_eq!(simhash(&features), simhash(&scaled));
        assert_eq!(simhash(&[]), 0);
        let mut h = SimHasher::new();
        h.add(1, MAX_WEIGHT + 5);
        assert_eq!(h.total_weight(), u64::from(MAX_WEIGHT));
    }

    /// Charikar's property, which ±1 coefficients lack for concentrated weights: the share of
    /// differing bits between two weighted vectors is θ/π. Here two heavy features of equal
    /// weight (as the share limit makes them) and ten light ones, three of which are replaced
    /// (cos θ = 20,700 / 21,000, θ/π = 0.0539). With ±1 coefficients the two heavy votes
    /// cancel in half the bits, which the light features then decide: 0.117 of the bits
    /// differ (simulated), twice θ/π.
    #[test]
    fn differing_bits_follow_the_angle() {
        let mut next = xorshift(0x9E37_79B9_7F4A_7C15);
        let trials = 4000;
        let mut differing = 0u64;
        for _ in 0..trials {
            let heavy = [(next(), 100), (next(), 100)];
            let light: Vec<(u64, u32)> = (0..10).map(|_| (next(), 10)).collect();
            let mut edited = light.clone();
            for feature in &mut edited[..3] {
                feature.0 = next();
            }
            let x = simhash(&[&heavy[..], &light].concat());
            let y = simhash(&[&heavy[..], &edited].concat());
            differing += u64::from((x ^ y).count_ones());
        }
        let share = differing as f64 / (64.0 * f64::from(trials));
        let want = (20_700.0f64 / 21_000.0).acos() / std::f64::consts::PI;
        // 256,000 bit comparisons, independent (each bit has its own coefficients): the
        // standard error is about 0.0005.
        assert!(
            (share - want).abs() < 0.004,
            "share {share:.4}, θ/π {want:.4}"
        );
    }
}
