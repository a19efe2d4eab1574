//! `simstore serve`: an HTTP JSON API over one store, for crawlers in other processes and
//! languages.
//!
//! Endpoints (JSON in and out; errors are `{"error": "..."}` with a status code):
//!
//! | method, path | body | answer |
//! |---|---|---|
//! | `POST /insert` | `{"id", "title"?, "text"?, "url"?, "fp"?}` | `{"id", "fp", "status": "inserted" \| "replaced"}` |
//! | `POST /check_and_insert` | the same and `"k"`? | `{"id", "fp", "status": "new" \| "exact_duplicate" \| "near_duplicate", "of"?, "distance"?}` |
//! | `POST /query` | `{"text"? , "title"?, "fp"?, "k"?, "limit"?}` | `{"matches": [{"id", "distance", "fp", "title"?, "url"?}]}` |
//! | `POST /query/batch` | `[query, ...]` | `{"results": [{"matches": [...]}, ...]}` |
//! | `GET /docs/{id}` | | the document, or 404 |
//! | `DELETE /docs/{id}` | | `{"deleted": true}`, or 404 |
//! | `GET /stats` | | documents, layout, disk size |
//! | `GET /health` | | `{"status": "ok"}` (503 while shutting down) |
//!
//! Access (`access.rs`): on loopback (the default) the Host header must name loopback;
//! another address needs `--token-file`; with a token every request must carry
//! `Authorization: Bearer TOKEN` (401 otherwise); POST bodies must be `application/json`
//! (415 otherwise). A refused request does no work.
//!
//! Durability: the store is opened with `sync_writes` unless `--no-sync`, so a 200 answer
//! to a write means the write-ahead log holding it was fsynced. Store calls block: each
//! runs on tokio's blocking pool, at most `--workers` at a time. SIGINT/SIGTERM: stop
//! accepting connections, answer 503 to requests arriving on open connections, finish the
//! requests under way, flush the store, exit 0.

use std::net::{IpAddr, SocketAddr};
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use anyhow::{Context, Result};
use axum::Router;
use axum::body::Bytes;
use axum::extract::rejection::BytesRejection;
use axum::extract::{DefaultBodyLimit, Path as UrlPath, Request, State};
use axum::http::StatusCode;
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use serde::Deserialize;
use serde_json::{Value, json};
use simstore::input::reader::{self, RecordError};
use simstore::{CheckOutcome, Error, Fingerprint, InsertOutcome, Store};
use tokio::sync::Semaphore;

use self::access::Access;
use super::{Code, output};

mod access;

/// Arguments of `simstore serve`.
#[derive(Debug, clap::Args)]
#[command(
    after_help = "Endpoints (JSON in and out; errors {\"error\": ...} with 400/404/413/422/500/503):\n  \
                  POST /insert {\"id\", \"title\"?, \"text\"?, \"url\"?, \"fp\"?}\n  \
                  POST /check_and_insert (the same, and \"k\"?) -> {\"status\": \"new\"|\"exact_duplicate\"|\"near_duplicate\", \"of\"?, \"distance\"?}\n  \
                  POST /query {\"text\"?|\"title\"?|\"fp\"?, \"k\"?, \"limit\"?} -> {\"matches\": [...]}\n  \
                  POST /query/batch [query, ...] -> {\"results\": [...]}\n  \
                  GET /docs/{id}, DELETE /docs/{id}, GET /stats, GET /health\n\
                  Prints the address it listens on (http://IP:PORT) as the first line of stdout.\n\
                  Writes are fsynced before they are answered (unless --no-sync).\n\
                  Access: on loopback the Host header must be loopback; any other --addr needs\n\
                  --token-file, and then every request needs `Authorization: Bearer TOKEN`;\n\
                  POST bodies need `Content-Type: application/json`.\n\
                  Exit status: 0 after a clean shutdown (SIGINT or SIGTERM), 2 error."
)]
pub struct Args {
    /// IP address to listen on.
    #[arg(long, default_value = "127.0.0.1")]
    addr: IpAddr,
    /// Port to listen on (0 = any free port).
    #[arg(long, default_value_t = 7171)]
    port: u16,
    /// Largest request body accepted, in bytes; a larger one gets 413.
    #[arg(long, default_value_t = 16 << 20)]
    max_body_bytes: usize,
    /// Store calls running at once (on blocking threads); further requests wait.
    #[arg(long, default_value_t = 16, value_parser = clap::value_parser!(u32).range(1..=1024))]
    workers: u32,
    /// A file holding a secret token: every request must then carry
    /// `Authorization: Bearer TOKEN`. Required to listen on an address other than loopback.
    #[arg(long, env = "SIMSTORE_TOKEN_FILE", value_name = "FILE")]
    token_file: Option<std::path::PathBuf>,
    /// Do not fsync before acknowledging a write: acknowledged writes then survive a crash
    /// of the server (kill -9) but not of the OS or a power loss. Faster.
    #[arg(long)]
    no_sync: bool,
}

/// What every handler shares.
struct App {
    store: Store,
    /// Bounds the store calls running at once.
    workers: Semaphore,
    /// Set when a shutdown signal arrived: new requests get 503.
    shutting_down: AtomicBool,
}

type Shared = Arc<App>;

/// An error answer: a status code and `{"error": message}`.
#[derive(Debug)]
struct ApiError {
    status: StatusCode,
    message: String,
}

impl ApiError {
    fn new(status: StatusCode, message: impl Into<String>) -> Self {
        Self {
            status,
            message: message.into(),
        }
    }

    fn bad_request(message: impl Into<String>) -> Self {
        Self::new(StatusCode::BAD_REQUEST, message)
    }

    /// Prefixes the message with where in the request the problem is.
    fn at(mut self, place: &str) -> Self {
        self.message = format!("{place}: {}", self.message);
        self
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        (self.status, axum::Json(json!({ "error": self.message }))).into_response()
    }
}

impl From<Error> for ApiError {
    fn from(e: Error) -> Self {
        let status = match e {
            Error::EmptyDocument => StatusCode::UNPROCESSABLE_ENTITY,
            Error::KTooLarge { .. } | Error::InvalidId(_) | Error::InvalidFingerprint { .. } => {
                StatusCode::BAD_REQUEST
            }
            _ => StatusCode::INTERNAL_SERVER_ERROR,
        };
        Self::new(status, e.to_string())
    }
}

impl From<RecordError> for ApiError {
    fn from(e: RecordError) -> Self {
        let status = match e {
            RecordError::Empty => StatusCode::UNPROCESSABLE_ENTITY,
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

type ApiResult = Result<axum::Json<Value>, ApiError>;

/// Runs the server until SIGINT or SIGTERM; see [`Args`].
pub fn run(db: &Path, args: Args) -> Result<Code> {
    let access = Arc::new(Access::new(args.addr, args.token_file.as_deref())?);
    let store = Store::builder(db)
        .sync_writes(!args.no_sync)
        .open()
        .with_context(|| format!("cannot open or create {}", db.display()))?;
    let app = Arc::new(App {
        store,
        workers: Semaphore::new(args.workers as usize),
        shutting_down: AtomicBool::new(false),
    });
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .context("cannot start the async runtime")?;
    runtime.block_on(serve(Arc::clone(&app), access, &args))?;
    drop(runtime);
    app.store
        .flush()
        .with_context(|| format!("cannot flush {}", db.display()))?;
    eprintln!(
        "simstore serve: shut down cleanly; {} holds {} documents",
        db.display(),
        app.store.len()
    );
    Ok(0)
}

fn router(app: Shared, access: Arc<Access>, max_body_bytes: usize) -> Router {
    Router::new()
        .route("/insert", post(insert))
        .route("/check_and_insert", post(check_and_insert))
        .route("/query", post(query))
        .route("/query/batch", post(query_batch))
        .route("/docs/{*id}", get(get_doc).delete(delete_doc))
        .route("/stats", get(stats))
        .route("/health", get(health))
        .fallback(not_found)
        .method_not_allowed_fallback(method_not_allowed)
        .layer(DefaultBodyLimit::max(max_body_bytes))
        .layer(middleware::from_fn_with_state(
            Arc::clone(&app),
            refuse_when_shutting_down,
        ))
        .layer(middleware::from_fn_with_state(access, access::check))
        .with_state(app)
}

async fn serve(app: Shared, access: Arc<Access>, args: &Args) -> Result<()> {
    let addr = SocketAddr::new(args.addr, args.port);
    // Handlers are installed before the address is printed: a signal sent by whoever read
    // it is always a clean shutdown, never the default termination.
    let signals = shutdown_signal(Arc::clone(&app))?;
    let listener = tokio::net::TcpListener::bind(addr)
        .await
        .with_context(|| format!("cannot listen on {addr}"))?;
    let local = listener.local_addr()?;
    {
        // A closed stdout (`serve | head -1` after head exits) is not a reason to stop.
        use std::io::Write;
        let mut out = std::io::stdout().lock();
        let _ = writeln!(out, "http://{local}").and_then(|()| out.flush());
    }
    eprintln!(
        "simstore serve: listening on http://{local} (store {}, {} documents; writes {})",
        app.store.path().display(),
        app.store.len(),
        if args.no_sync {
            "not fsynced: --no-sync"
        } else {
            "fsynced before they are acknowledged"
        }
    );
    axum::serve(listener, router(app, access, args.max_body_bytes))
        .with_graceful_shutdown(signals)
        .await
        .context("the server failed")
}

/// Resolves at the first SIGINT or SIGTERM, after marking the server as shutting down.
fn shutdown_signal(app: Shared) -> Result<impl Future<Output = ()> + Send + 'static> {
    use tokio::signal::unix::{SignalKind, signal};
    let mut term = signal(SignalKind::terminate()).context("cannot install a SIGTERM handler")?;
    let mut int = signal(SignalKind::interrupt()).context("cannot install a SIGINT handler")?;
    Ok(async move {
        let name = tokio::select! {
            _ = term.recv() => "SIGTERM",
            _ = int.recv() => "SIGINT",
        };
        app.shutting_down.store(true, Ordering::SeqCst);
        eprintln!(
            "simstore serve: {name}: shutting down (finishing the requests under way, then flushing the store)"
        );
    })
}

async fn refuse_when_shutting_down(
    State(app): State<Shared>,
    req: Request,
    next: Next,
) -> Response {
    if app.shutting_down.load(Ordering::SeqCst) {
        return ApiError::new(
            StatusCode::SERVICE_UNAVAILABLE,
            "the server is shutting down; retry against the next instance",
        )
        .into_response();
    }
    next.run(req).await
}

/// Runs a blocking store call on the blocking pool, at most `--workers` at a time.
async fn blocking<T: Send + 'static>(
    app: &Shared,
    f: impl FnOnce(&Store) -> Result<T, ApiError> + Send + 'static,
) -> Result<T, ApiError> {
    let _permit = app.workers.acquire().await.map_err(|_| {
        ApiError::new(
            StatusCode::SERVICE_UNAVAILABLE,
            "the server is shutting down",
        )
    })?;
    let app = Arc::clone(app);
    tokio::task::spawn_blocking(move || f(&app.store))
        .await
        .map_err(|e| {
            ApiError::new(
                StatusCode::INTERNAL_SERVER_ERROR,
                format!("the store call failed: {e}"),
            )
        })?
}

fn body(bytes: Result<Bytes, BytesRejection>) -> Result<Bytes, ApiError> {
    bytes.map_err(ApiError::from)
}

async fn insert(State(app): State<Shared>, bytes: Result<Bytes, BytesRejection>) -> ApiResult {
    let bytes = body(bytes)?;
    blocking(&app, move |store| {
        let entry = reader::parse_jsonl(bytes.trim_ascii())?.into_entry(store.fingerprinter())?;
        let (id, fp) = (entry.id.clone(), entry.fp);
        let status = match store.insert_fingerprint(&entry.id, entry.fp, entry.meta)? {
            InsertOutcome::Inserted => "inserted",
            InsertOutcome::Replaced => "replaced",
        };
        Ok(axum::Json(
            json!({ "id": id, "fp": fp.to_string(), "status": status }),
        ))
    })
    .await
}

/// The `k` of a check-and-insert request (the other fields are the document's).
#[derive(Debug, Deserialize)]
struct CheckK {
    /// Default: the store's k_max.
    #[serde(default)]
    k: Option<u32>,
}

async fn check_and_insert(
    State(app): State<Shared>,
    bytes: Result<Bytes, BytesRejection>,
) -> ApiResult {
    let bytes = body(bytes)?;
    blocking(&app, move |store| {
        let record = reader::parse_jsonl(bytes.trim_ascii())?;
        // The record parsed, so the body is a JSON object.
        let k = serde_json::from_slice::<CheckK>(&bytes)
            .map_err(|e| ApiError::bad_request(format!("invalid \"k\": {e}")))?
            .k
            .unwrap_or_else(|| store.layout().k_max());
        let entry = record.into_entry(store.fingerprinter())?;
        let id = entry.id.clone();
        let outcome = store.check_and_insert_fingerprint(&entry.id, entry.fp, entry.meta, k)?;
        let mut v = json!({ "id": id, "fp": outcome.fingerprint().to_string() });
        v["status"] = json!(match &outcome {
            CheckOutcome::New { .. } => "new",
            CheckOutcome::ExactDuplicate { .. } => "exact_duplicate",
            _ => "near_duplicate",
        });
        if let CheckOutcome::New { replaced, .. } = &outcome {
            v["replaced"] = json!(replaced);
        }
        if let (Some(of), Some(distance)) = (outcome.duplicate_of(), outcome.distance()) {
            v["of"] = json!(of);
            v["distance"] = json!(distance);
        }
        Ok(axum::Json(v))
    })
    .await
}

/// A query: a text (with an optional title) or a fingerprint, and how far to look.
#[derive(Debug, Deserialize)]
struct QueryRequest {
    /// Ignored; allowed so that a document as sent to /insert is a valid query.
    #[serde(default)]
    #[allow(dead_code, reason = "accepted and ignored")]
    id: Option<String>,
    #[serde(default)]
    text: Option<String>,
    #[serde(default)]
    title: Option<String>,
    #[serde(default)]
    fp: Option<String>,
    /// Default: the store's k_max.
    #[serde(default)]
    k: Option<u32>,
    #[serde(default)]
    limit: Option<usize>,
}

fn parse_query(v: Value) -> Result<QueryRequest, ApiError> {
    if !v.is_object() {
        return Err(ApiError::bad_request(
            "expected a JSON object like {\"text\": \"...\", \"k\": 3}",
        ));
    }
    serde_json::from_value(v).map_err(|e| ApiError::bad_request(format!("invalid query: {e}")))
}

fn run_query(store: &Store, q: &QueryRequest) -> Result<Value, ApiError> {
    let fp = match (&q.fp, &q.text, &q.title) {
        (Some(hex), _, _) => hex.parse::<Fingerprint>()?,
        (None, None, None) => {
            return Err(ApiError::new(
                StatusCode::UNPROCESSABLE_ENTITY,
                "nothing to query with: give \"text\" (or \"title\") or \"fp\"",
            ));
        }
        (None, text, title) => store
            .fingerprinter()
            .fingerprint(title.as_deref(), text.as_deref().unwrap_or(""))?,
    };
    let k = q.k.unwrap_or_else(|| store.layout().k_max());
    let mut matches = store.query(fp, k)?;
    if let Some(limit) = q.limit {
        matches.truncate(limit);
    }
    let matches: Vec<Value> = matches.iter().map(output::match_json).collect();
    Ok(json!({ "fp": fp.to_string(), "k": k, "matches": matches }))
}

fn parse_json(bytes: &[u8]) -> Result<Value, ApiError> {
    let text = reader::as_text(bytes)?;
    serde_json::from_str(text).map_err(|e| ApiError::bad_request(format!("invalid JSON: {e}")))
}

async fn query(State(app): State<Shared>, bytes: Result<Bytes, BytesRejection>) -> ApiResult {
    let bytes = body(bytes)?;
    blocking(&app, move |store| {
        let q = parse_query(parse_json(&bytes)?)?;
        Ok(axum::Json(run_query(store, &q)?))
    })
    .await
}

async fn query_batch(State(app): State<Shared>, bytes: Result<Bytes, BytesRejection>) -> ApiResult {
    let bytes = body(bytes)?;
    blocking(&app, move |store| {
        let Value::Array(items) = parse_json(&bytes)? else {
            return Err(ApiError::bad_request(
                "expected a JSON array of queries like [{\"text\": \"...\"}, {\"fp\": \"...\"}]",
            ));
        };
        let queries = items
            .into_iter()
            .enumerate()
            .map(|(i, v)| parse_query(v).map_err(|e| e.at(&format!("query {i}"))))
            .collect::<Result<Vec<_>, _>>()?;
        let results = queries
            .iter()
            .enumerate()
            .map(|(i, q)| run_query(store, q).map_err(|e| e.at(&format!("query {i}"))))
            .collect::<Result<Vec<_>, _>>()?;
        Ok(axum::Json(json!({ "results": results })))
    })
    .await
}

fn no_such_doc(id: &str) -> ApiError {
    ApiError::new(StatusCode::NOT_FOUND, format!("no document with id {id:?}"))
}

async fn get_doc(State(app): State<Shared>, UrlPath(id): UrlPath<String>) -> ApiResult {
    blocking(&app, move |store| match store.get(&id)? {
        Some(doc) => Ok(axum::Json(output::doc_json(&doc))),
        None => Err(no_such_doc(&id)),
    })
    .await
}

async fn delete_doc(State(app): State<Shared>, UrlPath(id): UrlPath<String>) -> ApiResult {
    blocking(&app, move |store| {
        if store.delete(&id)? {
            Ok(axum::Json(json!({ "id": id, "deleted": true })))
        } else {
            Err(no_such_doc(&id))
        }
    })
    .await
}

async fn stats(State(app): State<Shared>) -> ApiResult {
    blocking(&app, move |store| {
        let s = store.stats()?;
        let l = &s.layout;
        Ok(axum::Json(json!({
            "docs": s.docs, "format_version": s.format_version, "spec": s.spec.to_string(),
            "k_max": l.k_max(), "blocks": l.widths(), "tables": l.tables().len(),
            "disk_bytes": s.disk_bytes, "expected_candidates_per_query": s.expected_candidates,
        })))
    })
    .await
}

async fn health() -> axum::Json<Value> {
    axum::Json(json!({ "status": "ok" }))
}

async fn method_not_allowed() -> ApiError {
    ApiError::new(
        StatusCode::METHOD_NOT_ALLOWED,
        "method not allowed here: POST /insert, /check_and_insert, /query, /query/batch; GET/DELETE /docs/{id}; GET /stats, /health",
    )
}

async fn not_found() -> ApiError {
    ApiError::new(
        StatusCode::NOT_FOUND,
        "no such endpoint: see `simstore serve --help` (POST /insert, /check_and_insert, /query, /query/batch; GET/DELETE /docs/{id}; GET /stats, /health)",
    )
}
