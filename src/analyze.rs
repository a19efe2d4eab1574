//! Text analysis: normalization and tokenization (the "analyze" stage of the data flow).
//!
//! Normalization is Unicode NFKC (which also maps full-width forms to half-width) followed
//! by lowercasing. Tokenization splits the normalized text into runs: runs of Han
//! characters are segmented into words by jieba (the dictionary is loaded once per
//! process); runs of other letters and digits are words; everything else separates tokens.

use std::sync::LazyLock;

use jieba_rs::Jieba;
use unicode_normalization::UnicodeNormalization;

static JIEBA: LazyLock<Jieba> = LazyLock::new(Jieba::new);

/// Forces the jieba dictionary to load now rather than on first use (it takes ~0.1–0.3 s).
pub fn warm_up() {
    LazyLock::force(&JIEBA);
}

/// NFKC-normalizes and lowercases `text` (full-width `ＡＢＣ１２３` becomes `abc123`).
pub fn normalize(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.nfkc() {
        if c.is_uppercase() {
            out.extend(c.to_lowercase());
        } else {
            out.push(c);
        }
    }
    out
}

/// True for characters segmented by jieba: the CJK Unified Ideographs blocks, their
/// extensions and the compatibility ideographs.
pub fn is_han(c: char) -> bool {
    matches!(c as u32,
        0x3400..=0x4DBF      // Extension A
        | 0x4E00..=0x9FFF    // Unified Ideographs
        | 0xF900..=0xFAFF    // Compatibility Ideographs
        | 0x20000..=0x2A6DF  // Extension B
        | 0x2A700..=0x2EBEF  // Extensions C–F
        | 0x30000..=0x3134F) // Extension G
}

/// Calls `emit` with every token of already-normalized `text`, in order.
///
/// Han runs are cut by jieba (with its HMM for unknown words); other alphanumeric runs are
/// single tokens; any other character ends a token.
pub fn tokenize(text: &str, mut emit: impl FnMut(&str)) {
    #[derive(PartialEq, Clone, Copy)]
    enum Run {
        None,
        Han,
        Word,
    }
    let mut run = Run::None;
    let mut start = 0;
    let flush = |run: Run, s: &str, emit: &mut dyn FnMut(&str)| match run {
        Run::None => {}
        Run::Word => emit(s),
        Run::Han => {
            for token in JIEBA.cut(s, true) {
                if token.word.chars().any(char::is_alphanumeric) {
                    emit(token.word);
                }
            }
        }
    };
    for (i, c) in text.char_indices() {
        let kind = if is_han(c) {
            Run::Han
        } else if c.is_alphanumeric() {
            Run::Word
        } else {
            Run::None
        };
        if kind != run {
            flush(run, &text[start..i], &mut emit);
            run = kind;
            start = i;
        }
    }
    flush(run, &text[start..], &mut emit);
}

/// The tokens of `text` after normalization, as owned strings (convenient for tests and tools).
pub fn tokens(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    tokenize(&normalize(text), |t| out.push(t.to_owned()));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn normalizes_width_and_case() {
        assert_eq!(normalize("ＡＢＣ１２３ Hello"), "abc123 hello");
        assert_eq!(normalize("Ｗｏｒｌｄ！"), "world!");
    }

    #[test]
    fn splits_scripts() {
        assert_eq!(tokens("Hello, world! 2026"), ["hello", "world", "2026"]);
        assert_eq!(tokens("我们去北京。OK"), ["我们", "去", "北京", "ok"]);
        assert!(tokens("，。！？ ... ---").is_empty());
        assert!(tokens("").is_empty());
    }
}
