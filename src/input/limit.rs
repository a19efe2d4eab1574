//! The size limit of one document: a JSONL line, a WARC record, a text or HTML file, stdin.
//!
//! Every reader enforces it while reading (never more than the limit plus one byte of a
//! document is held), on decompressed bytes, so that one input — `/dev/zero`, a gzip
//! bomb — costs at most the limit in memory and one failed record.

use std::io::{self, Read};

/// The default limit of one document, in bytes: 256 MiB (`simstore import
/// --max-doc-bytes` sets another).
pub const DEFAULT_MAX_DOC_BYTES: u64 = 256 << 20;

/// A document over the size limit.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error(
    "the document is larger than {} (decompressed): split it, or raise the limit with --max-doc-bytes",
    human(*max)
)]
pub struct TooLarge {
    /// The limit, in bytes.
    pub max: u64,
}

/// Reads all of `r` when it holds at most `max` bytes; never reads more than `max + 1`.
pub fn read_bounded(r: impl Read, max: u64) -> io::Result<Result<Vec<u8>, TooLarge>> {
    let mut bytes = Vec::new();
    r.take(max.saturating_add(1)).read_to_end(&mut bytes)?;
    if bytes.len() as u64 > max {
        return Ok(Err(TooLarge { max }));
    }
    Ok(Ok(bytes))
}

/// A byte count for messages: `256 MiB`, `64 KiB`, else `1000 bytes`.
pub fn human(bytes: u64) -> String {
    match bytes {
        0 => "0 bytes".to_owned(),
        b if b % (1 << 30) == 0 => format!("{} GiB", b >> 30),
        b if b % (1 << 20) == 0 => format!("{} MiB", b >> 20),
        b if b % (1 << 10) == 0 => format!("{} KiB", b >> 10),
        b => format!("{b} bytes"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_at_most_one_byte_over_the_limit() {
        assert_eq!(read_bounded(&b"abc"[..], 3).unwrap(), Ok(b"abc".to_vec()));
        assert_eq!(
            read_bounded(io::repeat(0), 1000).unwrap(),
            Err(TooLarge { max: 1000 })
        );
        assert_eq!(
            TooLarge { max: 256 << 20 }.to_string(),
            "the document is larger than 256 MiB (decompressed): split it, or raise the limit with --max-doc-bytes"
        );
        assert_eq!(human(1536), "1536 bytes");
        assert_eq!(human(3 << 10), "3 KiB");
    }
}
