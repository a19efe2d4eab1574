//! Error answers: a status code and `{"error": message}`, and which library errors map to
//! which status.

use axum::extract::rejection::{BytesRejection, PathRejection};
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde_json::json;
use simstore::Error;
use simstore::input::reader::RecordError;

/// An error answer: a status code and `{"error": message}` (and `"outcome": "unknown"`
/// for a write that failed after it may have reached the store).
#[derive(Debug)]
pub(super) struct ApiError {
    pub(super) status: StatusCode,
    message: String,
    outcome_unknown: bool,
}

impl ApiError {
    pub(super) fn new(status: StatusCode, message: impl Into<String>) -> Self {
        Self {
            status,
            message: message.into(),
            outcome_unknown: false,
        }
    }

    pub(super) fn bad_request(message: impl Into<String>) -> Self {
        Self::new(StatusCode::BAD_REQUEST, message)
    }

    /// A write that failed in the store after it may have been applied: 503 with
    /// `"outcome": "unknown"`, never 500 (a 500 would claim that nothing was stored).
    pub(super) fn outcome_unknown(message: impl Into<String>) -> Self {
        Self {
            outcome_unknown: true,
            ..Self::new(StatusCode::SERVICE_UNAVAILABLE, message)
        }
    }

    /// Prefixes the message with where in the request the problem is.
    pub(super) fn at(mut self, place: &str) -> Self {
        self.message = format!("{place}: {}", self.message);
        self
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let body = if self.outcome_unknown {
            json!({ "error": self.message, "outcome": "unknown" })
        } else {
            json!({ "error": self.message })
        };
        (self.status, axum::Json(body)).into_response()
    }
}

/// `response` with `Connection: close`, for an answer given before the request's body was
/// read: hyper then closes the connection, and the client, told so, does not send its next
/// request on a connection that is going away (where an unread body is still in flight,
/// hyper cannot keep the connection).
pub(super) fn closing(mut response: Response) -> Response {
    response
        .headers_mut()
        .insert(header::CONNECTION, HeaderValue::from_static("close"));
    response
}

/// The status of a library error when nothing can have been written: 4xx for what the
/// request got wrong, 500 for the rest.
pub(super) fn status_of(e: &Error) -> StatusCode {
    match e {
        Error::EmptyDocument | Error::FieldTooLong { .. } => StatusCode::UNPROCESSABLE_ENTITY,
        Error::KTooLarge { .. }
        | Error::InvalidId(_)
        | Error::InvalidFingerprint { .. }
        | Error::InvalidArgument(_) => StatusCode::BAD_REQUEST,
        _ => StatusCode::INTERNAL_SERVER_ERROR,
    }
}

impl From<Error> for ApiError {
    fn from(e: Error) -> Self {
        Self::new(status_of(&e), e.to_string())
    }
}

impl From<RecordError> for ApiError {
    fn from(e: RecordError) -> Self {
        let status = match e {
            RecordError::Empty | RecordError::EmptyPage | RecordError::FieldTooLong(_) => {
                StatusCode::UNPROCESSABLE_ENTITY
            }
            _ => StatusCode::BAD_REQUEST,
        };
        Self::new(status, e.to_string())
    }
}

impl From<BytesRejection> for ApiError {
    fn from(r: BytesRejection) -> Self {
        let status = r.status();
        let message = if status == StatusCode::PAYLOAD_TOO_LARGE {
            "the request body is larger than the server's limit (simstore serve --max-body-bytes)"
                .to_owned()
        } else {
            format!("cannot read the request body: {}", r.body_text())
        };
        Self::new(status, message)
    }
}

impl From<PathRejection> for ApiError {
    fn from(r: PathRejection) -> Self {
        let message = format!(
            "the document id in the path cannot be read: {} (percent-encode its UTF-8 bytes)",
            r.body_text()
        );
        Self::new(r.status(), message)
    }
}

/// What a handler answers.
pub(super) type ApiResult = Result<axum::Json<serde_json::Value>, ApiError>;
