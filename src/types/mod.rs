//! Leaf types shared by every stage: fingerprints, documents and what the store keeps
//! about them. They depend on nothing else in the crate but [`crate::error`].

pub mod document;
pub mod fingerprint;
pub mod retention;
pub mod sketch;
pub mod weak_bits;

pub use document::{
    DocMeta, Document, Entry, MAX_ID_BYTES, MAX_TITLE_BYTES, MAX_URL_BYTES, Match, QueryKey,
    StoredDoc, check_id, check_stored_fields,
};
pub use fingerprint::Fingerprint;
pub use retention::{Duration, Retention, TimeField, format_time, parse_time};
pub use sketch::Sketch;
pub use weak_bits::WeakBits;
