//! A 64-byte b-bit MinHash sketch of a document's word shingles, for a second, exact-er
//! look at SimHash candidates (the optional "verify" stage after a query).
//!
//! SimHash within k = 3 needs a cosine similarity of about 0.99; real near-copies with a
//! few percent of edited words drift to 5–10 bits. Querying with a larger k finds them, but
//! also finds unrelated documents; the sketch tells the two apart: it estimates the Jaccard
//! similarity of the two documents' sets of 3-token shingles (after cleaning, so chrome
//! does not count) from 63 one-byte minima (Li & König, b-bit minwise hashing, 2010) of a
//! one-permutation MinHash.
//!
//! The estimate's standard error is about `sqrt(J (1 − J) / 63)` (±0.06 at J = 0.5). The
//! sketch's last byte counts the bins the shingles filled: how much content the estimate
//! rests on ([`Sketch::shingles`]).

use xxhash_rust::xxh3::xxh3_64_with_seed;

pub use crate::types::sketch::{MINIMA, SLOTS, Sketch};

/// Shingle length in tokens.
pub const SHINGLE: usize = 3;

#[inline]
fn mix(mut z: u64) -> u64 {
    z = (z ^ (z >> 33)).wrapping_mul(0xFF51_AFD7_ED55_8CCD);
    z = (z ^ (z >> 33)).wrapping_mul(0xC4CE_B9FE_1A85_EC53);
    z ^ (z >> 33)
}

/// Builds a sketch from a token stream: one-permutation MinHash (Li, Owen & Zhang 2012) —
/// each shingle's hash picks one of 63 slots by its top 32 bits and competes for that slot's minimum
/// with the rest — so a token costs one hash and one comparison, not 64. Empty slots are
/// filled from the next non-empty slot to their right, cyclically, with a per-distance
/// offset (rotation densification, Shrivastava & Li 2014).
#[derive(Debug, Clone)]
pub struct SketchBuilder {
    minima: [u64; MINIMA],
    window: [u64; SHINGLE],
    seen: usize,
}

impl Default for SketchBuilder {
    fn default() -> Self {
        Self::new()
    }
}

impl SketchBuilder {
    /// An empty builder.
    pub fn new() -> Self {
        Self {
            minima: [u64::MAX; MINIMA],
            window: [0; SHINGLE],
            seen: 0,
        }
    }

    /// Adds the next token.
    pub fn push(&mut self, token: &str) {
        self.window.rotate_left(1);
        self.window[SHINGLE - 1] = xxh3_64_with_seed(token.as_bytes(), 0x534B_4554_4348);
        self.seen += 1;
        if self.seen >= SHINGLE {
            self.add_shingle(SHINGLE);
        }
    }

    fn add_shingle(&mut self, len: usize) {
        let mut h = 0u64;
        for &t in &self.window[SHINGLE - len..] {
            h = mix(h.rotate_left(23) ^ t);
        }
        let slot = (((h >> 32) * MINIMA as u64) >> 32) as usize;
        let value = h & 0xFFFF_FFFF;
        if value < self.minima[slot] {
            self.minima[slot] = value;
        }
    }

    /// The sketch; `None` when no token was pushed. Texts shorter than one shingle are
    /// sketched as the one shingle they are.
    pub fn finish(mut self) -> Option<Sketch> {
        if self.seen == 0 {
            return None;
        }
        if self.seen < SHINGLE {
            self.add_shingle(self.seen);
        }
        let mut out = [0u8; SLOTS];
        let filled = self.minima.iter().filter(|&&v| v != u64::MAX).count();
        out[MINIMA] = filled as u8;
        for (i, o) in out.iter_mut().take(MINIMA).enumerate() {
            // The slot itself, or the next non-empty one (there is at least one).
            let (distance, value) = (0..MINIMA)
                .map(|d| (d, self.minima[(i + d) % MINIMA]))
                .find(|&(_, v)| v != u64::MAX)
                .expect("at least one shingle was added");
            *o = mix(value ^ (distance as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15)) as u8;
        }
        Some(Sketch(out))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sketch(words: &[String]) -> Sketch {
        let mut b = SketchBuilder::new();
        for w in words {
            b.push(w);
        }
        b.finish().unwrap()
    }

    #[test]
    fn equal_texts_are_one_and_different_texts_near_zero() {
        let a: Vec<String> = (0..300).map(|i| format!("w{i}")).collect();
        let b: Vec<String> = (1000..1300).map(|i| format!("w{i}")).collect();
        assert_eq!(sketch(&a).similarity(&sketch(&a)), 1.0);
        assert!(sketch(&a).similarity(&sketch(&b)) < 0.1);
        assert!(SketchBuilder::new().finish().is_none());
        assert_eq!(sketch(&a[..1]).similarity(&sketch(&a[..1])), 1.0);
    }

    #[test]
    fn estimates_jaccard_within_its_error() {
        // Two texts sharing a middle part: true shingle Jaccard computable exactly.
        let common: Vec<String> = (0..600).map(|i| format!("c{i}")).collect();
        let a: Vec<String> = common
            .iter()
            .cloned()
            .chain((0..200).map(|i| format!("a{i}")))
            .collect();
        let b: Vec<String> = common
            .iter()
            .cloned()
            .chain((0..200).map(|i| format!("b{i}")))
            .collect();
        let shingles = |v: &[String]| -> std::collections::HashSet<Vec<String>> {
            v.windows(SHINGLE).map(|w| w.to_vec()).collect()
        };
        let (sa, sb) = (shingles(&a), shingles(&b));
        let truth = sa.intersection(&sb).count() as f64 / sa.union(&sb).count() as f64;
        let est = sketch(&a).similarity(&sketch(&b));
        assert!((est - truth).abs() < 0.2, "estimate {est}, truth {truth}");
    }
}
