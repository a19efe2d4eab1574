//! Methods over many stored documents: `Store.ids()` and `Store.export()` read every
//! document out in chunks, each read with the GIL released; `Store.delete_many()` takes
//! their ids; `Store.similarity()` compares one to a text by their shingle sketches (the
//! measure `verify` and the quality modes threshold).

use std::collections::VecDeque;

use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict};
use simstore::StoredDoc;

use super::Store;
use crate::convert::fingerprint_object;

/// The most documents a chunk reserves room for at once.
pub(super) const CHUNK: usize = 10_000;

/// `ids` as `&str`s.
pub(super) fn refs(ids: &[String]) -> Vec<&str> {
    ids.iter().map(String::as_str).collect()
}

/// What a scan yields for each document.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Yield {
    /// Its id, a str.
    Id,
    /// A dict of every stored field, as `simstore export` writes them.
    Doc,
}

/// An iterator over a store's documents in sequence (insertion) order, read `chunk` at a
/// time; each chunk resumes after the last document read (as `simstore export
/// --from-seq`), so a document replaced meanwhile with another fingerprint comes again
/// under its new number, and documents stored meanwhile come at the end.
#[pyclass(module = "simstore")]
pub struct Scan {
    store: Py<Store>,
    yields: Yield,
    /// The sequence number the next chunk starts from.
    next_seq: u64,
    chunk: usize,
    buffered: VecDeque<(u64, StoredDoc)>,
    /// Set once a chunk came back short: the store has no more.
    done: bool,
}

impl Scan {
    pub(super) fn new(store: Py<Store>, yields: Yield, from_seq: u64, chunk: usize) -> Self {
        Scan {
            store,
            yields,
            next_seq: from_seq,
            chunk: chunk.max(1),
            buffered: VecDeque::new(),
            done: false,
        }
    }

    /// Reads the next chunk (the GIL released meanwhile).
    fn fill(&mut self, py: Python<'_>) -> PyResult<()> {
        let (from, n) = (self.next_seq, self.chunk);
        let store = self.store.bind(py).get();
        let got = store.call(py, move |s| {
            let mut out = Vec::with_capacity(n.min(CHUNK));
            s.scan_by_seq(from, |seq, doc| {
                out.push((seq, doc));
                Ok(out.len() < n)
            })?;
            Ok(out)
        })?;
        self.done = got.len() < n;
        if let Some(&(last, _)) = got.last() {
            self.next_seq = last + 1;
        }
        self.buffered.extend(got);
        Ok(())
    }
}

#[pymethods]
impl Scan {
    fn __iter__(slf: PyRef<'_, Self>) -> PyRef<'_, Self> {
        slf
    }

    fn __next__(&mut self, py: Python<'_>) -> PyResult<Option<Py<PyAny>>> {
        if self.buffered.is_empty() && !self.done {
            self.fill(py)?;
        }
        let Some((seq, doc)) = self.buffered.pop_front() else {
            return Ok(None);
        };
        match self.yields {
            Yield::Id => Ok(Some(doc.id.into_pyobject(py)?.into_any().unbind())),
            Yield::Doc => Ok(Some(doc_dict(py, seq, doc)?.into_any().unbind())),
        }
    }
}

/// A stored document as a dict: seq, id, fp (a `Fingerprint`), title, url, length, time,
/// seen, content_hash (32 hex digits) and sketch (bytes); None where absent.
fn doc_dict(py: Python<'_>, seq: u64, d: StoredDoc) -> PyResult<Bound<'_, PyDict>> {
    let out = PyDict::new(py);
    out.set_item("seq", seq)?;
    out.set_item("id", d.id)?;
    out.set_item("fp", fingerprint_object(py, d.fp)?)?;
    out.set_item("title", d.title)?;
    out.set_item("url", d.url)?;
    out.set_item("length", d.length)?;
    out.set_item("time", d.time)?;
    out.set_item("seen", d.seen)?;
    out.set_item("content_hash", d.content_hash.map(|h| format!("{h:032x}")))?;
    out.set_item("sketch", d.sketch.map(|s| PyBytes::new(py, &s.0)))?;
    Ok(out)
}

/// The sketch similarity (0 to 1) of `text` (and `title`) to the stored document `id`;
/// `None` when `id` is not stored or either has no sketch (a fingerprint-only record, a
/// text without words).
pub(super) fn similarity(
    store: &Store,
    py: Python<'_>,
    (id, text, title): (String, String, Option<String>),
) -> PyResult<Option<f64>> {
    store.call(py, move |s| {
        let Some(stored) = s.get(&id)?.and_then(|d| d.sketch) else {
            return Ok(None);
        };
        let mine = s.fingerprinter().sketch(title.as_deref(), &text);
        Ok(mine.map(|m| m.similarity(&stored)))
    })
}
