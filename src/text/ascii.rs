//! ASCII character classes, and their bitmaps over 64 bytes at a time: what line cleaning
//! ([`crate::text::clean`]) counts and where tokenization ([`crate::text::analyze`]) splits
//! runs of letters and digits, without a branch per byte where the text is ASCII.

/// A whitespace character.
pub(crate) const SPACE: u8 = 1;
/// A separator of navigation items (`|`, `>`).
pub(crate) const SEPARATOR: u8 = 2;
/// A clause mark (`,`, `;`, `!`, `?`).
pub(crate) const CLAUSE: u8 = 4;
/// A letter or a digit.
pub(crate) const ALNUM: u8 = 8;
/// A digit.
pub(crate) const DIGIT: u8 = 16;
/// The classes of each ASCII byte (line cleaning's, `crate::text::clean`).
pub(crate) static ASCII_CLASS: [u8; 128] = {
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

/// The low `n` bits set (`n` ≤ 64).
#[inline]
pub(crate) fn low_bits(n: usize) -> u64 {
    if n >= 64 { u64::MAX } else { (1u64 << n) - 1 }
}

/// The length in bytes of the run of CJK Unified Ideographs (U+4E00–U+9FFF, 3 bytes each
/// in UTF-8) that `bytes` starts with: in valid UTF-8 from a character boundary, their lead
/// byte is 0xE5–0xE9, or 0xE4 before a byte of at least 0xB8. Chinese text is mostly such
/// runs, and they need no decoding to be classified.
#[inline]
pub(crate) fn cjk_unified_prefix(bytes: &[u8]) -> usize {
    let mut i = 0;
    while let [b0, b1, _, ..] = bytes[i..] {
        if !(matches!(b0, 0xE5..=0xE9) || (b0 == 0xE4 && b1 >= 0xB8)) {
            break;
        }
        i += 3;
    }
    i
}

/// The offset of the ideograph whose 3 UTF-8 bytes start `bytes` in the CJK Unified block
/// (as [`crate::text::analyze::cjk_unified_index`]); `bytes` starts a run of
/// [`cjk_unified_prefix`].
#[inline]
pub(crate) fn cjk_unified_offset(bytes: &[u8]) -> usize {
    let code = (usize::from(bytes[0] & 0x0F) << 12)
        | (usize::from(bytes[1] & 0x3F) << 6)
        | usize::from(bytes[2] & 0x3F);
    code - 0x4E00
}

/// [`ASCII_CLASS`] of up to 64 bytes as bitmaps: bit `i` for byte `i`, no bit past the
/// bytes.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub(crate) struct AsciiMasks {
    /// [`SPACE`] bytes.
    pub(crate) space: u64,
    /// [`SEPARATOR`] bytes.
    pub(crate) sep: u64,
    /// [`CLAUSE`] bytes.
    pub(crate) clause: u64,
    /// [`ALNUM`] bytes.
    pub(crate) alnum: u64,
    /// [`DIGIT`] bytes.
    pub(crate) digit: u64,
}

impl AsciiMasks {
    /// The bitmaps of `chunk` (at most 64 bytes), or `None` if it holds a non-ASCII byte.
    #[inline]
    pub(crate) fn of(chunk: &[u8]) -> Option<Self> {
        let mut m = Self::default();
        for (k, block) in chunk.chunks(16).enumerate() {
            let b = block_masks(block)?;
            let shift = 16 * k;
            m.space |= u64::from(b.space) << shift;
            m.sep |= u64::from(b.sep) << shift;
            m.clause |= u64::from(b.clause) << shift;
            m.alnum |= u64::from(b.alnum) << shift;
            m.digit |= u64::from(b.digit) << shift;
        }
        Some(m)
    }

    /// The bitmaps of `chunk` one byte at a time, from [`ASCII_CLASS`]: the definition
    /// [`block_masks`] is tested against, and its code where there is no SSE2.
    #[cfg(any(test, not(target_arch = "x86_64")))]
    fn by_table(chunk: &[u8]) -> Option<Self> {
        let mut m = Self::default();
        for (i, &b) in chunk.iter().enumerate() {
            let class = *ASCII_CLASS.get(usize::from(b))?;
            let bit = |flag: u8| u64::from(class & flag != 0) << i;
            m.space |= bit(SPACE);
            m.sep |= bit(SEPARATOR);
            m.clause |= bit(CLAUSE);
            m.alnum |= bit(ALNUM);
            m.digit |= bit(DIGIT);
        }
        Some(m)
    }
}

/// One 16-byte block's bitmaps (as the low 16 bits of [`AsciiMasks`]), or `None` if it
/// holds a non-ASCII byte.
#[derive(Debug, Clone, Copy)]
struct BlockMasks {
    space: u16,
    sep: u16,
    clause: u16,
    alnum: u16,
    digit: u16,
}

/// [`BlockMasks`] of up to 16 bytes with SSE2 compares: the classes of [`ASCII_CLASS`] as
/// byte ranges and equalities over the whole block at once.
#[cfg(target_arch = "x86_64")]
#[inline]
#[expect(
    unsafe_code,
    reason = "SSE2 intrinsics; SSE2 is part of x86-64, so every x86-64 CPU has it"
)]
fn block_masks(block: &[u8]) -> Option<BlockMasks> {
    use std::arch::x86_64::{
        __m128i, _mm_and_si128, _mm_cmpeq_epi8, _mm_cmpgt_epi8, _mm_cmplt_epi8, _mm_movemask_epi8,
        _mm_or_si128, _mm_set_epi64x, _mm_set1_epi8,
    };
    // Zero bytes after a short block: byte 0 is in no class.
    let mut bytes = [0u8; 16];
    bytes[..block.len()].copy_from_slice(block);
    let half = |h: &[u8]| i64::from_le_bytes(h.try_into().unwrap_or_default());
    // SAFETY (every block below): SSE2 intrinsics on values, no memory access; x86-64
    // CPUs all have SSE2.
    let v = unsafe { _mm_set_epi64x(half(&bytes[8..]), half(&bytes[..8])) };
    if unsafe { _mm_movemask_epi8(v) } != 0 {
        return None;
    }
    let is = |c: u8| unsafe { _mm_cmpeq_epi8(v, _mm_set1_epi8(c as i8)) };
    let or = |a: __m128i, b: __m128i| unsafe { _mm_or_si128(a, b) };
    // ASCII bytes are below 128, so signed compares order them.
    let within = |x: __m128i, lo: u8, hi: u8| unsafe {
        _mm_and_si128(
            _mm_cmpgt_epi8(x, _mm_set1_epi8(lo as i8 - 1)),
            _mm_cmplt_epi8(x, _mm_set1_epi8(hi as i8 + 1)),
        )
    };
    let bits = |x: __m128i| unsafe { _mm_movemask_epi8(x) } as u16;
    let digit = within(v, b'0', b'9');
    // Setting bit 5 maps 'A'..='Z' onto 'a'..='z' and no other byte into that range.
    let letter = within(or(v, unsafe { _mm_set1_epi8(0x20) }), b'a', b'z');
    Some(BlockMasks {
        space: bits(or(is(b' '), within(v, b'\t', b'\r'))),
        sep: bits(or(is(b'|'), is(b'>'))),
        clause: bits(or(or(is(b','), is(b';')), or(is(b'!'), is(b'?')))),
        alnum: bits(or(digit, letter)),
        digit: bits(digit),
    })
}

/// [`BlockMasks`] of up to 16 bytes from [`ASCII_CLASS`], one byte at a time.
#[cfg(not(target_arch = "x86_64"))]
#[inline]
fn block_masks(block: &[u8]) -> Option<BlockMasks> {
    let m = AsciiMasks::by_table(block)?;
    Some(BlockMasks {
        space: m.space as u16,
        sep: m.sep as u16,
        clause: m.clause as u16,
        alnum: m.alnum as u16,
        digit: m.digit as u16,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::text::test_input::xorshift;

    #[test]
    fn cjk_unified_runs_are_found_without_decoding() {
        let alphabet: Vec<char> = "\u{4DFF}\u{4E00}中\u{9FFF}\u{A000}a。、ＡÉ\u{3400}\u{20000}"
            .chars()
            .collect();
        let mut next = xorshift(0x9E37_79B9_7F4A_7C15);
        for _ in 0..20_000 {
            let len = (next() % 12) as usize;
            let text: String = (0..len)
                .map(|_| alphabet[(next() % alphabet.len() as u64) as usize])
                .collect();
            let want: usize = text
                .chars()
                .take_while(|c| crate::text::analyze::CJK_UNIFIED.contains(c))
                .map(char::len_utf8)
                .sum();
            assert_eq!(cjk_unified_prefix(text.as_bytes()), want, "{text:?}");
            for (i, c) in text.char_indices().take_while(|(i, _)| *i < want) {
                assert_eq!(
                    Some(cjk_unified_offset(&text.as_bytes()[i..])),
                    crate::text::analyze::cjk_unified_index(c),
                    "{c:?}"
                );
            }
        }
    }

    #[test]
    fn block_masks_are_the_class_table() {
        let mut next = xorshift(0x0123_4567_89AB_CDEF);
        let mut blocks: Vec<Vec<u8>> = (0u8..128).map(|b| vec![b; 16]).collect();
        blocks.extend((0..16).map(|n| (0..n as u8).map(|i| i * 7 + 9).collect()));
        for _ in 0..5_000 {
            let n = (next() % 17) as usize;
            blocks.push((0..n).map(|_| (next() % 130) as u8).collect());
        }
        for block in &blocks {
            let want = AsciiMasks::by_table(block);
            let got = AsciiMasks::of(block);
            assert_eq!(got, want, "{block:?}");
        }
    }
}
