//! Who may talk to `simstore serve`. Loopback is the default; there a request must name a
//! loopback host (`Host: 127.0.0.1:PORT`, `localhost`, `[::1]`, exactly: one Host header,
//! a port of digits, nothing else; and an absolute request-target, `POST http://HOST/query`,
//! must name one too), so a web page cannot reach the server through a DNS name rebound to
//! 127.0.0.1. Another address needs a bearer
//! token (`--token-file`), and with a token every request must carry
//! `Authorization: Bearer TOKEN`, on loopback too. Request bodies must be
//! `application/json`, so a browser's cross-site form or text/plain POST is refused before
//! any work is done.

use std::net::IpAddr;
use std::path::Path;
use std::sync::Arc;

use anyhow::{Context, Result, bail};
use axum::extract::{Request, State};
use axum::http::{HeaderMap, Method, StatusCode, Uri, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use serde_json::json;

use super::error::closing;

/// The access rules of one server.
#[derive(Debug)]
pub(super) struct Access {
    /// The bearer token, if one is set.
    token: Option<Vec<u8>>,
    /// Whether only loopback host names are accepted (the server listens on loopback).
    loopback_hosts: bool,
}

impl Access {
    /// The rules for a server on `addr` with the token in `token_file` (if given). A
    /// non-loopback address without a token is an error.
    pub(super) fn new(addr: IpAddr, token_file: Option<&Path>) -> Result<Self> {
        let token = match token_file {
            Some(path) => Some(read_token(path)?),
            None => None,
        };
        if !addr.is_loopback() && token.is_none() {
            bail!(
                "serving on {addr} (not loopback) needs a token: --token-file FILE (or \
                 SIMSTORE_TOKEN_FILE=FILE), a file holding a secret; clients then send \
                 `Authorization: Bearer <the secret>`"
            );
        }
        Ok(Self {
            token,
            loopback_hosts: addr.is_loopback(),
        })
    }

    /// Why a request is refused, if it is.
    fn refusal(
        &self,
        method: &Method,
        uri: &Uri,
        headers: &HeaderMap,
    ) -> Option<(StatusCode, String)> {
        if self.loopback_hosts && !(loopback_host(headers) && loopback_target(uri)) {
            return Some((
                StatusCode::FORBIDDEN,
                "the request must name this server on loopback: one Host header, 127.0.0.1, \
                 localhost or [::1] with an optional port (and a request-target that names a \
                 host names one of these too)"
                    .into(),
            ));
        }
        if let Some(token) = &self.token {
            let given = headers
                .get(header::AUTHORIZATION)
                .and_then(|v| v.as_bytes().strip_prefix(b"Bearer "));
            if !given.is_some_and(|g| constant_time_eq(g, token)) {
                return Some((
                    StatusCode::UNAUTHORIZED,
                    "missing or wrong `Authorization: Bearer <token>`".into(),
                ));
            }
        }
        if *method == Method::POST && !json_body(headers) {
            return Some((
                StatusCode::UNSUPPORTED_MEDIA_TYPE,
                "request bodies must be JSON: send `Content-Type: application/json`".into(),
            ));
        }
        None
    }
}

/// Middleware: refuses a request that breaks the rules, before any work is done (its body
/// unread, so the connection is closed).
pub(super) async fn check(State(access): State<Arc<Access>>, req: Request, next: Next) -> Response {
    match access.refusal(req.method(), req.uri(), req.headers()) {
        Some((status, message)) => {
            let mut r = (status, axum::Json(json!({ "error": message }))).into_response();
            if status == StatusCode::UNAUTHORIZED {
                r.headers_mut()
                    .insert(header::WWW_AUTHENTICATE, "Bearer".parse().expect("valid"));
            }
            closing(r)
        }
        None => next.run(req).await,
    }
}

/// The token in `path`: its content without surrounding whitespace; never empty.
fn read_token(path: &Path) -> Result<Vec<u8>> {
    let bytes = std::fs::read(path)
        .with_context(|| format!("cannot read the token file {}", path.display()))?;
    let token = bytes.trim_ascii().to_vec();
    if token.is_empty() {
        bail!("the token file {} is empty", path.display());
    }
    Ok(token)
}

/// Whether the request has exactly one Host header, naming a loopback host (any port).
fn loopback_host(headers: &HeaderMap) -> bool {
    let mut hosts = headers.get_all(header::HOST).iter();
    match (hosts.next(), hosts.next()) {
        (Some(host), None) => host.to_str().is_ok_and(is_loopback_authority),
        _ => false,
    }
}

/// Whether the request-target names no host (`/query`, the usual origin form) or a loopback
/// one (the absolute form `http://127.0.0.1:7171/query`, which a server must heed over
/// the Host header).
fn loopback_target(uri: &Uri) -> bool {
    uri.authority()
        .is_none_or(|a| is_loopback_authority(a.as_str()))
}

/// Whether `authority` is exactly a loopback host with an optional port of digits:
/// `127.0.0.1`, `localhost:7171`, `[::1]:80`; not `127.0.0.1:80@evil.com` (user info and
/// another host), `localhost.evil.com` or `127.0.0.1:x`.
fn is_loopback_authority(authority: &str) -> bool {
    let (name, port) = match authority.strip_prefix('[') {
        Some(v6) => match v6.split_once(']') {
            Some((name, rest)) => (name, rest),
            None => return false,
        },
        None => match authority.find(':') {
            Some(colon) => authority.split_at(colon),
            None => (authority, ""),
        },
    };
    let port_ok = match port.strip_prefix(':') {
        Some(digits) => !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit()),
        None => port.is_empty(),
    };
    port_ok
        && matches!(
            name.to_ascii_lowercase().as_str(),
            "127.0.0.1" | "localhost" | "::1"
        )
}

/// Whether the Content-Type is JSON (`application/json`, parameters allowed).
fn json_body(headers: &HeaderMap) -> bool {
    headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.split(';').next())
        .is_some_and(|m| m.trim().eq_ignore_ascii_case("application/json"))
}

/// Compares in time that depends on the lengths only, not on where the bytes differ.
fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
    if a.len() != b.len() {
        return false;
    }
    a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

#[cfg(test)]
mod tests {
    use super::*;

    fn headers(pairs: &[(header::HeaderName, &str)]) -> HeaderMap {
        let mut h = HeaderMap::new();
        for (k, v) in pairs {
            h.insert(k.clone(), v.parse().unwrap());
        }
        h
    }

    #[test]
    fn hosts_tokens_and_content_types() {
        let open = Access {
            token: None,
            loopback_hosts: true,
        };
        let origin: Uri = "/query".parse().unwrap();
        let json = (header::CONTENT_TYPE, "application/json; charset=utf-8");
        let ok = headers(&[(header::HOST, "127.0.0.1:7171"), json.clone()]);
        assert_eq!(open.refusal(&Method::POST, &origin, &ok), None);
        for host in ["localhost", "[::1]:80", "localhost:1"] {
            let h = headers(&[(header::HOST, host)]);
            assert_eq!(open.refusal(&Method::GET, &origin, &h), None, "{host}");
        }
        let rebound = headers(&[(header::HOST, "evil.example:7171"), json.clone()]);
        assert_eq!(
            open.refusal(&Method::POST, &origin, &rebound).unwrap().0,
            StatusCode::FORBIDDEN
        );
        let text = headers(&[
            (header::HOST, "localhost"),
            (header::CONTENT_TYPE, "text/plain"),
        ]);
        let refused = open.refusal(&Method::POST, &origin, &text).unwrap().0;
        assert_eq!(refused, StatusCode::UNSUPPORTED_MEDIA_TYPE);
        let secret = Access {
            token: Some(b"s3cret".to_vec()),
            loopback_hosts: false,
        };
        let with = |auth: &str| headers(&[(header::AUTHORIZATION, auth), json.clone()]);
        assert_eq!(
            secret.refusal(&Method::POST, &origin, &with("Bearer s3cret")),
            None
        );
        for bad in ["Bearer s3cre", "Bearer s3cret2", "s3cret", "Basic s3cret"] {
            let refused = secret
                .refusal(&Method::POST, &origin, &with(bad))
                .unwrap()
                .0;
            assert_eq!(refused, StatusCode::UNAUTHORIZED, "{bad}");
        }
        assert!(Access::new("0.0.0.0".parse().unwrap(), None).is_err());
        assert!(Access::new("127.0.0.1".parse().unwrap(), None).is_ok());
    }

    #[test]
    fn only_exact_loopback_authorities_pass() {
        for ok in [
            "127.0.0.1",
            "127.0.0.1:7171",
            "localhost",
            "LocalHost:1",
            "[::1]",
            "[::1]:80",
        ] {
            assert!(is_loopback_authority(ok), "{ok}");
        }
        for bad in [
            "127.0.0.1:80@evil.com",
            "localhost@evil.com",
            "evil.com:80@127.0.0.1:80x",
            "localhost.evil.com",
            "127.0.0.1:",
            "127.0.0.1:x",
            "127.0.0.1:80:80",
            "[::1]x",
            "[::1",
            "[::1]:80@evil.com",
            "",
        ] {
            assert!(!is_loopback_authority(bad), "{bad}");
        }
        let absolute: Uri = "http://evil.com/query".parse().unwrap();
        assert!(!loopback_target(&absolute));
        let absolute: Uri = "http://127.0.0.1:7171/query".parse().unwrap();
        assert!(loopback_target(&absolute));
        let mut two = HeaderMap::new();
        two.append(header::HOST, "127.0.0.1".parse().unwrap());
        two.append(header::HOST, "evil.com".parse().unwrap());
        assert!(!loopback_host(&two));
    }
}
