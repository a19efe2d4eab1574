//! Bytes in, [`crate::Document`]s out: JSONL records, WARC archives, web pages and the
//! charsets they come in.

#[cfg(feature = "warc")]
pub mod archive;
#[cfg(feature = "html")]
pub mod charset;
pub mod gzip;
#[cfg(feature = "html")]
pub mod html;
pub mod limit;
mod pushback;
pub mod reader;
