//! The 64-bit SimHash fingerprint: the value every stage passes on.

use std::fmt;
use std::str::FromStr;

use crate::error::{Error, Result};

/// A 64-bit SimHash fingerprint. Displayed and parsed as exactly 16 hexadecimal digits.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Fingerprint(pub u64);

impl Fingerprint {
    /// The Hamming distance between two fingerprints (number of differing bits).
    #[inline]
    pub fn distance(self, other: Fingerprint) -> u32 {
        (self.0 ^ other.0).count_ones()
    }
}

impl fmt::Display for Fingerprint {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:016x}", self.0)
    }
}

impl FromStr for Fingerprint {
    type Err = Error;

    /// Parses exactly 16 hexadecimal digits (either case), nothing else.
    fn from_str(s: &str) -> Result<Self> {
        if s.len() != 16 || !s.bytes().all(|b| b.is_ascii_hexdigit()) {
            return Err(Error::InvalidFingerprint {
                input: s.chars().take(40).collect(),
            });
        }
        u64::from_str_radix(s, 16)
            .map(Fingerprint)
            .map_err(|_| Error::InvalidFingerprint {
                input: s.to_owned(),
            })
    }
}
