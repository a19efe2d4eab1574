//! A buffered reader that counts the bytes consumed, takes bytes pushed back in front of it,
//! and can record what is consumed: what the WARC reader (one line too many, the rest of
//! a block) and the gzip member reader (a false member start, scanned again) both need.

use std::io::{self, BufRead, Read};

/// `inner` with bytes pushed back in front of it; see the module docs.
pub(super) struct Pushback<R> {
    inner: R,
    back: Vec<u8>,
    back_pos: usize,
    offset: u64,
    recording: Option<Vec<u8>>,
}

impl<R: BufRead> Pushback<R> {
    pub(super) fn new(inner: R) -> Self {
        Self {
            inner,
            back: Vec::new(),
            back_pos: 0,
            offset: 0,
            recording: None,
        }
    }

    /// The reader underneath.
    #[cfg_attr(not(feature = "warc"), allow(dead_code))] // the WARC reader's
    pub(super) fn get_ref(&self) -> &R {
        &self.inner
    }

    /// Bytes consumed so far (less those pushed back).
    pub(super) fn offset(&self) -> u64 {
        self.offset
    }

    /// Puts `bytes` back in front of what is left to read.
    pub(super) fn unread(&mut self, bytes: &[u8]) {
        let mut back = bytes.to_vec();
        back.extend_from_slice(&self.back[self.back_pos..]);
        self.back = back;
        self.back_pos = 0;
        self.offset -= bytes.len() as u64;
    }

    /// Reads one line (with its `\n`) of at most `max` bytes into `buf`; the bytes read.
    #[cfg_attr(not(feature = "warc"), allow(dead_code))] // the WARC reader's
    pub(super) fn read_line(&mut self, buf: &mut Vec<u8>, max: usize) -> io::Result<usize> {
        (&mut *self)
            .take((max as u64).saturating_add(1))
            .read_until(b'\n', buf)
    }

    /// From now on, keeps a copy of every byte consumed.
    pub(super) fn start_recording(&mut self) {
        self.recording = Some(Vec::new());
    }

    /// Stops recording; the bytes consumed since [`Pushback::start_recording`].
    pub(super) fn stop_recording(&mut self) -> Vec<u8> {
        self.recording.take().unwrap_or_default()
    }
}

/// [`Read::read`] of a reader whose reading is its [`BufRead`] buffer: copies from
/// `fill_buf`, then consumes what was copied.
pub(super) fn read_from_buf(r: &mut impl BufRead, out: &mut [u8]) -> io::Result<usize> {
    let n = {
        let buf = r.fill_buf()?;
        let n = buf.len().min(out.len());
        out[..n].copy_from_slice(&buf[..n]);
        n
    };
    r.consume(n);
    Ok(n)
}

impl<R: BufRead> Read for Pushback<R> {
    fn read(&mut self, out: &mut [u8]) -> io::Result<usize> {
        read_from_buf(self, out)
    }
}

impl<R: BufRead> BufRead for Pushback<R> {
    fn fill_buf(&mut self) -> io::Result<&[u8]> {
        if self.back_pos < self.back.len() {
            return Ok(&self.back[self.back_pos..]);
        }
        self.inner.fill_buf()
    }

    fn consume(&mut self, n: usize) {
        if let Some(rec) = &mut self.recording {
            let buf = if self.back_pos < self.back.len() {
                Ok(&self.back[self.back_pos..])
            } else {
                // The bytes being consumed are still in the buffer: no I/O happens here.
                self.inner.fill_buf()
            };
            if let Ok(buf) = buf {
                rec.extend_from_slice(&buf[..n.min(buf.len())]);
            }
        }
        if self.back_pos < self.back.len() {
            self.back_pos += n;
            if self.back_pos >= self.back.len() {
                self.back.clear();
                self.back_pos = 0;
            }
        } else {
            self.inner.consume(n);
        }
        self.offset += n as u64;
    }
}
