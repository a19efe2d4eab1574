//! [`RocksOptions`]: what only a RocksDB store is opened with.

use std::path::{Path, PathBuf};

/// Options of the RocksDB backend alone ([`crate::StoreBuilder::rocksdb`]); a Redis Cluster
/// or in-memory store has none of them. Every setter documents its default.
///
/// ```
/// # fn main() -> simstore::Result<()> {
/// use simstore::{RocksOptions, Store};
/// # let dir = tempfile::tempdir()?;
/// let store = Store::builder(dir.path().join("pages.db"))
///     .rocksdb(RocksOptions::new().block_cache_bytes(64 << 20).probe_threads(0))
///     .open()?;
/// # drop(store);
/// # Ok(())
/// # }
/// ```
#[derive(Debug, Clone)]
#[must_use]
pub struct RocksOptions {
    pub(crate) block_cache_bytes: usize,
    pub(crate) probe_threads: Option<usize>,
    pub(crate) secondary: Option<PathBuf>,
}

impl Default for RocksOptions {
    fn default() -> Self {
        Self::new()
    }
}

impl RocksOptions {
    /// The most probe threads a store starts ([`RocksOptions::probe_threads`]): a query
    /// reads fewer spans than this (its tables, probes and bands), so more threads would
    /// only cost memory — tens of thousands ran out of it.
    pub const MAX_PROBE_THREADS: usize = 64;

    /// The defaults.
    pub fn new() -> Self {
        Self {
            block_cache_bytes: 256 << 20,
            probe_threads: None,
            secondary: None,
        }
    }

    /// Size of the block cache shared by all column families. Default: 256 MiB.
    pub fn block_cache_bytes(mut self, bytes: usize) -> Self {
        self.block_cache_bytes = bytes;
        self
    }

    /// Probe a query's tables on `n` threads at once, or with 0 one after another on the
    /// calling thread. Default: automatic — one after another while the probes are fast
    /// (a warm page cache), and at once on 8 threads from the first probe that waited for
    /// the disk until a query none of whose probes read from disk, so that a cold query
    /// waits about one disk read instead of one per table (docs/design.md §5). At most
    /// [`RocksOptions::MAX_PROBE_THREADS`] threads are started: a larger `n` counts as that.
    pub fn probe_threads(mut self, n: usize) -> Self {
        self.probe_threads = Some(n);
        self
    }

    /// Open as a RocksDB *secondary instance* that keeps its own small state (info logs) in
    /// `dir`: read-only, works beside a writer process, and unlike
    /// [`crate::StoreBuilder::read_only`] can follow the writer:
    /// [`crate::Store::try_catch_up`] makes the writes the writer has made since visible.
    /// `dir` must not be the store's directory; it is created if missing. Default: unset
    /// (a normal open).
    pub fn secondary(mut self, dir: impl AsRef<Path>) -> Self {
        self.secondary = Some(dir.as_ref().to_path_buf());
        self
    }
}
