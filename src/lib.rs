//! simstore: a persistent store of 64-bit SimHash fingerprints for near-duplicate
//! detection of web pages and documents, Chinese and English first.
//!
//! Text is cleaned, segmented (jieba for Chinese), hashed into a weighted 64-bit SimHash
//! ([`Fingerprinter`]) and stored in RocksDB permutation tables (Manku et al., WWW 2007), so
//! "which stored documents are near copies of this one?" is a handful of prefix seeks,
//! exact for every distance `k ≤ k_max`.
//!
//! # A crawler's loop
//!
//! One call per fetched page: [`Store::check_and_insert`] stores it only when no stored
//! page duplicates it, atomically, and otherwise says which one it repeats.
//!
//! ```
//! use simstore::{CheckOutcome, Document, Rule, Store};
//!
//! # fn main() -> simstore::Result<()> {
//! # let dir = tempfile::tempdir()?;
//! # let path = dir.path().join("pages.db");
//! let store = Store::builder(&path).open()?; // created if missing; Store is Send + Sync
//! let fetched = [
//!     ("https://example.com/a", "今天北京的天气很好，我们去公园散步，看到很多人在跑步和放风筝。"),
//!     ("https://example.org/b", "今天北京的天气很好,我们去公园散步,看到很多人在跑步和放风筝!"),
//! ];
//! for (url, main_text) in fetched {
//!     let page = Document::new(url, main_text).with_title("北京天气").with_url(url);
//!     // Rule::Mode: the store's quality mode (candidates verified by the texts' sketches);
//!     // a plain k (`3`) asks "within Hamming distance 3" instead.
//!     match store.check_and_insert(&page, Rule::Mode)? {
//!         CheckOutcome::New { .. } => { /* stored: index it, follow its links */ }
//!         CheckOutcome::ExactDuplicate { of, .. } => assert_eq!(of, "https://example.com/a"),
//!         CheckOutcome::NearDuplicate { of, distance, .. } => println!("{url}: {of} at {distance}"),
//!         _ => {} // CheckOutcome is non_exhaustive
//!     }
//! }
//! assert!(store.get("https://example.org/b")?.is_none(), "a duplicate is not stored");
//! # Ok(())
//! # }
//! ```
//!
//! # The API in one page
//!
//! - Open: [`Store::builder`] → [`StoreBuilder`] (path or `redis://` URL, quality mode,
//!   expected size, durability), or [`StoreBuilder::in_memory`].
//! - Write: [`Store::insert`], [`Store::insert_batch`], [`Store::check_and_insert`],
//!   [`Store::delete`], [`Store::bulk_load`] (a [`BulkLoader`] for millions at once).
//! - Ask: [`Store::query`] and [`Store::query_batch`] by a [`Query`] (a [`Fingerprint`], a
//!   [`Document`], a [`QueryKey`]) and a [`Rule`] ([`Rule::Mode`], a `u32` k, a
//!   [`Quality`], a [`MatchRule`], [`Rule::Exhaustive`]); [`Store::dedup`] clusters a whole
//!   store; [`Store::get`] reads one document.
//! - Keep: [`Store::set_retention`] and [`Store::expire`], [`Store::backup`] and
//!   [`restore`], [`Store::check`] and [`Store::repair`], [`StoreBuilder::salvage`],
//!   [`Store::relayout`].
//! - Read input: [`read`] (an HTML page's main text, JSONL records, WARC responses);
//!   fingerprint without a store: [`Fingerprinter`].
//!
//! Every error is an [`Error`] that says what is wrong and which API mends it.
//!
//! # Cargo features
//!
//! All on by default (the binary has every reader and backend):
//!
//! - `redis`: the Redis Cluster backend (`redis://` stores, `RedisUrl`).
//! - `html`: the HTML reader (`read::parse_html`: a page's main text, title and charset).
//! - `warc`: the WARC reader (`read::WarcRecords`; needs `html`).
//! - `cli`: the `simstore` binary; `server`: its `serve` subcommand.
//!
//! A crawler embedding the library depends on it with `default-features = false` and
//! compiles RocksDB, jieba and small crates alone, adding `html`, `warc` or `redis` as it
//! needs them. Without `redis`, opening a `redis://` store is [`Error::Unsupported`];
//! without `html`, a JSONL record with `"html"` and no `"text"` is refused. `internals` (which `cli` turns on) makes
//! the stage modules public for the binary, the tests and the fuzzers; they are hidden
//! from these docs and are not a stable API.
#![deny(unsafe_code)]
#![deny(missing_docs)]
// Without `internals` the stage modules are private, and the items only the binary, the
// tests and the benches use are unused here.
#![cfg_attr(not(feature = "internals"), allow(dead_code, unused_imports))]

// The stage modules: private, or with the `internals` feature (the binary's, the tests',
// the benches' and the fuzzers') public but hidden from the docs: not the stable API.
// Declared one by one, not by a macro, so that rustfmt reaches their files.
#[cfg(feature = "internals")]
#[doc(hidden)]
pub mod error;
#[cfg(not(feature = "internals"))]
mod error;
#[cfg(feature = "internals")]
#[doc(hidden)]
pub mod index;
#[cfg(not(feature = "internals"))]
mod index;
#[cfg(feature = "internals")]
#[doc(hidden)]
pub mod input;
#[cfg(not(feature = "internals"))]
mod input;
#[cfg(feature = "internals")]
#[doc(hidden)]
pub mod store;
#[cfg(not(feature = "internals"))]
mod store;
#[cfg(feature = "internals")]
#[doc(hidden)]
pub mod text;
#[cfg(not(feature = "internals"))]
mod text;
#[cfg(feature = "internals")]
#[doc(hidden)]
pub mod types;
#[cfg(not(feature = "internals"))]
mod types;

/// The binary's tools (evaluation, mode comparison): nothing a library user calls.
#[cfg(all(feature = "internals", feature = "html"))]
#[doc(hidden)]
pub mod tools;

pub mod read;

pub use error::{Error, Result};
pub use index::cluster::{DedupReport, DuplicatePair};
pub use index::layout::Layout;
pub use index::quality::{MatchRule, Quality, RuleValue};
#[cfg(feature = "redis")]
pub use store::RedisUrl;
pub use store::{
    BackupInfo, BatchOutcome, BulkLoader, CLOCK_SLACK, CandidateStats, CheckOutcome, CheckReport,
    ExpireOptions, ExpireReport, Incoming, InsertOutcome, LogDamage, Query, RepairReport,
    RocksOptions, Rule, SalvageReport, Stats, Store, StoreBuilder, list_backups, restore,
};
pub use text::fingerprint::{Analysis, FingerprintSpec, Fingerprinter};
pub use types::{
    DocMeta, Document, Duration, Entry, Fingerprint, MAX_TITLE_BYTES, MAX_URL_BYTES, Match,
    QueryKey, Retention, Sketch, StoredDoc, TimeField, WeakBits, format_time, parse_time,
};
