//! What the store's methods return: [`Match`], [`CheckResult`], [`StoredDocument`]
//! (read-only objects with a readable repr).

use pyo3::prelude::*;
use simstore::{CheckOutcome, StoredDoc};

use crate::convert::fingerprint_object;

/// A stored document within the asked distance of a query (from `Store.query`).
#[pyclass(module = "simstore", frozen, get_all)]
pub struct Match {
    /// The stored document's id.
    id: String,
    /// Hamming distance between the query's and the document's fingerprints.
    distance: u32,
    /// The document's fingerprint (a `Fingerprint`).
    fp: Py<PyAny>,
    /// Its title, or None.
    title: Option<String>,
    /// Its URL, or None.
    url: Option<String>,
}

impl Match {
    /// The Python object of an engine match.
    pub(crate) fn new(py: Python<'_>, m: simstore::Match) -> PyResult<Self> {
        Ok(Match {
            fp: fingerprint_object(py, m.doc.fp)?,
            id: m.doc.id,
            distance: m.distance,
            title: m.doc.title,
            url: m.doc.url,
        })
    }
}

#[pymethods]
impl Match {
    fn __repr__(&self, py: Python<'_>) -> PyResult<String> {
        Ok(format!(
            "Match(id={}, distance={}, fp={}, title={}, url={})",
            py_repr(py, Some(&self.id))?,
            self.distance,
            self.fp.bind(py).repr()?,
            py_repr(py, self.title.as_deref())?,
            py_repr(py, self.url.as_deref())?
        ))
    }
}

/// What `Store.check_and_insert` found and did.
///
/// `status` is "new" (stored), "exact_duplicate" (a stored document has the same words) or
/// "near_duplicate" (one lies within k bits); for a duplicate, `of` is that document's id and
/// `distance` its Hamming distance (0 for an exact duplicate). A duplicate is not stored.
#[pyclass(module = "simstore", frozen, get_all)]
pub struct CheckResult {
    /// "new", "exact_duplicate" or "near_duplicate".
    status: &'static str,
    /// The id of the stored document this one duplicates, or None when new.
    of: Option<String>,
    /// The Hamming distance to it (0 for an exact duplicate), or None when new.
    distance: Option<u32>,
    /// The checked document's fingerprint.
    fp: Py<PyAny>,
    /// True when new and it replaced an earlier version stored under the same id.
    replaced: bool,
}

impl CheckResult {
    /// The Python object of an engine outcome.
    pub(crate) fn new(py: Python<'_>, o: &CheckOutcome) -> PyResult<Self> {
        let (status, replaced) = match o {
            CheckOutcome::New { replaced, .. } => ("new", *replaced),
            CheckOutcome::ExactDuplicate { .. } => ("exact_duplicate", false),
            _ => ("near_duplicate", false),
        };
        Ok(CheckResult {
            status,
            of: o.duplicate_of().map(str::to_owned),
            distance: o.distance(),
            fp: fingerprint_object(py, o.fingerprint().0)?,
            replaced,
        })
    }
}

#[pymethods]
impl CheckResult {
    /// True when the document was stored (status "new").
    #[getter]
    fn is_new(&self) -> bool {
        self.status == "new"
    }

    fn __repr__(&self, py: Python<'_>) -> PyResult<String> {
        Ok(format!(
            "CheckResult(status={}, of={}, distance={}, fp={}, replaced={})",
            py_repr(py, Some(self.status))?,
            py_repr(py, self.of.as_deref())?,
            self.distance.map_or("None".to_owned(), |d| d.to_string()),
            self.fp.bind(py).repr()?,
            if self.replaced { "True" } else { "False" }
        ))
    }
}

/// A stored document (from `Store.get`).
#[pyclass(module = "simstore", frozen, get_all)]
pub struct StoredDocument {
    /// Its id.
    id: String,
    /// Its fingerprint (a `Fingerprint`).
    fp: Py<PyAny>,
    /// Its title, or None.
    title: Option<String>,
    /// Its URL, or None.
    url: Option<String>,
    /// Length of its text in characters (0 when stored from a fingerprint).
    length: u64,
    /// When it was stored, in seconds since the Unix epoch.
    time: u64,
    /// When it was last written or (with last-seen tracking on) found as a duplicate.
    seen: u64,
}

impl StoredDocument {
    /// The Python object of a stored document.
    pub(crate) fn new(py: Python<'_>, d: StoredDoc) -> PyResult<Self> {
        Ok(StoredDocument {
            fp: fingerprint_object(py, d.fp)?,
            id: d.id,
            title: d.title,
            url: d.url,
            length: d.length,
            time: d.time,
            seen: d.seen,
        })
    }
}

#[pymethods]
impl StoredDocument {
    fn __repr__(&self, py: Python<'_>) -> PyResult<String> {
        Ok(format!(
            "StoredDocument(id={}, fp={}, title={}, url={}, length={}, time={})",
            py_repr(py, Some(&self.id))?,
            self.fp.bind(py).repr()?,
            py_repr(py, self.title.as_deref())?,
            py_repr(py, self.url.as_deref())?,
            self.length,
            self.time
        ))
    }
}

/// Python's repr of a str (quotes and escapes as Python writes them), or `None`.
fn py_repr(py: Python<'_>, value: Option<&str>) -> PyResult<String> {
    match value {
        Some(s) => Ok(pyo3::types::PyString::new(py, s).repr()?.to_string()),
        None => Ok("None".to_owned()),
    }
}
