//! What line classification ([`super::classify`]) counts of a line, in one pass over its
//! characters: a table-driven step per ASCII byte, runs of ASCII letters and digits at once.

use super::{CLAUSE_MARKS, SEPARATORS, Script, is_function_index};
use crate::text::stop_words::is_english_stop_word;

/// What [`classify`] counts of a (trimmed) line, in one pass.
#[derive(Debug, Default, PartialEq, Eq)]
pub(super) struct LineCounts {
    /// Non-space characters.
    pub(super) chars: usize,
    /// All characters.
    pub(super) len: usize,
    /// Han characters.
    pub(super) han: usize,
    /// Han characters that are [`FUNCTION_CHARS`].
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
    /// Runs of letters and digits ([`crate::text::analyze::is_word_char`]).
    pub(super) alnum_words: usize,
    /// Those of them that are English [`STOP_WORDS`].
    pub(super) function_words: usize,
}

/// ASCII character classes of [`LineScan::ascii`], by byte.
const SPACE: u8 = 1;
const SEPARATOR: u8 = 2;
const CLAUSE: u8 = 4;
const ALNUM: u8 = 8;
const DIGIT: u8 = 16;
static ASCII_CLASS: [u8; 128] = {
    let mut table = [0u8; 128];
    let mut b = 0;
    while b < 128 {
        let c = b as u8 as char;
        table[b] = if c.is_whitespace() {
            SPACE
        } else if c == '|' || c == '>' {
            SEPARATOR
        } else if c == ',' || c == ';' || c == '!' || c == '?' {
            CLAUSE
        } else if c.is_ascii_digit() {
            ALNUM | DIGIT
        } else if c.is_ascii_alphanumeric() {
            ALNUM
        } else {
            0
        };
        b += 1;
    }
    table
};

/// The state of [`LineCounts::of`]'s pass over a line.
#[derive(Default)]
pub(super) struct LineScan {
    pub(super) n: LineCounts,
    /// Inside a whitespace-separated word.
    in_word: bool,
    /// Inside a separator-delimited item.
    item_open: bool,
    /// Inside a run of letters and digits ...
    in_alnum: bool,
    /// ... which started at this byte ...
    alnum_start: usize,
    /// ... and is ASCII so far (no English stop word holds another character).
    alnum_ascii: bool,
}

impl LineScan {
    /// Counts an ASCII character (table-driven; the same counts as [`LineScan::other`]).
    #[inline]
    pub(super) fn ascii(&mut self, line: &[u8], i: usize, b: u8) {
        let class = ASCII_CLASS[usize::from(b)];
        self.n.len += 1;
        if class & ALNUM == 0 {
            self.end_alnum(line, i);
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
            if !self.in_alnum {
                (self.in_alnum, self.alnum_start, self.alnum_ascii) = (true, i, true);
            }
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

    /// Counts a non-ASCII character.
    #[inline]
    pub(super) fn other(&mut self, line: &[u8], i: usize, c: char) {
        self.n.len += 1;
        // The common case of Chinese text first: a CJK Unified Ideograph is a word
        // character and neither space, separator nor clause mark.
        if let Some(index) = crate::text::analyze::cjk_unified_index(c) {
            self.open_word();
            self.item_open = true;
            self.n.han += 1;
            self.n.function_han += usize::from(is_function_index(index));
            self.alnum_other();
            return;
        }
        if c.is_whitespace() {
            self.in_word = false;
            self.end_alnum(line, i);
            return;
        }
        self.open_word();
        if SEPARATORS.contains(&c) {
            self.end_item();
            self.end_alnum(line, i);
            return;
        }
        self.item_open = true;
        self.n.clause_marks += usize::from(CLAUSE_MARKS.contains(&c));
        if crate::text::analyze::is_han(c) {
            // Outside the CJK Unified block: no function character.
            self.n.han += 1;
            self.alnum_other();
        } else if crate::text::analyze::is_word_char(c) {
            self.alnum_other();
        } else {
            self.end_alnum(line, i);
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
        self.alnum_ascii = false;
    }

    /// A character at byte `i` of `line` that is no letter or digit ends the run of them
    /// before it.
    #[inline]
    pub(super) fn end_alnum(&mut self, line: &[u8], i: usize) {
        if self.in_alnum {
            self.n.alnum_words += 1;
            self.n.function_words +=
                usize::from(self.alnum_ascii && is_english_stop_word(&line[self.alnum_start..i]));
            self.in_alnum = false;
        }
    }
}

impl LineCounts {
    /// Counts `line` in one pass over its characters.
    pub(super) fn of(line: &str) -> Self {
        let mut scan = LineScan::default();
        let bytes = line.as_bytes();
        let mut i = 0;
        while i < bytes.len() {
            let b = bytes[i];
            if b.is_ascii() {
                scan.ascii(bytes, i, b);
                i += 1;
                if scan.in_alnum {
                    i = scan.alnum_run(bytes, i);
                }
            } else {
                let c = line[i..].chars().next().unwrap_or_default();
                scan.other(bytes, i, c);
                i += c.len_utf8();
            }
        }
        scan.end_alnum(bytes, bytes.len());
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
