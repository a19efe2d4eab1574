//! A read of RocksDB's write-ahead log files that counts what a damaged log loses.
//!
//! RocksDB refuses to open a store whose log is damaged before its end (the recovery mode
//! set in `options::db_options`); a salvage drops the damaged records and replays the rest.
//! This module tells how much that drops, by reading the logs the way RocksDB's
//! `log::Reader` does (its `db/log_format.h`): 32 KiB blocks of physical records, each a
//! header — masked CRC32C of the type byte and payload (4 bytes), payload length (2,
//! little-endian), type (1) — and its payload; a write batch too long for one record is
//! split into first, middle and last fragments. A record whose checksum or length is
//! wrong loses the rest of its block, as in RocksDB's reader.

use std::path::Path;

use crate::store::LogDamage;

const BLOCK: usize = 32 * 1024;
const HEADER: usize = 7;
/// Headers of recyclable records carry the log number too.
const RECYCLABLE_HEADER: usize = 11;

/// What a record's type says of its place in a logical record (a write batch).
#[derive(Clone, Copy, PartialEq, Eq)]
enum Fragment {
    Full,
    First,
    Middle,
    Last,
    /// Metadata of the log itself (compression type, timestamp sizes, predecessor).
    Other,
}

/// The fragment kind and header length of record type `t`; `None` for zero (the padding of
/// a preallocated file: the end of the block's records).
fn kind(t: u8) -> Option<(Fragment, usize)> {
    Some(match t {
        0 => return None,
        1 => (Fragment::Full, HEADER),
        2 => (Fragment::First, HEADER),
        3 => (Fragment::Middle, HEADER),
        4 => (Fragment::Last, HEADER),
        5 => (Fragment::Full, RECYCLABLE_HEADER),
        6 => (Fragment::First, RECYCLABLE_HEADER),
        7 => (Fragment::Middle, RECYCLABLE_HEADER),
        8 => (Fragment::Last, RECYCLABLE_HEADER),
        11 | 131 => (Fragment::Other, RECYCLABLE_HEADER),
        _ => (Fragment::Other, HEADER),
    })
}

/// RocksDB's masked CRC32C (`util/crc32c.h`: `Mask`).
fn masked_crc(t: u8, payload: &[u8]) -> u32 {
    let crc = crc32c::crc32c_append(crc32c::crc32c(&[t]), payload);
    crc.rotate_right(15).wrapping_add(0xa282_ead8)
}

/// Counts, over every log file (`*.log`) in `dir`, the write batches that can be read and
/// the damaged records and bytes a salvage drops.
pub(super) fn scan(dir: &Path) -> std::io::Result<LogDamage> {
    let mut logs: Vec<_> = std::fs::read_dir(dir)?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "log"))
        .collect();
    logs.sort();
    let mut damage = LogDamage::default();
    for log in logs {
        let bytes = std::fs::read(&log)?;
        let before = damage.damaged_records;
        scan_file(&bytes, &mut damage);
        if damage.damaged_records > before {
            damage
                .damaged_files
                .push(log.file_name().unwrap_or_default().to_string_lossy().into());
        }
    }
    Ok(damage)
}

/// Adds one log file's counts to `damage`.
fn scan_file(bytes: &[u8], damage: &mut LogDamage) {
    // Whether a logical record is open (its first fragment read, its last not yet).
    let mut open = false;
    for block in bytes.chunks(BLOCK) {
        let mut at = 0;
        while block.len() - at >= HEADER {
            let h = &block[at..];
            let Some((fragment, header)) = kind(h[6]) else {
                break;
            };
            let len = u16::from_le_bytes([h[4], h[5]]) as usize;
            let end = at + header + len;
            if end > block.len() {
                // The file's last record, incomplete (a write cut short), is no damage.
                let cut_short = block.len() < BLOCK && end <= BLOCK;
                if !cut_short {
                    damage.note_damage(block.len() - at);
                }
                open = false;
                break;
            }
            let crc = u32::from_le_bytes([h[0], h[1], h[2], h[3]]);
            // The recyclable header's log number is covered by the checksum too.
            if crc != masked_crc(h[6], &block[at + HEADER..end]) {
                damage.note_damage(block.len() - at);
                open = false;
                break;
            }
            match fragment {
                Fragment::Full => damage.batches += 1,
                Fragment::First => open = true,
                Fragment::Last if open => {
                    damage.batches += 1;
                    open = false
                }
                // A fragment whose first was lost belongs to a batch already counted lost.
                _ => {}
            }
            at = end;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A log of `n` full records of `len` bytes each, as RocksDB writes them.
    fn log(n: usize, len: usize) -> Vec<u8> {
        let mut out = Vec::new();
        for i in 0..n {
            let left = BLOCK - out.len() % BLOCK;
            if left < HEADER + len {
                out.resize(out.len() + left, 0);
            }
            let payload = vec![i as u8; len];
            out.extend_from_slice(&masked_crc(1, &payload).to_le_bytes());
            out.extend_from_slice(&(len as u16).to_le_bytes());
            out.push(1);
            out.extend_from_slice(&payload);
        }
        out
    }

    #[test]
    fn counts_intact_batches() {
        let mut d = LogDamage::default();
        scan_file(&log(100, 1000), &mut d);
        assert_eq!((d.batches, d.damaged_records, d.dropped_bytes), (100, 0, 0));
    }

    #[test]
    fn a_flipped_byte_drops_the_rest_of_its_block() {
        let mut bytes = log(100, 1000);
        bytes[5 * 1007 + 100] ^= 0xff;
        let mut d = LogDamage::default();
        scan_file(&bytes, &mut d);
        assert_eq!(d.damaged_records, 1);
        // 32 records fit in a block: records 5..32 are lost with it.
        assert_eq!(d.batches, 100 - 27);
        // The rest of the block, its zero padding included.
        assert_eq!(d.dropped_bytes, (BLOCK - 5 * 1007) as u64);
    }

    #[test]
    fn a_cut_last_record_is_no_damage() {
        let bytes = log(10, 1000);
        let mut d = LogDamage::default();
        scan_file(&bytes[..bytes.len() - 10], &mut d);
        assert_eq!((d.batches, d.damaged_records), (9, 0));
    }
}
