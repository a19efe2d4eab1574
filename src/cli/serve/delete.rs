//! `POST /delete {"ids": [...]}`: many documents deleted in one atomic change set
//! ([`simstore::Store::delete_many`]), at most [`MAX_IDS`] per request.

use axum::body::Bytes;
use axum::extract::State;
use axum::extract::rejection::BytesRejection;
use serde::Deserialize;
use serde_json::json;

use super::error::{ApiError, ApiResult};
use super::handlers::body;
use super::state::{self, Shared};

/// The most ids one `POST /delete` takes: one change set holds every entry of every
/// document it deletes (the record, the id, the exact entry and one per table).
pub(super) const MAX_IDS: usize = 10_000;

/// `POST /delete`'s body.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct DeleteBody {
    ids: Vec<String>,
}

/// `POST /delete`: `{"deleted": n, "missing": [ids not stored]}`; every listed document
/// that was stored is gone, or (on any error) none is.
pub(super) async fn delete_many(
    State(app): State<Shared>,
    bytes: Result<Bytes, BytesRejection>,
) -> ApiResult {
    let bytes = body(bytes)?;
    let DeleteBody { ids } = serde_json::from_slice(&bytes).map_err(|e| {
        ApiError::bad_request(format!(
            "invalid body: {e} (POST /delete takes {{\"ids\": [\"id\", ...]}})"
        ))
    })?;
    if ids.len() > MAX_IDS {
        return Err(ApiError::bad_request(format!(
            "{} ids in one request; POST /delete takes at most {MAX_IDS}: split them \
             (nothing was deleted)",
            ids.len()
        )));
    }
    state::write(&app, move |app| {
        let refs: Vec<&str> = ids.iter().map(String::as_str).collect();
        let found = app
            .store
            .delete_many(&refs)
            .map_err(|e| app.write_failed(e))?;
        let deleted = found.iter().filter(|&&f| f).count();
        // An id listed twice is answered at its first place only.
        let mut listed = std::collections::HashSet::new();
        let missing: Vec<&str> = refs
            .iter()
            .zip(&found)
            .filter(|&(id, &f)| listed.insert(*id) && !f)
            .map(|(id, _)| *id)
            .collect();
        Ok(axum::Json(
            json!({ "deleted": deleted, "missing": missing }),
        ))
    })
    .await
}
