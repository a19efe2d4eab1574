//! The RocksDB backend: one column family per space (`meta`, `docs`, `ids`, `exact`,
//! `t00`..), one `WriteBatch` per change set (atomic), snapshots for reads, SST ingest for
//! bulk loads and secondary instances for following a writer. The only module that names
//! `rocksdb::`.

mod backup;
mod config;
mod ingest;
mod metrics;
mod open;
mod options;
mod pool;
mod probes;
mod rewrite;
mod snapshot;
mod threaded_run;
mod wal;

use std::path::{Path, PathBuf};
use std::sync::RwLock;

use rocksdb::{Cache, ColumnFamily, DB, WriteBatch, WriteOptions};

use crate::error::{Error, Result};
use crate::store::backend::{
    Atomicity, Backend, BackupInfo, BulkIngest, Change, ChangeSet, Consistency, Durability,
    Maintenance, MetaKey, Properties, Shared, Snapshot, Space, Usage,
};
use crate::store::codec::{self, bucket};

pub(crate) use backup::{list as list_backups, restore as restore_backup};
pub use config::RocksOptions;
pub(crate) use open::{OpenMode, create, log_damage, open};

/// A store's RocksDB database.
pub(crate) struct RocksBackend {
    /// Table iterators kept between probes. Declared before `db`: dropped before it.
    iters: pool::IterPool,
    db: DB,
    cache: Cache,
    path: PathBuf,
    /// Names of the table column families of the layout, in table order.
    table_cfs: Vec<String>,
    /// Each table's prefix length in bits: its entries are packed in one bucket per
    /// prefix (`codec::bucket`). Empty until the manifest's tables are attached.
    table_bits: Vec<u32>,
    /// Names of every table column family present (an interrupted relayout can leave
    /// more than the layout has).
    present_tables: Vec<String>,
    /// Set for a secondary instance: the directory of its own state.
    secondary: bool,
    /// Opened for a repair, which rebuilds every table: a table column family that
    /// RocksDB's own repair did not recover (an empty one, whose files it never saw) is
    /// made anew instead of refused.
    repairing: bool,
    /// Held shared by every snapshot of a secondary instance and exclusively by
    /// [`Backend::catch_up`], so a read never sees half of a catch-up.
    catch_up: RwLock<()>,
    /// How a query's spans are read ([`RocksOptions::probe_threads`]).
    probes: probes::Probes,
    /// The staged SST files of a bulk load being read into the page cache.
    warming: ingest::Warming,
}

impl RocksBackend {
    /// How each query's spans are read: `Some(0)` in turn on the calling thread,
    /// `Some(n)` at once on `n` threads, `None` in turn until a probe waits for the disk
    /// ([`probes`]).
    pub(crate) fn set_probe_threads(&mut self, threads: Option<usize>) -> Result<()> {
        self.probes = probes::Probes::new(threads)?;
        Ok(())
    }

    fn cf(&self, name: &str) -> Result<&ColumnFamily> {
        cf(&self.db, name)
    }

    /// Table `t`'s column family and prefix bits (its buckets' width).
    fn table(&self, t: usize) -> Result<(&ColumnFamily, u32)> {
        let bits =
            self.table_bits.get(t).copied().ok_or_else(|| {
                Error::Corrupt(format!("table {t} is not in this store's layout"))
            })?;
        Ok((self.space_cf(Space::Table(t))?, bits))
    }

    fn space_cf(&self, space: Space) -> Result<&ColumnFamily> {
        match space {
            Space::Table(t) => {
                let name = self.table_cfs.get(t).ok_or_else(|| {
                    Error::Corrupt(format!("table {t} is not in this store's layout"))
                })?;
                self.cf(name)
            }
            other => self.cf(&options::cf_name(other)),
        }
    }

    /// Adds to `batch` the merge record that adds (`add`) or removes table `t`'s entry
    /// `(permuted, seq)` in its bucket: a write never reads the bucket.
    fn table_op(
        &self,
        batch: &mut WriteBatch,
        t: usize,
        add: bool,
        permuted: u64,
        seq: u64,
    ) -> Result<()> {
        let (cf, bits) = self.table(t)?;
        batch.merge_cf(
            cf,
            bucket::bucket_key(permuted, bits),
            bucket::bucket_op(bits, add, permuted, seq),
        );
        Ok(())
    }

    fn batch(&self, changes: &ChangeSet) -> Result<WriteBatch> {
        let mut b = WriteBatch::default();
        let (meta, docs, ids, exact) = (
            self.cf(options::META)?,
            self.cf(options::DOCS)?,
            self.cf(options::IDS)?,
            self.cf(options::EXACT)?,
        );
        for change in changes.changes() {
            match change {
                Change::PutMeta(k, v) => b.put_cf(meta, meta_key(*k), v),
                Change::DeleteMeta(k) => b.delete_cf(meta, meta_key(*k)),
                Change::PutDoc(seq, doc) => {
                    b.put_cf(docs, codec::doc_key(*seq), codec::encode_doc(doc))
                }
                Change::DeleteDoc(seq) => b.delete_cf(docs, codec::doc_key(*seq)),
                Change::PutId(id, v) => b.put_cf(ids, id.as_bytes(), codec::encode_id_value(*v)),
                Change::DeleteId(id) => b.delete_cf(ids, id.as_bytes()),
                Change::PutExact(h, seq) => b.put_cf(exact, codec::exact_key(*h, *seq), []),
                Change::DeleteExact(h, seq) => b.delete_cf(exact, codec::exact_key(*h, *seq)),
                Change::PutTable(t, p, seq) => self.table_op(&mut b, *t, true, *p, *seq)?,
                Change::DeleteTable(t, p, seq) => self.table_op(&mut b, *t, false, *p, *seq)?,
            }
        }
        Ok(b)
    }
}

impl Backend for RocksBackend {
    fn properties(&self) -> Properties {
        Properties {
            oldest_format: codec::BUCKET_FORMAT,
            // A secondary changes only in a catch-up, which its views hold off.
            latest_is_consistent: self.secondary,
            ..Properties::local(Atomicity::ChangeSet)
        }
    }

    fn usage(&self) -> Usage {
        Usage {
            disk_bytes: dir_size(&self.path),
            memory_bytes: None,
            reclaimable_bytes: Some(self.reclaimable()),
            metrics: self.metrics(),
        }
    }

    fn write(&self, changes: &ChangeSet, durability: Durability) -> Result<()> {
        let batch = self.batch(changes)?;
        let mut wo = WriteOptions::default();
        wo.set_sync(durability == Durability::Synced);
        self.db.write_opt(batch, &wo).map_err(storage)
    }

    fn snapshot(&self, consistency: Consistency) -> Box<dyn Snapshot + '_> {
        match consistency {
            Consistency::PointInTime => Box::new(snapshot::RocksSnapshot::new(self)),
            Consistency::Latest => Box::new(snapshot::RocksSnapshot::live(self)),
        }
    }

    fn version(&self) -> u64 {
        self.db.latest_sequence_number()
    }

    fn attach_tables(&mut self, prefix_bits: &[u32]) -> Result<()> {
        let names: Vec<String> = (0..prefix_bits.len()).map(options::table_cf_name).collect();
        if self.repairing {
            for name in &names {
                if !self.present_tables.contains(name) {
                    let opts = options::cf_options(name, &self.cache);
                    self.db.create_cf(name, &opts).map_err(storage)?;
                    self.present_tables.push(name.clone());
                }
            }
        }
        if let Some(missing) = names.iter().find(|n| !self.present_tables.contains(n)) {
            return Err(Error::Corrupt(format!(
                "column family `{missing}` of the manifest's layout is missing"
            )));
        }
        self.iters.clear();
        self.table_cfs = names;
        self.table_bits = prefix_bits.to_vec();
        Ok(())
    }

    fn reset_derived(&mut self, prefix_bits: &[u32], unreadable: &[(u64, u64)]) -> Result<()> {
        if !unreadable.is_empty() {
            self.rewrite_docs_without(unreadable)?;
        }
        // Dropping a column family deletes its files unread: damage there cannot stop it.
        self.iters.clear();
        let fixed = [options::IDS, options::EXACT].map(String::from);
        let old = fixed
            .iter()
            .cloned()
            .chain(std::mem::take(&mut self.present_tables));
        for name in old {
            if self.db.cf_handle(&name).is_some() {
                self.db.drop_cf(&name).map_err(storage)?;
            }
        }
        self.table_cfs = (0..prefix_bits.len()).map(options::table_cf_name).collect();
        self.table_bits = prefix_bits.to_vec();
        self.present_tables = self.table_cfs.clone();
        for name in fixed.iter().chain(&self.table_cfs) {
            self.db
                .create_cf(name, &options::cf_options(name, &self.cache))
                .map_err(storage)?;
        }
        // A repair's open paused automatic compactions; `docs` is the one column family
        // (with `meta`, never paused) that outlives it, read whole or rewritten by now.
        self.db
            .set_options_cf(
                self.cf(options::DOCS)?,
                &[("disable_auto_compactions", "false")],
            )
            .map_err(storage)
    }

    fn maintain(&self, work: Maintenance) -> Result<()> {
        if self.secondary {
            return Ok(());
        }
        match work {
            Maintenance::FlushTables => self.flush(false),
            Maintenance::FlushAll => self.flush(true),
            Maintenance::Compact { docs, derived } => self.compact(docs, derived),
        }
    }

    fn backup(&self, dest: &Path, keep: Option<usize>) -> Result<BackupInfo> {
        self.backup_into(dest, keep)
    }

    fn bulk_ingest(&self) -> Option<&dyn BulkIngest> {
        Some(self)
    }

    fn shared(&self) -> Option<&dyn Shared> {
        None
    }

    fn catch_up(&self) -> Result<bool> {
        if !self.secondary {
            return Ok(false);
        }
        let _readers_out = self.catch_up.write().unwrap_or_else(|e| e.into_inner());
        self.iters.clear();
        self.db.try_catch_up_with_primary().map_err(storage)?;
        Ok(true)
    }
}

impl RocksBackend {
    /// Flushes the tables' memtables (in the background), or with `all` every column
    /// family's, waiting until done.
    pub(super) fn flush(&self, all: bool) -> Result<()> {
        let fixed: &[&str] = match all {
            false => &[],
            true => &[options::META, options::DOCS, options::IDS, options::EXACT],
        };
        let mut opts = rocksdb::FlushOptions::default();
        opts.set_wait(all);
        for name in fixed
            .iter()
            .copied()
            .chain(self.table_cfs.iter().map(String::as_str))
        {
            self.db
                .flush_cf_opt(self.cf(name)?, &opts)
                .map_err(storage)?;
        }
        Ok(())
    }

    /// [`Maintenance::Compact`]: manual compactions of `docs` over `seqs`, and with
    /// `derived` of the whole of `ids`, `exact` and the tables, then a wait for the files
    /// they made obsolete to be deleted.
    ///
    /// The bottommost level is rewritten too (`ForceOptimized`): a flush of deletes that
    /// lands there by a trivial move would otherwise keep its tombstones, and the space,
    /// until some later compaction happened to read it. The kept iterators are dropped, as
    /// they pin the files compacted away.
    fn compact(&self, seqs: std::ops::Range<u64>, derived: bool) -> Result<()> {
        self.flush(true)?;
        let mut opts = rocksdb::CompactOptions::default();
        opts.set_bottommost_level_compaction(rocksdb::BottommostLevelCompaction::ForceOptimized);
        let (lo, hi) = (codec::doc_key(seqs.start), codec::doc_key(seqs.end));
        let docs = self.cf(options::DOCS)?;
        self.db
            .compact_range_cf_opt(docs, Some(&lo[..]), Some(&hi[..]), &opts);
        if derived {
            for name in [options::IDS, options::EXACT]
                .into_iter()
                .chain(self.table_cfs.iter().map(String::as_str))
            {
                self.db
                    .compact_range_cf_opt(self.cf(name)?, None::<&[u8]>, None::<&[u8]>, &opts);
            }
        }
        self.iters.clear();
        self.await_purge()
    }

    /// Waits (at most [`PURGE_WAIT`]) for the background jobs, which delete the files and
    /// logs that flushes and compactions made obsolete as they end. Past the wait, or with
    /// background work paused (`repair`), the space comes back when they end: no error.
    fn await_purge(&self) -> Result<()> {
        use rocksdb::ErrorKind::{Aborted, TimedOut};
        let mut opts = rocksdb::WaitForCompactOptions::default();
        opts.set_timeout(PURGE_WAIT.as_micros() as u64);
        opts.set_abort_on_pause(true);
        match self.db.wait_for_compact(&opts) {
            Err(e) if matches!(e.kind(), TimedOut | Aborted) => Ok(()),
            other => other.map_err(storage),
        }
    }
}

/// How long a compaction waits for RocksDB's background jobs to delete obsolete files.
const PURGE_WAIT: std::time::Duration = std::time::Duration::from_secs(10);

#[cfg(test)]
impl RocksBackend {
    /// Adds table `t`'s entry `(permuted, seq)`, not durably (tests).
    pub(super) fn put_table_entry(&self, t: usize, permuted: u64, seq: u64) {
        let mut changes = ChangeSet::new();
        changes.push(Change::PutTable(t, permuted, seq));
        self.write(&changes, Durability::Process).unwrap();
    }
}

/// The `meta` key of a [`MetaKey`].
fn meta_key(key: MetaKey) -> &'static [u8] {
    match key {
        MetaKey::Manifest => codec::MANIFEST_KEY,
        MetaKey::Counters => codec::COUNTERS_KEY,
        MetaKey::BulkPending => codec::BULK_PENDING_KEY,
        MetaKey::RepairPending => codec::REPAIR_PENDING_KEY,
        MetaKey::RelayoutPending => codec::RELAYOUT_PENDING_KEY,
        MetaKey::Retention => codec::retention::RETENTION_KEY,
        MetaKey::Timeline => codec::retention::TIMELINE_KEY,
    }
}

fn cf<'a>(db: &'a DB, name: &str) -> Result<&'a ColumnFamily> {
    db.cf_handle(name)
        .ok_or_else(|| Error::Corrupt(format!("column family `{name}` is missing")))
}

/// A RocksDB error as the library's storage error.
fn storage(e: rocksdb::Error) -> Error {
    Error::storage("rocksdb", e)
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
