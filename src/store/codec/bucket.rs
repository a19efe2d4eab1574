//! A permutation table's entries in RocksDB, packed by prefix: one key per `p`-bit prefix
//! of the permuted fingerprint (a *bucket*, `p` the table's prefix bits), its value every
//! entry `(permuted fingerprint, seq)` under that prefix, sorted, at a fixed width.
//!
//! | what | layout |
//! |---|---|
//! | key | the top `p` bits of π(fp) as a number, big-endian in ⌈p/8⌉ bytes (byte order is numeric order) |
//! | value | `p` (u8) ++ seq width `w` (u8, 1..=8) ++ entries, each the low `64 − p` bits of π(fp) in `s = ⌈(64 − p)/8⌉` bytes BE ++ seq in `w` bytes BE, sorted by (π(fp), seq) |
//! | merge operand | records of 18 bytes: `p` (u8) ++ [`ADD`] or [`REMOVE`] (u8) ++ π(fp) (u64 BE) ++ seq (u64 BE); a partial merge concatenates them |
//!
//! An entry costs `s + w` bytes and a bucket one RocksDB key, far less than a key per entry
//! (measured: docs/benchmarks.md). A probe seeks the bucket of its prefix and reads one
//! value; a candidate is a fixed-width slot decoded in our code, not a step of a RocksDB
//! iterator. Writes are merge operands, folded into the bucket by [`merge_bucket`] when
//! RocksDB reads or compacts it, so an insert never reads a bucket.

use crate::error::{Error, Result};

/// The tag of a merge record that adds an entry.
pub const ADD: u8 = 1;
/// The tag of a merge record that removes an entry.
pub const REMOVE: u8 = 0;

/// Bytes of one merge record.
pub const OP_LEN: usize = 18;

/// The name of the tables' RocksDB merge operator ([`merge_bucket`], [`concat_ops`]): a
/// program that opens a store's RocksDB database itself must set it on the table column
/// families, or RocksDB cannot read (or recover) the tables' merge records.
pub const MERGE_OPERATOR: &str = "simstore.bucket.1";

/// A bucket key (at most 8 bytes).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BucketKey {
    bytes: [u8; 8],
    len: u8,
}

impl AsRef<[u8]> for BucketKey {
    fn as_ref(&self) -> &[u8] {
        &self.bytes[8 - self.len as usize..]
    }
}

/// `bits` clamped to what a bucket prefix may be (1..=64).
#[inline]
fn clamp(bits: u32) -> u32 {
    bits.clamp(1, 64)
}

/// The low `64 − bits` bits' mask.
#[inline]
fn suffix_mask(bits: u32) -> u64 {
    match clamp(bits) {
        64 => 0,
        b => u64::MAX >> b,
    }
}

/// Bytes of a bucket key of `bits` prefix bits.
#[inline]
fn key_len(bits: u32) -> usize {
    clamp(bits).div_ceil(8) as usize
}

/// Bytes of an entry's fingerprint suffix in a bucket of `bits` prefix bits.
#[inline]
fn suffix_len(bits: u32) -> usize {
    (64 - clamp(bits)).div_ceil(8) as usize
}

/// Bytes a sequence number takes in a bucket (at least 1).
#[inline]
fn seq_len(seq: u64) -> usize {
    (8 - seq.leading_zeros() as usize / 8).max(1)
}

/// The key of the bucket holding `permuted` in a table of `bits` prefix bits.
#[inline]
pub fn bucket_key(permuted: u64, bits: u32) -> BucketKey {
    let bits = clamp(bits);
    let prefix = if bits == 64 {
        permuted
    } else {
        permuted >> (64 - bits)
    };
    BucketKey {
        bytes: prefix.to_be_bytes(),
        len: key_len(bits) as u8,
    }
}

/// A merge record: add (`add`) or remove the entry `(permuted, seq)` of a table of `bits`
/// prefix bits.
#[inline]
pub fn bucket_op(bits: u32, add: bool, permuted: u64, seq: u64) -> [u8; OP_LEN] {
    let mut op = [0u8; OP_LEN];
    op[0] = clamp(bits) as u8;
    op[1] = if add { ADD } else { REMOVE };
    op[2..10].copy_from_slice(&permuted.to_be_bytes());
    op[10..].copy_from_slice(&seq.to_be_bytes());
    op
}

/// A bucket's value, decoded enough to read its entries in place.
#[derive(Debug, Clone, Copy)]
pub struct Bucket<'a> {
    /// The bucket's prefix bits, in place (its smallest permuted fingerprint).
    base: u64,
    mask: u64,
    suffix: usize,
    width: usize,
    body: &'a [u8],
}

fn bad(what: impl std::fmt::Display) -> Error {
    Error::Corrupt(format!("a table bucket is malformed: {what}"))
}

impl<'a> Bucket<'a> {
    /// Reads the bucket stored under `key` in a table of `bits` prefix bits. Checks the
    /// header and the lengths (not the order of the entries: [`merge_bucket`] does).
    pub fn decode(key: &[u8], value: &'a [u8], bits: u32) -> Result<Bucket<'a>> {
        let bits = clamp(bits);
        if key.len() != key_len(bits) {
            return Err(bad(format_args!(
                "a key of {} bytes in a table of {bits}-bit prefixes",
                key.len()
            )));
        }
        let [stored, width, body @ ..] = value else {
            return Err(bad("a value shorter than its header"));
        };
        if u32::from(*stored) != bits {
            return Err(bad(format_args!(
                "written for {stored}-bit prefixes, read for {bits}"
            )));
        }
        let width = usize::from(*width);
        let suffix = suffix_len(bits);
        if !(1..=8).contains(&width) || body.len() % (suffix + width) != 0 {
            return Err(bad(format_args!(
                "{} bytes of entries of {} bytes",
                body.len(),
                suffix + width
            )));
        }
        let prefix = be(key);
        let base = if bits == 64 {
            prefix
        } else {
            prefix << (64 - bits)
        };
        if bits < 64 && prefix >> bits != 0 {
            return Err(bad("a key wider than its prefix"));
        }
        Ok(Bucket {
            base,
            mask: suffix_mask(bits),
            suffix,
            width,
            body,
        })
    }

    /// The smallest permuted fingerprint the bucket can hold.
    pub fn base(&self) -> u64 {
        self.base
    }

    /// The largest permuted fingerprint the bucket can hold.
    pub fn last(&self) -> u64 {
        self.base | self.mask
    }

    /// Number of entries.
    pub fn len(&self) -> usize {
        self.body.len() / (self.suffix + self.width)
    }

    /// True when the bucket holds no entry (all of them removed).
    pub fn is_empty(&self) -> bool {
        self.body.is_empty()
    }

    /// Entry `i`: `(permuted fingerprint, seq)`.
    #[inline]
    pub fn get(&self, i: usize) -> (u64, u64) {
        let at = i * (self.suffix + self.width);
        let seq = be_at(self.body, at + self.suffix, self.width);
        (self.base | (self.raw_suffix(i) & self.mask), seq)
    }

    /// Entry `i`'s suffix bytes as stored (bits above the prefix's are zero when written
    /// by [`encode_bucket`]).
    #[inline]
    fn raw_suffix(&self, i: usize) -> u64 {
        be_at(self.body, i * (self.suffix + self.width), self.suffix)
    }

    /// The index of the first entry whose permuted fingerprint is ≥ `permuted`.
    pub fn lower_bound(&self, permuted: u64) -> usize {
        let (mut lo, mut hi) = (0, self.len());
        while lo < hi {
            let mid = (lo + hi) / 2;
            if self.get(mid).0 < permuted {
                lo = mid + 1;
            } else {
                hi = mid;
            }
        }
        lo
    }

    /// The entries, in order.
    pub fn entries(&self) -> impl Iterator<Item = (u64, u64)> + '_ {
        (0..self.len()).map(|i| self.get(i))
    }
}

/// A big-endian number of up to 8 bytes.
#[inline]
fn be(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0u64, |acc, &b| acc << 8 | u64::from(b))
}

/// The big-endian number of `n` (≤ 8) bytes at `at` of `body`: one 8-byte load where 8
/// bytes remain, byte by byte at the end.
#[inline]
fn be_at(body: &[u8], at: usize, n: usize) -> u64 {
    match body.get(at..at + 8) {
        Some(word) if n > 0 => {
            u64::from_be_bytes(word.try_into().expect("8 bytes")) >> (64 - 8 * n as u32)
        }
        _ => be(&body[at..at + n]),
    }
}

/// The value of a bucket of a table of `bits` prefix bits holding `entries` (sorted by
/// (permuted, seq), all under one prefix).
pub fn encode_bucket(bits: u32, entries: &[(u64, u64)]) -> Vec<u8> {
    let bits = clamp(bits);
    let width = entries.iter().map(|&(_, s)| seq_len(s)).max().unwrap_or(1);
    let suffix = suffix_len(bits);
    let mut out = Vec::with_capacity(2 + entries.len() * (suffix + width));
    out.push(bits as u8);
    out.push(width as u8);
    for &(permuted, seq) in entries {
        out.extend_from_slice(&(permuted & suffix_mask(bits)).to_be_bytes()[8 - suffix..]);
        out.extend_from_slice(&seq.to_be_bytes()[8 - width..]);
    }
    out
}

/// RocksDB's full merge of a bucket: the `existing` value (if any) with the merge records
/// of `operands` applied in order (an add of a present entry and a remove of an absent one
/// change nothing). Every record must be of the key's bucket and every entry in order.
pub fn merge_bucket<'o>(
    key: &[u8],
    existing: Option<&[u8]>,
    operands: impl IntoIterator<Item = &'o [u8]>,
) -> Result<Vec<u8>> {
    let mut operands = operands.into_iter().peekable();
    let bits = match (existing, operands.peek()) {
        (Some([bits, ..]), _) | (None, Some([bits, ..])) => u32::from(*bits),
        _ => return Err(bad("a merge without a prefix length")),
    };
    let mut entries: Vec<(u64, u64)> = match existing {
        Some(value) => {
            let bucket = Bucket::decode(key, value, bits)?;
            let entries: Vec<_> = bucket.entries().collect();
            let stray = (0..bucket.len()).any(|i| bucket.raw_suffix(i) & !bucket.mask != 0);
            if stray || !entries.is_sorted_by(|a, b| a < b) {
                return Err(bad("entries out of order, or bits set above their suffix"));
            }
            entries
        }
        None => Vec::new(),
    };
    for operand in operands {
        if operand.len() % OP_LEN != 0 {
            return Err(bad("a merge operand of a partial record"));
        }
        for op in operand.chunks_exact(OP_LEN) {
            apply(&mut entries, op, bits, key)?;
        }
    }
    Ok(encode_bucket(bits, &entries))
}

/// Applies one merge record to a bucket's sorted entries.
fn apply(entries: &mut Vec<(u64, u64)>, op: &[u8], bits: u32, key: &[u8]) -> Result<()> {
    let (permuted, seq) = (be(&op[2..10]), be(&op[10..]));
    if u32::from(op[0]) != bits || bucket_key(permuted, bits).as_ref() != key {
        return Err(bad("a merge record of another bucket"));
    }
    let at = entries.binary_search(&(permuted, seq));
    match (op[1], at) {
        (ADD, Err(i)) => entries.insert(i, (permuted, seq)),
        (REMOVE, Ok(i)) => {
            entries.remove(i);
        }
        (ADD | REMOVE, _) => {}
        (tag, _) => return Err(bad(format_args!("a merge record tagged {tag}"))),
    }
    Ok(())
}

/// RocksDB's partial merge of bucket operands: their records, concatenated in order.
pub fn concat_ops<'o>(operands: impl IntoIterator<Item = &'o [u8]>) -> Vec<u8> {
    operands.into_iter().flatten().copied().collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn merged(existing: Option<&[u8]>, ops: &[[u8; OP_LEN]], key: &[u8]) -> Vec<u8> {
        merge_bucket(key, existing, ops.iter().map(|o| o.as_slice())).unwrap()
    }

    #[test]
    fn keys_sort_numerically_and_hold_the_prefix() {
        for bits in [1, 7, 8, 16, 21, 24, 63, 64] {
            let a = bucket_key(0x00ff_ffff_ffff_ffff, bits);
            let b = bucket_key(0x0100_0000_0000_0000, bits);
            assert_eq!(a.as_ref().len(), (bits as usize).div_ceil(8));
            assert!(a.as_ref() <= b.as_ref(), "{bits}");
        }
        assert_eq!(bucket_key(0xabcd_ef01_0000_0000, 16).as_ref(), [0xab, 0xcd]);
        assert_eq!(
            bucket_key(0xabcd_ef01_0000_0000, 21).as_ref(),
            [0x15, 0x79, 0xbd]
        );
    }

    #[test]
    fn adds_and_removes_fold_into_a_sorted_bucket() {
        for bits in [1, 8, 16, 21, 24, 40, 63, 64] {
            let prefix = 0x8765_4321_0fed_cba9u64 & !suffix_mask(bits);
            let key = bucket_key(prefix, bits);
            let fps: Vec<u64> = (0..50u64)
                .map(|i| prefix | (i.wrapping_mul(0x9e37_79b9_7f4a_7c15) & suffix_mask(bits)))
                .collect();
            let adds: Vec<_> = (0..50)
                .map(|i| bucket_op(bits, true, fps[i], i as u64 * 977))
                .collect();
            let value = merged(None, &adds, key.as_ref());
            let mut want: Vec<(u64, u64)> = (0..50).map(|i| (fps[i], i as u64 * 977)).collect();
            want.sort();
            want.dedup();
            let bucket = Bucket::decode(key.as_ref(), &value, bits).unwrap();
            assert_eq!(bucket.entries().collect::<Vec<_>>(), want, "{bits}");
            // Remove every other one, add one twice, remove a missing one.
            let mut ops: Vec<_> = (0..50)
                .step_by(2)
                .map(|i| bucket_op(bits, false, fps[i], i as u64 * 977))
                .collect();
            ops.push(bucket_op(bits, true, fps[1], 977));
            ops.push(bucket_op(bits, false, fps[1], 12_345_678_901));
            let value = merged(Some(&value), &ops, key.as_ref());
            let mut left: Vec<(u64, u64)> = (1..50)
                .step_by(2)
                .map(|i| (fps[i], i as u64 * 977))
                .collect();
            left.sort();
            left.dedup();
            let bucket = Bucket::decode(key.as_ref(), &value, bits).unwrap();
            assert_eq!(bucket.entries().collect::<Vec<_>>(), left, "{bits}");
            for &(p, _) in &left {
                assert_eq!(bucket.get(bucket.lower_bound(p)).0, p);
            }
            assert_eq!(
                bucket.lower_bound(u64::MAX),
                bucket.len() - usize::from(left.last().unwrap().0 == u64::MAX)
            );
        }
    }

    #[test]
    fn a_partial_merge_is_the_same_as_its_records_one_by_one() {
        let key = bucket_key(5 << 48, 16);
        let ops = [
            bucket_op(16, true, 5 << 48 | 9, 1),
            bucket_op(16, true, 5 << 48 | 3, 2),
            bucket_op(16, false, 5 << 48 | 9, 1),
        ];
        let joined = concat_ops(ops[..2].iter().map(|o| o.as_slice()));
        let one = merge_bucket(key.as_ref(), None, [joined.as_slice(), ops[2].as_slice()]).unwrap();
        assert_eq!(one, merged(None, &ops, key.as_ref()));
        assert_eq!(
            Bucket::decode(key.as_ref(), &one, 16)
                .unwrap()
                .entries()
                .collect::<Vec<_>>(),
            [(5 << 48 | 3, 2)]
        );
    }

    /// The bytes of format 5's buckets, pinned.
    #[test]
    fn golden_bucket_bytes() {
        let p = 0xabcd_ef01_2345_6789u64;
        assert_eq!(bucket_key(p, 21).as_ref(), [0x15, 0x79, 0xbd]);
        assert_eq!(
            encode_bucket(21, &[(p, 5), (p + 2, 70_000)]),
            [
                21, 3, // prefix bits, seq width
                0x07, 0x01, 0x23, 0x45, 0x67, 0x89, 0, 0,
                5, // the low 43 bits in 6 bytes, seq
                0x07, 0x01, 0x23, 0x45, 0x67, 0x8b, 0x01, 0x11, 0x70,
            ][..]
        );
        assert_eq!(
            bucket_op(21, true, p, 5),
            [
                21, 1, 0xab, 0xcd, 0xef, 0x01, 0x23, 0x45, 0x67, 0x89, 0, 0, 0, 0, 0, 0, 0, 5
            ]
        );
    }

    #[test]
    fn seq_width_grows_with_the_largest_seq() {
        let value = encode_bucket(16, &[(1, 5), (2, u64::MAX)]);
        assert_eq!(value[1], 8);
        assert_eq!(value.len(), 2 + 2 * (6 + 8));
        let value = encode_bucket(16, &[(1, 5), (2, 10_000_000)]);
        assert_eq!(value.len(), 2 + 2 * (6 + 3));
        assert_eq!(encode_bucket(16, &[]), [16, 1]);
    }

    #[test]
    fn damage_is_an_error_not_a_panic() {
        let key = bucket_key(0, 16);
        let good = encode_bucket(16, &[(1, 1), (2, 2)]);
        assert!(Bucket::decode(key.as_ref(), &good, 16).is_ok());
        assert!(
            Bucket::decode(key.as_ref(), &good, 21).is_err(),
            "other prefix bits"
        );
        assert!(Bucket::decode(&[0, 0, 0], &good, 16).is_err(), "key length");
        assert!(Bucket::decode(key.as_ref(), &good[..good.len() - 1], 16).is_err());
        assert!(Bucket::decode(key.as_ref(), &[16], 16).is_err());
        let mut wide = good.clone();
        wide[1] = 9;
        assert!(Bucket::decode(key.as_ref(), &wide, 16).is_err());
        let unsorted = encode_bucket(16, &[(2, 2), (1, 1)]);
        assert!(merge_bucket(key.as_ref(), Some(&unsorted), []).is_err());
        // A suffix with a bit above the table's 48 (the 6 bytes of a 21-bit table hold 43).
        let key21 = bucket_key(0, 21);
        let mut stray = encode_bucket(21, &[(1, 1)]);
        assert!(merge_bucket(key21.as_ref(), Some(&stray), []).is_ok());
        stray[2] = 0x80;
        assert!(merge_bucket(key21.as_ref(), Some(&stray), []).is_err());
        let other = bucket_op(16, true, 1 << 48, 1);
        assert!(merge_bucket(key.as_ref(), None, [other.as_slice()]).is_err());
        assert!(merge_bucket(key.as_ref(), None, [&other[..5]]).is_err());
        let mut tag = bucket_op(16, true, 1, 1);
        tag[1] = 7;
        assert!(merge_bucket(key.as_ref(), None, [tag.as_slice()]).is_err());
        assert!(merge_bucket(key.as_ref(), None, []).is_err());
    }
}
