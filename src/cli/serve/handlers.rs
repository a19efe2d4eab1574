//! The endpoints that write, read one document, or report on the server; queries are in
//! `query.rs`.

use axum::body::Bytes;
use axum::extract::rejection::{BytesRejection, PathRejection};
use axum::extract::{Path as UrlPath, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use serde::Deserialize;
use serde::de::IgnoredAny;
use serde_json::json;
use simstore::input::reader;
use simstore::{CheckOutcome, InsertOutcome, MatchRule, Rule};

use super::error::{ApiError, ApiResult};
use super::state::{self, Shared};
use crate::cli::{output, rule};

/// A request's body, a UTF-8 byte-order mark (as some Windows tools write) left out, as
/// `import` leaves it out of a file.
pub(super) fn body(bytes: Result<Bytes, BytesRejection>) -> Result<Bytes, ApiError> {
    let bytes = bytes.map_err(ApiError::from)?;
    Ok(match bytes.starts_with(b"\xEF\xBB\xBF") {
        true => bytes.slice(3..),
        false => bytes,
    })
}

pub(super) async fn insert(
    State(app): State<Shared>,
    bytes: Result<Bytes, BytesRejection>,
) -> ApiResult {
    let bytes = body(bytes)?;
    state::write(&app, move |app| {
        let store = &app.store;
        let (record, others) = reader::parse_jsonl_with_others(bytes.trim_ascii())?;
        if others {
            fields(&bytes, false)?;
        }
        let entry = record.into_entry(store.fingerprinter())?;
        let (id, fp) = (entry.id.clone(), entry.fp);
        let outcome = store
            .insert_fingerprint(&entry.id, entry.fp, entry.meta)
            .map_err(|e| app.write_failed(e))?;
        let status = match outcome {
            InsertOutcome::Inserted => "inserted",
            InsertOutcome::Replaced => "replaced",
        };
        Ok(axum::Json(
            json!({ "id": id, "fp": fp.to_string(), "status": status }),
        ))
    })
    .await
}

/// /insert's body: the fields of a document, checked here by name only (their values by
/// [`reader::parse_jsonl`]). Any other field is refused (400 naming it and listing these),
/// never silently ignored.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
#[allow(
    dead_code,
    reason = "the document's fields are only checked by name here"
)]
struct InsertFields {
    id: Option<IgnoredAny>,
    title: Option<IgnoredAny>,
    text: Option<IgnoredAny>,
    html: Option<IgnoredAny>,
    url: Option<IgnoredAny>,
    fp: Option<IgnoredAny>,
}

/// /check_and_insert's body: the document's fields as [`InsertFields`], and `k` and
/// `verify` read as `K` and `V`. Any other field is refused (400 naming it and listing
/// these).
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
#[allow(
    dead_code,
    reason = "the document's fields are only checked by name here"
)]
struct Body<K, V> {
    id: Option<IgnoredAny>,
    title: Option<IgnoredAny>,
    text: Option<IgnoredAny>,
    html: Option<IgnoredAny>,
    url: Option<IgnoredAny>,
    fp: Option<IgnoredAny>,
    #[serde(default)]
    k: Option<K>,
    #[serde(default)]
    verify: Option<V>,
}

/// What a check-and-insert request counts as a near duplicate (the other fields are the
/// document's): neither field, the store's quality mode; see [`simstore::Store::rule`].
/// Read in the same pass that refuses unknown fields.
type CheckRule = Body<u32, f64>;

impl Body<u32, f64> {
    /// The rule of the request's body `bytes`, or 400 naming the field (an unknown field,
    /// or a `k` or `verify` of the wrong type or range).
    fn of(store: &simstore::Store, bytes: &[u8]) -> Result<MatchRule, ApiError> {
        let r = match serde_json::from_slice::<CheckRule>(bytes) {
            Ok(r) => r,
            // Which of the two is wrong, in the words of a read of each alone.
            Err(e) => {
                fields(bytes, true)?;
                return Err(ApiError::bad_request(format!(
                    "invalid \"k\" or \"verify\": {e}"
                )));
            }
        };
        if let Some(t) = r.verify
            && !rule::is_similarity(t)
        {
            return Err(ApiError::bad_request(format!(
                "\"verify\": {t} is not a similarity between 0 and 1"
            )));
        }
        Ok(store.rule(Rule::options(r.k, r.verify)))
    }
}

/// Checks the field names of `bytes` (a JSON object: it parsed as a record): 400 naming a
/// field that is not a document's (nor `k` or `verify`, where `with_rule`), listing the
/// fields this endpoint takes.
fn fields(bytes: &[u8], with_rule: bool) -> Result<(), ApiError> {
    let checked = match with_rule {
        true => serde_json::from_slice::<Body<IgnoredAny, IgnoredAny>>(bytes).map(drop),
        false => serde_json::from_slice::<InsertFields>(bytes).map(drop),
    };
    checked.map_err(|e| ApiError::bad_request(format!("invalid document: {e}")))
}

pub(super) async fn check_and_insert(
    State(app): State<Shared>,
    bytes: Result<Bytes, BytesRejection>,
) -> ApiResult {
    let bytes = body(bytes)?;
    state::write(&app, move |app| {
        let store = &app.store;
        let (record, others) = reader::parse_jsonl_with_others(bytes.trim_ascii())?;
        // The record parsed, so the body is a JSON object; without fields besides the
        // document's, there is no `k` or `verify` to read and none to refuse.
        let rule = match others {
            true => CheckRule::of(store, &bytes)?,
            false => store.rule(Rule::Mode),
        };
        let entry = record.into_entry(store.fingerprinter())?;
        let id = entry.id.clone();
        let outcome = store
            .check_and_insert(&entry, rule)
            .map_err(|e| app.write_failed(e))?;
        app.metrics.check_outcome(&outcome);
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

/// The id of `/docs/{id}`: a rejection (the id not UTF-8 once decoded) answers in JSON.
type DocId = UrlPath<String>;

fn no_such_doc(id: &str) -> ApiError {
    ApiError::new(StatusCode::NOT_FOUND, format!("no document with id {id:?}"))
}

pub(super) async fn get_doc(
    State(app): State<Shared>,
    id: Result<DocId, PathRejection>,
) -> ApiResult {
    let UrlPath(id) = id?;
    state::read(&app, move |app| match app.store.get(&id)? {
        Some(doc) => Ok(axum::Json(output::doc_json(&doc))),
        None => Err(no_such_doc(&id)),
    })
    .await
}

pub(super) async fn delete_doc(
    State(app): State<Shared>,
    id: Result<DocId, PathRejection>,
) -> ApiResult {
    let UrlPath(id) = id?;
    state::write(&app, move |app| {
        if app.store.delete(&id).map_err(|e| app.write_failed(e))? {
            Ok(axum::Json(json!({ "id": id, "deleted": true })))
        } else {
            Err(no_such_doc(&id))
        }
    })
    .await
}

pub(super) async fn stats(State(app): State<Shared>) -> ApiResult {
    state::read(&app, move |app| {
        let s = app.store.stats()?;
        let l = &s.layout;
        Ok(axum::Json(json!({
            "docs": s.docs, "format_version": s.format_version, "spec": s.spec.to_string(),
            "k_max": l.k_max(), "blocks": l.widths(), "tables": l.tables().len(),
            "band_tables": s.band_tables, "disk_bytes": s.disk_bytes, "expected_candidates_per_query": s.expected_candidates,
            "quality": app.store.quality().name(),
            "quality_rule": rule::rule_json(&app.store.rule(Rule::Mode)),
        })))
    })
    .await
}

/// `{"status": "ok"}`, or 503 with the reason once the server stopped taking writes.
pub(super) async fn health(State(app): State<Shared>) -> Response {
    match app.writes_stopped() {
        None => axum::Json(json!({ "status": "ok" })).into_response(),
        Some(reason) => (
            StatusCode::SERVICE_UNAVAILABLE,
            axum::Json(json!({
                "status": "not taking writes",
                "error": format!("a write failed in the store ({reason}); reads still work; fix the cause and restart the server"),
            })),
        )
            .into_response(),
    }
}

pub(super) async fn method_not_allowed() -> ApiError {
    ApiError::new(
        StatusCode::METHOD_NOT_ALLOWED,
        "method not allowed here: POST /insert, /check_and_insert, /query, /query/batch, /delete, /expire, /backup, /compact; GET/DELETE /docs/{id}; GET/POST /retention; GET /stats, /health, /metrics",
    )
}

pub(super) async fn not_found() -> ApiError {
    ApiError::new(
        StatusCode::NOT_FOUND,
        "no such endpoint: see `simstore serve --help` (POST /insert, /check_and_insert, /query, /query/batch, /delete, /expire, /backup, /compact; GET/DELETE /docs/{id}; GET/POST /retention; GET /stats, /health, /metrics)",
    )
}
