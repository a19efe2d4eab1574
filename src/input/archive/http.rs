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
    /// Parses the status line and headers of `msg` (httparse, as lenient as it goes with the
    /// responses of real crawls: invalid header lines skipped, obsolete folded ones kept).
    pub(super) fn parse(msg: &[u8]) -> Result<Self, WarcError> {
        let mut slots = 64;
        loop {
            match parse_head(msg, slots) {
                Err(httparse::Error::TooManyHeaders) if slots < MAX_HEADERS => slots *= 4,
                Err(e) => {
                    return Err(WarcError::BadHttp(format!(
                        "{e} in the status line or headers"
                    )));
                }
                Ok(None) => {
                    return Err(WarcError::BadHttp(
                        "no blank line ends the HTTP headers".into(),
                    ));
                }
                Ok(Some(head)) => return Ok(head),
            }
        }
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

/// The most header lines a response may have.
const MAX_HEADERS: usize = 4096;

/// The status and headers of `msg` with room for `slots` headers; `None` when no blank line
/// ends them.
fn parse_head(msg: &[u8], slots: usize) -> Result<Option<HttpResponse>, httparse::Error> {
    let mut headers = vec![httparse::EMPTY_HEADER; slots];
    let mut response = httparse::Response::new(&mut headers);
    let parsed = httparse::ParserConfig::default()
        .allow_spaces_after_header_name_in_responses(true)
        .allow_obsolete_multiline_headers_in_responses(true)
        .allow_multiple_spaces_in_response_status_delimiters(true)
        .ignore_invalid_headers_in_responses(true)
        .parse_response(&mut response, msg)?;
    let httparse::Status::Complete(body_start) = parsed else {
        return Ok(None);
    };
    let headers = (response.headers.iter())
        .map(|h| {
            let value = String::from_utf8_lossy(h.value).trim().to_owned();
            (h.name.to_ascii_lowercase(), value)
        })
        .collect();
    Ok(Some(HttpResponse {
        status: response.code.unwrap_or(0),
        headers,
        body_start,
    }))
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn responses_of_real_crawls_parse_leniently() {
        // Bare LF line ends, a line that is no header, a folded header.
        let msg =
            b"HTTP/1.1 200 OK\nContent-Type: text/html;\n charset=gbk\nnot a header\nX: y\n\nbody";
        let r = HttpResponse::parse(msg).unwrap();
        assert_eq!(r.status, 200);
        assert_eq!(r.page_kind().unwrap(), (PageKind::Html, Some("gbk".into())));
        assert_eq!(r.payload(msg, 100).unwrap(), b"body");
        // More headers than the first guess holds.
        let mut many = b"HTTP/1.0 404 Not Found\r\n".to_vec();
        for i in 0..300 {
            many.extend_from_slice(format!("X-{i}: {i}\r\n").as_bytes());
        }
        many.extend_from_slice(b"\r\n");
        let r = HttpResponse::parse(&many).unwrap();
        assert_eq!((r.status, r.headers.len()), (404, 300));
        assert!(matches!(r.page_kind(), Err(SkipReason::Status)));
    }

    #[test]
    fn what_is_no_http_response_is_refused_with_why() {
        let refused = |msg: &[u8]| match HttpResponse::parse(msg) {
            Err(WarcError::BadHttp(why)) => why,
            _ => panic!("{msg:?} accepted"),
        };
        assert!(refused(b"GET / HTTP/1.1\r\n\r\n").contains("status line or headers"));
        assert!(refused(b"HTTP/1.1 200 OK\r\nA: b\r\n").contains("no blank line"));
    }
}
