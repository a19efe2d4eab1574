//! Engine errors → Python exceptions: the classes live in `simstore/errors.py` (so that, for
//! example, `InvalidFingerprintError` is also a `ValueError`); the message is the engine's.

use pyo3::prelude::*;
use pyo3::types::PyType;
use simstore::Error;

/// The name of the `simstore.errors` class an engine error is raised as.
fn class_name(e: &Error) -> &'static str {
    match e {
        Error::Locked { .. } => "LockedError",
        Error::NoStore { .. } => "NoStoreError",
        Error::NotAStore { .. } => "NotAStoreError",
        Error::FormatVersion { .. } | Error::SpecMismatch { .. } => "IncompatibleStoreError",
        Error::Corrupt(_) | Error::Stale(_) | Error::Damaged { .. } | Error::DamagedLog { .. } => {
            "CorruptStoreError"
        }
        Error::ReadOnly => "ReadOnlyError",
        Error::InvalidFingerprint { .. } => "InvalidFingerprintError",
        Error::KTooLarge { .. } => "KTooLargeError",
        Error::EmptyDocument => "EmptyDocumentError",
        Error::InvalidId(_)
        | Error::FieldTooLong { .. }
        | Error::InvalidLayout(_)
        | Error::InvalidUrl { .. }
        | Error::TooLarge(_)
        | Error::InvalidArgument(_) => "InvalidArgumentError",
        Error::Storage { .. } | Error::Io(_) | Error::ReplicasBehind { .. } => "StorageError",
        _ => "Error",
    }
}

/// An instance of `simstore.errors.<name>` with `message`. Should the module be missing (a
/// broken install), a `RuntimeError` that says so, with the message.
fn raise(py: Python<'_>, name: &str, message: String) -> PyErr {
    let class = py
        .import("simstore.errors")
        .and_then(|m| m.getattr(name))
        .and_then(|c| c.cast_into::<PyType>().map_err(PyErr::from));
    match class {
        Ok(class) => PyErr::from_type(class, message),
        Err(e) => pyo3::exceptions::PyRuntimeError::new_err(format!(
            "{message} (and simstore.errors.{name} could not be loaded: {e})"
        )),
    }
}

/// The Python exception for an engine error, with the engine's message.
pub(crate) fn to_py(py: Python<'_>, e: Error) -> PyErr {
    raise(py, class_name(&e), e.to_string())
}

/// An `InvalidArgumentError` (also a `ValueError`) for a bad argument caught here.
pub(crate) fn invalid_argument(py: Python<'_>, message: impl Into<String>) -> PyErr {
    raise(py, "InvalidArgumentError", message.into())
}

/// An `InvalidFingerprintError` (also a `ValueError`).
pub(crate) fn invalid_fingerprint(py: Python<'_>, message: impl Into<String>) -> PyErr {
    raise(py, "InvalidFingerprintError", message.into())
}

/// A `ClosedError`: the store was closed.
pub(crate) fn closed(py: Python<'_>, path: &str) -> PyErr {
    raise(
        py,
        "ClosedError",
        format!("the store {path:?} is closed; open it again with simstore.Store({path:?})"),
    )
}

/// A `ForkedError`: a store used in a child of the process that opened it.
pub(crate) fn forked(py: Python<'_>, path: &str, owner: u32, pid: u32) -> PyErr {
    raise(
        py,
        "ForkedError",
        format!(
            "the store {path:?} was opened in process {owner} and cannot be used in process \
             {pid}, a fork of it (the child shares its files but not its threads): open the \
             store after forking, in the child; or use the spawn/forkserver start method \
             of multiprocessing"
        ),
    )
}
