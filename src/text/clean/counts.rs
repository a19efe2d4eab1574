//! What line classification ([`super::classify`]) counts of a line, in one pass over its
//! characters: 64 bytes at a time from class bitmaps where they are all ASCII (English
//! text, mostly), else a table-driven step per ASCII byte, and runs of ASCII letters and
//! digits or of CJK Unified Ideographs at once. English stop words are counted apart, and
//! only as far as the rule that needs them looks ([`function_words`]).

use std::ops::ControlFlow;

use super::{CLAUSE_MARKS, SEPARATORS, Script, is_function_index};
use crate::text::analyze::try_for_each_run;
use crate::text::ascii::{
    ALNUM, ASCII_CLASS, AsciiMasks, CLAUSE, DIGIT, SEPARATOR, SPACE, cjk_unified_offset,
    cjk_unified_prefix, low_bits,
};
use crate::text::stop_words::{is_english_stop_word, is_foreign_function_word};

/// True for a letter of the Latin script (ASCII, Latin-1, Latin Extended A to E and
/// Additional: Vietnamese), after NFKC.
fn is_latin(c: char) -> bool {
    matches!(c, '\0'..='\u{024F}' | '\u{1E00}'..='\u{1EFF}' | '\u{2C60}'..='\u{2C7F}' | '\u{A720}'..='\u{A7FF}' | '\u{AB30}'..='\u{AB6F}')
}

/// An English stop word or another language's function word.
fn is_function_word(run: &str) -> bool {
    is_english_stop_word(run.as_bytes()) || is_foreign_function_word(run)
}

/// What [`super::classify`] counts of a (trimmed) line, in one pass.
#[derive(Debug, Default, PartialEq, Eq)]
pub(super) struct LineCounts {
    /// Non-space characters.
    pub(super) chars: usize,
    /// All characters.
    pub(super) len: usize,
    /// Han characters.
    pub(super) han: usize,
    /// Han characters that are [`super::FUNCTION_CHARS`].
    pub(super) function_han: usize,
    /// Letters and digits.
    pub(super) alnum: usize,
    /// ASCII digits.
    pub(super) digits: usize,
    /// Whitespace-separated words.
    pub(super) words: usize,
    /// Separator-delimited ([`SEPARATORS`]) non-empty items.
    pub(super) items: usize,
    /// [`CLAUSE_MARKS`].
    pub(super) clause_marks: usize,
    /// Letters of scripts other than Latin and Han (Cyrillic, Greek, Arabic, Devanagari,
    /// Thai...), whose function words the cleaner does not know.
    pub(super) non_latin: usize,
    /// Runs of letters and digits ([`crate::text::analyze::is_word_char`]); how many of
    /// them are English stop words is counted only where a rule needs it
    /// ([`function_words`]).
    pub(super) alnum_words: usize,
}

/// The state of [`LineCounts::of`]'s pass over a line.
#[derive(Default)]
pub(super) struct LineScan {
    pub(super) n: LineCounts,
    /// Inside a whitespace-separated word.
    in_word: bool,
    /// Inside a separator-delimited item.
    item_open: bool,
    /// Inside a run of letters and digits.
    in_alnum: bool,
}

impl LineScan {
    /// Counts an ASCII character (table-driven; the same counts as [`LineScan::other`]).
    #[inline]
    pub(super) fn ascii(&mut self, b: u8) {
        let class = ASCII_CLASS[usize::from(b)];
        self.n.len += 1;
        if class & ALNUM == 0 {
            self.end_alnum();
        }
        if class & SPACE != 0 {
            self.in_word = false;
            return;
        }
        self.open_word();
        if class & SEPARATOR != 0 {
            self.end_item();
            return;
        }
        self.item_open = true;
        self.n.clause_marks += usize::from(class & CLAUSE != 0);
        if class & ALNUM != 0 {
            self.n.alnum += 1;
            self.n.digits += usize::from(class & DIGIT != 0);
            self.in_alnum = true;
        }
    }

    /// Counts the ASCII letters and digits from byte `i` on, inside a run of them (the
    /// word, item and run are open: each only adds to the counts, as [`LineScan::ascii`]
    /// would one by one); returns the byte after them.
    #[inline]
    fn alnum_run(&mut self, line: &[u8], i: usize) -> usize {
        let (mut end, mut digits) = (i, 0);
        while let Some(&b) = line.get(end) {
            let class = ASCII_CLASS[usize::from(b & 0x7f)];
            if b >= 0x80 || class & ALNUM == 0 {
                break;
            }
            digits += usize::from(class & DIGIT != 0);
            end += 1;
        }
        let run = end - i;
        self.n.len += run;
        self.n.chars += run;
        self.n.alnum += run;
        self.n.digits += digits;
        end
    }

    /// Counts the character at byte `i` of `line` (with the ASCII letters and digits after
    /// it, in a run of them; or the run of CJK Unified Ideographs there, undecoded); returns
    /// the byte after what it counted.
    #[inline(always)]
    fn step(&mut self, line: &str, i: usize) -> usize {
        let bytes = line.as_bytes();
        let b = bytes[i];
        if b.is_ascii() {
            self.ascii(b);
            if self.in_alnum {
                return self.alnum_run(bytes, i + 1);
            }
            i + 1
        } else if let ideographs @ 1.. = cjk_unified_prefix(&bytes[i..]) {
            self.ideographs(&bytes[i..i + ideographs]);
            i + ideographs
        } else {
            let c = line[i..].chars().next().unwrap_or_default();
            self.other(c);
            i + c.len_utf8()
        }
    }

    /// Counts a run of CJK Unified Ideographs (3 bytes each): Han letters, neither space,
    /// separator nor clause mark, each a function character or not by its bytes.
    #[inline]
    fn ideographs(&mut self, run: &[u8]) {
        let n = run.len() / 3;
        let function = run
            .chunks_exact(3)
            .filter(|c| is_function_index(cjk_unified_offset(c)))
            .count();
        self.n.len += n;
        self.n.chars += n;
        self.n.words += usize::from(!self.in_word);
        self.in_word = true;
        self.item_open = true;
        self.n.han += n;
        self.n.function_han += function;
        self.n.alnum += n;
        self.in_alnum = true;
    }

    /// Counts `n` (1..=64) ASCII bytes whose classes are `m`: the counts and the state that
    /// [`LineScan::ascii`] leaves after them one by one, from popcounts of the bitmaps, with
    /// a step only per separator.
    #[inline]
    fn ascii_chunk(&mut self, n: usize, m: &AsciiMasks) {
        let valid = low_bits(n);
        let nonspace = !m.space & valid;
        self.n.len += n;
        self.n.chars += nonspace.count_ones() as usize;
        self.n.words +=
            (nonspace & !(nonspace << 1 | u64::from(self.in_word))).count_ones() as usize;
        self.in_word = nonspace >> (n - 1) & 1 == 1;
        self.n.clause_marks += m.clause.count_ones() as usize;
        self.n.alnum += m.alnum.count_ones() as usize;
        self.n.digits += m.digit.count_ones() as usize;
        self.chunk_items(nonspace & !m.sep, m.sep);
        self.chunk_runs(n, m.alnum, valid);
    }

    /// [`LineScan::ascii_chunk`]'s items: each separator (bits of `seps`) closes the item
    /// before it if a character of an item (bits of `item_chars`) came since the previous
    /// separator.
    #[inline]
    fn chunk_items(&mut self, item_chars: u64, mut seps: u64) {
        let mut from = 0;
        while seps != 0 {
            let at = seps.trailing_zeros() as usize;
            self.item_open |= item_chars & low_bits(at) & !low_bits(from) != 0;
            self.end_item();
            from = at + 1;
            seps &= seps - 1;
        }
        self.item_open |= item_chars & !low_bits(from) != 0;
    }

    /// [`LineScan::ascii_chunk`]'s runs of letters and digits (bits of `alnum`): each one
    /// that ends in the chunk is counted where the byte after it is, as
    /// [`LineScan::end_alnum`] counts it; one still open at the chunk's end stays open.
    #[inline]
    fn chunk_runs(&mut self, n: usize, alnum: u64, valid: u64) {
        let before = alnum << 1 | u64::from(self.in_alnum);
        self.n.alnum_words += (!alnum & valid & before).count_ones() as usize;
        self.in_alnum = alnum >> (n - 1) & 1 == 1;
    }

    /// Counts a non-ASCII character.
    #[inline]
    pub(super) fn other(&mut self, c: char) {
        // A CJK Unified Ideograph is a run of one ([`LineScan::step`] takes whole runs).
        if crate::text::analyze::cjk_unified_index(c).is_some() {
            return self.ideographs(c.encode_utf8(&mut [0; 4]).as_bytes());
        }
        self.n.len += 1;
        if c.is_whitespace() {
            self.in_word = false;
            self.end_alnum();
            return;
        }
        self.open_word();
        if SEPARATORS.contains(&c) {
            self.end_item();
            self.end_alnum();
            return;
        }
        self.item_open = true;
        self.n.clause_marks += usize::from(CLAUSE_MARKS.contains(&c));
        if crate::text::analyze::is_han(c) {
            // Outside the CJK Unified block: no function character.
            self.n.han += 1;
            self.alnum_other();
        } else if crate::text::analyze::is_word_char(c) {
            self.n.non_latin += usize::from(c.is_alphabetic() && !is_latin(c));
            self.alnum_other();
        } else {
            self.end_alnum();
        }
    }

    /// A non-space character: counted, and the start of a word after a space.
    #[inline]
    fn open_word(&mut self) {
        self.n.chars += 1;
        self.n.words += usize::from(!self.in_word);
        self.in_word = true;
    }

    /// A separator: it closes the item before it.
    #[inline]
    pub(super) fn end_item(&mut self) {
        self.n.items += usize::from(self.item_open);
        self.item_open = false;
    }

    /// A non-ASCII letter or digit: in a run of them, never an English stop word.
    #[inline]
    fn alnum_other(&mut self) {
        self.n.alnum += 1;
        self.in_alnum = true;
    }

    /// A character that is no letter or digit ends the run of them before it.
    #[inline]
    pub(super) fn end_alnum(&mut self) {
        self.n.alnum_words += usize::from(self.in_alnum);
        self.in_alnum = false;
    }
}

impl LineCounts {
    /// Counts `line` in one pass over its characters.
    pub(super) fn of(line: &str) -> Self {
        let mut scan = LineScan::default();
        let bytes = line.as_bytes();
        let mut i = 0;
        while i < bytes.len() {
            let end = (i + 64).min(bytes.len());
            // (Bytes that start with a non-ASCII one, as Chinese text's do, are not tried.)
            if let Some(masks) = bytes[i]
                .is_ascii()
                .then(|| AsciiMasks::of(&bytes[i..end]))
                .flatten()
            {
                scan.ascii_chunk(end - i, &masks);
                i = end;
                continue;
            }
            // A non-ASCII character in these 64 bytes: one character (or ASCII run) at a
            // time to their end, or just past it.
            while i < end {
                i = scan.step(line, i);
            }
        }
        scan.end_alnum();
        scan.end_item();
        scan.n
    }

    /// The line's script: Han if it has any Han character.
    pub(super) fn script(&self) -> Script {
        if self.han > 0 {
            Script::Han
        } else {
            Script::Other
        }
    }
}

/// How many runs of letters and digits of `line` (a line without Han characters, so every
/// run [`try_for_each_run`] finds is one) are function words — English
/// [`STOP_WORDS`](crate::text::stop_words::STOP_WORDS) or another language's
/// ([`is_foreign_function_word`]) —, counted up to `enough`: a rule that needs a few of them
/// stops looking there (prose has them in its first words).
pub(super) fn function_words(line: &str, enough: usize) -> usize {
    let mut count = 0;
    if enough > 0 {
        let _ = try_for_each_run(line, |run, _| {
            count += usize::from(is_function_word(run));
            if count < enough {
                ControlFlow::Continue(())
            } else {
                ControlFlow::Break(())
            }
        });
    }
    count
}

#[cfg(test)]
pub(super) mod tests {
    use super::*;
    use crate::text::test_input::texts;

    /// The counts of one character at a time: [`LineScan::ascii`] and [`LineScan::other`]
    /// alone, no ASCII runs nor chunks.
    pub(in crate::text::clean) fn one_at_a_time(line: &str) -> LineCounts {
        let mut scan = LineScan::default();
        for c in line.chars() {
            match u8::try_from(c) {
                Ok(b) if b.is_ascii() => scan.ascii(b),
                _ => scan.other(c),
            }
        }
        scan.end_alnum();
        scan.end_item();
        scan.n
    }

    /// Stop words counted one run of letters and digits at a time (runs split at every other
    /// character), up to `enough`.
    fn function_words_by_split(line: &str, enough: usize) -> usize {
        line.split(|c: char| !crate::text::analyze::is_word_char(c))
            .filter(|w| !w.is_empty() && is_function_word(w))
            .count()
            .min(enough)
    }

    /// Lines without Han characters of every length around the 64-byte chunks (ASCII-only
    /// and mixed): their stop words are counted, up to any bound, as by splitting.
    #[test]
    fn function_words_in_chunks_are_counted_as_by_splitting() {
        let pieces = [
            "the",
            "of",
            "and",
            "to",
            "a",
            "it",
            "budget",
            "x",
            "9",
            "2026",
            " ",
            "  ",
            ",",
            ". ",
            "|",
            "-",
            "é",
            "café",
            "the\u{e9}",
            "\u{a0}",
            "»",
            "thethethe",
            "und",
            "für",
            "się",
        ];
        let mut capped = 0;
        for line in texts(&pieces, 0x0DDB_1A5E_5BAD_5EED, 20_000) {
            let all = function_words_by_split(&line, usize::MAX);
            assert_eq!(function_words(&line, usize::MAX), all, "{line:?}");
            for enough in [0, 1, 2, all / 2, all.saturating_sub(1), all + 1] {
                let got = function_words(&line, enough);
                assert_eq!(got, all.min(enough), "{line:?} up to {enough}");
                capped += usize::from(enough < all);
            }
        }
        assert!(capped > 10_000, "{capped} capped counts");
    }

    /// Lines of every length around the 64-byte chunks, from words (stop words among them),
    /// separators, clause marks, spaces and non-ASCII characters (Han, accented, a
    /// full-width bar, a no-break space), count as one character at a time.
    #[test]
    fn chunks_count_as_one_character_at_a_time() {
        let pieces = [
            "the",
            "of",
            "and",
            "budget",
            "x",
            "9",
            "2026",
            "a1b2",
            " ",
            " ",
            "  ",
            "\t",
            "|",
            ">",
            " | ",
            ",",
            ";",
            "!",
            "?",
            ".",
            "-",
            "中",
            "的",
            "é",
            "｜",
            "\u{a0}",
            "»",
            "。",
            "thethethethethethethe",
        ];
        for line in texts(&pieces, 0x9E37_79B9_7F4A_7C15, 20_000) {
            assert_eq!(LineCounts::of(&line), one_at_a_time(&line), "{line:?}");
        }
    }
}
