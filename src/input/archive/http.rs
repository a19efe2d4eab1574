//! The HTTP response message inside a WARC `response` record: status, headers, and the
//! payload with its transfer and content codings undone.

use std::io::Read;

use super::{PageKind, SkipReason, WarcError};

/// The status and headers of an HTTP response message.
pub(super) struct HttpResponse {
    status: u16,
    headers: Vec<(String, String)>,
    body_start: usize,
}

impl HttpResponse {
    /// Parses the status line and headers of `msg`.
    pub(super) fn parse(msg: &[u8]) -> Result<Self, WarcError> {
        let bad = |what: &str| WarcError::BadHttp(what.to_owned());
        let (head_len, body_start) =
            find_header_end(msg).ok_or_else(|| bad("no blank line ends the HTTP headers"))?;
        let head = String::from_utf8_lossy(&msg[..head_len]);
        let mut lines = head.lines();
        let status_line = lines.next().unwrap_or("");
        let mut parts = status_line.split_whitespace();
        let version = parts.next().unwrap_or("");
        if !version.starts_with("HTTP/") {
            return Err(WarcError::BadHttp(format!(
                "the status line {:?} does not start with HTTP/",
                &status_line[..status_line.len().min(60)]
            )));
        }
        let status = parts
            .next()
            .and_then(|s| s.parse::<u16>().ok())
            .ok_or_else(|| bad("the status line has no status code"))?;
        let headers = lines
            .filter_map(|l| l.split_once(':'))
            .map(|(n, v)| (n.trim().to_ascii_lowercase(), v.trim().to_owned()))
            .collect();
        Ok(Self {
            status,
            headers,
            body_start,
        })
    }

    /// The page kind and charset of this response (by status and Content-Type), else why not.
    pub(super) fn page_kind(&self) -> Result<(PageKind, Option<String>), SkipReason> {
        if !(200..300).contains(&self.status) {
            return Err(SkipReason::Status);
        }
        let (media, charset) = media_type(self.header("content-type").unwrap_or(""));
        match media.as_str() {
            "text/html" | "application/xhtml+xml" => Ok((PageKind::Html, charset)),
            "text/plain" => Ok((PageKind::Text, charset)),
            _ => Err(SkipReason::NotPage),
        }
    }

    /// The body of `msg` (this response's message), transfer and content codings undone.
    pub(super) fn payload(&self, msg: &[u8], max: u64) -> Result<Vec<u8>, WarcError> {
        let mut payload = msg[self.body_start..].to_vec();
        if self
            .header("transfer-encoding")
            .is_some_and(|t| t.to_ascii_lowercase().contains("chunked"))
        {
            payload = dechunk(&payload)?;
        }
        decode_content(self.header("content-encoding"), payload, max)
    }

    /// The first header named `name` (lowercase).
    fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    }
}

/// Where the header part of an HTTP message ends: (its length, where the body starts).
fn find_header_end(msg: &[u8]) -> Option<(usize, usize)> {
    let crlf = msg.windows(4).position(|w| w == b"\r\n\r\n");
    let lf = msg.windows(2).position(|w| w == b"\n\n");
    match (crlf, lf) {
        (Some(c), Some(l)) if l < c => Some((l, l + 2)),
        (Some(c), _) => Some((c, c + 4)),
        (None, Some(l)) => Some((l, l + 2)),
        (None, None) => None,
    }
}

/// The media type (lowercase) and charset of a Content-Type value.
fn media_type(value: &str) -> (String, Option<String>) {
    let mut parts = value.split(';');
    let media = parts.next().unwrap_or("").trim().to_ascii_lowercase();
    let charset = parts
        .filter_map(|p| p.split_once('='))
        .find(|(k, _)| k.trim().eq_ignore_ascii_case("charset"))
        .map(|(_, v)| v.trim().trim_matches('"').trim().to_owned())
        .filter(|c| !c.is_empty());
    (media, charset)
}

/// Undoes the chunked transfer coding.
fn dechunk(mut data: &[u8]) -> Result<Vec<u8>, WarcError> {
    let bad = || WarcError::BadHttp("invalid chunked transfer coding".into());
    let mut out = Vec::with_capacity(data.len());
    loop {
        let line_end = data.iter().position(|&b| b == b'\n').ok_or_else(bad)?;
        let size_text = String::from_utf8_lossy(&data[..line_end]);
        let size_text = size_text.split(';').next().unwrap_or("").trim();
        let size = usize::from_str_radix(size_text, 16).map_err(|_| bad())?;
        data = &data[line_end + 1..];
        if size == 0 {
            return Ok(out);
        }
        let chunk = data.get(..size).ok_or_else(bad)?;
        out.extend_from_slice(chunk);
        data = &data[size..];
        data = data
            .strip_prefix(b"\r\n")
            .or_else(|| data.strip_prefix(b"\n"))
            .unwrap_or(data);
    }
}

/// Undoes a gzip or deflate content coding, to at most `max` bytes.
fn decode_content(coding: Option<&str>, payload: Vec<u8>, max: u64) -> Result<Vec<u8>, WarcError> {
    let coding = coding.unwrap_or("").trim().to_ascii_lowercase();
    let mut out = Vec::new();
    let limit = max.saturating_add(1);
    let result = match coding.as_str() {
        "" | "identity" => return Ok(payload),
        "gzip" | "x-gzip" => flate2::read::MultiGzDecoder::new(payload.as_slice())
            .take(limit)
            .read_to_end(&mut out),
        "deflate" => flate2::read::ZlibDecoder::new(payload.as_slice())
            .take(limit)
            .read_to_end(&mut out),
        other => {
            return Err(WarcError::BadHttp(format!(
                "unsupported Content-Encoding {other:?} (gzip and deflate are read)"
            )));
        }
    };
    match result {
        Ok(n) if n as u64 >= limit => Err(WarcError::DecodedTooLarge { max }),
        Ok(_) => Ok(out),
        Err(e) => Err(WarcError::BadHttp(format!(
            "cannot decode the {coding} Content-Encoding: {e}"
        ))),
    }
}
