//! Bytes in, [`crate::Document`]s out: JSONL records, WARC archives, web pages and the
//! charsets they come in.

pub mod archive;
pub mod charset;
pub mod gzip;
pub mod html;
pub mod limit;
mod pushback;
pub mod reader;
