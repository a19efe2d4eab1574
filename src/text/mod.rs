//! Text to fingerprint, stage by stage, all under one versioned spec:
//!
//! - [`analyze`]: normalize and tokenize;
//! - `ascii` (internal): ASCII character classes, 64 bytes at a time;
//! - [`clean`]: weigh lines and drop boilerplate;
//! - [`stop_words`]: the function words that carry no topic;
//! - [`tokens`]: the tokens of a document that count, with their hashes and weights;
//! - [`idf`]: the inverse document frequencies that weigh the tokens;
//! - [`weight`]: feature weights and the features' SimHash votes;
//! - [`simhash`]: SimHash the weighted features;
//! - [`sketch`]: the shingle sketch that verifies near duplicates;
//! - [`spec`]: the [`spec::FingerprintSpec`] that names all of the above, and its constants;
//! - [`fingerprint`]: a document's fingerprint, content hash and sketch, in one pass.
//! - [`explain`]: what drove one fingerprint (kept lines, features, votes), in the open.

pub mod analyze;
pub(crate) mod ascii;
pub mod clean;
pub mod explain;
pub mod fingerprint;
pub mod idf;
pub mod shingles;
pub mod simhash;
pub mod sketch;
pub mod spec;
pub mod stop_words;
pub mod tokens;
pub mod weight;

/// Random inputs for the text modules' tests.
#[cfg(test)]
pub(crate) mod test_input {
    /// A xorshift64 stream from `seed` (not 0).
    pub(crate) fn xorshift(mut x: u64) -> impl FnMut() -> u64 {
        move || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        }
    }

    /// `rounds` texts of 0..300 bytes (and up to one piece more) made of `pieces` drawn at
    /// random from `seed`: every other one of ASCII pieces only, so that whole 64-byte
    /// chunks are ASCII as well as mixed.
    pub(crate) fn texts(pieces: &[&str], seed: u64, rounds: usize) -> Vec<String> {
        let mut next = xorshift(seed);
        (0..rounds)
            .map(|round| {
                let target = (next() % 300) as usize;
                let mut text = String::new();
                while text.len() < target {
                    let piece = pieces[(next() % pieces.len() as u64) as usize];
                    if round % 2 == 1 || piece.is_ascii() {
                        text.push_str(piece);
                    }
                }
                text
            })
            .collect()
    }
}
