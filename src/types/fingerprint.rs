//! The 64-bit SimHash fingerprint: the value every stage passes on.

use std::fmt;
use std::str::FromStr;

use crate::error::{Error, Result};

/// A 64-bit SimHash fingerprint. Displayed and parsed as exactly 16 hexadecimal digits.
///
/// ```
/// use simstore::Fingerprint;
/// let a: Fingerprint = "00000000000000ff".parse().unwrap();
/// assert_eq!(a.to_string(), "00000000000000ff");
/// assert_eq!(a.distance(Fingerprint(0)), 8);
/// ```
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

    /// Parses exactly 16 hexadecimal digits (either case), optionally after `0x` or `0X`.
    fn from_str(input: &str) -> Result<Self> {
        let s = input
            .strip_prefix("0x")
            .or_else(|| input.strip_prefix("0X"))
            .unwrap_or(input);
        if s.len() != 16 || !s.bytes().all(|b| b.is_ascii_hexdigit()) {
            return Err(Error::InvalidFingerprint {
                input: input.chars().take(40).collect(),
            });
        }
        u64::from_str_radix(s, 16)
            .map(Fingerprint)
            .map_err(|_| Error::InvalidFingerprint {
                input: input.to_owned(),
            })
    }
}
