//! WARC files (ISO 28500, as written by crawlers such as Heritrix, wget and Common Crawl):
//! the pages they archived, as input documents.
//!
//! [`Records`] reads a WARC stream record by record (decompress `.warc.gz` first, e.g.
//! with `flate2::read::MultiGzDecoder`). Header blocks are parsed by the `warc` crate's
//! parser; the framing (Content-Length, the `CRLF CRLF` after each record) and the
//! recovery after a bad record are here, so that one bad record costs only itself:
//!
//! - a `response` record whose HTTP status is 2xx and whose HTTP `Content-Type` is
//!   `text/html` or `application/xhtml+xml` is an HTML [`Page`], `text/plain` a text
//!   [`Page`]; the HTTP status line and headers are stripped (chunked transfer coding and
//!   gzip/deflate content coding undone) and the charset of the `Content-Type` is kept;
//! - every other record is [`Item::Skipped`] with its [`SkipReason`];
//! - a malformed or truncated record is a [`WarcError`] and reading goes on at the next
//!   `WARC/1.` inside the bad record's bytes (where the next record starts when a record is
//!   shorter than its Content-Length says), else at the next line that starts with `WARC/`;
//! - a record larger than the size limit ([`MAX_RECORD_BYTES`] by default) is skipped
//!   without being held in memory and reported ([`WarcError::TooLarge`]);
//! - a damaged gzip member (of a `.warc.gz` read through [`crate::input::gzip::Members`])
//!   that reading resumes after is the record it interrupted, [`WarcError::Gzip`].

use std::io::{self, BufRead, Read};

mod http;

use http::HttpResponse;

use crate::input::gzip::GzipError;
use crate::input::limit::{DEFAULT_MAX_DOC_BYTES, human};
use crate::input::pushback::Pushback;

/// The largest WARC header block accepted, in bytes.
pub const MAX_HEADER_BYTES: usize = 1 << 20;

/// The largest record read by default, in bytes ([`DEFAULT_MAX_DOC_BYTES`], like the
/// longest JSONL record; [`Records::with_limit`] sets another); a larger record is skipped
/// and reported.
pub const MAX_RECORD_BYTES: u64 = DEFAULT_MAX_DOC_BYTES;

/// Why a record could not be read. Reading goes on with the next record.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum WarcError {
    /// Bytes that are not a WARC record where one should start.
    #[error(
        "not a WARC record (the line {line:?} should start with WARC/); skipped {skipped} bytes to the next record"
    )]
    NotARecord {
        /// The start of the offending line.
        line: String,
        /// Bytes skipped to the next record (or to the end of the input).
        skipped: u64,
    },
    /// The header block does not parse.
    #[error("invalid WARC header line {0:?}: expected `Name: value`")]
    BadHeader(String),
    /// The header block has no Content-Length.
    #[error("the record has no valid Content-Length header")]
    NoContentLength,
    /// The Content-Length is not a number of bytes (`-5`, `12 bytes`, ...).
    #[error("Content-Length {0} is not a byte count: the record's header is damaged")]
    BadContentLength(String),
    /// The input ends inside the header block.
    #[error("truncated record: the input ends inside its WARC header block")]
    TruncatedHeader,
    /// The header block is longer than [`MAX_HEADER_BYTES`].
    #[error("the WARC header block is longer than {} KiB", MAX_HEADER_BYTES >> 10)]
    HeaderTooLong,
    /// The input ends before the record's Content-Length bytes.
    #[error(
        "truncated record: its Content-Length is {expected} bytes but the input ends after {got}"
    )]
    Truncated {
        /// The Content-Length.
        expected: u64,
        /// Body bytes present.
        got: u64,
    },
    /// The record is shorter than its Content-Length: the next record starts inside it.
    #[error(
        "truncated record: its Content-Length is {expected} bytes but the next record starts after {got}"
    )]
    Cut {
        /// The Content-Length.
        expected: u64,
        /// Body bytes before the next record.
        got: u64,
    },
    /// The Content-Length bytes are not followed by `CRLF CRLF`.
    #[error(
        "the record does not end with CRLF CRLF after its Content-Length ({0} bytes): the length is wrong or the record is damaged"
    )]
    BadEnd(u64),
    /// The body is larger than the size limit.
    #[error(
        "the record is {size} bytes, larger than the limit of {}: raise it with --max-doc-bytes to read it",
        human(*max)
    )]
    TooLarge {
        /// The record's Content-Length.
        size: u64,
        /// The limit.
        max: u64,
    },
    /// The page's HTTP content coding (gzip, deflate) decompresses to more than the limit.
    #[error(
        "the page decompresses (HTTP Content-Encoding) to more than the limit of {}: raise it with --max-doc-bytes to read it",
        human(*max)
    )]
    DecodedTooLarge {
        /// The limit.
        max: u64,
    },
    /// The gzip member holding (part of) the record is damaged; reading goes on at the
    /// next member.
    #[error("{0}")]
    Gzip(GzipError),
    /// A response record whose HTTP message cannot be read.
    #[error("invalid HTTP response in the record: {0}")]
    BadHttp(String),
}

/// What a readable record is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Item {
    /// An archived page.
    Page(Page),
    /// A record that is not a page.
    Skipped(SkipReason),
}

/// Whether a page is HTML or plain text.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PageKind {
    /// `text/html` or `application/xhtml+xml`.
    Html,
    /// `text/plain`.
    Text,
}

/// An archived page: the payload of a 2xx HTML or text response.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Page {
    /// The `WARC-Target-URI`.
    pub uri: String,
    /// HTML or text.
    pub kind: PageKind,
    /// The `charset` of the HTTP `Content-Type`, if given.
    pub charset: Option<String>,
    /// The HTTP body (transfer and content codings undone).
    pub body: Vec<u8>,
}

/// Why a well-formed record is not a page.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum SkipReason {
    /// Not a `response` record (`warcinfo`, `request`, `metadata`, `revisit`, ...).
    NotResponse,
    /// A response whose HTTP status is not 2xx.
    Status,
    /// A response that is not HTML or plain text (images, scripts, PDFs, ...).
    NotPage,
}

impl SkipReason {
    /// A short description, for summaries.
    pub fn describe(self) -> &'static str {
        match self {
            SkipReason::NotResponse => "WARC records that are not responses",
            SkipReason::Status => "responses with a non-2xx HTTP status",
            SkipReason::NotPage => "responses that are not HTML or plain text",
        }
    }

    /// [`SkipReason::describe`] in the singular, for a count of one.
    pub fn describe_one(self) -> &'static str {
        match self {
            SkipReason::NotResponse => "WARC record that is not a response",
            SkipReason::Status => "response with a non-2xx HTTP status",
            SkipReason::NotPage => "response that is not HTML or plain text",
        }
    }
}

/// One record as read: its number (from 1), the byte offset where it starts (in the
/// uncompressed stream), and what it is or why it is bad.
pub type NumberedRecord = (u64, u64, Result<Item, WarcError>);

/// Reads the records of a WARC stream; see the module documentation.
pub struct Records<R> {
    src: Pushback<R>,
    number: u64,
    /// Where the last record started (or the one an I/O error interrupted).
    start: u64,
    max: u64,
}

impl<R: BufRead> Records<R> {
    /// Records of the (uncompressed) WARC stream `inner`, each at most
    /// `MAX_RECORD_BYTES`.
    pub fn new(inner: R) -> Self {
        Self::with_limit(inner, MAX_RECORD_BYTES)
    }

    /// Records of `inner`, each at most `max` bytes (its Content-Length, and its payload
    /// once the HTTP content coding is undone).
    pub fn with_limit(inner: R, max: u64) -> Self {
        Self {
            src: Pushback::new(inner),
            number: 0,
            start: 0,
            max,
        }
    }

    /// How many records were read so far: the number of the last one, or of the one an
    /// I/O error interrupted.
    pub fn number(&self) -> u64 {
        self.number
    }

    /// Where the last record (or the one an I/O error interrupted) started.
    pub fn record_start(&self) -> u64 {
        self.start
    }

    /// The reader the records are read from.
    pub fn get_ref(&self) -> &R {
        self.src.get_ref()
    }

    /// Bytes consumed so far (where the next record starts, after blank lines).
    pub fn offset(&self) -> u64 {
        self.src.offset()
    }

    /// The next record; `None` at the end of the input. A damaged gzip member that reading
    /// resumes after is the record it interrupted (`WarcError::Gzip`). Another I/O error
    /// (of the underlying reader, e.g. a gzip stream corrupt to its end) is `Err`: the rest
    /// of the input cannot be read; [`Records::number`] and [`Records::record_start`] then
    /// name the record it interrupted.
    pub fn next_record(&mut self) -> io::Result<Option<NumberedRecord>> {
        let counted = self.number;
        self.start = self.src.offset();
        let read = self.read_next();
        if read.is_err() && self.number == counted {
            // The error came before the record's first line: it is the next record.
            self.number += 1;
        }
        match read {
            Err(e) => match GzipError::of(&e).filter(|g| g.resumed_at.is_some()) {
                Some(gz) => Ok(Some((
                    self.number,
                    self.start,
                    Err(WarcError::Gzip(gz.clone())),
                ))),
                None => Err(e),
            },
            ok => ok,
        }
    }

    fn read_next(&mut self) -> io::Result<Option<NumberedRecord>> {
        // Blank lines between records are tolerated.
        let mut line = Vec::new();
        let start = loop {
            let start = self.src.offset();
            self.start = start;
            line.clear();
            if self.src.read_line(&mut line, MAX_HEADER_BYTES)? == 0 {
                return Ok(None);
            }
            if !line.trim_ascii().is_empty() {
                break start;
            }
        };
        self.number += 1;
        let number = self.number;
        if !line.starts_with(b"WARC/") {
            let shown = String::from_utf8_lossy(&line[..line.len().min(60)])
                .trim_end()
                .to_owned();
            let skipped = line.len() as u64 + self.skip_to_next_record()?;
            return Ok(Some((
                number,
                start,
                Err(WarcError::NotARecord {
                    line: shown,
                    skipped,
                }),
            )));
        }
        let item = self.read_record(line)?;
        Ok(Some((number, start, item)))
    }

    /// Consumes lines up to (not including) the next one starting with `WARC/`; the bytes
    /// consumed.
    fn skip_to_next_record(&mut self) -> io::Result<u64> {
        let mut skipped = 0u64;
        let mut line = Vec::new();
        loop {
            line.clear();
            let n = self.src.read_line(&mut line, MAX_HEADER_BYTES)?;
            if n == 0 {
                return Ok(skipped);
            }
            if line.starts_with(b"WARC/") {
                self.src.unread(&line);
                return Ok(skipped);
            }
            skipped += n as u64;
        }
    }

    /// After a bad record: go on at the first `WARC/1.` in `tail` (bytes consumed after
    /// the record's first line), else at the next line of the input that starts with
    /// `WARC/`. Returns where in `tail` the next record starts, if it does.
    fn resync(&mut self, tail: &[u8]) -> io::Result<Option<usize>> {
        // A record cut short is followed by the next one wherever the cut fell, not
        // necessarily at the start of a line.
        let found = tail.windows(7).position(|w| w == b"WARC/1.");
        match found {
            Some(i) => {
                self.src.unread(&tail[i..]);
                Ok(Some(i))
            }
            None => {
                self.skip_to_next_record()?;
                Ok(None)
            }
        }
    }

    fn read_record(&mut self, first: Vec<u8>) -> io::Result<Result<Item, WarcError>> {
        let mut block = first;
        loop {
            if block.len() > MAX_HEADER_BYTES {
                self.resync(&[])?;
                return Ok(Err(WarcError::HeaderTooLong));
            }
            let before = block.len();
            if self.src.read_line(&mut block, MAX_HEADER_BYTES)? == 0 {
                return Ok(Err(WarcError::TruncatedHeader));
            }
            if matches!(&block[before..], b"\r\n" | b"\n") {
                break;
            }
        }
        let headers = match parse_headers(&block) {
            Ok(h) => h,
            Err(e) => {
                let first_line_end = block.iter().position(|&b| b == b'\n').unwrap_or(0);
                self.resync(&block[first_line_end + 1..])?;
                return Ok(Err(e));
            }
        };
        let len = headers.content_length;
        if len > self.max {
            let got = io::copy(&mut (&mut self.src).take(len), &mut io::sink())?;
            if got < len {
                return Ok(Err(WarcError::Truncated { expected: len, got }));
            }
            // The error is the size either way.
            let _ = self.read_end()?;
            return Ok(Err(WarcError::TooLarge {
                size: len,
                max: self.max,
            }));
        }
        let mut body = Vec::new();
        let got = (&mut self.src).take(len).read_to_end(&mut body)? as u64;
        if got < len {
            return Ok(Err(match self.resync(&body)? {
                Some(i) => WarcError::Cut {
                    expected: len,
                    got: i as u64,
                },
                None => WarcError::Truncated { expected: len, got },
            }));
        }
        let end = self.read_end()?;
        if let Err(trailer) = end {
            body.extend_from_slice(&trailer);
            return Ok(Err(match self.resync(&body)? {
                Some(i) => WarcError::Cut {
                    expected: len,
                    got: i as u64,
                },
                None => WarcError::BadEnd(len),
            }));
        }
        Ok(classify(&headers, body, self.max))
    }

    /// Reads the `CRLF CRLF` after a body: `Ok(Ok(()))` when present (or at the end of the
    /// input), else the bytes read instead.
    fn read_end(&mut self) -> io::Result<Result<(), Vec<u8>>> {
        let mut trailer = Vec::with_capacity(4);
        (&mut self.src).take(4).read_to_end(&mut trailer)?;
        // A last record without its final CRLF CRLF (or with LF LF) is accepted.
        if trailer.is_empty() || b"\r\n\r\n".starts_with(&trailer) || trailer == b"\n\n" {
            return Ok(Ok(()));
        }
        if let Some(rest) = trailer.strip_prefix(b"\n\n") {
            self.src.unread(rest);
            return Ok(Ok(()));
        }
        Ok(Err(trailer))
    }
}

/// The headers of a record that matter here.
struct Headers {
    warc_type: String,
    target_uri: Option<String>,
    content_length: u64,
}

fn parse_headers(block: &[u8]) -> Result<Headers, WarcError> {
    let bad_line = |rest: &[u8]| {
        let line = rest.split(|&b| b == b'\n').next().unwrap_or(rest);
        WarcError::BadHeader(
            String::from_utf8_lossy(&line[..line.len().min(80)])
                .trim_end()
                .to_owned(),
        )
    };
    let Ok((rest, (_version, fields, _))) = ::warc::parser::headers(block) else {
        // The parser also refuses a Content-Length that is not a number: say so.
        if let Some(value) = bad_content_length(block) {
            return Err(bad_length(&value));
        }
        // Name the first line that is not `Name: value` (or the first line).
        let mut lines = block.split(|&b| b == b'\n');
        let first = lines.next().unwrap_or(block);
        let bad = lines
            .find(|l| {
                let l = l.trim_ascii();
                !l.is_empty()
                    && l.iter()
                        .position(|&b| b == b':')
                        .is_none_or(|colon| colon == 0 || l[..colon].contains(&b' '))
            })
            .unwrap_or(first);
        return Err(bad_line(bad));
    };
    if !matches!(rest, b"\r\n" | b"\n") {
        return Err(bad_line(rest));
    }
    let get = |name: &str| {
        fields
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| String::from_utf8_lossy(v).trim().to_owned())
    };
    let content_length = match get("Content-Length") {
        None => return Err(WarcError::NoContentLength),
        Some(v) => v.parse::<u64>().map_err(|_| bad_length(&v))?,
    };
    Ok(Headers {
        warc_type: get("WARC-Type").unwrap_or_default(),
        target_uri: get("WARC-Target-URI"),
        content_length,
    })
}

/// The value of the first `Content-Length` header line of `block` when it is not a byte
/// count.
fn bad_content_length(block: &[u8]) -> Option<String> {
    let line = block.split(|&b| b == b'\n').skip(1).find_map(|l| {
        let (name, value) = l.split_at(l.iter().position(|&b| b == b':')?);
        name.trim_ascii()
            .eq_ignore_ascii_case(b"content-length")
            .then(|| String::from_utf8_lossy(value[1..].trim_ascii()).into_owned())
    })?;
    line.parse::<u64>().is_err().then_some(line)
}

/// [`WarcError::BadContentLength`] for `value`, shown at most 40 characters long.
fn bad_length(value: &str) -> WarcError {
    WarcError::BadContentLength(value.chars().take(40).collect())
}

/// What a well-formed record is: a [`Page`] for a 2xx HTML or text response, else why not.
/// Its payload may decompress to at most `max` bytes.
fn classify(headers: &Headers, body: Vec<u8>, max: u64) -> Result<Item, WarcError> {
    if !headers.warc_type.eq_ignore_ascii_case("response") {
        return Ok(Item::Skipped(SkipReason::NotResponse));
    }
    let uri = headers
        .target_uri
        .clone()
        .filter(|u| !u.is_empty())
        .ok_or_else(|| WarcError::BadHttp("the response record has no WARC-Target-URI".into()))?;
    let http = HttpResponse::parse(&body)?;
    let (kind, charset) = match http.page_kind() {
        Ok(page) => page,
        Err(reason) => return Ok(Item::Skipped(reason)),
    };
    Ok(Item::Page(Page {
        uri,
        kind,
        charset,
        body: http.payload(&body, max)?,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn record(kind: &str, uri: &str, block: &[u8]) -> Vec<u8> {
        let mut out = format!(
            "WARC/1.0\r\nWARC-Type: {kind}\r\nWARC-Target-URI: {uri}\r\nContent-Length: {}\r\n\r\n",
            block.len()
        )
        .into_bytes();
        out.extend_from_slice(block);
        out.extend_from_slice(b"\r\n\r\n");
        out
    }

    fn all(input: &[u8]) -> Vec<NumberedRecord> {
        let mut r = Records::new(input);
        let mut out = Vec::new();
        while let Some(item) = r.next_record().unwrap() {
            out.push(item);
        }
        out
    }

    const PAGE: &[u8] =
        b"HTTP/1.1 200 OK\r\nContent-Type: text/html; charset=\"GBK\"\r\n\r\n<p>hello</p>";

    #[test]
    fn pages_and_skipped_records() {
        let mut input = record("warcinfo", "", b"software: x\r\n");
        input.extend(record("request", "http://a/", b"GET / HTTP/1.1\r\n\r\n"));
        input.extend(record("response", "http://a/", PAGE));
        input.extend(record(
            "response",
            "http://a/x.png",
            b"HTTP/1.1 200 OK\r\nContent-Type: image/png\r\n\r\n\x89PNG",
        ));
        input.extend(record(
            "response",
            "http://a/gone",
            b"HTTP/1.1 404 Not Found\r\nContent-Type: text/html\r\n\r\nno",
        ));
        let recs = all(&input);
        assert_eq!(recs.len(), 5);
        assert_eq!(recs[0].2, Ok(Item::Skipped(SkipReason::NotResponse)));
        assert_eq!(recs[1].2, Ok(Item::Skipped(SkipReason::NotResponse)));
        let Ok(Item::Page(page)) = &recs[2].2 else {
            panic!("{:?}", recs[2])
        };
        assert_eq!(
            (page.uri.as_str(), page.kind, page.charset.as_deref()),
            ("http://a/", PageKind::Html, Some("GBK"))
        );
        assert_eq!(page.body, b"<p>hello</p>");
        assert_eq!(recs[3].2, Ok(Item::Skipped(SkipReason::NotPage)));
        assert_eq!(recs[4].2, Ok(Item::Skipped(SkipReason::Status)));
        assert_eq!((recs[2].0, recs[0].1), (3, 0));
    }

    #[test]
    fn a_record_cut_short_costs_only_itself() {
        let good = record("response", "http://a/", PAGE);
        let mut cut = record("response", "http://cut/", PAGE);
        cut.truncate(cut.len() - 10);
        let mut input = cut.clone();
        input.extend(&good);
        let recs = all(&input);
        assert_eq!(recs.len(), 2, "{recs:?}");
        assert!(matches!(recs[0].2, Err(WarcError::Cut { .. })), "{recs:?}");
        assert!(matches!(&recs[1].2, Ok(Item::Page(p)) if p.uri == "http://a/"));
        assert_eq!(recs[1].1, cut.len() as u64);
        // At the end of the input: truncated, and nothing after it.
        let mut input = good.clone();
        input.extend(&cut);
        let recs = all(&input);
        assert_eq!(recs.len(), 2);
        assert!(matches!(recs[1].2, Err(WarcError::Truncated { .. })));
    }

    #[test]
    fn garbage_and_bad_headers_resync() {
        let good = record("response", "http://a/", PAGE);
        let mut input = b"garbage line\r\nmore\r\n".to_vec();
        input.extend(b"WARC/1.0\r\nthis is not a header\r\nContent-Length: 3\r\n\r\nabc\r\n\r\n");
        input.extend(&good);
        let recs = all(&input);
        assert!(matches!(recs[0].2, Err(WarcError::NotARecord { .. })));
        assert!(
            matches!(recs[1].2, Err(WarcError::BadHeader(ref l)) if l == "this is not a header")
        );
        assert!(matches!(recs[2].2, Ok(Item::Page(_))), "{recs:?}");
        assert_eq!(recs.len(), 3);
    }

    #[test]
    fn chunked_and_gzip_payloads() {
        use std::io::Write;
        let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
        gz.write_all(b"<p>zipped</p>").unwrap();
        let gz = gz.finish().unwrap();
        let mut msg = b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nTransfer-Encoding: chunked\r\nContent-Encoding: gzip\r\n\r\n".to_vec();
        msg.extend(format!("{:x}\r\n", gz.len()).as_bytes());
        msg.extend(&gz);
        msg.extend(b"\r\n0\r\n\r\n");
        let recs = all(&record("response", "http://z/", &msg));
        let Ok(Item::Page(page)) = &recs[0].2 else {
            panic!("{recs:?}")
        };
        assert_eq!(
            (page.kind, page.body.as_slice()),
            (PageKind::Text, &b"<p>zipped</p>"[..])
        );
    }

    #[test]
    fn every_truncation_and_byte_flip_is_survived() {
        let mut input = record("warcinfo", "", b"x: y\r\n");
        input.extend(record("response", "http://a/", PAGE));
        input.extend(record("response", "http://b/", PAGE));
        let mut state = 0x9e37_79b9_7f4a_7c15u64;
        for cut in 0..=input.len() {
            let recs = all(&input[..cut]);
            assert!(recs.len() <= 3, "{cut}: {recs:?}");
            // Every page read is a whole one.
            for (_, _, r) in &recs {
                if let Ok(Item::Page(p)) = r {
                    assert_eq!(p.body, b"<p>hello</p>");
                }
            }
            let mut flipped = input.clone();
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            let i = (state % flipped.len() as u64) as usize;
            flipped[i] ^= (state >> 32) as u8 | 1;
            let recs = all(&flipped);
            assert!(recs.len() <= 8, "{recs:?}");
        }
    }
}
