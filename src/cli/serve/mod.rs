//! `simstore serve`: an HTTP JSON API over one store, for crawlers in other processes and
//! languages.
//!
//! Endpoints (the routes in `router`; bodies and answers: docs/http.md): JSON in and
//! out; errors are `{"error": "..."}` with a status code; a body field not listed is
//! refused with 400 naming it.
//!
//! A query or check without `"k"` and `"verify"` applies the store's quality mode
//! (`simstore init --quality`); with `"k"` alone, "distance ≤ k"; with `"verify"`, the
//! two-stage test of `query --verify` (see `rule.rs`).
//!
//! Files: `access.rs` who may talk to the server; `conn.rs` connections (bound, header
//! timeout, bounded shutdown); `fds.rs` the descriptor budget; `body.rs` the body timeout;
//! `state.rs` shared state and how store calls run; `handlers.rs` and `query.rs` the
//! endpoints; `metrics.rs` what `/metrics` counts; `error.rs` error answers.
//!
//! Access, durability (a 200 to a write means its log was fsynced, unless `--no-sync`),
//! bounded resources, store calls on tokio's blocking pool (at most `--workers`) and the
//! SIGINT/SIGTERM shutdown: docs/design.md §10.

use std::net::{IpAddr, SocketAddr};
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Duration;

use anyhow::{Context, Result};
use axum::Router;
use axum::extract::DefaultBodyLimit;
use axum::middleware;
use axum::routing::{get, post};
use simstore::Store;

use self::access::Access;
use self::state::{App, Shared};
use super::Code;

mod access;
mod body;
mod conn;
mod delete;
mod error;
mod fds;
mod handlers;
mod metrics;
mod process;
mod query;
mod retention;
mod state;

/// Arguments of `simstore serve`.
#[derive(Debug, clap::Args)]
#[command(
    after_help = "Endpoints (JSON in and out; errors {\"error\": ...} with 400/404/408/413/422/500/503):\n  \
                  POST /insert {\"id\", \"title\"?, \"text\"?, \"html\"?, \"url\"?, \"fp\"?} (\"html\": a page, read as `import` reads one)\n  \
                  POST /check_and_insert (the same, and \"k\"?, \"verify\"?) -> {\"status\": \"new\"|\"exact_duplicate\"|\"near_duplicate\", \"of\"?, \"distance\"?}\n  \
                  POST /query {\"text\"?|\"title\"?|\"html\"?|\"fp\"?, \"k\"?, \"verify\"?, \"limit\"?} -> {\"matches\": [...]}\n  \
                  POST /query/batch [query, ...] -> {\"results\": [...]}\n  \
                  Without \"k\" and \"verify\", the store's quality mode decides what is a near duplicate\n  \
                  (see `simstore init --quality`); \"k\" alone: within k; \"verify\": as `query --verify`.\n  \
                  GET /docs/{id}, DELETE /docs/{id}, GET /stats, GET /health\n  \
                  POST /delete {\"ids\": [...]} -> {\"deleted\": n, \"missing\": [...]}: at most 10,000 ids,\n  \
                  deleted in one atomic change set\n  \
                  POST /expire {\"older_than\": \"90d\"|\"before\": TIME, \"by\"?: \"stored\"|\"seen\", \"dry_run\"?}\n  \
                  GET /retention, POST /retention {\"retain\"?: \"90d\"|null, \"track_seen\"?, \"by\"?}: the policy,\n  \
                  applied by the server itself every minute while it runs\n  \
                  POST /backup {\"dest\": DIR, \"keep\"?: N} -> {\"id\", \"time\", \"bytes\", \"files\"}: an online backup\n  \
                  POST /compact -> {\"disk_bytes_before\", \"disk_bytes\"}: the space deletes and expiries left, back\n  \
                  GET /metrics (Prometheus text: requests by endpoint and status, latency\n  \
                  histograms, check_and_insert outcomes, store size, build, process and\n  \
                  RocksDB figures)\n\
                  A body field not listed here is refused (400, naming it), never ignored.\n\
                  Prints the address it listens on (http://IP:PORT) as the first line of stdout.\n\
                  Writes are fsynced before they are answered (unless --no-sync); on Redis Cluster,\n\
                  acknowledged by the replicas ?replicas-ack asks for (the start line says). A write\n\
                  answered 503 with \"outcome\": \"unknown\" may or may not be stored; the server then\n\
                  takes no more writes and /health answers 503 until it is restarted (on Redis\n\
                  Cluster it goes on: the next write may succeed once the cluster answers).\n\
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
    /// Connections open at once; further ones wait until one closes. Default: what leaves
    /// half the descriptor limit (ulimit -n, raised to the hard limit) to the store, at
    /// most 4096. More than that is refused at start.
    #[arg(long, value_parser = clap::value_parser!(u32).range(1..))]
    max_connections: Option<u32>,
    /// Seconds a connection may take to send a request's headers, counted from when it
    /// opened or got its previous answer; then it is closed (so idle keep-alive connections
    /// are closed after this long too).
    #[arg(long, default_value_t = 30, value_name = "SECS", value_parser = clap::value_parser!(u64).range(1..))]
    header_timeout: u64,
    /// Seconds a request's body may take to arrive, from the end of its headers; a slower
    /// one gets 408 and its connection is closed.
    #[arg(long, default_value_t = 30, value_name = "SECS", value_parser = clap::value_parser!(u64).range(1..))]
    body_timeout: u64,
    /// After SIGINT/SIGTERM, seconds to let requests under way finish before the
    /// connections left are closed and the store is flushed.
    #[arg(long, default_value_t = 10, value_name = "SECS")]
    shutdown_timeout: u64,
    /// The most matches one request answers (over all the queries of a /query/batch);
    /// a request that would answer more gets 422, to be asked again with "limit" or split.
    #[arg(long, default_value_t = 10_000, value_parser = clap::value_parser!(u64).range(1..))]
    max_matches: u64,
    /// The most bytes one answer's body may have (counted as it is built, match by match);
    /// a request whose answer would be larger gets 422 and is not answered in part.
    #[arg(long, default_value_t = 32 << 20, value_name = "BYTES")]
    max_answer_bytes: usize,
    /// A file holding a secret token: every request must then carry
    /// `Authorization: Bearer TOKEN`. Required to listen on an address other than loopback.
    #[arg(long, env = "SIMSTORE_TOKEN_FILE", value_name = "FILE")]
    token_file: Option<std::path::PathBuf>,
    /// Do not fsync before acknowledging a write: acknowledged writes then survive a crash
    /// of the server (kill -9) but not of the OS or a power loss. Faster.
    #[arg(long)]
    no_sync: bool,
    /// Probe each query's tables on N threads at once (0: one after another) [default:
    /// automatic, see `query --probe-threads`].
    #[arg(long, value_name = "N", value_parser = crate::cli::probe_threads_arg)]
    probe_threads: Option<usize>,
}

/// Runs the server until SIGINT or SIGTERM; see [`Args`].
pub fn run(db: &Path, args: Args) -> Result<Code> {
    // Large request bodies, once freed, go back to the OS (not kept for the process's life).
    crate::purge_freed_memory_after(0);
    let access = Arc::new(Access::new(args.addr, args.token_file.as_deref())?);
    let limit = fds::raise_limit();
    let builder = Store::builder(db).sync_writes(!args.no_sync);
    let store = super::with_probe_threads(builder, args.probe_threads)
        .open()
        .with_context(|| format!("cannot open or create {}", db.display()))?;
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .context("cannot start the async runtime")?;
    let budget = fds::budget(limit, fds::open_descriptors(), args.max_connections)?;
    let max_matches = usize::try_from(args.max_matches).unwrap_or(usize::MAX);
    let caps = (max_matches, args.max_answer_bytes);
    let app = Arc::new(App::new(store, args.workers as usize, caps));
    let stop = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let worker = retention::start_worker(Arc::clone(&app), Arc::clone(&stop));
    let served = runtime.block_on(serve(Arc::clone(&app), access, &args, budget));
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    let _ = worker.join();
    served?;
    // Waits for the store calls under way (on blocking threads) to return.
    drop(runtime);
    app.store
        .flush()
        .with_context(|| format!("cannot flush {}", db.display()))?;
    eprintln!(
        "simstore serve: shut down cleanly; {} holds {}",
        db.display(),
        crate::cli::output::count(app.store.len(), "document")
    );
    Ok(0)
}

fn router(app: Shared, access: Arc<Access>, args: &Args) -> Router {
    use self::handlers::{
        check_and_insert, delete_doc, get_doc, health, insert, method_not_allowed, not_found, stats,
    };
    use self::query::{query, query_batch};
    Router::new()
        .route("/insert", post(insert))
        .route("/check_and_insert", post(check_and_insert))
        .route("/query", post(query))
        .route("/query/batch", post(query_batch))
        .route("/docs/{*id}", get(get_doc).delete(delete_doc))
        .route("/stats", get(stats))
        .route("/health", get(health))
        .route("/metrics", get(metrics::metrics))
        .route("/delete", post(delete::delete_many))
        .route("/expire", post(retention::expire))
        .route("/backup", post(retention::backup))
        .route("/compact", post(retention::compact))
        .route(
            "/retention",
            get(retention::get_retention).post(retention::set_retention),
        )
        .fallback(not_found)
        .method_not_allowed_fallback(method_not_allowed)
        .layer(middleware::from_fn_with_state(
            body::BodyLimits {
                timeout: Duration::from_secs(args.body_timeout),
                max_bytes: args.max_body_bytes,
            },
            body::read_within,
        ))
        .layer(DefaultBodyLimit::max(args.max_body_bytes))
        .layer(middleware::from_fn_with_state(
            Arc::clone(&app),
            state::refuse_when_shutting_down,
        ))
        .layer(middleware::from_fn_with_state(access, access::check))
        // Outermost: every request is counted, refused ones too.
        .layer(middleware::from_fn_with_state(
            Arc::clone(&app),
            metrics::record,
        ))
        .with_state(app)
}

async fn serve(app: Shared, access: Arc<Access>, args: &Args, budget: fds::Budget) -> Result<()> {
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
    announce(&app, local, args, budget);
    let limits = conn::Limits {
        connections: budget.connections,
        header_timeout: Duration::from_secs(args.header_timeout),
        shutdown_timeout: Duration::from_secs(args.shutdown_timeout),
    };
    let left = conn::serve(listener, router(app, access, args), limits, signals).await;
    if left > 0 {
        eprintln!(
            "simstore serve: {left} connections still busy after --shutdown-timeout {} s: closed",
            args.shutdown_timeout
        );
    }
    Ok(())
}

/// The start line on stderr: the store, durability and the descriptor budget.
fn announce(app: &App, local: SocketAddr, args: &Args, budget: fds::Budget) {
    let limit = budget.limit.map_or("unlimited".into(), |l| l.to_string());
    eprintln!(
        "simstore serve: listening on http://{local} (store {}, {}; writes {}; up to \
         {} connections: descriptor limit {limit}, {} open at start)",
        app.store.path().display(),
        crate::cli::output::count(app.store.len(), "document"),
        writes_durability(&app.store, args.no_sync),
        budget.connections,
        budget.in_use,
    );
}

/// What an acknowledged write has waited for, in the start line: the fsync of the local
/// store's log, or on a cluster the replicas its `WAIT` counts (the nodes' appendfsync
/// decides when it reaches their disks; --no-sync changes nothing there).
fn writes_durability(store: &Store, no_sync: bool) -> String {
    let on_disk = "on disk as the nodes' appendfsync says";
    match store.backend().properties().replicas_ack {
        Some(0) => format!("acknowledged by the masters alone (no replica waited for), {on_disk}"),
        Some(1) => format!("acknowledged by 1 replica of each master (WAIT), {on_disk}"),
        Some(n) => format!("acknowledged by {n} replicas of each master (WAIT), {on_disk}"),
        None if no_sync => "not fsynced: --no-sync".into(),
        None => "fsynced before they are acknowledged".into(),
    }
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
