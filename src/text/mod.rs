//! Text to fingerprint: normalize and tokenize ([`analyze`]), weigh lines and drop
//! boilerplate ([`clean`]), SimHash the weighted features ([`simhash`]), the shingle
//! sketch ([`sketch`]), all under one versioned spec ([`fingerprint`]).

pub mod analyze;
pub mod clean;
pub mod fingerprint;
pub mod simhash;
pub mod sketch;
