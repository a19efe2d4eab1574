//! `POST /query` and `POST /query/batch`, and the caps on what one request answers: its
//! matches (`--max-matches`) and its answer's bytes (`--max-answer-bytes`, counted match by
//! match as the answer is built, so a refused answer is never built whole). A request that
//! would answer more gets 422 and is not answered in part.

use axum::body::Bytes;
use axum::extract::State;
use axum::extract::rejection::BytesRejection;
use axum::http::StatusCode;
use serde::Deserialize;
use serde_json::{Value, json};
use simstore::input::reader::{self, Record};
use simstore::{Fingerprint, QueryKey, Rule, Store};

use super::error::{ApiError, ApiResult};
use super::handlers::body;
use super::state::{self, Shared};
use crate::cli::{output, rule};

/// A query: a text (with an optional title), a web page or a fingerprint, and how far to
/// look. Any other field is refused (400 naming it), never silently ignored.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct QueryRequest {
    /// Ignored; allowed so that a document as sent to /insert is a valid query.
    #[serde(default)]
    #[allow(dead_code, reason = "accepted and ignored")]
    url: Option<serde::de::IgnoredAny>,
    /// Ignored; allowed so that a document as sent to /insert is a valid query.
    #[serde(default)]
    #[allow(dead_code, reason = "accepted and ignored")]
    id: Option<String>,
    #[serde(default)]
    text: Option<String>,
    #[serde(default)]
    title: Option<String>,
    /// A web page: its main text and title (unless `title` is given), and what its reader
    /// left out, as /insert reads a page (`text`, when given, is queried instead).
    #[serde(default)]
    html: Option<String>,
    #[serde(default)]
    fp: Option<String>,
    /// Neither `k` nor `verify`: the store's quality mode (see [`simstore::Store::rule`]).
    #[serde(default)]
    k: Option<u32>,
    #[serde(default)]
    limit: Option<usize>,
    /// The two-stage query: keep only matches whose shingle sketch is at least this similar
    /// to the text's (as `query --verify`); each match then says its similarity.
    #[serde(default)]
    verify: Option<f64>,
}

/// What a request may still answer: matches and bytes.
struct MatchBudget {
    /// `--max-matches`.
    cap: usize,
    /// Answered so far.
    used: usize,
    /// `--max-answer-bytes`.
    byte_cap: usize,
    /// Bytes of the answer's JSON so far.
    bytes: usize,
}

impl MatchBudget {
    fn new(cap: usize, byte_cap: usize) -> Self {
        Self {
            cap,
            used: 0,
            byte_cap,
            bytes: 0,
        }
    }

    /// Counts `v` as it will be written in the answer (and a separator), or says why the
    /// request is refused.
    fn take_json(&mut self, v: &Value) -> Result<(), ApiError> {
        self.take_bytes(json_len(v) + 1)
    }

    /// Takes `n` more bytes of the answer, or says why the request is refused.
    fn take_bytes(&mut self, n: usize) -> Result<(), ApiError> {
        if n > self.byte_cap.saturating_sub(self.bytes) {
            return Err(ApiError::new(
                StatusCode::UNPROCESSABLE_ENTITY,
                format!(
                    "the answer is too large: one answer is at most {} bytes (simstore serve \
                     --max-answer-bytes), and this one would be larger: ask for fewer matches \
                     with \"limit\" on each query (or a smaller \"k\"), or split the batch",
                    self.byte_cap
                ),
            ));
        }
        self.bytes += n;
        Ok(())
    }

    /// Takes `n` more matches, or says why the request is refused.
    fn take(&mut self, n: usize) -> Result<(), ApiError> {
        if n > self.cap - self.used {
            return Err(ApiError::new(
                StatusCode::UNPROCESSABLE_ENTITY,
                format!(
                    "too many matches: this query has {n} (after \"limit\"), {} already answered \
                     by this request; one request answers at most {} (simstore serve \
                     --max-matches): ask for fewer with \"limit\" on each query (or a smaller \
                     \"k\"), or split the batch",
                    self.used, self.cap
                ),
            ));
        }
        self.used += n;
        Ok(())
    }
}

fn parse_query(v: Value) -> Result<QueryRequest, ApiError> {
    if !v.is_object() {
        return Err(ApiError::bad_request(
            "expected a JSON object like {\"text\": \"...\", \"k\": 3}",
        ));
    }
    serde_json::from_value(v).map_err(|e| ApiError::bad_request(format!("invalid query: {e}")))
}

fn run_query(store: &Store, q: &QueryRequest, budget: &mut MatchBudget) -> Result<Value, ApiError> {
    if let Some(t) = q.verify
        && !rule::is_similarity(t)
    {
        return Err(ApiError::bad_request(format!(
            "\"verify\": {t} is not a similarity between 0 and 1"
        )));
    }
    if q.limit == Some(0) {
        // An empty answer would read as "no near duplicate".
        return Err(ApiError::bad_request(
            "\"limit\": 0 would answer no match: give at least 1, or leave it out for every match",
        ));
    }
    let rule = store.rule(Rule::options(q.k, q.verify));
    let key = match (&q.fp, &q.text, &q.title, &q.html) {
        (Some(_), ..) if q.verify.is_some() => {
            return Err(ApiError::new(
                StatusCode::UNPROCESSABLE_ENTITY,
                "\"verify\" compares texts: give \"text\" (or \"title\", \"html\"), not \"fp\"",
            ));
        }
        (Some(hex), ..) => QueryKey::from(hex.parse::<Fingerprint>()?),
        (None, None, None, None) => {
            return Err(ApiError::new(
                StatusCode::UNPROCESSABLE_ENTITY,
                "nothing to query with: give \"text\" (or \"title\"), \"html\" or \"fp\"",
            ));
        }
        (None, None, title, Some(html)) => {
            Record::of_page("", html, title.clone())?.query_key(store.fingerprinter())?
        }
        (None, text, title, _) => {
            let (title, text) = (title.as_deref(), text.as_deref().unwrap_or(""));
            match rule.min_similarity {
                Some(_) => QueryKey::from(&store.fingerprinter().analyze(title, text)?),
                None => QueryKey::from(store.fingerprinter().fingerprint(title, text)?),
            }
        }
    };
    let mut matches = store.query(key, rule)?;
    if let Some(limit) = q.limit {
        matches.truncate(limit);
    }
    budget.take(matches.len())?;
    let mut answer = json!({ "fp": key.fp.to_string(), "k": rule.k, "matches": [] });
    budget.take_json(&answer)?;
    let mut values = Vec::with_capacity(matches.len());
    for m in &matches {
        let mut v = output::match_json(m);
        if let Some(s) = rule::similarity(&rule, key.sketch.as_ref(), m.doc.sketch.as_ref()) {
            v["similarity"] = json!(s);
        }
        budget.take_json(&v)?;
        values.push(v);
    }
    answer["matches"] = Value::Array(values);
    Ok(answer)
}

/// The length of `v` written as JSON, without writing it anywhere.
fn json_len(v: &Value) -> usize {
    struct Count(usize);
    impl std::io::Write for Count {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            self.0 += buf.len();
            Ok(buf.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    let mut count = Count(0);
    // Writing a Value to a writer that never fails cannot fail.
    let _ = serde_json::to_writer(&mut count, v);
    count.0
}

/// A query body as JSON; one serde_json refuses for an unpaired surrogate escape is read
/// with U+FFFD there, as a record is ([`reader::unpaired_replaced`]).
fn parse_json(bytes: &[u8]) -> Result<Value, ApiError> {
    let text = reader::as_text(bytes)?;
    let repaired = |e| match reader::unpaired_replaced(text) {
        Some(t) => serde_json::from_str(&t).map_err(|_| e),
        None => Err(e),
    };
    serde_json::from_str(text)
        .or_else(repaired)
        .map_err(|e| ApiError::bad_request(format!("invalid JSON: {e}")))
}

pub(super) async fn query(
    State(app): State<Shared>,
    bytes: Result<Bytes, BytesRejection>,
) -> ApiResult {
    let bytes = body(bytes)?;
    state::read(&app, move |app| {
        let q = parse_query(parse_json(&bytes)?)?;
        let mut budget = MatchBudget::new(app.max_matches, app.max_answer_bytes);
        Ok(axum::Json(run_query(&app.store, &q, &mut budget)?))
    })
    .await
}

pub(super) async fn query_batch(
    State(app): State<Shared>,
    bytes: Result<Bytes, BytesRejection>,
) -> ApiResult {
    let bytes = body(bytes)?;
    state::read(&app, move |app| {
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
        let mut budget = MatchBudget::new(app.max_matches, app.max_answer_bytes);
        // `{"results":[` and `]}`.
        budget.take_bytes(14)?;
        let results = queries
            .iter()
            .enumerate()
            .map(|(i, q)| {
                run_query(&app.store, q, &mut budget).map_err(|e| e.at(&format!("query {i}")))
            })
            .collect::<Result<Vec<_>, _>>()?;
        Ok(axum::Json(json!({ "results": results })))
    })
    .await
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_budget_refuses_past_the_cap_and_names_it() {
        let mut b = MatchBudget::new(10, usize::MAX);
        assert!(b.take(4).is_ok());
        assert!(b.take(6).is_ok());
        assert!(b.take(0).is_ok());
        let e = b.take(1).unwrap_err();
        assert_eq!(e.status, StatusCode::UNPROCESSABLE_ENTITY);
        assert!(format!("{e:?}").contains("--max-matches"));
        assert_eq!(b.used, 10, "a refused take takes nothing");
    }

    #[test]
    fn the_byte_budget_counts_the_json_and_names_its_cap() {
        let v = json!({ "id": "a", "title": "x".repeat(100) });
        let len = serde_json::to_vec(&v).unwrap().len();
        assert_eq!(json_len(&v), len);
        let mut b = MatchBudget::new(10, 2 * (len + 1));
        assert!(b.take_json(&v).is_ok());
        assert!(b.take_json(&v).is_ok());
        let e = b.take_json(&v).unwrap_err();
        assert_eq!(e.status, StatusCode::UNPROCESSABLE_ENTITY);
        assert!(format!("{e:?}").contains("--max-answer-bytes"));
        assert_eq!(b.bytes, 2 * (len + 1), "a refused take takes nothing");
    }
}
