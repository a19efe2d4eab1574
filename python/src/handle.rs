//! The engine store behind a `simstore.Store`: shared by the calls of any number of threads,
//! closed only once no call uses it any more, and never touched by a forked child.
//!
//! A child of `fork()` has a copy of the parent's open store but none of its threads
//! (RocksDB's background threads, the engine's pools), and shares its open files. A write
//! from the child reuses sequence numbers the parent also writes (the next open fails with
//! "Sequence number is being set backwards"); closing the store in the child flushes the
//! child's copy of the memtable and may retire the write-ahead log the parent still appends
//! to (the parent's later acknowledged writes are lost), or hangs waiting for a background
//! thread that does not exist there. So every call checks that it runs in the process that
//! opened the store, and a child's copy of a store is leaked, never closed.

use std::ops::Deref;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard, PoisonError};

use pyo3::prelude::*;

use crate::errors::{closed, forked};

/// The open engine store of one `simstore.Store`.
pub(crate) struct Handle {
    /// The pid of the process that opened the store.
    owner: u32,
    state: Mutex<State>,
    /// Signalled, while a close waits, when a call gives back its reference to the store;
    /// and when a close is over.
    changed: Condvar,
    /// As given, for messages.
    path: String,
}

struct State {
    /// `None` once closed (or while being closed).
    store: Option<Arc<simstore::Store>>,
    /// A close waits for the calls in progress to return.
    closing: bool,
}

/// A call in progress: a reference to the open store, given back when dropped.
pub(crate) struct InCall<'a> {
    handle: &'a Handle,
    /// `None` only once given back, in `drop`.
    store: Option<Arc<simstore::Store>>,
}

impl Handle {
    /// The handle of a store opened by this process.
    pub(crate) fn new(store: simstore::Store, path: String) -> Self {
        Handle {
            owner: current_pid(),
            state: Mutex::new(State {
                store: Some(Arc::new(store)),
                closing: false,
            }),
            changed: Condvar::new(),
            path,
        }
    }

    /// The path or URL the store was opened with.
    pub(crate) fn path(&self) -> &str {
        &self.path
    }

    /// `ForkedError` unless this is the process that opened the store.
    pub(crate) fn check_process(&self, py: Python<'_>) -> PyResult<()> {
        match current_pid() {
            pid if pid == self.owner => Ok(()),
            pid => Err(forked(py, &self.path, self.owner, pid)),
        }
    }

    /// The open store for one call: `ForkedError` in a forked child, `ClosedError` once
    /// closed (or while a close waits for the calls in progress).
    pub(crate) fn acquire(&self, py: Python<'_>) -> PyResult<InCall<'_>> {
        self.check_process(py)?;
        match &self.lock().store {
            Some(store) => Ok(InCall {
                handle: self,
                store: Some(Arc::clone(store)),
            }),
            None => Err(closed(py, &self.path)),
        }
    }

    /// Whether the store is closed (or being closed); `ForkedError` in a forked child.
    pub(crate) fn is_closed(&self, py: Python<'_>) -> PyResult<bool> {
        self.check_process(py)?;
        Ok(self.lock().store.is_none())
    }

    /// Closes the store once the calls in progress in other threads have returned (new calls
    /// raise `ClosedError` meanwhile), with the GIL released while waiting. When this returns
    /// the engine store is dropped and its lock released, also when another thread's close
    /// did it. A no-op when closed; `ForkedError` in a forked child.
    pub(crate) fn close(&self, py: Python<'_>) -> PyResult<()> {
        self.check_process(py)?;
        py.detach(|| {
            let mut state = self.lock();
            let Some(store) = state.store.take() else {
                while state.closing {
                    state = self.wait(state);
                }
                return;
            };
            state.closing = true;
            // Only `InCall`s clone the store, and they give their clone back under the lock.
            while Arc::strong_count(&store) > 1 {
                state = self.wait(state);
            }
            drop(state);
            drop(store); // the last reference: the engine closes the store
            self.lock().closing = false;
            self.changed.notify_all();
        });
        Ok(())
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn wait<'a>(&self, guard: MutexGuard<'a, State>) -> MutexGuard<'a, State> {
        self.changed
            .wait(guard)
            .unwrap_or_else(PoisonError::into_inner)
    }
}

impl Drop for Handle {
    /// In the process that opened it, drops the store (closing it unless a call still holds
    /// it, which cannot be: a call borrows the `Store` object). In a forked child, leaks it.
    fn drop(&mut self) {
        if current_pid() != self.owner {
            let state = self.state.get_mut().unwrap_or_else(PoisonError::into_inner);
            if let Some(store) = state.store.take() {
                std::mem::forget(store);
            }
        }
    }
}

impl Deref for InCall<'_> {
    type Target = simstore::Store;

    fn deref(&self) -> &simstore::Store {
        match &self.store {
            Some(store) => store,
            None => unreachable!("a call gives its store back only when dropped"),
        }
    }
}

impl Drop for InCall<'_> {
    /// Gives the reference back under the lock, so that a waiting close sees it gone.
    fn drop(&mut self) {
        let state = self.handle.lock();
        drop(self.store.take());
        if state.closing {
            self.handle.changed.notify_all();
        }
    }
}

/// This process's pid, as last set by [`track_forks`] (0: not yet).
static PID: AtomicU32 = AtomicU32::new(0);

/// Runs in the child of every `fork()` (`pthread_atfork`), before anything else there.
#[cfg(unix)]
extern "C" fn after_fork_in_child() {
    PID.store(std::process::id(), Ordering::Relaxed);
}

/// Remembers this process's pid, kept up to date in forked children, so that checking the
/// process costs an atomic load instead of a `getpid` system call (~0.1 µs, as much as a
/// third of a short call such as `len(store)`): glibc no longer caches the pid. Should the
/// handler not be registered, [`current_pid`] asks the system every time.
pub(crate) fn track_forks() {
    #[cfg(unix)]
    {
        #[expect(unsafe_code, reason = "registers a fork handler with the C library")]
        // SAFETY: the handler is a plain function that lives as long as the process (the
        // extension module is never unloaded) and only stores an integer.
        let registered = unsafe { libc::pthread_atfork(None, None, Some(after_fork_in_child)) };
        if registered == 0 {
            PID.store(std::process::id(), Ordering::Relaxed);
        }
    }
}

/// The pid of this process.
fn current_pid() -> u32 {
    match PID.load(Ordering::Relaxed) {
        0 => std::process::id(),
        pid => pid,
    }
}
