//! Python values ↔ engine values: fingerprints (an int, a `Fingerprint`, or 16 hex digits)
//! and the queries of a batch.

use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::{PyMapping, PyString, PyType};
use pyo3::{Borrowed, FromPyObject};
use simstore::Fingerprint;

use crate::errors::{invalid_argument, invalid_fingerprint, to_py};

static FINGERPRINT_CLASS: PyOnceLock<Py<PyType>> = PyOnceLock::new();

/// `fp` as a `simstore.Fingerprint` (the int subclass of `simstore/_types.py`).
pub(crate) fn fingerprint_object(py: Python<'_>, fp: u64) -> PyResult<Py<PyAny>> {
    let class = FINGERPRINT_CLASS.import(py, "simstore._types", "Fingerprint")?;
    Ok(class.call1((fp,))?.unbind())
}

/// A fingerprint argument: an int in 0..2**64 (a `Fingerprint` is one) or a str of exactly
/// 16 hex digits. Anything else is an `InvalidFingerprintError` (a `ValueError`).
pub(crate) fn fingerprint_arg(py: Python<'_>, value: &Bound<'_, PyAny>) -> PyResult<Fingerprint> {
    if let Ok(s) = value.cast::<PyString>() {
        return s.to_cow()?.parse::<Fingerprint>().map_err(|e| to_py(py, e));
    }
    if value.is_instance_of::<pyo3::types::PyBool>() {
        return Err(invalid_fingerprint(
            py,
            "invalid fingerprint: a bool is not one",
        ));
    }
    if value.is_instance_of::<pyo3::types::PyInt>() {
        return value.extract::<u64>().map(Fingerprint).map_err(|_| {
            invalid_fingerprint(
                py,
                format!("invalid fingerprint {value}: expected an integer with 0 <= fp < 2**64"),
            )
        });
    }
    Err(invalid_fingerprint(
        py,
        format!(
            "invalid fingerprint {}: expected an int (0 <= fp < 2**64) or a str of exactly 16 \
             hexadecimal digits",
            value.repr()?
        ),
    ))
}

/// One query of a batch, as given.
pub(crate) enum Query {
    /// A text to fingerprint, with its title.
    Text { title: Option<String>, text: String },
    /// A fingerprint.
    Fp(Fingerprint),
}

/// Query `i` of `Store.query_batch`: a str (always a text), an int (a fingerprint), or a
/// mapping with `"text"` (and `"title"`) or `"fp"`.
pub(crate) fn query_arg(py: Python<'_>, i: usize, item: &Bound<'_, PyAny>) -> PyResult<Query> {
    if let Ok(Text(s)) = item.extract::<Text>() {
        return Ok(Query::Text {
            title: None,
            text: s,
        });
    }
    if item.is_instance_of::<pyo3::types::PyInt>() {
        return fingerprint_arg(py, item).map(Query::Fp);
    }
    let Ok(map) = item.cast::<PyMapping>() else {
        return Err(invalid_argument(
            py,
            format!(
                "query {i}: expected a text (str), a fingerprint (int) or a dict with \"text\" \
                 (and \"title\") or \"fp\", not {}",
                item.get_type().name()?
            ),
        ));
    };
    let field = |name: &str| -> PyResult<Option<Bound<'_, PyAny>>> {
        match map.get_item(name) {
            Ok(v) if !v.is_none() => Ok(Some(v)),
            _ => Ok(None),
        }
    };
    let text: Option<Text> = field("text")?.map(|v| v.extract()).transpose()?;
    let title: Option<Text> = field("title")?.map(|v| v.extract()).transpose()?;
    if let Some(fp) = field("fp")? {
        if text.is_some() || title.is_some() {
            return Err(invalid_argument(
                py,
                format!("query {i}: give \"fp\" or \"text\" (and \"title\"), not both"),
            ));
        }
        return fingerprint_arg(py, &fp).map(Query::Fp);
    }
    let (text, title) = (text_of(text), text_of(title));
    if text.is_none() && title.is_none() {
        return Err(invalid_argument(
            py,
            format!("query {i}: nothing to query with: give \"text\" (or \"title\") or \"fp\""),
        ));
    }
    Ok(Query::Text {
        title,
        text: text.unwrap_or_default(),
    })
}

/// A text argument (a text, title, URL, or what a reader left out): a `str`, each lone
/// surrogate in it (half an emoji, as `json.loads` reads `"\ud83d"`) read as U+FFFD, as
/// the command line and the server read one; a plain `String` would raise a bare
/// `UnicodeEncodeError`.
pub(crate) struct Text(pub(crate) String);

impl<'a, 'py> FromPyObject<'a, 'py> for Text {
    type Error = PyErr;

    fn extract(obj: Borrowed<'a, 'py, PyAny>) -> PyResult<Self> {
        let s = obj.cast::<PyString>().map_err(PyErr::from)?;
        Ok(Text(s.to_string_lossy().into_owned()))
    }
}

/// An id argument: a `str` of whole Unicode characters. One with a lone surrogate (half an
/// emoji) is an `InvalidArgumentError` naming it, as the command line refuses such an id:
/// read as U+FFFD, two different ids would become one and replace each other.
pub(crate) struct Id(pub(crate) String);

impl<'a, 'py> FromPyObject<'a, 'py> for Id {
    type Error = PyErr;

    fn extract(obj: Borrowed<'a, 'py, PyAny>) -> PyResult<Self> {
        let s = obj.cast::<PyString>().map_err(PyErr::from)?;
        match s.to_cow() {
            Ok(id) => Ok(Id(id.into_owned())),
            Err(_) => Err(invalid_argument(
                obj.py(),
                format!(
                    "id {}: it holds a lone surrogate (half a UTF-16 pair, such as '\\ud83d'): \
                     ids must be whole Unicode characters",
                    s.repr()?
                ),
            )),
        }
    }
}

/// A whole-number argument (`k`, `limit`, `k_max`, `expected_docs`): a negative one, or one
/// too large for it, is an `InvalidArgumentError` (a `ValueError`) saying so, not a bare
/// `OverflowError`.
pub(crate) struct Whole<T>(pub(crate) T);

impl<'a, 'py, T: TryFrom<i64>> FromPyObject<'a, 'py> for Whole<T> {
    type Error = PyErr;

    fn extract(obj: Borrowed<'a, 'py, PyAny>) -> PyResult<Self> {
        let n: i64 = obj.extract()?;
        match T::try_from(n) {
            Ok(v) if n >= 0 => Ok(Whole(v)),
            _ => Err(invalid_argument(
                obj.py(),
                format!("{n} is out of range: expected a whole number >= 0 (None for the default)"),
            )),
        }
    }
}

/// `Some(w.0)` of an optional [`Whole`].
pub(crate) fn whole<T>(w: Option<Whole<T>>) -> Option<T> {
    w.map(|w| w.0)
}

/// `Some(t.0)` of an optional [`Text`].
pub(crate) fn text_of(t: Option<Text>) -> Option<String> {
    t.map(|t| t.0)
}
