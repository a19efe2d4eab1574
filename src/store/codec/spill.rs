//! The byte layouts of a bulk load's temporary sorted runs (spill files; see
//! `src/store/bulk/sort.rs`). They live only as long as one bulk load, in one process, so
//! they carry no version; every integer is big-endian.
//!
//! | record | bytes |
//! |---|---|
//! | load row | seq (u64) ++ fingerprint (u64) ++ has hash (u8: 0 or 1) [++ content hash (u128)] ++ bands (4 × u32) ++ id length (u32) ++ id (UTF-8) |
//! | table key | permuted fingerprint (u64 BE) ++ seq (u64 BE): 16 bytes (a store packs a table's entries in buckets: [`super::bucket`]) |
//! | `exact` key | content hash (u128) ++ seq (u64) (as [`super::exact_key`]) |
//!
//! A run is its records one after another; it ends where the file ends.

use std::io::{self, Read};

use super::exact_key;
use crate::index::bands::{Bands, MAX_BANDS};

/// One loaded entry as a bulk load sorts it for the `ids` run: id, seq, fingerprint,
/// content hash and bands.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct LoadRow {
    /// The external id (the first sort key).
    pub id: Box<str>,
    /// The entry's sequence number (the second sort key: the last of an id wins).
    pub seq: u64,
    /// Its fingerprint.
    pub fp: u64,
    /// Its content hash, if it has one.
    pub hash: Option<u128>,
    /// Its bands ([`crate::index::bands::of`] its sketch).
    pub bands: Bands,
}

/// Appends the spill encoding of `row` to `out`.
pub fn encode_row(row: &LoadRow, out: &mut Vec<u8>) {
    out.extend_from_slice(&row.seq.to_be_bytes());
    out.extend_from_slice(&row.fp.to_be_bytes());
    match row.hash {
        Some(h) => {
            out.push(1);
            out.extend_from_slice(&h.to_be_bytes());
        }
        None => out.push(0),
    }
    for b in row.bands {
        out.extend_from_slice(&b.to_be_bytes());
    }
    let len = u32::try_from(row.id.len()).expect("ids are checked to be short");
    out.extend_from_slice(&len.to_be_bytes());
    out.extend_from_slice(row.id.as_bytes());
}

/// Reads the next row of a run; `None` at its end.
pub fn read_row(r: &mut impl Read) -> io::Result<Option<LoadRow>> {
    let mut head = [0u8; 17];
    if !read_first(r, &mut head)? {
        return Ok(None);
    }
    let seq = u64::from_be_bytes(head[..8].try_into().expect("8 bytes"));
    let fp = u64::from_be_bytes(head[8..16].try_into().expect("8 bytes"));
    let hash = match head[16] {
        0 => None,
        1 => Some(u128::from_be_bytes(read_array(r)?)),
        b => return Err(bad(format!("a row's hash flag is {b}"))),
    };
    let mut bands = [0u32; MAX_BANDS as usize];
    for b in bands.iter_mut() {
        *b = u32::from_be_bytes(read_array(r)?);
    }
    let len = u32::from_be_bytes(read_array(r)?) as usize;
    let mut id = vec![0u8; len];
    r.read_exact(&mut id)?;
    let id = String::from_utf8(id).map_err(|_| bad("an id is not UTF-8".into()))?;
    Ok(Some(LoadRow {
        id: id.into_boxed_str(),
        seq,
        fp,
        hash,
        bands,
    }))
}

/// Appends the spill encoding of a table key.
pub fn encode_table_key(&(permuted, seq): &(u64, u64), out: &mut Vec<u8>) {
    out.extend_from_slice(&super::encode_counters(permuted, seq));
}

/// Reads the next table key of a run; `None` at its end.
pub fn read_table_key(r: &mut impl Read) -> io::Result<Option<(u64, u64)>> {
    let mut b = [0u8; 16];
    if !read_first(r, &mut b)? {
        return Ok(None);
    }
    Ok(Some(super::split16(&b).expect("16 bytes")))
}

/// Appends the spill encoding of an `exact` key.
pub fn encode_exact_key(&(hash, seq): &(u128, u64), out: &mut Vec<u8>) {
    out.extend_from_slice(&exact_key(hash, seq));
}

/// Reads the next `exact` key of a run; `None` at its end.
pub fn read_exact_key(r: &mut impl Read) -> io::Result<Option<(u128, u64)>> {
    let mut b = [0u8; 24];
    if !read_first(r, &mut b)? {
        return Ok(None);
    }
    super::decode_exact_key(&b)
        .map(Some)
        .map_err(|e| bad(e.to_string()))
}

/// Fills `buf`; `false` when the run ended before its first byte, an error when it ended
/// inside it.
fn read_first(r: &mut impl Read, buf: &mut [u8]) -> io::Result<bool> {
    let mut filled = 0;
    while filled < buf.len() {
        match r.read(&mut buf[filled..]) {
            Ok(0) if filled == 0 => return Ok(false),
            Ok(0) => return Err(bad("a run ends inside a record".into())),
            Ok(n) => filled += n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(true)
}

fn read_array<const N: usize>(r: &mut impl Read) -> io::Result<[u8; N]> {
    let mut b = [0u8; N];
    r.read_exact(&mut b)?;
    Ok(b)
}

fn bad(what: String) -> io::Error {
    io::Error::new(
        io::ErrorKind::InvalidData,
        format!("damaged temporary file of a bulk load: {what}"),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_and_keys_round_trip_and_end_cleanly() {
        let rows = [
            LoadRow {
                id: "a/é".into(),
                seq: 7,
                fp: u64::MAX,
                hash: Some(u128::MAX - 3),
                bands: [1, 0xFF_FFFF, u32::MAX, 0],
            },
            LoadRow {
                id: "".into(),
                seq: 0,
                fp: 1,
                hash: None,
                bands: [u32::MAX; 4],
            },
        ];
        let mut bytes = Vec::new();
        for row in &rows {
            encode_row(row, &mut bytes);
        }
        assert_eq!(
            &bytes[..17],
            &[
                0, 0, 0, 0, 0, 0, 0, 7, 255, 255, 255, 255, 255, 255, 255, 255, 1
            ]
        );
        let mut r = &bytes[..];
        assert_eq!(read_row(&mut r).unwrap().as_ref(), Some(&rows[0]));
        assert_eq!(read_row(&mut r).unwrap().as_ref(), Some(&rows[1]));
        assert_eq!(read_row(&mut r).unwrap(), None);
        assert!(read_row(&mut &bytes[..20]).is_err(), "cut inside a record");

        let mut keys = Vec::new();
        encode_table_key(&(3, 4), &mut keys);
        encode_exact_key(&(5, 6), &mut keys);
        let mut r = &keys[..];
        assert_eq!(read_table_key(&mut r).unwrap(), Some((3, 4)));
        assert_eq!(read_exact_key(&mut r).unwrap(), Some((5, 6)));
        assert_eq!(read_exact_key(&mut r).unwrap(), None);
        assert!(read_table_key(&mut &keys[..9]).is_err());
    }
}
