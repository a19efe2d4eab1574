//! A text's shingles as the sketch sees them and as a whole: what a dataset dedup compares
//! two texts by when it reads them again (`cli/dedup/exact.rs`, Python's `simstore.dedup`).

use xxhash_rust::xxh3::Xxh3;

use crate::text::fingerprint::Fingerprinter;
use crate::text::sketch::{SketchBuilder, jaccard};
use crate::text::tokens::{HanChars, for_each_token_of_every_line, for_each_token_with_digits};
use crate::types::Sketch;

/// The byte a whole text's content hash starts with ([`Fingerprinter::whole_text`]): a main
/// text's starts with its title tag, 1, so the two never hash the same bytes.
const WHOLE_TAG: u8 = 3;
/// The byte after each token a whole text's content hash reads.
const WHOLE_SEPARATOR: u8 = 0x1f;

/// A text's shingles as the sketch sees them and as a whole ([`Fingerprinter::shingle_sets`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ShingleSets {
    /// The distinct shingle hashes, sorted, of the title and the lines the cleaner keeps:
    /// the set the sketch is the MinHash of ([`Fingerprinter::shingles`]).
    pub cleaned: Vec<u32>,
    /// The same of the title and every line; `None` when the cleaner left no line out
    /// (the set is then `cleaned`).
    pub whole: Option<Vec<u32>>,
}

impl ShingleSets {
    /// How similar two texts are for a dataset dedup that reads them: the Jaccard
    /// similarity of their cleaned shingles, or of their whole texts' when lower (where
    /// neither has a whole set, the cleaned one alone; one without stands in as its own
    /// whole text). The cleaner keeps page chrome from joining two articles of one site's
    /// template (their whole texts are alike); the whole text keeps two different records
    /// that the cleaner cut down to the same lines (source files under one licence line)
    /// apart. A dataset dedup keeps the whole set of its partial records only
    /// ([`crate::index::near::PARTIAL_SHARE`]): below that share the estimate of the cleaned
    /// texts stands for the whole ones, and a copy's added chrome line does not count.
    pub fn similarity(&self, other: &ShingleSets) -> f64 {
        let cleaned = jaccard(&self.cleaned, &other.cleaned);
        match (&self.whole, &other.whole) {
            (None, None) => cleaned,
            (a, b) => {
                let whole = jaccard(
                    a.as_ref().unwrap_or(&self.cleaned),
                    b.as_ref().unwrap_or(&other.cleaned),
                );
                cleaned.min(whole)
            }
        }
    }

    /// Bytes held, about.
    pub fn heap_bytes(&self) -> usize {
        4 * (self.cleaned.capacity() + self.whole.as_ref().map_or(0, Vec::capacity))
    }
}

impl Fingerprinter {
    /// The shingles of a title and text as the sketch sees them and, when `whole` is given
    /// (a dataset dedup's partial record, [`crate::index::near::is_partial`]), of the
    /// *whole* text too: every line as it is (those the cleaner leaves out and URLs too),
    /// then the lines of `whole` itself, what a web page's reader left out of `text`
    /// (`""` for a record given as text). In one pass over the lines. What a dataset
    /// dedup decides a pair by when it reads the texts ([`ShingleSets::similarity`]).
    pub fn shingle_sets(
        &self,
        title: Option<&str>,
        text: &str,
        whole: Option<&str>,
    ) -> ShingleSets {
        let Some(left_out) = whole else {
            return ShingleSets {
                cleaned: self.shingles(title, text),
                whole: None,
            };
        };
        let (mut cleaned, mut whole) = (SketchBuilder::collecting(), SketchBuilder::collecting());
        let mut differ = false;
        for_each_token_of_every_line(self.spec().seed, title, text, |token, _, weight, _| {
            // Above 0: a token of both views; 0: of the whole text only; below: of the
            // cleaned view only (a kept line's tokens without its URLs).
            if weight >= 0.0 {
                whole.push_word(token);
            }
            if weight != 0.0 {
                cleaned.push_word(token);
            }
            differ |= weight <= 0.0;
        });
        self.each_whole_token(left_out, |token| {
            whole.push_word(token);
            differ = true;
        });
        ShingleSets {
            cleaned: cleaned.finish_shingles(),
            whole: differ.then(|| whole.finish_shingles()),
        }
    }

    /// The content hash and the sketch of a web page's whole visible text: the title and
    /// the main text as the sketch sees them, then every line of `left_out`, what the
    /// page's reader left out of `text` (its link lists). The sketch is marked
    /// [`Sketch::whole_text`] (`None` when there is no token); the hash never equals a main
    /// text's content hash. What a store keeps of a page whose reader left out much of it
    /// (`crate::index::page`), so that two pages that differ only there stay apart.
    pub fn whole_text(
        &self,
        title: Option<&str>,
        text: &str,
        left_out: &str,
    ) -> (u128, Option<Sketch>) {
        let mut hasher = Xxh3::with_seed(self.spec().seed);
        hasher.update(&[WHOLE_TAG]);
        let mut sketch = SketchBuilder::new();
        let mut push = |token: &str| {
            hasher.update(token.as_bytes());
            hasher.update(&[WHOLE_SEPARATOR]);
            sketch.push_word(token);
        };
        let seed = self.spec().seed;
        for_each_token_with_digits(seed, title, text, HanChars::Whole, |t, _, _, _| push(t));
        self.each_whole_token(left_out, &mut push);
        (
            hasher.digest128(),
            sketch.finish().map(Sketch::of_whole_text),
        )
    }

    /// The tokens (words and digit runs) of every line of `text`, URLs included: how
    /// [`crate::text::fingerprint::Analysis::body_tokens`] counts a body.
    pub fn count_tokens(&self, text: &str) -> usize {
        let mut n = 0;
        self.each_whole_token(text, |_| n += 1);
        n
    }

    /// Calls `on` with each token of `text` as a whole: every line as it is, URLs too.
    fn each_whole_token(&self, text: &str, mut on: impl FnMut(&str)) {
        for_each_token_of_every_line(self.spec().seed, None, text, |token, _, weight, _| {
            // Below 0: a token of the cleaned view only (a kept line without its URLs).
            if weight >= 0.0 {
                on(token);
            }
        });
    }
}
