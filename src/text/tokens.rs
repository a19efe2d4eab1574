//! The tokens of a document that the fingerprint, the content hash and the sketch count:
//! the title's (without its site name) and those of the body lines that weigh more than 0
//! ([`crate::text::clean`]), after normalization, without URLs and digit runs, each with its
//! feature hash and weight.

use xxhash_rust::xxh3::xxh3_64_with_seed;

use crate::text::analyze;
use crate::text::clean;
use crate::text::spec::{HAN_WORD_WEIGHT, TITLE_WEIGHT};

/// Whether [`for_each_token`] passes the characters of Han words too.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum HanChars {
    /// Each Han word of two or more characters is followed by its characters, as tokens of
    /// their own (the features count both).
    Split,
    /// Words only (what the content hash and the sketch see).
    Whole,
}

/// What a token passed by [`for_each_token`] is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum TokenKind {
    /// A token of the text.
    Word,
    /// One character of the Han word before it ([`HanChars::Split`]).
    HanChar,
    /// A run of ASCII digits: only [`for_each_token_with_digits`] passes them (the sketch
    /// counts them; the fingerprint and the content hash do not).
    DigitRun,
}

/// Calls `emit(token, token_hash, weight, kind)` for every token that counts: the title's,
/// then the body's, line by line. `token_hash` is the token's xxh3 with `seed`; `weight` is
/// [`TITLE_WEIGHT`] or the line's weight, times [`HAN_WORD_WEIGHT`] for a Han word of two or
/// more characters. With [`HanChars::Split`], each such word is followed by its characters
/// as tokens of their own ([`TokenKind::HanChar`]) at the full weight.
pub(crate) fn for_each_token(
    seed: u64,
    title: Option<&str>,
    text: &str,
    han_chars: HanChars,
    mut emit: impl FnMut(&str, u64, f32, TokenKind),
) {
    for_each_token_with_digits(seed, title, text, han_chars, |t, h, w, kind| {
        if kind != TokenKind::DigitRun {
            emit(t, h, w, kind)
        }
    })
}

/// [`for_each_token`] with the digit runs too, in their places ([`TokenKind::DigitRun`]).
pub(crate) fn for_each_token_with_digits(
    seed: u64,
    title: Option<&str>,
    text: &str,
    han_chars: HanChars,
    mut emit: impl FnMut(&str, u64, f32, TokenKind),
) {
    #[cfg(test)]
    if !text.is_empty() {
        BODY_PASSES.set(BODY_PASSES.get() + 1);
    }
    let mut line_tokens = |line: &str, weight: f32| {
        let line = clean::strip_urls(line);
        analyze::tokenize_runs(&line, |token, han| {
            if !han && token.bytes().all(|b| b.is_ascii_digit()) {
                let hash = xxh3_64_with_seed(token.as_bytes(), seed);
                emit(token, hash, weight, TokenKind::DigitRun);
                return;
            }
            // A Han word of two or more characters weighs HAN_WORD_WEIGHT and also counts
            // its characters (a one-character word is its character already). Han
            // characters take 3 or 4 bytes in UTF-8, so a Han token of more than 4 bytes
            // has two or more.
            let han_word = han && token.len() > 4;
            emit(
                token,
                xxh3_64_with_seed(token.as_bytes(), seed),
                if han_word {
                    weight * HAN_WORD_WEIGHT
                } else {
                    weight
                },
                TokenKind::Word,
            );
            if han_chars == HanChars::Split && han_word {
                for (i, c) in token.char_indices() {
                    let ch = &token[i..i + c.len_utf8()];
                    let hash = xxh3_64_with_seed(ch.as_bytes(), seed);
                    emit(ch, hash, weight, TokenKind::HanChar);
                }
            }
        });
    };
    if let Some(title) = title {
        line_tokens(&clean::title(&analyze::normalize(title)), TITLE_WEIGHT);
    }
    let text = analyze::normalize(text);
    for (line, weight) in clean::weighted_lines(&text) {
        if weight > 0.0 {
            line_tokens(line, weight);
        }
    }
}

#[cfg(test)]
thread_local! {
    /// Calls of [`for_each_token`] with a body text in this thread (see [`body_passes`]).
    static BODY_PASSES: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
}

/// How many times this thread has tokenized a body text: tests count the passes an
/// operation makes over a document.
#[cfg(test)]
pub(crate) fn body_passes() -> usize {
    BODY_PASSES.get()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn collect(
        title: Option<&str>,
        text: &str,
        han_chars: HanChars,
    ) -> Vec<(String, f32, TokenKind)> {
        let mut out = Vec::new();
        for_each_token(0, title, text, han_chars, |token, hash, weight, kind| {
            assert_eq!(hash, xxh3_64_with_seed(token.as_bytes(), 0));
            out.push((token.to_owned(), weight, kind));
        });
        out
    }

    #[test]
    fn han_words_are_followed_by_their_characters_when_split() {
        let text = "今天北京的天气很好，我们去公园散步，看到很多人在跑步和放风筝。";
        let whole = collect(Some("北京天气 - 某某网"), text, HanChars::Whole);
        let split = collect(Some("北京天气 - 某某网"), text, HanChars::Split);
        assert_eq!(
            whole[0],
            (
                "北京".to_owned(),
                TITLE_WEIGHT * HAN_WORD_WEIGHT,
                TokenKind::Word
            )
        );
        assert_eq!(
            split[1],
            ("北".to_owned(), TITLE_WEIGHT, TokenKind::HanChar)
        );
        assert_eq!(
            split[2],
            ("京".to_owned(), TITLE_WEIGHT, TokenKind::HanChar)
        );
        let words: Vec<_> = split
            .into_iter()
            .filter(|t| t.2 == TokenKind::Word)
            .collect();
        assert_eq!(words, whole);
        assert!(whole.iter().all(|t| t.2 == TokenKind::Word));
    }

    #[test]
    fn urls_and_digit_runs_do_not_count() {
        let tokens = collect(
            None,
            "see https://example.com/a 2026 v3 news",
            HanChars::Whole,
        );
        let tokens: Vec<&str> = tokens.iter().map(|t| t.0.as_str()).collect();
        assert_eq!(tokens, ["see", "v3", "news"]);
    }
}
