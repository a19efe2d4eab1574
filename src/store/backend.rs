//! The storage seam: the few operations the Manku table logic of [`crate::Store`] needs
//! from a key-value engine, written once over this trait.
//!
//! A store is a set of *spaces* ([`Space`]): `meta` (manifest, counters, protocol
//! markers), `docs` (sequence number → [`StoredDoc`]), `ids` (external id → [`IdValue`]),
//! `exact` (content hash ++ sequence number) and the t permutation tables (permuted
//! fingerprint ++ sequence number, ordered so that a fingerprint prefix is one contiguous
//! range). Values cross the seam as typed values; each backend encodes them with
//! [`crate::store::codec`], the one owner of every byte layout.
//!
//! # Atomicity, and the invariants a backend without it still keeps
//! A backend states its [`Atomicity`]. [`Atomicity::ChangeSet`] (RocksDB's `WriteBatch`,
//! the in-memory backend) applies a [`ChangeSet`] all or nothing. A backend that is
//! atomic only per key ([`Atomicity::PerKey`], e.g. a sharded cluster) must apply the
//! changes **in the order they are listed**, and the logic above lists them so that a
//! crash between any two leaves a store that answers correctly:
//! - a document's table, `exact` and `id` entries are written *before* its `docs` record
//!   (which commits them) — except its `ids` entry, written right after the record;
//! - a delete removes the `docs` record first, then the `ids`, `exact` and table entries;
//! - queries drop candidates whose record is missing (on a [`Atomicity::PerKey`] backend;
//!   on an atomic one a missing record is corruption and is reported);
//! - `check` reports, and `repair` removes, orphans in both directions.
//!
//! # Durability
//! [`Backend::write`] returns only when the change set is as durable as the
//! [`Durability`] asked for.
//!
//! # Optional capabilities
//! Sorted bulk ingest ([`BulkIngest`]) and following a writer from another process are
//! capabilities of some backends (RocksDB: SST ingest, secondary instances);
//! [`Backend::bulk_ingest`] returns `None` elsewhere, and the logic falls back to batched
//! writes; [`Backend::catch_up`] answers `false` where there is no writer to follow.
//!
//! Every method is required: a wrapper (the tests' `hooked.rs`) cannot miss one.

use std::path::{Path, PathBuf};

use crate::error::{Error, Result};
use crate::store::codec::IdValue;
use crate::types::StoredDoc;

/// One of a store's keyspaces.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Space {
    /// Manifest, counters and markers ([`MetaKey`]).
    Meta,
    /// Sequence number → document record.
    Docs,
    /// External id → sequence number, fingerprint and content hash.
    Ids,
    /// Content hash ++ sequence number → nothing.
    Exact,
    /// Permutation table `t`: permuted fingerprint ++ sequence number → nothing.
    Table(usize),
}

/// A backup in a backup directory (`Backend::backup`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BackupInfo {
    /// Its id (increasing; `restore --id`).
    pub id: u32,
    /// When it was taken, seconds since the Unix epoch.
    pub time: u64,
    /// The bytes of its files (shared files count in every backup that has them).
    pub bytes: u64,
    /// Its files.
    pub files: u32,
}

/// The keys of the `meta` space.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum MetaKey {
    /// The encoded [`crate::store::codec::Manifest`].
    Manifest,
    /// The encoded counters (next sequence number, live documents).
    Counters,
    /// Present while a bulk load is under way.
    BulkPending,
    /// Present while a repair is under way.
    RepairPending,
    /// The new manifest, present while a relayout is under way.
    RelayoutPending,
    /// The retention policy ([`crate::store::codec::retention`]).
    Retention,
    /// The timeline mark: from which sequence number stored times never decrease.
    Timeline,
}

/// One change of a [`ChangeSet`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Change {
    /// Sets a meta value (already encoded by the codec).
    PutMeta(MetaKey, Vec<u8>),
    /// Removes a meta value.
    DeleteMeta(MetaKey),
    /// Stores a document record under its sequence number.
    PutDoc(u64, Box<StoredDoc>),
    /// Removes a document record.
    DeleteDoc(u64),
    /// Points an external id at a document.
    PutId(String, IdValue),
    /// Removes an external id.
    DeleteId(String),
    /// Adds an `exact` entry (content hash, sequence number).
    PutExact(u128, u64),
    /// Removes an `exact` entry.
    DeleteExact(u128, u64),
    /// Adds an entry (permuted fingerprint, sequence number) to table `t`.
    PutTable(usize, u64, u64),
    /// Removes an entry from table `t`.
    DeleteTable(usize, u64, u64),
}

/// An ordered list of changes, written by one [`Backend::write`].
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ChangeSet {
    changes: Vec<Change>,
}

impl ChangeSet {
    /// An empty change set.
    pub fn new() -> Self {
        Self::default()
    }

    /// Appends a change (applied after every change before it).
    pub fn push(&mut self, change: Change) {
        self.changes.push(change);
    }

    /// The changes, in the order they must be applied.
    pub fn changes(&self) -> &[Change] {
        &self.changes
    }

    /// True when there is nothing to write.
    pub fn is_empty(&self) -> bool {
        self.changes.is_empty()
    }
}

/// What a backend guarantees of one [`ChangeSet`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Atomicity {
    /// All of a change set or none of it, after any crash.
    ChangeSet,
    /// Each change on its own, in the listed order: a crash can leave a prefix applied.
    PerKey,
}

/// How durable a write is when [`Backend::write`] returns.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Durability {
    /// Survives a crash of the process (a write-ahead log written, not fsynced).
    Process,
    /// Survives power loss and OS crashes (fsynced).
    Synced,
}

/// Work a backend does on its own storage ([`Backend::maintain`]): never needed for
/// correct answers or durability, only for space and speed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Maintenance {
    /// Moves the tables' buffered writes to their durable home (memtables to files), so
    /// that the tombstones of replaced documents can be compacted away; in the background:
    /// the call only starts it.
    FlushTables,
    /// Moves every space's buffered writes to their durable home; returns once done.
    FlushAll,
    /// Gives back the space deletes left behind (an expiry's, say): in the `docs` records
    /// of sequence numbers `docs`, and with `derived` in the tables, `ids` and `exact` too
    /// (whose entries spread over their whole key spaces). RocksDB: manual compactions,
    /// run in the caller's thread; nothing where deletes free space at once.
    Compact {
        /// The sequence numbers of the deleted records.
        docs: std::ops::Range<u64>,
        /// Whether the derived spaces are compacted too.
        derived: bool,
    },
}

/// How consistent a read view must be ([`Backend::snapshot`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Consistency {
    /// Every read sees the same state (checks, exports, dedup, repairs).
    PointInTime,
    /// Queries: the latest state, each table read as of its probe and each record as of
    /// its fetch, where a consistent snapshot costs more than it buys (RocksDB: a snapshot
    /// per query, and an iterator per probe).
    Latest,
}

/// The storage under a [`crate::Store`]. See the module docs for the contract.
pub trait Backend: Send + Sync {
    /// What the backend is and guarantees, fixed while it is open.
    fn properties(&self) -> Properties;

    /// What the backend takes, read now (for `stats` and `/metrics`).
    fn usage(&self) -> Usage;

    /// Applies `changes` (in order; atomically when [`Properties::atomicity`] says so) and
    /// returns once they are as durable as `durability` asks.
    fn write(&self, changes: &ChangeSet, durability: Durability) -> Result<()>;

    /// A read view as of now, of the consistency asked for: every write acknowledged
    /// before the call is seen. [`Consistency::Latest`] may be answered with a consistent
    /// view ([`Properties::latest_is_consistent`]).
    fn snapshot(&self, consistency: Consistency) -> Box<dyn Snapshot + '_>;

    /// A number that changes with every write (a sequence number or a version), for
    /// check-and-insert's optimistic retry: equal before and after means no write came in
    /// between. It moves only once a write's changes are visible to reads (or the write
    /// failed), never before: a reader that took it before a write and read during it
    /// (seeing none or part of the changes) finds it moved afterwards.
    fn version(&self) -> u64;

    /// Checks that the backend holds the manifest's tables, one for each of
    /// `prefix_bits` (table `t`'s prefix length in bits, which a backend may group its
    /// entries by), and addresses those from now on. A missing table is
    /// [`crate::Error::Corrupt`].
    fn attach_tables(&mut self, prefix_bits: &[u32]) -> Result<()>;

    /// What a repair rebuilds from: first rewrites `docs` without the records in
    /// `unreadable` (inclusive ranges of sequence numbers a read met damage in), so that no
    /// later read or compaction meets the damage again, every other record kept
    /// (crash-safe); then drops the derived spaces — every table, `ids` and `exact` — and
    /// creates them empty, one table for each of `prefix_bits`. Reads nothing of what it
    /// drops, so damage there cannot stop it; a space missing (a reset cut short) is
    /// created.
    fn reset_derived(&mut self, prefix_bits: &[u32], unreadable: &[(u64, u64)]) -> Result<()>;

    /// Does `work` ([`Maintenance`]).
    fn maintain(&self, work: Maintenance) -> Result<()>;

    /// Takes an online backup into directory `dest`: a consistent point in time (every
    /// change set written before it is in it, none in part), incremental where the engine
    /// shares unchanged files; keeps the newest `keep` there. [`Error::Unsupported`] where
    /// the engine has its own ([`no_backups`]).
    fn backup(&self, dest: &Path, keep: Option<usize>) -> Result<BackupInfo>;

    /// Sorted bulk ingest, if the backend has it.
    fn bulk_ingest(&self) -> Option<&dyn BulkIngest>;

    /// Makes the writes another process made since opening (or the last catch-up) visible
    /// to snapshots taken afterwards, when this backend was opened to follow a writer
    /// (RocksDB: a secondary instance): `Ok(true)`. Snapshots never see half of a catch-up.
    /// `Ok(false)`: this backend follows no writer.
    fn catch_up(&self) -> Result<bool>;

    /// Counters and claims kept by the backend for every process that writes the store,
    /// when many processes may write it at once (a cluster). `None`: one writer process at
    /// a time, which keeps the counters itself and writes them in each change set.
    fn shared(&self) -> Option<&dyn Shared>;
}

/// The answer of a backend that takes no backups of its own ([`Backend::backup`]).
pub fn no_backups() -> Error {
    Error::Unsupported(
        "this store's backend takes no backups: back a Redis Cluster store up with \
         Redis's own RDB/AOF per node, or copy it into a local store (Store::for_each_doc \
         into Store::insert_batch) and back that up (docs/scaling.md)"
            .into(),
    )
}

/// What a backend is and guarantees ([`Backend::properties`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Properties {
    /// What one [`Backend::write`] guarantees.
    pub atomicity: Atomicity,
    /// True when a failed write may leave the backend refusing writes until it is opened
    /// again (RocksDB stops writing after an I/O error), so that a long-running writer
    /// (`serve`) should stop taking them; false where a failure is the storage service's
    /// and may pass (a cluster unreachable for longer than its retries).
    pub failed_write_lasts: bool,
    /// On a backend whose servers replicate each other (Redis Cluster): how many replicas
    /// of every master a write waits for before it returns (`WAIT`; 0: none). There,
    /// durability on disk is the servers' own setting, not [`Durability`]. `None`: a local
    /// store, durable as [`Durability`] says.
    pub replicas_ack: Option<u32>,
    /// The oldest store format ([`crate::store::codec::FORMAT_VERSION`]) this backend
    /// reads: its own layout of the spaces changed then.
    pub oldest_format: u32,
    /// True when a [`Consistency::Latest`] view is consistent too (every read sees the
    /// same state). Where it is not, a table entry whose record is missing by the time it
    /// is fetched is a document deleted (or replaced) since, not an inconsistency.
    pub latest_is_consistent: bool,
    /// True when [`Snapshot::scan_ids`] gives the ids in their byte order and
    /// [`Snapshot::scan_docs`] the records in sequence order (false: hash buckets).
    pub scans_in_order: bool,
}

impl Properties {
    /// A local backend of `atomicity` that reads every format since the oldest manifest
    /// and whose failed writes last.
    pub fn local(atomicity: Atomicity) -> Properties {
        Properties {
            atomicity,
            failed_write_lasts: true,
            replicas_ack: None,
            oldest_format: crate::store::codec::OLDEST_READABLE,
            latest_is_consistent: true,
            scans_in_order: true,
        }
    }
}

/// What a backend takes ([`Backend::usage`]).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Usage {
    /// Bytes the store takes on disk (0 when it is not on a local disk).
    pub disk_bytes: u64,
    /// Memory the backend's servers use, when it keeps the store in their memory (Redis).
    pub memory_bytes: Option<u64>,
    /// Bytes on disk that deletes and replacements left behind, not yet compacted away (an
    /// estimate; `None` where the backend cannot say).
    pub reclaimable_bytes: Option<u64>,
    /// The engine's own figures for monitoring (RocksDB: memtables, block cache, pending
    /// compaction, SST files per column family).
    pub metrics: Vec<EngineMetric>,
}

/// One figure of a storage engine, for `/metrics`: a gauge.
#[derive(Debug, Clone, PartialEq)]
pub struct EngineMetric {
    /// Its name, e.g. `simstore_rocksdb_memtable_bytes` (the same for every label set).
    pub name: &'static str,
    /// What it measures, in a sentence (Prometheus' `# HELP`).
    pub help: &'static str,
    /// Its labels, e.g. `[("cf", "docs")]`.
    pub labels: Vec<(&'static str, String)>,
    /// Its value now.
    pub value: f64,
}

/// What a backend written by many processes at once keeps for all of them.
pub trait Shared: Sync {
    /// Reserves `n` sequence numbers no other process will use; returns the first.
    fn reserve_seqs(&self, n: u64) -> Result<u64>;

    /// Adds `delta` to the count of live documents.
    fn add_live(&self, delta: i64) -> Result<()>;

    /// The counters as now: (next unreserved sequence number, live documents).
    fn counters(&self) -> Result<(u64, u64)>;

    /// Claims content hash `hash` for document `seq`, atomically: when no `exact` entry of
    /// the hash exists (or only the one of `stale`, a claim whose document never came,
    /// which is removed), adds `(hash, seq)` and returns `None`; otherwise returns the
    /// sequence number of the first entry, whose claim stands.
    fn claim_exact(&self, hash: u128, seq: u64, stale: Option<u64>) -> Result<Option<u64>>;
}

/// Reads from one consistent view of a backend. Scans call `each` in key order until it
/// returns `false` (stop) or an error (returned as is); entries that cannot be decoded are
/// passed on as errors, so `check` can report them and go on.
pub trait Snapshot: Sync {
    /// A meta value.
    fn meta(&self, key: MetaKey) -> Result<Option<Vec<u8>>>;

    /// The `ids` entries of `ids`, in order.
    fn ids(&self, ids: &[&str]) -> Result<Vec<Option<IdValue>>>;

    /// The document records of `seqs`, in order.
    fn docs(&self, seqs: &[u64]) -> Result<Vec<Option<StoredDoc>>>;

    /// The table entries `(permuted fingerprint, seq)` of each span, in key order within
    /// a span, calling `each(span index, entry)`; `false` from `each` ends that span's scan
    /// only. Entries a span's [`Span::near`] leaves out may be skipped. A backend with
    /// round trips reads them all in one; one with threads may read them at once.
    fn scan_spans(
        &self,
        spans: &[Span],
        each: &mut dyn FnMut(usize, Result<(u64, u64)>) -> Result<bool>,
    ) -> Result<()>;

    /// The smallest sequence number stored under content hash `hash`.
    fn first_exact(&self, hash: u128) -> Result<Option<u64>>;

    /// Every `exact` entry `(content hash, seq)`.
    fn scan_exact(&self, each: &mut dyn FnMut(Result<(u128, u64)>) -> Result<bool>) -> Result<()>;

    /// The document records with sequence number ≥ `from`. A record that cannot be decoded
    /// comes as an error, with its raw key.
    fn scan_docs(&self, from: u64, each: &mut dyn FnMut(DocItem<'_>) -> Result<bool>)
    -> Result<()>;

    /// Every `ids` entry: the id's bytes and its decoded value.
    fn scan_ids(&self, each: &mut dyn FnMut(IdItem<'_>) -> Result<bool>) -> Result<()>;
}

impl dyn Snapshot + '_ {
    /// Table `t`'s entries `(permuted fingerprint, seq)` with `lo ≤ permuted < hi`
    /// (`hi = None`: no upper bound): [`Snapshot::scan_spans`] of one span.
    pub fn scan_table(
        &self,
        t: usize,
        lo: u64,
        hi: Option<u64>,
        each: &mut dyn FnMut(Result<(u64, u64)>) -> Result<bool>,
    ) -> Result<()> {
        self.scan_spans(&[Span::new(t, lo, hi)], &mut |_, e| each(e))
    }
}

/// A range of one table: entries with `lo ≤ permuted < hi` (`hi = None`: no upper bound).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Span {
    /// The table.
    pub table: usize,
    /// The first permuted fingerprint in the span.
    pub lo: u64,
    /// The first permuted fingerprint past the span.
    pub hi: Option<u64>,
    /// The entries the reader wants, when not all: a backend may leave out those farther
    /// from a permuted query than a distance (and one that does not filter passes them on:
    /// the reader checks again).
    pub near: Option<Near>,
}

impl Span {
    /// The span `lo..hi` of table `table`, every entry wanted.
    pub fn new(table: usize, lo: u64, hi: Option<u64>) -> Span {
        Span {
            table,
            lo,
            hi,
            near: None,
        }
    }
}

/// The entries of a [`Span`] a query wants: those within `within` bits of `permuted` (the
/// query's fingerprint in the table's permutation).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Near {
    /// The query, permuted as the table's keys are.
    pub permuted: u64,
    /// The largest Hamming distance wanted.
    pub within: u32,
}

impl Near {
    /// True when `permuted` is wanted.
    #[inline]
    pub fn wants(&self, permuted: u64) -> bool {
        (permuted ^ self.permuted).count_ones() <= self.within
    }
}

/// One entry of [`Snapshot::scan_docs`]: the raw key, and the decoded sequence number and
/// record (or why they could not be decoded).
pub type DocItem<'a> = (&'a [u8], Result<(u64, StoredDoc)>);

/// One entry of [`Snapshot::scan_ids`]: the id's bytes and its decoded value.
pub type IdItem<'a> = (&'a [u8], Result<IdValue>);

/// Sorted bulk ingest (RocksDB: SST files written in key order, then ingested; Redis
/// Cluster: one variadic command per bucket, written at once).
pub trait BulkIngest: Sync {
    /// A writer of one space's entries, to be given in key order. Entries go to a staging
    /// area and nothing is visible until [`BulkIngest::ingest`] — or, on a backend without
    /// one (Redis), they are written as they come, while the bulk-load marker is set.
    fn sorted_writer(&self, space: Space) -> Result<Box<dyn SortedWriter + '_>>;

    /// Makes the staged runs visible, `docs` first, then `ids`, `exact` and the tables (so
    /// that a reader never meets an entry whose document is not there yet).
    fn ingest(&self, runs: Vec<SortedRun>) -> Result<()>;

    /// Removes whatever a failed or interrupted bulk load left in the staging area.
    fn discard_staged(&self);

    /// Where the backend stages runs, and where a load spills its sorts.
    fn staging(&self) -> Staging;
}

/// Where a [`BulkIngest`] backend stages a load ([`BulkIngest::staging`]).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Staging {
    /// True when staged runs stay out of sight until [`BulkIngest::ingest`] (a staging
    /// area), so that a load failing before it is undone by [`BulkIngest::discard_staged`];
    /// false when runs are visible as they are written (a failed load is left for a
    /// repair).
    pub isolated: bool,
    /// Where a bulk load puts the temporary files of its external sorts (a directory of
    /// its own is made in it and removed afterwards); `None`: the system's temporary
    /// directory.
    pub spill_dir: Option<PathBuf>,
}

/// A staged, sorted run of one space, from [`SortedWriter::finish`]: what the backend
/// staged (a file, say) is its own business.
pub struct SortedRun {
    space: Space,
    staged: Box<dyn std::any::Any + Send>,
}

impl SortedRun {
    /// A run of `space`, staged as `staged`.
    pub fn new(space: Space, staged: impl std::any::Any + Send) -> Self {
        Self {
            space,
            staged: Box::new(staged),
        }
    }

    /// The space it belongs to.
    pub fn space(&self) -> Space {
        self.space
    }

    /// What the backend staged, if it is a `T`.
    pub fn into_staged<T: 'static>(self) -> Option<T> {
        self.staged.downcast().ok().map(|b| *b)
    }
}

impl std::fmt::Debug for SortedRun {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SortedRun")
            .field("space", &self.space)
            .finish()
    }
}

/// One entry of a sorted run ([`SortedWriter::put`]), of the writer's space.
#[derive(Debug, Clone, Copy)]
pub enum SortedEntry<'a> {
    /// A document record (sequence numbers ascending).
    Doc(u64, &'a StoredDoc),
    /// An `ids` entry (ids ascending, bytewise).
    Id(&'a str, IdValue),
    /// An `exact` entry (ascending).
    Exact(u128, u64),
    /// A table entry: permuted fingerprint, sequence number (ascending).
    Table(u64, u64),
}

/// Writes one space's entries in key order (see [`BulkIngest::sorted_writer`]).
pub trait SortedWriter: Send {
    /// Adds an entry of the writer's space (an entry of another is an error).
    fn put(&mut self, entry: SortedEntry<'_>) -> Result<()>;
    /// Finishes the run; `None` when nothing was added (or nothing is staged).
    fn finish(self: Box<Self>) -> Result<Option<SortedRun>>;
}
