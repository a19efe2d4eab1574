//! The measures `eval` counts with: confidence intervals of small counts, the character
//! 3-gram sets that tell related texts from unrelated ones, and the pairs of sketches that
//! share a band.

use crate::types::Sketch;

/// The 95 % Wilson score interval of a rate of `x` in `n` (`(0, 1)` when `n` is 0): how far
/// a false-match rate measured on a sample may be from the true one when counts are small.
pub fn wilson_interval(x: u64, n: u64) -> (f64, f64) {
    if n == 0 {
        return (0.0, 1.0);
    }
    let (x, n, z) = (x as f64, n as f64, 1.959_964);
    let centre = (x + z * z / 2.0) / (n + z * z);
    let half = z * (x * (n - x) / n + z * z / 4.0).sqrt() / (n + z * z);
    ((centre - half).max(0.0), (centre + half).min(1.0))
}

/// The set of hashed character 3-grams of a text (whitespace dropped, lowercased), sorted.
pub fn char_trigrams(title: Option<&str>, text: &str) -> Vec<u64> {
    let chars: Vec<char> = title
        .unwrap_or("")
        .chars()
        .chain(text.chars())
        .filter(|c| !c.is_whitespace())
        .flat_map(char::to_lowercase)
        .collect();
    let mut grams: Vec<u64> = chars
        .windows(3.min(chars.len()).max(1))
        .map(|w| {
            let s: String = w.iter().collect();
            xxhash_rust::xxh3::xxh3_64(s.as_bytes())
        })
        .collect();
    grams.sort_unstable();
    grams.dedup();
    grams
}

/// The pairs `(a, b)`, `a < b`, of `sketches` that share one of the first `bands` bands.
pub fn band_pairs(sketches: &[Option<&Sketch>], bands: u32) -> Vec<(u32, u32)> {
    let mut keys: Vec<(u32, u32, u32)> = Vec::new();
    for (i, s) in sketches.iter().enumerate() {
        let Some(s) = s else { continue };
        for band in 0..bands {
            if let Some(b) = crate::index::bands::band(s, band) {
                keys.push((band, b, i as u32));
            }
        }
    }
    keys.sort_unstable();
    let mut pairs = Vec::new();
    for bucket in keys.chunk_by(|x, y| (x.0, x.1) == (y.0, y.1)) {
        for (n, x) in bucket.iter().enumerate() {
            pairs.extend(bucket[n + 1..].iter().map(|y| (x.2, y.2)));
        }
    }
    pairs
}
