//! Stop words: function words that carry no topic. They have IDF 0 in the fingerprint
//! ([`crate::text::idf`]), and their density tells prose from chrome in line cleaning
//! ([`crate::text::clean`]).

/// Stop words: function words that carry no topic. Chinese words as jieba segments them;
/// English from the usual short lists; month and weekday names, which timestamps are made of.
pub const STOP_WORDS: &[&str] = &[
    // Chinese.
    "的",
    "了",
    "是",
    "在",
    "和",
    "也",
    "就",
    "都",
    "而",
    "及",
    "与",
    "着",
    "或",
    "之",
    "其",
    "把",
    "被",
    "让",
    "对",
    "从",
    "向",
    "给",
    "但",
    "并",
    "很",
    "还",
    "又",
    "要",
    "会",
    "能",
    "等",
    "吧",
    "吗",
    "呢",
    "啊",
    "呀",
    "哦",
    "嗯",
    "么",
    "个",
    "这",
    "那",
    "我",
    "你",
    "他",
    "她",
    "它",
    "我们",
    "你们",
    "他们",
    "她们",
    "一个",
    "没有",
    "可以",
    "因为",
    "所以",
    "但是",
    "而且",
    "然后",
    "就是",
    "这个",
    "那个",
    "这样",
    "那样",
    "什么",
    "怎么",
    "如果",
    "已经",
    "以及",
    "还是",
    "不是",
    "这些",
    "那些",
    "自己",
    "这种",
    "以",
    "于",
    "为",
    "所",
    "得",
    "地",
    "年",
    "月",
    "日",
    "时",
    "分",
    "秒",
    "号",
    // English.
    "a",
    "an",
    "the",
    "and",
    "or",
    "but",
    "if",
    "of",
    "to",
    "in",
    "on",
    "at",
    "by",
    "for",
    "with",
    "from",
    "as",
    "into",
    "about",
    "than",
    "then",
    "that",
    "this",
    "these",
    "those",
    "it",
    "its",
    "is",
    "are",
    "was",
    "were",
    "be",
    "been",
    "being",
    "am",
    "do",
    "does",
    "did",
    "has",
    "have",
    "had",
    "i",
    "you",
    "he",
    "she",
    "we",
    "they",
    "me",
    "him",
    "her",
    "us",
    "them",
    "my",
    "your",
    "his",
    "our",
    "their",
    "not",
    "no",
    "so",
    "s",
    "t",
    "will",
    "would",
    "can",
    "could",
    "should",
    "may",
    "might",
    "must",
    "shall",
    "there",
    "here",
    "which",
    "who",
    "whom",
    "what",
    "when",
    "where",
    "why",
    "how",
    "all",
    "any",
    "some",
    "such",
    "also",
    "just",
    "very",
    "too",
    "up",
    "out",
    "over",
    "after",
    "before",
    "said",
    "jan",
    "feb",
    "mar",
    "apr",
    "jun",
    "jul",
    "aug",
    "sep",
    "sept",
    "oct",
    "nov",
    "dec",
    "january",
    "february",
    "march",
    "april",
    "june",
    "july",
    "august",
    "september",
    "october",
    "november",
    "december",
    "monday",
    "tuesday",
    "wednesday",
    "thursday",
    "friday",
    "saturday",
    "sunday",
    "pm",
];

/// `word` packed into a `u128` (byte `i` in bits `8i..8i + 8`), if it is at most 16 bytes
/// long: the key of [`is_english_stop_word`], so that line cleaning looks words up without
/// hashing strings.
///
/// Built from two loads that overlap in the middle (the same bytes, so their OR is the
/// packed word), not by copying the word into a zeroed buffer: the copy's call and the
/// load of bytes just stored one by one cost more than the lookup.
#[inline]
fn pack(word: &[u8]) -> Option<u128> {
    let n = word.len();
    let key = match n {
        0 => 0,
        1..=3 => {
            u128::from(word[0])
                | u128::from(word[n / 2]) << (8 * (n / 2))
                | u128::from(word[n - 1]) << (8 * (n - 1))
        }
        4..=7 => {
            let lo = u32::from_le_bytes(word[..4].try_into().unwrap_or_default());
            let hi = u32::from_le_bytes(word[n - 4..].try_into().unwrap_or_default());
            u128::from(lo) | u128::from(hi) << (8 * (n - 4))
        }
        8..=16 => {
            let lo = u64::from_le_bytes(word[..8].try_into().unwrap_or_default());
            let hi = u64::from_le_bytes(word[n - 8..].try_into().unwrap_or_default());
            u128::from(lo) | u128::from(hi) << (8 * (n - 8))
        }
        _ => return None,
    };
    Some(key)
}

/// The ASCII [`STOP_WORDS`] as an open-addressing set of packed words (256 slots, 4 KiB)
/// behind a 4,096-bit filter: most words of a text are not stop words, and the filter
/// answers most of those with one bit, where the set (two thirds full) would walk a few
/// slots. A lookup is a multiply and, mostly, one bit test or one comparison.
struct EnglishStopWords {
    /// Bit `filter_bit(key)` is set for each stop word's key.
    filter: [u64; Self::FILTER_BITS / 64],
    slots: [u128; Self::SLOTS],
}

impl EnglishStopWords {
    const SLOTS: usize = 256;
    const FILTER_BITS: usize = 4096;

    /// The key's hash: its top 8 bits choose the slot, the 12 below them the filter bit.
    #[inline]
    fn mix(key: u128) -> u64 {
        (key as u64 ^ (key >> 64) as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15)
    }

    #[inline]
    fn slot(mixed: u64) -> usize {
        (mixed >> 56) as usize
    }

    #[inline]
    fn filter_bit(mixed: u64) -> usize {
        (mixed >> 44) as usize % Self::FILTER_BITS
    }

    fn new() -> Self {
        let mut set = Self {
            filter: [0; Self::FILTER_BITS / 64],
            slots: [0; Self::SLOTS],
        };
        for key in STOP_WORDS
            .iter()
            .filter(|w| w.is_ascii())
            .filter_map(|w| pack(w.as_bytes()))
        {
            let mixed = Self::mix(key);
            let bit = Self::filter_bit(mixed);
            set.filter[bit / 64] |= 1 << (bit % 64);
            let mut i = Self::slot(mixed);
            while set.slots[i] != 0 && set.slots[i] != key {
                i = (i + 1) % Self::SLOTS;
            }
            set.slots[i] = key;
        }
        set
    }

    #[inline]
    fn contains(&self, key: u128) -> bool {
        // The empty word (key 0) is never looked up as a stop word: 0 marks a free slot.
        if key == 0 {
            return false;
        }
        let mixed = Self::mix(key);
        let bit = Self::filter_bit(mixed);
        if self.filter[bit / 64] & 1 << (bit % 64) == 0 {
            return false;
        }
        let mut i = Self::slot(mixed);
        loop {
            match self.slots[i] {
                0 => return false,
                k if k == key => return true,
                _ => i = (i + 1) % Self::SLOTS,
            }
        }
    }
}

/// True when `word` (the bytes of a run of letters and digits) is one of the ASCII
/// [`STOP_WORDS`].
#[inline]
pub(crate) fn is_english_stop_word(word: &[u8]) -> bool {
    static SET: std::sync::LazyLock<EnglishStopWords> =
        std::sync::LazyLock::new(EnglishStopWords::new);
    pack(word).is_some_and(|key| SET.contains(key))
}

/// The function words of the 29 other languages the cleaner knows
/// (`resources/function-words.txt`: German, French, Spanish, Polish, Turkish..., from
/// Universal Dependencies treebanks, without English content words). Like the
/// [`STOP_WORDS`], they count as function words in the cleaner's prose test and weigh
/// nothing in a fingerprint.
pub(crate) fn foreign_function_words() -> impl Iterator<Item = &'static str> {
    include_str!("../../resources/function-words.txt")
        .lines()
        .filter(|l| !l.starts_with('#') && !l.is_empty())
}

/// True when `word` (a run of letters and digits, normalized) is one of the
/// [`foreign_function_words`].
pub(crate) fn is_foreign_function_word(word: &str) -> bool {
    static SET: std::sync::LazyLock<std::collections::HashSet<&'static str>> =
        std::sync::LazyLock::new(|| foreign_function_words().collect());
    SET.contains(word)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_packed_word_holds_its_bytes_in_order_and_zeros_after() {
        let bytes: Vec<u8> = (0..17u8)
            .map(|i| i.wrapping_mul(37).wrapping_add(1))
            .collect();
        for n in 0..=17 {
            let word = &bytes[..n];
            let expected = (n <= 16).then(|| {
                let mut buffer = [0u8; 16];
                buffer[..n].copy_from_slice(word);
                u128::from_le_bytes(buffer)
            });
            assert_eq!(pack(word), expected, "{n} bytes");
        }
    }

    #[test]
    fn packed_lookup_is_membership_in_the_ascii_stop_words() {
        let ascii: std::collections::HashSet<&str> = STOP_WORDS
            .iter()
            .copied()
            .filter(|w| w.is_ascii())
            .collect();
        let mut words: Vec<String> = STOP_WORDS.iter().map(|w| (*w).to_owned()).collect();
        for w in STOP_WORDS {
            // Near misses: a byte more, a byte less, another last byte, another case.
            words.push(format!("{w}s"));
            let mut shorter = w.chars();
            shorter.next_back();
            words.push(shorter.as_str().to_owned());
            words.push(format!("{}x", shorter.as_str()));
            words.push(w.to_uppercase());
        }
        for w in [
            "",
            "budget",
            "thethethethethethe",
            "café",
            "ａｎｄ",
            "september1",
        ] {
            words.push(w.to_owned());
        }
        for w in &words {
            assert_eq!(
                is_english_stop_word(w.as_bytes()),
                ascii.contains(w.as_str()),
                "{w:?}"
            );
        }
    }
}
