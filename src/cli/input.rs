//! Reading inputs: the one place that decides how an input is read, for `import`,
//! `query --batch` and `fingerprint --batch`.
//!
//! An input is a file, `-` (stdin) or a directory (recursed in sorted order: `.html`/`.htm`
//! files are HTML pages, `.txt` files text documents, id = the path; other files are
//! skipped and counted). A file or stdin starting with the gzip magic `1f 8b` is
//! decompressed (all members). Its format is `--format`, else chosen by [`Format::Auto`].
//! [`Inputs`] turns the inputs into [`Item`]s — raw units (a JSONL line, a page), each
//! with the [`Place`] to name in messages — that callers parse in parallel with
//! [`to_record`].

use std::collections::{BTreeMap, VecDeque};
use std::fmt;
use std::fs::File;
use std::io::{self, BufRead, BufReader, Read};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use anyhow::{Context, Result};
use indicatif::ProgressBar;
use simstore::input::archive::{self, Records};
use simstore::input::reader::{self, Lines, Record};

/// How to read an input.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    /// By the file name (a final .gz ignored): .jsonl/.ndjson/.json JSONL, .warc WARC,
    /// .html/.htm HTML, .txt text; other files are text unless they start with `WARC/`.
    /// Stdin and unnamed .gz contents are sniffed: `WARC/` WARC, `{` (or blank) JSONL,
    /// `<!doctype html` / `<html` HTML, anything else text.
    Auto,
    /// One JSON record per line.
    Jsonl,
    /// The whole file is one document; its id is the path.
    Text,
    /// The whole file is one HTML page (its main text is fingerprinted); its id is the path.
    Html,
    /// A WARC file: each HTML or text response is a document; id and url = WARC-Target-URI.
    Warc,
}

/// The name of an input for messages: the path, or `<stdin>` for `-`.
pub fn display_name(path: &str) -> &str {
    if path == "-" { "<stdin>" } else { path }
}

/// Reads a whole file as one document, for `--file` arguments: decompressed when it starts
/// with the gzip magic, an HTML page (title and main text) when named .html/.htm (before a
/// final .gz) or starting with `<!doctype html` / `<html`, else a text. Returns the title
/// (HTML only) and the text.
pub fn read_document(path: &Path) -> Result<(Option<String>, String)> {
    let name = path.to_string_lossy().into_owned();
    let (mut input, _) = open(&name, None)?;
    let mut bytes = Vec::new();
    input
        .read_to_end(&mut bytes)
        .with_context(|| format!("cannot read {name}"))?;
    let html = matches!(
        resolve(Format::Auto, &name, true, &mut bytes.as_slice(), false),
        Ok(Format::Html)
    );
    let record = to_record(Raw::Page {
        id: name.clone(),
        url: None,
        bytes,
        charset: None,
        html,
    })
    .map_err(|e| anyhow::anyhow!("{name}: {e}"))?;
    Ok((record.title, record.text.unwrap_or_default()))
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
        /// Its id (the path, or the WARC-Target-URI).
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
    match raw {
        Raw::Json(bytes) => reader::parse_jsonl(&bytes).map_err(|e| e.to_string()),
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
        fp: None,
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
        fp: None,
    })
}

/// Inputs or parts of them that are not documents, by reason.
#[derive(Debug, Default)]
pub struct Skipped {
    counts: BTreeMap<&'static str, u64>,
}

impl Skipped {
    fn add(&mut self, reason: &'static str) {
        *self.counts.entry(reason).or_default() += 1;
    }

    /// How many were skipped in all.
    pub fn total(&self) -> u64 {
        self.counts.values().sum()
    }

    /// The counts by reason, as JSON.
    pub fn json(&self) -> serde_json::Value {
        serde_json::json!(self.counts)
    }
}

impl fmt::Display for Skipped {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "skipped {}", self.total())?;
        if !self.counts.is_empty() {
            let parts: Vec<String> = self
                .counts
                .iter()
                .map(|(r, n)| format!("{n} {r}"))
                .collect();
            write!(f, " ({})", parts.join(", "))?;
        }
        Ok(())
    }
}

const NOT_A_PAGE_FILE: &str = "files in directories that are not .html, .htm or .txt";

/// A gzip decompression failure (as opposed to an I/O error of the file).
#[derive(Debug)]
struct GzipError(io::Error);

impl fmt::Display for GzipError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.0)
    }
}

impl std::error::Error for GzipError {}

/// A gzip decoder whose errors are marked as [`GzipError`].
struct GzRead<R: BufRead>(flate2::bufread::MultiGzDecoder<R>);

impl<R: BufRead> Read for GzRead<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        self.0
            .read(buf)
            .map_err(|e| io::Error::new(e.kind(), GzipError(e)))
    }
}

fn gzip_failure(e: &io::Error) -> Option<String> {
    e.get_ref()
        .filter(|inner| inner.is::<GzipError>())
        .map(|inner| format!("cannot decompress (the gzip data is corrupt or truncated: {inner})"))
}

type Input = Box<dyn BufRead + Send>;

/// What is being read now.
enum Current {
    Jsonl {
        name: Arc<str>,
        lines: Lines<Input>,
        last: u64,
    },
    Warc {
        name: Arc<str>,
        records: Records<Input>,
        gz: bool,
    },
}

enum Pending {
    /// An input as given.
    Arg(String),
    /// A page file found in a directory.
    DirFile { path: PathBuf, html: bool },
}

/// The items of a list of inputs, in order; see the module documentation.
pub struct Inputs {
    pending: VecDeque<Pending>,
    current: Option<Current>,
    format: Format,
    /// Whether a file of another kind is read line by line (batch queries) or as one text.
    lines: bool,
    bar: Option<ProgressBar>,
    /// What was skipped so far.
    pub skipped: Skipped,
}

impl Inputs {
    /// Reads `paths` in `format`, advancing `bar` (if any) by the bytes read.
    pub fn new(paths: &[String], format: Format, bar: Option<ProgressBar>) -> Self {
        Self {
            pending: paths.iter().cloned().map(Pending::Arg).collect(),
            current: None,
            format,
            lines: false,
            bar,
            skipped: Skipped::default(),
        }
    }

    /// Reads `paths` for a batch (`query --batch`, `fingerprint --batch`): as [`Inputs::new`]
    /// with [`Format::Auto`], except that a file that is not WARC or HTML (whatever its
    /// name) is read line by line, one JSONL record (or query) per line.
    pub fn batch(paths: &[String]) -> Self {
        Self {
            lines: true,
            ..Self::new(paths, Format::Auto, None)
        }
    }

    /// The next up to `max` items (empty at the end). An input that cannot be opened or
    /// read (other than a corrupt gzip stream, which is an item) is an error.
    pub fn next_chunk(&mut self, max: usize) -> Result<Vec<Item>> {
        let mut chunk = Vec::with_capacity(max.min(4096));
        while chunk.len() < max {
            if self.current.is_some() {
                self.read_current(&mut chunk)?;
                continue;
            }
            match self.pending.pop_front() {
                None => break,
                Some(Pending::Arg(path)) => self.open(&path, &mut chunk)?,
                Some(Pending::DirFile { path, html }) => {
                    let name: Arc<str> = path.to_string_lossy().into();
                    let raw = std::fs::read(&path)
                        .map_err(|e| format!("cannot read: {e}"))
                        .map(|bytes| {
                            if let Some(bar) = &self.bar {
                                bar.inc(bytes.len() as u64);
                            }
                            Raw::Page {
                                id: name.to_string(),
                                url: None,
                                bytes,
                                charset: None,
                                html,
                            }
                        });
                    chunk.push((place(&name, At::File), raw));
                }
            }
        }
        Ok(chunk)
    }

    /// Reads one item (or the end) of the current input.
    fn read_current(&mut self, chunk: &mut Vec<Item>) -> Result<()> {
        match &mut self.current {
            None => {}
            Some(Current::Jsonl { name, lines, last }) => match lines.next_line() {
                Ok(None) => self.current = None,
                Ok(Some((n, Ok(b)))) if b.iter().all(u8::is_ascii_whitespace) => *last = n,
                Ok(Some((n, line))) => {
                    *last = n;
                    chunk.push((
                        place(name, At::Line(n)),
                        line.map(Raw::Json).map_err(|e| e.to_string()),
                    ));
                }
                Err(e) => {
                    let Some(msg) = gzip_failure(&e) else {
                        return Err(e).with_context(|| format!("cannot read {name}"));
                    };
                    let mut at = place(name, At::Line(*last + 1));
                    at.rest = true;
                    chunk.push((at, Err(msg)));
                    self.current = None;
                }
            },
            Some(Current::Warc { name, records, gz }) => match records.next_record() {
                Ok(None) => self.current = None,
                Ok(Some((number, offset, item))) => {
                    let at = At::Record {
                        number,
                        offset,
                        gz: *gz,
                    };
                    match item {
                        Ok(archive::Item::Skipped(reason)) => self.skipped.add(reason.describe()),
                        Ok(archive::Item::Page(page)) => chunk.push((
                            place(name, at),
                            Ok(Raw::Page {
                                id: page.uri.clone(),
                                url: Some(page.uri),
                                bytes: page.body,
                                charset: page.charset,
                                html: page.kind == archive::PageKind::Html,
                            }),
                        )),
                        Err(e) => chunk.push((place(name, at), Err(e.to_string()))),
                    }
                }
                Err(e) => {
                    let Some(msg) = gzip_failure(&e) else {
                        return Err(e).with_context(|| format!("cannot read {name}"));
                    };
                    let mut at = place(
                        name,
                        At::Record {
                            number: records.number() + 1,
                            offset: records.offset(),
                            gz: *gz,
                        },
                    );
                    at.rest = true;
                    chunk.push((at, Err(msg)));
                    self.current = None;
                }
            },
        }
        Ok(())
    }

    /// Opens an input given as an argument: a directory is expanded, a JSONL or WARC
    /// input becomes the current one, a text or HTML file is one item.
    fn open(&mut self, path: &str, chunk: &mut Vec<Item>) -> Result<()> {
        if path != "-" && Path::new(path).is_dir() {
            let mut files = Vec::new();
            walk(Path::new(path), &mut files, &mut self.skipped)
                .with_context(|| format!("cannot read the directory {path}"))?;
            files.sort();
            for (file, html) in files.into_iter().rev() {
                if let Some(bar) = &self.bar {
                    if let Ok(m) = std::fs::metadata(&file) {
                        bar.inc_length(m.len());
                    }
                }
                self.pending
                    .push_front(Pending::DirFile { path: file, html });
            }
            return Ok(());
        }
        let name: Arc<str> = display_name(path).into();
        let (mut input, gz) = open(path, self.bar.as_ref())?;
        let format = match resolve(self.format, path, gz, &mut *input, self.lines) {
            Ok(format) => format,
            Err(e) => {
                let Some(msg) = gzip_failure(&e) else {
                    return Err(e).with_context(|| format!("cannot read {name}"));
                };
                let mut at = place(&name, At::File);
                at.rest = true;
                chunk.push((at, Err(msg)));
                return Ok(());
            }
        };
        match format {
            Format::Jsonl | Format::Auto => {
                self.current = Some(Current::Jsonl {
                    name,
                    lines: Lines::new(input),
                    last: 0,
                });
            }
            Format::Warc => {
                self.current = Some(Current::Warc {
                    name,
                    records: Records::new(input),
                    gz,
                });
            }
            Format::Text | Format::Html => {
                let mut bytes = Vec::new();
                let raw = match input.read_to_end(&mut bytes) {
                    Ok(_) => Ok(Raw::Page {
                        id: name.to_string(),
                        url: None,
                        bytes,
                        charset: None,
                        html: format == Format::Html,
                    }),
                    Err(e) => match gzip_failure(&e) {
                        Some(msg) => Err(msg),
                        None => return Err(e).with_context(|| format!("cannot read {name}")),
                    },
                };
                chunk.push((place(&name, At::File), raw));
            }
        }
        Ok(())
    }
}

fn place(name: &Arc<str>, at: At) -> Place {
    Place {
        name: Arc::clone(name),
        at,
        rest: false,
    }
}

/// Collects the page files under `dir` (`.html`/`.htm` → HTML, `.txt` → text), counting
/// the other files (and symbolic links, which are not followed) as skipped.
fn walk(dir: &Path, files: &mut Vec<(PathBuf, bool)>, skipped: &mut Skipped) -> io::Result<()> {
    for entry in std::fs::read_dir(dir)? {
        let entry = entry?;
        let kind = entry.file_type()?;
        let path = entry.path();
        if kind.is_dir() {
            walk(&path, files, skipped)?;
            continue;
        }
        let ext = path
            .extension()
            .and_then(|e| e.to_str())
            .unwrap_or("")
            .to_ascii_lowercase();
        match ext.as_str() {
            "html" | "htm" if kind.is_file() => files.push((path, true)),
            "txt" if kind.is_file() => files.push((path, false)),
            _ => skipped.add(NOT_A_PAGE_FILE),
        }
    }
    Ok(())
}

/// Opens `path` (`-` = stdin) for buffered reading, decompressing it when it starts with
/// the gzip magic; also says whether it did.
fn open(path: &str, bar: Option<&ProgressBar>) -> Result<(Input, bool)> {
    let raw: Box<dyn Read + Send> = if path == "-" {
        Box::new(io::stdin())
    } else {
        Box::new(File::open(path).with_context(|| format!("cannot open {path}"))?)
    };
    let raw: Box<dyn Read + Send> = match bar {
        Some(bar) => Box::new(bar.wrap_read(raw)),
        None => raw,
    };
    let mut buffered = BufReader::with_capacity(1 << 20, raw);
    let head = buffered
        .fill_buf()
        .with_context(|| format!("cannot read {}", display_name(path)))?;
    if head.starts_with(&[0x1f, 0x8b]) {
        let decoder = GzRead(flate2::bufread::MultiGzDecoder::new(buffered));
        Ok((Box::new(BufReader::with_capacity(1 << 20, decoder)), true))
    } else {
        Ok((Box::new(buffered), false))
    }
}

/// Resolves [`Format::Auto`] for one input (already decompressed); see [`Format`].
/// With `lines`, anything but WARC and HTML is JSONL. `decompressed`: the input started
/// with the gzip magic.
fn resolve(
    format: Format,
    path: &str,
    decompressed: bool,
    reader: &mut dyn BufRead,
    lines: bool,
) -> io::Result<Format> {
    if format != Format::Auto {
        return Ok(format);
    }
    let lower = path.to_ascii_lowercase();
    let (stem, gz) = match lower.strip_suffix(".gz") {
        Some(stem) => (stem, true),
        None => (lower.as_str(), false),
    };
    let ext = Path::new(stem)
        .extension()
        .and_then(|e| e.to_str())
        .unwrap_or("");
    match ext {
        "jsonl" | "ndjson" | "json" => return Ok(Format::Jsonl),
        "warc" => return Ok(Format::Warc),
        "html" | "htm" => return Ok(Format::Html),
        "txt" if !lines => return Ok(Format::Text),
        _ => {}
    }
    let buf = reader.fill_buf()?;
    let head = buf.trim_ascii_start();
    if head.starts_with(b"WARC/") {
        return Ok(Format::Warc);
    }
    if lines {
        return Ok(Format::Jsonl);
    }
    if path != "-" && !gz && !decompressed {
        return Ok(Format::Text);
    }
    let lower_head = head[..head.len().min(16)].to_ascii_lowercase();
    Ok(if head.is_empty() || head.starts_with(b"{") {
        // Empty or blank input reads as JSONL: zero records, not one empty document.
        Format::Jsonl
    } else if lower_head.starts_with(b"<!doctype html") || lower_head.starts_with(b"<html") {
        Format::Html
    } else {
        Format::Text
    })
}
