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
    });
}

/// How much of a body the fingerprint and the sketch see: the tokens (words and digit
/// runs) of every line of it, URLs included, and of those the tokens they do not see (the
/// lines the cleaner weighs 0, and URLs).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct BodyTokens {
    /// Tokens of every line, URLs included.
    pub all: usize,
    /// Of those, the tokens the fingerprint and the sketch leave out.
    pub unseen: usize,
}

/// Which lines of a body are tokenized.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Lines {
    /// Those that weigh more than 0, at their weights, without their URLs (what the
    /// fingerprint sees).
    Cleaned,
    /// Every line as it is, URLs too, beside the cleaned view
    /// ([`for_each_token_of_every_line`]): the text as a whole, chrome and all.
    Every,
}

/// [`for_each_token`] with the digit runs too, in their places ([`TokenKind::DigitRun`]);
/// says how much of the body it left out.
pub(crate) fn for_each_token_with_digits(
    seed: u64,
    title: Option<&str>,
    text: &str,
    han_chars: HanChars,
    emit: impl FnMut(&str, u64, f32, TokenKind),
) -> BodyTokens {
    tokens_of(seed, (title, text), han_chars, Lines::Cleaned, emit)
}

/// The tokens of both views of a text (digit runs too, Han words whole): what
/// [`for_each_token_with_digits`] passes (the cleaned view) and every line as it is, URLs
/// included (the whole text). A token of both is passed at its line's weight (above 0);
/// one of the whole text only (a line the cleaner leaves out, a line's URLs) at 0; one of
/// the cleaned view only (a kept line's tokens without its URLs, where it has some) at
/// minus its line's weight. Each view's tokens come in its own order.
pub(crate) fn for_each_token_of_every_line(
    seed: u64,
    title: Option<&str>,
    text: &str,
    emit: impl FnMut(&str, u64, f32, TokenKind),
) {
    tokens_of(seed, (title, text), HanChars::Whole, Lines::Every, emit);
}

/// The number of tokens of `line` as it is (words and digit runs, URLs included).
fn count_tokens(line: &str) -> usize {
    let mut n = 0;
    analyze::tokenize_runs(line, |_, _| n += 1);
    n
}

/// The tokens of `title` and of the `lines` of `text` (see [`for_each_token_with_digits`]).
fn tokens_of(
    seed: u64,
    (title, text): (Option<&str>, &str),
    han_chars: HanChars,
    lines: Lines,
    mut emit: impl FnMut(&str, u64, f32, TokenKind),
) -> BodyTokens {
    #[cfg(test)]
    if !text.is_empty() {
        BODY_PASSES.set(BODY_PASSES.get() + 1);
    }
    // Emits the tokens of a line (without its URLs when `strip`); returns how many words
    // and digit runs, and whether URLs were taken out.
    let mut line_tokens = |line: &str, weight: f32, strip: bool| {
        let line = match strip {
            true => clean::strip_urls(line),
            false => std::borrow::Cow::Borrowed(line),
        };
        let mut n = 0;
        analyze::tokenize_runs(&line, |token, han| {
            n += 1;
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
        (n, matches!(line, std::borrow::Cow::Owned(_)))
    };
    if let Some(title) = title {
        line_tokens(
            &clean::title(&analyze::normalize(title)),
            TITLE_WEIGHT,
            true,
        );
    }
    let text = analyze::normalize(text);
    let mut tokens = BodyTokens::default();
    for (line, weight) in clean::weighted_lines(&text) {
        match lines {
            Lines::Cleaned if weight > 0.0 => {
                let (seen, stripped) = line_tokens(line, weight, true);
                let all = if stripped { count_tokens(line) } else { seen };
                tokens.all += all;
                tokens.unseen += all.saturating_sub(seen);
            }
            Lines::Cleaned => {
                let all = count_tokens(line);
                tokens.all += all;
                tokens.unseen += all;
            }
            Lines::Every => {
                let stripped = clean::strip_urls(line);
                if weight > 0.0 && matches!(stripped, std::borrow::Cow::Borrowed(_)) {
                    tokens.all += line_tokens(line, weight, false).0;
                    continue;
                }
                if weight > 0.0 {
                    line_tokens(&stripped, -weight, false);
                }
                tokens.all += line_tokens(line, 0.0, false).0;
            }
        }
    }
    tokens
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
