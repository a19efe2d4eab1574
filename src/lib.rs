//! simstore: a persistent store of 64-bit SimHash fingerprints for near-duplicate
//! detection of web pages and documents, Chinese and English first.
//!
//! Text is normalized, segmented (jieba for Chinese), hashed into a weighted 64-bit
//! SimHash ([`Fingerprinter`]) and stored in RocksDB permutation tables (Manku et al.,
//! WWW 2007) so that "which stored documents are within Hamming distance k of this one?"
//! is a handful of prefix seeks, exact for every `k ≤ k_max`.
//!
//! ```
//! use simstore::{Document, Store};
//!
//! # fn main() -> simstore::Result<()> {
//! let dir = tempfile::tempdir()?;
//! let store = Store::builder(dir.path().join("pages.db")).k_max(3).open()?;
//!
//! let page = Document::new("https://example.com/a", "今天北京的天气很好，我们去公园散步，看到很多人在跑步和放风筝。")
//!     .with_title("北京天气");
//! store.insert(&page)?;
//!
//! // The same article reposted elsewhere, with half-width punctuation.
//! let repost = Document::new("https://example.org/b", "今天北京的天气很好,我们去公园散步,看到很多人在跑步和放风筝!")
//!     .with_title("北京天气");
//! let found = store.search(&repost)?; // by the store's quality mode (Store::mode_rule)
//! assert_eq!(found[0].doc.id, "https://example.com/a");
//!
//! // A crawler stores only what is new, in one atomic call, by the same rule.
//! use simstore::CheckOutcome;
//! let outcome = store.check_and_insert_rule(&repost, &store.mode_rule())?;
//! assert!(matches!(outcome, CheckOutcome::ExactDuplicate { ref of, .. } if of == "https://example.com/a"));
//! assert!(store.get("https://example.org/b")?.is_none(), "a duplicate is not stored");
//! # Ok(())
//! # }
//! ```
//!
//! # Cargo features
//!
//! `cli` (the `simstore` binary) and `server` (its `serve` subcommand) are on by default.
//! The library needs neither: depend on it with `default-features = false` and it pulls no
//! clap, indicatif, anyhow, axum, tokio or hyper.
#![deny(unsafe_code)]
#![deny(missing_docs)]

pub mod error;
pub mod index;
pub mod input;
pub mod store;
pub mod text;
pub mod tools;
pub mod types;

pub use error::{Error, Result};
pub use index::cluster::{DedupReport, DuplicatePair};
pub use index::layout::Layout;
pub use index::quality::{MatchRule, Quality};
pub use store::{
    BackupInfo, BatchOutcome, BulkLoader, CandidateStats, CheckOutcome, CheckReport, ExpireOptions,
    ExpireReport, InsertOutcome, LogDamage, RepairReport, SalvageReport, Stats, Store,
    StoreBuilder, list_backups, restore,
};
pub use text::fingerprint::{Analysis, FingerprintSpec, Fingerprinter};
pub use types::{
    DocMeta, Document, Entry, Fingerprint, MAX_TITLE_BYTES, MAX_URL_BYTES, Match, QueryKey,
    Retention, Sketch, StoredDoc, TimeField, WeakBits,
};
