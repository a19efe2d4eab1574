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
#[inline]
fn pack(word: &[u8]) -> Option<u128> {
    if word.len() > 16 {
        return None;
    }
    let mut bytes = [0u8; 16];
    bytes[..word.len()].copy_from_slice(word);
    Some(u128::from_le_bytes(bytes))
}

/// The ASCII [`STOP_WORDS`] as an open-addressing set of packed words (256 slots, 4 KiB):
/// a lookup is a multiply and, mostly, one comparison.
struct EnglishStopWords {
    slots: [u128; Self::SLOTS],
}

impl EnglishStopWords {
    const SLOTS: usize = 256;

    #[inline]
    fn slot(key: u128) -> usize {
        let mixed = (key as u64 ^ (key >> 64) as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15);
        (mixed >> 56) as usize
    }

    fn new() -> Self {
        let mut set = Self {
            slots: [0; Self::SLOTS],
        };
        for key in STOP_WORDS
            .iter()
            .filter(|w| w.is_ascii())
            .filter_map(|w| pack(w.as_bytes()))
        {
            let mut i = Self::slot(key);
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
        let mut i = Self::slot(key);
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

#[cfg(test)]
mod tests {
    use super::*;

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
