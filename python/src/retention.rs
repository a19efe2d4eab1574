//! The arguments and answers of `Store.expire`, `Store.retention` and
//! `Store.set_retention`: ages, times and the policy as a dict.

use pyo3::prelude::*;
use pyo3::types::{PyDict, PyInt, PyString};
use simstore::types::{Duration, Retention, TimeField, parse_time};

use crate::errors::invalid_argument;

/// The cutoff of an expiry: an age, or a time.
pub(crate) enum Cutoff {
    /// Older than this many seconds.
    Age(u64),
    /// Before this time (Unix seconds).
    Before(u64),
}

/// Seconds of an age: an int, or a str such as "90d".
pub(crate) fn age(py: Python<'_>, v: &Bound<'_, PyAny>) -> PyResult<u64> {
    if v.is_instance_of::<PyInt>() {
        return v
            .extract::<u64>()
            .map_err(|_| invalid_argument(py, format!("an age in seconds must be >= 0, not {v}")));
    }
    let s: String = v
        .extract()
        .map_err(|_| invalid_argument(py, format!("an age is \"90d\" or seconds, not {v}")))?;
    s.parse::<Duration>()
        .map(|d| d.0)
        .map_err(|e| invalid_argument(py, e))
}

/// Exactly one of `older_than` (an age) and `before` (Unix seconds or an RFC 3339 str).
pub(crate) fn cutoff(
    py: Python<'_>,
    older_than: Option<&Bound<'_, PyAny>>,
    before: Option<&Bound<'_, PyAny>>,
) -> PyResult<Cutoff> {
    match (older_than, before) {
        (Some(a), None) => Ok(Cutoff::Age(age(py, a)?)),
        (None, Some(b)) if b.is_instance_of::<PyString>() => {
            let s: String = b.extract()?;
            parse_time(&s)
                .map(Cutoff::Before)
                .map_err(|e| invalid_argument(py, e))
        }
        (None, Some(b)) => b.extract::<u64>().map(Cutoff::Before).map_err(|_| {
            invalid_argument(
                py,
                format!("before is Unix seconds or \"2026-01-01T00:00:00Z\", not {b}"),
            )
        }),
        _ => Err(invalid_argument(
            py,
            "give exactly one of older_than= and before=",
        )),
    }
}

/// A time field's name as given: "stored" or "seen".
pub(crate) fn time_field(py: Python<'_>, name: &str) -> PyResult<TimeField> {
    name.parse::<TimeField>()
        .map_err(|e| invalid_argument(py, e))
}

/// The policy as a dict: retain_secs, by, track_seen.
pub(crate) fn retention_dict<'py>(py: Python<'py>, r: &Retention) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    d.set_item("retain_secs", r.retain_secs)?;
    d.set_item("by", r.by.name())?;
    d.set_item("track_seen", r.track_seen)?;
    Ok(d)
}
