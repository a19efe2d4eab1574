//! The JSON lines `dedup --output` writes, gzip'd when the name ends in `.gz`.

use std::io::{BufWriter, Write};
use std::path::Path;

use anyhow::{Context, Result};
use flate2::Compression;
use flate2::write::GzEncoder;
use rayon::prelude::*;

use crate::cli::outfile::OutFile;

/// Kept lines are compressed this many bytes at a time (each a gzip member, in parallel).
const MEMBER_BYTES: usize = 1 << 20;

/// Kept lines are buffered up to this many bytes before they are written.
const BUFFER_BYTES: usize = 16 << 20;

/// Where kept lines go: an [`OutFile`] (a new or regular file is written beside it and
/// renamed over it at the end: a failed run leaves no half-written output); gzip'd when
/// the name ends in `.gz`, as a series of gzip members compressed in parallel (as `pigz`
/// or `bgzip` write: every gzip reader reads them as one stream).
pub(in crate::cli::dedup) struct KeptWriter {
    file: BufWriter<OutFile>,
    gz: bool,
    buf: Vec<u8>,
}

impl KeptWriter {
    pub(in crate::cli::dedup) fn create(path: &Path) -> Result<Self> {
        Ok(Self {
            file: BufWriter::with_capacity(1 << 20, OutFile::create(path)?),
            gz: path.to_string_lossy().ends_with(".gz"),
            buf: Vec::with_capacity(BUFFER_BYTES + MEMBER_BYTES),
        })
    }

    /// Adds whole lines, each ending in `\n`.
    pub(super) fn push_lines(&mut self, lines: &[u8]) -> Result<()> {
        self.buf.extend_from_slice(lines);
        if self.buf.len() >= BUFFER_BYTES {
            self.flush_buffer()?;
        }
        Ok(())
    }

    /// Adds one line (`\n` appended).
    pub(in crate::cli::dedup) fn push(&mut self, line: &[u8]) -> Result<()> {
        self.buf.extend_from_slice(line);
        self.buf.push(b'\n');
        if self.buf.len() >= BUFFER_BYTES {
            self.flush_buffer()?;
        }
        Ok(())
    }

    fn flush_buffer(&mut self) -> Result<()> {
        let write = |w: &mut BufWriter<OutFile>, bytes: &[u8]| {
            w.write_all(bytes).context("cannot write the output")
        };
        if self.gz {
            let members: Vec<Vec<u8>> = line_pieces(&self.buf, MEMBER_BYTES)
                .par_iter()
                .map(|piece| gzip(piece))
                .collect::<std::io::Result<_>>()
                .context("cannot compress the output")?;
            for m in &members {
                write(&mut self.file, m)?;
            }
        } else {
            write(&mut self.file, &self.buf)?;
        }
        self.buf.clear();
        Ok(())
    }

    /// Writes what is buffered and puts the file in place.
    pub(in crate::cli::dedup) fn finish(mut self) -> Result<()> {
        self.flush_buffer()?;
        self.file
            .into_inner()
            .map_err(|e| e.into_error())
            .context("cannot write the output")?
            .finish()
    }
}

/// One gzip member holding `bytes`.
fn gzip(bytes: &[u8]) -> std::io::Result<Vec<u8>> {
    let mut e = GzEncoder::new(Vec::with_capacity(bytes.len() / 3), Compression::default());
    e.write_all(bytes)?;
    e.finish()
}

/// `buf` (whole lines) cut after the first line end past every `size` bytes.
fn line_pieces(buf: &[u8], size: usize) -> Vec<&[u8]> {
    let mut pieces = Vec::new();
    let mut rest = buf;
    while rest.len() > size {
        let cut = match memchr::memchr(b'\n', &rest[size..]) {
            Some(i) => size + i + 1,
            None => rest.len(),
        };
        let (piece, after) = rest.split_at(cut);
        pieces.push(piece);
        rest = after;
    }
    if !rest.is_empty() {
        pieces.push(rest);
    }
    pieces
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pieces_are_whole_lines() {
        let buf = b"aaaa\nbb\ncccccc\nd\n";
        let pieces = line_pieces(buf, 3);
        assert_eq!(pieces, [&b"aaaa\n"[..], b"bb\ncccccc\n", b"d\n"]);
        assert_eq!(pieces.concat(), buf);
        assert!(line_pieces(b"", 3).is_empty());
        assert_eq!(line_pieces(b"x\n", 10), [&b"x\n"[..]]);
    }

    #[test]
    fn members_read_back_as_one_stream() {
        let text: Vec<u8> = (0..5000)
            .flat_map(|i| format!("line {i}\n").into_bytes())
            .collect();
        let mut all = Vec::new();
        for piece in line_pieces(&text, 1000) {
            all.extend(gzip(piece).unwrap());
        }
        let mut back = Vec::new();
        std::io::Read::read_to_end(&mut flate2::read::MultiGzDecoder::new(&all[..]), &mut back)
            .unwrap();
        assert_eq!(back, text);
    }
}
