//! The store: RocksDB column families holding documents, ids and permutation tables
//! (the "store" and "query" stages of the data flow). See docs/design.md for the layout.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, MutexGuard, RwLock, RwLockReadGuard};
use std::time::{SystemTime, UNIX_EPOCH};

use rocksdb::{
    BlockBasedOptions, Cache, ColumnFamily, ColumnFamilyDescriptor, DB, DBCompressionType, Options,
    ReadOptions, WriteBatch, WriteOptions,
};

use crate::codec::{self, Manifest};
use crate::document::{DocMeta, Document, Match, StoredDoc};
use crate::error::{Error, Result};
use crate::fingerprint::{Fingerprint, FingerprintSpec, Fingerprinter};
use crate::layout::Layout;

mod bulk;
mod check;
mod dedup;

pub use check::CheckReport;
pub use dedup::CheckOutcome;

/// Replaced or deleted documents after which the table memtables are flushed.
const CHURN_FLUSH: u64 = 5_000;

const META: &str = "meta";
const DOCS: &str = "docs";
const IDS: &str = "ids";
const EXACT: &str = "exact";

/// Options for creating or opening a [`Store`]. Every setter documents its default.
///
/// Layout options (`k_max`, `expected_docs`, `blocks`) only matter when the store is
/// created; an existing store keeps the layout in its manifest.
#[derive(Debug, Clone)]
#[must_use]
pub struct StoreBuilder {
    path: PathBuf,
    create_if_missing: bool,
    k_max: u32,
    expected_docs: u64,
    blocks: Option<u32>,
    sync_writes: bool,
    block_cache_bytes: usize,
    read_only: bool,
    secondary: Option<PathBuf>,
}

impl StoreBuilder {
    /// Options for the store at `path` (a directory).
    pub fn new(path: impl AsRef<Path>) -> Self {
        Self {
            path: path.as_ref().to_path_buf(),
            create_if_missing: true,
            k_max: 3,
            expected_docs: 1_000_000,
            blocks: None,
            sync_writes: false,
            block_cache_bytes: 256 << 20,
            read_only: false,
            secondary: None,
        }
    }

    /// Create the store when `path` does not exist (or is an empty directory).
    /// Default: `true`.
    pub fn create_if_missing(mut self, yes: bool) -> Self {
        self.create_if_missing = yes;
        self
    }

    /// The largest Hamming distance queries answer exactly (from the tables).
    /// Default: 3. Only used when creating.
    pub fn k_max(mut self, k_max: u32) -> Self {
        self.k_max = k_max;
        self
    }

    /// How many documents the store is expected to hold; picks the number of blocks by the
    /// rule of [`Layout::for_expected_docs`]. Default: 1,000,000 (with k_max = 3: 4 blocks,
    /// 4 tables, 16-bit prefixes). Only used when creating, and not when
    /// [`StoreBuilder::blocks`] is set.
    pub fn expected_docs(mut self, n: u64) -> Self {
        self.expected_docs = n;
        self
    }

    /// Force the number of blocks (must exceed `k_max`; the store gets C(b, k_max) tables).
    /// Default: unset, chosen from [`StoreBuilder::expected_docs`]. Only used when creating.
    pub fn blocks(mut self, blocks: u32) -> Self {
        self.blocks = Some(blocks);
        self
    }

    /// fsync the write-ahead log before acknowledging each write, so acknowledged writes
    /// survive power loss and OS crashes, not only a crash of the process. Default: `false`
    /// (acknowledged writes survive `kill -9` of the process).
    pub fn sync_writes(mut self, yes: bool) -> Self {
        self.sync_writes = yes;
        self
    }

    /// Size of the block cache shared by all column families. Default: 256 MiB.
    pub fn block_cache_bytes(mut self, bytes: usize) -> Self {
        self.block_cache_bytes = bytes;
        self
    }

    /// Open read-only: queries only, and no lock is taken, so it works beside a writer
    /// process (seeing the data as of opening). Default: `false`.
    pub fn read_only(mut self, yes: bool) -> Self {
        self.read_only = yes;
        self
    }

    /// Open as a RocksDB *secondary instance* that keeps its own small state (info logs) in
    /// `dir`: read-only, works beside a writer process, and unlike
    /// [`StoreBuilder::read_only`] can follow the writer: [`Store::try_catch_up`] makes the
    /// writes the writer has made since visible. `dir` must not be the store's directory;
    /// it is created if missing. Default: unset (a normal open).
    pub fn secondary(mut self, dir: impl AsRef<Path>) -> Self {
        self.secondary = Some(dir.as_ref().to_path_buf());
        self
    }

    /// True for read-only and secondary opens.
    fn is_reader(&self) -> bool {
        self.read_only || self.secondary.is_some()
    }

    /// The layout a new store would get from these options.
    pub fn layout(&self) -> Result<Layout> {
        match self.blocks {
            Some(b) => Layout::new(self.k_max, b),
            None => Layout::for_expected_docs(self.expected_docs, self.k_max),
        }
    }

    /// Opens the store, creating it if allowed and missing.
    ///
    /// Errors: [`Error::NoStore`] (missing and not allowed to create), [`Error::NotAStore`]
    /// (the path holds something else), [`Error::Locked`] (another writer has it open),
    /// [`Error::FormatVersion`] / [`Error::SpecMismatch`] (written by another version),
    /// [`Error::InvalidLayout`] (bad layout options when creating).
    pub fn open(self) -> Result<Store> {
        let path = self.path.clone();
        if path.exists() && !path.is_dir() {
            return Err(Error::NotAStore {
                path,
                reason: "it is a file, not a directory".into(),
            });
        }
        if path.join("CURRENT").is_file() {
            return self.open_existing();
        }
        if path.is_dir() && std::fs::read_dir(&path)?.next().is_some() {
            return Err(Error::NotAStore {
                path,
                reason: "the directory is not empty and holds no RocksDB database".into(),
            });
        }
        if !self.create_if_missing || self.is_reader() {
            return Err(Error::NoStore { path });
        }
        self.create()
    }

    fn db_options(&self, cache: &Cache) -> Options {
        let mut opts = Options::default();
        opts.set_max_background_jobs(2);
        opts.set_keep_log_file_num(3);
        // Table blocks are read straight from the OS page cache through mmap (see cf_options).
        opts.set_allow_mmap_reads(true);
        let mut bbo = BlockBasedOptions::default();
        bbo.set_block_cache(cache);
        opts.set_block_based_table_factory(&bbo);
        opts
    }

    fn create(self) -> Result<Store> {
        let layout = self.layout()?;
        let cache = Cache::new_lru_cache(self.block_cache_bytes);
        let mut opts = self.db_options(&cache);
        opts.create_if_missing(true);
        opts.create_missing_column_families(true);
        let names = cf_names(layout.tables().len());
        let db = DB::open_cf_descriptors(
            &opts,
            &self.path,
            names.iter().map(|n| cf_descriptor(n, &cache)),
        )
        .map_err(|e| open_error(&self.path, e))?;
        let manifest = Manifest {
            layout,
            spec: FingerprintSpec::current(),
            created: now(),
        };
        let mut batch = WriteBatch::default();
        batch.put_cf(
            cf(&db, META)?,
            codec::MANIFEST_KEY,
            codec::encode_manifest(&manifest),
        );
        batch.put_cf(
            cf(&db, META)?,
            codec::COUNTERS_KEY,
            codec::encode_counters(0, 0),
        );
        write_synced(&db, batch)?;
        Store::assemble(db, cache, self, manifest, (0, 0))
    }

    fn open_existing(self) -> Result<Store> {
        let cache = Cache::new_lru_cache(self.block_cache_bytes);
        let opts = self.db_options(&cache);
        let names = DB::list_cf(&opts, &self.path).map_err(|e| Error::NotAStore {
            path: self.path.clone(),
            reason: format!("RocksDB cannot list its column families: {e}"),
        })?;
        if !names.iter().any(|n| n == META) {
            return Err(Error::NotAStore {
                path: self.path.clone(),
                reason: "a RocksDB database without simstore's `meta` column family".into(),
            });
        }
        let descriptors = names.iter().map(|n| cf_descriptor(n, &cache));
        let mut db = if let Some(dir) = &self.secondary {
            if dir == &self.path {
                return Err(Error::NotAStore {
                    path: dir.clone(),
                    reason: "a secondary instance needs a directory of its own, not the store's"
                        .into(),
                });
            }
            std::fs::create_dir_all(dir)?;
            DB::open_cf_descriptors_as_secondary(&opts, &self.path, dir, descriptors)
        } else if self.read_only {
            DB::open_cf_descriptors_read_only(&opts, &self.path, descriptors, false)
        } else {
            DB::open_cf_descriptors(&opts, &self.path, descriptors)
        }
        .map_err(|e| open_error(&self.path, e))?;
        let relayout = db.get_cf(cf(&db, META)?, codec::RELAYOUT_PENDING_KEY)?;
        let names = match &relayout {
            Some(_) if self.is_reader() => {
                return Err(Error::Corrupt(
                    "a relayout of this store was interrupted; open it for writing once to finish it".into(),
                ));
            }
            Some(pending) => replace_tables(&mut db, &names, pending, &cache)?,
            None => names,
        };
        let meta = cf(&db, META)?;
        let bytes = db
            .get_cf(meta, codec::MANIFEST_KEY)?
            .ok_or_else(|| Error::NotAStore {
                path: self.path.clone(),
                reason: "its `meta` column family has no manifest".into(),
            })?;
        let manifest = codec::decode_manifest(&bytes)?;
        let current = FingerprintSpec::current();
        if manifest.spec != current {
            return Err(Error::SpecMismatch {
                found: manifest.spec.to_string(),
                expected: current.to_string(),
            });
        }
        for name in cf_names(manifest.layout.tables().len()) {
            if !names.contains(&name) {
                return Err(Error::Corrupt(format!(
                    "column family `{name}` of the manifest's layout is missing"
                )));
            }
        }
        let counters = match db.get_cf(meta, codec::COUNTERS_KEY)? {
            Some(b) => codec::decode_counters(&b)?,
            None => return Err(Error::Corrupt("the counters are missing".into())),
        };
        let bulk_pending = db.get_cf(meta, codec::BULK_PENDING_KEY)?.is_some();
        let read_only = self.is_reader();
        let store = Store::assemble(db, cache, self, manifest, counters)?;
        if relayout.is_some() {
            store.repair()?;
            store.write_meta(codec::RELAYOUT_PENDING_KEY, None)?;
        }
        if bulk_pending {
            if read_only {
                return Err(Error::Corrupt(
                    "a bulk load into this store was interrupted; open it for writing once to recover".into(),
                ));
            }
            store.recover_bulk_load()?;
        }
        Ok(store)
    }
}

/// Finishes the first half of a relayout: drops every table column family, creates the
/// new layout's, and writes the pending manifest as the manifest (its tables are rebuilt
/// from `docs` once the store is assembled). Returns the column families now present.
fn replace_tables(
    db: &mut DB,
    names: &[String],
    pending: &[u8],
    cache: &Cache,
) -> Result<Vec<String>> {
    let manifest = codec::decode_manifest(pending)?;
    let is_table =
        |n: &str| n.len() > 1 && n.starts_with('t') && n[1..].bytes().all(|b| b.is_ascii_digit());
    for name in names.iter().filter(|n| is_table(n)) {
        db.drop_cf(name)?;
    }
    for i in 0..manifest.layout.tables().len() {
        let name = codec::table_cf_name(i);
        db.create_cf(&name, &cf_options(&name, cache))?;
    }
    let mut batch = WriteBatch::default();
    batch.put_cf(cf(db, META)?, codec::MANIFEST_KEY, pending);
    write_synced(db, batch)?;
    Ok(cf_names(manifest.layout.tables().len()))
}

/// The options of column family `name`; also used to write its SST files in bulk loads.
///
/// Measured with `simstore bench --n 10000000` (docs/benchmarks.md):
/// - Table CFs: uncompressed, no block cache, read through mmap: a probe costs ~5 µs
///   instead of ~12 µs with LZ4 blocks in a block cache (p50 49 µs against 125 µs at 10M,
///   10 tables), for 1.65x the disk space. Index blocks stay in the table readers.
/// - `docs`, `ids`, `meta`: LZ4 with the shared block cache (records compress well and are
///   read once per match).
fn cf_options(name: &str, cache: &Cache) -> Options {
    let mut opts = Options::default();
    let mut bbo = BlockBasedOptions::default();
    if is_table_cf(name) {
        opts.set_compression_type(DBCompressionType::None);
        bbo.disable_cache();
        // Replacements and deletes leave tombstones under a prefix that every query of that
        // prefix steps over; compact a file as soon as 50 of any 1,000 consecutive entries
        // are deletions.
        opts.add_compact_on_deletion_collector_factory(1000, 50, 0.0);
    } else {
        opts.set_compression_type(DBCompressionType::Lz4);
        bbo.set_block_cache(cache);
    }
    opts.set_block_based_table_factory(&bbo);
    opts
}

/// True for the names of table column families (`t00`, `t01`, ...).
fn is_table_cf(name: &str) -> bool {
    name.len() > 1 && name.starts_with('t') && name[1..].bytes().all(|b| b.is_ascii_digit())
}

fn cf_descriptor(name: &str, cache: &Cache) -> ColumnFamilyDescriptor {
    ColumnFamilyDescriptor::new(name, cf_options(name, cache))
}

/// The column family names of a store with `tables` tables, in creation order.
fn cf_names(tables: usize) -> Vec<String> {
    [META, DOCS, IDS, EXACT]
        .iter()
        .map(|s| s.to_string())
        .chain((0..tables).map(codec::table_cf_name))
        .collect()
}

fn open_error(path: &Path, e: rocksdb::Error) -> Error {
    let msg = e.to_string();
    if msg.contains("LOCK") || msg.contains("lock file") || msg.contains("lock hold") {
        Error::Locked {
            path: path.to_path_buf(),
            detail: msg,
        }
    } else {
        Error::Storage(e)
    }
}

fn cf<'a>(db: &'a DB, name: &str) -> Result<&'a ColumnFamily> {
    db.cf_handle(name)
        .ok_or_else(|| Error::Corrupt(format!("column family `{name}` is missing")))
}

/// Writes `batch` with an fsync of the write-ahead log before returning (for the writes that
/// protocols depend on: creation, markers, the end of a bulk load, a new manifest).
fn write_synced(db: &DB, batch: WriteBatch) -> Result<()> {
    let mut wo = WriteOptions::default();
    wo.set_sync(true);
    db.write_opt(batch, &wo)?;
    Ok(())
}

fn now() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0)
}

/// What an insert did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum InsertOutcome {
    /// The id was new.
    Inserted,
    /// The id existed; its old record and table entries were replaced.
    Replaced,
}

/// One entry of [`Store::insert_batch`]: an id, its fingerprint and its metadata.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entry {
    /// The external id.
    pub id: String,
    /// The fingerprint to store.
    pub fp: Fingerprint,
    /// Title, URL and length to keep with it.
    pub meta: DocMeta,
}

/// Counts of what a batch insert did.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct BatchOutcome {
    /// Entries whose id was new.
    pub inserted: u64,
    /// Entries that replaced an existing id (including earlier entries of the same batch).
    pub replaced: u64,
}

/// Figures about a store, for `simstore stats`.
#[derive(Debug, Clone)]
pub struct Stats {
    /// Live documents.
    pub docs: u64,
    /// The layout.
    pub layout: Layout,
    /// The fingerprint spec.
    pub spec: FingerprintSpec,
    /// The on-disk format version.
    pub format_version: u32,
    /// Total size of the store's files, in bytes.
    pub disk_bytes: u64,
    /// Expected candidates scanned by a k_max query at the current size, for uniform fingerprints.
    pub expected_candidates: f64,
}

/// Candidates scanned by sampled queries, from [`Store::observed_candidates`].
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct CandidateStats {
    /// Queries sampled.
    pub queries: u64,
    /// Candidates scanned by all of them.
    pub total: u64,
    /// The most candidates one query scanned.
    pub max: u64,
}

impl CandidateStats {
    /// Mean candidates per query (0 with no sample).
    pub fn mean(&self) -> f64 {
        self.total as f64 / self.queries.max(1) as f64
    }
}

/// The writer's in-memory state; the lock serializes writers.
#[derive(Debug)]
struct Counters {
    next_seq: u64,
    live: u64,
    /// Documents replaced (with another fingerprint) or deleted since the table memtables
    /// were last flushed: their tombstones slow down queries of their prefixes until flushed
    /// and compacted.
    churn: u64,
}

/// A persistent store of SimHash fingerprints. `Send + Sync`: share it (e.g. in an `Arc`)
/// and query from many threads; writes are serialized internally.
pub struct Store {
    db: DB,
    cache: Cache,
    manifest: Manifest,
    table_cfs: Vec<String>,
    fingerprinter: Fingerprinter,
    counters: Mutex<Counters>,
    /// Held shared by every [`View`] of a secondary instance and exclusively by
    /// [`Store::try_catch_up`], so a read never sees half of a catch-up.
    catch_up: RwLock<()>,
    /// The options it was opened with: path, write sync, read-only (and to reopen it after
    /// a relayout).
    options: StoreBuilder,
}

impl std::fmt::Debug for Store {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Store")
            .field("path", &self.options.path)
            .field("layout", &self.manifest.layout)
            .finish()
    }
}

impl Store {
    /// Options for the store at `path`; see [`StoreBuilder`].
    pub fn builder(path: impl AsRef<Path>) -> StoreBuilder {
        StoreBuilder::new(path)
    }

    /// Opens the store at `path`, creating it with default options if it does not exist.
    pub fn open(path: impl AsRef<Path>) -> Result<Self> {
        StoreBuilder::new(path).open()
    }

    fn assemble(
        db: DB,
        cache: Cache,
        b: StoreBuilder,
        manifest: Manifest,
        (next_seq, live): (u64, u64),
    ) -> Result<Self> {
        let table_cfs = (0..manifest.layout.tables().len())
            .map(codec::table_cf_name)
            .collect();
        Ok(Self {
            db,
            cache,
            manifest,
            table_cfs,
            fingerprinter: Fingerprinter::new(),
            counters: Mutex::new(Counters {
                next_seq,
                live,
                churn: 0,
            }),
            catch_up: RwLock::new(()),
            options: b,
        })
    }

    /// The store's directory.
    pub fn path(&self) -> &Path {
        &self.options.path
    }

    /// The permutation-table layout.
    pub fn layout(&self) -> &Layout {
        &self.manifest.layout
    }

    /// The fingerprinter of the store's spec.
    pub fn fingerprinter(&self) -> &Fingerprinter {
        &self.fingerprinter
    }

    /// Number of stored documents.
    pub fn len(&self) -> u64 {
        self.lock().live
    }

    /// True when no document is stored.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    fn lock(&self) -> MutexGuard<'_, Counters> {
        // Counters change only after a successful write, so a poisoned lock holds valid state.
        self.counters.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn cf(&self, name: &str) -> Result<&ColumnFamily> {
        cf(&self.db, name)
    }

    /// A consistent view for reads: a RocksDB snapshot, or on a secondary instance (which
    /// has no snapshots, and changes only in [`Store::try_catch_up`]) a shared hold on the
    /// catch-up lock.
    fn view(&self) -> View<'_> {
        if self.options.secondary.is_some() {
            View {
                snap: None,
                _guard: Some(self.catch_up.read().unwrap_or_else(|e| e.into_inner())),
            }
        } else {
            View {
                snap: Some(self.db.snapshot()),
                _guard: None,
            }
        }
    }

    fn write(&self, batch: WriteBatch) -> Result<()> {
        let mut wo = WriteOptions::default();
        wo.set_sync(self.options.sync_writes);
        self.db.write_opt(batch, &wo)?;
        Ok(())
    }

    /// Adds the new counters to `batch`, writes it (fsynced if `synced`, else as
    /// [`StoreBuilder::sync_writes`] says) and only then updates the in-memory counters, so
    /// a failed write leaves them as they were.
    fn commit(
        &self,
        counters: &mut Counters,
        mut batch: WriteBatch,
        next_seq: u64,
        live: u64,
        synced: bool,
    ) -> Result<()> {
        batch.put_cf(
            self.cf(META)?,
            codec::COUNTERS_KEY,
            codec::encode_counters(next_seq, live),
        );
        if synced {
            write_synced(&self.db, batch)?;
        } else {
            self.write(batch)?;
        }
        counters.next_seq = next_seq;
        counters.live = live;
        Ok(())
    }

    fn check_writable(&self) -> Result<()> {
        if self.options.is_reader() {
            return Err(Error::ReadOnly);
        }
        Ok(())
    }

    /// Fingerprints `doc` and stores it (with its content hash, so that a later
    /// [`Store::check_and_insert`] finds it as an exact duplicate); an existing document
    /// with the same id is replaced.
    pub fn insert(&self, doc: &Document) -> Result<InsertOutcome> {
        let (fp, meta) = self.fingerprint_with_meta(doc)?;
        self.insert_fingerprint(&doc.id, fp, meta)
    }

    /// `doc`'s fingerprint and its metadata with the content hash and sketch filled in.
    fn fingerprint_with_meta(&self, doc: &Document) -> Result<(Fingerprint, DocMeta)> {
        let a = self
            .fingerprinter
            .analyze(doc.title.as_deref(), &doc.text)?;
        let mut meta = doc.meta();
        meta.content_hash = Some(a.content_hash);
        meta.sketch = a.sketch;
        Ok((a.fingerprint, meta))
    }

    /// Stores a precomputed fingerprint under `id`; an existing document with the same id
    /// is replaced. When this returns `Ok`, the write survives a crash of the process.
    pub fn insert_fingerprint(
        &self,
        id: &str,
        fp: Fingerprint,
        meta: DocMeta,
    ) -> Result<InsertOutcome> {
        let out = self.insert_batch([Entry {
            id: id.to_owned(),
            fp,
            meta,
        }])?;
        Ok(if out.replaced > 0 {
            InsertOutcome::Replaced
        } else {
            InsertOutcome::Inserted
        })
    }

    /// Stores many entries in one atomic write (all or none). Later entries with an id
    /// already in the store, or earlier in the batch, replace the earlier ones.
    pub fn insert_batch(&self, entries: impl IntoIterator<Item = Entry>) -> Result<BatchOutcome> {
        self.check_writable()?;
        let entries: Vec<Entry> = entries.into_iter().collect();
        for e in &entries {
            validate_id(&e.id)?;
        }
        let mut counters = self.lock();
        self.write_entries(&mut counters, &entries)
    }

    /// The body of [`Store::insert_batch`], under the writer lock held by the caller.
    /// Entries must have valid ids.
    fn write_entries(&self, counters: &mut Counters, entries: &[Entry]) -> Result<BatchOutcome> {
        let (docs, ids, exact) = (self.cf(DOCS)?, self.cf(IDS)?, self.cf(EXACT)?);
        let existing =
            self.db
                .batched_multi_get_cf(ids, entries.iter().map(|e| e.id.as_bytes()), false);
        let mut pending: HashMap<&str, codec::IdValue> = HashMap::new();
        let mut batch = WriteBatch::default();
        let (mut next, mut live, mut churn) = (counters.next_seq, counters.live, 0);
        let mut out = BatchOutcome::default();
        let time = now();
        for (e, old) in entries.iter().zip(existing) {
            let old = match pending.get(e.id.as_str()) {
                Some(&p) => Some(p),
                None => old?.map(|v| codec::decode_id_value(&v)).transpose()?,
            };
            // A replacement with the same fingerprint (a re-crawled page) keeps its sequence
            // number and table keys: only the record changes, and no table tombstones
            // accumulate under the fingerprint's prefix.
            if let Some(codec::IdValue {
                seq, hash: Some(h), ..
            }) = old
            {
                batch.delete_cf(exact, codec::exact_key(h, seq));
            }
            let (seq, new_keys) = match old {
                Some(o) if o.fp == e.fp.0 => {
                    out.replaced += 1;
                    (o.seq, false)
                }
                Some(o) => {
                    self.delete_entries(&mut batch, o.seq, o.fp)?;
                    out.replaced += 1;
                    churn += 1;
                    next += 1;
                    (next - 1, true)
                }
                None => {
                    live += 1;
                    out.inserted += 1;
                    next += 1;
                    (next - 1, true)
                }
            };
            let record = StoredDoc {
                id: e.id.clone(),
                fp: e.fp.0,
                title: e.meta.title.clone(),
                url: e.meta.url.clone(),
                length: e.meta.length,
                time,
                content_hash: e.meta.content_hash,
                sketch: e.meta.sketch,
            };
            let value = codec::IdValue {
                seq,
                fp: e.fp.0,
                hash: e.meta.content_hash,
            };
            batch.put_cf(docs, codec::doc_key(seq), codec::encode_doc(&record));
            batch.put_cf(ids, e.id.as_bytes(), codec::encode_id_value(value));
            if let Some(h) = e.meta.content_hash {
                batch.put_cf(exact, codec::exact_key(h, seq), []);
            }
            if new_keys {
                for (t, name) in self.table_cfs.iter().enumerate() {
                    let key = codec::table_key(self.manifest.layout.permute(t, e.fp.0), seq);
                    batch.put_cf(self.cf(name)?, key, []);
                }
            }
            pending.insert(&e.id, value);
        }
        self.commit(counters, batch, next, live, false)?;
        self.note_churn(counters, churn)?;
        Ok(out)
    }

    /// Counts replaced/deleted documents; past [`CHURN_FLUSH`] since the last flush, flushes
    /// the table memtables so that their tombstones reach SST files, where the
    /// deletion-triggered compaction removes them (a query steps over every tombstone under
    /// its prefix: 20,000 replaces near one fingerprint made queries there ~450× slower).
    fn note_churn(&self, counters: &mut Counters, churn: u64) -> Result<()> {
        counters.churn += churn;
        if counters.churn >= CHURN_FLUSH {
            for name in &self.table_cfs {
                self.db.flush_cf(self.cf(name)?)?;
            }
            counters.churn = 0;
        }
        Ok(())
    }

    /// Adds to `batch` the deletion of document `seq` (fingerprint `fp`) from `docs` and
    /// every table (not from `ids` or `exact`: the caller overwrites or deletes those).
    fn delete_entries(&self, batch: &mut WriteBatch, seq: u64, fp: u64) -> Result<()> {
        batch.delete_cf(self.cf(DOCS)?, codec::doc_key(seq));
        for (t, name) in self.table_cfs.iter().enumerate() {
            batch.delete_cf(
                self.cf(name)?,
                codec::table_key(self.manifest.layout.permute(t, fp), seq),
            );
        }
        Ok(())
    }

    /// Deletes the document `id` and its table entries. Returns whether it existed.
    pub fn delete(&self, id: &str) -> Result<bool> {
        self.check_writable()?;
        let ids = self.cf(IDS)?;
        let mut counters = self.lock();
        let Some(value) = self.db.get_cf(ids, id.as_bytes())? else {
            return Ok(false);
        };
        let old = codec::decode_id_value(&value)?;
        let mut batch = WriteBatch::default();
        self.delete_entries(&mut batch, old.seq, old.fp)?;
        if let Some(h) = old.hash {
            batch.delete_cf(self.cf(EXACT)?, codec::exact_key(h, old.seq));
        }
        batch.delete_cf(ids, id.as_bytes());
        let live = counters.live.saturating_sub(1);
        let next = counters.next_seq;
        self.commit(&mut counters, batch, next, live, false)?;
        self.note_churn(&mut counters, 1)?;
        Ok(true)
    }

    /// The stored document `id`, if any.
    pub fn get(&self, id: &str) -> Result<Option<StoredDoc>> {
        let view = self.view();
        let Some(value) = self
            .db
            .get_cf_opt(self.cf(IDS)?, id.as_bytes(), &view.ro())?
        else {
            return Ok(None);
        };
        let seq = codec::decode_id_value(&value)?.seq;
        match self
            .db
            .get_cf_opt(self.cf(DOCS)?, codec::doc_key(seq), &view.ro())?
        {
            Some(bytes) => codec::decode_doc(&bytes).map(Some),
            None => Err(Error::Corrupt(format!(
                "id {id:?} points at missing document {seq}"
            ))),
        }
    }

    /// Every stored document within Hamming distance `k` of `fp`, sorted by distance, then
    /// id. Exact (equal to a brute-force scan) for every `k ≤ k_max`; a larger `k` is
    /// [`Error::KTooLarge`] (use [`Store::query_exhaustive`]).
    pub fn query(&self, fp: Fingerprint, k: u32) -> Result<Vec<Match>> {
        let view = self.view();
        let mut hits: Vec<(u64, u32)> = Vec::new();
        self.probe(&view, fp.0, k, |seq, d| {
            if d <= k {
                hits.push((seq, d));
            }
        })?;
        hits.sort_unstable();
        hits.dedup_by_key(|h| h.0);
        let ro = view.ro();
        let keys: Vec<[u8; 8]> = hits.iter().map(|&(seq, _)| codec::doc_key(seq)).collect();
        let values = self
            .db
            .batched_multi_get_cf_opt(self.cf(DOCS)?, &keys, true, &ro);
        let mut out = Vec::with_capacity(hits.len());
        for ((seq, distance), value) in hits.into_iter().zip(values) {
            let bytes = value?.ok_or_else(|| {
                Error::Corrupt(format!("a table entry points at missing document {seq}"))
            })?;
            out.push(Match {
                distance,
                doc: codec::decode_doc(&bytes)?,
            });
        }
        sort_matches(&mut out);
        Ok(out)
    }

    /// Scans, in every table that a query with distance `k` probes, the keys sharing the
    /// query's prefix, calling `each(seq, distance)` for every one (candidates, before the
    /// distance filter).
    fn probe(
        &self,
        view: &View<'_>,
        fp: u64,
        k: u32,
        mut each: impl FnMut(u64, u32),
    ) -> Result<()> {
        let layout = &self.manifest.layout;
        for &t in layout.tables_for_k(k)? {
            let pq = layout.permute(t, fp);
            let shift = 64 - layout.tables()[t].prefix_bits();
            let prefix = pq >> shift;
            let lo = prefix << shift;
            let mut ro = view.ro();
            if let Some(hi) = lo.checked_add(1u64 << shift) {
                ro.set_iterate_upper_bound(codec::table_bound(hi));
            }
            let mut it = self
                .db
                .raw_iterator_cf_opt(self.cf(&self.table_cfs[t])?, ro);
            it.seek(codec::table_bound(lo));
            while let Some(key) = it.key() {
                let (kfp, seq) = codec::decode_table_key(key)?;
                if kfp >> shift != prefix {
                    break;
                }
                each(seq, (kfp ^ pq).count_ones());
                it.next();
            }
            it.status()?;
        }
        Ok(())
    }

    /// Candidates a k_max query scans, observed on `samples` stored fingerprints spread over
    /// the store (the real data, clusters included, unlike the uniform estimate).
    pub fn observed_candidates(&self, samples: usize) -> Result<CandidateStats> {
        let next_seq = self.lock().next_seq;
        let view = self.view();
        let mut it = self.db.raw_iterator_cf_opt(self.cf(DOCS)?, view.ro());
        let mut stats = CandidateStats::default();
        for i in 0..samples as u64 {
            if next_seq == 0 {
                break;
            }
            it.seek(codec::doc_key(i.wrapping_mul(next_seq) / samples as u64));
            let Some(value) = it.value() else { continue };
            let fp = codec::decode_doc(value)?.fp;
            let mut n = 0u64;
            self.probe(&view, fp, self.manifest.layout.k_max(), |_, _| n += 1)?;
            stats.queries += 1;
            stats.total += n;
            stats.max = stats.max.max(n);
        }
        it.status()?;
        Ok(stats)
    }

    /// Every stored document within distance `k` (any k ≤ 64) by a full scan of `docs`.
    /// Exact but slow: it reads every record.
    pub fn query_exhaustive(&self, fp: Fingerprint, k: u32) -> Result<Vec<Match>> {
        let mut out = Vec::new();
        self.for_each_doc(|doc| {
            let distance = doc.fingerprint().distance(fp);
            if distance <= k {
                out.push(Match { distance, doc });
            }
            Ok(())
        })?;
        sort_matches(&mut out);
        Ok(out)
    }

    /// Fingerprints `doc` and queries with it.
    pub fn query_doc(&self, doc: &Document, k: u32) -> Result<Vec<Match>> {
        self.query(self.fingerprinter.fingerprint_doc(doc)?, k)
    }

    /// The two-stage query: the stored documents within distance `k` of `doc`'s fingerprint
    /// (as [`Store::query_doc`]) whose shingle sketch is at least `min_similarity` similar to
    /// `doc`'s ([`crate::sketch::Sketch::similarity`], an estimated Jaccard similarity of
    /// 3-token shingles). Documents stored without a sketch (from a fingerprint only) cannot
    /// be verified and are left out, as are all when `doc` has no words for a sketch.
    ///
    /// SimHash within k = 3 misses copies with a few percent of edited words; a store built
    /// with a larger `k_max` (e.g. `StoreBuilder::k_max(8)`) queried at that k and verified
    /// at 0.4 finds them without admitting unrelated documents (docs/quality.md: F1 0.927
    /// at k = 8 against 0.781 at k = 3 alone, precision 1.0 on the development set).
    pub fn query_verified(
        &self,
        doc: &Document,
        k: u32,
        min_similarity: f64,
    ) -> Result<Vec<Match>> {
        let Some(sketch) = self.fingerprinter.sketch(&doc.text) else {
            return Ok(Vec::new());
        };
        let mut out = self.query_doc(doc, k)?;
        out.retain(|m| {
            m.doc
                .sketch
                .is_some_and(|s| s.similarity(&sketch) >= min_similarity)
        });
        Ok(out)
    }

    /// Calls `f` with every stored document, in insertion order, from one consistent snapshot.
    pub fn for_each_doc(&self, mut f: impl FnMut(StoredDoc) -> Result<()>) -> Result<()> {
        self.for_each_seq_doc(|_, doc| f(doc))
    }

    /// Flushes memtables to SST files. Not needed for durability (the write-ahead log
    /// already has every acknowledged write); useful before measuring disk size.
    pub fn flush(&self) -> Result<()> {
        if self.options.is_reader() {
            return Ok(());
        }
        for name in [META, DOCS, IDS, EXACT]
            .into_iter()
            .chain(self.table_cfs.iter().map(String::as_str))
        {
            self.db.flush_cf(self.cf(name)?)?;
        }
        Ok(())
    }

    /// Rebuilds the store under another layout (e.g. more blocks as it grows, or another
    /// k_max): the table column families are dropped and rebuilt from `docs`. Crash-safe:
    /// the new manifest is recorded first, and a store opened with it pending finishes the
    /// relayout. Takes the store by value (the tables cannot be queried meanwhile) and
    /// returns it reopened.
    pub fn relayout(self, layout: Layout) -> Result<Store> {
        self.check_writable()?;
        let pending = Manifest {
            layout,
            spec: self.manifest.spec.clone(),
            created: self.manifest.created,
        };
        self.write_meta(
            codec::RELAYOUT_PENDING_KEY,
            Some(&codec::encode_manifest(&pending)),
        )?;
        let options = self.options.clone();
        drop(self);
        options.create_if_missing(false).open()
    }

    /// For a store opened with [`StoreBuilder::secondary`]: makes visible every write the
    /// writer process has made (its flushed files and its write-ahead log) since opening or
    /// the last catch-up. Queries that start afterwards see them; [`Store::len`] is updated.
    ///
    /// Errors: [`Error::ReadOnly`] when the store was not opened as a secondary;
    /// [`Error::Stale`] when the writer has changed the layout (a relayout): reopen.
    pub fn try_catch_up(&self) -> Result<()> {
        if self.options.secondary.is_none() {
            return Err(Error::ReadOnly);
        }
        let mut counters = self.lock();
        let _readers_out = self.catch_up.write().unwrap_or_else(|e| e.into_inner());
        self.db.try_catch_up_with_primary()?;
        let meta = self.cf(META)?;
        let manifest = self.db.get_cf(meta, codec::MANIFEST_KEY)?;
        if manifest.as_deref() != Some(&codec::encode_manifest(&self.manifest)[..]) {
            return Err(Error::Stale(
                "its manifest changed (a relayout or another store at the path)".into(),
            ));
        }
        if let Some(bytes) = self.db.get_cf(meta, codec::COUNTERS_KEY)? {
            let (next_seq, live) = codec::decode_counters(&bytes)?;
            counters.next_seq = next_seq;
            counters.live = live;
        }
        Ok(())
    }

    /// Figures about the store.
    pub fn stats(&self) -> Result<Stats> {
        let docs = self.len();
        Ok(Stats {
            docs,
            layout: self.manifest.layout.clone(),
            spec: self.manifest.spec.clone(),
            format_version: codec::FORMAT_VERSION,
            disk_bytes: dir_size(self.path()),
            expected_candidates: self.manifest.layout.expected_candidates(docs as f64),
        })
    }
}

fn sort_matches(matches: &mut [Match]) {
    matches.sort_unstable_by(|a, b| (a.distance, &a.doc.id).cmp(&(b.distance, &b.doc.id)));
}

fn validate_id(id: &str) -> Result<()> {
    crate::document::check_id(id).map_err(Error::InvalidId)
}

fn dir_size(path: &Path) -> u64 {
    std::fs::read_dir(path)
        .map(|rd| {
            rd.flatten()
                .filter_map(|e| e.metadata().ok())
                .filter(|m| m.is_file())
                .map(|m| m.len())
                .sum()
        })
        .unwrap_or(0)
}

/// What reads go through: see [`Store::view`].
pub(crate) struct View<'a> {
    snap: Option<rocksdb::Snapshot<'a>>,
    _guard: Option<RwLockReadGuard<'a, ()>>,
}

impl View<'_> {
    /// Read options that read from this view.
    fn ro(&self) -> ReadOptions {
        let mut ro = ReadOptions::default();
        if let Some(snap) = &self.snap {
            ro.set_snapshot(snap);
        }
        ro
    }

    /// A value of `cf` as of this view.
    fn get(&self, db: &DB, cf: &ColumnFamily, key: &[u8]) -> Result<Option<Vec<u8>>> {
        Ok(db.get_cf_opt(cf, key, &self.ro())?)
    }
}
