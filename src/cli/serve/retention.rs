//! The lifecycle endpoints: `POST /expire`, `GET`/`POST /retention`, `POST /backup` and
//! `POST /compact`;
//! and the thread that applies the store's retention policy while the server runs.

use std::sync::Arc;
use std::sync::atomic::AtomicBool;
use std::time::Duration;

use axum::body::Bytes;
use axum::extract::State;
use axum::extract::rejection::BytesRejection;
use serde::Deserialize;
use serde_json::json;
use simstore::ExpireOptions;
use simstore::types::{Duration as Age, TimeField, parse_time};

use super::error::{ApiError, ApiResult};
use super::handlers::body;
use super::state::{self, Shared};
use crate::cli::retention::policy_json;
use simstore::format_time;

/// How often the policy is applied, and the pause between two batches of an expiry.
const EVERY: Duration = Duration::from_secs(60);
const PAUSE: Duration = Duration::from_millis(20);

/// `POST /expire`'s body.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct ExpireBody {
    /// "90d", "12h", ... (or seconds).
    older_than: Option<String>,
    /// RFC 3339, a date, or Unix seconds (a string or a number).
    before: Option<serde_json::Value>,
    /// "stored" or "seen".
    by: Option<String>,
    #[serde(default)]
    dry_run: bool,
}

/// `POST /retention`'s body: the settings to change.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct PolicyBody {
    /// "90d", or null to keep everything.
    #[serde(default, deserialize_with = "present")]
    retain: Option<Option<String>>,
    track_seen: Option<bool>,
    by: Option<String>,
}

/// A field given as null is `Some(None)`, an absent one `None`.
fn present<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<Option<String>>, D::Error> {
    Option::<String>::deserialize(d).map(Some)
}

fn bad(message: impl Into<String>) -> ApiError {
    ApiError::bad_request(message.into())
}

fn parse<T: for<'de> Deserialize<'de>>(bytes: &[u8]) -> Result<T, ApiError> {
    serde_json::from_slice(bytes).map_err(|e| bad(format!("invalid body: {e}")))
}

/// The options of an expiry request.
fn expire_options(b: &ExpireBody, default_by: TimeField) -> Result<ExpireOptions, ApiError> {
    let by = match &b.by {
        Some(name) => name.parse::<TimeField>().map_err(bad)?,
        None => default_by,
    };
    let before = match (&b.older_than, &b.before) {
        (Some(age), None) => {
            ExpireOptions::older_than(age.parse::<Age>().map_err(bad)?.0, by).before
        }
        (None, Some(serde_json::Value::Number(n))) => n
            .as_u64()
            .ok_or_else(|| bad("\"before\": not Unix seconds"))?,
        (None, Some(serde_json::Value::String(s))) => parse_time(s).map_err(bad)?,
        _ => {
            return Err(bad(
                "give exactly one of \"older_than\" (e.g. \"90d\") and \"before\" (e.g. \"2026-01-01T00:00:00Z\")",
            ));
        }
    };
    Ok(ExpireOptions {
        dry_run: b.dry_run,
        ..ExpireOptions::before(before, by)
    })
}

pub(super) async fn expire(
    State(app): State<Shared>,
    bytes: Result<Bytes, BytesRejection>,
) -> ApiResult {
    let bytes = body(bytes)?;
    state::write(&app, move |app| {
        let b: ExpireBody = parse(&bytes)?;
        let opts = expire_options(&b, app.store.retention().by)?;
        let r = app
            .store
            .expire(&opts, |_| {})
            .map_err(|e| app.write_failed(e))?;
        Ok(axum::Json(json!({
            "expired": r.expired, "scanned": r.scanned, "batches": r.batches,
            "full_scan": r.full_scan, "before": format_time(opts.before), "by": opts.by.name(),
            "dry_run": opts.dry_run, "docs": app.store.len(),
        })))
    })
    .await
}

pub(super) async fn get_retention(State(app): State<Shared>) -> ApiResult {
    state::read(&app, move |app| {
        Ok(axum::Json(policy_json(&app.store.retention())))
    })
    .await
}

pub(super) async fn set_retention(
    State(app): State<Shared>,
    bytes: Result<Bytes, BytesRejection>,
) -> ApiResult {
    let bytes = body(bytes)?;
    state::write(&app, move |app| {
        let b: PolicyBody = parse(&bytes)?;
        let mut r = app.store.retention();
        if let Some(retain) = &b.retain {
            r.retain_secs = match retain {
                Some(age) => Some(age.parse::<Age>().map_err(bad)?.0),
                None => None,
            };
        }
        if let Some(track) = b.track_seen {
            r.track_seen = track;
        }
        if let Some(by) = &b.by {
            r.by = by.parse::<TimeField>().map_err(bad)?;
        }
        app.store
            .set_retention(r)
            .map_err(|e| app.write_failed(e))?;
        Ok(axum::Json(policy_json(&r)))
    })
    .await
}

/// `POST /backup`'s body.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct BackupBody {
    /// The backup directory, on the server's machine.
    dest: std::path::PathBuf,
    keep: Option<usize>,
}

pub(super) async fn backup(
    State(app): State<Shared>,
    bytes: Result<Bytes, BytesRejection>,
) -> ApiResult {
    let bytes = body(bytes)?;
    state::write(&app, move |app| {
        let b: BackupBody = parse(&bytes)?;
        let info = app.store.backup(&b.dest, b.keep)?;
        Ok(axum::Json(crate::cli::backup::info_json(&info)))
    })
    .await
}

/// `/compact`'s body: none, or an object without fields (any field is refused, as on
/// every endpoint, rather than ignored).
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct CompactBody {}

/// `POST /compact` (no body, or `{}`): gives back the space deletes, replacements and
/// expiries left; answers the disk bytes before and after.
pub(super) async fn compact(
    State(app): State<Shared>,
    bytes: Result<Bytes, BytesRejection>,
) -> ApiResult {
    let bytes = body(bytes)?;
    if !bytes.trim_ascii().is_empty() {
        let CompactBody {} = parse(&bytes)?;
    }
    state::write(&app, move |app| {
        let before = app.store.stats()?.disk_bytes;
        app.store.compact().map_err(|e| app.write_failed(e))?;
        let after = app.store.stats()?.disk_bytes;
        Ok(axum::Json(
            json!({ "disk_bytes_before": before, "disk_bytes": after }),
        ))
    })
    .await
}

/// Starts the thread that applies the retention policy until `stop` is set; an expiry's
/// failure is said on stderr and the thread stops (writes then fail the same way).
pub(super) fn start_worker(app: Shared, stop: Arc<AtomicBool>) -> std::thread::JoinHandle<()> {
    std::thread::spawn(move || {
        let said = |r: &simstore::ExpireReport| {
            eprintln!("simstore serve: retention expired {} documents", r.expired);
        };
        if let Err(e) = app.store.apply_retention(&stop, EVERY, PAUSE, said) {
            eprintln!(
                "simstore serve: the retention policy's expiry failed: {e}; it stops until a restart"
            );
        }
    })
}
