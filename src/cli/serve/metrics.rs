//! `GET /metrics`: what the server has done, in Prometheus' text exposition format
//! (version 0.0.4), for a scraper.
//!
//! - `simstore_http_requests_total{method, endpoint, status}`: requests answered, by route
//!   (the route's pattern, e.g. `/docs/{*id}`, so ids never become labels; `other` for a
//!   path no route matched) and status code;
//! - `simstore_http_request_duration_seconds{method, endpoint}`: a histogram of the time
//!   from routing to the answer's head, with fixed buckets ([`BUCKETS`]);
//! - `simstore_check_and_insert_total{outcome}`: `new`, `exact` and `near` outcomes of
//!   `/check_and_insert`;
//! - `simstore_store_documents`, `simstore_store_disk_bytes`: the store's size, read at
//!   each scrape.
//! - and the gauges of `gauges.rs`: `simstore_build_info{version, spec, format}`, the
//!   process's `process_*` series, and the engine's (RocksDB: `simstore_rocksdb_*`).
//!
//! A scrape is counted once it is answered, so it shows every request before it but not
//! itself. Counters start at 0 when the server starts.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use axum::extract::{MatchedPath, Request, State};
use axum::http::{Method, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use simstore::CheckOutcome;

use super::error::ApiError;
use super::state::{self, Shared};

/// Upper bounds, in seconds, of the latency histogram's buckets (then `+Inf`).
pub(super) const BUCKETS: [f64; 14] = [
    0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 5.0,
];

/// What the server counts; shared by every request.
#[derive(Debug, Default)]
pub(super) struct Metrics {
    routes: Mutex<BTreeMap<Route, PerRoute>>,
    /// Outcomes of `/check_and_insert`: new, exact, near.
    outcomes: [AtomicU64; 3],
}

/// A route's labels: the method (one of the standard ones, else `other`) and the pattern.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
struct Route {
    method: &'static str,
    endpoint: String,
}

/// What one route answered: counts by status and the latency histogram.
#[derive(Debug, Default)]
struct PerRoute {
    statuses: BTreeMap<u16, u64>,
    /// Requests per bucket (not cumulative); the last one is `+Inf`.
    buckets: [u64; BUCKETS.len() + 1],
    seconds: f64,
}

impl Metrics {
    /// Counts one answered request.
    fn observe(&self, route: Route, status: u16, took: Duration) {
        let secs = took.as_secs_f64();
        let bucket = BUCKETS
            .iter()
            .position(|&b| secs <= b)
            .unwrap_or(BUCKETS.len());
        let mut routes = self.routes.lock().unwrap_or_else(|e| e.into_inner());
        let r = routes.entry(route).or_default();
        *r.statuses.entry(status).or_default() += 1;
        r.buckets[bucket] += 1;
        r.seconds += secs;
    }

    /// Counts one outcome of `/check_and_insert`.
    pub(super) fn check_outcome(&self, outcome: &CheckOutcome) {
        let i = match outcome {
            CheckOutcome::New { .. } => 0,
            CheckOutcome::ExactDuplicate { .. } => 1,
            _ => 2,
        };
        self.outcomes[i].fetch_add(1, Ordering::Relaxed);
    }

    /// Every metric in the text format; `docs` and `disk_bytes` are the store's size now.
    fn render(&self, docs: u64, disk_bytes: u64) -> String {
        let mut out = String::new();
        let routes = self.routes.lock().unwrap_or_else(|e| e.into_inner());
        render_requests(&mut out, &routes);
        render_latency(&mut out, &routes);
        drop(routes);
        describe(
            &mut out,
            "simstore_check_and_insert_total",
            "counter",
            "Outcomes of /check_and_insert: new (stored), exact or near duplicate (not stored).",
        );
        for (name, n) in ["new", "exact", "near"].iter().zip(&self.outcomes) {
            let n = n.load(Ordering::Relaxed);
            let _ = writeln!(
                out,
                "simstore_check_and_insert_total{{outcome=\"{name}\"}} {n}"
            );
        }
        describe(
            &mut out,
            "simstore_store_documents",
            "gauge",
            "Documents in the store.",
        );
        let _ = writeln!(out, "simstore_store_documents {docs}");
        describe(
            &mut out,
            "simstore_store_disk_bytes",
            "gauge",
            "Total size of the store's files, in bytes (0 on Redis Cluster).",
        );
        let _ = writeln!(out, "simstore_store_disk_bytes {disk_bytes}");
        out
    }
}

/// `# HELP` and `# TYPE` lines of a metric.
fn describe(out: &mut String, name: &str, kind: &str, help: &str) {
    let _ = writeln!(out, "# HELP {name} {help}\n# TYPE {name} {kind}");
}

/// The labels of a route, without braces: `method="POST",endpoint="/insert"`.
fn labels(r: &Route) -> String {
    format!(
        "method=\"{}\",endpoint=\"{}\"",
        r.method,
        escape(&r.endpoint)
    )
}

/// A label value escaped as the text format requires (backslash, quote, newline).
fn escape(value: &str) -> String {
    value
        .replace('\\', "\\\\")
        .replace('"', "\\\"")
        .replace('\n', "\\n")
}

fn render_requests(out: &mut String, routes: &BTreeMap<Route, PerRoute>) {
    describe(
        out,
        "simstore_http_requests_total",
        "counter",
        "HTTP requests answered, by method, endpoint (the route's pattern) and status.",
    );
    for (route, r) in routes {
        for (status, n) in &r.statuses {
            let l = labels(route);
            let _ = writeln!(
                out,
                "simstore_http_requests_total{{{l},status=\"{status}\"}} {n}"
            );
        }
    }
}

fn render_latency(out: &mut String, routes: &BTreeMap<Route, PerRoute>) {
    let name = "simstore_http_request_duration_seconds";
    describe(
        out,
        name,
        "histogram",
        "Time from routing a request to its answer's head, in seconds, by method and endpoint.",
    );
    for (route, r) in routes {
        let l = labels(route);
        let mut cumulative = 0;
        for (i, n) in r.buckets.iter().enumerate() {
            cumulative += n;
            let le = BUCKETS.get(i).map_or("+Inf".to_owned(), f64::to_string);
            let _ = writeln!(out, "{name}_bucket{{{l},le=\"{le}\"}} {cumulative}");
        }
        let _ = writeln!(out, "{name}_sum{{{l}}} {}", r.seconds);
        let _ = writeln!(out, "{name}_count{{{l}}} {cumulative}");
    }
}

/// The method as a label: a standard one, else `other` (a client cannot add labels).
fn method_label(m: &Method) -> &'static str {
    const KNOWN: [Method; 7] = [
        Method::GET,
        Method::POST,
        Method::DELETE,
        Method::PUT,
        Method::HEAD,
        Method::PATCH,
        Method::OPTIONS,
    ];
    KNOWN
        .iter()
        .find(|k| *k == m)
        .map_or("other", Method::as_str)
}

/// Middleware (outermost): times and counts every request, refused ones included.
pub(super) async fn record(State(app): State<Shared>, req: Request, next: Next) -> Response {
    let route = Route {
        method: method_label(req.method()),
        endpoint: req
            .extensions()
            .get::<MatchedPath>()
            .map_or("other", MatchedPath::as_str)
            .to_owned(),
    };
    let start = Instant::now();
    let response = next.run(req).await;
    app.metrics
        .observe(route, response.status().as_u16(), start.elapsed());
    response
}

/// `GET /metrics`.
pub(super) async fn metrics(State(app): State<Shared>) -> Result<Response, ApiError> {
    let text = state::read(&app, |app| {
        let stats = app.store.stats()?;
        let mut text = app.metrics.render(stats.docs, stats.disk_bytes);
        let engine = app.store.backend().usage().metrics;
        super::gauges::render(&mut text, &engine, stats.memory_bytes);
        Ok(text)
    })
    .await?;
    let kind = "text/plain; version=0.0.4; charset=utf-8";
    Ok(([(header::CONTENT_TYPE, kind)], text).into_response())
}
