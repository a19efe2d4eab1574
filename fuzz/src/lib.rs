//! The checks of the fuzz targets: each takes the bytes of one input, runs one reader of
//! outside input over them and panics when an invariant does not hold.
//!
//! The fuzz targets (`fuzz_targets/*.rs`, run by `cargo fuzz`) are one line each around
//! these functions, and the integration tests (`tests/fuzz_corpus.rs`, which includes
//! this file) run the committed corpus (`tests/data/fuzz/<target>/`) through the same
//! functions, so that a finding stays fixed on stable Rust without a fuzzer.

use std::io::{BufRead, BufReader, Cursor, Read, Write};

use flate2::Compression;
use flate2::read::MultiGzDecoder;
use flate2::write::GzEncoder;
use simstore::input::archive::{Item, PageKind, Records};
use simstore::input::gzip::{GzipError, Members};
use simstore::input::reader::{Lines, RecordError, parse_jsonl, parse_jsonl_with_others};
use simstore::input::{charset, html, limit};
use simstore::types::document::MAX_ID_BYTES;

/// The size limit the targets read with: small, so that inputs a fuzzer makes reach it.
const MAX_DOC: u64 = 4096;

/// Decompressed bytes read of one input at most: a gzip bomb costs no more (a member of
/// up to 8 MiB is held whole, `gzip::VERIFY_BYTES`).
const MAX_OUT: u64 = 64 << 20;

/// A fuzz target's check of one input: panics when an invariant does not hold.
pub type Check = fn(&[u8]);

/// Every target by its name (the name of its file in `fuzz_targets/` and of its corpus
/// folder in `tests/data/fuzz/`).
pub const TARGETS: &[(&str, Check)] = &[
    ("html", html),
    ("warc", warc),
    ("gzip", gzip),
    ("jsonl", jsonl),
    ("input", input),
];

/// The HTML reader: bytes → title and main text.
pub fn html(data: &[u8]) {
    match html::page_from_bytes(data, None) {
        Ok(page) => check_page(&page, data.len()),
        // Only binary input (a NUL byte without a UTF-16 byte-order mark) is refused.
        Err(e) => {
            let charset::Error::Binary { offset } = e else {
                panic!("an error other than binary input: {e}")
            };
            assert_eq!(data.get(offset), Some(&0));
        }
    }
}

/// What [`html::page_from_bytes`] returns: main text in collapsed lines, no larger than
/// the input can make it.
fn check_page(page: &html::Page, input_len: usize) {
    // A malformed byte decodes to U+FFFD (3 bytes), and each element can end a line.
    assert!(
        page.text.len() <= 4 * input_len,
        "{} bytes of text from {input_len} bytes of HTML",
        page.text.len()
    );
    if page.text.is_empty() {
        return;
    }
    for line in page.text.split('\n') {
        // Blocks are collapsed (inner whitespace one space, none at the ends), blank ones
        // dropped: the line-level cleaning of the text stage relies on it.
        let collapsed = line.split_whitespace().collect::<Vec<_>>().join(" ");
        assert!(!line.is_empty(), "an empty line in {:?}", page.text);
        assert_eq!(line, collapsed, "a line not collapsed");
    }
}

/// The WARC reader: bytes → records, each a page, a skipped record or an error. Input
/// starting with 0xFF is the rest cut at each 0xFF into the bodies of text pages, written
/// as a valid WARC file that must be read back exactly.
pub fn warc(data: &[u8]) {
    match data.split_first() {
        Some((0xff, bodies)) => warc_pages(bodies),
        _ => warc_records(data),
    }
}

fn warc_pages(bodies: &[u8]) {
    let bodies: Vec<&[u8]> = bodies.split(|&b| b == 0xff).collect();
    let mut file = Vec::new();
    for (i, body) in bodies.iter().enumerate() {
        let mut block = format!(
            "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: {}\r\n\r\n",
            body.len()
        )
        .into_bytes();
        block.extend_from_slice(body);
        let head = format!(
            "WARC/1.0\r\nWARC-Type: response\r\nWARC-Target-URI: http://e.com/{i}\r\n\
             Content-Length: {}\r\n\r\n",
            block.len()
        );
        file.extend_from_slice(head.as_bytes());
        file.extend_from_slice(&block);
        file.extend_from_slice(b"\r\n\r\n");
    }
    let mut records = Records::with_limit(BufReader::with_capacity(7, &file[..]), u64::MAX);
    for (i, body) in bodies.iter().enumerate() {
        let (number, _, item) = records
            .next_record()
            .expect("no I/O error in memory")
            .expect("a record per page");
        assert_eq!(number, i as u64 + 1);
        let Ok(Item::Page(page)) = item else {
            panic!("page {i} read as {item:?}")
        };
        assert_eq!(page.uri, format!("http://e.com/{i}"));
        assert_eq!(page.kind, PageKind::Text);
        assert_eq!(page.body, *body, "page {i} changed");
    }
    assert!(
        matches!(records.next_record(), Ok(None)),
        "records after the last"
    );
}

fn warc_records(data: &[u8]) {
    let mut records = Records::with_limit(Cursor::new(data), MAX_DOC);
    let mut last_start = None;
    let mut count = 0u64;
    while let Some((number, start, item)) = records.next_record().expect("no I/O error in memory") {
        count += 1;
        // Numbered from 1 without gaps; every record starts after the one before, so that
        // reading ends: at most one record per byte.
        assert_eq!(number, count);
        assert!(count <= data.len() as u64, "more records than bytes");
        assert!(
            last_start.is_none_or(|s| start > s),
            "record {number} does not advance"
        );
        assert!(start < data.len() as u64);
        assert!(records.offset() <= data.len() as u64);
        last_start = Some(start);
        if let Ok(Item::Page(page)) = item {
            assert!(!page.uri.is_empty());
            assert!(page.body.len() as u64 <= MAX_DOC, "a page over the limit");
            if page.kind == PageKind::Html {
                let _ = html::page_from_bytes(&page.body, page.charset.as_deref())
                    .map(|p| check_page(&p, page.body.len()));
            }
        }
    }
    assert_eq!(records.offset(), data.len() as u64, "input left unread");
}

/// The gzip reader. The first byte chooses how the rest is read: even, as gzip bytes
/// (compared with flate2's decoder where that reads them); odd, as text cut into gzip
/// members at each 0xFF (bytes 1–3: where to flip bits and which), which must come back.
pub fn gzip(data: &[u8]) {
    match data.split_first() {
        Some((mode, rest)) if mode % 2 == 1 => gzip_members(rest),
        Some((_, rest)) => gzip_raw(rest),
        None => {}
    }
}

/// What [`Members`] makes of `compressed`: the bytes and the errors on the way.
fn decompress(compressed: &[u8]) -> (Vec<u8>, Vec<GzipError>) {
    // A tiny buffer: members and lines cross its edges.
    let mut members = Members::new(BufReader::with_capacity(7, compressed));
    let mut out = Vec::new();
    let mut errors = Vec::new();
    let mut last_member = 0;
    loop {
        let chunk = match members.fill_buf() {
            Ok(chunk) => chunk,
            Err(e) => {
                let gz = GzipError::of(&e).expect("every error of in-memory input is a GzipError");
                if let Some(at) = gz.resumed_at {
                    assert!(at > gz.member_at && at < compressed.len() as u64);
                }
                if let Some(u) = &gz.unverified {
                    assert!(u.bytes.end <= out.len() as u64);
                }
                errors.push(gz.clone());
                // A damaged member is reported once; without a member after it, that is
                // the end, and there are no more errors.
                assert!(errors.len() <= compressed.len(), "more errors than bytes");
                continue;
            }
        };
        if chunk.is_empty() {
            break;
        }
        let n = chunk.len().min(1000);
        out.extend_from_slice(&chunk[..n]);
        members.consume(n);
        assert!(members.member() >= last_member, "member numbers go back");
        last_member = members.member();
        if out.len() as u64 > MAX_OUT {
            break;
        }
    }
    if errors.last().is_some_and(|e| e.resumed_at.is_none()) {
        assert!(
            matches!(members.fill_buf().map(<[u8]>::len), Ok(0)),
            "data after the end"
        );
    }
    (out, errors)
}

fn gzip_raw(compressed: &[u8]) {
    let (out, errors) = decompress(compressed);
    // Where flate2's own multi-member decoder reads the whole input, the two agree.
    let mut expected = Vec::new();
    let flate2 = MultiGzDecoder::new(compressed)
        .take(MAX_OUT)
        .read_to_end(&mut expected);
    if flate2.is_ok() && (out.len() as u64) < MAX_OUT && expected.len() as u64 <= MAX_OUT {
        assert!(errors.is_empty(), "{errors:?} where flate2 reads the input");
        assert!(out == expected, "the bytes differ from flate2's");
    }
}

fn gzip_members(data: &[u8]) {
    let (flip, text) = match data {
        [hi, lo, mask, text @ ..] => ((usize::from(*hi) << 8 | usize::from(*lo), *mask), text),
        _ => return,
    };
    let chunks: Vec<&[u8]> = text.split(|&b| b == 0xff).collect();
    let mut compressed = Vec::new();
    let mut ends = Vec::new();
    for (i, chunk) in chunks.iter().enumerate() {
        let level = Compression::new(i as u32 % 10);
        let mut enc = GzEncoder::new(&mut compressed, level);
        enc.write_all(chunk).expect("in memory");
        enc.finish().expect("in memory");
        ends.push(compressed.len());
    }
    let (pos, mask) = (flip.0 % compressed.len(), flip.1);
    compressed[pos] ^= mask;
    let (out, errors) = decompress(&compressed);
    if mask == 0 {
        assert!(errors.is_empty(), "{errors:?} in sound members");
        assert_eq!(out, chunks.concat(), "sound members come back changed");
        return;
    }
    // The members before the damaged one come back whole, whatever follows.
    let damaged = ends
        .iter()
        .position(|&end| pos < end)
        .expect("pos is inside");
    let before = chunks[..damaged].concat();
    assert!(
        out.starts_with(&before),
        "the members before the damage are lost"
    );
}

/// The JSONL reader: bytes → lines → records.
pub fn jsonl(data: &[u8]) {
    let max = MAX_DOC as usize;
    let mut lines = Lines::with_limit(BufReader::with_capacity(16, data), max);
    let mut count = 0u64;
    let newlines = data.iter().filter(|&&b| b == b'\n').count() as u64;
    while let Some((number, line)) = lines.next_line().expect("no I/O error in memory") {
        count += 1;
        assert_eq!(number, count, "lines are numbered from 1 without gaps");
        assert!(count <= newlines + 1, "more lines than the input has");
        match line {
            Ok(line) => {
                assert!(line.len() <= max, "a line over the limit");
                assert!(!line.contains(&b'\n'));
                check_record(&line);
            }
            Err(e) => assert_eq!(e, RecordError::TooLong { max }),
        }
    }
}

/// One JSONL line → a record, checked against serde_json's reading of the same line.
fn check_record(line: &[u8]) {
    let record = parse_jsonl(line);
    let with_others = parse_jsonl_with_others(line).map(|(r, _)| r);
    assert_eq!(record, with_others, "the two entry points disagree");
    let Ok(record) = record else { return };
    // serde_json's reading, or (a line it refuses) of the line with each unpaired surrogate
    // escape as U+FFFD, as the reader reads it.
    let line = std::str::from_utf8(line).expect("a record is UTF-8");
    let value: serde_json::Value = serde_json::from_str(line)
        .or_else(|_| serde_json::from_str(&escapes_decoded(line, '\u{fffd}')))
        .expect("a record is valid JSON");
    let object = value.as_object().expect("a record is a JSON object");
    // The last of a repeated field counts, as in serde_json's map.
    // An id is a string, or a number as serde_json writes it.
    let id = match object.get("id") {
        Some(serde_json::Value::Number(n)) => Some(n.to_string()),
        other => other.and_then(|v| v.as_str()).map(str::to_owned),
    };
    assert_eq!(id.as_deref(), Some(record.id.as_str()));
    assert!(!record.id.is_empty() && record.id.len() <= MAX_ID_BYTES);
    for (field, got) in [("title", &record.title), ("url", &record.url)] {
        let given = object.get(field).and_then(|v| v.as_str());
        if given.is_some() {
            assert_eq!(got.as_deref(), given, "field {field}");
        }
    }
    if let Some(text) = object.get("text").and_then(|v| v.as_str()) {
        assert_eq!(record.text.as_deref(), Some(text));
    }
}

/// Any input, as the command line reads a file of unknown name: decompressed when it
/// starts with the gzip magic, then WARC, JSONL, HTML or text by its first bytes.
pub fn input(data: &[u8]) {
    let mut reader: Box<dyn BufRead> = if data.starts_with(&[0x1f, 0x8b]) {
        Box::new(Members::new(BufReader::with_capacity(64, data)))
    } else {
        Box::new(data)
    };
    let head = match reader.fill_buf() {
        Ok(head) => head.trim_ascii_start().to_ascii_lowercase(),
        // A first member damaged: the command line reports the file as unreadable.
        Err(e) => return assert!(GzipError::of(&e).is_some()),
    };
    if head.starts_with(b"warc/") {
        let mut records = Records::with_limit(reader, MAX_DOC);
        while let Ok(Some((_, _, item))) = records.next_record() {
            let Ok(Item::Page(page)) = item else { continue };
            assert!(page.body.len() as u64 <= MAX_DOC, "a page over the limit");
            document(
                &page.body,
                page.charset.as_deref(),
                page.kind == PageKind::Html,
            );
        }
    } else if head.is_empty() || head.starts_with(b"{") {
        let mut lines = Lines::with_limit(reader, MAX_DOC as usize);
        while let Ok(Some((_, line))) = lines.next_line() {
            if let Ok(line) = line {
                check_record(&line);
            }
        }
    } else {
        let Ok(Ok(bytes)) = limit::read_bounded(reader, MAX_DOC) else {
            return;
        };
        assert!(bytes.len() as u64 <= MAX_DOC);
        let is_html = head.starts_with(b"<!doctype html") || head.starts_with(b"<html");
        document(&bytes, None, is_html);
    }
}

/// A whole document (a file, a WARC page) as the command line reads it: an HTML page's
/// main text, or a text in its charset; refused only as binary data.
fn document(bytes: &[u8], charset_hint: Option<&str>, is_html: bool) {
    let refused = if is_html {
        html::page_from_bytes(bytes, charset_hint)
            .map(|page| check_page(&page, bytes.len()))
            .err()
    } else {
        charset::decode(bytes, charset_hint).err()
    };
    if refused.is_some() {
        assert!(
            bytes.contains(&0),
            "text without a NUL byte refused: {refused:?}"
        );
    }
}

/// The oracle of how the reader takes unpaired UTF-16 surrogate escapes: `text` with each
/// run of `\uXXXX` escapes decoded by the standard library's UTF-16 decoder (an unpaired
/// half as `replacement`) and written again as escapes. Other escapes are copied as they are.
pub fn escapes_decoded(text: &str, replacement: char) -> String {
    let hex4 = |s: &str| {
        let hex = s.strip_prefix("\\u")?.get(..4)?;
        let digits = hex.bytes().all(|b| b.is_ascii_hexdigit());
        digits.then(|| u16::from_str_radix(hex, 16).ok()).flatten()
    };
    let (mut out, mut rest) = (String::new(), text);
    while let Some(at) = rest.find('\\') {
        out.push_str(&rest[..at]);
        rest = &rest[at..];
        let mut units = Vec::new();
        while let Some(unit) = hex4(rest) {
            units.push(unit);
            rest = &rest[6..];
        }
        if units.is_empty() {
            let n = rest[1..].chars().next().map_or(1, |c| 1 + c.len_utf8());
            out.push_str(&rest[..n]);
            rest = &rest[n..];
        }
        for c in char::decode_utf16(units).map(|c| c.unwrap_or(replacement)) {
            for unit in c.encode_utf16(&mut [0; 2]) {
                out.push_str(&format!("\\u{unit:04x}"));
            }
        }
    }
    out.push_str(rest);
    out
}
