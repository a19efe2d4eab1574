//! What an input is: gzip detection and decompression ([`open`]) and the choice of
//! [`Format`] for [`Format::Auto`] ([`resolve`]).

use std::fs::File;
use std::io::{self, BufRead, BufReader, Read};
use std::path::Path;

use anyhow::{Context, Result};
use indicatif::ProgressBar;
use simstore::input::gzip::{GzipError, Members};

use super::stamp::Stamp;
use super::{Format, display_name};

/// The first two bytes of every gzip member (RFC 1952: ID1, ID2).
const GZIP_MAGIC: [u8; 2] = [0x1f, 0x8b];

/// How a WARC file starts (its version line, e.g. `WARC/1.0`), after any leading
/// whitespace.
const WARC_MAGIC: &[u8] = b"WARC/";

/// The message for a gzip decompression failure; `None` for any other error.
pub(super) fn gzip_failure(e: &io::Error) -> Option<String> {
    GzipError::of(e).map(GzipError::to_string)
}

/// The message for a gzip decompression failure that ends what is being read (a whole
/// document, or the input before its format is known), whether or not a member follows;
/// `None` for any other error.
pub(super) fn gzip_failure_here(e: &io::Error) -> Option<String> {
    GzipError::of(e).map(|g| {
        GzipError {
            resumed_at: None,
            ..g.clone()
        }
        .to_string()
    })
}

/// The bytes of an input as read.
type Raw = BufReader<Box<dyn Read + Send>>;

/// An opened input, decompressed if it was gzip'd.
pub(super) enum Input {
    Plain(Raw),
    Gzip(Box<Members<Raw>>),
}

impl Input {
    /// The gzip member the bytes read last came from ([`Members::member`]; 0 for an input
    /// that is not gzip'd).
    pub(super) fn member(&self) -> u64 {
        match self {
            Input::Plain(_) => 0,
            Input::Gzip(m) => m.member(),
        }
    }
}

impl Read for Input {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        match self {
            Input::Plain(r) => r.read(buf),
            Input::Gzip(r) => r.read(buf),
        }
    }
}

impl BufRead for Input {
    fn fill_buf(&mut self) -> io::Result<&[u8]> {
        match self {
            Input::Plain(r) => r.fill_buf(),
            Input::Gzip(r) => r.fill_buf(),
        }
    }

    fn consume(&mut self, n: usize) {
        match self {
            Input::Plain(r) => r.consume(n),
            Input::Gzip(r) => r.consume(n),
        }
    }
}

/// Opens `path` (`-` = stdin) for buffered reading, decompressing it when it starts with
/// [`GZIP_MAGIC`] (member by member, going on after a damaged one: [`Members`]); also says
/// whether it did. With `stamps`, a file's [`Stamp`] is added to them (its bytes read are
/// hashed into it).
pub(super) fn open(
    path: &str,
    bar: Option<&ProgressBar>,
    stamps: Option<&mut Vec<Stamp>>,
) -> Result<(Input, bool)> {
    let raw: Box<dyn Read + Send> = if path == "-" {
        Box::new(io::stdin())
    } else {
        let file = File::open(path).with_context(|| format!("cannot open {path}"))?;
        match stamps {
            Some(stamps) => {
                let (stamp, hashing) =
                    Stamp::of(path.into(), file).with_context(|| format!("cannot read {path}"))?;
                stamps.push(stamp);
                Box::new(hashing)
            }
            None => Box::new(file),
        }
    };
    let raw: Box<dyn Read + Send> = match bar {
        Some(bar) => Box::new(bar.wrap_read(raw)),
        None => raw,
    };
    let mut buffered = BufReader::with_capacity(1 << 20, raw);
    let head = buffered
        .fill_buf()
        .with_context(|| format!("cannot read {}", display_name(path)))?;
    if head.starts_with(&GZIP_MAGIC) {
        Ok((Input::Gzip(Box::new(Members::new(buffered))), true))
    } else {
        Ok((Input::Plain(buffered), false))
    }
}

/// Resolves [`Format::Auto`] for one input (already decompressed); see [`Format`].
/// With `lines`, anything but WARC and HTML is JSONL. `decompressed`: the input started
/// with [`GZIP_MAGIC`].
pub(super) fn resolve(
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
    // A UTF-8 byte order mark is no content.
    let head = buf
        .strip_prefix(b"\xef\xbb\xbf")
        .unwrap_or(buf)
        .trim_ascii_start();
    if head.starts_with(WARC_MAGIC) {
        return Ok(Format::Warc);
    }
    if lines {
        return Ok(Format::Jsonl);
    }
    // A file's format is its name's; a stream's (stdin, a pipe, a copy of one) its bytes'.
    let stream = path == "-"
        || display_name(path) != path
        || std::fs::metadata(path).is_ok_and(|m| !m.is_file())
        || crate::cli::outfile::names_a_descriptor(Path::new(path));
    if !stream && !gz && !decompressed {
        if head.starts_with(b"{\"") && ext != "txt" {
            // An export written to a name without .jsonl, say: one document, not records.
            eprintln!(
                "warning: {path}: read as one text document, as its name says; it starts like \
                 JSONL records: name it .jsonl, or give --format jsonl, to read them"
            );
        }
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
