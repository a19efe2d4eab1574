//! Helpers shared by the integration tests.

use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use simstore::{Fingerprint, Match};

/// A deterministic RNG.
pub fn rng(seed: u64) -> StdRng {
    StdRng::seed_from_u64(seed)
}

/// `fp` with `n` distinct random bits flipped.
pub fn flip(rng: &mut StdRng, fp: u64, n: u32) -> u64 {
    let mut out = fp;
    let mut flipped = 0u64;
    while flipped.count_ones() < n {
        flipped |= 1u64 << rng.random_range(0..64);
    }
    out ^= flipped;
    out
}

/// The brute-force answer: `(distance, id)` of every entry within `k`, sorted.
pub fn brute_force(entries: &[(String, u64)], q: u64, k: u32) -> Vec<(u32, String)> {
    let mut out: Vec<(u32, String)> = entries
        .iter()
        .map(|(id, fp)| ((fp ^ q).count_ones(), id.clone()))
        .filter(|(d, _)| *d <= k)
        .collect();
    out.sort();
    out
}

/// A store answer in the same shape as [`brute_force`].
pub fn shape(matches: &[Match]) -> Vec<(u32, String)> {
    matches
        .iter()
        .map(|m| (m.distance, m.doc.id.clone()))
        .collect()
}

/// Clustered fingerprints: `clusters` random centres, each with `size` members at
/// distance 0..=`spread` (so exact duplicates and near misses around every k).
pub fn clustered(rng: &mut StdRng, clusters: usize, size: usize, spread: u32) -> Vec<u64> {
    let mut out = Vec::with_capacity(clusters * size);
    for _ in 0..clusters {
        let centre: u64 = rng.random();
        for _ in 0..size {
            let d = rng.random_range(0..=spread);
            out.push(flip(rng, centre, d));
        }
    }
    out
}

/// Parses a fingerprint, panicking on bad test data.
pub fn fp(hex: &str) -> Fingerprint {
    hex.parse().expect("valid test fingerprint")
}
