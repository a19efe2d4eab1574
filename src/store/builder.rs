//! [`StoreBuilder`]: options, and opening a store over a backend — creating it, or reading
//! its manifest and finishing what a crash interrupted (a relayout, a bulk load).

use std::path::{Path, PathBuf};
use std::sync::Mutex;

use super::backend::{Backend, Change, ChangeSet, Consistency, Durability, MetaKey};
use super::codec::{self, Manifest};
use super::memory::MemoryBackend;
use super::rocks::{self, OpenMode, RocksOptions};
use super::salvage::{RepairReport, SalvageReport};
use super::{Counters, Store, now};
use crate::error::{Error, Result};
use crate::index::layout::Layout;
use crate::index::quality::Quality;
use crate::text::fingerprint::{FingerprintSpec, Fingerprinter};

/// Options for creating or opening a [`Store`]. Every setter documents its default.
///
/// Layout options (`k_max`, `expected_docs`, `blocks`) only matter when the store is
/// created; an existing store keeps the layout in its manifest.
///
/// ```
/// # fn main() -> simstore::Result<()> {
/// use simstore::{Quality, Store};
/// # let dir = tempfile::tempdir()?;
/// let store = Store::builder(dir.path().join("pages.db"))
///     .quality(Quality::High)      // more recall, at more cost a query
///     .expected_docs(50_000_000)   // chooses the table layout
///     .sync_writes(true)           // every acknowledged write survives a power loss
///     .open()?;
/// assert_eq!(store.quality(), Quality::High);
/// # Ok(())
/// # }
/// ```
#[derive(Debug, Clone)]
#[must_use]
pub struct StoreBuilder {
    path: PathBuf,
    in_memory: bool,
    create_if_missing: bool,
    k_max: Option<u32>,
    quality: Quality,
    expected_docs: u64,
    blocks: Option<u32>,
    lead: Option<u32>,
    layout: Option<Layout>,
    sync_writes: bool,
    rocks: RocksOptions,
    read_only: bool,
    bulk_memory: usize,
}

impl StoreBuilder {
    /// Options for the store at `path` (a directory), kept in RocksDB.
    pub fn new(path: impl AsRef<Path>) -> Self {
        Self {
            path: path.as_ref().to_path_buf(),
            in_memory: false,
            create_if_missing: true,
            k_max: None,
            quality: Quality::Standard,
            expected_docs: 1_000_000,
            blocks: None,
            lead: None,
            layout: None,
            sync_writes: false,
            rocks: RocksOptions::new(),
            read_only: false,
            bulk_memory: super::bulk::DEFAULT_BULK_MEMORY,
        }
    }

    /// Options for a new store kept in memory only: the same logic and answers as a
    /// RocksDB store, nothing persisted (for tests and one-off deduplication). Its
    /// [`Store::path`] is empty; `read_only`, `sync_writes` and [`RocksOptions`] do not
    /// apply.
    pub fn in_memory() -> Self {
        Self {
            in_memory: true,
            ..Self::new("")
        }
    }

    /// Create the store when `path` does not exist (or is an empty directory).
    /// Default: `true`.
    pub fn create_if_missing(mut self, yes: bool) -> Self {
        self.create_if_missing = yes;
        self
    }

    /// The largest Hamming distance queries answer exactly (from the tables).
    /// Default: the quality mode's ([`Quality::k_max`]: 3 in the standard mode). Only
    /// used when creating.
    pub fn k_max(mut self, k_max: u32) -> Self {
        self.k_max = Some(k_max);
        self
    }

    /// The quality mode, recorded in the store: what queries and checks given no k count
    /// as a near duplicate ([`Quality::rule`]), and the default `k_max`. Default:
    /// [`Quality::Standard`]. Only used when creating.
    pub fn quality(mut self, quality: Quality) -> Self {
        self.quality = quality;
        self
    }

    /// How many documents the store is expected to hold; picks the layout: the quality
    /// mode's ([`Quality::layout`]), or with an explicit `k_max` the rule of
    /// [`Layout::for_expected_docs`]. Default: 1,000,000 (standard mode: 4 tables of 13-bit
    /// prefixes, each leading with one of 5 blocks). Only used when creating, and not when
    /// [`StoreBuilder::blocks`] is set.
    pub fn expected_docs(mut self, n: u64) -> Self {
        self.expected_docs = n;
        self
    }

    /// Force the number of blocks (must exceed `k_max`; the store gets C(b, k_max) tables,
    /// or a covering with [`StoreBuilder::lead_blocks`]). Default: unset, chosen from
    /// [`StoreBuilder::expected_docs`]. Only used when creating.
    pub fn blocks(mut self, blocks: u32) -> Self {
        self.blocks = Some(blocks);
        self
    }

    /// With [`StoreBuilder::blocks`]: the blocks every table leads with (1 to
    /// `blocks − k_max`; [`Layout::covering`]). Default: `blocks − k_max` (Manku's layout).
    pub fn lead_blocks(mut self, lead: u32) -> Self {
        self.lead = Some(lead);
        self
    }

    /// Create the store with exactly this layout (e.g. another store's, [`Store::layout`],
    /// to copy it as it is) instead of choosing one; `k_max`, `expected_docs`, `blocks` and
    /// `lead_blocks` are then not used. Default: unset. Only used when creating.
    pub fn with_layout(mut self, layout: Layout) -> Self {
        self.layout = Some(layout);
        self
    }

    /// fsync the write-ahead log before acknowledging each write, so acknowledged writes
    /// survive power loss and OS crashes, not only a crash of the process. Default: `false`
    /// (acknowledged writes survive `kill -9` of the process).
    pub fn sync_writes(mut self, yes: bool) -> Self {
        self.sync_writes = yes;
        self
    }

    /// Open read-only: queries only, and no lock is taken, so it works beside a writer
    /// process (seeing the data as of opening). Default: `false`.
    pub fn read_only(mut self, yes: bool) -> Self {
        self.read_only = yes;
        self
    }

    /// The options of a RocksDB store ([`RocksOptions`]): block cache, probe threads,
    /// secondary instance. Default: [`RocksOptions::new`].
    pub fn rocksdb(mut self, options: RocksOptions) -> Self {
        self.rocks = options;
        self
    }

    /// Memory the sorts of a bulk load ([`Store::bulk_load`]) may use, in bytes; beyond it
    /// they spill sorted runs to temporary files (RocksDB: under the store's directory) and
    /// merge them. The table keys (12 bytes a document) skip the external sort when they
    /// fit, and the tables are made side by side when a copy per core fits: at the default,
    /// 256 MiB, up to ~18M and ~11M documents.
    pub fn bulk_memory_bytes(mut self, bytes: usize) -> Self {
        self.bulk_memory = bytes;
        self
    }

    /// True for read-only and secondary opens.
    pub(super) fn is_reader(&self) -> bool {
        self.read_only || self.rocks.secondary.is_some()
    }

    pub(super) fn path(&self) -> &Path {
        &self.path
    }

    pub(super) fn syncs_writes(&self) -> bool {
        self.sync_writes
    }

    pub(super) fn bulk_budget(&self) -> usize {
        self.bulk_memory
    }

    /// The layout a new store would get from these options.
    pub fn layout(&self) -> Result<Layout> {
        if let Some(layout) = &self.layout {
            return Ok(layout.clone());
        }
        self.quality
            .choose_layout(self.k_max, self.blocks, self.lead, self.expected_docs)
    }

    /// The tables a backend for a new store of these options holds: the layout's
    /// permutation tables and the mode's band tables ([`Quality::bands`]), for the tests
    /// that wrap a backend of their own.
    #[cfg(test)]
    pub(crate) fn backend_tables(&self) -> Result<usize> {
        Ok(self.layout()?.tables().len() + self.quality.bands() as usize)
    }

    /// Opens the store, creating it if allowed and missing.
    ///
    /// Errors: [`Error::NoStore`] (missing and not allowed to create), [`Error::NotAStore`]
    /// (the path holds something else), [`Error::Locked`] (another writer has it open),
    /// [`Error::FormatVersion`] / [`Error::SpecMismatch`] (written by another version),
    /// [`Error::InvalidLayout`] (bad layout options when creating).
    pub fn open(self) -> Result<Store> {
        if self.is_redis() {
            return self.open_redis();
        }
        if self.in_memory {
            let layout = self.layout()?;
            let backend = MemoryBackend::new(layout.tables().len() + self.quality.bands() as usize);
            return Store::create(Box::new(backend), self, layout);
        }
        let mode = match (&self.rocks.secondary, self.read_only) {
            (Some(dir), _) => OpenMode::Secondary(dir.clone()),
            (None, true) => OpenMode::ReadOnly,
            (None, false) => OpenMode::Writer,
        };
        match rocks::open(&self.path, &mode, self.rocks.block_cache_bytes)? {
            Some(mut backend) => {
                backend.set_probe_threads(self.rocks.probe_threads)?;
                Store::open_existing(Box::new(backend), self)
            }
            None if self.create_if_missing && mode == OpenMode::Writer => {
                // The layout is checked before anything is created on disk. The database is
                // built with its manifest beside the path and renamed into place, so a
                // process killed midway leaves no half-created store; the store is then read
                // back like any other (another process may have created it first).
                let manifest = Store::new_manifest(self.layout()?, self.quality);
                let tables = manifest.tables();
                let changes = Store::creation(&manifest);
                let mut backend =
                    rocks::create(&self.path, tables, self.rocks.block_cache_bytes, |b| {
                        b.write(&changes, Durability::Synced)
                    })?;
                backend.set_probe_threads(self.rocks.probe_threads)?;
                Store::open_existing(Box::new(backend), self)
            }
            None => Err(Error::NoStore { path: self.path }),
        }
    }
}

impl StoreBuilder {
    /// Opens the store for writing and repairs it ([`Store::repair`]) before anything else
    /// runs on it. On RocksDB no automatic compaction runs until the damaged files are gone
    /// (one that read a damaged file would stop every write, the repair's too), so this is
    /// the way to repair a store with damaged files; a Redis or in-memory store is opened
    /// and repaired as usual.
    pub fn repair(self) -> Result<(Store, RepairReport)> {
        if self.in_memory || self.is_redis() {
            let mut store = self.create_if_missing(false).open()?;
            let report = store.repair()?;
            return Ok((store, report));
        }
        self.open_for_repair(false)
            .map(|(store, r)| (store, r.repair))
    }

    /// Opens a damaged RocksDB store for writing and keeps what can be read: what
    /// [`StoreBuilder::open`] refuses with [`Error::DamagedLog`] or [`Error::Damaged`].
    /// A MANIFEST that does not read (or a missing CURRENT) is rebuilt from the store's
    /// files (RocksDB's repair); the write-ahead log is replayed dropping its damaged
    /// records (their writes are lost, every intact one is kept); then the derived data is
    /// rebuilt from the documents as [`StoreBuilder::repair`] does. The report counts what
    /// was lost. On a sound store it is a plain repair. Not for a Redis or in-memory store.
    pub fn salvage(self) -> Result<(Store, SalvageReport)> {
        if self.in_memory || self.is_redis() {
            return Err(Error::Unsupported(
                "only a RocksDB store can be salvaged (Redis keeps its own files)".into(),
            ));
        }
        self.open_for_repair(true)
    }

    /// [`StoreBuilder::repair`] and [`StoreBuilder::salvage`] of a RocksDB store.
    fn open_for_repair(self, salvage: bool) -> Result<(Store, SalvageReport)> {
        if self.is_reader() {
            return Err(Error::ReadOnly);
        }
        let log = match salvage {
            true => rocks::log_damage(&self.path)?,
            false => Default::default(),
        };
        let mode = OpenMode::Repair { salvage };
        let Some(mut backend) = rocks::open(&self.path, &mode, self.rocks.block_cache_bytes)?
        else {
            return Err(Error::NoStore { path: self.path });
        };
        backend.set_probe_threads(self.rocks.probe_threads)?;
        let mut store = Store::open_existing(Box::new(backend), self)?;
        let repair = store.repair()?;
        Ok((store, SalvageReport { log, repair }))
    }

    /// Whether the path names a Redis Cluster store (`redis://...`).
    fn is_redis(&self) -> bool {
        self.path
            .to_str()
            .is_some_and(|s| s.starts_with(super::REDIS_SCHEME))
    }

    /// A Redis Cluster store in a build without the `redis` feature: refused.
    #[cfg(not(feature = "redis"))]
    fn open_redis(self) -> Result<Store> {
        Err(Error::Unsupported(format!(
            "{} is a Redis Cluster store: this build of simstore has no Redis backend \
             (enable the crate's `redis` feature)",
            self.path.display()
        )))
    }

    /// Opens (or creates, if allowed) the store named by the path's URL on its cluster.
    #[cfg(feature = "redis")]
    fn open_redis(self) -> Result<Store> {
        use super::redis::{Opened, RedisBackend, RedisUrl};
        let url = RedisUrl::parse(&self.path.to_string_lossy())?;
        let backend = match RedisBackend::connect(&url, url.replicas_ack)? {
            Opened::Existing(b) => b,
            Opened::Missing(b) => {
                if let Some(reason) = b.remnants()? {
                    let path = self.path;
                    return Err(Error::NotAStore { path, reason });
                }
                if !self.create_if_missing || self.is_reader() {
                    return Err(Error::NoStore { path: self.path });
                }
                let manifest = Store::new_manifest(self.layout()?, self.quality);
                b.create(&codec::encode_manifest(&manifest), self.expected_docs)?
            }
        };
        Store::open_existing(Box::new(backend), self)
    }
}

/// What the `meta` space of an existing store holds.
struct MetaState {
    manifest: Option<Vec<u8>>,
    counters: Option<Vec<u8>>,
    relayout: Option<Vec<u8>>,
    bulk_pending: bool,
    repair_pending: bool,
}

impl MetaState {
    /// What was interrupted and left for a writer to finish, if anything ("a bulk load
    /// into", "a repair of"; a relayout is refused to readers earlier).
    fn interrupted(&self) -> Option<&'static str> {
        if self.bulk_pending {
            Some("a bulk load into")
        } else if self.repair_pending {
            Some("a repair of")
        } else {
            None
        }
    }

    fn read(backend: &dyn Backend) -> Result<Self> {
        let snap = backend.snapshot(Consistency::PointInTime);
        Ok(MetaState {
            manifest: snap.meta(MetaKey::Manifest)?,
            counters: snap.meta(MetaKey::Counters)?,
            relayout: snap.meta(MetaKey::RelayoutPending)?,
            bulk_pending: snap.meta(MetaKey::BulkPending)?.is_some(),
            repair_pending: snap.meta(MetaKey::RepairPending)?.is_some(),
        })
    }
}

impl Store {
    fn assemble(
        backend: Box<dyn Backend>,
        options: StoreBuilder,
        manifest: Manifest,
        format: u32,
        (next_seq, live): (u64, u64),
    ) -> Store {
        Store {
            backend,
            manifest,
            format,
            fingerprinter: Fingerprinter::new(),
            counters: Mutex::new(Counters {
                next_seq,
                live,
                reserved_end: 0,
                churn: 0,
                flush_due: false,
                failed: None,
                last_time: 0,
                ordered_from: u64::MAX,
            }),
            group: Default::default(),
            options,
            retention: Default::default(),
        }
    }

    /// Attaches the tables of `layout` and writes the manifest and zero counters of a new
    /// store (fsynced).
    pub(super) fn create(
        mut backend: Box<dyn Backend>,
        options: StoreBuilder,
        layout: Layout,
    ) -> Result<Store> {
        let manifest = Store::new_manifest(layout, options.quality);
        backend.attach_tables(&manifest.prefix_bits())?;
        backend.write(&Store::creation(&manifest), Durability::Synced)?;
        let mut store = Store::assemble(backend, options, manifest, codec::FORMAT_VERSION, (0, 0));
        store.read_timeline()?;
        Ok(store)
    }

    /// The manifest of a store created now with `layout` in mode `quality` (with the band
    /// tables every new store keeps).
    fn new_manifest(layout: Layout, quality: Quality) -> Manifest {
        Manifest {
            layout,
            spec: FingerprintSpec::current(),
            created: now(),
            quality,
            bands: quality.bands(),
        }
    }

    /// What a new store's `meta` holds: its manifest and zero counters.
    fn creation(manifest: &Manifest) -> ChangeSet {
        let mut changes = ChangeSet::new();
        changes.push(Change::PutMeta(
            MetaKey::Manifest,
            codec::encode_manifest(manifest),
        ));
        changes.push(Change::PutMeta(
            MetaKey::Counters,
            codec::encode_counters(0, 0).to_vec(),
        ));
        changes
    }

    /// Reads an existing store's manifest and counters, checks its spec, and (for a writer)
    /// finishes an interrupted relayout or bulk load; a reader of such a store is refused.
    fn open_existing(mut backend: Box<dyn Backend>, options: StoreBuilder) -> Result<Store> {
        let meta = MetaState::read(backend.as_ref())?;
        let reader = options.is_reader();
        if meta.relayout.is_some() && reader {
            return Err(Error::Corrupt(
                "a relayout of this store was interrupted; open it for writing once to finish it"
                    .into(),
            ));
        }
        let bytes = match (&meta.relayout, &meta.manifest) {
            (Some(pending), _) => pending,
            (None, Some(manifest)) => manifest,
            (None, None) => {
                return Err(Error::NotAStore {
                    path: options.path().to_path_buf(),
                    reason: "its `meta` column family has no manifest".into(),
                });
            }
        };
        let format = codec::manifest_format(bytes)?;
        codec::check_format(format, backend.properties().oldest_format)?;
        let manifest = codec::decode_manifest(bytes)?;
        let current = FingerprintSpec::current();
        if manifest.spec != current {
            return Err(Error::SpecMismatch {
                found: manifest.spec.to_string(),
                expected: current.to_string(),
            });
        }
        // A relayout or repair cut short may have dropped tables; finishing it makes them.
        if meta.relayout.is_none() && !meta.repair_pending {
            backend.attach_tables(&manifest.prefix_bits())?;
        }
        let counters = match &meta.counters {
            Some(b) => codec::decode_counters(b)?,
            None => return Err(Error::Corrupt("the counters are missing".into())),
        };
        if reader && let Some(what) = meta.interrupted() {
            return Err(Error::Corrupt(format!(
                "{what} this store was interrupted; open it for writing once to recover"
            )));
        }
        let mut store = Store::assemble(backend, options, manifest, format, counters);
        store.read_timeline()?;
        if meta.relayout.is_some() {
            store.finish_relayout()?;
        }
        if meta.bulk_pending {
            store.recover_bulk_load()?;
        } else if meta.repair_pending && meta.relayout.is_none() {
            store.repair()?;
        }
        Ok(store)
    }

    /// Rebuilds the store under another layout (e.g. more blocks as it grows, or another
    /// k_max): the tables are dropped and rebuilt from `docs`, with the band tables of a
    /// store of this version (a store of an older format gains them). Crash-safe: the new manifest
    /// is recorded first, and a store opened with it pending finishes the relayout. Takes
    /// the store by value (the tables cannot be queried meanwhile) and returns it.
    pub fn relayout(mut self, layout: Layout) -> Result<Store> {
        self.check_writable()?;
        self.lock().usable()?;
        self.manifest = Manifest {
            layout,
            spec: self.manifest.spec.clone(),
            created: self.manifest.created,
            quality: self.manifest.quality,
            bands: self.manifest.quality.bands(),
        };
        self.write_meta(
            MetaKey::RelayoutPending,
            Some(codec::encode_manifest(&self.manifest)),
        )?;
        self.finish_relayout()?;
        Ok(self)
    }

    /// The second half of a relayout whose pending manifest is `self.manifest`: makes the
    /// pending manifest the manifest, replaces every table with the new layout's and
    /// rebuilds them from `docs` (a repair), and removes the marker.
    fn finish_relayout(&mut self) -> Result<()> {
        self.write_meta(
            MetaKey::Manifest,
            Some(codec::encode_manifest(&self.manifest)),
        )?;
        self.format = codec::FORMAT_VERSION;
        self.repair()?;
        self.write_meta(MetaKey::RelayoutPending, None)
    }
}
