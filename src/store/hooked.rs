//! Tests only: a backend that delegates to another and calls the test's hooks first, to
//! inject a failure or hold a call at a chosen point.

use crate::error::Result;
use crate::store::backend::{
    Backend, BackupInfo, BulkIngest, ChangeSet, Consistency, DocItem, Durability, IdItem,
    Maintenance, MetaKey, Properties, Shared, Snapshot, SortedRun, SortedWriter, Space, Span,
    Staging, Usage,
};
use crate::store::codec::IdValue;
use crate::types::StoredDoc;

type WriteHook = Box<dyn Fn(&ChangeSet) -> Result<()> + Send + Sync>;
type FlushHook = Box<dyn Fn() + Send + Sync>;
type DocsHook = Box<dyn Fn(usize) + Send + Sync>;
type IngestHook = Box<dyn Fn(&dyn BulkIngest, Vec<SortedRun>) -> Result<()> + Send + Sync>;

/// `inner`, with hooks run before its writes and flushes and in place of its ingest.
pub(super) struct Hooked {
    inner: Box<dyn Backend>,
    /// Runs before each write; an error fails the write (nothing written).
    pub(super) on_write: WriteHook,
    /// Runs before each flush.
    pub(super) on_flush: FlushHook,
    /// Ingests the runs through `inner`'s ingest (given).
    pub(super) on_ingest: IngestHook,
    /// When set, a [`Consistency::Latest`] view reads each as of its call (as RocksDB's
    /// does) and runs this hook after each [`Snapshot::first_exact`].
    pub(super) after_first_exact: Option<FlushHook>,
    /// When set, a [`Consistency::Latest`] view reads each as of its call and runs this
    /// hook with the number of records each [`Snapshot::docs`] asks for.
    pub(super) on_docs: Option<DocsHook>,
}

impl Hooked {
    /// `inner` with hooks that do nothing more.
    pub(super) fn new(inner: Box<dyn Backend>) -> Self {
        Self {
            inner,
            on_write: Box::new(|_| Ok(())),
            on_flush: Box::new(|| ()),
            on_ingest: Box::new(|ingest, runs| ingest.ingest(runs)),
            after_first_exact: None,
            on_docs: None,
        }
    }

    /// Whether a latest-state view is a [`LiveView`] (a hook of one is set).
    fn live(&self) -> bool {
        self.after_first_exact.is_some() || self.on_docs.is_some()
    }

    fn inner_ingest(&self) -> &dyn BulkIngest {
        self.inner
            .bulk_ingest()
            .expect("only called when the inner backend ingests")
    }
}

impl Backend for Hooked {
    fn properties(&self) -> Properties {
        let inner = self.inner.properties();
        Properties {
            latest_is_consistent: !self.live() && inner.latest_is_consistent,
            ..inner
        }
    }
    fn usage(&self) -> Usage {
        self.inner.usage()
    }
    fn write(&self, changes: &ChangeSet, durability: Durability) -> Result<()> {
        (self.on_write)(changes)?;
        self.inner.write(changes, durability)
    }
    fn snapshot(&self, consistency: Consistency) -> Box<dyn Snapshot + '_> {
        match consistency {
            Consistency::Latest if self.live() => Box::new(LiveView { backend: self }),
            _ => self.inner.snapshot(consistency),
        }
    }
    fn version(&self) -> u64 {
        self.inner.version()
    }
    fn attach_tables(&mut self, prefix_bits: &[u32]) -> Result<()> {
        self.inner.attach_tables(prefix_bits)
    }
    fn reset_derived(&mut self, prefix_bits: &[u32], unreadable: &[(u64, u64)]) -> Result<()> {
        self.inner.reset_derived(prefix_bits, unreadable)
    }
    fn maintain(&self, work: Maintenance) -> Result<()> {
        if matches!(work, Maintenance::FlushTables | Maintenance::FlushAll) {
            (self.on_flush)();
        }
        self.inner.maintain(work)
    }
    fn backup(&self, dest: &std::path::Path, keep: Option<usize>) -> Result<BackupInfo> {
        self.inner.backup(dest, keep)
    }
    fn bulk_ingest(&self) -> Option<&dyn BulkIngest> {
        self.inner.bulk_ingest().map(|_| self as &dyn BulkIngest)
    }
    fn catch_up(&self) -> Result<bool> {
        self.inner.catch_up()
    }
    fn shared(&self) -> Option<&dyn Shared> {
        self.inner.shared()
    }
}

impl BulkIngest for Hooked {
    fn sorted_writer(&self, space: Space) -> Result<Box<dyn SortedWriter + '_>> {
        self.inner_ingest().sorted_writer(space)
    }
    fn ingest(&self, runs: Vec<SortedRun>) -> Result<()> {
        (self.on_ingest)(self.inner_ingest(), runs)
    }
    fn discard_staged(&self) {
        self.inner_ingest().discard_staged()
    }
    fn staging(&self) -> Staging {
        self.inner_ingest().staging()
    }
}

/// A latest-state view of a [`Hooked`] backend: each read through a snapshot of its own.
struct LiveView<'a> {
    backend: &'a Hooked,
}

impl LiveView<'_> {
    fn now(&self) -> Box<dyn Snapshot + '_> {
        self.backend.inner.snapshot(Consistency::PointInTime)
    }
}

impl Snapshot for LiveView<'_> {
    fn meta(&self, key: MetaKey) -> Result<Option<Vec<u8>>> {
        self.now().meta(key)
    }
    fn ids(&self, ids: &[&str]) -> Result<Vec<Option<IdValue>>> {
        self.now().ids(ids)
    }
    fn docs(&self, seqs: &[u64]) -> Result<Vec<Option<StoredDoc>>> {
        if let Some(hook) = &self.backend.on_docs {
            hook(seqs.len());
        }
        self.now().docs(seqs)
    }
    fn first_exact(&self, hash: u128) -> Result<Option<u64>> {
        let found = self.now().first_exact(hash);
        if let Some(hook) = &self.backend.after_first_exact {
            hook();
        }
        found
    }
    fn scan_exact(&self, each: &mut dyn FnMut(Result<(u128, u64)>) -> Result<bool>) -> Result<()> {
        self.now().scan_exact(each)
    }
    fn scan_docs(
        &self,
        from: u64,
        each: &mut dyn FnMut(DocItem<'_>) -> Result<bool>,
    ) -> Result<()> {
        self.now().scan_docs(from, each)
    }
    fn scan_ids(&self, each: &mut dyn FnMut(IdItem<'_>) -> Result<bool>) -> Result<()> {
        self.now().scan_ids(each)
    }
    fn scan_spans(
        &self,
        spans: &[Span],
        each: &mut dyn FnMut(usize, Result<(u64, u64)>) -> Result<bool>,
    ) -> Result<()> {
        self.now().scan_spans(spans, each)
    }
}
