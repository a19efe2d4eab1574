//! `GET /metrics`: what the server has done, in Prometheus' text exposition format
//! (version 0.0.4, the `prometheus` crate's encoder), for a scraper.
//!
//! - `simstore_http_requests_total{method, endpoint, status}`: requests answered, by route
//!   (the route's pattern, e.g. `/docs/{*id}`, so ids never become labels; `other` for a
//!   path no route matched) and status code;
//! - `simstore_http_request_duration_seconds{method, endpoint}`: a histogram of the time
//!   from routing to the answer's head, with fixed buckets ([`BUCKETS`]);
//! - `simstore_check_and_insert_total{outcome}`: `new`, `exact` and `near` outcomes of
//!   `/check_and_insert`;
//! - read at each scrape: `simstore_store_documents`, `simstore_store_disk_bytes`,
//!   `simstore_store_memory_bytes` (Redis), `simstore_build_info{version, spec, format}`,
//!   the standard `process_*` series (`process.rs`) and the
//!   engine's own gauges (RocksDB: `simstore_rocksdb_*`, per column family).
//!
//! A scrape is counted once it is answered, so it shows every request before it but not
//! itself. Counters start at 0 when the server starts.

use std::time::Instant;

use axum::extract::{MatchedPath, Request, State};
use axum::http::{Method, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use prometheus::core::Collector;
use prometheus::{
    Counter, Encoder, Gauge, GaugeVec, HistogramOpts, HistogramVec, IntCounterVec, Opts, Registry,
    TextEncoder,
};
use simstore::CheckOutcome;
use simstore::store::backend::EngineMetric;

use super::error::ApiError;
use super::process::Process;
use super::state::{self, Shared};

/// Upper bounds, in seconds, of the latency histogram's buckets (then `+Inf`).
pub(super) const BUCKETS: [f64; 14] = [
    0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 5.0,
];

/// What the server counts; shared by every request.
#[derive(Debug)]
pub(super) struct Metrics {
    requests: IntCounterVec,
    latency: HistogramVec,
    outcomes: IntCounterVec,
}

impl Default for Metrics {
    fn default() -> Self {
        let requests = Opts::new(
            "simstore_http_requests_total",
            "HTTP requests answered, by method, endpoint (the route's pattern) and status.",
        );
        let latency = HistogramOpts::new(
            "simstore_http_request_duration_seconds",
            "Time from routing a request to its answer's head, in seconds, by method and endpoint.",
        )
        .buckets(BUCKETS.to_vec());
        let outcomes = Opts::new(
            "simstore_check_and_insert_total",
            "Outcomes of /check_and_insert: new (stored), exact or near duplicate (not stored).",
        );
        let valid = "the metrics' names and labels are valid";
        Metrics {
            requests: IntCounterVec::new(requests, &["method", "endpoint", "status"]).expect(valid),
            latency: HistogramVec::new(latency, &["method", "endpoint"]).expect(valid),
            outcomes: IntCounterVec::new(outcomes, &["outcome"]).expect(valid),
        }
    }
}

impl Metrics {
    /// Counts one outcome of `/check_and_insert`.
    pub(super) fn check_outcome(&self, outcome: &CheckOutcome) {
        let name = match outcome {
            CheckOutcome::New { .. } => "new",
            CheckOutcome::ExactDuplicate { .. } => "exact",
            _ => "near",
        };
        self.outcomes.with_label_values(&[name]).inc();
    }

    /// Every series in the text format, the figures read now among them.
    fn render(&self, now: Vec<Box<dyn Collector>>) -> prometheus::Result<String> {
        let registry = Registry::new();
        registry.register(Box::new(self.requests.clone()))?;
        registry.register(Box::new(self.latency.clone()))?;
        registry.register(Box::new(self.outcomes.clone()))?;
        for collector in now {
            registry.register(collector)?;
        }
        let mut out = Vec::new();
        TextEncoder::new().encode(&registry.gather(), &mut out)?;
        Ok(String::from_utf8_lossy(&out).into_owned())
    }
}

/// A gauge of `value` (no labels).
fn gauge(name: &str, help: &str, value: f64) -> prometheus::Result<Box<dyn Collector>> {
    let g = Gauge::new(name, help)?;
    g.set(value);
    Ok(Box::new(g))
}

/// The figures a scrape reads now: the store's size, the build, the process and the
/// engine's gauges (each name's series in one family).
fn read_now(
    docs: u64,
    disk_bytes: u64,
    memory_bytes: Option<u64>,
    engine: &[EngineMetric],
) -> prometheus::Result<Vec<Box<dyn Collector>>> {
    let mut now = vec![
        gauge(
            "simstore_store_documents",
            "Documents in the store.",
            docs as f64,
        )?,
        gauge(
            "simstore_store_disk_bytes",
            "Total size of the store's files, in bytes (0 on Redis Cluster).",
            disk_bytes as f64,
        )?,
    ];
    if let Some(bytes) = memory_bytes {
        now.push(gauge(
            "simstore_store_memory_bytes",
            "Memory of the servers holding the store (Redis Cluster: used_memory of every master, summed).",
            bytes as f64,
        )?);
    }
    let build = GaugeVec::new(
        Opts::new(
            "simstore_build_info",
            "The running build: its version, fingerprint spec version and newest store format (always 1).",
        ),
        &["version", "spec", "format"],
    )?;
    let spec = format!("v{}", simstore::FingerprintSpec::current().version);
    let format = simstore::store::codec::FORMAT_VERSION.to_string();
    build
        .with_label_values(&[env!("CARGO_PKG_VERSION"), spec.as_str(), format.as_str()])
        .set(1.0);
    now.push(Box::new(build));
    if let Some(p) = Process::read() {
        let cpu = Counter::new(
            "process_cpu_seconds_total",
            "Total user and system CPU time spent in seconds.",
        )?;
        cpu.inc_by(p.cpu_seconds);
        now.extend([
            gauge(
                "process_resident_memory_bytes",
                "Resident memory size in bytes.",
                p.resident_bytes,
            )?,
            gauge(
                "process_open_fds",
                "Number of open file descriptors.",
                p.open_fds,
            )?,
            Box::new(cpu),
            gauge(
                "process_start_time_seconds",
                "Start time of the process since the Unix epoch in seconds.",
                p.start_time,
            )?,
        ]);
    }
    let mut families: Vec<(&str, GaugeVec)> = Vec::new();
    for m in engine {
        let i = match families.iter().position(|(name, _)| *name == m.name) {
            Some(i) => i,
            None => {
                let labels: Vec<&str> = m.labels.iter().map(|(k, _)| *k).collect();
                families.push((m.name, GaugeVec::new(Opts::new(m.name, m.help), &labels)?));
                families.len() - 1
            }
        };
        let values: Vec<&str> = m.labels.iter().map(|(_, v)| v.as_str()).collect();
        families[i]
            .1
            .get_metric_with_label_values(&values)?
            .set(m.value);
    }
    now.extend(
        families
            .into_iter()
            .map(|(_, f)| Box::new(f) as Box<dyn Collector>),
    );
    Ok(now)
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
    let method = method_label(req.method());
    let endpoint = req
        .extensions()
        .get::<MatchedPath>()
        .map_or("other", MatchedPath::as_str)
        .to_owned();
    let start = Instant::now();
    let response = next.run(req).await;
    let m = &app.metrics;
    let status = response.status().as_u16().to_string();
    m.requests
        .with_label_values(&[method, endpoint.as_str(), status.as_str()])
        .inc();
    m.latency
        .with_label_values(&[method, endpoint.as_str()])
        .observe(start.elapsed().as_secs_f64());
    response
}

/// `GET /metrics`.
pub(super) async fn metrics(State(app): State<Shared>) -> Result<Response, ApiError> {
    let text = state::read(&app, |app| {
        let stats = app.store.stats()?;
        let engine = app.store.backend().usage().metrics;
        let now = read_now(stats.docs, stats.disk_bytes, stats.memory_bytes, &engine);
        let text = now.and_then(|now| app.metrics.render(now));
        text.map_err(|e| {
            let internal = axum::http::StatusCode::INTERNAL_SERVER_ERROR;
            ApiError::new(internal, format!("cannot render /metrics: {e}"))
        })
    })
    .await?;
    let kind = "text/plain; version=0.0.4; charset=utf-8";
    Ok(([(header::CONTENT_TYPE, kind)], text).into_response())
}
