//! The key layout of a store on Redis Cluster. Members and values are the byte layouts of
//! the parent module; this module names the keys that hold them.
//!
//! The keys (`NAME:m`, `NAME:d:…`, `NAME:i:…`, `NAME:e:…`, `NAME:t<t>:…`) and their types:
//! the table in docs/scaling.md; a table member: [`table_member`].
//!
//! Numbers in key names are lower-case hex. A `<bucket>` is the top `bucket_bits` bits of
//! the xxh3 hash of the id (`ids`), of the content hash (`exact`) or of the permuted
//! fingerprint (tables), so that a prefix span of a table is one bucket (or a few
//! consecutive ones) and `ZRANGEBYLEX` on it is the span. No key has a hash tag: buckets
//! spread over every slot. `bucket_bits` is chosen when the store is created so that
//! buckets hold about [`BUCKET_TARGET`] entries at the expected size, small enough for
//! Redis's compact listpack encoding.

use xxhash_rust::xxh3::xxh3_64;

use crate::error::{Error, Result};

/// Entries per bucket aimed at when choosing `bucket_bits`.
pub const BUCKET_TARGET: u64 = 64;

/// Documents per `docs` bucket (a power of two).
pub const DOCS_PER_BUCKET_BITS: u32 = 7;

/// The largest `bucket_bits`.
pub const MAX_BUCKET_BITS: u32 = 24;

/// Field names of the meta hash.
pub mod field {
    /// The manifest.
    pub const MANIFEST: &str = "manifest";
    /// Present while a bulk load is under way.
    pub const BULK_PENDING: &str = "bulk-pending";
    /// Present while a repair is under way.
    pub const REPAIR_PENDING: &str = "repair-pending";
    /// The new manifest while a relayout is under way.
    pub const RELAYOUT_PENDING: &str = "relayout-pending";
    /// The retention policy ([`super::super::retention`]).
    pub const RETENTION: &str = "retention";
    /// The timeline mark ([`super::super::retention`]).
    pub const TIMELINE: &str = "timeline";
    /// The next unallocated sequence number.
    pub const NEXT_SEQ: &str = "next_seq";
    /// Live documents.
    pub const LIVE: &str = "live";
    /// The bucket bits of `ids`, `exact` and the tables.
    pub const BUCKET_BITS: &str = "bucket_bits";
}

/// The bucket bits for a store expected to hold `expected_docs` documents: the fewest
/// that keep buckets at [`BUCKET_TARGET`] entries or under on average (so that even the
/// fullest stay under Redis's listpack limit of 128 entries, at the expected size).
pub fn bucket_bits_for(expected_docs: u64) -> u32 {
    let buckets = expected_docs.div_ceil(BUCKET_TARGET).max(1);
    (64 - (buckets - 1).leading_zeros()).min(MAX_BUCKET_BITS)
}

/// The largest sequence number a table member holds (40 bits: a trillion documents).
pub const MAX_MEMBER_SEQ: u64 = (1 << 40) - 1;

/// A table member: the permuted fingerprint (8 bytes, big-endian, so byte order is numeric
/// order) then the sequence number in 5 bytes (3 fewer than the RocksDB key: tables hold
/// most of a store's memory on Redis). Errors past [`MAX_MEMBER_SEQ`].
pub fn table_member(permuted: u64, seq: u64) -> Result<[u8; 13]> {
    if seq > MAX_MEMBER_SEQ {
        return Err(Error::TooLarge(format!(
            "sequence number {seq} does not fit a Redis table member (at most 2^40 - 1)"
        )));
    }
    let mut out = [0u8; 13];
    out[..8].copy_from_slice(&permuted.to_be_bytes());
    out[8..].copy_from_slice(&seq.to_be_bytes()[3..]);
    Ok(out)
}

/// Decodes a [`table_member`] into `(permuted fingerprint, seq)`.
pub fn decode_table_member(bytes: &[u8]) -> Result<(u64, u64)> {
    let bytes: &[u8; 13] = bytes.try_into().map_err(|_| {
        Error::Corrupt(format!(
            "a Redis table member is {} bytes, not 13",
            bytes.len()
        ))
    })?;
    let mut p = [0u8; 8];
    p.copy_from_slice(&bytes[..8]);
    let mut s = [0u8; 8];
    s[3..].copy_from_slice(&bytes[8..]);
    Ok((u64::from_be_bytes(p), u64::from_be_bytes(s)))
}

/// Whether `name` may name a store: 1 to 64 of `A-Z a-z 0-9 _ - .` (no braces, so no hash
/// tag, and no `:`, the separator).
pub fn valid_name(name: &str) -> bool {
    (1..=64).contains(&name.len())
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"_-.".contains(&b))
}

/// The keys of store `name` with `bits` bucket bits.
#[derive(Debug, Clone)]
pub struct Keys {
    name: String,
    bits: u32,
}

impl Keys {
    /// Keys of store `name` (see [`valid_name`]) with `bits` bucket bits.
    pub fn new(name: &str, bits: u32) -> Self {
        Self {
            name: name.to_owned(),
            bits: bits.min(MAX_BUCKET_BITS),
        }
    }

    /// The bucket bits.
    pub fn bits(&self) -> u32 {
        self.bits
    }

    /// Buckets per bucketed space.
    pub fn buckets(&self) -> u64 {
        1 << self.bits
    }

    /// The meta hash.
    pub fn meta(&self) -> String {
        format!("{}:m", self.name)
    }

    /// The `docs` bucket of `seq`.
    pub fn doc(&self, seq: u64) -> String {
        self.doc_bucket(seq >> DOCS_PER_BUCKET_BITS)
    }

    /// The `docs` bucket number `b` (holding seqs `b << 7 ..`).
    pub fn doc_bucket(&self, b: u64) -> String {
        format!("{}:d:{b:x}", self.name)
    }

    /// The `ids` bucket of `id`.
    pub fn id(&self, id: &str) -> String {
        self.id_bucket(self.top(xxh3_64(id.as_bytes())))
    }

    /// The `ids` bucket number `b`.
    pub fn id_bucket(&self, b: u64) -> String {
        format!("{}:i:{b:x}", self.name)
    }

    /// The `exact` bucket of content hash `hash`.
    pub fn exact(&self, hash: u128) -> String {
        self.exact_bucket(self.top((hash >> 64) as u64))
    }

    /// The `exact` bucket number `b`.
    pub fn exact_bucket(&self, b: u64) -> String {
        format!("{}:e:{b:x}", self.name)
    }

    /// The bucket number of permuted fingerprint `permuted` in a table.
    pub fn table_bucket_of(&self, permuted: u64) -> u64 {
        self.top(permuted)
    }

    /// Table `t`'s bucket number `b`.
    pub fn table_bucket(&self, t: usize, b: u64) -> String {
        format!("{}:t{t}:{b:x}", self.name)
    }

    fn top(&self, x: u64) -> u64 {
        if self.bits == 0 {
            0
        } else {
            x >> (64 - self.bits)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bucket_bits_aim_at_64_entries() {
        assert_eq!(bucket_bits_for(0), 0);
        assert_eq!(bucket_bits_for(64), 0);
        assert_eq!(bucket_bits_for(65), 1);
        assert_eq!(bucket_bits_for(1_000_000), 14);
        assert_eq!(bucket_bits_for(10_000_000), 18);
        assert_eq!(bucket_bits_for(u64::MAX), MAX_BUCKET_BITS);
    }

    #[test]
    fn table_members_round_trip_in_numeric_order() {
        let a = table_member(5, MAX_MEMBER_SEQ).unwrap();
        let b = table_member(6, 0).unwrap();
        assert!(a < b);
        assert_eq!(decode_table_member(&a).unwrap(), (5, MAX_MEMBER_SEQ));
        assert!(table_member(1, MAX_MEMBER_SEQ + 1).is_err());
        assert!(decode_table_member(&[0; 16]).is_err());
    }

    #[test]
    fn names_and_buckets() {
        assert!(valid_name("simstore") && valid_name("a.b-c_1"));
        assert!(!valid_name("") && !valid_name("a{b}") && !valid_name("a:b"));
        let k = Keys::new("s", 4);
        assert_eq!(
            k.table_bucket(3, k.table_bucket_of(0xA000_0000_0000_0001)),
            "s:t3:a"
        );
        assert_eq!(k.doc(300), "s:d:2");
        assert_eq!(k.exact(0xF << 124), "s:e:f");
        assert_eq!(Keys::new("s", 0).table_bucket_of(u64::MAX), 0);
    }
}
