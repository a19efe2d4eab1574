//! The byte layouts of retention: the store's policy and its timeline mark, both in `meta`.

use crate::error::{Error, Result};
use crate::types::{Retention, TimeField};

/// Key of the retention policy in `meta` (value: [`encode_retention`]); absent: track
/// nothing, keep everything.
pub const RETENTION_KEY: &[u8] = b"retention";

/// Key of the timeline mark in `meta` (value: [`encode_timeline`]): the sequence number
/// from which stored times never decrease. Absent in a store of
/// [`super::TIMED_FORMAT`]: 0.
pub const TIMELINE_KEY: &[u8] = b"timeline";

/// Version byte of the retention value.
const RETENTION_VERSION: u8 = 1;

/// Encodes a retention policy: version 1, flags (bit 0: track last-seen; bit 1: by
/// last-seen), then the retained seconds u64 BE when there is a limit.
pub fn encode_retention(r: &Retention) -> Vec<u8> {
    let flags = u8::from(r.track_seen) | (u8::from(r.by == TimeField::Seen) << 1);
    let mut out = vec![RETENTION_VERSION, flags];
    if let Some(secs) = r.retain_secs {
        out.extend_from_slice(&secs.to_be_bytes());
    }
    out
}

/// Decodes a retention policy.
pub fn decode_retention(bytes: &[u8]) -> Result<Retention> {
    let bad = || {
        Error::Corrupt(format!(
            "the retention policy is undecodable ({bytes:02x?})"
        ))
    };
    let (&[version, flags], rest) = bytes.split_first_chunk::<2>().ok_or_else(bad)?;
    if version != RETENTION_VERSION || flags > 3 {
        return Err(bad());
    }
    let retain_secs = match rest.len() {
        0 => None,
        8 => Some(u64::from_be_bytes(rest.try_into().expect("8 bytes"))),
        _ => return Err(bad()),
    };
    Ok(Retention {
        track_seen: flags & 1 != 0,
        retain_secs,
        by: if flags & 2 != 0 {
            TimeField::Seen
        } else {
            TimeField::Stored
        },
    })
}

/// Encodes the timeline mark: a sequence number, u64 BE.
pub fn encode_timeline(ordered_from: u64) -> Vec<u8> {
    ordered_from.to_be_bytes().to_vec()
}

/// Decodes the timeline mark.
pub fn decode_timeline(bytes: &[u8]) -> Result<u64> {
    bytes
        .try_into()
        .map(u64::from_be_bytes)
        .map_err(|_| Error::Corrupt(format!("the timeline mark is {} bytes, not 8", bytes.len())))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn retention_round_trips_with_golden_bytes() {
        let r = Retention {
            track_seen: true,
            retain_secs: Some(86_400),
            by: TimeField::Seen,
        };
        let bytes = encode_retention(&r);
        assert_eq!(bytes, [1, 3, 0, 0, 0, 0, 0, 1, 0x51, 0x80]);
        assert_eq!(decode_retention(&bytes).unwrap(), r);
        let none = Retention::default();
        assert_eq!(encode_retention(&none), [1, 0]);
        assert_eq!(decode_retention(&[1, 0]).unwrap(), none);
        for bad in [&[][..], &[2, 0], &[1, 4], &[1, 0, 0]] {
            assert!(decode_retention(bad).is_err(), "{bad:?}");
        }
        assert_eq!(decode_timeline(&encode_timeline(77)).unwrap(), 77);
        assert!(decode_timeline(&[0; 7]).is_err());
    }
}
