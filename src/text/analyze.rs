//! Text analysis: normalization and tokenization (the "analyze" stage of the data flow).
//!
//! Normalization is Unicode NFKC (which also maps full-width forms to half-width) followed
//! by lowercasing. Tokenization splits the normalized text into runs: runs of Han
//! characters are segmented into words by jieba (the dictionary is loaded once per
//! process); runs of other letters and digits are words; everything else separates tokens.

use std::ops::ControlFlow;
use std::sync::LazyLock;

use jieba_rs::Jieba;
use unicode_normalization::UnicodeNormalization;

use crate::text::ascii::{AsciiMasks, cjk_unified_prefix, low_bits};

static JIEBA: LazyLock<Jieba> = LazyLock::new(Jieba::new);

/// Forces the jieba dictionary to load now rather than on first use (a noticeable pause).
pub fn warm_up() {
    LazyLock::force(&JIEBA);
}

/// NFKC-normalizes and lowercases `text` (full-width `ＡＢＣ１２３` becomes `abc123`).
///
/// Fast path: ASCII and the CJK Unified Ideographs block are stable under NFKC (combining
/// class 0, quick-check Yes, never the second half of a composition), so the text is cut
/// before each such character, those characters are copied as they are, and only the
/// pieces holding other characters go through the NFKC algorithm. The result is the same
/// as normalizing the whole text at once. One pass: ASCII is passed by byte, other
/// characters are decoded once, and a run of stable characters is copied at once (with a
/// second look only when it holds a full-width form).
pub fn normalize(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let bytes = text.as_bytes();
    // `text[span..i]`: stable characters not yet copied, the last of them at `last`; and
    // whether a full-width form is among them.
    let (mut span, mut i, mut last, mut full_width) = (0, 0, 0, false);
    while i < bytes.len() {
        // ASCII eight bytes at a time, then byte by byte.
        if let Some(word) = bytes.get(i..i + 8)
            && u64::from_le_bytes(word.try_into().unwrap_or_default()) & 0x8080_8080_8080_8080 == 0
        {
            last = i + 7;
            i += 8;
            continue;
        }
        if bytes[i].is_ascii() {
            last = i;
            i += 1;
            continue;
        }
        // Ideographs, stable and not full-width, without decoding.
        let ideographs = cjk_unified_prefix(&bytes[i..]);
        if ideographs > 0 {
            last = i + ideographs - 3;
            i += ideographs;
            continue;
        }
        let c = text[i..].chars().next().unwrap_or_default();
        if is_stable(c) {
            full_width |= is_full_width(c);
            last = i;
            i += c.len_utf8();
            continue;
        }
        // Stable characters are copied as they are (ASCII lowercased), except the last one
        // before an unstable character: it may combine with what follows, so it goes
        // through NFKC with it.
        let copy_end = if span < i { last } else { i };
        push_span(&mut out, &text[span..copy_end], full_width);
        // The piece: that stable character (if any), the unstable characters after it, up
        // to the next stable character.
        let end = text[i..].find(is_stable).map_or(text.len(), |j| i + j);
        push_lowercase(&mut out, text[copy_end..end].nfkc());
        (span, i, full_width) = (end, end, false);
    }
    push_span(&mut out, &text[span..], full_width);
    out
}

/// Appends stable characters (see [`push_stable`]); `full_width` says whether a full-width
/// form may be among them (else only ASCII needs lowercasing).
#[inline]
fn push_span(out: &mut String, s: &str, full_width: bool) {
    if full_width {
        push_stable(out, s);
    } else {
        let start = out.len();
        out.push_str(s);
        out[start..].make_ascii_lowercase();
    }
}

/// The full-width ASCII forms (U+FF01–U+FF5E), NFKC-equivalent to U+0021–U+007E.
#[inline]
fn is_full_width(c: char) -> bool {
    ('\u{FF01}'..='\u{FF5E}').contains(&c)
}

/// Appends stable characters as NFKC + lowercase makes them: ASCII lowercased, full-width
/// ASCII forms (U+FF01–U+FF5E, NFKC-equivalent to U+0021–U+007E) as lowercase ASCII, the
/// rest as they are.
fn push_stable(out: &mut String, s: &str) {
    let mut rest = s;
    while let Some(i) = find_full_width(rest) {
        let start = out.len();
        out.push_str(&rest[..i]);
        out[start..].make_ascii_lowercase();
        let c = rest[i..].chars().next().unwrap_or_default();
        let ascii = char::from_u32(c as u32 - 0xFEE0).unwrap_or(c);
        out.push(ascii.to_ascii_lowercase());
        rest = &rest[i + c.len_utf8()..];
    }
    let start = out.len();
    out.push_str(rest);
    out[start..].make_ascii_lowercase();
}

/// The byte offset of the first full-width ASCII form in `s` ([`is_full_width`]): their
/// UTF-8 lead byte 0xEF is rare in text (it is found with `memchr`), and a lead byte is
/// always a character's start.
#[inline]
fn find_full_width(s: &str) -> Option<usize> {
    let mut from = 0;
    while let Some(j) = memchr::memchr(0xEF, &s.as_bytes()[from..]) {
        let i = from + j;
        if s[i..].chars().next().is_some_and(is_full_width) {
            return Some(i);
        }
        from = i + 1;
    }
    None
}

fn push_lowercase(out: &mut String, chars: impl Iterator<Item = char>) {
    for c in chars {
        if c.is_uppercase() {
            out.extend(c.to_lowercase());
        } else {
            out.push(c);
        }
    }
}

/// Characters that NFKC maps one to one and never combines with a neighbour: ASCII, the CJK
/// Unified Ideographs, common CJK and general punctuation (、。〈〉《》「」『』【】 and curly
/// quotes, which NFKC leaves as they are) and the full-width ASCII forms (which it maps to
/// ASCII, see [`push_stable`]).
#[inline]
fn is_stable(c: char) -> bool {
    c.is_ascii()
        || matches!(c,
            '\u{4E00}'..='\u{9FFF}'
            | '\u{3001}'..='\u{3002}'
            | '\u{3008}'..='\u{3011}'
            | '\u{2018}'..='\u{201D}'
            | '\u{FF01}'..='\u{FF5E}')
}

/// The CJK Unified Ideographs block (U+4E00–U+9FFF): the Han characters of everyday text.
pub const CJK_UNIFIED: std::ops::RangeInclusive<char> = '\u{4E00}'..='\u{9FFF}';

/// The position of `c` in [`CJK_UNIFIED`], for tables indexed by character.
#[inline]
pub fn cjk_unified_index(c: char) -> Option<usize> {
    CJK_UNIFIED
        .contains(&c)
        .then(|| c as usize - *CJK_UNIFIED.start() as usize)
}

/// Number of characters in [`CJK_UNIFIED`].
pub const CJK_UNIFIED_LEN: usize = *CJK_UNIFIED.end() as usize - *CJK_UNIFIED.start() as usize + 1;

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

/// `c.is_alphanumeric()`, quickly for ASCII and for the punctuation blocks of CJK text
/// (U+2000–U+206F and U+3000–U+3004, U+3008–U+3020, U+FF01–U+FF0F), which hold no letter
/// or digit.
#[inline]
pub fn is_word_char(c: char) -> bool {
    if c.is_ascii() {
        return c.is_ascii_alphanumeric();
    }
    if matches!(c, '\u{2000}'..='\u{206F}' | '\u{3000}'..='\u{3004}' | '\u{3008}'..='\u{3020}' | '\u{FF01}'..='\u{FF0F}')
    {
        return false;
    }
    c.is_alphanumeric()
}

/// Calls `emit(run, is_han)` with every run of word characters of already-normalized
/// `text`, in order: a run of Han characters ([`is_han`]) with `true`, a run of other
/// letters and digits with `false`. Any other character ends a run and is not emitted.
///
/// ASCII is classified 64 bytes at a time where they are all ASCII (the runs' bounds from
/// a bitmap of letters and digits), else by byte, without decoding; other characters one
/// by one.
pub fn for_each_run(text: &str, mut emit: impl FnMut(&str, bool)) {
    let _ = try_for_each_run(text, |run, han| {
        emit(run, han);
        ControlFlow::Continue(())
    });
}

/// [`for_each_run`] until `emit` breaks (then it returns the break).
pub(crate) fn try_for_each_run(
    text: &str,
    mut emit: impl FnMut(&str, bool) -> ControlFlow<()>,
) -> ControlFlow<()> {
    let bytes = text.as_bytes();
    let mut runs = RunSplit {
        run: Run::None,
        start: 0,
    };
    let mut i = 0;
    while i < bytes.len() {
        let end = (i + 64).min(bytes.len());
        // (Bytes that start with a non-ASCII one, as Chinese text's do, are not tried.)
        if let Some(masks) = bytes[i]
            .is_ascii()
            .then(|| AsciiMasks::of(&bytes[i..end]))
            .flatten()
        {
            runs.ascii_chunk(text, i, end - i, masks.alnum, &mut emit)?;
            i = end;
            continue;
        }
        while i < end {
            i = runs.step(text, i, &mut emit)?;
        }
    }
    if runs.run != Run::None {
        emit(&text[runs.start..], runs.run == Run::Han)?;
    }
    ControlFlow::Continue(())
}

/// The kind of run [`for_each_run`] is in.
#[derive(PartialEq, Clone, Copy)]
enum Run {
    None,
    Han,
    Word,
}

/// [`for_each_run`]'s state: the run it is in and the byte it started at.
struct RunSplit {
    run: Run,
    start: usize,
}

impl RunSplit {
    /// Takes the character at byte `i` of `text` (or the run of CJK Unified Ideographs
    /// there); returns the byte after it, unless `emit` breaks.
    #[inline(always)]
    fn step(
        &mut self,
        text: &str,
        i: usize,
        emit: &mut impl FnMut(&str, bool) -> ControlFlow<()>,
    ) -> ControlFlow<(), usize> {
        let b = text.as_bytes()[i];
        let (kind, len) = if b.is_ascii() {
            let kind = if b.is_ascii_alphanumeric() {
                Run::Word
            } else {
                Run::None
            };
            (kind, 1)
        } else if let ideographs @ 1.. = cjk_unified_prefix(&text.as_bytes()[i..]) {
            // A run of CJK Unified Ideographs: Han characters all.
            (Run::Han, ideographs)
        } else {
            let c = text[i..].chars().next().unwrap_or_default();
            let kind = if is_han(c) {
                Run::Han
            } else if is_word_char(c) {
                Run::Word
            } else {
                Run::None
            };
            (kind, c.len_utf8())
        };
        if kind != self.run {
            if self.run != Run::None {
                emit(&text[self.start..i], self.run == Run::Han)?;
            }
            self.run = kind;
            self.start = i;
        }
        ControlFlow::Continue(i + len)
    }

    /// Takes the `n` (1..=64) ASCII bytes of `text` from byte `base` on, whose letters and
    /// digits are the bits of `alnum`: what [`RunSplit::step`] does one by one, a step per
    /// run (until `emit` breaks).
    #[inline]
    fn ascii_chunk(
        &mut self,
        text: &str,
        base: usize,
        n: usize,
        alnum: u64,
        emit: &mut impl FnMut(&str, bool) -> ControlFlow<()>,
    ) -> ControlFlow<()> {
        if self.run == Run::Han {
            emit(&text[self.start..base], true)?;
            self.run = Run::None;
        }
        let before = alnum << 1 | u64::from(self.run == Run::Word);
        let mut starts = alnum & !before;
        let mut ends = !alnum & low_bits(n) & before;
        while ends != 0 {
            if self.run != Run::Word {
                self.start = base + starts.trailing_zeros() as usize;
                starts &= starts - 1;
            }
            emit(
                &text[self.start..base + ends.trailing_zeros() as usize],
                false,
            )?;
            self.run = Run::None;
            ends &= ends - 1;
        }
        if starts != 0 {
            (self.run, self.start) = (Run::Word, base + starts.trailing_zeros() as usize);
        }
        ControlFlow::Continue(())
    }
}

/// Calls `emit` with every token of already-normalized `text`, in order.
///
/// Han runs ([`for_each_run`]) are cut by jieba (dictionary words only: its HMM for unknown
/// words is off, as it doubles jieba's cost and the fingerprint counts every word's
/// characters anyway); other alphanumeric runs are single tokens.
pub fn tokenize(text: &str, mut emit: impl FnMut(&str)) {
    tokenize_runs(text, |token, _| emit(token));
}

/// [`tokenize`], passing with each token whether it is from a Han run (then all its
/// characters are Han characters, [`is_han`]; else none is).
pub(crate) fn tokenize_runs(text: &str, mut emit: impl FnMut(&str, bool)) {
    for_each_run(text, |run, han| {
        if han {
            // A run of Han characters only: every token jieba returns is a word.
            for piece in han_pieces(run) {
                for token in JIEBA.cut(piece, false) {
                    emit(token.word, true);
                }
            }
        } else {
            emit(run, false);
        }
    });
}

/// Most characters of a Han run that jieba segments at once. Its memory grows with the
/// run it is given (its graph of candidate words, and the words), and text without
/// punctuation has runs of any length: a longer run is cut into pieces of this many
/// characters, each segmented alone. Runs of natural text are far shorter (sentences).
pub(crate) const MAX_HAN_PIECE: usize = 1024;

/// `run` in consecutive pieces of at most [`MAX_HAN_PIECE`] characters.
fn han_pieces(run: &str) -> impl Iterator<Item = &str> {
    let mut rest = run;
    std::iter::from_fn(move || {
        if rest.is_empty() {
            return None;
        }
        let end = (rest.char_indices().nth(MAX_HAN_PIECE)).map_or(rest.len(), |(at, _)| at);
        let (piece, tail) = rest.split_at(end);
        rest = tail;
        Some(piece)
    })
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
    use crate::text::test_input::texts;

    #[test]
    fn normalizes_width_and_case() {
        assert_eq!(normalize("ＡＢＣ１２３ Hello"), "abc123 hello");
        assert_eq!(normalize("Ｗｏｒｌｄ！"), "world!");
    }

    #[test]
    fn fast_path_equals_full_nfkc() {
        for text in [
            "Cafe\u{301} ＡＢＣ，中文（全角）ｶﾀｶﾅ ﬁ ① Ⅻ ㍿ e\u{301}\u{323}x 한국어 \u{1100}\u{1161}",
            "abc\u{300}中\u{300}",
            "\u{301}leading mark",
            "",
        ] {
            let mut full = String::new();
            push_lowercase(&mut full, text.nfkc());
            assert_eq!(normalize(text), full, "{text:?}");
        }
        // Random mixes of stable characters, combining marks and compatibility forms.
        let alphabet: Vec<char> =
            "aZ9 .中文\u{300}\u{301}\u{323}\u{3099}ＡＢ，ｅ～ｶﾞﾟﬁ①한\u{1100}\u{1161}\u{11a8}eÉ。「」“‘、"
                .chars()
                .collect();
        let mut x = 0x2545_F491_4F6C_DD1Du64;
        for _ in 0..50_000 {
            let len = (x % 12) as usize;
            let text: String = (0..len)
                .map(|_| {
                    x ^= x << 13;
                    x ^= x >> 7;
                    x ^= x << 17;
                    alphabet[(x % alphabet.len() as u64) as usize]
                })
                .collect();
            let mut full = String::new();
            push_lowercase(&mut full, text.nfkc());
            assert_eq!(normalize(&text), full, "{text:?}");
        }
    }

    #[test]
    fn word_chars_are_alphanumeric_chars() {
        for c in (0..0x11_0000).filter_map(char::from_u32) {
            assert_eq!(is_word_char(c), c.is_alphanumeric(), "{c:?}");
        }
    }

    /// Runs split one character at a time, as before the 64-byte chunks.
    fn runs_one_at_a_time(text: &str) -> Vec<(String, bool)> {
        let mut runs: Vec<(String, bool)> = Vec::new();
        let mut last: Option<bool> = None;
        for c in text.chars() {
            let kind = if is_han(c) {
                Some(true)
            } else if is_word_char(c) {
                Some(false)
            } else {
                None
            };
            match (kind, last) {
                (Some(k), Some(l)) if k == l => runs.last_mut().unwrap().0.push(c),
                (Some(k), _) => runs.push((c.to_string(), k)),
                (None, _) => {}
            }
            last = kind;
        }
        runs
    }

    #[test]
    fn runs_split_in_chunks_as_one_character_at_a_time() {
        let pieces = [
            "the",
            "x",
            "9",
            "2026",
            "a1b2",
            " ",
            "  ",
            ".",
            ",",
            "-",
            "中文",
            "的",
            "é",
            "café",
            "ｶ",
            "\u{a0}",
            "。",
            "thethethethethethethethethethe",
            "北京天气很好",
        ];
        for text in texts(&pieces, 0x2545_F491_4F6C_DD1D, 20_000) {
            let mut got = Vec::new();
            for_each_run(&text, |run, han| got.push((run.to_owned(), han)));
            assert_eq!(got, runs_one_at_a_time(&text), "{text:?}");
        }
    }

    #[test]
    fn splits_scripts() {
        assert_eq!(tokens("Hello, world! 2026"), ["hello", "world", "2026"]);
        assert_eq!(tokens("我们去北京。OK"), ["我们", "去", "北京", "ok"]);
        assert!(tokens("，。！？ ... ---").is_empty());
        assert!(tokens("").is_empty());
    }

    #[test]
    fn long_han_runs_are_segmented_in_pieces() {
        // A run of 2.5 pieces with "北京" across each cut: every character comes back once,
        // in order, and no word spans a cut.
        let unit = "我们去北京";
        let run = unit.repeat(MAX_HAN_PIECE / 2);
        let pieces: Vec<&str> = han_pieces(&run).collect();
        assert_eq!(pieces.concat(), run);
        assert_eq!(pieces.len(), 3);
        assert!(pieces.iter().all(|p| p.chars().count() <= MAX_HAN_PIECE));
        let mut words = Vec::new();
        tokenize(&run, |t| words.push(t.to_owned()));
        assert_eq!(words.concat(), run);
        let mut cuts = Vec::new();
        let mut at = 0;
        for w in &words {
            at += w.chars().count();
            cuts.push(at);
        }
        assert!(cuts.contains(&MAX_HAN_PIECE) && cuts.contains(&(2 * MAX_HAN_PIECE)));
        // A run of at most one piece is segmented whole, as before.
        assert_eq!(han_pieces(unit).collect::<Vec<_>>(), [unit]);
        assert_eq!(han_pieces("").count(), 0);
    }
}
