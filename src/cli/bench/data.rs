//! The benchmark's synthetic data: uniform fingerprints with planted neighbours, the
//! sketches and weak bits a text's would have, from a small seedable generator.

use simstore::types::weak_bits::WEAK_BITS;
use simstore::{Sketch, WeakBits};

/// SplitMix64: a small, fast, seedable generator (no dependency needed).
pub(super) struct Rng(pub(super) u64);

impl Rng {
    pub(super) fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// `fp` with exactly `d` distinct bits flipped.
    pub(super) fn flip(&mut self, fp: u64, d: u32) -> u64 {
        let mut mask = 0u64;
        while mask.count_ones() < d {
            mask |= 1 << (self.next() % 64);
        }
        fp ^ mask
    }
}

/// Weak bits for a query without text: 16 of the 64 bits drawn from `q`, in rising
/// margins, so that a mode's query-directed probes read as many spans as a text's would.
pub(super) fn synthetic_weak_bits(q: u64) -> WeakBits {
    let mut order: [u8; 64] = std::array::from_fn(|i| i as u8);
    let mut rng = Rng(q);
    for i in (1..64).rev() {
        order.swap(i, (rng.next() % (i as u64 + 1)) as usize);
    }
    let bits: [u8; WEAK_BITS] = std::array::from_fn(|i| order[i]);
    let margins: [u16; WEAK_BITS] = std::array::from_fn(|i| (i as u16 + 1) * 4_000);
    WeakBits::from_parts(bits, margins).expect("distinct bits, rising margins")
}

/// A random sketch of a text filling every bin, drawn from `seed`: two are alike only when
/// drawn from the same seed.
pub(super) fn synthetic_sketch(seed: u64) -> Sketch {
    let mut rng = Rng(seed ^ 0x5EED_5EED_5EED_5EED);
    let mut s = [0u8; Sketch::BYTES];
    for chunk in s.chunks_mut(8) {
        chunk.copy_from_slice(&rng.next().to_le_bytes()[..chunk.len()]);
    }
    s[Sketch::BYTES - 1] = (Sketch::BYTES - 1) as u8;
    Sketch(s)
}

/// The stored fingerprint at distance `d` from query `i` of `count` among `n`.
pub(super) fn planted_slot(i: usize, d: u32, n: usize, count: usize) -> usize {
    (i * 5 + d as usize) * (n / (count * 5))
}

/// `n` uniform fingerprints from `seed`, then planted neighbours: for each of `count`
/// queries, five stored fingerprints at distance 0, 1, 2, 3 and 4 from it (spread evenly
/// over the stored ones). Returns the stored fingerprints and the queries.
pub(super) fn planted_data(seed: u64, n: usize, count: usize) -> (Vec<u64>, Vec<u64>) {
    let mut rng = Rng(seed);
    let mut fps: Vec<u64> = (0..n).map(|_| rng.next()).collect();
    let queries = (0..count)
        .map(|i| {
            let q = rng.next();
            for d in 0..5u32 {
                fps[planted_slot(i, d, n, count)] = rng.flip(q, d);
            }
            q
        })
        .collect();
    (fps, queries)
}

/// The seed of each stored fingerprint's sketch ([`synthetic_sketch`]): its own, but the
/// query's for the neighbours planted within distance 3 of a query.
pub(super) fn sketch_seeds(fps: &[u64], queries: &[u64]) -> Vec<u64> {
    let mut seeds = fps.to_vec();
    for (i, &q) in queries.iter().enumerate() {
        for d in 0..4 {
            seeds[planted_slot(i, d, fps.len(), queries.len())] = q;
        }
    }
    seeds
}
