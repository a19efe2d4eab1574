//! A 64-byte b-bit MinHash sketch of a document's shingles, for a second, exact-er look at
//! SimHash candidates (the verify stage after a query).
//!
//! Real near-copies drift beyond the distance SimHash answers exactly (docs/quality.md);
//! querying with a larger k finds them, but also unrelated documents. The sketch tells the
//! two apart: it estimates the Jaccard similarity of the two documents' sets of 3-token
//! shingles (after cleaning, so chrome does not count) from 63 one-byte minima (Li & König,
//! b-bit minwise hashing, 2010) of a one-permutation MinHash. A token is a word, or in
//! Chinese text a character ([`SketchBuilder::push_han`]): an edit of one character breaks
//! the shingles of the word it falls in and its neighbours' too, where character shingles
//! lose only the three that hold it.
//!
//! The estimate's standard error is about `sqrt(J (1 − J) / 63)`. The sketch's last byte
//! counts the bins the shingles filled ([`Sketch::shingles`]: how much content the
//! estimate rests on) and flags a sketch of mostly Han characters ([`Sketch::han_chars`]).

use xxhash_rust::xxh3::xxh3_64_with_seed;

use crate::text::analyze::is_han;

pub use crate::types::sketch::{HAN_CHARS_FLAG, MINIMA, SLOTS, Sketch};

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
    /// Shingles added whose last token was a Han character.
    han_shingles: usize,
    han: bool,
    /// Every shingle's hash, when collecting them ([`SketchBuilder::collecting`]).
    shingles: Option<Vec<u32>>,
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
            han_shingles: 0,
            han: false,
            shingles: None,
        }
    }

    /// An empty builder that also keeps every shingle's hash, for
    /// [`SketchBuilder::finish_shingles`].
    pub fn collecting() -> Self {
        Self {
            shingles: Some(Vec::new()),
            ..Self::new()
        }
    }

    /// Adds the next token.
    pub fn push(&mut self, token: &str) {
        self.han = false;
        self.push_token(token);
    }

    /// Adds a token of the text: a Han word by its characters ([`SketchBuilder::push_han`]),
    /// any other token whole.
    pub fn push_word(&mut self, token: &str) {
        if token.chars().next().is_some_and(is_han) {
            self.push_han(token);
        } else {
            self.push(token);
        }
    }

    /// Adds a Han word as the tokens it is made of: its characters.
    pub fn push_han(&mut self, word: &str) {
        self.han = true;
        let mut buf = [0u8; 4];
        for c in word.chars() {
            self.push_token(c.encode_utf8(&mut buf));
        }
    }

    fn push_token(&mut self, token: &str) {
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
        self.han_shingles += usize::from(self.han);
        if let Some(all) = &mut self.shingles {
            all.push((h >> 32) as u32);
        }
        let slot = (((h >> 32) * MINIMA as u64) >> 32) as usize;
        let value = h & 0xFFFF_FFFF;
        if value < self.minima[slot] {
            self.minima[slot] = value;
        }
    }

    /// The distinct shingle hashes (their top 32 bits) the sketch is the MinHash of, sorted (a builder made by
    /// [`SketchBuilder::collecting`]; empty otherwise, or when no token was pushed): the
    /// set whose [`jaccard`] similarity [`Sketch::similarity`] estimates.
    pub fn finish_shingles(mut self) -> Vec<u32> {
        if self.seen > 0 && self.seen < SHINGLE {
            self.add_shingle(self.seen);
        }
        let mut all = self.shingles.unwrap_or_default();
        all.sort_unstable();
        all.dedup();
        all
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
        let shingles = self.seen.saturating_sub(SHINGLE - 1).max(1);
        let han = if self.han_shingles * 2 > shingles {
            HAN_CHARS_FLAG
        } else {
            0
        };
        out[MINIMA] = filled as u8 | han;
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

/// The exact Jaccard similarity of two sorted sets of distinct values, e.g. shingle hashes
/// ([`SketchBuilder::finish_shingles`]): shared over either's; 1 when both are empty. (Two
/// different shingles share a 32-bit hash once in 4·10⁹ pairs: two sets of 10⁵ shingles
/// gain about 2 false shared ones.)
pub fn jaccard<T: Ord>(a: &[T], b: &[T]) -> f64 {
    let (mut i, mut j, mut shared) = (0, 0, 0usize);
    while i < a.len() && j < b.len() {
        match a[i].cmp(&b[j]) {
            std::cmp::Ordering::Less => i += 1,
            std::cmp::Ordering::Greater => j += 1,
            std::cmp::Ordering::Equal => {
                shared += 1;
                i += 1;
                j += 1;
            }
        }
    }
    let union = a.len() + b.len() - shared;
    match union {
        0 => 1.0,
        _ => shared as f64 / union as f64,
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

    /// Han words are shingled by their characters, and a sketch of mostly Han shingles says
    /// so: a one-character edit in Chinese text keeps most shingles.
    #[test]
    fn han_words_are_shingled_by_characters_and_flagged() {
        let build = |words: &[&str]| {
            let mut b = SketchBuilder::new();
            for w in words {
                b.push_word(w);
            }
            b.finish().unwrap()
        };
        let text = "我们今天去北京天安门广场参观了人民英雄纪念碑然后吃了烤鸭";
        let chars = |t: &str| t.chars().map(String::from).collect::<Vec<_>>();
        let words = [
            "我们",
            "今天",
            "去",
            "北京",
            "天安门",
            "广场",
            "参观",
            "了",
            "人民英雄纪念碑",
            "然后",
            "吃",
            "了",
            "烤鸭",
        ];
        let a = build(&words);
        let b = build(&chars(text).iter().map(String::as_str).collect::<Vec<_>>());
        assert_eq!(a, b, "a Han word is its characters");
        assert!(a.han_chars());
        // 28 characters: 26 trigrams, in 63 bins (some share one).
        assert!((16..=26).contains(&a.shingles()), "{}", a.shingles());
        // One character changed: word trigrams lose 3 of 11, character trigrams 3 of 26.
        let edited = text.replacen('参', "观", 1);
        let c = build(
            &chars(&edited)
                .iter()
                .map(String::as_str)
                .collect::<Vec<_>>(),
        );
        assert!(a.similarity(&c) > 0.6, "{}", a.similarity(&c));
        let english = build(&["the", "quick", "brown", "fox", "北京"]);
        assert!(
            !english.han_chars(),
            "2 of 4 shingles end in a Han character"
        );
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
        // The collected shingles are the same sets, exactly.
        let collected = |v: &[String]| {
            let mut b = SketchBuilder::collecting();
            v.iter().for_each(|w| b.push(w));
            (b.clone().finish(), b.finish_shingles())
        };
        let ((ka, xa), (kb, xb)) = (collected(&a), collected(&b));
        assert_eq!((ka, xa.len()), (Some(sketch(&a)), sa.len()));
        assert_eq!(jaccard(&xa, &xb), truth);
        assert_eq!(kb, Some(sketch(&b)));
    }

    #[test]
    fn jaccard_of_sorted_sets() {
        assert_eq!(jaccard::<u32>(&[], &[]), 1.0);
        assert_eq!(jaccard(&[1, 2, 3], &[1, 2, 3]), 1.0);
        assert_eq!(jaccard(&[1, 2, 3], &[2, 3, 4, 5]), 0.4);
        assert_eq!(jaccard(&[1], &[]), 0.0);
        // A text shorter than one shingle is the one shingle it is.
        let mut b = SketchBuilder::collecting();
        b.push("only");
        assert_eq!(b.finish_shingles().len(), 1);
        assert!(SketchBuilder::new().finish_shingles().is_empty());
    }
}
