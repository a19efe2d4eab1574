//! Inverse document frequencies of tokens, part of the [`crate::text::spec`]: the tables
//! `resources/idf-zh.txt` (from jieba) and `resources/idf-en.txt` (from wordfreq), the
//! stop words at IDF 0, and defaults for tokens in neither.

use std::sync::LazyLock;

use xxhash_rust::xxh3::xxh3_64_with_seed;

use crate::text::analyze;
use crate::text::ascii::{cjk_unified_offset, cjk_unified_prefix};
use crate::text::spec::SPEC_V1_SEED;
use crate::text::stop_words::{STOP_WORDS, foreign_function_words};

/// IDF of tokens not in the tables: Han words (about the median of jieba's table).
const DEFAULT_IDF_ZH: f32 = 11.95;
/// IDF of tokens not in the tables: other words (beyond the 30,000 most frequent).
const DEFAULT_IDF_EN: f32 = 14.0;

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
    for word in STOP_WORDS.iter().copied().chain(foreign_function_words()) {
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

/// Where a feature's IDF comes from, decided from its token when it is first seen.
#[derive(Debug, Clone, Copy)]
pub(crate) enum IdfSource {
    /// One CJK Unified Ideograph: [`HAN_IDF`] at this index.
    HanChar(u32),
    /// The hash table; unknown tokens get [`DEFAULT_IDF_ZH`].
    Han,
    /// The hash table; unknown tokens get [`DEFAULT_IDF_EN`].
    Other,
}

impl IdfSource {
    /// The source of `token`'s IDF.
    pub(crate) fn of(token: &str) -> Self {
        let bytes = token.as_bytes();
        // The common cases without decoding: a token starting with ASCII (no Han
        // character first), and one starting with a CJK Unified Ideograph.
        if bytes.first().is_none_or(u8::is_ascii) {
            return Self::Other;
        }
        if cjk_unified_prefix(&bytes[..bytes.len().min(3)]) == 3 {
            return match bytes.len() {
                3 => Self::HanChar(cjk_unified_offset(bytes) as u32),
                _ => Self::Han,
            };
        }
        Self::by_chars(token)
    }

    /// The source of `token` from its first two characters, decoded: the definition [`of`]'s
    /// shortcuts agree with (tested).
    ///
    /// [`of`]: IdfSource::of
    fn by_chars(token: &str) -> Self {
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
    pub(crate) fn idf(self, hash: u64) -> f32 {
        match self {
            // From a dense copy of the table (84 KiB, cache-resident) rather than the
            // 1 MiB hash table; the values are the same.
            Self::HanChar(i) => HAN_IDF[i as usize],
            Self::Han => IDF.get(hash).unwrap_or(DEFAULT_IDF_ZH),
            Self::Other => IDF.get(hash).unwrap_or(DEFAULT_IDF_EN),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn idf_of(token: &str) -> f32 {
        IdfSource::of(token).idf(xxh3_64_with_seed(token.as_bytes(), SPEC_V1_SEED))
    }

    #[test]
    fn han_characters_read_the_table_through_their_dense_copy() {
        for c in ['北', '京', '的', '酒', '\u{4E00}', '\u{9FFF}'] {
            let token = c.to_string();
            assert!(matches!(IdfSource::of(&token), IdfSource::HanChar(_)));
            let hash = xxh3_64_with_seed(token.as_bytes(), SPEC_V1_SEED);
            assert_eq!(
                idf_of(&token),
                IDF.get(hash).unwrap_or(DEFAULT_IDF_ZH),
                "{c}"
            );
        }
    }

    #[test]
    fn sources_without_decoding_are_those_by_characters() {
        let pieces = [
            "a",
            "9",
            "北",
            "京",
            "\u{4E00}",
            "\u{9FFF}",
            "\u{4DFF}",
            "\u{3400}",
            "é",
            "\u{20000}",
            "。",
        ];
        for text in crate::text::test_input::texts(&pieces, 0x5EED_0F1D_F00D_CAFE, 5_000) {
            for end in (0..=text.len().min(12)).filter(|&e| text.is_char_boundary(e)) {
                let token = &text[..end];
                assert_eq!(
                    format!("{:?}", IdfSource::of(token)),
                    format!("{:?}", IdfSource::by_chars(token)),
                    "{token:?}"
                );
            }
        }
    }

    #[test]
    fn stop_words_weigh_nothing_and_unknown_tokens_get_the_defaults() {
        for word in ["的", "我们", "the", "monday"] {
            assert_eq!(idf_of(word), 0.0, "{word}");
        }
        assert!(matches!(IdfSource::of("北京"), IdfSource::Han));
        assert!(matches!(IdfSource::of("budget"), IdfSource::Other));
        assert_eq!(idf_of("zqxjvwkpt"), DEFAULT_IDF_EN);
        assert_eq!(idf_of("龘龘龘龘"), DEFAULT_IDF_ZH);
    }
}
