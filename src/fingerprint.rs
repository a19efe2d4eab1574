//! Text → 64-bit fingerprint, under one versioned [`FingerprintSpec`].
//!
//! Everything that changes a fingerprint is part of the spec, and the spec is stored in
//! the store: fingerprints made under different specs are not comparable, so a store
//! refuses to open under another spec.

use std::collections::HashMap;
use std::fmt;
use std::hash::{BuildHasherDefault, Hasher};
use std::str::FromStr;

use xxhash_rust::xxh3::xxh3_64_with_seed;

use crate::analyze;
use crate::document::Document;
use crate::error::{Error, Result};
use crate::simhash::SimHasher;

/// A 64-bit SimHash fingerprint. Displayed and parsed as exactly 16 hexadecimal digits.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Fingerprint(pub u64);

impl Fingerprint {
    /// The Hamming distance between two fingerprints (number of differing bits).
    #[inline]
    pub fn distance(self, other: Fingerprint) -> u32 {
        (self.0 ^ other.0).count_ones()
    }
}

impl fmt::Display for Fingerprint {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:016x}", self.0)
    }
}

impl FromStr for Fingerprint {
    type Err = Error;

    /// Parses exactly 16 hexadecimal digits (either case), nothing else.
    fn from_str(s: &str) -> Result<Self> {
        if s.len() != 16 || !s.bytes().all(|b| b.is_ascii_hexdigit()) {
            return Err(Error::InvalidFingerprint {
                input: s.chars().take(40).collect(),
            });
        }
        u64::from_str_radix(s, 16)
            .map(Fingerprint)
            .map_err(|_| Error::InvalidFingerprint {
                input: s.to_owned(),
            })
    }
}

/// A `Hasher` for keys that are already uniformly distributed hashes: it passes them through.
#[derive(Default)]
struct PrehashedHasher(u64);

impl Hasher for PrehashedHasher {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = self.0.rotate_left(8) ^ u64::from(b);
        }
    }

    fn write_u64(&mut self, n: u64) {
        self.0 = n;
    }
}

/// Everything that determines a document's fingerprint. Persisted in each store's
/// manifest and compared on open.
#[derive(Debug, Clone, PartialEq, Eq, bincode::Encode, bincode::Decode)]
pub struct FingerprintSpec {
    /// The spec's version number; bumped with every change below.
    pub version: u32,
    /// Text normalization.
    pub normalizer: String,
    /// Tokenizer and its dictionary.
    pub tokenizer: String,
    /// What a feature is.
    pub features: String,
    /// How features are weighted.
    pub weighting: String,
    /// Feature hash function.
    pub hash: String,
    /// Seed of the feature hash.
    pub seed: u64,
}

/// Seed of the xxh3 feature hash in spec v1 (the bytes of "SIMSTORE").
pub const SPEC_V1_SEED: u64 = 0x5349_4D53_544F_5245;

/// Weight of one occurrence of a token in the body (fixed point: 2 = 1.0).
const BODY_WEIGHT: u32 = 2;
/// Weight of one occurrence of a token in the title (fixed point: 3 = 1.5).
const TITLE_WEIGHT: u32 = 3;

impl FingerprintSpec {
    /// The spec this build computes (v1).
    pub fn current() -> Self {
        Self {
            version: 1,
            normalizer: "unicode NFKC + lowercase".into(),
            tokenizer: "jieba-rs 0.11 default dictionary, HMM on, for Han runs; alphanumeric runs elsewhere".into(),
            features: "token unigrams".into(),
            weighting: "term frequency; title occurrences weigh 1.5x body occurrences".into(),
            hash: "xxh3-64".into(),
            seed: SPEC_V1_SEED,
        }
    }
}

impl fmt::Display for FingerprintSpec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "v{} ({}; {}; {}; {}; {} seed {:#018x})",
            self.version,
            self.normalizer,
            self.tokenizer,
            self.features,
            self.weighting,
            self.hash,
            self.seed
        )
    }
}

/// Computes fingerprints under the current [`FingerprintSpec`]. Cheap to create and
/// `Send + Sync`; the jieba dictionary is shared by the whole process.
#[derive(Debug, Clone)]
pub struct Fingerprinter {
    spec: FingerprintSpec,
}

impl Default for Fingerprinter {
    fn default() -> Self {
        Self::new()
    }
}

impl Fingerprinter {
    /// A fingerprinter for [`FingerprintSpec::current`].
    pub fn new() -> Self {
        Self {
            spec: FingerprintSpec::current(),
        }
    }

    /// The spec this fingerprinter computes.
    pub fn spec(&self) -> &FingerprintSpec {
        &self.spec
    }

    /// Fingerprints a title (optional) and a body text.
    ///
    /// Errors with [`Error::EmptyDocument`] when neither has a single token.
    pub fn fingerprint(&self, title: Option<&str>, text: &str) -> Result<Fingerprint> {
        // Sum each distinct feature's weight first (term frequency), then vote once per
        // feature: the same result as voting per occurrence, with far fewer votes.
        let mut weights: HashMap<u64, u32, BuildHasherDefault<PrehashedHasher>> =
            HashMap::default();
        let mut add = |part: &str, weight: u32| {
            analyze::tokenize(&analyze::normalize(part), |token| {
                let w = weights
                    .entry(xxh3_64_with_seed(token.as_bytes(), self.spec.seed))
                    .or_default();
                *w = w.saturating_add(weight);
            })
        };
        if let Some(title) = title {
            add(title, TITLE_WEIGHT);
        }
        add(text, BODY_WEIGHT);
        if weights.is_empty() {
            return Err(Error::EmptyDocument);
        }
        let mut hasher = SimHasher::new();
        for (hash, weight) in weights {
            hasher.add(hash, weight);
        }
        Ok(Fingerprint(hasher.finish()))
    }

    /// Fingerprints a document's title and text.
    pub fn fingerprint_doc(&self, doc: &Document) -> Result<Fingerprint> {
        self.fingerprint(doc.title.as_deref(), &doc.text)
    }

    /// A 128-bit hash of the document's content as the fingerprint sees it: the token
    /// sequence of the title and of the body, in order, after normalization (and, from
    /// spec v2 on, cleaning). Two documents with equal content hashes are exact duplicates
    /// for the purposes of deduplication: they differ at most in what the fingerprint
    /// ignores (case, width, punctuation, spacing, boilerplate).
    ///
    /// Errors with [`Error::EmptyDocument`] when neither has a single token.
    pub fn content_hash(&self, title: Option<&str>, text: &str) -> Result<u128> {
        let mut hasher = xxhash_rust::xxh3::Xxh3::with_seed(self.spec.seed);
        let mut tokens = 0usize;
        let mut add = |part: &str, tag: u8| {
            hasher.update(&[tag]);
            analyze::tokenize(&analyze::normalize(part), |token| {
                tokens += 1;
                hasher.update(token.as_bytes());
                hasher.update(&[0x1f]);
            });
        };
        if let Some(title) = title {
            add(title, 1);
        }
        add(text, 2);
        if tokens == 0 {
            return Err(Error::EmptyDocument);
        }
        Ok(hasher.digest128())
    }

    /// [`Fingerprinter::content_hash`] of a document.
    pub fn content_hash_doc(&self, doc: &Document) -> Result<u128> {
        self.content_hash(doc.title.as_deref(), &doc.text)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hex_round_trip_and_strictness() {
        let fp: Fingerprint = "0123456789abcdef".parse().unwrap();
        assert_eq!(fp.0, 0x0123_4567_89ab_cdef);
        assert_eq!(fp.to_string(), "0123456789abcdef");
        assert_eq!("0123456789ABCDEF".parse::<Fingerprint>().unwrap(), fp);
        for bad in [
            "",
            "123",
            "0123456789abcdeg",
            "0x23456789abcdef",
            "+123456789abcdef",
            "0123456789abcdef0",
            "０１２３４５６７８９ａｂｃｄｅｆ",
        ] {
            assert!(
                bad.parse::<Fingerprint>().is_err(),
                "{bad:?} must not parse"
            );
        }
    }

    #[test]
    fn empty_documents_are_errors() {
        let f = Fingerprinter::new();
        assert!(matches!(f.fingerprint(None, ""), Err(Error::EmptyDocument)));
        assert!(matches!(
            f.fingerprint(Some("  "), "。，！"),
            Err(Error::EmptyDocument)
        ));
        assert!(f.fingerprint(Some("标题"), "").is_ok());
    }

    #[test]
    fn title_counts_more_than_body() {
        let f = Fingerprinter::new();
        let a = f.fingerprint(Some("alpha"), "beta").unwrap();
        let b = f.fingerprint(Some("beta"), "alpha").unwrap();
        let alpha = f.fingerprint(None, "alpha").unwrap();
        let beta = f.fingerprint(None, "beta").unwrap();
        assert_eq!(a, alpha, "the 1.5x title outvotes the body");
        assert_eq!(b, beta);
    }
}
