//! Gzip input that survives a damaged member.
//!
//! A gzip file is a series of members (RFC 1952); crawlers compress each WARC record as
//! its own member, and `cat a.gz b.gz` is a valid gzip file, so one damaged member need
//! not cost the data after it. [`Members`] decompresses member after member:
//!
//! - a member whose output fits in [`VERIFY_BYTES`] is decompressed and its CRC checked
//!   before any of its bytes are returned, so a damaged member returns none of its data;
//!   a larger member is streamed (its bytes are returned as they come, and when it turns
//!   out damaged, [`GzipError::unverified`] says which of the bytes returned came from it:
//!   they may be wrong);
//! - when a member is damaged, reading fails once with an `io::Error` holding a
//!   [`GzipError`], then goes on at the next member: the next `1f 8b 08` from which a
//!   member decodes ([`GzipError::resumed_at`]). When none follows, the error is the end.
//!   A member cut short (the input ends inside it) is not damaged up to the cut: its bytes
//!   decoded before the cut are returned first, as a streaming decoder would (a truncated
//!   file keeps what came before the cut); a member whose data is corrupt (its checksum
//!   or length differs, or its deflate data is invalid) returns none of them, since
//!   deflate decodes damaged data into other text without noticing at once.
//!
//! [`Members::member`] numbers the members whose bytes are returned, so that a reader can
//! tell which of the records it read came from a member [`GzipError::unverified`] names.

use std::io::{self, BufRead, Read};
use std::ops::Range;

use flate2::bufread::GzDecoder;

use super::pushback::{Pushback, read_from_buf};

/// Output of one member decompressed and checked before any of it is returned: 8 MiB.
pub const VERIFY_BYTES: usize = 8 << 20;

/// How every deflate-compressed gzip member starts: ID1, ID2, CM = 8 (RFC 1952).
const MEMBER_MAGIC: [u8; 3] = [0x1f, 0x8b, 0x08];

/// Bytes decompressed per read of a streamed (large) member.
const STREAM_CHUNK: usize = 64 << 10;

/// A damaged gzip member.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{}", self.message())]
pub struct GzipError {
    /// Byte offset of the damaged member in the compressed input.
    pub member_at: u64,
    /// What the decompressor said.
    pub detail: String,
    /// Byte offset (in the compressed input) of the member reading resumed at; `None`
    /// when no member follows the damage: nothing after it can be read.
    pub resumed_at: Option<u64>,
    /// The bytes returned before the damage was found that came from the damaged member
    /// (a member larger than [`VERIFY_BYTES`], streamed): they may be wrong. `None` when
    /// none were, or when the member was only cut short (the bytes before the cut are
    /// what was compressed).
    pub unverified: Option<Unverified>,
}

/// Bytes that came from a damaged member before its damage was found; see
/// [`GzipError::unverified`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Unverified {
    /// The member, as [`Members::member`] numbers it while its bytes are returned.
    pub member: u64,
    /// Their offsets in the decompressed output.
    pub bytes: Range<u64>,
}

impl GzipError {
    /// The [`GzipError`] inside `e`, if `e` is one.
    pub fn of(e: &io::Error) -> Option<&GzipError> {
        e.get_ref()
            .and_then(|inner| inner.downcast_ref::<GzipError>())
    }

    fn message(&self) -> String {
        match self.resumed_at {
            None => format!(
                "cannot decompress (the gzip data is corrupt or truncated: {})",
                self.detail
            ),
            Some(at) => format!(
                "cannot decompress the gzip member at byte {} ({}): its data is lost, reading \
                 resumes at the next member (byte {at}); fetch the file again to recover it",
                self.member_at, self.detail
            ),
        }
    }
}

/// The compressed input: [`Pushback`] records the bytes of a candidate member, to scan
/// them again after a false start.
type Tape<R> = Pushback<R>;

/// Consumes bytes up to the next [`MEMBER_MAGIC`]; false when the input ends first.
fn seek_member<R: BufRead>(tape: &mut Tape<R>) -> io::Result<bool> {
    loop {
        let buf = tape.fill_buf()?;
        if buf.is_empty() {
            return Ok(false);
        }
        let Some(i) = buf.iter().position(|&b| b == MEMBER_MAGIC[0]) else {
            let n = buf.len();
            tape.consume(n);
            continue;
        };
        tape.consume(i);
        let mut head = [0u8; 3];
        let mut got = 0;
        while got < head.len() {
            match tape.read(&mut head[got..])? {
                0 => break,
                n => got += n,
            }
        }
        tape.unread(&head[..got]);
        if head[..got] == MEMBER_MAGIC {
            return Ok(true);
        }
        if got < head.len() {
            return Ok(false);
        }
        tape.consume(1);
    }
}

/// Where the decoder is.
enum State<R> {
    /// Between members (or before the first).
    Between(Tape<R>),
    /// Inside a member larger than [`VERIFY_BYTES`], which started at byte `start`.
    Streaming { dec: GzDecoder<Tape<R>>, start: u64 },
    /// At the end.
    Done,
}

/// A multi-member gzip decoder that goes on after a damaged member; see the module
/// documentation.
pub struct Members<R> {
    state: State<R>,
    out: Vec<u8>,
    pos: usize,
    /// An error to return: before `out` (the damage came first) or once `out` is read.
    error: Option<GzipError>,
    error_after_out: bool,
    /// Decompressed bytes consumed so far.
    consumed: u64,
    /// Members that decoded so far (the one in `out` the last).
    started: u64,
    /// The member whose bytes are in `out`: its number and the offset of its first byte
    /// in the decompressed output.
    out_member: (u64, u64),
    /// The member whose bytes were returned last ([`Members::member`]).
    returned_member: u64,
}

impl<R: BufRead> Members<R> {
    /// The decompressed data of the gzip stream `inner`.
    pub fn new(inner: R) -> Self {
        Self {
            state: State::Between(Pushback::new(inner)),
            out: Vec::new(),
            pos: 0,
            error: None,
            error_after_out: false,
            consumed: 0,
            started: 0,
            out_member: (0, 0),
            returned_member: 0,
        }
    }

    /// The member the bytes returned last came from, numbered from 1 in the order the
    /// members are decoded (0 before any bytes); a damaged member's
    /// [`Unverified::member`] is its number here.
    pub fn member(&self) -> u64 {
        self.returned_member
    }

    /// Fills `out` with the next decompressed bytes (none at the end).
    fn refill(&mut self) -> io::Result<()> {
        while self.pos == self.out.len() && self.error.is_none() {
            self.out.clear();
            self.pos = 0;
            match std::mem::replace(&mut self.state, State::Done) {
                State::Done => return Ok(()),
                State::Between(mut tape) => {
                    if tape.fill_buf()?.is_empty() {
                        return Ok(());
                    }
                    let start = tape.offset();
                    if let Err((tape, e)) = self.start_member(tape) {
                        self.fail(tape, start, &e, false);
                    }
                }
                State::Streaming { mut dec, start } => {
                    self.out.resize(STREAM_CHUNK, 0);
                    match dec.read(&mut self.out) {
                        Ok(n) => {
                            self.out.truncate(n);
                            self.state = match n {
                                0 => State::Between(dec.into_inner()),
                                _ => State::Streaming { dec, start },
                            };
                        }
                        Err(e) => {
                            self.out.clear();
                            self.fail(dec.into_inner(), start, &e, true);
                        }
                    }
                }
            }
        }
        Ok(())
    }

    /// Decodes the member at the tape's position into `out`: whole and checked when it
    /// fits in [`VERIFY_BYTES`], else its first bytes, and streams the rest. On failure,
    /// `out` holds what was decoded before it.
    fn start_member(&mut self, tape: Tape<R>) -> Result<(), (Tape<R>, io::Error)> {
        let start = tape.offset();
        let mut dec = GzDecoder::new(tape);
        self.started += 1;
        self.out_member = (self.started, self.consumed);
        match (&mut dec)
            .take(VERIFY_BYTES as u64 + 1)
            .read_to_end(&mut self.out)
        {
            Ok(n) if n <= VERIFY_BYTES => self.state = State::Between(dec.into_inner()),
            Ok(_) => self.state = State::Streaming { dec, start },
            Err(e) => return Err((dec.into_inner(), e)),
        }
        Ok(())
    }

    /// After the member at `start` failed with `e`: finds the next member that decodes and
    /// sets the error to return (before that member's data, or, when none follows, after
    /// the bytes decoded before the damage when the member was only cut short). `streamed`:
    /// the member's first bytes were returned already.
    fn fail(&mut self, tape: Tape<R>, start: u64, e: &io::Error, streamed: bool) {
        let before = std::mem::take(&mut self.out);
        let cut_short = e.kind() == io::ErrorKind::UnexpectedEof;
        let unverified = (streamed && !cut_short).then_some(Unverified {
            member: self.out_member.0,
            bytes: self.out_member.1..self.consumed,
        });
        let failed = self.out_member;
        let resumed_at = self.resync(tape);
        if resumed_at.is_none() && cut_short {
            self.out = before;
            self.out_member = failed;
        }
        self.pos = 0;
        self.error_after_out = resumed_at.is_none();
        self.error = Some(GzipError {
            member_at: start,
            detail: e.to_string(),
            resumed_at,
            unverified,
        });
    }

    /// Moves to the next [`MEMBER_MAGIC`] from which a member decodes, decoding it into
    /// `out`; its offset, or `None` (and the end) when there is none. A false start (the
    /// magic inside compressed data) is scanned again from its second byte.
    fn resync(&mut self, mut tape: Tape<R>) -> Option<u64> {
        loop {
            if !matches!(seek_member(&mut tape), Ok(true)) {
                return None;
            }
            let at = tape.offset();
            tape.start_recording();
            self.out.clear();
            let numbered = (self.started, self.out_member);
            match self.start_member(tape) {
                Ok(()) => {
                    match &mut self.state {
                        State::Between(t) => {
                            t.stop_recording();
                        }
                        State::Streaming { dec, .. } => {
                            dec.get_mut().stop_recording();
                        }
                        State::Done => {}
                    }
                    return Some(at);
                }
                Err((mut failed, _)) => {
                    (self.started, self.out_member) = numbered;
                    let seen = failed.stop_recording();
                    failed.unread(seen.get(1..).unwrap_or_default());
                    tape = failed;
                }
            }
        }
    }
}

impl<R: BufRead> Read for Members<R> {
    fn read(&mut self, out: &mut [u8]) -> io::Result<usize> {
        read_from_buf(self, out)
    }
}

impl<R: BufRead> BufRead for Members<R> {
    fn fill_buf(&mut self) -> io::Result<&[u8]> {
        self.refill()?;
        let out_left = self.pos < self.out.len();
        if !(self.error_after_out && out_left)
            && let Some(e) = self.error.take()
        {
            return Err(io::Error::new(io::ErrorKind::InvalidData, e));
        }
        if out_left {
            self.returned_member = self.out_member.0;
        }
        Ok(&self.out[self.pos..])
    }

    fn consume(&mut self, n: usize) {
        let n = n.min(self.out.len() - self.pos);
        self.pos += n;
        self.consumed += n as u64;
    }
}

#[cfg(test)]
mod tests {
    use std::io::Write;

    use super::*;

    fn gzip(bytes: &[u8]) -> Vec<u8> {
        let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
        gz.write_all(bytes).unwrap();
        gz.finish().unwrap()
    }

    /// Reads `input` to the end, collecting the data and the errors on the way.
    fn read_all(input: &[u8]) -> (Vec<u8>, Vec<GzipError>) {
        let mut m = Members::new(input);
        let (mut data, mut errors) = (Vec::new(), Vec::new());
        loop {
            match m.fill_buf() {
                Ok([]) => return (data, errors),
                Ok(buf) => {
                    data.extend_from_slice(buf);
                    let n = buf.len();
                    m.consume(n);
                }
                Err(e) => errors.push(GzipError::of(&e).expect("a gzip error").clone()),
            }
        }
    }

    #[test]
    fn members_are_concatenated() {
        let mut input = gzip(b"one\n");
        input.extend(gzip(b""));
        input.extend(gzip(b"two\n"));
        assert_eq!(read_all(&input), (b"one\ntwo\n".to_vec(), vec![]));
    }

    #[test]
    fn a_damaged_member_costs_only_itself() {
        let members: Vec<Vec<u8>> = (0..5)
            .map(|i| gzip(format!("member {i} {}\n", "words ".repeat(50)).as_bytes()))
            .collect();
        let mut input = Vec::new();
        for (i, m) in members.iter().enumerate() {
            let mut m = m.clone();
            if i == 2 {
                // Damage the deflate data in the middle of the member.
                let mid = m.len() / 2;
                m[mid] ^= 0x55;
                m[mid + 1] ^= 0xaa;
            }
            input.extend(m);
        }
        let (data, errors) = read_all(&input);
        let text = String::from_utf8(data).unwrap();
        let got: Vec<&str> = text.lines().map(|l| &l[..8]).collect();
        assert_eq!(got, ["member 0", "member 1", "member 3", "member 4"]);
        assert_eq!(errors.len(), 1, "{errors:?}");
        let start2 = (members[0].len() + members[1].len()) as u64;
        assert_eq!(errors[0].member_at, start2);
        assert_eq!(errors[0].resumed_at, Some(start2 + members[2].len() as u64));
    }

    #[test]
    fn a_truncated_last_member_keeps_what_came_before() {
        let text: String = (0..2000).map(|i| format!("line {i}\n")).collect();
        let gz = gzip(text.as_bytes());
        let (data, errors) = read_all(&gz[..gz.len() / 2]);
        assert!(!data.is_empty() && text.as_bytes().starts_with(&data));
        assert_eq!(errors.len(), 1);
        assert_eq!(errors[0].resumed_at, None);
        assert!(
            errors[0]
                .to_string()
                .ends_with("incomplete deflate stream)"),
            "{}",
            errors[0]
        );
    }

    /// `gz` with bytes flipped in its deflate data until the decoder still gives out
    /// `min_out` bytes or more before it fails on something else than the input's end.
    fn damaged(gz: &[u8], min_out: usize) -> Vec<u8> {
        for at in (gz.len() / 2..gz.len() - 8).rev().step_by(97) {
            let mut bad = gz.to_vec();
            bad[at] ^= 0x5a;
            let mut out = Vec::new();
            let read = flate2::read::GzDecoder::new(&bad[..]).read_to_end(&mut out);
            if read.is_err_and(|e| e.kind() != io::ErrorKind::UnexpectedEof) && out.len() >= min_out
            {
                return bad;
            }
        }
        panic!("no damage that still decodes {min_out} bytes");
    }

    #[test]
    fn a_damaged_last_member_returns_nothing_of_itself() {
        let text: String = (0..3000)
            .map(|i| format!("line {i} of the text\n"))
            .collect();
        let bad = damaged(&gzip(text.as_bytes()), 1000);
        let mut input = gzip(b"first member\n");
        input.extend(&bad);
        let (data, errors) = read_all(&input);
        assert_eq!(data, b"first member\n");
        assert_eq!(errors.len(), 1, "{errors:?}");
        assert_eq!((errors[0].resumed_at, &errors[0].unverified), (None, &None));
    }

    #[test]
    fn a_damaged_streamed_member_says_which_bytes_came_from_it() {
        let text: Vec<u8> = (0..VERIFY_BYTES / 20 + 50_000)
            .flat_map(|i| format!("line {i:>13} here\n").into_bytes())
            .collect();
        let first = gzip(b"first member\n");
        let bad = damaged(&gzip(&text), VERIFY_BYTES + 1);
        let mut input = first.clone();
        input.extend(&bad);
        input.extend(gzip(b"last member\n"));
        let mut m = Members::new(&input[..]);
        let (mut data, mut errors, mut members) = (Vec::new(), Vec::new(), Vec::new());
        loop {
            match m.fill_buf() {
                Ok([]) => break,
                Ok(buf) => {
                    let n = buf.len();
                    data.extend_from_slice(buf);
                    members.push((data.len() - n, m.member()));
                    m.consume(n);
                }
                Err(e) => errors.push((data.len(), GzipError::of(&e).unwrap().clone())),
            }
        }
        assert_eq!(errors.len(), 1, "{errors:?}");
        let (at, e) = &errors[0];
        let unverified = e
            .unverified
            .clone()
            .expect("bytes came from the damaged member");
        assert_eq!(unverified.bytes, 13..*at as u64);
        assert!(unverified.bytes.end > VERIFY_BYTES as u64);
        assert_eq!(e.resumed_at, Some((first.len() + bad.len()) as u64));
        assert!(data.ends_with(b"last member\n"));
        // The member numbers: 1 for the first bytes, the damaged member's for its own.
        assert_eq!(members[0], (0, 1));
        assert!(members.iter().all(|&(off, member)| {
            (off >= 13 && (off as u64) < unverified.bytes.end) == (member == unverified.member)
        }));
    }

    #[test]
    fn garbage_between_members_is_skipped() {
        let mut input = gzip(b"a\n");
        input.extend(b"\x1f\x8b\x08garbage that is not a member \x1f\x1f");
        input.extend(gzip(b"b\n"));
        let (data, errors) = read_all(&input);
        assert_eq!(data, b"a\nb\n");
        assert_eq!(errors.len(), 1);
        assert!(errors[0].resumed_at.is_some());
    }
}
