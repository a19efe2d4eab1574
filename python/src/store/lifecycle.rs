//! The lifecycle: the arguments and answers of `Store.expire`, `Store.retention`,
//! `Store.set_retention` and `Store.backup`, and `simstore.restore`: ages, times, the
//! policy and backups as dicts.

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

/// `Store.expire`: the cutoff and time field parsed, the expiry run with the GIL released.
pub(super) fn expire<'py>(
    store: &super::Store,
    py: Python<'py>,
    (older_than, before): (Option<Bound<'py, PyAny>>, Option<Bound<'py, PyAny>>),
    by: Option<String>,
    dry_run: bool,
) -> PyResult<Bound<'py, PyDict>> {
    let by = by.map(|b| time_field(py, &b)).transpose()?;
    let cutoff = cutoff(py, older_than.as_ref(), before.as_ref())?;
    let (opts, r) = store.call(py, move |s| {
        let by = by.unwrap_or(s.retention().by);
        let mut opts = match cutoff {
            Cutoff::Age(secs) => simstore::ExpireOptions::older_than(secs, by),
            Cutoff::Before(t) => simstore::ExpireOptions::before(t, by),
        };
        opts.dry_run = dry_run;
        Ok((opts, s.expire(&opts, |_| {})?))
    })?;
    let d = PyDict::new(py);
    d.set_item("expired", r.expired)?;
    d.set_item("scanned", r.scanned)?;
    d.set_item("batches", r.batches)?;
    d.set_item("full_scan", r.full_scan)?;
    d.set_item("before", opts.before)?;
    d.set_item("by", opts.by.name())?;
    Ok(d)
}

/// `Store.set_retention`: the given settings applied to the current policy.
pub(super) fn set_retention<'py>(
    store: &super::Store,
    py: Python<'py>,
    (retain, keep_all, track_seen, by): (
        Option<Bound<'py, PyAny>>,
        bool,
        Option<bool>,
        Option<String>,
    ),
) -> PyResult<Bound<'py, PyDict>> {
    let mut r = store.call(py, |s| Ok(s.retention()))?;
    if let Some(a) = &retain {
        r.retain_secs = Some(age(py, a)?);
    }
    if keep_all {
        r.retain_secs = None;
    }
    if let Some(track) = track_seen {
        r.track_seen = track;
    }
    if let Some(by) = by {
        r.by = time_field(py, &by)?;
    }
    store.call(py, move |s| s.set_retention(r))?;
    retention_dict(py, &r)
}

/// A backup as a dict: id, time, bytes, files.
pub(crate) fn backup_dict<'py>(
    py: Python<'py>,
    b: &simstore::BackupInfo,
) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    d.set_item("id", b.id)?;
    d.set_item("time", b.time)?;
    d.set_item("bytes", b.bytes)?;
    d.set_item("files", b.files)?;
    Ok(d)
}

/// `simstore.restore(backup, path, *, id=None)`: a backup as a new store at `path`
/// (which must not exist), verified and opened before it is put in place. Returns the
/// backup's dict.
#[pyfunction]
#[pyo3(signature = (backup, path, *, id = None))]
pub(crate) fn restore<'py>(
    py: Python<'py>,
    backup: std::path::PathBuf,
    path: std::path::PathBuf,
    id: Option<u32>,
) -> PyResult<Bound<'py, PyDict>> {
    let info = py
        .detach(move || simstore::restore(&backup, id, &path))
        .map_err(|e| crate::errors::to_py(py, e))?;
    backup_dict(py, &info)
}

/// `simstore.list_backups(dest)`: the complete backups in a backup directory, oldest
/// first, as dicts.
#[pyfunction]
pub(crate) fn list_backups<'py>(
    py: Python<'py>,
    dest: std::path::PathBuf,
) -> PyResult<Vec<Bound<'py, PyDict>>> {
    let all = py
        .detach(move || simstore::list_backups(&dest))
        .map_err(|e| crate::errors::to_py(py, e))?;
    all.iter().map(|b| backup_dict(py, b)).collect()
}
