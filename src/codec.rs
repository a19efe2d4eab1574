//! Every byte layout simstore persists. Nothing outside this module builds or parses
//! keys or values.
//!
//! | column family | key | value |
//! |---|---|---|
//! | `meta` | `"manifest"` | `MAGIC` ++ format version (u32 BE) ++ bincode([`Manifest`] body) |
//! | `meta` | `"counters"` | next seq (u64 BE) ++ live documents (u64 BE) |
//! | `meta` | `"bulk-pending"` | empty: present only while a bulk load is under way |
//! | `meta` | `"relayout-pending"` | the new manifest, present only while a relayout is under way |
//! | `docs` | seq (u64 BE) | record version (u8 = 1) ++ bincode([`StoredDoc`]) |
//! | `ids` | external id (UTF-8 bytes) | seq (u64 BE) ++ fingerprint (u64 BE) |
//! | `t00`.. | π(fingerprint) (u64 BE) ++ seq (u64 BE) | empty |
//!
//! bincode uses its `standard` configuration (little-endian varints) with a size limit,
//! so a damaged length prefix cannot make a decoder allocate without bound.

use crate::document::StoredDoc;
use crate::error::{Error, Result};
use crate::fingerprint::FingerprintSpec;
use crate::layout::Layout;

/// The first bytes of every manifest.
pub const MAGIC: [u8; 8] = *b"SIMSTORE";

/// The on-disk format version this build reads and writes.
pub const FORMAT_VERSION: u32 = 1;

/// Key of the manifest in the `meta` column family.
pub const MANIFEST_KEY: &[u8] = b"manifest";
/// Key of the counters in the `meta` column family.
pub const COUNTERS_KEY: &[u8] = b"counters";

/// Key of the marker in `meta` that says a bulk load is under way (value: empty). A store
/// opened with the marker present was interrupted mid-load and is repaired from `docs`.
pub const BULK_PENDING_KEY: &[u8] = b"bulk-pending";

/// Key of the new manifest in `meta` while a relayout is under way. A store opened with it
/// present finishes the relayout (new table column families, rebuilt from `docs`).
pub const RELAYOUT_PENDING_KEY: &[u8] = b"relayout-pending";

/// Version byte in front of every `docs` record.
const RECORD_VERSION: u8 = 1;

const MANIFEST_LIMIT: usize = 1 << 20;
const RECORD_LIMIT: usize = 1 << 28;

fn config<const LIMIT: usize>() -> impl bincode::config::Config {
    bincode::config::standard().with_limit::<LIMIT>()
}

/// What a store knows about itself: its layout, fingerprint spec and creation time.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Manifest {
    /// The permutation-table layout.
    pub layout: Layout,
    /// The spec the store's fingerprints were computed under.
    pub spec: FingerprintSpec,
    /// Creation time, seconds since the Unix epoch.
    pub created: u64,
}

#[derive(bincode::Encode, bincode::Decode)]
struct ManifestBodyV1 {
    k_max: u32,
    widths: Vec<u8>,
    tables: Vec<Vec<u8>>,
    spec: FingerprintSpec,
    created: u64,
}

/// Encodes a manifest: magic, format version, body.
pub fn encode_manifest(m: &Manifest) -> Vec<u8> {
    let body = ManifestBodyV1 {
        k_max: m.layout.k_max(),
        widths: m.layout.widths().to_vec(),
        tables: m
            .layout
            .tables()
            .iter()
            .map(|t| t.order().to_vec())
            .collect(),
        spec: m.spec.clone(),
        created: m.created,
    };
    let mut out = Vec::with_capacity(256);
    out.extend_from_slice(&MAGIC);
    out.extend_from_slice(&FORMAT_VERSION.to_be_bytes());
    bincode::encode_into_std_write(&body, &mut out, config::<MANIFEST_LIMIT>())
        .expect("writing to a Vec cannot fail");
    out
}

/// Decodes and validates a manifest. A wrong magic is [`Error::Corrupt`]; another format
/// version is [`Error::FormatVersion`] with what to do.
pub fn decode_manifest(bytes: &[u8]) -> Result<Manifest> {
    if bytes.len() < 12 || bytes[..8] != MAGIC {
        return Err(Error::Corrupt(
            "the manifest does not start with the simstore magic bytes".into(),
        ));
    }
    let version = u32::from_be_bytes(bytes[8..12].try_into().expect("4 bytes"));
    if version != FORMAT_VERSION {
        let hint = if version > FORMAT_VERSION {
            "it was written by a newer simstore: upgrade simstore to open it"
        } else {
            "it was written by an older simstore: re-import its documents into a new store"
        };
        return Err(Error::FormatVersion {
            found: version,
            expected: FORMAT_VERSION,
            hint,
        });
    }
    let (body, used): (ManifestBodyV1, usize) =
        bincode::decode_from_slice(&bytes[12..], config::<MANIFEST_LIMIT>())
            .map_err(|e| Error::Corrupt(format!("undecodable manifest: {e}")))?;
    if used != bytes.len() - 12 {
        return Err(Error::Corrupt("trailing bytes after the manifest".into()));
    }
    let layout = Layout::from_persisted(body.k_max, body.widths, body.tables)
        .map_err(|e| Error::Corrupt(format!("manifest layout: {e}")))?;
    Ok(Manifest {
        layout,
        spec: body.spec,
        created: body.created,
    })
}

/// Encodes the counters value.
pub fn encode_counters(next_seq: u64, live: u64) -> [u8; 16] {
    let mut out = [0u8; 16];
    out[..8].copy_from_slice(&next_seq.to_be_bytes());
    out[8..].copy_from_slice(&live.to_be_bytes());
    out
}

/// Decodes the counters value into `(next_seq, live)`.
pub fn decode_counters(bytes: &[u8]) -> Result<(u64, u64)> {
    let (a, b) =
        split16(bytes).ok_or_else(|| Error::Corrupt("counters are not 16 bytes".into()))?;
    Ok((a, b))
}

/// The `docs` key of a sequence number.
#[inline]
pub fn doc_key(seq: u64) -> [u8; 8] {
    seq.to_be_bytes()
}

/// Decodes a `docs` key.
pub fn decode_doc_key(bytes: &[u8]) -> Result<u64> {
    bytes
        .try_into()
        .map(u64::from_be_bytes)
        .map_err(|_| Error::Corrupt(format!("a docs key is {} bytes, not 8", bytes.len())))
}

/// Encodes a `docs` record.
pub fn encode_doc(doc: &StoredDoc) -> Vec<u8> {
    let mut out = Vec::with_capacity(32 + doc.id.len());
    out.push(RECORD_VERSION);
    bincode::encode_into_std_write(doc, &mut out, config::<RECORD_LIMIT>())
        .expect("writing to a Vec cannot fail");
    out
}

/// Decodes a `docs` record.
pub fn decode_doc(bytes: &[u8]) -> Result<StoredDoc> {
    match bytes.first() {
        Some(&RECORD_VERSION) => {}
        Some(v) => {
            return Err(Error::Corrupt(format!(
                "document record version {v} is unknown"
            )));
        }
        None => return Err(Error::Corrupt("empty document record".into())),
    }
    let (doc, used): (StoredDoc, usize) =
        bincode::decode_from_slice(&bytes[1..], config::<RECORD_LIMIT>())
            .map_err(|e| Error::Corrupt(format!("undecodable document record: {e}")))?;
    if used != bytes.len() - 1 {
        return Err(Error::Corrupt(
            "trailing bytes after a document record".into(),
        ));
    }
    Ok(doc)
}

/// Encodes an `ids` value.
#[inline]
pub fn encode_id_value(seq: u64, fp: u64) -> [u8; 16] {
    encode_counters(seq, fp)
}

/// Decodes an `ids` value into `(seq, fingerprint)`.
pub fn decode_id_value(bytes: &[u8]) -> Result<(u64, u64)> {
    split16(bytes)
        .ok_or_else(|| Error::Corrupt(format!("an ids value is {} bytes, not 16", bytes.len())))
}

/// The key of a table entry: permuted fingerprint then sequence number, both big-endian,
/// so byte order is numeric order and a fingerprint prefix is a contiguous key range.
#[inline]
pub fn table_key(permuted: u64, seq: u64) -> [u8; 16] {
    encode_counters(permuted, seq)
}

/// Decodes a table key into `(permuted fingerprint, seq)`.
#[inline]
pub fn decode_table_key(bytes: &[u8]) -> Result<(u64, u64)> {
    split16(bytes)
        .ok_or_else(|| Error::Corrupt(format!("a table key is {} bytes, not 16", bytes.len())))
}

/// The 8-byte big-endian encoding of a permuted-fingerprint bound (for seeks and bounds).
#[inline]
pub fn table_bound(permuted: u64) -> [u8; 8] {
    permuted.to_be_bytes()
}

/// The name of table `i`'s column family: `t00`, `t01`, ...
pub fn table_cf_name(i: usize) -> String {
    format!("t{i:02}")
}

#[inline]
fn split16(bytes: &[u8]) -> Option<(u64, u64)> {
    let bytes: &[u8; 16] = bytes.try_into().ok()?;
    let (a, b) = bytes.split_at(8);
    Some((
        u64::from_be_bytes(a.try_into().ok()?),
        u64::from_be_bytes(b.try_into().ok()?),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn manifest() -> Manifest {
        Manifest {
            layout: Layout::new(3, 4).unwrap(),
            spec: FingerprintSpec::current(),
            created: 1_700_000_000,
        }
    }

    #[test]
    fn manifest_round_trip() {
        let m = manifest();
        assert_eq!(decode_manifest(&encode_manifest(&m)).unwrap(), m);
    }

    #[test]
    fn manifest_version_and_magic_are_checked() {
        let mut bytes = encode_manifest(&manifest());
        bytes[11] = 2;
        assert!(matches!(
            decode_manifest(&bytes),
            Err(Error::FormatVersion {
                found: 2,
                expected: 1,
                ..
            })
        ));
        bytes[0] = b'X';
        assert!(matches!(decode_manifest(&bytes), Err(Error::Corrupt(_))));
        assert!(matches!(
            decode_manifest(b"SIMSTORE"),
            Err(Error::Corrupt(_))
        ));
        let mut trailing = encode_manifest(&manifest());
        trailing.push(0);
        assert!(matches!(decode_manifest(&trailing), Err(Error::Corrupt(_))));
    }

    #[test]
    fn doc_round_trip() {
        let d = StoredDoc {
            id: "a/b".into(),
            fp: 42,
            title: Some("标题".into()),
            url: None,
            length: 7,
            time: 9,
        };
        assert_eq!(decode_doc(&encode_doc(&d)).unwrap(), d);
        assert!(decode_doc(&[]).is_err());
        assert!(decode_doc(&[2, 0]).is_err());
        assert!(decode_doc(&[1, 0xff, 0xff, 0xff, 0xff, 0xff]).is_err());
    }

    #[test]
    fn table_keys_sort_numerically() {
        let a = table_key(0x00ff_0000_0000_0000, 5);
        let b = table_key(0x0100_0000_0000_0000, 1);
        assert!(a < b);
        assert_eq!(decode_table_key(&a).unwrap(), (0x00ff_0000_0000_0000, 5));
        assert!(decode_table_key(&a[..15]).is_err());
    }
}
