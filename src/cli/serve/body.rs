//! The body-read timeout (`--body-timeout`): a request's body must arrive whole within it,
//! counted from the end of its headers. A client sending it slower gets 408, nothing is
//! done, and its connection is closed. The body is read here, once, under the
//! `--max-body-bytes` limit; handlers extract it from memory. A `Content-Length` over the
//! limit is answered 413 at once, from the header, and the connection closed: the body is
//! not waited for.

use std::time::Duration;

use axum::body::{Body, Bytes};
use axum::extract::{FromRequest, Request, State};
use axum::http::{StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};

use super::error::{ApiError, closing};

/// How request bodies are read.
#[derive(Debug, Clone, Copy)]
pub(super) struct BodyLimits {
    /// `--body-timeout`.
    pub(super) timeout: Duration,
    /// `--max-body-bytes`.
    pub(super) max_bytes: usize,
}

/// Middleware: refuses a declared length over the limit, else reads the request body
/// within the timeout.
pub(super) async fn read_within(
    State(limits): State<BodyLimits>,
    req: Request,
    next: Next,
) -> Response {
    if let Some(length) = declared_length(&req)
        && length > limits.max_bytes as u64
    {
        return too_large(length, limits.max_bytes);
    }
    let timeout = limits.timeout;
    let (parts, body) = req.into_parts();
    let read = Bytes::from_request(Request::from_parts(parts.clone(), body), &());
    match tokio::time::timeout(timeout, read).await {
        Ok(Ok(bytes)) => {
            next.run(Request::from_parts(parts, Body::from(bytes)))
                .await
        }
        Ok(Err(rejection)) => ApiError::from(rejection).into_response(),
        Err(_) => {
            let message = format!(
                "the request body did not arrive within {} s (simstore serve --body-timeout); \
                 nothing was done",
                timeout.as_secs()
            );
            closing(ApiError::new(StatusCode::REQUEST_TIMEOUT, message).into_response())
        }
    }
}

/// The request's `Content-Length`, when it has one that is a number.
fn declared_length(req: &Request) -> Option<u64> {
    req.headers()
        .get(header::CONTENT_LENGTH)?
        .to_str()
        .ok()?
        .parse()
        .ok()
}

/// 413 for a body declared `length` bytes long, over `max`; the connection is closed (its
/// body is not read).
fn too_large(length: u64, max: usize) -> Response {
    let message = format!(
        "the request body is {length} bytes (Content-Length); the server takes at most {max} \
         (simstore serve --max-body-bytes); nothing was done"
    );
    closing(ApiError::new(StatusCode::PAYLOAD_TOO_LARGE, message).into_response())
}
