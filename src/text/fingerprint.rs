//! Text → 64-bit fingerprint, under one versioned [`FingerprintSpec`].
//!
//! Everything that changes a fingerprint is part of the spec, and the spec is stored in
//! the store: fingerprints made under different specs are not comparable, so a store
//! refuses to open under another spec. The spec and its constants are in
//! [`crate::text::spec`], the IDF tables in [`crate::text::idf`]; this module turns a
//! document's tokens into weighted features, their votes into a SimHash, and computes the
//! content hash and the sketch in the same pass.

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};

use xxhash_rust::xxh3::{Xxh3, xxh3_128_with_seed};

use crate::error::{Error, Result};
use crate::text::idf::IdfSource;
use crate::text::simhash;
use crate::text::sketch::SketchBuilder;
use crate::text::spec::TITLE_CAP;
use crate::text::tokens::{
    BodyTokens, HanChars, TokenKind, for_each_token, for_each_token_with_digits,
};
use crate::text::weight;
use crate::types::Document;
use crate::types::{Fingerprint, QueryKey, Sketch, WeakBits};

pub use crate::text::spec::{FingerprintSpec, SPEC_V1_SEED};

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

/// The content hash's byte before the title's tokens.
const TITLE_TAG: u8 = 1;
/// The content hash's byte before the body's tokens.
const BODY_TAG: u8 = 2;
/// The content hash's byte after every token (the ASCII unit separator, which no token
/// holds), so that the tokens "ab", "c" and "a", "bc" hash differently.
const TOKEN_SEPARATOR: u8 = 0x1f;

/// Which part of a document a token is from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Part {
    /// The title.
    Title,
    /// The body text.
    Body,
}

/// What [`Fingerprinter::analyze_with`] computes besides the fingerprint.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Output {
    /// The fingerprint alone: the [`Analysis`] has no sketch and a content hash of no
    /// tokens.
    FingerprintOnly,
    /// The fingerprint, the content hash and the sketch.
    All,
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
    /// The fingerprint's least certain bits, for a quality mode's query-directed probes.
    pub weak_bits: Option<WeakBits>,
    /// When `sketch` is of a web page's whole visible text ([`Sketch::whole_text`],
    /// `crate::index::page::analyze_page`), the main text's sketch; `None` otherwise.
    pub main_sketch: Option<Sketch>,
    /// Tokens (words and digit runs) of every line of the body, URLs included.
    pub body_tokens: usize,
    /// Of those, the tokens the fingerprint, the content hash and the sketch do not see:
    /// those of the lines the cleaner left out (boilerplate, a page's header and footer),
    /// and URLs.
    pub dropped_tokens: usize,
}

impl From<&Analysis> for QueryKey {
    /// A query by a text's analysis: fingerprint, sketch and weak bits.
    fn from(a: &Analysis) -> Self {
        QueryKey {
            fp: a.fingerprint,
            sketch: a.sketch,
            weak_bits: a.weak_bits,
            main_sketch: a.main_sketch,
        }
    }
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

thread_local! {
    /// Each thread's [`Scratch`].
    static SCRATCH: std::cell::Cell<Scratch> = std::cell::Cell::new(Scratch::default());
}

/// A thread keeps its scratch for the next document up to this many features (about
/// 3 MiB); the scratch of a larger document is freed.
const MAX_KEPT_FEATURES: usize = 1 << 16;

/// A kept feature index up to 4 times this capacity (or the document's estimate) is cleared
/// for the next document rather than replaced.
const KEPT_INDEX_FLOOR: usize = 1024;
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
    /// Tokens not yet summed, in order: feature index, weight, part of the document.
    pending: Vec<(u32, f32, Part)>,
    /// Tokens seen.
    tokens: usize,
    /// Σ weight × IDF of the title's tokens.
    title_total: f32,
    /// Σ weight × IDF of the body's tokens.
    body_total: f32,
}

impl Tally {
    fn clear(&mut self, reserve: usize) {
        let reserve = reserve.min(MAX_KEPT_FEATURES);
        // Clearing a hash table writes each of its control bytes: a table kept from a much
        // larger document is replaced by one of this document's size instead.
        if self.index.capacity() > 4 * reserve.max(KEPT_INDEX_FLOOR) {
            self.index = FeatureIndex::with_capacity_and_hasher(reserve, Default::default());
        } else {
            self.index.clear();
            self.index.reserve(reserve);
        }
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

    /// Records a token of `part` with its hash and weight (summed in [`Tally::sum`]).
    #[inline]
    fn add(&mut self, token: &str, hash: u64, weight: f32, part: Part) {
        let i = self.intern(hash, || IdfSource::of(token), 0.0);
        self.tokens += 1;
        self.pending.push((i, weight, part));
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
        for &(i, weight, part) in &self.pending {
            let f = &mut self.features[i as usize];
            let idf = f.idf;
            if idf == 0.0 {
                continue;
            }
            match part {
                Part::Title => {
                    f.title += weight;
                    self.title_total += weight * idf;
                }
                Part::Body => {
                    f.body += weight;
                    self.body_total += weight * idf;
                }
            }
        }
        self.pending.clear();
    }

    /// The factor of the title's weights: the title counts more per token, but never more
    /// than [`TITLE_CAP`] of the body (after [`Tally::sum`]), so that a changed or
    /// site-suffixed title does not outvote a short text. 1 without a body.
    fn title_scale(&self) -> f32 {
        let cap = TITLE_CAP * self.body_total;
        if self.body_total > 0.0 && self.title_total > cap {
            cap / self.title_total
        } else {
            1.0
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

impl Feature {
    /// The feature's [`weight::feature_weight`], with its title term frequency times
    /// `title_scale` ([`Tally::title_scale`]).
    #[inline]
    fn weight(&self, title_scale: f32) -> f64 {
        weight::feature_weight(self.body, self.title * title_scale, self.idf)
    }
}

/// The bytes of the content hash ([`Fingerprinter::content_hash`]) as the tokens pass,
/// hashed in pieces of about [`CONTENT_CHUNK`]: [`TITLE_TAG`], the title's tokens,
/// [`BODY_TAG`], the body's tokens, each token followed by [`TOKEN_SEPARATOR`].
struct ContentStream<'a> {
    /// Bytes not yet hashed.
    buffer: &'a mut Vec<u8>,
    /// The hash of the pieces hashed so far, once there is one.
    hasher: Option<Xxh3>,
    /// The hash's seed.
    seed: u64,
    /// Whether [`BODY_TAG`] has been written.
    body_tagged: bool,
}

impl<'a> ContentStream<'a> {
    /// A stream in `buffer` (cleared), opened with [`TITLE_TAG`].
    fn new(buffer: &'a mut Vec<u8>, seed: u64) -> Self {
        buffer.clear();
        buffer.push(TITLE_TAG);
        Self {
            buffer,
            hasher: None,
            seed,
            body_tagged: false,
        }
    }

    /// Adds a token of `part` (the title's tokens come first).
    #[inline]
    fn push(&mut self, token: &str, part: Part) {
        if part == Part::Body {
            self.tag_body();
        }
        self.buffer.extend_from_slice(token.as_bytes());
        self.buffer.push(TOKEN_SEPARATOR);
        if self.buffer.len() >= CONTENT_CHUNK {
            let seed = self.seed;
            self.hasher
                .get_or_insert_with(|| Xxh3::with_seed(seed))
                .update(self.buffer);
            self.buffer.clear();
        }
    }

    /// Writes [`BODY_TAG`] unless it has been written.
    #[inline]
    fn tag_body(&mut self) {
        if !self.body_tagged {
            self.buffer.push(BODY_TAG);
            self.body_tagged = true;
        }
    }

    /// The content hash. Streaming and one-shot xxh3 agree: pieces hashed on the way and
    /// the rest, or all at once.
    fn finish(mut self) -> u128 {
        self.tag_body();
        match self.hasher {
            Some(mut hasher) => {
                hasher.update(self.buffer);
                hasher.digest128()
            }
            None => xxh3_128_with_seed(self.buffer, self.seed),
        }
    }
}

/// Computes fingerprints under the current [`FingerprintSpec`]. Cheap to create and
/// `Send + Sync`; the jieba dictionary and the IDF tables are shared by the whole process.
///
/// ```
/// use simstore::Fingerprinter;
/// let f = Fingerprinter::new();
/// let a = f.fingerprint(Some("北京天气"), "今天北京的天气很好，我们去公园散步。").unwrap();
/// let b = f.fingerprint(Some("北京天气"), "今天北京的天气很好,我们去公园散步!").unwrap();
/// assert_eq!(a, b, "half-width punctuation does not count");
/// ```
#[derive(Debug, Clone)]
pub struct Fingerprinter {
    spec: FingerprintSpec,
    /// Whether the content hash counts digit runs ([`Fingerprinter::counting_digits`]).
    digits_in_content_hash: bool,
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
            digits_in_content_hash: false,
        }
    }

    /// This fingerprinter with digit runs in the content hash ([`Self::content_hash`]), for
    /// a dataset's records: two that differ only in their numbers (a verification code, a
    /// report's figures) are no exact duplicates. A web page's hash leaves them out, so that
    /// its counters and timestamps do not make it new. Fingerprints and sketches are alike.
    ///
    /// ```
    /// use simstore::Fingerprinter;
    /// let (page, record) = (Fingerprinter::new(), Fingerprinter::new().counting_digits());
    /// let (a, b) = ("Your code is 482913", "Your code is 100277");
    /// assert_eq!(page.content_hash(None, a)?, page.content_hash(None, b)?);
    /// assert_ne!(record.content_hash(None, a)?, record.content_hash(None, b)?);
    /// assert_eq!(page.fingerprint(None, a)?, record.fingerprint(None, a)?);
    /// # Ok::<(), simstore::Error>(())
    /// ```
    #[must_use]
    pub fn counting_digits(mut self) -> Self {
        self.digits_in_content_hash = true;
        self
    }

    /// Whether a token of `kind` goes into the content hash: words, and digit runs when
    /// counting them (which alone are no content, as to the fingerprint).
    fn in_content_hash(&self, kind: TokenKind) -> bool {
        kind == TokenKind::Word || (kind == TokenKind::DigitRun && self.digits_in_content_hash)
    }

    /// The spec this fingerprinter computes.
    pub fn spec(&self) -> &FingerprintSpec {
        &self.spec
    }

    /// Fingerprints a title (optional) and a body text.
    ///
    /// Errors with [`Error::EmptyDocument`] when neither has a single token.
    pub fn fingerprint(&self, title: Option<&str>, text: &str) -> Result<Fingerprint> {
        self.analyze_with(title, text, Output::FingerprintOnly)
            .map(|a| a.fingerprint)
    }

    /// Fingerprint, content hash and sketch of a title and text in one pass over the tokens
    /// (what [`Fingerprinter::fingerprint`], [`Fingerprinter::content_hash`] and
    /// [`Fingerprinter::sketch`] give one by one).
    ///
    /// Errors with [`Error::EmptyDocument`] when neither has a single token.
    pub fn analyze(&self, title: Option<&str>, text: &str) -> Result<Analysis> {
        self.analyze_with(title, text, Output::All)
    }

    /// [`Fingerprinter::analyze_in`] in this thread's [`Scratch`], which it keeps for the
    /// next document unless it grew beyond [`MAX_KEPT_FEATURES`].
    fn analyze_with(&self, title: Option<&str>, text: &str, output: Output) -> Result<Analysis> {
        let mut scratch = SCRATCH.take();
        let result = self.analyze_in(&mut scratch, title, text, output);
        if scratch.tally.features.capacity() <= MAX_KEPT_FEATURES {
            SCRATCH.set(scratch);
        }
        result
    }

    /// Analyzes a document in `scratch`: tallies its tokens (passing its words to the
    /// content hash and the sketch on the way, for [`Output::All`]), then SimHashes the
    /// features' votes.
    fn analyze_in(
        &self,
        scratch: &mut Scratch,
        title: Option<&str>,
        text: &str,
        output: Output,
    ) -> Result<Analysis> {
        let Scratch { tally, content } = scratch;
        tally.clear(text.len() / 4);
        let mut content = ContentStream::new(content, self.spec.seed);
        let mut sketch = SketchBuilder::new();
        let body = self.tally_tokens(tally, title, text, |token, part, kind| {
            if output == Output::All {
                if self.in_content_hash(kind) {
                    content.push(token, part);
                }
                sketch.push_word(token);
            }
        });
        if tally.tokens == 0 {
            return Err(Error::EmptyDocument);
        }
        tally.sum();
        let title_scale = tally.title_scale();
        tally.features.retain(|f| f.idf > 0.0);
        if tally.features.is_empty() {
            self.tally_stop_words(tally, title, text);
        }
        let features = &tally.features;
        let votes = weight::votes(|| features.iter().map(|f| (f.hash, f.weight(title_scale))));
        let sums = simhash::projection_sums(&votes);
        Ok(Analysis {
            fingerprint: Fingerprint(simhash::signs(&sums)),
            weak_bits: match output {
                Output::All => Some(WeakBits::from_sums(&sums)),
                Output::FingerprintOnly => None,
            },
            content_hash: content.finish(),
            sketch: match output {
                Output::All => sketch.finish(),
                Output::FingerprintOnly => None,
            },
            main_sketch: None,
            body_tokens: body.all,
            dropped_tokens: body.unseen,
        })
    }

    /// Adds every token of the title and the body to `tally` (Han words followed by their
    /// characters, [`HanChars::Split`]), and passes the words and the digit runs (which the
    /// tally leaves out), not the characters, to `on_word` with the part they are from and
    /// their kind; says how much of the body the cleaner left out.
    fn tally_tokens(
        &self,
        tally: &mut Tally,
        title: Option<&str>,
        text: &str,
        mut on_word: impl FnMut(&str, Part, TokenKind),
    ) -> BodyTokens {
        let mut add = |token: &str, hash: u64, weight: f32, part: Part, kind: TokenKind| {
            match kind {
                TokenKind::Word => on_word(token, part, kind),
                TokenKind::DigitRun => return on_word(token, part, kind),
                TokenKind::HanChar => {}
            }
            tally.add(token, hash, weight, part);
        };
        if let Some(title) = title {
            for_each_token_with_digits(
                self.spec.seed,
                Some(title),
                "",
                HanChars::Split,
                |t, h, w, k| add(t, h, w, Part::Title, k),
            );
        }
        for_each_token_with_digits(self.spec.seed, None, text, HanChars::Split, |t, h, w, k| {
            add(t, h, w, Part::Body, k)
        })
    }

    /// Tallies a document made only of stop words (no feature kept an IDF) anew: every
    /// token, the title's too, adds its weight to the body sum of its feature at IDF 1, so
    /// the document is fingerprinted by its stop words rather than not at all.
    fn tally_stop_words(&self, tally: &mut Tally, title: Option<&str>, text: &str) {
        tally.index.clear();
        for (part_title, part_text) in [(title, ""), (None, text)] {
            for_each_token(
                self.spec.seed,
                part_title,
                part_text,
                HanChars::Split,
                |_, hash, weight, _| {
                    let i = tally.intern(hash, || IdfSource::Other, 1.0);
                    tally.features[i as usize].body += weight;
                },
            );
        }
    }

    /// Fingerprints a document's title and text.
    pub fn fingerprint_doc(&self, doc: &Document) -> Result<Fingerprint> {
        self.fingerprint(doc.title.as_deref(), &doc.text)
    }

    /// A 128-bit hash of the document's content as the fingerprint sees it: the tokens of
    /// the title and of the body lines that weigh more than 0 (neither boilerplate nor a
    /// short header or footer line, see `crate::text::clean`), in order, after
    /// normalization and cleaning. Two documents with equal content hashes are exact
    /// duplicates for the purposes of deduplication: they differ at most in what the
    /// fingerprint ignores (case, width, punctuation, spacing, URLs, digit runs, boilerplate,
    /// header and footer lines).
    ///
    /// Errors with [`Error::EmptyDocument`] when neither has a single token.
    pub fn content_hash(&self, title: Option<&str>, text: &str) -> Result<u128> {
        let mut hasher = Xxh3::with_seed(self.spec.seed);
        let mut tokens = 0usize;
        for (tag, title, text) in [(TITLE_TAG, title, ""), (BODY_TAG, None, text)] {
            hasher.update(&[tag]);
            let seed = self.spec.seed;
            for_each_token_with_digits(seed, title, text, HanChars::Whole, |token, _, _, kind| {
                if !self.in_content_hash(kind) {
                    return;
                }
                tokens += usize::from(kind != TokenKind::DigitRun);
                hasher.update(token.as_bytes());
                hasher.update(&[TOKEN_SEPARATOR]);
            });
        }
        if tokens == 0 {
            return Err(Error::EmptyDocument);
        }
        Ok(hasher.digest128())
    }

    /// A [`Sketch`] of the 3-token shingles of a title (optional) and the cleaned text,
    /// digit runs included, Han words by their characters, for verifying SimHash candidates found beyond k (the title
    /// counts: two short texts under different titles are different pages). `None` when
    /// neither has a token.
    pub fn sketch(&self, title: Option<&str>, text: &str) -> Option<Sketch> {
        self.sketched(title, text, SketchBuilder::new()).finish()
    }

    /// `b` given the sketch's tokens of a title and text.
    fn sketched(&self, title: Option<&str>, text: &str, mut b: SketchBuilder) -> SketchBuilder {
        for_each_token_with_digits(
            self.spec.seed,
            title,
            text,
            HanChars::Whole,
            |token, _, _, _| b.push_word(token),
        );
        b
    }

    /// The distinct shingle hashes, sorted, that [`Fingerprinter::sketch`] of the same title
    /// and text is the MinHash of: two documents' [`crate::text::sketch::jaccard`] is the
    /// similarity their sketches estimate, exactly (for a dedup that checks the pairs near
    /// its threshold against the texts).
    pub fn shingles(&self, title: Option<&str>, text: &str) -> Vec<u32> {
        let b = self.sketched(title, text, SketchBuilder::collecting());
        b.finish_shingles()
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
        for f in [Fingerprinter::new(), Fingerprinter::new().counting_digits()] {
            analyze_agrees(&f);
        }
        // Counting digits changes the content hash of a text with digits alone.
        let (page, record) = (Fingerprinter::new(), Fingerprinter::new().counting_digits());
        let hashes = |f: &Fingerprinter, t: &str| f.analyze(Some("Q3"), t).unwrap().content_hash;
        let words = "revenue rose to 12 million in the quarter";
        assert_ne!(hashes(&page, words), hashes(&record, words));
        let other = "revenue rose to 15 million in the quarter";
        assert_eq!(hashes(&page, words), hashes(&page, other));
        assert_ne!(hashes(&record, words), hashes(&record, other));
        let plain = "revenue rose in the quarter";
        assert_eq!(hashes(&page, plain), hashes(&record, plain));
    }

    /// `analyze` gives what `fingerprint`, `content_hash` and `sketch` give one by one.
    fn analyze_agrees(f: &Fingerprinter) {
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
            (
                Some("Q3 2026"),
                "revenue rose to 12 million, up 4 % on 2025",
            ),
            (None, "订单 20261203 已发货，验证码 482913"),
        ] {
            let a = f.analyze(title, text).unwrap();
            assert_eq!(a.fingerprint, f.fingerprint(title, text).unwrap());
            assert_eq!(
                a.content_hash,
                f.content_hash(title, text).unwrap(),
                "{title:?} {text}"
            );
            assert_eq!(a.sketch, f.sketch(title, text));
        }
        assert_ne!(
            f.analyze(Some("ab"), "c").unwrap().content_hash,
            f.analyze(Some("a"), "bc").unwrap().content_hash
        );
        assert!(matches!(f.analyze(None, "。！"), Err(Error::EmptyDocument)));
        assert!(matches!(
            f.content_hash(None, "2026 12"),
            Err(Error::EmptyDocument)
        ));
    }

    #[test]
    fn long_documents_give_what_a_lookup_per_token_gave() {
        // 591 KB: tokens are summed in many chunks of OCCURRENCE_CHUNK and the content is
        // hashed in pieces of CONTENT_CHUNK; the values are those of a lookup per token.
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
        assert_eq!(a.sketch, f.sketch(title, &text));
        assert_eq!(
            xxhash_rust::xxh3::xxh3_64(&a.sketch.unwrap().0),
            10_479_118_697_958_059_948
        );
    }

    #[test]
    fn header_and_footer_lines_are_not_content() {
        // Short lines outside the content lines weigh 0 (spec v5): neither the fingerprint
        // nor the content hash (exact duplicates) sees them.
        let f = Fingerprinter::new();
        let body = "今天北京的天气很好，我们去公园散步，看到很多人在跑步和放风筝。";
        let page = format!("热门推荐\n{body}\n编辑推荐 猜你喜欢");
        let (a, p) = (
            f.analyze(None, body).unwrap(),
            f.analyze(None, &page).unwrap(),
        );
        let tokens = (a.body_tokens, a.dropped_tokens);
        assert_eq!(
            (p.body_tokens - p.dropped_tokens, 0),
            tokens,
            "what was left out is counted"
        );
        let (body_tokens, dropped_tokens) = tokens;
        let p = Analysis {
            body_tokens,
            dropped_tokens,
            ..p
        };
        assert_eq!(a, p);
        // Between content lines they still count.
        let inside = format!("{body}\n热门推荐\n{body}");
        assert_ne!(
            f.content_hash(None, &format!("{body}\n{body}")).unwrap(),
            f.content_hash(None, &inside).unwrap()
        );
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
        // Two different hotel reviews whose only repeated word is 酒店: one repeated word
        // must not carry most of the votes (docs/quality.md, the spec's term weights).
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

    #[test]
    fn shingle_sets_see_the_lines_the_cleaner_drops() {
        let f = Fingerprinter::new();
        let article = "The council approved the budget for parks and libraries on Tuesday, \
                       after a long debate about the cost of the new swimming pool.";
        // Nothing dropped: one set, the sketch's.
        let a = f.analyze(None, article).unwrap();
        assert_eq!((a.body_tokens, a.dropped_tokens), (23, 0));
        let sets = f.shingle_sets(None, article, Some(""));
        assert_eq!(
            (&sets.cleaned, &sets.whole),
            (&f.shingles(None, article), &None)
        );
        // A header and footer of chrome: left out of the sketch, counted, seen whole.
        let page = format!("Home | News | Sport\n{article}\nShare this | Print");
        let p = f.analyze(None, &page).unwrap();
        assert_eq!(p.sketch, a.sketch);
        assert_eq!((p.body_tokens, p.dropped_tokens), (23 + 6, 6));
        let page_sets = f.shingle_sets(None, &page, Some(""));
        assert_eq!(page_sets.cleaned, sets.cleaned);
        let whole = page_sets.whole.clone().unwrap();
        assert!(sets.cleaned.iter().all(|s| whole.binary_search(s).is_ok()));
        assert!(
            whole.len() >= sets.cleaned.len() + 4,
            "the chrome's shingles"
        );
        // The similarity is the lower of the two Jaccards.
        let j = crate::text::sketch::jaccard(&whole, &sets.cleaned);
        assert!(j < 1.0);
        assert_eq!(page_sets.similarity(&sets), j);
        assert_eq!(sets.similarity(&page_sets), j);
        assert_eq!(page_sets.similarity(&page_sets), 1.0);
        assert_eq!(
            f.shingle_sets(None, "", Some("")).cleaned,
            Vec::<u32>::new()
        );
        // URLs: unseen by the sketch, even in a kept line; part of the whole text.
        let links = format!("{article} Read it at https://example.com/budget/2026 today.");
        let l = f.analyze(None, &links).unwrap();
        assert_eq!(
            l.sketch,
            f.sketch(None, &format!("{article} Read it at today."))
        );
        assert_eq!(l.dropped_tokens, 5, "https, example, com, budget, 2026");
        let link_sets = f.shingle_sets(None, &links, Some(""));
        assert_eq!(link_sets.cleaned, f.shingles(None, &links));
        let other = links.replace("budget/2026", "pool/2025");
        assert_eq!(f.shingles(None, &other), link_sets.cleaned);
        assert!(link_sets.similarity(&f.shingle_sets(None, &other, Some(""))) < 1.0);
        // Digit-heavy lines are few bytes but many tokens: counted by tokens.
        let table = format!("{article}\n2 2 3 0 1 2 8 9 1 6\n1 4 3 3 6 1 4 3 6 4");
        let t = f.analyze(None, &table).unwrap();
        assert_eq!((t.body_tokens, t.dropped_tokens), (43, 20));
    }
}
