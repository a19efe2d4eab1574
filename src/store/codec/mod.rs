//! Every byte layout simstore persists. Nothing outside this module builds or parses
//! keys or values.
//!
//! The layout of each column family, and what each format version changed: the table in
//! docs/design.md §5 and the `*_FORMAT` constants below (stores of other versions are
//! refused). A table's buckets: [`bucket`]; a bulk load's temporary runs: [`spill`].
//!
//! bincode uses its `standard` configuration (little-endian varints) with a size limit,
//! so a damaged length prefix cannot make a decoder allocate without bound.

pub mod bucket;
#[cfg(feature = "redis")]
pub mod redis;
pub mod retention;
pub mod spill;

use crate::error::{Error, Result};
use crate::index::bands;
use crate::index::layout::Layout;
use crate::index::quality::Quality;
use crate::text::fingerprint::FingerprintSpec;
use crate::types::{Sketch, StoredDoc};

/// The first bytes of every manifest.
pub const MAGIC: [u8; 8] = *b"SIMSTORE";

/// The on-disk format version this build writes. Manifests read back to [`OLDEST_READABLE`]
/// (a format-3 store, without a quality mode, is in the standard mode); what later versions
/// changed: [`BUCKET_FORMAT`], [`SHORT_IDS_FORMAT`], [`TIMED_FORMAT`], [`BANDS_FORMAT`].
pub const FORMAT_VERSION: u32 = 8;

/// The oldest format version whose manifest this build reads.
pub const OLDEST_READABLE: u32 = 3;

/// The first format whose RocksDB tables hold one bucket per prefix ([`bucket`]); a
/// RocksDB store of an older format is refused.
pub const BUCKET_FORMAT: u32 = 5;

/// The first format whose `ids` values leave the fingerprint out (it is in the document's
/// record). A store of an older format keeps writing it, so that the simstore that wrote
/// the store still reads every value; this build reads both forms.
pub const SHORT_IDS_FORMAT: u32 = 6;

/// The first format whose `docs` records may carry a last-seen time (record version 3),
/// whose stored times never decrease with the sequence number past the `timeline` mark
/// ([`retention`]), and which may hold a retention policy. A replacement with the same
/// fingerprint keeps its record's stored time there. Older stores are read and written as
/// they are: their expiry reads every record and they cannot track last-seen times.
pub const TIMED_FORMAT: u32 = 7;

/// The first format whose manifest names band tables ([`Manifest::bands`]): candidates
/// from the sketch ([`crate::index::bands`]). An older store has none; it is read and
/// written as it is, and `simstore relayout` adds them.
pub const BANDS_FORMAT: u32 = 8;

/// Key of the manifest in the `meta` column family.
pub const MANIFEST_KEY: &[u8] = b"manifest";
/// Key of the counters in the `meta` column family.
pub const COUNTERS_KEY: &[u8] = b"counters";

/// Key of the marker in `meta` that says a bulk load is under way (value: empty). A store
/// opened with the marker present was interrupted mid-load and is repaired from `docs`.
pub const BULK_PENDING_KEY: &[u8] = b"bulk-pending";

/// Key of the marker in `meta` that says a repair is under way (value: empty). A store
/// opened for writing with the marker present runs the repair again.
pub const REPAIR_PENDING_KEY: &[u8] = b"repair-pending";

/// Key of the new manifest in `meta` while a relayout is under way. A store opened with it
/// present finishes the relayout (new table column families, rebuilt from `docs`).
pub const RELAYOUT_PENDING_KEY: &[u8] = b"relayout-pending";

/// Version byte in front of a `docs` record (2: with the content hash).
const RECORD_VERSION: u8 = 2;
/// Version byte of a record whose last-seen time differs from its stored time (3: version
/// 2's fields, then the last-seen time); only in stores of [`TIMED_FORMAT`].
const SEEN_RECORD_VERSION: u8 = 3;

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
    /// The quality mode: the rule of queries and checks given no k.
    pub quality: Quality,
    /// Band tables kept after the permutation tables ([`crate::index::bands`]; 0 in
    /// stores before [`BANDS_FORMAT`]).
    pub bands: u32,
}

impl Manifest {
    /// Every table's prefix length in bits: the permutation tables', then the bands'.
    pub fn prefix_bits(&self) -> Vec<u32> {
        let mut bits = self.layout.prefix_bits();
        let band = bands::table_prefix_bits(bits.iter().copied().max().unwrap_or(0));
        bits.extend((0..self.bands).map(|_| band));
        bits
    }

    /// The number of tables: permutation tables, then band tables.
    pub fn tables(&self) -> usize {
        self.layout.tables().len() + self.bands as usize
    }

    /// The table that holds band `i`.
    pub fn band_table(&self, i: u32) -> usize {
        self.layout.tables().len() + i as usize
    }

    /// The key of a document with fingerprint `fp` and bands `bands` ([`bands::of`] its
    /// sketch) in table `t`: its permuted fingerprint in a permutation table; in a band
    /// table its band's key, or `None` when it has no such band.
    pub fn table_key(&self, t: usize, fp: u64, bands: &bands::Bands) -> Option<u64> {
        let permutations = self.layout.tables().len();
        if t < permutations {
            return Some(self.layout.permute(t, fp));
        }
        bands::key((t - permutations) as u32, bands, fp)
    }
}

#[derive(bincode::Encode, bincode::Decode)]
struct ManifestBodyV3 {
    k_max: u32,
    widths: Vec<u8>,
    /// Blocks in every table's prefix.
    lead: u8,
    tables: Vec<Vec<u8>>,
    spec: SpecV1,
    created: u64,
}

/// Format 4's manifest: format 3's, then the quality mode ([`Quality::code`]).
#[derive(bincode::Encode, bincode::Decode)]
struct ManifestBodyV4 {
    v3: ManifestBodyV3,
    quality: u8,
}

/// Format 8's manifest: format 4's, then the number of band tables.
#[derive(bincode::Encode, bincode::Decode)]
struct ManifestBodyV8 {
    v4: ManifestBodyV4,
    bands: u8,
}

/// The persisted form of a [`FingerprintSpec`] (its fields, in this order).
#[derive(bincode::Encode, bincode::Decode)]
struct SpecV1 {
    version: u32,
    normalizer: String,
    tokenizer: String,
    features: String,
    weighting: String,
    hash: String,
    seed: u64,
}

impl From<&FingerprintSpec> for SpecV1 {
    fn from(s: &FingerprintSpec) -> Self {
        SpecV1 {
            version: s.version,
            normalizer: s.normalizer.clone(),
            tokenizer: s.tokenizer.clone(),
            features: s.features.clone(),
            weighting: s.weighting.clone(),
            hash: s.hash.clone(),
            seed: s.seed,
        }
    }
}

impl From<SpecV1> for FingerprintSpec {
    fn from(s: SpecV1) -> Self {
        FingerprintSpec {
            version: s.version,
            normalizer: s.normalizer,
            tokenizer: s.tokenizer,
            features: s.features,
            weighting: s.weighting,
            hash: s.hash,
            seed: s.seed,
        }
    }
}

/// The persisted form of a [`StoredDoc`] (record version 2), borrowed for encoding.
#[derive(bincode::Encode)]
struct DocRecordV2Ref<'a> {
    id: &'a str,
    fp: u64,
    title: Option<&'a str>,
    url: Option<&'a str>,
    length: u64,
    time: u64,
    content_hash: Option<u128>,
    sketch: Option<&'a [u8; Sketch::BYTES]>,
}

/// The persisted form of a [`StoredDoc`] (record version 2), owned for decoding.
#[derive(bincode::Decode)]
struct DocRecordV2 {
    id: String,
    fp: u64,
    title: Option<String>,
    url: Option<String>,
    length: u64,
    time: u64,
    content_hash: Option<u128>,
    sketch: Option<[u8; Sketch::BYTES]>,
}

/// Encodes a manifest: magic, format version, body.
pub fn encode_manifest(m: &Manifest) -> Vec<u8> {
    let v3 = ManifestBodyV3 {
        k_max: m.layout.k_max(),
        widths: m.layout.widths().to_vec(),
        lead: m.layout.lead() as u8,
        tables: m
            .layout
            .tables()
            .iter()
            .map(|t| t.order().to_vec())
            .collect(),
        spec: SpecV1::from(&m.spec),
        created: m.created,
    };
    let body = ManifestBodyV8 {
        v4: ManifestBodyV4 {
            v3,
            quality: m.quality.code(),
        },
        bands: m.bands as u8,
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
    let version = manifest_format(bytes)?;
    check_format(version, OLDEST_READABLE)?;
    let (v4, bands) = match version {
        3 => {
            let v3 = decode_body::<ManifestBodyV3>(&bytes[12..])?;
            (ManifestBodyV4 { v3, quality: 0 }, 0)
        }
        4..BANDS_FORMAT => (decode_body::<ManifestBodyV4>(&bytes[12..])?, 0),
        _ => {
            let v8 = decode_body::<ManifestBodyV8>(&bytes[12..])?;
            (v8.v4, u32::from(v8.bands))
        }
    };
    if bands > bands::MAX_BANDS {
        return Err(Error::Corrupt(format!("manifest: {bands} band tables")));
    }
    let quality = Quality::from_code(v4.quality)
        .ok_or_else(|| Error::Corrupt(format!("manifest: unknown quality mode {}", v4.quality)))?;
    let body = v4.v3;
    let layout = Layout::from_persisted(body.k_max, body.widths, body.lead.into(), body.tables)
        .map_err(|e| Error::Corrupt(format!("manifest layout: {e}")))?;
    Ok(Manifest {
        layout,
        spec: body.spec.into(),
        created: body.created,
        quality,
        bands,
    })
}

/// The format version a manifest was written in.
pub fn manifest_format(bytes: &[u8]) -> Result<u32> {
    match bytes.split_first_chunk::<12>() {
        Some((head, _)) if head[..8] == MAGIC => {
            Ok(u32::from_be_bytes(head[8..].try_into().expect("4 bytes")))
        }
        _ => Err(Error::Corrupt(
            "the manifest does not start with the simstore magic bytes".into(),
        )),
    }
}

/// `Ok` when a store of format `version` is read by this build on a backend that reads
/// formats `oldest` and up; else [`Error::FormatVersion`] with what to do.
pub fn check_format(version: u32, oldest: u32) -> Result<()> {
    if (oldest..=FORMAT_VERSION).contains(&version) {
        return Ok(());
    }
    Err(Error::FormatVersion {
        found: version,
        oldest,
        expected: FORMAT_VERSION,
        hint: version_hint(version),
    })
}

/// A manifest body, all of `bytes`.
fn decode_body<B: bincode::Decode<()>>(bytes: &[u8]) -> Result<B> {
    let (body, used): (B, usize) = bincode::decode_from_slice(bytes, config::<MANIFEST_LIMIT>())
        .map_err(|e| Error::Corrupt(format!("undecodable manifest: {e}")))?;
    if used != bytes.len() {
        return Err(Error::Corrupt("trailing bytes after the manifest".into()));
    }
    Ok(body)
}

/// What to do with a store of format `version`, which this build does not read.
pub(crate) fn version_hint(version: u32) -> &'static str {
    if version > FORMAT_VERSION {
        "it was written by a newer simstore: upgrade simstore to open it"
    } else {
        "it was written by an older simstore: re-import its documents from their original \
         input into a new store; if the simstore that wrote it can export them, export them \
         with it and import the export into a new store with this one (that keeps ids, \
         fingerprints, titles and urls; a store holds no texts, so exact-duplicate checks and \
         verification need the original input)"
    }
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

/// Encodes a `docs` record: version 2, or 3 when its last-seen time is not its stored time.
pub fn encode_doc(doc: &StoredDoc) -> Vec<u8> {
    let mut out = Vec::with_capacity(40 + doc.id.len());
    let seen = doc.seen != doc.time;
    out.push(if seen {
        SEEN_RECORD_VERSION
    } else {
        RECORD_VERSION
    });
    let record = DocRecordV2Ref {
        id: &doc.id,
        fp: doc.fp,
        title: doc.title.as_deref(),
        url: doc.url.as_deref(),
        length: doc.length,
        time: doc.time,
        content_hash: doc.content_hash,
        sketch: doc.sketch.as_ref().map(|s| &s.0),
    };
    bincode::encode_into_std_write(&record, &mut out, config::<RECORD_LIMIT>())
        .expect("writing to a Vec cannot fail");
    if seen {
        bincode::encode_into_std_write(doc.seen, &mut out, config::<RECORD_LIMIT>())
            .expect("writing to a Vec cannot fail");
    }
    out
}

/// Decodes a `docs` record.
pub fn decode_doc(bytes: &[u8]) -> Result<StoredDoc> {
    let with_seen = match bytes.first() {
        Some(&RECORD_VERSION) => false,
        Some(&SEEN_RECORD_VERSION) => true,
        Some(v) => {
            return Err(Error::Corrupt(format!(
                "document record version {v} is unknown"
            )));
        }
        None => return Err(Error::Corrupt("empty document record".into())),
    };
    let undecodable = |e| Error::Corrupt(format!("undecodable document record: {e}"));
    let (doc, mut used): (DocRecordV2, usize) =
        bincode::decode_from_slice(&bytes[1..], config::<RECORD_LIMIT>()).map_err(undecodable)?;
    let mut seen = doc.time;
    if with_seen {
        let (s, n) = bincode::decode_from_slice(&bytes[1 + used..], config::<RECORD_LIMIT>())
            .map_err(undecodable)?;
        (seen, used) = (s, used + n);
    }
    if used != bytes.len() - 1 {
        return Err(Error::Corrupt(
            "trailing bytes after a document record".into(),
        ));
    }
    Ok(StoredDoc {
        id: doc.id,
        fp: doc.fp,
        title: doc.title,
        url: doc.url,
        length: doc.length,
        time: doc.time,
        seen,
        content_hash: doc.content_hash,
        sketch: doc.sketch.map(Sketch),
    })
}

/// What an `ids` value holds: the document's sequence number, its fingerprint where the
/// value holds it (stores of formats before [`SHORT_IDS_FORMAT`]; else it is read from the
/// document's record), and its content hash (absent for documents stored by fingerprint
/// only).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct IdValue {
    /// The document's sequence number (its `docs` key).
    pub seq: u64,
    /// Its fingerprint, if the value holds it.
    pub fp: Option<u64>,
    /// Its content hash, if known.
    pub hash: Option<u128>,
}

/// Encodes an `ids` value: seq (8 bytes), then the fingerprint if it holds one (8), then
/// the content hash if known (16): 8, 16, 24 or 32 bytes, each length one form.
pub fn encode_id_value(v: IdValue) -> Vec<u8> {
    let mut out = Vec::with_capacity(32);
    out.extend_from_slice(&v.seq.to_be_bytes());
    if let Some(fp) = v.fp {
        out.extend_from_slice(&fp.to_be_bytes());
    }
    if let Some(h) = v.hash {
        out.extend_from_slice(&h.to_be_bytes());
    }
    out
}

/// Decodes an `ids` value (8, 16, 24 or 32 bytes: see [`encode_id_value`]).
pub fn decode_id_value(bytes: &[u8]) -> Result<IdValue> {
    let bad = || {
        Error::Corrupt(format!(
            "an ids value is {} bytes, not 8, 16, 24 or 32",
            bytes.len()
        ))
    };
    let (with_fp, with_hash) = match bytes.len() {
        8 => (false, false),
        16 => (true, false),
        24 => (false, true),
        32 => (true, true),
        _ => return Err(bad()),
    };
    let word = |i: usize| -> Result<u64> {
        let b: [u8; 8] = bytes[i..i + 8].try_into().map_err(|_| bad())?;
        Ok(u64::from_be_bytes(b))
    };
    let fp = with_fp.then(|| word(8)).transpose()?;
    let hash = with_hash
        .then(|| -> Result<u128> {
            let b: [u8; 16] = bytes[bytes.len() - 16..].try_into().map_err(|_| bad())?;
            Ok(u128::from_be_bytes(b))
        })
        .transpose()?;
    Ok(IdValue {
        seq: word(0)?,
        fp,
        hash,
    })
}

/// The key of an `exact` entry: content hash then sequence number, both big-endian, so the
/// documents sharing a content hash are one contiguous key range (smallest seq first).
#[inline]
pub fn exact_key(hash: u128, seq: u64) -> [u8; 24] {
    let mut out = [0u8; 24];
    out[..16].copy_from_slice(&hash.to_be_bytes());
    out[16..].copy_from_slice(&seq.to_be_bytes());
    out
}

/// The 16-byte prefix of every `exact` key of `hash` (for seeks).
#[inline]
pub fn exact_prefix(hash: u128) -> [u8; 16] {
    hash.to_be_bytes()
}

/// Decodes an `exact` key into `(content hash, seq)`.
pub fn decode_exact_key(bytes: &[u8]) -> Result<(u128, u64)> {
    let bytes: &[u8; 24] = bytes
        .try_into()
        .map_err(|_| Error::Corrupt(format!("an exact key is {} bytes, not 24", bytes.len())))?;
    let mut h = [0u8; 16];
    h.copy_from_slice(&bytes[..16]);
    let mut s = [0u8; 8];
    s.copy_from_slice(&bytes[16..]);
    Ok((u128::from_be_bytes(h), u64::from_be_bytes(s)))
}

/// The 8-byte big-endian encoding of a permuted-fingerprint bound (for seeks and bounds).
#[inline]
pub fn table_bound(permuted: u64) -> [u8; 8] {
    permuted.to_be_bytes()
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
            quality: Quality::High,
            bands: 2,
        }
    }

    /// A format-3 manifest (format 4's without the quality byte) is read, in the standard
    /// mode; a format-4 one with an unknown mode is corrupt.
    #[test]
    fn format_3_manifests_are_read_as_standard() {
        let m = manifest();
        let mut bytes = encode_manifest(&m);
        assert_eq!(bytes.pop(), Some(2), "the band tables");
        assert_eq!(bytes.pop(), Some(Quality::High.code()));
        bytes[11] = 3;
        let read = decode_manifest(&bytes).unwrap();
        assert_eq!(read.quality, Quality::Standard);
        assert_eq!((read.layout, read.spec, read.bands), (m.layout, m.spec, 0));
        bytes[11] = 4;
        assert!(matches!(decode_manifest(&bytes), Err(Error::Corrupt(_))));
        bytes.push(7);
        assert!(matches!(decode_manifest(&bytes), Err(Error::Corrupt(_))));
    }

    /// A manifest before format 8 has no band tables; one with more than a store keeps is
    /// corrupt.
    #[test]
    fn manifests_before_format_8_have_no_bands() {
        let m = manifest();
        let mut bytes = encode_manifest(&m);
        bytes.pop();
        bytes[11] = 7;
        let read = decode_manifest(&bytes).unwrap();
        assert_eq!((read.quality, read.bands), (Quality::High, 0));
        bytes[11] = 8;
        assert!(matches!(decode_manifest(&bytes), Err(Error::Corrupt(_))));
        bytes.push(bands::MAX_BANDS as u8 + 1);
        assert!(matches!(decode_manifest(&bytes), Err(Error::Corrupt(_))));
    }

    #[test]
    fn manifest_round_trip() {
        let m = manifest();
        assert_eq!(decode_manifest(&encode_manifest(&m)).unwrap(), m);
    }

    #[test]
    fn manifest_version_and_magic_are_checked() {
        let mut bytes = encode_manifest(&manifest());
        assert_eq!(manifest_format(&bytes).unwrap(), 8);
        bytes[11] = 9;
        assert!(matches!(
            decode_manifest(&bytes),
            Err(Error::FormatVersion {
                found: 9,
                oldest: 3,
                expected: 8,
                ..
            })
        ));
        // Format 5 (the fingerprint in `ids` values) is read.
        bytes.pop();
        bytes[11] = 5;
        assert!(decode_manifest(&bytes).is_ok());
        assert!(check_format(5, BUCKET_FORMAT).is_ok());
        // A RocksDB store checks for its buckets' format; a format-4 manifest is older.
        bytes[11] = 4;
        assert!(decode_manifest(&bytes).is_ok());
        assert!(matches!(
            check_format(4, BUCKET_FORMAT),
            Err(Error::FormatVersion {
                found: 4,
                oldest: 5,
                ..
            })
        ));
        bytes[11] = 1;
        let err = decode_manifest(&bytes).unwrap_err();
        assert!(matches!(
            err,
            Error::FormatVersion {
                found: 1,
                expected: 8,
                ..
            }
        ));
        // It says what to do: where the documents can come from.
        let msg = err.to_string();
        assert!(
            msg.contains("from their original input") && msg.contains("export them with it"),
            "{msg}"
        );
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
            seen: 9,
            content_hash: Some(u128::MAX - 1),
            sketch: Some(Sketch([7; Sketch::BYTES])),
        };
        assert_eq!(decode_doc(&encode_doc(&d)).unwrap(), d);
        let none = StoredDoc {
            content_hash: None,
            sketch: None,
            ..d.clone()
        };
        assert_eq!(decode_doc(&encode_doc(&none)).unwrap(), none);
        assert_eq!(encode_doc(&none)[0], RECORD_VERSION);
        let seen = StoredDoc { seen: 1 << 40, ..d };
        let bytes = encode_doc(&seen);
        assert_eq!(bytes[0], SEEN_RECORD_VERSION);
        assert_eq!(decode_doc(&bytes).unwrap(), seen);
        assert!(decode_doc(&bytes[..bytes.len() - 1]).is_err());
        assert!(decode_doc(&[]).is_err());
        assert!(decode_doc(&[1, 0]).is_err());
        assert!(decode_doc(&[4, 0]).is_err());
        assert!(decode_doc(&[2, 0xff, 0xff, 0xff, 0xff, 0xff]).is_err());
    }

    /// Golden bytes of the format-2 additions: `ids` values with and without a content
    /// hash, `exact` keys, and a `docs` record carrying a content hash.
    #[test]
    fn format_2_golden_bytes() {
        let hash = 0x0011_2233_4455_6677_8899_aabb_ccdd_eeffu128;
        let with = IdValue {
            seq: 5,
            fp: Some(0x0102_0304_0506_0708),
            hash: Some(hash),
        };
        let bytes = encode_id_value(with);
        assert_eq!(
            bytes,
            [
                0, 0, 0, 0, 0, 0, 0, 5, 1, 2, 3, 4, 5, 6, 7, 8, 0x00, 0x11, 0x22, 0x33, 0x44, 0x55,
                0x66, 0x77, 0x88, 0x99, 0xaa, 0xbb, 0xcc, 0xdd, 0xee, 0xff
            ]
        );
        assert_eq!(decode_id_value(&bytes).unwrap(), with);
        let without = IdValue { hash: None, ..with };
        assert_eq!(
            encode_id_value(without),
            [0, 0, 0, 0, 0, 0, 0, 5, 1, 2, 3, 4, 5, 6, 7, 8]
        );
        assert_eq!(decode_id_value(&encode_id_value(without)).unwrap(), without);
        assert!(decode_id_value(&bytes[..20]).is_err());
        // Format 6: without the fingerprint.
        let short = IdValue { fp: None, ..with };
        let bytes = encode_id_value(short);
        assert_eq!(
            bytes,
            [
                0, 0, 0, 0, 0, 0, 0, 5, 0x00, 0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0x77, 0x88, 0x99,
                0xaa, 0xbb, 0xcc, 0xdd, 0xee, 0xff
            ]
        );
        assert_eq!(decode_id_value(&bytes).unwrap(), short);
        let bare = IdValue {
            hash: None,
            ..short
        };
        assert_eq!(encode_id_value(bare), [0, 0, 0, 0, 0, 0, 0, 5]);
        assert_eq!(decode_id_value(&encode_id_value(bare)).unwrap(), bare);
        assert!(decode_id_value(&bytes[..12]).is_err());
        assert!(decode_id_value(&[]).is_err());

        let key = exact_key(hash, 0x0a0b);
        assert_eq!(
            key,
            [
                0x00, 0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0x77, 0x88, 0x99, 0xaa, 0xbb, 0xcc, 0xdd,
                0xee, 0xff, 0, 0, 0, 0, 0, 0, 0x0a, 0x0b
            ]
        );
        assert_eq!(&key[..16], &exact_prefix(hash));
        assert_eq!(decode_exact_key(&key).unwrap(), (hash, 0x0a0b));
        assert!(decode_exact_key(&key[..23]).is_err());
        // Keys of one hash sort by seq, and before every larger hash.
        assert!(exact_key(hash, 1) < exact_key(hash, 2));
        assert!(exact_key(hash, u64::MAX) < exact_key(hash + 1, 0));

        let doc = StoredDoc {
            id: "a".into(),
            fp: 1,
            title: None,
            url: None,
            length: 2,
            time: 3,
            seen: 3,
            content_hash: Some(hash),
            sketch: Some(Sketch([5; Sketch::BYTES])),
        };
        let mut golden = vec![2u8, 1, b'a', 1, 0, 0, 2, 3, 1, 0xfe];
        golden.extend_from_slice(&hash.to_le_bytes());
        // The sketch: Some, then its 64 bytes as they are.
        golden.push(1);
        golden.extend_from_slice(&[5; crate::text::sketch::SLOTS]);
        assert_eq!(encode_doc(&doc), golden);
    }
}
