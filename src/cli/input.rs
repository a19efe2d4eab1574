//! Opening inputs (files or `-` for stdin) and choosing their format.

use std::fs::File;
use std::io::{self, BufRead, BufReader};
use std::path::Path;

use anyhow::{Context, Result};

/// How to read an input.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    /// JSONL for .jsonl/.ndjson/.json files and for stdin starting with `{` (or blank);
    /// text otherwise.
    Auto,
    /// One JSON record per line.
    Jsonl,
    /// The whole file is one document; its id is the path.
    Text,
}

/// The name of an input for messages: the path, or `<stdin>` for `-`.
pub fn display_name(path: &str) -> &str {
    if path == "-" { "<stdin>" } else { path }
}

/// Opens `path` (`-` = stdin) for buffered reading; `wrap` can count bytes (progress bars).
pub fn open(path: &str) -> Result<Box<dyn BufRead + Send>> {
    if path == "-" {
        return Ok(Box::new(BufReader::with_capacity(1 << 20, io::stdin())));
    }
    if Path::new(path).is_dir() {
        anyhow::bail!("{path} is a directory: give the files inside it");
    }
    let file = File::open(path).with_context(|| format!("cannot open {path}"))?;
    Ok(Box::new(BufReader::with_capacity(1 << 20, file)))
}

/// Resolves `Auto` for one input. For stdin it peeks at the first non-blank byte.
pub fn resolve(format: Format, path: &str, reader: &mut dyn BufRead) -> io::Result<Format> {
    if format != Format::Auto {
        return Ok(format);
    }
    if path == "-" {
        let buf = reader.fill_buf()?;
        let first = buf.iter().find(|b| !b.is_ascii_whitespace());
        // Empty or blank input reads as JSONL: zero records, not one empty document.
        return Ok(if matches!(first, Some(&b'{') | None) {
            Format::Jsonl
        } else {
            Format::Text
        });
    }
    let ext = Path::new(path)
        .extension()
        .and_then(|e| e.to_str())
        .unwrap_or("")
        .to_ascii_lowercase();
    Ok(if matches!(ext.as_str(), "jsonl" | "ndjson" | "json") {
        Format::Jsonl
    } else {
        Format::Text
    })
}

/// Reads a whole file as text (UTF-8 without NUL bytes), for `--file` arguments.
pub fn read_text(path: &Path) -> Result<String> {
    let bytes = std::fs::read(path).with_context(|| format!("cannot read {}", path.display()))?;
    let text = simstore::reader::as_text(&bytes).with_context(|| format!("{}", path.display()))?;
    Ok(text.to_owned())
}

/// Reads a whole input into memory (for text documents).
pub fn read_all(reader: &mut dyn BufRead) -> io::Result<Vec<u8>> {
    let mut buf = Vec::new();
    reader.read_to_end(&mut buf)?;
    Ok(buf)
}

/// The next up to `max` non-blank lines of `lines` (empty at the end of the input).
pub fn next_chunk<R: BufRead>(
    lines: &mut simstore::reader::Lines<R>,
    name: &str,
    max: usize,
) -> Result<Vec<simstore::reader::NumberedLine>> {
    let mut chunk = Vec::with_capacity(max.min(4096));
    while chunk.len() < max {
        match lines
            .next_line()
            .with_context(|| format!("cannot read {name}"))?
        {
            Some((_, Ok(b))) if b.iter().all(u8::is_ascii_whitespace) => {}
            Some(item) => chunk.push(item),
            None => break,
        }
    }
    Ok(chunk)
}
