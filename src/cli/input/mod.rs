//! Reading inputs: the one place that decides how an input is read, for `import`,
//! `query --batch` and `fingerprint --batch`.
//!
//! An input is a file, `-` (stdin) or a directory (recursed in sorted order: `.html`/`.htm`
//! files are HTML pages, `.txt` files text documents, ids as [`ids`] says; other files
//! are skipped and counted). A file or stdin starting with the gzip magic `1f 8b` is
//! decompressed (all members); a Parquet file is read by its row groups, each row a JSONL
//! line of its columns (`parquet.rs`). Its format is `--format`, else chosen by
//! [`Format::Auto`].
//! [`Inputs`] turns the inputs into [`Item`]s — raw units (a JSONL line, a page), each
//! with the [`Place`] to name in messages — that callers parse in parallel with
//! [`to_record_with`], JSONL lines by the fields of [`FieldArgs`].

mod detect;
mod fields;
mod ids;
mod inputs;
mod parquet;
mod spool;
mod stamp;

use std::collections::BTreeMap;
use std::fmt;
use std::path::Path;
use std::sync::Arc;

use anyhow::{Context, Result};
use simstore::input::limit;
use simstore::input::reader::{self, Fields, Lines, Record};

use detect::{open, resolve};
pub use fields::FieldArgs;
pub use inputs::{Damaged, Inputs, LEFT_OUT};
pub use parquet::lossy_text;
pub use spool::{cannot_reopen, spool};
pub use stamp::{FileId, Snapshot, Stamp};

/// How to read an input.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    /// By the file name (a final .gz ignored): .jsonl/.ndjson/.json JSONL, .warc WARC,
    /// .html/.htm HTML, .txt text, .parquet Parquet; other files are text unless they start with `WARC/`.
    /// Stdin and unnamed .gz contents are sniffed: `WARC/` WARC, `{` (or blank) JSONL,
    /// `<!doctype html` / `<html` HTML, anything else text.
    Auto,
    /// One JSON record per line.
    Jsonl,
    /// The whole file is one document; its id is its name (`stdin-HASH` for stdin).
    Text,
    /// The whole file is one HTML page (its main text is fingerprinted); its id as for text.
    Html,
    /// A WARC file: each HTML or text response is a document; id and url = WARC-Target-URI.
    Warc,
    /// A Parquet file (auto: a `.parquet` name): each row is a record of its columns, as a
    /// JSONL line of the same fields would be.
    Parquet,
}

/// The name of an input for messages: the path, `<stdin>` for `-`, the input a scratch
/// file copies ([`spool()`]).
pub fn display_name(path: &str) -> &str {
    match path {
        "-" => "<stdin>",
        _ => spool::spooled_name(path).unwrap_or(path),
    }
}

/// Reads a whole file as one document, for `--file` arguments: decompressed when it starts
/// with the gzip magic, an HTML page (title and main text) when named .html/.htm (before a
/// final .gz) or starting with `<!doctype html` / `<html`, else a text. Returns the title
/// (HTML only) and the text. The file may hold at most
/// [`simstore::input::limit::DEFAULT_MAX_DOC_BYTES`] (decompressed).
pub fn read_document(path: &Path) -> Result<(Option<String>, String)> {
    let record = read_page(path)?;
    Ok((record.title, record.text.unwrap_or_default()))
}

/// [`read_document`] as a record, with what a web page's reader left out of its text
/// (`Record::left_out`), its id its path.
pub fn read_page(path: &Path) -> Result<Record> {
    let (name, bytes, _) = read_whole(path)?;
    page_record(name, bytes)
}

/// Reads a whole file as one record, for `explain --files`: a file that `import` reads as
/// JSONL (named .jsonl, .ndjson or .json, gzip'd or not) must hold one record, read as
/// `import` reads it, by `fields`; any other file is read as [`read_document`] reads it,
/// its id its path.
pub fn read_record(path: &Path, fields: &Fields) -> Result<Record> {
    let (name, bytes, decompressed) = read_whole(path)?;
    let format = resolve(
        Format::Auto,
        &name,
        decompressed,
        &mut bytes.as_slice(),
        false,
    );
    match format {
        Ok(Format::Jsonl) => one_record(&name, &bytes, fields),
        _ => page_record(name, bytes),
    }
}

/// The name, bytes (decompressed) and whether they were gzip'd of a file read whole, at
/// most [`limit::DEFAULT_MAX_DOC_BYTES`].
fn read_whole(path: &Path) -> Result<(String, Vec<u8>, bool)> {
    let name = path.to_string_lossy().into_owned();
    let (input, decompressed) = open(&name, None, None)?;
    let bytes = limit::read_bounded(input, limit::DEFAULT_MAX_DOC_BYTES)
        .with_context(|| format!("cannot read {name}"))?
        .with_context(|| format!("cannot read {name}"))?;
    Ok((name, bytes, decompressed))
}

/// A whole file as a record named `name`: an HTML page when [`resolve`] sniffs one, else
/// a text.
fn page_record(name: String, bytes: Vec<u8>) -> Result<Record> {
    let html = matches!(
        resolve(Format::Auto, &name, true, &mut bytes.as_slice(), false),
        Ok(Format::Html)
    );
    to_record(Raw::Page {
        id: name.clone(),
        url: None,
        bytes,
        charset: None,
        html,
    })
    .map_err(|e| anyhow::anyhow!("{name}: {e}"))
}

/// The one record of the JSONL `bytes` of `name` (blank lines are none), read by `fields`
/// with its line number.
fn one_record(name: &str, bytes: &[u8], fields: &Fields) -> Result<Record> {
    let mut lines = Lines::new(bytes);
    let mut found = None;
    while let Some((n, line)) = lines.next_line()? {
        let line = line.map_err(|e| anyhow::anyhow!("{name}:{n}: {e}"))?;
        if line.iter().all(u8::is_ascii_whitespace) {
            continue;
        }
        if found.is_some() {
            anyhow::bail!("{name}:{n}: a second record: give a file holding one record");
        }
        let record = to_record_with(Raw::Json(line), fields, n)
            .map_err(|e| anyhow::anyhow!("{name}:{n}: {e}"))?;
        found = Some(record);
    }
    found.with_context(|| format!("{name}: no record in this JSONL file"))
}

/// Where an item is, for messages.
#[derive(Debug, Clone)]
pub struct Place {
    /// The input's name (a path, `<stdin>`, or a file found in a directory).
    pub name: Arc<str>,
    /// Where in it.
    pub at: At,
    /// The input could not be read from here on (a corrupt gzip stream).
    pub rest: bool,
}

/// Where in an input an item is.
#[derive(Debug, Clone, Copy)]
pub enum At {
    /// A JSONL line (numbered from 1, blank lines included).
    Line(u64),
    /// A WARC record: its number (from 1) and byte offset (of the uncompressed stream
    /// when `gz`).
    Record { number: u64, offset: u64, gz: bool },
    /// The whole file.
    File,
}

impl Place {
    /// What a failure skips: `record`, `file` or `rest of the file`.
    pub fn skipped(&self) -> &'static str {
        match self.at {
            _ if self.rest => "rest of the file",
            At::Line(_) | At::Record { .. } => "record",
            At::File => "file",
        }
    }

    /// A line number for JSON answers (the line or record number; 0 for a file).
    pub fn number(&self) -> u64 {
        match self.at {
            At::Line(n) | At::Record { number: n, .. } => n,
            At::File => 0,
        }
    }
}

impl fmt::Display for Place {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let name = &self.name;
        match self.at {
            At::Line(n) => write!(f, "{name}:{n}"),
            At::Record { number, offset, gz } => {
                let unc = if gz { " (uncompressed)" } else { "" };
                write!(f, "{name}: record {number} at byte {offset}{unc}")
            }
            At::File => write!(f, "{name}"),
        }
    }
}

/// One unit of input, before parsing.
#[derive(Debug)]
pub enum Raw {
    /// A JSONL line (without its line ending).
    Json(Vec<u8>),
    /// A whole document: a text or HTML file, or a page of a WARC file.
    Page {
        /// Its id (see [`ids`], or the WARC-Target-URI).
        id: String,
        /// Its URL, when known.
        url: Option<String>,
        /// The bytes as stored.
        bytes: Vec<u8>,
        /// A declared charset (the HTTP Content-Type's), if any.
        charset: Option<String>,
        /// HTML (else text).
        html: bool,
    },
}

/// One item read: where it is and the raw unit, or why it could not be read.
pub type Item = (Place, Result<Raw, String>);

/// Parses a raw unit into a record (JSON parsing, HTML text extraction, text decoding).
pub fn to_record(raw: Raw) -> Result<Record, String> {
    to_record_with(raw, &Fields::default(), 0)
}

/// [`to_record`], reading a JSONL line (line `line_no` of its input) by `fields`.
pub fn to_record_with(raw: Raw, fields: &Fields, line_no: u64) -> Result<Record, String> {
    match raw {
        Raw::Json(bytes) => {
            reader::parse_jsonl_fields(&bytes, fields, line_no).map_err(|e| e.to_string())
        }
        Raw::Page {
            id,
            url,
            bytes,
            charset,
            html,
        } => {
            simstore::types::document::check_id(&id).map_err(|e| format!("invalid id: {e}"))?;
            if html {
                html_document(id, url, &bytes, charset.as_deref())
            } else {
                text_document(id, url, &bytes, charset.as_deref())
            }
        }
    }
}

/// An HTML page as a record: its title and main text (`simstore::input::html`: boilerplate
/// removed, charset from `charset` (the HTTP header's), else the page's `<meta>`, else
/// detected).
fn html_document(
    id: String,
    url: Option<String>,
    bytes: &[u8],
    charset: Option<&str>,
) -> Result<Record, String> {
    let page = simstore::input::html::page_from_bytes(bytes, charset).map_err(|e| e.to_string())?;
    Ok(Record {
        id,
        title: page.title,
        text: Some(page.text),
        url,
        left_out: Some(page.left_out),
        fp: None,
        restore: None,
    })
}

/// A text file or page as a record, decoded from `charset` or the detected charset
/// (`simstore::input::charset`).
fn text_document(
    id: String,
    url: Option<String>,
    bytes: &[u8],
    charset: Option<&str>,
) -> Result<Record, String> {
    let decoded = simstore::input::charset::decode(bytes, charset).map_err(|e| e.to_string())?;
    Ok(Record {
        id,
        title: None,
        text: Some(decoded.text),
        url,
        left_out: None,
        fp: None,
        restore: None,
    })
}

/// Why something was skipped, in the plural (also its key in JSON) and in the singular.
pub type Reason = (&'static str, &'static str);

/// Inputs or parts of them that are not documents, by reason.
#[derive(Debug, Default)]
pub struct Skipped {
    /// By the reason in the plural: the count and the reason in the singular.
    counts: BTreeMap<&'static str, (u64, &'static str)>,
}

impl Skipped {
    fn add(&mut self, (plural, singular): Reason) {
        self.counts.entry(plural).or_insert((0, singular)).0 += 1;
    }

    /// How many were skipped in all.
    pub fn total(&self) -> u64 {
        self.counts.values().map(|(n, _)| n).sum()
    }

    /// The counts by reason (in the plural), as JSON.
    pub fn json(&self) -> serde_json::Value {
        let counts: BTreeMap<_, _> = self.counts.iter().map(|(r, (n, _))| (r, n)).collect();
        serde_json::json!(counts)
    }
}

impl fmt::Display for Skipped {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "skipped {}", self.total())?;
        if !self.counts.is_empty() {
            let parts: Vec<String> = self
                .counts
                .iter()
                .map(|(plural, (n, singular))| {
                    format!("{n} {}", if *n == 1 { singular } else { plural })
                })
                .collect();
            write!(f, " ({})", parts.join(", "))?;
        }
        Ok(())
    }
}
