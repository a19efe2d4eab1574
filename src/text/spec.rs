//! The [`FingerprintSpec`]: everything that determines a fingerprint, by name, and the
//! constants of the weighting it names.
//!
//! Fingerprints made under different specs are not comparable: the spec is stored in each
//! store's manifest, and a store refuses to open under another spec. A change to any
//! constant here (or to the IDF tables of [`crate::text::idf`]) is a new spec version.

use std::fmt;

/// Everything that determines a document's fingerprint. Persisted in each store's
/// manifest and compared on open.
#[derive(Debug, Clone, PartialEq, Eq)]
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

/// Seed of the xxh3 feature hash (the bytes of "SIMSTORE"; unchanged since spec v1).
pub const SPEC_V1_SEED: u64 = 0x5349_4D53_544F_5245;

/// Fixed-point scale of feature weights: the heaviest feature votes this much.
pub(crate) const WEIGHT_SCALE: f64 = 1_048_576.0;

/// No feature votes more than this share of all the votes (after the limit): texts that
/// share their most repeated words (one site's template, one topic's vocabulary, a hotel
/// review's "酒店") must not get one fingerprint.
pub(crate) const MAX_FEATURE_SHARE: (u64, u64) = (1, 6); // 16.7 %

/// Weight of a Han word of two or more characters relative to its characters, which count
/// too: the word and its characters are one piece of text counted twice, so three votes that
/// always move together would otherwise weigh as three independent features.
pub(crate) const HAN_WORD_WEIGHT: f32 = 0.5;

/// Weight of a title token relative to a body token of a content line.
pub(crate) const TITLE_WEIGHT: f32 = 2.0;
/// The title's total weight is at most this share of the body's (after IDF).
pub(crate) const TITLE_CAP: f32 = 0.2;

impl FingerprintSpec {
    /// The spec this build computes (v10: v9 whose line cleaning knows the function words
    /// of 29 languages besides English and keeps a line that ends as prose, so a German or
    /// Turkish article is no longer taken for chrome, and whose fingerprints give those
    /// function words no weight).
    pub fn current() -> Self {
        Self {
            version: 10,
            normalizer: "unicode NFKC + lowercase; lines weighted by simstore::clean v3 \
                         (boilerplate 0, short 0.25, content 1; v3 fallbacks; short lines outside the \
                         content span 0; two-item navigation; function-word density (English stop \
                         words and resources/function-words.txt) only without clause marks in Han \
                         lines, without a closing full stop, question or exclamation mark in others); \
                         URLs, digit runs, stop words and resources/function-words.txt dropped; site \
                         names cut from titles"
                .into(),
            tokenizer: "jieba-rs 0.11 default dictionary, HMM off, for Han runs (in pieces of at most 1,024 characters); alphanumeric runs elsewhere".into(),
            features: "token unigrams; Han words of 2+ characters weigh 0.5 and also count their \
                       characters; sketch: 63 one-byte minima of the title's and body's 3-token \
                       shingles (tokens: words, digit runs, and the characters of Han words), the \
                       number of the 63 bins they filled, and 0x80 when most shingles end in a Han \
                       character"
                .into(),
            weighting: "(body tf^3 + title tf) x idf^2 (resources/idf-zh.txt from jieba, \
                        resources/idf-en.txt from wordfreq; unknown 11.95 Han / 14.0 other); title \
                        tokens 2x, title total <= 20% of body tf x idf; votes in 2^20 fixed point of the \
                        heaviest, each at most 1/6 of all"
                .into(),
            hash: "xxh3-64; Gaussian projections (256 normal quantiles x 4096, indexed by the \
                   bytes of the splitmix64 stream of the feature hash)"
                .into(),
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
