//! The 64-byte shingle sketch a document keeps for the two-stage query (built by
//! [`crate::text::sketch::SketchBuilder`]).

/// Bytes of a sketch: [`MINIMA`] minima and the [`Sketch::shingles`] byte.
pub const SLOTS: usize = 64;

/// Number of minima kept (each reduced to its low byte).
pub const MINIMA: usize = SLOTS - 1;

/// Bit of the last byte set when most of the text's shingles are of Han characters
/// ([`Sketch::han_chars`]); the byte's low six bits count the bins filled.
pub const HAN_CHARS_FLAG: u8 = 0x80;

/// Bit of the last byte set when the sketch is of a web page's whole visible text, not of
/// its main text alone ([`Sketch::whole_text`]).
pub const WHOLE_TEXT_FLAG: u8 = 0x40;

/// The bits of the last byte that count the bins filled ([`Sketch::shingles`]).
const SHINGLES_MASK: u8 = !(HAN_CHARS_FLAG | WHOLE_TEXT_FLAG);

/// A b-bit MinHash sketch (b = 8, 63 minima) and, in its last byte, how many of the 63
/// bins the text's shingles filled ([`Sketch::shingles`]) and whether they are mostly Han
/// character shingles ([`Sketch::han_chars`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Sketch(pub [u8; SLOTS]);

impl Sketch {
    /// Its size in bytes (one per minimum, one for the bins filled).
    pub const BYTES: usize = SLOTS;

    /// A sketch whose minima all equal `byte`, of a text that filled every bin: two such
    /// sketches are 1.0 similar when the bytes agree and ~0 when they differ (for tests and
    /// examples).
    pub fn uniform(byte: u8) -> Sketch {
        let mut s = [byte; SLOTS];
        s[MINIMA] = MINIMA as u8;
        Sketch(s)
    }

    /// How many of the `MINIMA` bins the text's distinct shingles filled before empty
    /// bins were filled from their neighbours: about the number of distinct shingles up to
    /// ~20, then a count that saturates at 63. A text with few distinct shingles has too
    /// little content for its sketch (or its fingerprint) to tell it apart from another
    /// short text.
    pub fn shingles(&self) -> u32 {
        u32::from(self.0[MINIMA] & SHINGLES_MASK)
    }

    /// Whether most of the text's shingles are of Han characters (Chinese text is shingled
    /// by characters, other text by words): such sketches agree more between different
    /// texts of one topic than word-shingle sketches do, so a quality mode's rule asks more
    /// of them as the fingerprints' distance grows (`MatchRule::threshold`).
    pub fn han_chars(&self) -> bool {
        self.0[MINIMA] & HAN_CHARS_FLAG != 0
    }

    /// Whether the sketch is of a page's whole visible text: the main text and what its
    /// reader left out (link lists), taken for a page whose reader left out much of it
    /// (`crate::index::page`). A rule takes a pair with such a sketch only within its
    /// reach, never by a shared band alone (`MatchRule::accepts`): the fingerprint speaks
    /// for the main texts, the sketch for the whole pages.
    pub fn whole_text(&self) -> bool {
        self.0[MINIMA] & WHOLE_TEXT_FLAG != 0
    }

    /// The sketch marked as one of a whole visible text ([`Sketch::whole_text`]).
    #[must_use]
    pub fn of_whole_text(mut self) -> Sketch {
        self.0[MINIMA] |= WHOLE_TEXT_FLAG;
        self
    }

    /// Estimated Jaccard similarity of the two shingle sets, in [0, 1]: the share of equal
    /// slots, corrected for the 1/256 chance that two different minima share their low byte.
    pub fn similarity(&self, other: &Sketch) -> f64 {
        let equal = self
            .0
            .iter()
            .zip(other.0.iter())
            .take(MINIMA)
            .filter(|(a, b)| a == b)
            .count();
        let p = equal as f64 / MINIMA as f64;
        let chance = 1.0 / 256.0;
        ((p - chance) / (1.0 - chance)).clamp(0.0, 1.0)
    }
}
