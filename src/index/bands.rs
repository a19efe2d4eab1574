//! Candidates from the sketch itself: LSH bands of its minima, each kept in a table of its
//! own beside the permutation tables. Two documents whose sketches agree on every byte of
//! one band are candidates whatever their fingerprints' distance: this finds the copies
//! that edits moved beyond the permutation tables' spans. A band table is keyed
//! like a permutation table (a 64-bit key and the sequence number), so every backend keeps
//! it as it keeps those; its key is the band's bytes on top of the fingerprint's top bits.

use crate::types::Sketch;

/// Sketch bytes (minima) in one band.
pub const BAND_BYTES: usize = 4;

/// The bits of a band: the top of a band table's key, looked up as a span.
pub const BAND_BITS: u32 = 8 * BAND_BYTES as u32;

/// The prefix bits a band table's entries are grouped by in a store whose permutation
/// tables' longest prefix is `longest`: as many (the buckets hold as many entries as the
/// permutation tables' do), but at most the band's own bits.
pub fn table_prefix_bits(longest: u32) -> u32 {
    longest.clamp(1, BAND_BITS)
}

/// The most bands a store keeps (the bands are the sketch's first minima, in order). A new
/// store keeps, and its mode's rule reads, its quality mode's
/// ([`crate::index::quality::Quality::bands`]): 2 in the standard mode, 4 in the high mode.
pub const MAX_BANDS: u32 = 4;

/// Every band a sketch holds (its minima, 4 to a band): what a dedup of files reads
/// ([`crate::index::quality::MatchRule::for_datasets`]), its sketches in memory; a store
/// keeps tables of at most [`MAX_BANDS`] of them.
pub const SKETCH_BANDS: u32 = (crate::types::sketch::MINIMA / BAND_BYTES) as u32;

/// A sketch whose text filled fewer bins than this is not indexed by bands (and does not
/// look them up): its empty bins were filled from their neighbours, so unrelated short
/// texts agree there far more often than chance.
pub const MIN_BAND_SHINGLES: u32 = 24;

/// The most entries a query reads from one band (the rest of a crowded band is not read:
/// texts whose first minima agree by the thousand are boilerplate, not copies).
pub const MAX_BAND_CANDIDATES: usize = 64;

/// The distance at which a pair found by a band alone is verified when its fingerprints
/// are farther apart (the rising Chinese threshold stops rising there).
pub const BAND_DISTANCE_CAP: u32 = 24;

/// Band `i`'s bytes as a number, when `sketch` is indexed by bands and has that band
/// (`i` below [`SKETCH_BANDS`]). The largest value is
/// folded into the one below it, so that a band is never [`NO_BAND`].
pub fn band(sketch: &Sketch, i: u32) -> Option<u32> {
    if sketch.shingles() < MIN_BAND_SHINGLES || i >= SKETCH_BANDS {
        return None;
    }
    let at = i as usize * BAND_BYTES;
    let bytes = &sketch.0[at..at + BAND_BYTES];
    let value = bytes.iter().fold(0u32, |v, &b| v << 8 | u32::from(b));
    Some(value.min(NO_BAND - 1))
}

/// A document's bands, `NO_BAND` where it has none: what its band tables' keys are made of
/// ([`key`]), in 16 bytes.
pub type Bands = [u32; MAX_BANDS as usize];

/// The value of a band a document does not have ([`band`] never gives it).
pub const NO_BAND: u32 = u32::MAX;

/// The bands of a document with sketch `sketch` (none without one).
pub fn of(sketch: Option<&Sketch>) -> Bands {
    let mut out = [NO_BAND; MAX_BANDS as usize];
    if let Some(s) = sketch {
        for (i, b) in out.iter_mut().enumerate() {
            *b = band(s, i as u32).unwrap_or(NO_BAND);
        }
    }
    out
}

/// The key of a document with fingerprint `fp` and bands `bands` in band table `i`: the
/// band on top, then the fingerprint's top bits (`None`: not indexed).
pub fn key(i: u32, bands: &Bands, fp: u64) -> Option<u64> {
    let b = *bands.get(i as usize)?;
    (b != NO_BAND).then(|| key_of(b, fp))
}

/// The key of band value `band` of a document with fingerprint `fp` (see [`key`]).
pub fn key_of(band: u32, fp: u64) -> u64 {
    u64::from(band) << (64 - BAND_BITS) | fp >> BAND_BITS
}

/// The keys `lo..hi` of band `b` in a band table (`hi = None`: to the end).
pub fn span(b: u32) -> (u64, Option<u64>) {
    let shift = 64 - BAND_BITS;
    let hi = u64::from(b) + 1;
    (
        u64::from(b) << shift,
        (hi < 1 << BAND_BITS).then(|| hi << shift),
    )
}

/// Whether two sketches agree on one of their first `bands` bands (both indexed).
pub fn share(a: &Sketch, b: &Sketch, bands: u32) -> bool {
    (0..bands).any(|i| matches!((band(a, i), band(b, i)), (Some(x), Some(y)) if x == y))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sketch(bytes: &[u8], shingles: u8) -> Sketch {
        let mut s = Sketch::uniform(0);
        s.0[..bytes.len()].copy_from_slice(bytes);
        s.0[63] = shingles;
        s
    }

    #[test]
    fn keys_put_the_band_on_top_and_fall_in_its_span() {
        let s = sketch(&[0xAB, 0xCD, 0xEF, 0x12, 1, 2, 3, 4], 63);
        assert_eq!(band(&s, 0), Some(0xABCD_EF12));
        assert_eq!(band(&s, 1), Some(0x0102_0304));
        let fp = 0x1234_5678_9ABC_DEF0;
        let k = key(0, &of(Some(&s)), fp).unwrap();
        assert_eq!(k, 0xABCD_EF12 << 32 | fp >> 32);
        let (lo, hi) = span(0xABCD_EF12);
        assert!(lo <= k && k < hi.unwrap());
        // The largest band value is folded below it, whose span ends the table's keys.
        let last = u64::from(NO_BAND - 1);
        assert_eq!(span(NO_BAND - 1), (last << 32, Some((last + 1) << 32)));
        let top = sketch(&[0xFF; 4], 63);
        assert_eq!(band(&top, 0), Some(NO_BAND - 1));
    }

    #[test]
    fn short_texts_are_not_indexed_and_share_nothing() {
        let (a, b) = (
            sketch(&[1, 2, 3], 63),
            sketch(&[1, 2, 3], MIN_BAND_SHINGLES as u8 - 1),
        );
        assert!(share(&a, &a, 1));
        assert!(!share(&a, &b, 2));
        assert_eq!(key(0, &of(Some(&b)), 7), None);
        assert_eq!(key(1, &of(None), 7), None);
        // The Han flag is not a shingle count.
        let mut han = a;
        han.0[63] |= crate::types::sketch::HAN_CHARS_FLAG;
        assert!(share(&a, &han, 1));
    }

    #[test]
    fn only_the_first_bands_are_compared() {
        let a = sketch(&[1, 2, 3, 4, 5, 6, 7, 8], 63);
        let b = sketch(&[9, 9, 9, 9, 5, 6, 7, 8], 63);
        assert!(!share(&a, &b, 1));
        assert!(share(&a, &b, 2));
    }

    #[test]
    fn every_band_of_the_sketch_is_there_to_compare_and_none_past_it() {
        assert_eq!(SKETCH_BANDS, 15);
        let mut a = Sketch::uniform(1);
        let mut b = Sketch::uniform(2);
        let last = (SKETCH_BANDS as usize - 1) * BAND_BYTES;
        a.0[last..last + BAND_BYTES].copy_from_slice(&[7; BAND_BYTES]);
        b.0[last..last + BAND_BYTES].copy_from_slice(&[7; BAND_BYTES]);
        assert_eq!(band(&a, SKETCH_BANDS - 1), Some(0x0707_0707));
        assert_eq!(
            band(&a, SKETCH_BANDS),
            None,
            "the shingle count is not a minimum"
        );
        assert!(!share(&a, &b, SKETCH_BANDS - 1));
        assert!(share(&a, &b, SKETCH_BANDS));
    }
}
