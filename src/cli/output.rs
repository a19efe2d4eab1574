//! Output formatting shared by subcommands: JSON objects for matches and documents.

use serde_json::{Value, json};
use simstore::{Match, StoredDoc};

/// A match as a JSON object: `{"id", "distance", "fp", "title"?, "url"?}`.
pub fn match_json(m: &Match) -> Value {
    let mut v =
        json!({ "id": m.doc.id, "distance": m.distance, "fp": m.doc.fingerprint().to_string() });
    add_optional(&mut v, &m.doc);
    v
}

/// A stored document as a JSON object.
pub fn doc_json(d: &StoredDoc) -> Value {
    let mut v = json!({ "id": d.id, "fp": d.fingerprint().to_string(), "length": d.length, "time": d.time });
    add_optional(&mut v, d);
    v
}

fn add_optional(v: &mut Value, d: &StoredDoc) {
    if let Some(t) = &d.title {
        v["title"] = json!(t);
    }
    if let Some(u) = &d.url {
        v["url"] = json!(u);
    }
}

/// One human-readable line for a match: distance, id, fingerprint, title, url.
pub fn match_line(m: &Match) -> String {
    format!(
        "{}\t{}\t{}\t{}\t{}",
        m.distance,
        m.doc.id,
        m.doc.fingerprint(),
        m.doc.title.as_deref().unwrap_or("-"),
        m.doc.url.as_deref().unwrap_or("-")
    )
}
