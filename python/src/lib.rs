//! `simstore._simstore`: the native part of the `simstore` Python package (PyO3).
//!
//! The engine is the `simstore` crate of this workspace; this crate only converts between
//! Python and Rust. Every call into the engine runs with the GIL released
//! ([`Python::detach`]), so Python threads sharing one [`store::Store`] fingerprint, query
//! and write in parallel. Errors become the exception classes of `simstore/errors.py`
//! ([`errors`]). The public surface, its docstrings and type stubs are described in
//! `simstore/_simstore.pyi`.

mod convert;
mod dedup;
mod errors;
mod handle;
mod results;
mod store;

use std::sync::LazyLock;

use pyo3::prelude::*;
use pyo3::types::PyTuple;
use simstore::Fingerprinter;
use simstore::input::html;

use crate::errors::to_py;

/// The fingerprinter of this build's spec, shared by [`fingerprint`] and query batches.
pub(crate) static FINGERPRINTER: LazyLock<Fingerprinter> = LazyLock::new(Fingerprinter::new);

/// The 64-bit SimHash fingerprint of a text (and its title, whose words weigh double), as a
/// `Fingerprint` (an int that prints as 16 hex digits). The same as `simstore fingerprint`
/// and as what `Store.insert` stores.
///
/// Raises `EmptyDocumentError` when neither gives anything to fingerprint.
#[pyfunction]
#[pyo3(signature = (text, title = None))]
fn fingerprint(py: Python<'_>, text: String, title: Option<String>) -> PyResult<Py<PyAny>> {
    let fp = py
        .detach(|| FINGERPRINTER.fingerprint(title.as_deref(), &text))
        .map_err(|e| to_py(py, e))?;
    convert::fingerprint_object(py, fp.0)
}

/// A web page's title and main text, as simstore reads HTML (`simstore import page.html`):
/// navigation, headers, footers, sidebars, ads and link lists dropped; one text block per
/// line. `html` is a str, or bytes decoded by `charset` (e.g. the HTTP header's), else by
/// the page's `<meta charset>`, else by detection. Returns `(title or None, text)`; with
/// `left_out=True`, `(title or None, text, left_out)`, where `left_out` is the visible text
/// the reader left out of `text` (link lists), for `Store.check_and_insert(..., left_out=)`.
#[pyfunction]
#[pyo3(signature = (html, *, charset = None, left_out = false))]
fn extract_page<'py>(
    py: Python<'py>,
    html: &Bound<'py, PyAny>,
    charset: Option<String>,
    left_out: bool,
) -> PyResult<Bound<'py, PyTuple>> {
    let page = if let Ok(convert::Text(s)) = html.extract::<convert::Text>() {
        py.detach(|| html::parse(&s))
    } else if let Ok(b) = html.extract::<Vec<u8>>() {
        py.detach(|| html::page_from_bytes(&b, charset.as_deref()))
            .map_err(|e| errors::invalid_argument(py, e.to_string()))?
    } else {
        return Err(pyo3::exceptions::PyTypeError::new_err(
            "extract_page() takes the page as str or bytes",
        ));
    };
    match left_out {
        true => (page.title, page.text, page.left_out).into_pyobject(py),
        false => (page.title, page.text).into_pyobject(py),
    }
}

/// Exactly 16 hex digits → int (the engine's parser; `InvalidFingerprintError` otherwise).
#[pyfunction]
fn _parse_fingerprint(py: Python<'_>, text: &str) -> PyResult<u64> {
    text.parse::<simstore::Fingerprint>()
        .map(|f| f.0)
        .map_err(|e| to_py(py, e))
}

/// The native module.
#[pymodule]
fn _simstore(m: &Bound<'_, PyModule>) -> PyResult<()> {
    handle::track_forks();
    m.add_class::<store::Store>()?;
    m.add_class::<results::Match>()?;
    m.add_class::<results::CheckResult>()?;
    m.add_class::<results::StoredDocument>()?;
    m.add_function(wrap_pyfunction!(fingerprint, m)?)?;
    m.add_function(wrap_pyfunction!(extract_page, m)?)?;
    m.add_function(wrap_pyfunction!(_parse_fingerprint, m)?)?;
    m.add_function(wrap_pyfunction!(dedup::_dedup, m)?)?;
    m.add_function(wrap_pyfunction!(store::lifecycle::restore, m)?)?;
    m.add_function(wrap_pyfunction!(store::lifecycle::list_backups, m)?)?;
    m.add("SPEC", simstore::FingerprintSpec::current().to_string())?;
    m.add("K_MAX_DEFAULT", 3)?;
    // The k_max of a store created in each quality mode ({"standard": 3, "high": 3}).
    let k_max = pyo3::types::PyDict::new(m.py());
    for q in simstore::Quality::ALL {
        k_max.set_item(q.name(), q.k_max())?;
    }
    m.add("QUALITY_K_MAX", k_max)?;
    Ok(())
}
