//! What every handler shares, and how store calls run: on tokio's blocking pool, at most
//! `--workers` at a time; writes only while the store takes them.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, OnceLock};

use axum::extract::{Request, State};
use axum::http::StatusCode;
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use simstore::{Error, Store};
use tokio::sync::Semaphore;

use super::error::{ApiError, closing, status_of};
use super::metrics::Metrics;

/// What every handler shares.
pub(super) struct App {
    pub(super) store: Store,
    /// Bounds the store calls running at once.
    workers: Semaphore,
    /// Set when a shutdown signal arrived: new requests get 503.
    pub(super) shutting_down: AtomicBool,
    /// Set once, with the reason, when a write failed in the store: later writes are
    /// refused (503) and `/health` answers 503, until a restart.
    writes_stopped: OnceLock<String>,
    /// The most matches one request may answer (`--max-matches`).
    pub(super) max_matches: usize,
    /// The most bytes one answer may have (`--max-answer-bytes`).
    pub(super) max_answer_bytes: usize,
    /// What `/metrics` reports.
    pub(super) metrics: Metrics,
}

pub(super) type Shared = Arc<App>;

impl App {
    pub(super) fn new(store: Store, workers: usize, caps: (usize, usize)) -> Self {
        Self {
            store,
            workers: Semaphore::new(workers),
            shutting_down: AtomicBool::new(false),
            writes_stopped: OnceLock::new(),
            max_matches: caps.0,
            max_answer_bytes: caps.1,
            metrics: Metrics::default(),
        }
    }

    /// Why the server stopped taking writes, if it did.
    pub(super) fn writes_stopped(&self) -> Option<&str> {
        self.writes_stopped.get().map(String::as_str)
    }

    /// The answer to a write whose store call failed with `e`. A refusal of the request
    /// (an invalid id, k too large) stored nothing and keeps its 4xx. Any other failure may
    /// have come after the write reached the store: its outcome is unknown (503, never
    /// 500), and a storage or I/O failure stops the server taking writes — unless the
    /// backend's failures pass (Redis Cluster: the next write may succeed).
    pub(super) fn write_failed(&self, e: Error) -> ApiError {
        if status_of(&e) != StatusCode::INTERNAL_SERVER_ERROR {
            return e.into();
        }
        let reason = e.to_string();
        let stops = matches!(e, Error::Storage { .. } | Error::Io(_))
            && self.store.backend().properties().failed_write_lasts;
        if stops && self.writes_stopped.set(reason.clone()).is_ok() {
            eprintln!(
                "simstore serve: a write failed in the store ({reason}): no more writes are taken; /health answers 503; restart the server once the cause is fixed"
            );
        }
        let after = if stops {
            "The server stopped taking writes: fix the cause, restart it, then read the \
             document (GET /docs/{id}) to learn whether this write landed"
        } else {
            "Read the document (GET /docs/{id}) to learn whether it landed"
        };
        ApiError::outcome_unknown(format!(
            "the store failed during this write ({reason}); its outcome is unknown: it may \
             or may not be stored. {after}"
        ))
    }

    /// The answer to a write arriving after the server stopped taking writes.
    fn writes_refused(&self, reason: &str) -> ApiError {
        ApiError::new(
            StatusCode::SERVICE_UNAVAILABLE,
            format!(
                "the server stopped taking writes after a write failed in the store ({reason}); \
                 nothing was done with this request: fix the cause and restart the server"
            ),
        )
    }
}

/// Runs a reading store call on the blocking pool, at most `--workers` at a time.
pub(super) async fn read<T: Send + 'static>(
    app: &Shared,
    f: impl FnOnce(&App) -> Result<T, ApiError> + Send + 'static,
) -> Result<T, ApiError> {
    run(app, false, f).await
}

/// Runs a writing store call as [`read`] does, if the server still takes writes; `f`
/// passes the store call's error through [`App::write_failed`].
pub(super) async fn write<T: Send + 'static>(
    app: &Shared,
    f: impl FnOnce(&App) -> Result<T, ApiError> + Send + 'static,
) -> Result<T, ApiError> {
    if let Some(reason) = app.writes_stopped() {
        return Err(app.writes_refused(reason));
    }
    run(app, true, f).await
}

async fn run<T: Send + 'static>(
    app: &Shared,
    writes: bool,
    f: impl FnOnce(&App) -> Result<T, ApiError> + Send + 'static,
) -> Result<T, ApiError> {
    let _permit = app.workers.acquire().await.map_err(|_| {
        ApiError::new(
            StatusCode::SERVICE_UNAVAILABLE,
            "the server is shutting down",
        )
    })?;
    let app = Arc::clone(app);
    tokio::task::spawn_blocking(move || f(&app))
        .await
        .map_err(|e| {
            let message = format!("the store call failed: {e}");
            if writes {
                ApiError::outcome_unknown(message)
            } else {
                ApiError::new(StatusCode::INTERNAL_SERVER_ERROR, message)
            }
        })?
}

/// Middleware: 503 for every request once a shutdown signal arrived.
pub(super) async fn refuse_when_shutting_down(
    State(app): State<Shared>,
    req: Request,
    next: Next,
) -> Response {
    if app.shutting_down.load(Ordering::SeqCst) {
        return closing(
            ApiError::new(
                StatusCode::SERVICE_UNAVAILABLE,
                "the server is shutting down; retry against the next instance",
            )
            .into_response(),
        );
    }
    next.run(req).await
}
