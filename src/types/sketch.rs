//! The 64-byte shingle sketch a document keeps for the two-stage query (built by
//! [`crate::text::sketch::SketchBuilder`]).

/// Number of minima kept (each reduced to its low byte).
pub const SLOTS: usize = 64;

/// A b-bit MinHash sketch (b = 8, 64 slots).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Sketch(pub [u8; SLOTS]);

impl Sketch {
    /// Its size in bytes (one per slot).
    pub const BYTES: usize = SLOTS;

    /// Estimated Jaccard similarity of the two shingle sets, in [0, 1]: the share of equal
    /// slots, corrected for the 1/256 chance that two different minima share their low byte.
    pub fn similarity(&self, other: &Sketch) -> f64 {
        let equal = self
            .0
            .iter()
            .zip(other.0.iter())
            .filter(|(a, b)| a == b)
            .count();
        let p = equal as f64 / SLOTS as f64;
        let chance = 1.0 / 256.0;
        ((p - chance) / (1.0 - chance)).clamp(0.0, 1.0)
    }
}
