//! The readers a crawler or a pipeline needs to turn what it fetched into a [`Document`]:
//! an HTML page (main text, title, charset), a JSONL record, the responses of a WARC file.
//!
//! ```
//! use simstore::read;
//! let page = read::parse_html("<html><head><title>T</title></head><body><p>Hello, world.</p></body></html>");
//! assert_eq!(page.title.as_deref(), Some("T"));
//! let record = read::parse_jsonl(br#"{"id": "a", "text": "some words"}"#).unwrap();
//! assert_eq!(record.to_document().id, "a");
//! ```
//!
//! [`Document`]: crate::Document

#[cfg(feature = "warc")]
pub use crate::input::archive::Records as WarcRecords;
#[cfg(feature = "html")]
pub use crate::input::html::{Page, page_from_bytes as parse_html_bytes, parse as parse_html};
pub use crate::input::reader::{Record, RecordError, parse_jsonl};
