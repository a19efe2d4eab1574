//! The body-read timeout (`--body-timeout`): a request's body must arrive whole within it,
//! counted from the end of its headers. A client sending it slower gets 408, nothing is
//! done, and its connection is closed. The body is read here, once, under the
//! `--max-body-bytes` limit; handlers extract it from memory.

use std::time::Duration;

use axum::body::{Body, Bytes};
use axum::extract::{FromRequest, Request, State};
use axum::http::{HeaderValue, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};

use super::error::ApiError;

/// Middleware: reads the request body within `timeout`.
pub(super) async fn read_within(
    State(timeout): State<Duration>,
    req: Request,
    next: Next,
) -> Response {
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
            let mut r = ApiError::new(StatusCode::REQUEST_TIMEOUT, message).into_response();
            r.headers_mut()
                .insert(header::CONNECTION, HeaderValue::from_static("close"));
            r
        }
    }
}
