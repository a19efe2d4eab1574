//! Input records: the "reader" stage of the data flow.
//!
//! A JSONL record is one JSON object per line:
//! `{"id": string or number, "title"?: string, "text"?: string, "html"?: string, "url"?: string,
//! "fp"?: "16 hex digits"}`. A record with `html` and no `text` stands for the page's main
//! text and (unless `title` is given) its title, extracted by [`crate::input::html`]. A
//! record with `fp` may also carry what `simstore export` writes of a stored document
//! (`length`, `time`, `seen`, `content_hash`, `sketch`: [`Restore`]), kept as it is.
//! Every way a record can be bad is a [`RecordError`] that says what is wrong and how to
//! fix it; callers add the file name and line number.

mod fields;
mod own;
mod restore;
mod surrogates;

use std::io::{self, BufRead, Read};

use serde_json::Value;

pub use fields::Fields;
use own::Slot;
pub use restore::Restore;
pub use surrogates::unpaired_replaced;

use crate::index::page::analyze_page;
use crate::input::gzip::GzipError;
use crate::input::limit::{DEFAULT_MAX_DOC_BYTES, human};
use crate::text::fingerprint::{Analysis, Fingerprinter};
use crate::types::{DocMeta, Document, Entry};
use crate::types::{Fingerprint, QueryKey};

/// The longest line (one record) accepted by default, in bytes: 256 MiB
/// ([`DEFAULT_MAX_DOC_BYTES`]; [`Lines::with_limit`] sets another).
pub const MAX_LINE_BYTES: usize = DEFAULT_MAX_DOC_BYTES as usize;

/// One input record.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Record {
    /// The external id.
    pub id: String,
    /// The title, if given.
    pub title: Option<String>,
    /// The body text, if given.
    pub text: Option<String>,
    /// The URL, if given.
    pub url: Option<String>,
    /// Of a record given as a web page (`"html"`): the visible text its reader left out of
    /// `text` ([`crate::input::html::Page::left_out`]), which a dataset dedup counts as
    /// missing from the fingerprint; `None` for a record given as text.
    pub left_out: Option<String>,
    /// A precomputed fingerprint, if given; it is stored instead of computing one.
    pub fp: Option<Fingerprint>,
    /// With `fp`: the stored fields an exported record carries, kept when it is stored.
    pub restore: Option<Restore>,
}

/// Why a record was rejected.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum RecordError {
    /// The line is not valid UTF-8.
    #[error("not valid UTF-8 (byte {offset}): convert the input to UTF-8")]
    InvalidUtf8 {
        /// Offset of the first invalid byte within the line.
        offset: usize,
    },
    /// The record is a web page (`"html"`, no `"text"`) and this build has no HTML reader.
    #[error(
        "field \"html\" needs the HTML reader: enable simstore's `html` feature, or give \"text\""
    )]
    NoHtmlReader,
    /// The line holds a NUL byte: binary data, not text.
    #[error("contains a NUL byte (binary data?): records must be UTF-8 text")]
    Binary,
    /// The line is not valid JSON.
    #[error("invalid JSON: {0}")]
    InvalidJson(String),
    /// The line is JSON but not an object.
    #[error("expected a JSON object like {{\"id\": \"...\", \"text\": \"...\"}}, found {0}")]
    NotAnObject(&'static str),
    /// The `id` field is missing.
    #[error("missing \"id\": every record needs a unique id, a string or a number")]
    MissingId,
    /// A field has the wrong type.
    #[error("field \"{field}\" must be {expected}, found {found}")]
    WrongType {
        /// The field name.
        field: &'static str,
        /// What it must be.
        expected: &'static str,
        /// What it was.
        found: &'static str,
    },
    /// A field named by an option (`--text-field`, `--id-field`) is missing or has the
    /// wrong type.
    #[error("field \"{field}\" ({flag}) {problem}")]
    Field {
        /// The field name.
        field: String,
        /// The option that named it.
        flag: &'static str,
        /// What is wrong, e.g. "must be a string, found a number".
        problem: String,
    },
    /// The `fp` field is not 16 hex digits.
    #[error("field \"fp\" must be exactly 16 hexadecimal digits, found {0:?}")]
    InvalidFingerprint(String),
    /// Neither text, title nor fp to make a fingerprint from.
    #[error(
        "nothing to fingerprint: give \"text\" (or \"title\") with words in it, or a precomputed \"fp\""
    )]
    Empty,
    /// A web page (`"html"`) whose reader kept no main text: what it shows is links,
    /// menus or other page chrome.
    #[error(
        "nothing to fingerprint: the page's reader kept no main text (what the page shows, if anything, is links, menus or other page chrome); give its text as \"text\" in a JSONL record, or a precomputed \"fp\""
    )]
    EmptyPage,
    /// The id is empty or too long.
    #[error("invalid id: {0}")]
    InvalidId(String),
    /// The line is longer than the limit (`MAX_LINE_BYTES` by default).
    #[error(
        "the line is longer than {}: split the document, raise the limit with --max-doc-bytes, or check the input is JSONL",
        human(*max as u64)
    )]
    TooLong {
        /// The limit, in bytes.
        max: usize,
    },
    /// A stored field (title, url) is longer than a store keeps
    /// ([`crate::Error::FieldTooLong`], whose message this is).
    #[error("{0}")]
    FieldTooLong(String),
    /// The record could not be fingerprinted for another reason than having no text.
    #[error("cannot fingerprint the record: {0}")]
    Fingerprint(String),
    /// The gzip member holding (the start of) the line is damaged; reading goes on at the
    /// next member.
    #[error("{0}")]
    Gzip(GzipError),
}

impl RecordError {
    /// Whether the line was a record (a JSON object) that could not be made into a
    /// document, rather than input that is not a record at all (not JSON, not UTF-8, a
    /// NUL byte, a line past the limit, a damaged gzip member).
    pub fn is_a_record(&self) -> bool {
        !matches!(
            self,
            RecordError::InvalidUtf8 { .. }
                | RecordError::Binary
                | RecordError::InvalidJson(_)
                | RecordError::NotAnObject(_)
                | RecordError::TooLong { .. }
                | RecordError::Gzip(_)
        )
    }
}

/// The record error for a fingerprinting error: [`RecordError::Empty`] for a document
/// with nothing to fingerprint, else the error's own message.
fn fingerprint_error(e: crate::Error) -> RecordError {
    match e {
        crate::Error::EmptyDocument => RecordError::Empty,
        other => RecordError::Fingerprint(other.to_string()),
    }
}

pub(super) fn type_name(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

fn opt_string(slot: Slot, field: &'static str) -> Result<Option<String>, RecordError> {
    match slot {
        Slot::Missing | Slot::Null => Ok(None),
        Slot::Str(s) => Ok(Some(s)),
        Slot::Other(found) => Err(RecordError::WrongType {
            field,
            expected: "a string",
            found,
        }),
    }
}

/// Checks raw bytes are text: UTF-8 without NUL bytes.
pub fn as_text(bytes: &[u8]) -> Result<&str, RecordError> {
    let s = std::str::from_utf8(bytes).map_err(|e| RecordError::InvalidUtf8 {
        offset: e.valid_up_to(),
    })?;
    if s.contains('\0') {
        return Err(RecordError::Binary);
    }
    Ok(s)
}

/// Parses one JSONL line (without its newline) into a record.
pub fn parse_jsonl(line: &[u8]) -> Result<Record, RecordError> {
    parse_jsonl_fields(line, &Fields::default(), 0)
}

/// [`parse_jsonl`], also telling whether the object had fields besides simstore's own
/// (`id`, `title`, `text`, `html`, `url`, `fp`), which the record leaves out, or one of
/// those twice (the record has the last): a caller that gives other fields a meaning, or
/// refuses them or repeated ones, reads the line again only then.
pub fn parse_jsonl_with_others(line: &[u8]) -> Result<(Record, bool), RecordError> {
    let parse = |text: &str| own_record_with_others(text, &Fields::default(), 0);
    surrogates::or_repaired(as_text(line)?, parse, |(record, _)| &record.id)
}

/// Parses one JSONL line (without its newline), line `line_no` of its input, into a
/// record, reading the fields `fields` names: simstore's own shape (ids in `id`, no text
/// field) in one pass (`reader::own`, with an exported record's [`Restore`]), others through
/// a `Value`. An unpaired surrogate escape reads as U+FFFD (`reader::surrogates`).
pub fn parse_jsonl_fields(
    line: &[u8],
    fields: &Fields,
    line_no: u64,
) -> Result<Record, RecordError> {
    let parse = |text: &str| match fields.is_own() {
        true => own_record(text, fields, line_no),
        false => value_record(text, fields, line_no),
    };
    surrogates::or_repaired(as_text(line)?, parse, |record| &record.id)
}

/// A record in simstore's own shape (line `line_no`), read in one pass.
fn own_record(text: &str, fields: &Fields, line_no: u64) -> Result<Record, RecordError> {
    own_record_with_others(text, fields, line_no).map(|(record, _)| record)
}

/// [`own_record`], and whether the object had other fields.
fn own_record_with_others(
    text: &str,
    fields: &Fields,
    line_no: u64,
) -> Result<(Record, bool), RecordError> {
    let mut own = match serde_json::from_str(text).map_err(|e| invalid_json(text, e))? {
        own::Parsed::Object(own) => own,
        own::Parsed::NotAnObject(found) => return Err(RecordError::NotAnObject(found)),
    };
    let id = match std::mem::take(&mut own.id) {
        Slot::Missing | Slot::Null if fields.optional_id => fields.line_id(line_no),
        // A number (kept as written) or a refusal: the `Value` path's answer.
        Slot::Other(_) => value_id(text, fields, line_no)?,
        slot => string_id(slot)?,
    };
    crate::types::document::check_id(&id).map_err(RecordError::InvalidId)?;
    let others = own.others;
    let mut record = own_fields(own, id)?;
    // An exported record: read again for its stored fields (only records with other
    // fields than the own ones, and a fingerprint, can have them).
    if others && record.fp.is_some() {
        record.restore = Restore::of(text)?;
    }
    Ok((record, others))
}

/// The id of a record whose id is not a string, read again through a `Value` (rare: the
/// one pass keeps no number's text): as [`Fields::id_of`] reads it.
fn value_id(text: &str, fields: &Fields, line_no: u64) -> Result<String, RecordError> {
    match serde_json::from_str(text).map_err(|e| invalid_json(text, e))? {
        Value::Object(mut obj) => fields.id_of(&mut obj, line_no),
        other => Err(RecordError::NotAnObject(type_name(&other))),
    }
}

/// A record read through a `Value`, its fields where `fields` says.
fn value_record(text: &str, fields: &Fields, line_no: u64) -> Result<Record, RecordError> {
    let value: Value = serde_json::from_str(text).map_err(|e| invalid_json(text, e))?;
    let mut obj = match value {
        Value::Object(o) => o,
        other => return Err(RecordError::NotAnObject(type_name(&other))),
    };
    let id = fields.id_of(&mut obj, line_no)?;
    crate::types::document::check_id(&id).map_err(RecordError::InvalidId)?;
    match &fields.text {
        None => own_fields(own::OwnFields::of(obj), id),
        Some(field) => match obj.remove(field) {
            Some(Value::String(text)) => Ok(Record {
                id,
                title: None,
                text: Some(text),
                url: None,
                left_out: None,
                fp: None,
                restore: None,
            }),
            None | Some(Value::Null) => Err(RecordError::Field {
                field: field.clone(),
                flag: "--text-field",
                problem: "is missing: every record needs its text there".into(),
            }),
            Some(other) => Err(RecordError::Field {
                field: field.clone(),
                flag: "--text-field",
                problem: format!("must be a string, found {}", type_name(&other)),
            }),
        },
    }
}

/// `e` of line `text`, naming a `NaN` or `Infinity` where it stopped (Python's `json.dumps`
/// writes them; JSON has no such numbers).
fn invalid_json(text: &str, e: serde_json::Error) -> RecordError {
    let at = e.column().saturating_sub(1);
    let named = ["NaN", "-Infinity", "Infinity"].into_iter().find(|w| {
        [at, at.saturating_sub(1)]
            .iter()
            .any(|&i| text.get(i..).is_some_and(|rest| rest.starts_with(w)))
    });
    RecordError::InvalidJson(match named {
        Some(w) => format!("{e}: {w} is not a JSON number (write null, or the number as a string)"),
        None => e.to_string(),
    })
}

/// The id of a record whose id is a string or missing (an error): a number or another type
/// goes through [`value_id`].
fn string_id(slot: Slot) -> Result<String, RecordError> {
    match slot {
        Slot::Str(s) => Ok(s),
        _ => Err(RecordError::MissingId),
    }
}

/// A web page's main text, title and the visible text its reader left out.
#[cfg(feature = "html")]
fn main_text(html: &str) -> Result<(String, Option<String>, String), RecordError> {
    let page = crate::input::html::parse(html);
    Ok((page.text, page.title, page.left_out))
}

/// Without the HTML reader a page cannot be read.
#[cfg(not(feature = "html"))]
fn main_text(_: &str) -> Result<(String, Option<String>, String), RecordError> {
    Err(RecordError::NoHtmlReader)
}

/// A record from its own fields (`title`, `text`, `html`, `url`, `fp`).
fn own_fields(own: own::OwnFields, id: String) -> Result<Record, RecordError> {
    let title = opt_string(own.title, "title")?;
    let text = opt_string(own.text, "text")?;
    let html = opt_string(own.html, "html")?;
    let url = opt_string(own.url, "url")?;
    let fp = match opt_string(own.fp, "fp")? {
        None => None,
        Some(s) => Some(
            s.parse::<Fingerprint>()
                .map_err(|_| RecordError::InvalidFingerprint(s))?,
        ),
    };
    // A web page: its main text stands for "text", its title for "title" unless given.
    let record = match (html, text) {
        (Some(html), None) => Record::of_page(id, &html, title)?,
        (_, text) => Record {
            title,
            text,
            ..Record::of_text(id, "")
        },
    };
    Ok(Record { url, fp, ..record })
}

impl Record {
    /// A record of an id and a text alone (no title, url, fingerprint).
    pub fn of_text(id: impl Into<String>, text: impl Into<String>) -> Record {
        Record {
            id: id.into(),
            title: None,
            text: Some(text.into()),
            url: None,
            left_out: None,
            fp: None,
            restore: None,
        }
    }

    /// A record of a web page (`html`): its main text, its title unless `title` is given,
    /// and the visible text its reader left out (how a record with `"html"` reads).
    pub fn of_page(
        id: impl Into<String>,
        html: &str,
        title: Option<String>,
    ) -> Result<Record, RecordError> {
        let (main, page_title, left_out) = main_text(html)?;
        Ok(Record {
            title: title.or(page_title),
            left_out: Some(left_out),
            ..Record::of_text(id, main)
        })
    }

    /// The record error for a fingerprinting error of this record: a web page with
    /// nothing to fingerprint is [`RecordError::EmptyPage`].
    fn error_of(&self, e: crate::Error) -> RecordError {
        match fingerprint_error(e) {
            RecordError::Empty if self.left_out.is_some() => RecordError::EmptyPage,
            other => other,
        }
    }

    /// The record as a document (text defaults to empty).
    pub fn to_document(&self) -> Document {
        Document {
            id: self.id.clone(),
            title: self.title.clone(),
            text: self.text.clone().unwrap_or_default(),
            url: self.url.clone(),
            left_out: self.left_out.clone(),
        }
    }

    /// The record's fingerprint: the given `fp`, else one computed from title and text.
    pub fn fingerprint(&self, f: &Fingerprinter) -> Result<Fingerprint, RecordError> {
        match self.fp {
            Some(fp) => Ok(fp),
            None => f
                .fingerprint(self.title.as_deref(), self.text.as_deref().unwrap_or(""))
                .map_err(|e| self.error_of(e)),
        }
    }

    /// The record's fingerprint and, when it is computed from title and text, the text's
    /// shingle sketch and weak bits, in one analysis (for a rule's verification and
    /// probes); a record with a given `fp` has neither.
    pub fn query_key(&self, f: &Fingerprinter) -> Result<QueryKey, RecordError> {
        match self.fp {
            Some(fp) => Ok(QueryKey::from(fp)),
            None => self.page_analysis(f).map(|a| QueryKey::from(&a)),
        }
    }

    /// The analysis of the record as a store keeps and queries it: for a web page whose
    /// reader left out much, by its whole visible text ([`analyze_page`]).
    fn page_analysis(&self, f: &Fingerprinter) -> Result<Analysis, RecordError> {
        let text = self.text.as_deref().unwrap_or("");
        analyze_page(f, self.title.as_deref(), text, self.left_out.as_deref())
            .map_err(|e| self.error_of(e))
    }

    /// The analysis of the record's title and text (whether or not it gives an `fp`).
    pub fn analysis(&self, f: &Fingerprinter) -> Result<Analysis, RecordError> {
        f.analyze(self.title.as_deref(), self.text.as_deref().unwrap_or(""))
            .map_err(|e| self.error_of(e))
    }

    /// The store entry for this record (fingerprinting it unless `fp` was given). A record
    /// fingerprinted from its text also gets its content hash (the exact-duplicate key) and
    /// its shingle sketch (for verified queries); a record with a given `fp` has neither.
    pub fn into_entry(mut self, f: &Fingerprinter) -> Result<Entry, RecordError> {
        crate::types::check_stored_fields(&self.id, self.title.as_deref(), self.url.as_deref())
            .map_err(|e| RecordError::FieldTooLong(e.to_string()))?;
        let restore = self.restore.take().unwrap_or_default();
        let (fp, content_hash, sketch, (weak_bits, main_sketch)) = match self.fp {
            Some(fp) => (fp, restore.content_hash, restore.sketch, (None, None)),
            None => {
                let a = self.page_analysis(f)?;
                let unstored = (a.weak_bits, a.main_sketch);
                (a.fingerprint, Some(a.content_hash), a.sketch, unstored)
            }
        };
        let length = match self.text.as_deref() {
            Some(t) => t.chars().count() as u64,
            None => restore.length.unwrap_or(0),
        };
        Ok(Entry {
            id: self.id,
            fp,
            meta: DocMeta {
                title: self.title,
                url: self.url,
                length,
                content_hash,
                sketch,
                weak_bits,
                main_sketch,
                times: restore.times,
            },
        })
    }
}

/// One numbered line of input: its bytes (without the line ending), or why it could not
/// be read as a record.
pub type NumberedLine = (u64, Result<Vec<u8>, RecordError>);

/// Reads lines of at most [`MAX_LINE_BYTES`] bytes (or the limit given), numbering them
/// from 1. Longer lines are skipped to their end and reported as [`RecordError::TooLong`].
/// A damaged gzip member that reading resumes after ([`GzipError::resumed_at`]) is the
/// line it interrupted, reported as [`RecordError::Gzip`].
pub struct Lines<R> {
    inner: R,
    line_no: u64,
    max: usize,
}

impl<R: BufRead> Lines<R> {
    /// Lines of `inner`, with the default limit.
    pub fn new(inner: R) -> Self {
        Self::with_limit(inner, MAX_LINE_BYTES)
    }

    /// Lines of `inner`, each at most `max` bytes.
    pub fn with_limit(inner: R, max: usize) -> Self {
        Self {
            inner,
            line_no: 0,
            max,
        }
    }

    /// The reader the lines are read from.
    pub fn get_ref(&self) -> &R {
        &self.inner
    }

    /// The next line as `(line number, bytes or error)`, without its `\n` / `\r\n`;
    /// `None` at the end. An I/O error ends the iteration with `Some(Err)`.
    pub fn next_line(&mut self) -> io::Result<Option<NumberedLine>> {
        let mut buf = Vec::new();
        let read = (&mut self.inner)
            .take((self.max as u64).saturating_add(1))
            .read_until(b'\n', &mut buf);
        let n = match read {
            Ok(n) => n,
            Err(e) => {
                let Some(gz) = GzipError::of(&e).filter(|g| g.resumed_at.is_some()) else {
                    return Err(e);
                };
                self.line_no += 1;
                return Ok(Some((self.line_no, Err(RecordError::Gzip(gz.clone())))));
            }
        };
        if n == 0 {
            return Ok(None);
        }
        self.line_no += 1;
        if self.line_no == 1 && buf.starts_with(b"\xEF\xBB\xBF") {
            // A UTF-8 byte-order mark (as some Windows tools write) is not part of the record.
            buf.drain(..3);
        }
        if buf.last() == Some(&b'\n') {
            buf.pop();
            if buf.last() == Some(&b'\r') {
                buf.pop();
            }
        } else if buf.len() > self.max {
            // Skip the rest of the over-long line.
            loop {
                let chunk = match self.inner.fill_buf() {
                    Ok(chunk) => chunk,
                    Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                    // A damaged gzip member ends the long line: reading resumes after it.
                    Err(e) if GzipError::of(&e).is_some_and(|g| g.resumed_at.is_some()) => break,
                    Err(e) => return Err(e),
                };
                if chunk.is_empty() {
                    break;
                }
                match chunk.iter().position(|&b| b == b'\n') {
                    Some(i) => {
                        self.inner.consume(i + 1);
                        break;
                    }
                    None => {
                        let len = chunk.len();
                        self.inner.consume(len);
                    }
                }
            }
            let max = self.max;
            return Ok(Some((self.line_no, Err(RecordError::TooLong { max }))));
        }
        Ok(Some((self.line_no, Ok(buf))))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_one_pass_read_answers_as_the_value_read() {
        let lines = [
            r#"{"id":"a","title":"T","text":"one two","url":"https://e.com/a","fp":"00000000000000ff"}"#,
            r#"{"id":"a\u00e9\n","text":"caf\u00e9 \"quoted\"","extra":{"x":[1,2,{"y":null}]},"n":1.5e3}"#,
            r#"{"id":"a","id":"b","text":"first","text":"second"}"#,
            r#"{"text":"no id"}"#,
            r#"{"id":null,"text":"null id"}"#,
            r#"{"id":7,"text":"numeric id"}"#,
            r#"{"id":1.0,"text":"fraction id"}"#,
            r#"{"id":-2.5e3,"text":"exponent id"}"#,
            r#"{"id":["a"],"text":"array id"}"#,
            r#"{"id":"a","title":3}"#,
            r#"{"id":"a","text":{"x":1}}"#,
            r#"{"id":"a","html":true}"#,
            r#"{"id":"a","url":[]}"#,
            r#"{"id":"a","fp":"xyz"}"#,
            r#"{"id":"a","title":null,"text":null,"html":null,"url":null,"fp":null}"#,
            r#"{"id":"a","html":"<html><title>P</title><body><p>Body text here.</p></body></html>"}"#,
            r#"{"id":"a","text":"t","html":"<p>ignored</p>"}"#,
            r#"{"id":""}"#,
            r#"{"id":"a","ID":"b","Text":"case matters"}"#,
            r#"[1,{"id":"a"}]"#,
            r#""a string""#,
            "42",
            "-1.5",
            "true",
            "null",
            r#"{"id":"a","text":"x"} trailing"#,
            r#"{"id":"a","text":"x""#,
            r#"{"id":"a",}"#,
            r#"{"id":"a","n":1e400}"#,
            "",
        ];
        let optional = Fields {
            optional_id: true,
            ..Fields::default()
        };
        let names = Fields {
            names_only: true,
            ..optional.clone()
        };
        for line in lines {
            for fields in [&Fields::default(), &optional, &names] {
                let one_pass = own_record(line, fields, 7);
                let via_value = value_record(line, fields, 7);
                assert_eq!(one_pass, via_value, "{line} {fields:?}");
            }
        }
        // And the default fields take the one-pass read, ids optional or not.
        assert!(Fields::default().is_own());
        assert!(optional.is_own());
        let fraction = br#"{"id":-2.5e3,"text":"x"}"#;
        assert_eq!(
            parse_jsonl_fields(fraction, &names, 1).unwrap().id,
            "-2500.0"
        );
        assert!(parse_jsonl_fields(fraction, &optional, 1).is_err());
        assert!(
            !Fields {
                id: "url".into(),
                ..Fields::default()
            }
            .is_own()
        );
        assert!(
            !Fields {
                text: Some("text".into()),
                ..Fields::default()
            }
            .is_own()
        );
        assert_eq!(
            parse_jsonl(br#"{"id":"a","text":"x","k":3}"#),
            own_record(r#"{"id":"a","text":"x","k":3}"#, &Fields::default(), 0)
        );
    }

    #[test]
    fn other_fields_are_told_apart_from_own_ones() {
        for (line, others) in [
            (r#"{"id":"a","text":"x"}"#, false),
            (
                r#"{"id":"a","title":null,"text":"x","html":null,"url":"u","fp":null}"#,
                false,
            ),
            (r#"{"id":"a","text":"x","k":3}"#, true),
            (r#"{"k":null,"id":"a","text":"x"}"#, true),
            (r#"{"id":"a","text":"x","verify":{"nested":[1,2]}}"#, true),
            (r#"{"id":"a","text":"x","text":"y"}"#, true),
            (
                r#"{"id":"a","text":"x","title":"t","url":null,"url":"u"}"#,
                true,
            ),
        ] {
            let (record, got) = parse_jsonl_with_others(line.as_bytes()).unwrap();
            assert_eq!(got, others, "{line}");
            assert_eq!(Ok(record), parse_jsonl(line.as_bytes()), "{line}");
        }
        assert!(parse_jsonl_with_others(b"[1]").is_err());
    }

    #[test]
    fn query_keys_are_those_of_the_text() {
        let f = Fingerprinter::new();
        let r = parse_jsonl(br#"{"id":"a","title":"T","text":"one two three four"}"#).unwrap();
        let key = r.query_key(&f).unwrap();
        assert_eq!(key.fp, r.fingerprint(&f).unwrap());
        assert_eq!(key.sketch, f.sketch(Some("T"), "one two three four"));
        assert_eq!(
            key.weak_bits,
            f.analyze(Some("T"), "one two three four")
                .unwrap()
                .weak_bits
        );
        assert!(key.weak_bits.is_some());
        let given = parse_jsonl(br#"{"id":"b","text":"x","fp":"00000000000000ff"}"#).unwrap();
        assert_eq!(
            given.query_key(&f).unwrap(),
            QueryKey::from(Fingerprint(255))
        );
        let empty = parse_jsonl(br#"{"id":"c","text":"..."}"#).unwrap();
        assert!(matches!(empty.query_key(&f), Err(RecordError::Empty)));
    }

    #[test]
    fn named_fields_optional_and_numeric_ids() {
        let fields = Fields {
            id: "url".into(),
            optional_id: true,
            text: Some("content".into()),
            ..Fields::default()
        };
        let r = parse_jsonl_fields(br#"{"content":"x y","title":"T","fp":1}"#, &fields, 7).unwrap();
        let only_text = Record {
            id: "7".into(),
            title: None,
            text: Some("x y".into()),
            url: None,
            left_out: None,
            fp: None,
            restore: None,
        };
        assert_eq!(
            r, only_text,
            "no url: the line number; title and fp not read"
        );
        let r = parse_jsonl_fields(br#"{"url":12,"content":"x y"}"#, &fields, 7).unwrap();
        assert_eq!(r.id, "12");
        let e = parse_jsonl_fields(br#"{"url":"u","text":"x"}"#, &fields, 1).unwrap_err();
        assert!(
            matches!(
                e,
                RecordError::Field {
                    flag: "--text-field",
                    ..
                }
            ),
            "{e:?}"
        );
        let e = parse_jsonl_fields(br#"{"url":[1],"content":"x"}"#, &fields, 1).unwrap_err();
        assert!(
            matches!(
                e,
                RecordError::Field {
                    flag: "--id-field",
                    ..
                }
            ),
            "{e:?}"
        );
        // Optional ids with the record's own fields: fp still read.
        let own = Fields {
            optional_id: true,
            ..Fields::default()
        };
        let r = parse_jsonl_fields(br#"{"fp":"00000000000000ff"}"#, &own, 3).unwrap();
        assert_eq!((r.id.as_str(), r.fp), ("3", Some(Fingerprint(255))));
        // Optional ids keep what an exported record carries, as the default fields do.
        let line = br#"{"id":"e","fp":"00000000000000ff","length":12,"time":5}"#;
        assert!(parse_jsonl(line).unwrap().restore.is_some());
        assert_eq!(parse_jsonl_fields(line, &own, 1), parse_jsonl(line));
        // The default: an id is required, and a number is one too (as `import` reads it).
        assert_eq!(parse_jsonl(br#"{"id":5,"text":"x"}"#).unwrap().id, "5");
        assert!(matches!(
            parse_jsonl(br#"{"text":"x"}"#),
            Err(RecordError::MissingId)
        ));
    }

    #[test]
    fn parses_full_and_minimal_records() {
        let r =
            parse_jsonl(br#"{"id":"a","title":"T","text":"x","url":"u","fp":"00000000000000ff"}"#)
                .unwrap();
        assert_eq!(r.fp, Some(Fingerprint(255)));
        assert_eq!(r.title.as_deref(), Some("T"));
        let r = parse_jsonl(br#"{"id":"b","text":"hello","extra":1}"#).unwrap();
        assert_eq!(
            (r.id.as_str(), r.text.as_deref(), r.fp),
            ("b", Some("hello"), None)
        );
    }

    #[test]
    fn html_records_stand_for_their_main_text() {
        let r = parse_jsonl(
            br#"{"id":"p","html":"<html><head><title>Story - Site</title></head><body><nav>Home | News</nav><p>The story itself.</p></body></html>"}"#,
        )
        .unwrap();
        assert_eq!(r.title.as_deref(), Some("Story"));
        assert_eq!(r.text.as_deref(), Some("The story itself."));
        // Given text and title win over the page's.
        let r = parse_jsonl(
            br#"{"id":"p","title":"T","text":"given","html":"<title>X</title><p>page</p>"}"#,
        )
        .unwrap();
        assert_eq!(
            (r.title.as_deref(), r.text.as_deref()),
            (Some("T"), Some("given"))
        );
        assert!(matches!(
            parse_jsonl(br#"{"id":"p","html":5}"#),
            Err(RecordError::WrongType { field: "html", .. })
        ));
    }

    #[test]
    fn bad_records_say_why() {
        assert!(matches!(
            parse_jsonl(b"{not json"),
            Err(RecordError::InvalidJson(e)) if !e.contains("NaN")
        ));
        // Python's json.dumps writes NaN and Infinity, which JSON has not: named.
        let fields = Fields {
            text: Some("body".into()),
            ..Fields::default()
        };
        for (line, word) in [
            (&br#"{"id":"a","text":"x", "score": NaN}"#[..], "NaN"),
            (br#"{"id":"a","text":-Infinity}"#, "-Infinity"),
        ] {
            for r in [parse_jsonl(line), parse_jsonl_fields(line, &fields, 1)] {
                assert!(
                    matches!(&r, Err(RecordError::InvalidJson(e)) if e.contains(&format!("{word} is not a JSON number"))),
                    "{r:?}"
                );
            }
        }
        assert!(matches!(
            parse_jsonl(b"[1,2]"),
            Err(RecordError::NotAnObject("an array"))
        ));
        assert!(matches!(
            parse_jsonl(br#"{"text":"x"}"#),
            Err(RecordError::MissingId)
        ));
        assert!(matches!(
            parse_jsonl(br#"{"id":[7]}"#),
            Err(RecordError::Field { ref field, .. }) if field == "id"
        ));
        assert!(matches!(
            parse_jsonl(br#"{"id":"a","text":["x"]}"#),
            Err(RecordError::WrongType {
                field: "text",
                found: "an array",
                ..
            })
        ));
        assert!(matches!(
            parse_jsonl(br#"{"id":"a","fp":"xyz"}"#),
            Err(RecordError::InvalidFingerprint(_))
        ));
        assert!(matches!(
            parse_jsonl(b"{\"id\":\"a\",\"text\":\"\xff\"}"),
            Err(RecordError::InvalidUtf8 { offset: 18 })
        ));
        assert!(matches!(
            parse_jsonl(b"{\"id\":\"a\"}\0"),
            Err(RecordError::Binary)
        ));
        assert!(matches!(
            parse_jsonl(br#"{"id":""}"#),
            Err(RecordError::InvalidId(_))
        ));
    }

    #[test]
    fn empty_record_cannot_be_fingerprinted() {
        let r = parse_jsonl(br#"{"id":"a","text":"  ..."}"#).unwrap();
        assert!(matches!(
            r.into_entry(&Fingerprinter::new()),
            Err(RecordError::Empty)
        ));
    }

    #[cfg(feature = "html")]
    #[test]
    fn a_page_of_links_only_says_its_page_has_no_main_text() {
        let line = br#"{"id":"a","html":"<html><body><ul><li><a href='/x'>One story</a></li><li><a href='/y'>Another</a></li></ul></body></html>"}"#;
        let err = parse_jsonl(line)
            .unwrap()
            .into_entry(&Fingerprinter::new())
            .unwrap_err();
        assert_eq!(err, RecordError::EmptyPage);
        assert!(
            err.to_string()
                .contains("the page's reader kept no main text")
        );
        assert!(err.is_a_record());
    }

    /// Only a document with nothing to fingerprint is "empty"; another fingerprinting
    /// error keeps its own message.
    #[test]
    fn fingerprint_errors_keep_their_own_message() {
        assert_eq!(
            fingerprint_error(crate::Error::EmptyDocument),
            RecordError::Empty
        );
        let other = fingerprint_error(crate::Error::TooLarge("a text of 5 GiB".into()));
        assert_eq!(
            other,
            RecordError::Fingerprint("too large: a text of 5 GiB".into())
        );
        assert_eq!(
            other.to_string(),
            "cannot fingerprint the record: too large: a text of 5 GiB"
        );
    }

    #[test]
    fn lines_are_numbered_and_bounded() {
        let input = b"one\r\ntoolongline\nthree".as_slice();
        let mut lines = Lines::with_limit(input, 5);
        assert_eq!(lines.next_line().unwrap(), Some((1, Ok(b"one".to_vec()))));
        assert_eq!(
            lines.next_line().unwrap(),
            Some((2, Err(RecordError::TooLong { max: 5 })))
        );
        assert_eq!(lines.next_line().unwrap(), Some((3, Ok(b"three".to_vec()))));
        assert_eq!(lines.next_line().unwrap(), None);
    }
}
