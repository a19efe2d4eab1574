//! [`Inputs`]: the items of a list of inputs, read one after the other (directories
//! expanded to their page files).

use std::collections::VecDeque;
use std::io;
use std::ops::{Range, RangeInclusive};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use anyhow::{Context, Result};
use indicatif::ProgressBar;
use simstore::input::archive::{self, Records};
use simstore::input::gzip::GzipError;
use simstore::input::limit::{self, DEFAULT_MAX_DOC_BYTES};
use simstore::input::reader::{Lines, RecordError};

use super::detect::{Input, gzip_failure, gzip_failure_here, open, resolve};
use super::parquet;
use super::stamp::Stamp;
use super::{At, Format, Item, Place, Raw, Reason, Skipped, display_name, ids};

/// The [`Skipped`] reason of a file in a directory that is not a page file (in the plural
/// and the singular).
const NOT_A_PAGE_FILE: Reason = (
    "files in directories that are not .html, .htm or .txt",
    "file in a directory that is not .html, .htm or .txt",
);

/// A chunk ends once its items hold this many bytes (64 MiB), however few they are: a
/// chunk of large records costs this much memory, not `max` times the document limit.
const CHUNK_BYTES: usize = 64 << 20;

/// What is being read now.
enum Current {
    Jsonl {
        name: Arc<str>,
        lines: Lines<Input>,
        last: u64,
        mark: Mark,
    },
    Warc {
        name: Arc<str>,
        records: Records<Input>,
        gz: bool,
        mark: Mark,
    },
    Parquet {
        name: Arc<str>,
        rows: parquet::Rows,
    },
}

/// The first item read from the gzip member whose bytes were read last
/// ([`Input::member`]): its index among the items of all inputs and its line (or record)
/// number, so that the items a damaged member gave before its damage was found can be
/// named.
#[derive(Debug, Default, Clone, Copy)]
struct Mark {
    member: u64,
    item: u64,
    number: u64,
}

impl Mark {
    /// Moves the mark to item `item`, number `number`, when the bytes just read came from
    /// another member than the mark's (`member`).
    fn follow(&mut self, member: u64, item: u64, number: u64) {
        if member != self.member {
            *self = Mark {
                member,
                item,
                number,
            };
        }
    }

    /// The items (lines, or WARC records: `what`) read from the damaged member `gz`
    /// names before the failure at item `item`, number `number`, if any.
    fn damaged(
        &self,
        gz: &GzipError,
        at: (&Arc<str>, &'static str),
        item: u64,
        number: u64,
    ) -> Option<Damaged> {
        let from = gz.unverified.as_ref()?;
        (from.member == self.member && item > self.item).then(|| Damaged {
            name: Arc::clone(at.0),
            what: at.1,
            items: self.item..item,
            numbers: self.number..=number - 1,
        })
    }
}

/// Items read from a damaged gzip member before its damage was found (a member larger
/// than `simstore::input::gzip::VERIFY_BYTES`, streamed): they may be wrong.
#[derive(Debug, Clone)]
pub struct Damaged {
    /// The input's name.
    pub name: Arc<str>,
    /// The items, by their index among the items of all inputs (0 for the first item
    /// [`Inputs::next_chunk`] returned); blank lines are no items.
    pub items: Range<u64>,
    /// Their line (or WARC record) numbers.
    pub numbers: RangeInclusive<u64>,
    /// `line` or `record`.
    what: &'static str,
}

/// What became of records read from a damaged gzip member that a command leaves out.
pub const LEFT_OUT: &str = "; they may be wrong and are left out";

impl Damaged {
    /// The error message on `read` of them (`3 records`), and what became of them
    /// (`outcome`, e.g. [`LEFT_OUT`]).
    pub fn error(&self, read: String, outcome: &str) -> String {
        format!(
            "error: {}: {}: {read} read from a damaged gzip member before its damage was \
             found{outcome}",
            self.name,
            self.place()
        )
    }

    /// Where they are, for messages: `lines 5–900` (`records 3–8` in a WARC file).
    pub fn place(&self) -> String {
        let (a, b) = (self.numbers.start(), self.numbers.end());
        match a == b {
            true => format!("{} {a}", self.what),
            false => format!("{}s {a}–{b}", self.what),
        }
    }
}

enum Pending {
    /// An input as given.
    Arg(String),
    /// A page file found in a directory, and its id.
    DirFile {
        path: PathBuf,
        html: bool,
        id: String,
    },
}

/// The items of a list of inputs, in order; see the module documentation.
pub struct Inputs {
    pending: VecDeque<Pending>,
    current: Option<Current>,
    format: Format,
    /// Whether a file of another kind is read line by line (batch queries) or as one text.
    lines: bool,
    bar: Option<ProgressBar>,
    /// The size limit of one document (a line, a record, a file), in bytes.
    max_doc: u64,
    /// What was skipped so far.
    pub skipped: Skipped,
    /// Items returned so far.
    returned: u64,
    /// Items read from damaged gzip members, not yet taken ([`Inputs::take_damaged`]).
    damaged: Vec<Damaged>,
    /// The files opened, when stamped ([`Inputs::stamped`]).
    stamps: Option<Vec<Stamp>>,
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
            max_doc: DEFAULT_MAX_DOC_BYTES,
            skipped: Skipped::default(),
            returned: 0,
            damaged: Vec::new(),
            stamps: None,
        }
    }

    /// Keeps a [`Stamp`] of every file opened (what it was, a hash of its bytes read):
    /// [`Inputs::take_stamps`].
    #[must_use]
    pub fn stamped(mut self) -> Self {
        self.stamps = Some(Vec::new());
        self
    }

    /// The [`Stamp`]s of the files opened so far (none unless [`Inputs::stamped`]), in
    /// order.
    pub fn take_stamps(&mut self) -> Vec<Stamp> {
        self.stamps.take().unwrap_or_default()
    }

    /// The items read from damaged gzip members since the last call (each also told in
    /// the message of the failure that ended the member): items returned earlier whose
    /// bytes may be wrong.
    pub fn take_damaged(&mut self) -> Vec<Damaged> {
        std::mem::take(&mut self.damaged)
    }

    /// Limits every document (a JSONL line, a WARC record, a text or HTML file) to `max`
    /// bytes, decompressed (default [`DEFAULT_MAX_DOC_BYTES`]); a larger one is a failed
    /// item, read no further than the limit.
    #[must_use]
    pub fn max_doc_bytes(mut self, max: u64) -> Self {
        self.max_doc = max;
        self
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

    /// The next up to `max` items (empty at the end; fewer once they hold
    /// [`CHUNK_BYTES`]). A file that cannot be opened, a document over the size limit or
    /// a corrupt gzip member is an item (an error naming the file and record; reading goes
    /// on); an input that fails while being read, or stdin that cannot be read, is an error.
    pub fn next_chunk(&mut self, max: usize) -> Result<Vec<Item>> {
        let mut chunk = Vec::with_capacity(max.min(4096));
        let mut bytes = 0usize;
        while chunk.len() < max && bytes < CHUNK_BYTES {
            let before = chunk.len();
            if self.current.is_some() {
                self.read_current(&mut chunk)?;
            } else {
                match self.pending.pop_front() {
                    None => break,
                    Some(Pending::Arg(path)) => self.open(&path, &mut chunk)?,
                    Some(Pending::DirFile { path, html, id }) => {
                        let item = self.dir_file(&path, html, id);
                        chunk.push(item);
                    }
                }
            }
            bytes += chunk[before..]
                .iter()
                .map(|(_, raw)| raw_len(raw))
                .sum::<usize>();
        }
        self.returned += chunk.len() as u64;
        Ok(chunk)
    }

    /// A page file found in a directory, read up to the size limit.
    fn dir_file(&self, path: &Path, html: bool, id: String) -> Item {
        let name: Arc<str> = path.to_string_lossy().into();
        let raw = std::fs::File::open(path)
            .and_then(|f| limit::read_bounded(f, self.max_doc))
            .map_err(|e| format!("cannot read: {e}"))
            .and_then(|read| read.map_err(|e| e.to_string()))
            .map(|bytes| {
                if let Some(bar) = &self.bar {
                    bar.inc(bytes.len() as u64);
                }
                Raw::Page {
                    id,
                    url: None,
                    bytes,
                    charset: None,
                    html,
                }
            });
        (place(&name, At::File), raw)
    }

    /// Reads one item (or the end) of the current input.
    fn read_current(&mut self, chunk: &mut Vec<Item>) -> Result<()> {
        // The index of the next item.
        let item = self.returned + chunk.len() as u64;
        match &mut self.current {
            None => {}
            Some(Current::Jsonl {
                name,
                lines,
                last,
                mark,
            }) => match lines.next_line() {
                Ok(None) => self.current = None,
                Ok(Some((n, Err(RecordError::Gzip(gz))))) => {
                    *last = n;
                    let damaged = mark.damaged(&gz, (name, "line"), item, n);
                    self.damaged.extend(damaged.clone());
                    let msg = damaged_message(gz.to_string(), damaged);
                    chunk.push((place(name, At::Line(n)), Err(msg)));
                }
                Ok(Some((n, line))) => {
                    *last = n;
                    mark.follow(lines.get_ref().member(), item, n);
                    if let Ok(b) = &line
                        && b.iter().all(u8::is_ascii_whitespace)
                    {
                        return Ok(());
                    }
                    chunk.push((
                        place(name, At::Line(n)),
                        line.map(Raw::Json).map_err(|e| e.to_string()),
                    ));
                }
                Err(e) => {
                    let Some(msg) = gzip_failure(&e) else {
                        return Err(e).with_context(|| format!("cannot read {name}"));
                    };
                    let n = *last + 1;
                    let damaged =
                        GzipError::of(&e).and_then(|g| mark.damaged(g, (name, "line"), item, n));
                    self.damaged.extend(damaged.clone());
                    let mut at = place(name, At::Line(n));
                    at.rest = true;
                    chunk.push((at, Err(damaged_message(msg, damaged))));
                    self.current = None;
                }
            },
            Some(Current::Parquet { name, rows }) => match rows.next_row() {
                Ok(None) => self.current = None,
                Ok(Some((n, line))) if line.len() as u64 > self.max_doc => chunk.push((
                    place(name, At::Line(n)),
                    Err(format!(
                        "the row is over the size limit ({} bytes)",
                        self.max_doc
                    )),
                )),
                Ok(Some((n, line))) => chunk.push((place(name, At::Line(n)), Ok(Raw::Json(line)))),
                Err(e) => {
                    let mut at = place(name, At::Line(rows.rows() + 1));
                    at.rest = true;
                    chunk.push((at, Err(format!("{e:#}"))));
                    self.current = None;
                }
            },
            Some(Current::Warc {
                name,
                records,
                gz,
                mark,
            }) => match records.next_record() {
                Ok(None) => self.current = None,
                Ok(Some((number, offset, item_read))) => {
                    let at = At::Record {
                        number,
                        offset,
                        gz: *gz,
                    };
                    if let Err(archive::WarcError::Gzip(g)) = &item_read {
                        let damaged = mark.damaged(g, (name, "record"), item, number);
                        self.damaged.extend(damaged.clone());
                        chunk.push((
                            place(name, at),
                            Err(damaged_message(g.to_string(), damaged)),
                        ));
                        return Ok(());
                    }
                    mark.follow(records.get_ref().member(), item, number);
                    match item_read {
                        Ok(archive::Item::Skipped(reason)) => {
                            self.skipped.add((reason.describe(), reason.describe_one()))
                        }
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
                    // The record the error interrupted (counted by `records`).
                    let number = records.number();
                    let damaged = GzipError::of(&e)
                        .and_then(|g| mark.damaged(g, (name, "record"), item, number));
                    self.damaged.extend(damaged.clone());
                    let mut at = place(
                        name,
                        At::Record {
                            number,
                            offset: records.record_start(),
                            gz: *gz,
                        },
                    );
                    at.rest = true;
                    chunk.push((at, Err(damaged_message(msg, damaged))));
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
            let root = ids::root_name(Path::new(path));
            for (file, html) in files.into_iter().rev() {
                if let Some(bar) = &self.bar
                    && let Ok(m) = std::fs::metadata(&file)
                {
                    bar.inc_length(m.len());
                }
                let id = ids::in_directory(&root, Path::new(path), &file);
                self.pending.push_front(Pending::DirFile {
                    path: file,
                    html,
                    id,
                });
            }
            return Ok(());
        }
        let name: Arc<str> = display_name(path).into();
        if parquet::is_parquet(self.format, path) {
            match parquet::Rows::open(path, self.bar.clone()) {
                Ok(rows) => self.current = Some(Current::Parquet { name, rows }),
                Err(e) => chunk.push((place(&name, At::File), Err(format!("{e:#}")))),
            }
            return Ok(());
        }
        let (mut input, gz) = match open(path, self.bar.as_ref(), self.stamps.as_mut()) {
            Ok(opened) => opened,
            // A file that cannot be opened (missing, a symlink loop, no permission) is one
            // failed input: the inputs after it are still read.
            Err(e) if path != "-" => {
                let at = place(&name, At::File);
                chunk.push((at, Err(format!("cannot open it: {}", e.root_cause()))));
                return Ok(());
            }
            Err(e) => return Err(e),
        };
        let format = match resolve(self.format, path, gz, &mut input, self.lines) {
            Ok(format) => format,
            Err(e) => {
                let Some(msg) = gzip_failure_here(&e) else {
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
                    lines: Lines::with_limit(
                        input,
                        usize::try_from(self.max_doc).unwrap_or(usize::MAX),
                    ),
                    last: 0,
                    mark: Mark::default(),
                });
            }
            // Opened as a file, before the stream (see above).
            Format::Parquet => {}
            Format::Warc => {
                self.current = Some(Current::Warc {
                    name,
                    records: Records::with_limit(input, self.max_doc),
                    gz,
                    mark: Mark::default(),
                });
            }
            Format::Text | Format::Html => {
                let raw = match limit::read_bounded(input, self.max_doc) {
                    Ok(Ok(bytes)) => Ok(Raw::Page {
                        id: ids::of_file(path, &bytes),
                        url: None,
                        bytes,
                        charset: None,
                        html: format == Format::Html,
                    }),
                    Ok(Err(too_large)) => Err(too_large.to_string()),
                    Err(e) => match gzip_failure_here(&e) {
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

/// `msg`, the failure of a damaged gzip member, saying which items read before it came
/// from that member.
fn damaged_message(msg: String, damaged: Option<Damaged>) -> String {
    match damaged {
        None => msg,
        Some(d) => format!(
            "{msg}; {} before it came from this member and may be wrong",
            d.place()
        ),
    }
}

/// The bytes an item holds.
fn raw_len(raw: &Result<Raw, String>) -> usize {
    match raw {
        Ok(Raw::Json(bytes)) | Ok(Raw::Page { bytes, .. }) => bytes.len(),
        Err(msg) => msg.len(),
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
