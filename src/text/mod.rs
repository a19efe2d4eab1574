//! Text to fingerprint, stage by stage, all under one versioned spec:
//!
//! - [`analyze`]: normalize and tokenize;
//! - `ascii` (internal): ASCII character classes, 64 bytes at a time;
//! - [`clean`]: weigh lines and drop boilerplate;
//! - [`stop_words`]: the function words that carry no topic;
//! - [`tokens`]: the tokens of a document that count, with their hashes and weights;
//! - [`idf`]: the inverse document frequencies that weigh the tokens;
//! - [`weight`]: feature weights and the features' SimHash votes;
//! - [`simhash`]: SimHash the weighted features;
//! - [`sketch`]: the shingle sketch that verifies near duplicates;
//! - [`spec`]: the [`spec::FingerprintSpec`] that names all of the above, and its constants;
//! - [`fingerprint`]: a document's fingerprint, content hash and sketch, in one pass.
//! - [`explain`]: what drove one fingerprint (kept lines, features, votes), in the open.

pub mod analyze;
pub(crate) mod ascii;
pub mod clean;
pub mod explain;
pub mod fingerprint;
pub mod idf;
pub mod simhash;
pub mod sketch;
pub mod spec;
pub mod stop_words;
pub mod tokens;
pub mod weight;
