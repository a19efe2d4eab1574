//! Text → 64-bit fingerprint, under one versioned [`FingerprintSpec`].
//!
//! Everything that changes a fingerprint is part of the spec, and the spec is stored in
//! the store: fingerprints made under different specs are not comparable, so a store
//! refuses to open under another spec.

use std::collections::HashMap;
use std::fmt;
use std::hash::{BuildHasherDefault, Hasher};
use std::sync::LazyLock;

use xxhash_rust::xxh3::xxh3_64_with_seed;

use crate::error::{Error, Result};
use crate::text::analyze;
use crate::text::clean;
use crate::text::simhash;
use crate::text::sketch::SketchBuilder;
use crate::types::Document;
use crate::types::{Fingerprint, Sketch};

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
const WEIGHT_SCALE: f64 = 1_048_576.0;

/// No feature votes more than this share of all the votes (after the limit): texts that
/// share their most repeated words (one site's template, one topic's vocabulary, a hotel
/// review's "酒店") must not get one fingerprint.
const MAX_FEATURE_SHARE: (u64, u64) = (1, 6); // 16.7 %

/// Weight of a Han word of two or more characters relative to its characters, which count
/// too: the word and its characters are one piece of text counted twice, so three votes that
/// always move together would otherwise weigh as three independent features (spec v3 let one
/// repeated word and its two characters carry 60 % of a short review's votes).
const HAN_WORD_WEIGHT: f32 = 0.5;

/// Weight of a title token relative to a body token of a content line.
const TITLE_WEIGHT: f32 = 2.0;
/// The title's total weight is at most this share of the body's (after IDF).
const TITLE_CAP: f32 = 0.2;

/// IDF of tokens not in the tables: Han words (about the median of jieba's table).
const DEFAULT_IDF_ZH: f32 = 11.95;
/// IDF of tokens not in the tables: other words (beyond the 30,000 most frequent).
const DEFAULT_IDF_EN: f32 = 14.0;

/// Token hash → IDF (0 for stop words), from `resources/idf-zh.txt` and `resources/idf-en.txt`.
/// Token hash → IDF (0 for stop words), from `resources/idf-zh.txt` and
/// `resources/idf-en.txt`: an open-addressing table of 2^17 packed slots (1 MiB, so a lookup
/// is about one cache miss). A slot holds the upper 32 bits of the token hash (with the
/// lowest bit set, so no slot is 0) and the IDF's `f32` bits; two tokens whose hashes agree
/// in those bits and in the slot index share an IDF (about one in 70,000 lookups of
/// unknown tokens; part of the spec like everything else here).
struct IdfTable {
    slots: Vec<u64>,
}

impl IdfTable {
    const BITS: u32 = 17;

    fn tag(hash: u64) -> u64 {
        ((hash >> 32) | 1) << 32
    }

    fn insert(&mut self, hash: u64, idf: f32) {
        let mask = (1usize << Self::BITS) - 1;
        let mut i = hash as usize & mask;
        loop {
            let slot = self.slots[i];
            if slot == 0 || slot >> 32 << 32 == Self::tag(hash) {
                self.slots[i] = Self::tag(hash) | u64::from(idf.to_bits());
                return;
            }
            i = (i + 1) & mask;
        }
    }

    #[inline]
    fn get(&self, hash: u64) -> Option<f32> {
        let mask = (1usize << Self::BITS) - 1;
        let mut i = hash as usize & mask;
        loop {
            let slot = self.slots[i];
            if slot == 0 {
                return None;
            }
            if slot >> 32 << 32 == Self::tag(hash) {
                return Some(f32::from_bits(slot as u32));
            }
            i = (i + 1) & mask;
        }
    }
}

static IDF: LazyLock<IdfTable> = LazyLock::new(|| {
    let mut table = IdfTable {
        slots: vec![0; 1 << IdfTable::BITS],
    };
    for file in [
        include_str!("../../resources/idf-zh.txt"),
        include_str!("../../resources/idf-en.txt"),
    ] {
        for line in file.lines().filter(|l| !l.starts_with('#')) {
            if let Some((word, idf)) = line.split_once('\t')
                && let Ok(idf) = idf.parse::<f32>()
            {
                table.insert(xxh3_64_with_seed(word.as_bytes(), SPEC_V1_SEED), idf);
            }
        }
    }
    for word in clean::STOP_WORDS {
        table.insert(xxh3_64_with_seed(word.as_bytes(), SPEC_V1_SEED), 0.0);
    }
    table
});

/// The IDF of every character of [`analyze::CJK_UNIFIED`] as a token of its own, by
/// [`analyze::cjk_unified_index`].
static HAN_IDF: LazyLock<Vec<f32>> = LazyLock::new(|| {
    analyze::CJK_UNIFIED
        .map(|c| {
            let mut buf = [0u8; 4];
            let s: &str = c.encode_utf8(&mut buf);
            IDF.get(xxh3_64_with_seed(s.as_bytes(), SPEC_V1_SEED))
                .unwrap_or(DEFAULT_IDF_ZH)
        })
        .collect()
});

/// The largest `limit` such that, with every vote cut to at most `limit`, no vote exceeds the
/// share `num/den` of the total — found exactly on the votes sorted heaviest first: with the
/// top `m` votes cut to `L`, `L = share × (rest + m·L)`, so `L = num·rest / (den − num·m)`,
/// valid when the next vote is at most `L`. `u32::MAX` when no vote needs cutting, or when
/// there are too few votes for the share to be met (five votes cannot each be under 1/6).
fn share_limit(votes: &[(u64, u32)], (num, den): (u64, u64)) -> u32 {
    let mut rest: u128 = votes.iter().map(|v| u128::from(v.1)).sum();
    let (num, den) = (u128::from(num), u128::from(den));
    let max = votes.iter().map(|v| v.1).max().unwrap_or(0);
    if u128::from(max) * den <= num * rest {
        return u32::MAX;
    }
    // Only the heaviest votes can be cut: fewer than den/num of them (5 for 1/6), so the
    // heaviest den/num + 1 suffice.
    let top = (den / num) as usize + 1;
    let mut sorted: Vec<u32> = Vec::with_capacity(top + 1);
    for v in votes {
        if sorted.len() < top || v.1 > sorted[top - 1] {
            let at = sorted.partition_point(|&x| x >= v.1);
            sorted.insert(at, v.1);
            sorted.truncate(top);
        }
    }
    for (m, &vote) in sorted.iter().enumerate() {
        // Votes 0..m are cut to L; votes m.. are as they are.
        if den <= num * m as u128 {
            break;
        }
        // (At m = 0 this limit is below the heaviest vote: "no cut" is the early return.)
        let limit = num * rest / (den - num * m as u128);
        if u128::from(vote) <= limit {
            return u32::try_from(limit).unwrap_or(u32::MAX);
        }
        rest -= u128::from(vote);
    }
    u32::MAX
}

/// A body term frequency's weight, tf^3: the words a text repeats (its topic) weigh most;
/// words it uses once (where edits land) move it less. Computed by multiplication, so it is
/// the same on every platform.
#[inline]
fn body_tf_weight(tf: f32) -> f64 {
    let tf = f64::from(tf);
    tf * tf * tf
}

/// A vote in fixed point: `x` (at least 0, at most [`WEIGHT_SCALE`]) rounded to the nearest
/// integer, halves up, and at least 1. The same as `x.round().max(1.0) as u32` for every such
/// `x` (the sum `x + 0.5` can round up to an integer only below 0.5, where the result is 1
/// either way), without a call to the C library's `round`.
#[inline]
fn fixed_point(x: f64) -> u32 {
    ((x + 0.5) as u32).max(1)
}

/// What [`Fingerprinter::analyze`] computes of a document in one pass.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Analysis {
    /// The fingerprint ([`Fingerprinter::fingerprint`]).
    pub fingerprint: Fingerprint,
    /// The content hash ([`Fingerprinter::content_hash`]).
    pub content_hash: u128,
    /// The shingle sketch ([`Fingerprinter::sketch`]); `None` when the body has no token.
    pub sketch: Option<Sketch>,
}

/// Feature hash → the feature's index in [`Tally::features`].
type FeatureIndex = HashMap<u64, u32, BuildHasherDefault<PrehashedHasher>>;

/// A thread's working memory for [`Fingerprinter::analyze`], kept from document to
/// document (up to [`MAX_KEPT_FEATURES`]) so that it stays allocated and in cache.
#[derive(Default)]
struct Scratch {
    /// The features and their sums.
    tally: Tally,
    /// Bytes for the content hash not yet hashed (at most [`CONTENT_CHUNK`] and a token).
    content: Vec<u8>,
}

/// Occurrences are summed once this many are waiting (see [`Tally`]).
const OCCURRENCE_CHUNK: usize = 4096;
/// The content hash takes its bytes in pieces of about this size.
const CONTENT_CHUNK: usize = 64 << 10;

/// A document's distinct features and their weighted sums.
///
/// Tokens are recorded first (their feature and weight, in order) and summed in chunks of
/// [`OCCURRENCE_CHUNK`]: the IDFs of the chunk's new features are looked up together, so
/// the misses of the 1 MiB IDF table overlap instead of each stalling the tokenizer, and
/// the sums are then taken in token order, exactly as a lookup per token would take them.
/// Memory stays proportional to the distinct features, however long the document.
#[derive(Default)]
struct Tally {
    /// Feature hash → index into `features`.
    index: FeatureIndex,
    /// The document's distinct features, in order of first occurrence.
    features: Vec<Feature>,
    /// Features before this index have their IDF.
    resolved: usize,
    /// Tokens not yet summed, in order: feature index, weight, whether it is the title's.
    pending: Vec<(u32, f32, bool)>,
    /// Tokens seen.
    tokens: usize,
    /// Σ weight × IDF of the title's tokens.
    title_total: f32,
    /// Σ weight × IDF of the body's tokens.
    body_total: f32,
}

impl Tally {
    fn clear(&mut self, reserve: usize) {
        self.index.clear();
        self.index.reserve(reserve.min(MAX_KEPT_FEATURES));
        self.features.clear();
        self.resolved = 0;
        self.pending.clear();
        self.tokens = 0;
        self.title_total = 0.0;
        self.body_total = 0.0;
    }

    /// The index of the feature with `hash`, added with `source` and `idf` if it is new.
    #[inline]
    fn intern(&mut self, hash: u64, source: impl FnOnce() -> IdfSource, idf: f32) -> u32 {
        let features = &mut self.features;
        *self.index.entry(hash).or_insert_with(|| {
            features.push(Feature {
                hash,
                source: source(),
                body: 0.0,
                title: 0.0,
                idf,
            });
            (features.len() - 1) as u32
        })
    }

    #[inline]
    fn add(&mut self, token: &str, hash: u64, weight: f32, in_title: bool) {
        let i = self.intern(hash, || IdfSource::of(token), 0.0);
        self.tokens += 1;
        self.pending.push((i, weight, in_title));
        if self.pending.len() >= OCCURRENCE_CHUNK {
            self.sum();
        }
    }

    /// Looks up the IDFs of the new features, then adds the pending tokens to their
    /// features' sums and to the totals, in order; stop words (IDF 0) count nowhere.
    fn sum(&mut self) {
        for f in &mut self.features[self.resolved..] {
            f.idf = f.source.idf(f.hash);
        }
        self.resolved = self.features.len();
        for &(i, weight, in_title) in &self.pending {
            let f = &mut self.features[i as usize];
            let idf = f.idf;
            if idf == 0.0 {
                continue;
            }
            if in_title {
                f.title += weight;
                self.title_total += weight * idf;
            } else {
                f.body += weight;
                self.body_total += weight * idf;
            }
        }
        self.pending.clear();
    }
}

thread_local! {
    /// Each thread's [`Scratch`].
    static SCRATCH: std::cell::Cell<Scratch> = std::cell::Cell::new(Scratch::default());
}

/// A thread keeps its scratch for the next document up to this many features (about
/// 3 MiB); the scratch of a larger document is freed.
const MAX_KEPT_FEATURES: usize = 1 << 16;

/// Where a feature's IDF comes from, decided from its token when it is first seen.
#[derive(Debug, Clone, Copy)]
enum IdfSource {
    /// One CJK Unified Ideograph: [`HAN_IDF`] at this index.
    HanChar(u32),
    /// The hash table; unknown tokens get [`DEFAULT_IDF_ZH`].
    Han,
    /// The hash table; unknown tokens get [`DEFAULT_IDF_EN`].
    Other,
}

impl IdfSource {
    fn of(token: &str) -> Self {
        let mut chars = token.chars();
        match (chars.next(), chars.next()) {
            (Some(c), None) if analyze::cjk_unified_index(c).is_some() => {
                Self::HanChar(c as u32 - *analyze::CJK_UNIFIED.start() as u32)
            }
            (Some(c), _) if analyze::is_han(c) => Self::Han,
            _ => Self::Other,
        }
    }

    /// The IDF of the feature with this source and hash (0 for stop words).
    fn idf(self, hash: u64) -> f32 {
        match self {
            // From a dense copy of the table (84 KiB, cache-resident) rather than the
            // 1 MiB hash table; the values are the same.
            Self::HanChar(i) => HAN_IDF[i as usize],
            Self::Han => IDF.get(hash).unwrap_or(DEFAULT_IDF_ZH),
            Self::Other => IDF.get(hash).unwrap_or(DEFAULT_IDF_EN),
        }
    }
}

/// One feature: its hash, weighted term frequencies and IDF.
#[derive(Debug, Clone, Copy)]
struct Feature {
    hash: u64,
    source: IdfSource,
    body: f32,
    title: f32,
    idf: f32,
}

impl FingerprintSpec {
    /// The spec this build computes (v6).
    pub fn current() -> Self {
        Self {
            version: 6,
            normalizer: "unicode NFKC + lowercase; lines weighted by simstore::clean v3 \
                         (boilerplate 0, short 0.25, content 1; v3 fallbacks; short lines outside the \
                         content span 0; two-item navigation; function-word density only without clause \
                         marks); URLs, digit runs and stop words dropped; site names cut from titles"
                .into(),
            tokenizer: "jieba-rs 0.11 default dictionary, HMM off, for Han runs; alphanumeric runs elsewhere".into(),
            features: "token unigrams; Han words of 2+ characters weigh 0.5 and also count their characters".into(),
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

/// Computes fingerprints under the current [`FingerprintSpec`]. Cheap to create and
/// `Send + Sync`; the jieba dictionary and the IDF tables are shared by the whole process.
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

    /// Calls `emit(token, token_hash, weight, is_han_char)` for every token that counts: the title's,
    /// then the body's, line by line. `weight` is [`TITLE_WEIGHT`] or the line's weight.
    /// With `han_chars`, each Han word of two or more characters is followed by its characters
    /// as tokens of their own.
    fn tokens(
        &self,
        title: Option<&str>,
        text: &str,
        han_chars: bool,
        mut emit: impl FnMut(&str, u64, f32, bool),
    ) {
        let seed = self.spec.seed;
        let mut part = |line: &str, weight: f32| {
            let line = clean::strip_urls(line);
            analyze::tokenize(&line, |token| {
                if token.bytes().all(|b| b.is_ascii_digit()) {
                    return;
                }
                // A Han word of two or more characters weighs HAN_WORD_WEIGHT and also counts
                // its characters (a one-character word is its character already).
                let han_word = token.starts_with(analyze::is_han) && token.chars().nth(1).is_some();
                emit(
                    token,
                    xxh3_64_with_seed(token.as_bytes(), seed),
                    if han_word {
                        weight * HAN_WORD_WEIGHT
                    } else {
                        weight
                    },
                    false,
                );
                if han_chars && han_word {
                    for (i, c) in token.char_indices() {
                        let ch = &token[i..i + c.len_utf8()];
                        emit(ch, xxh3_64_with_seed(ch.as_bytes(), seed), weight, true);
                    }
                }
            });
        };
        if let Some(title) = title {
            part(&clean::title(&analyze::normalize(title)), TITLE_WEIGHT);
        }
        let text = analyze::normalize(text);
        for (line, weight) in clean::weighted_lines(&text) {
            if weight > 0.0 {
                part(line, weight);
            }
        }
    }

    /// Fingerprints a title (optional) and a body text.
    ///
    /// Errors with [`Error::EmptyDocument`] when neither has a single token.
    pub fn fingerprint(&self, title: Option<&str>, text: &str) -> Result<Fingerprint> {
        self.analyze_with(title, text, false).map(|a| a.fingerprint)
    }

    /// Fingerprint, content hash and sketch of a title and text in one pass over the tokens
    /// (what [`Fingerprinter::fingerprint`], [`Fingerprinter::content_hash`] and
    /// [`Fingerprinter::sketch`] give one by one).
    ///
    /// Errors with [`Error::EmptyDocument`] when neither has a single token.
    pub fn analyze(&self, title: Option<&str>, text: &str) -> Result<Analysis> {
        self.analyze_with(title, text, true)
    }

    fn analyze_with(&self, title: Option<&str>, text: &str, extra: bool) -> Result<Analysis> {
        let mut scratch = SCRATCH.take();
        let result = self.analyze_in(&mut scratch, title, text, extra);
        if scratch.tally.features.capacity() <= MAX_KEPT_FEATURES {
            SCRATCH.set(scratch);
        }
        result
    }

    fn analyze_in(
        &self,
        scratch: &mut Scratch,
        title: Option<&str>,
        text: &str,
        extra: bool,
    ) -> Result<Analysis> {
        let Scratch { tally, content } = scratch;
        tally.clear(text.len() / 4);
        content.clear();
        let mut content_hasher: Option<xxhash_rust::xxh3::Xxh3> = None;
        // The content hash's part tags, as in `content_hash`: 1 before the title's tokens,
        // 2 before the body's.
        content.push(1);
        let mut body_tagged = false;
        let mut sketch = SketchBuilder::new();
        let mut add = |token: &str, hash: u64, weight: f32, in_title: bool, is_char: bool| {
            if extra && !is_char {
                if !in_title && !body_tagged {
                    content.push(2);
                    body_tagged = true;
                }
                content.extend_from_slice(token.as_bytes());
                content.push(0x1f);
                if content.len() >= CONTENT_CHUNK {
                    content_hasher
                        .get_or_insert_with(|| xxhash_rust::xxh3::Xxh3::with_seed(self.spec.seed))
                        .update(content);
                    content.clear();
                }
                if !in_title {
                    sketch.push(token);
                }
            }
            tally.add(token, hash, weight, in_title);
        };
        if let Some(title) = title {
            self.tokens(Some(title), "", true, |t, h, w, c| add(t, h, w, true, c));
        }
        self.tokens(None, text, true, |t, h, w, c| add(t, h, w, false, c));
        if tally.tokens == 0 {
            return Err(Error::EmptyDocument);
        }
        tally.sum();
        let (title_total, body_total) = (tally.title_total, tally.body_total);
        tally.features.retain(|f| f.idf > 0.0);
        if tally.features.is_empty() {
            // Only stop words: fingerprint them rather than nothing, each at IDF 1.
            tally.index.clear();
            for (part_title, part_text) in [(title, ""), (None, text)] {
                self.tokens(part_title, part_text, true, |_, hash, weight, _| {
                    let i = tally.intern(hash, || IdfSource::Other, 1.0);
                    tally.features[i as usize].body += weight;
                });
            }
        }
        let features = &tally.features;
        // The title counts more per token, but never more than a share of the body: a
        // changed or site-suffixed title must not outvote a short text.
        let cap = TITLE_CAP * body_total;
        let title_scale = if body_total > 0.0 && title_total > cap {
            cap / title_total
        } else {
            1.0
        };
        // Body term frequencies are cubed (`body_tf_weight`); the title adds
        // its (capped) weight after the power, so it separates otherwise equal texts but never
        // outvotes a word the body repeats. The IDF is squared (spec v6): with Gaussian
        // projections (`simhash`) the rare words a text repeats can carry more of it without
        // putting unrelated texts that share common words together.
        let weight = |f: &Feature| {
            let idf = f64::from(f.idf);
            (body_tf_weight(f.body) + f64::from(f.title * title_scale)) * idf * idf
        };
        let max = features.iter().map(weight).fold(0.0f64, f64::max);
        // Fixed point relative to the heaviest feature (order-independent), then the share
        // limit on exact integer sums. Votes are at most WEIGHT_SCALE (2^20).
        let mut votes: Vec<(u64, u32)> = features
            .iter()
            .map(|f| (f.hash, fixed_point(weight(f) / max * WEIGHT_SCALE)))
            .collect();
        let limit = share_limit(&votes, MAX_FEATURE_SHARE);
        if limit < u32::MAX {
            for v in &mut votes {
                v.1 = v.1.min(limit);
            }
        }
        let fingerprint = simhash::simhash(&votes);
        if !body_tagged {
            content.push(2);
        }
        // Streaming and one-shot xxh3 agree: pieces hashed on the way, or all at once.
        let content_hash = match content_hasher {
            Some(mut hasher) => {
                hasher.update(content);
                hasher.digest128()
            }
            None => xxhash_rust::xxh3::xxh3_128_with_seed(content, self.spec.seed),
        };
        Ok(Analysis {
            fingerprint: Fingerprint(fingerprint),
            content_hash,
            sketch: if extra { sketch.finish() } else { None },
        })
    }

    /// Fingerprints a document's title and text.
    pub fn fingerprint_doc(&self, doc: &Document) -> Result<Fingerprint> {
        self.fingerprint(doc.title.as_deref(), &doc.text)
    }

    /// A 128-bit hash of the document's content as the fingerprint sees it: the tokens of
    /// the title and of the body lines that weigh more than 0 (neither boilerplate nor a
    /// short header or footer line, see [`clean`]), in order, after normalization and
    /// cleaning. Two documents with equal content hashes are exact duplicates for the
    /// purposes of deduplication: they differ at most in what the fingerprint ignores
    /// (case, width, punctuation, spacing, URLs, digit runs, boilerplate, header and footer
    /// lines).
    ///
    /// Errors with [`Error::EmptyDocument`] when neither has a single token.
    pub fn content_hash(&self, title: Option<&str>, text: &str) -> Result<u128> {
        let mut hasher = xxhash_rust::xxh3::Xxh3::with_seed(self.spec.seed);
        let mut tokens = 0usize;
        for (tag, title, text) in [(1u8, title, ""), (2, None, text)] {
            hasher.update(&[tag]);
            self.tokens(title, text, false, |token, _, _, _| {
                tokens += 1;
                hasher.update(token.as_bytes());
                hasher.update(&[0x1f]);
            });
        }
        if tokens == 0 {
            return Err(Error::EmptyDocument);
        }
        Ok(hasher.digest128())
    }

    /// A [`Sketch`] of the cleaned text's 3-token shingles (title excluded), for verifying
    /// SimHash candidates found with a larger k. `None` when the text has no token.
    pub fn sketch(&self, text: &str) -> Option<Sketch> {
        let mut b = SketchBuilder::new();
        self.tokens(None, text, false, |token, _, _, _| b.push(token));
        b.finish()
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
    fn analyze_is_the_three_in_one_pass() {
        let f = Fingerprinter::new();
        for (title, text) in [
            (
                Some("北京天气 - 某某网"),
                "首页 | 新闻 | 体育 | 娱乐\n今天北京的天气很好，我们去公园散步。\n版权所有 © 2026",
            ),
            (
                None,
                "The council approved the budget. It was the first of many votes.",
            ),
            (Some("Only a title"), ""),
            (None, "的 了 the of"),
            (Some("ab"), "c"),
            (Some("a"), "bc"),
        ] {
            let a = f.analyze(title, text).unwrap();
            assert_eq!(a.fingerprint, f.fingerprint(title, text).unwrap());
            assert_eq!(
                a.content_hash,
                f.content_hash(title, text).unwrap(),
                "{title:?} {text}"
            );
            assert_eq!(a.sketch, f.sketch(text));
        }
        assert_ne!(
            f.analyze(Some("ab"), "c").unwrap().content_hash,
            f.analyze(Some("a"), "bc").unwrap().content_hash
        );
        assert!(matches!(f.analyze(None, "。！"), Err(Error::EmptyDocument)));
    }

    #[test]
    fn long_documents_give_what_a_lookup_per_token_gave() {
        // 591 KB: tokens are summed in many chunks of OCCURRENCE_CHUNK and the content is
        // hashed in pieces of CONTENT_CHUNK. The expected values were computed by the
        // implementation that looked each token's IDF up as it came and streamed every
        // token into the content hasher (commit b27a33a).
        let words = [
            "budget",
            "council",
            "river",
            "museum",
            "harbour",
            "vaccine",
            "orchestra",
            "glacier",
            "tariff",
            "satellite",
            "library",
            "festival",
            "railway",
        ];
        let zh = [
            "今天北京的天气很好，我们去公园散步。",
            "市议会批准了新的预算方案。",
            "博物馆将在下个月举办特别展览。",
            "铁路公司宣布增加夜间列车班次。",
        ];
        let mut text = String::new();
        for i in 0..6000usize {
            text.push_str(zh[i * 7 % zh.len()]);
            text.push_str(&format!(
                " The {} approved item {} of the {} plan.\n",
                words[i * 5 % words.len()],
                i,
                words[i * 11 % words.len()]
            ));
        }
        assert_eq!(text.len(), 591_388);
        let f = Fingerprinter::new();
        let title = Some("长文档 Long document");
        let a = f.analyze(title, &text).unwrap();
        assert_eq!(a.fingerprint.to_string(), "a5e02ab33f6d2ab4");
        assert_eq!(a.content_hash, 0x05ba7bbd5fb9a9d03a75d867d0c3d104);
        assert_eq!(a.content_hash, f.content_hash(title, &text).unwrap());
        assert_eq!(a.fingerprint, f.fingerprint(title, &text).unwrap());
        assert_eq!(a.sketch, f.sketch(&text));
        assert_eq!(
            xxhash_rust::xxh3::xxh3_64(&a.sketch.unwrap().0),
            16_128_234_652_349_374_151
        );
    }

    #[test]
    fn header_and_footer_lines_are_not_content() {
        // Short lines outside the content lines weigh 0 (spec v5): neither the fingerprint
        // nor the content hash (exact duplicates) sees them.
        let f = Fingerprinter::new();
        let body = "今天北京的天气很好，我们去公园散步，看到很多人在跑步和放风筝。";
        let page = format!("热门推荐\n{body}\n编辑推荐 猜你喜欢");
        assert_eq!(
            f.analyze(None, body).unwrap(),
            f.analyze(None, &page).unwrap()
        );
        // Between content lines they still count.
        let inside = format!("{body}\n热门推荐\n{body}");
        assert_ne!(
            f.content_hash(None, &format!("{body}\n{body}")).unwrap(),
            f.content_hash(None, &inside).unwrap()
        );
    }

    #[test]
    fn share_limit_is_the_exact_fixed_point() {
        let limit_of = |votes: &[u32]| {
            let votes: Vec<(u64, u32)> = votes.iter().map(|&v| (0, v)).collect();
            share_limit(&votes, MAX_FEATURE_SHARE)
        };
        // Nothing to cut.
        assert_eq!(limit_of(&[3, 3, 3, 3, 3, 3]), u32::MAX);
        // One heavy vote among many light ones: cut to 1/6 of the total after the cut.
        assert_eq!(
            limit_of(&[1000, 10, 10, 10, 10, 10, 10]),
            12,
            "12 = (60 + 12) / 6"
        );
        // Random votes: after the cut no vote is over the share, and a larger limit would
        // break it (the limit is the largest that works, up to integer rounding).
        let mut x = 0x9E37_79B9_7F4A_7C15u64;
        for _ in 0..2000 {
            let n = 6 + (x % 20) as usize;
            let votes: Vec<u32> = (0..n)
                .map(|_| {
                    x ^= x << 13;
                    x ^= x >> 7;
                    x ^= x << 17;
                    (1 + (x % 1000) * (x % 1000) * (x % 7)) as u32
                })
                .collect();
            let limit = limit_of(&votes);
            let over = |l: u32| {
                let total: u64 = votes.iter().map(|&v| u64::from(v.min(l))).sum();
                votes.iter().any(|&v| u64::from(v.min(l)) * 6 > total)
            };
            assert!(!over(limit), "{votes:?} limit {limit}");
            if limit != u32::MAX {
                assert!(
                    over(limit + 2),
                    "{votes:?} limit {limit} is not the largest"
                );
            }
        }
        // Five votes cannot all be under 1/6: left as they are.
        assert_eq!(limit_of(&[100, 1, 1, 1, 1]), u32::MAX);
    }

    #[test]
    fn repeated_words_decide_and_one_word_cannot() {
        let f = Fingerprinter::new();
        // In a text that repeats its topic, a word used once moves the fingerprint little
        // (3.2 bits on average over these six, spec v6) and much less than the topic word.
        let text = "The harbour opened a new harbour crane. Harbour workers said the crane \
                    lifts containers faster, and the harbour expects more ships and more \
                    containers next year, when the second crane arrives at the harbour.";
        let fp = f.fingerprint(None, text).unwrap();
        let moved = |edited: &str| fp.distance(f.fingerprint(None, edited).unwrap());
        let topic = moved(
            &text
                .replace("harbour", "airport")
                .replace("Harbour", "Airport"),
        );
        let once: Vec<u32> = ["workers", "faster", "year", "second", "opened", "ships"]
            .iter()
            .map(|w| moved(&text.replace(w, "officials")))
            .collect();
        assert!(topic > 10, "topic word moved it {topic}");
        assert!(once.iter().all(|&d| d < topic), "{once:?} vs {topic}");
        assert!(once.iter().sum::<u32>() <= 4 * 6, "{once:?}");
        // Two different texts that share one word repeated many times are not near
        // duplicates at k = 3: no feature votes more than 1/6 (without the limit they are
        // at distance 0).
        let a = "pct pct pct pct pct pct pct pct pct pct: wheat exports rose in the northern \
                 provinces after the rains, traders in the grain markets said on monday.";
        let b = "pct pct pct pct pct pct pct pct pct pct: copper mines cut output when the \
                 strike spread to smelters and railways across the southern highlands.";
        assert!(
            f.fingerprint(None, a)
                .unwrap()
                .distance(f.fingerprint(None, b).unwrap())
                > 3
        );
    }

    #[test]
    fn one_repeated_han_word_does_not_decide_a_short_review() {
        // Two different hotel reviews whose only repeated word is 酒店: under spec v3 (tf^4,
        // 20 % share, the word and its two characters at full weight) that word carried 60 %
        // of the votes, and such pairs landed at distance 0–3 (1,050 pairs of unrelated
        // documents in the development set).
        let f = Fingerprinter::new();
        let a = "酒店位置很好，离地铁站只有五分钟。酒店的早餐种类不多，但是味道不错。\
                 房间有点小，隔音一般，晚上能听到走廊里的声音。总体来说这家酒店性价比还可以，\
                 下次出差可能还会住这家酒店。";
        let b = "这次是陪父母旅游订的酒店，前台办理入住很慢，等了半个多小时。酒店的游泳池\
                 不错，孩子玩得很开心。可惜空调噪音太大，床垫也偏硬，老人睡得不舒服。\
                 酒店停车免费，这一点值得表扬，酒店服务员态度也热情。";
        let distance = f
            .fingerprint(None, a)
            .unwrap()
            .distance(f.fingerprint(None, b).unwrap());
        assert!(distance > 8, "distance {distance}");
    }

    #[test]
    fn title_is_capped_by_the_body() {
        let f = Fingerprinter::new();
        // Any body outweighs the title: it is capped at 20% of the body's weight, so the
        // fingerprint is the body's, moved by the title's angle (atan 0.2, 4 bits expected).
        let a = f.fingerprint(Some("alpha"), "beta").unwrap();
        let beta = f.fingerprint(None, "beta").unwrap();
        let alpha = f.fingerprint(None, "alpha").unwrap();
        assert!(a.distance(beta) <= 6, "{}", a.distance(beta));
        assert!(a.distance(alpha) >= 20, "{}", a.distance(alpha));
        // Without a body, the title is the fingerprint; its site name is cut.
        assert_eq!(
            f.fingerprint(Some("alpha beta gamma - Site"), "").unwrap(),
            f.fingerprint(None, "alpha beta gamma").unwrap()
        );
        // Titles still count: the same body under two titles differs.
        let body = "The council approved the budget for parks and libraries on Tuesday.";
        let x = f.fingerprint(Some("Budget approved"), body).unwrap();
        let y = f
            .fingerprint(Some("Weather forecast for the weekend"), body)
            .unwrap();
        assert!(x.distance(y) > 0);
    }
}
