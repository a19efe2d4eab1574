//! Opening and creating the RocksDB database of a store.

use std::path::{Path, PathBuf};
use std::sync::RwLock;
use std::time::{Duration, Instant};

use rocksdb::{Cache, DB, DBRecoveryMode};

use super::options::{self, META};
use super::pool::IterPool;
use super::{RocksBackend, rewrite, storage, wal};
use crate::error::{Error, Result};
use crate::store::LogDamage;

/// How to open a store's database.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum OpenMode {
    /// The one writer (takes RocksDB's lock).
    Writer,
    /// Read-only, beside a writer process: no lock, the data as of opening.
    ReadOnly,
    /// A secondary instance keeping its own state in the given directory: read-only,
    /// beside a writer, and able to catch up with it.
    Secondary(PathBuf),
    /// The writer of a store about to be repaired: no automatic compaction runs (one
    /// reading a damaged file would stop every write) until the derived data is rebuilt
    /// (`reset_derived`). With `salvage`, damaged write-ahead log records are dropped
    /// (every intact one replayed) and a MANIFEST that does not read is rebuilt first.
    Repair {
        /// Whether to salvage a damaged log and MANIFEST.
        salvage: bool,
    },
}

impl OpenMode {
    /// Whether the store is opened for writing.
    pub(crate) fn writes(&self) -> bool {
        matches!(self, OpenMode::Writer | OpenMode::Repair { .. })
    }
}

/// Opens the database at `path`, if there is one: `None` when the path does not exist or
/// is an empty directory ([`create`] makes one there).
///
/// Errors: [`Error::NotAStore`], [`Error::Locked`], storage errors.
pub(crate) fn open(
    path: &Path,
    mode: &OpenMode,
    cache_bytes: usize,
) -> Result<Option<RocksBackend>> {
    if path.exists() && !path.is_dir() {
        return Err(Error::NotAStore {
            path: path.to_path_buf(),
            reason: "it is a file, not a directory".into(),
        });
    }
    // Listed before CURRENT is looked for: a store being created appears at once, renamed
    // into place, so a directory seen non-empty here shows its CURRENT below.
    let listed = path.is_dir() && std::fs::read_dir(path)?.next().is_some();
    if *mode == (OpenMode::Repair { salvage: true }) && listed {
        rebuild_manifest_if_damaged(path)?;
    }
    if path.join("CURRENT").is_file() {
        let cache = options::block_cache(cache_bytes);
        return open_beside_writer(path, mode, cache).map(Some);
    }
    if listed && has_rocksdb_files(path)? {
        return Err(Error::Damaged {
            path: path.to_path_buf(),
            detail: "its CURRENT file (which names the MANIFEST, the list of its files) is \
                     missing"
                .into(),
        });
    }
    if listed {
        return Err(Error::NotAStore {
            path: path.to_path_buf(),
            reason: "the directory is not empty and holds no RocksDB database".into(),
        });
    }
    Ok(None)
}

/// Creates a new database at `path` (where [`open`] found none) with the column families
/// of `tables` tables and what `init` writes into it, then opens it as the writer.
///
/// Atomic where `path` does not exist yet: RocksDB's own creation is many file writes, so
/// the database is built in a staging directory beside `path` (`.NAME.creating-PID`),
/// closed, and renamed into place. A process killed midway leaves no half-created store at
/// `path` (only its staging directory, removed by a later creation). If another process
/// created the store first, that store is opened. An existing empty directory (a mount
/// point, say, in a directory this process may not write) is created in place, which is
/// not atomic.
pub(crate) fn create(
    path: &Path,
    tables: usize,
    cache_bytes: usize,
    init: impl FnOnce(&RocksBackend) -> Result<()>,
) -> Result<RocksBackend> {
    if path.is_dir() {
        let backend = create_at(path, tables, cache_bytes)?;
        init(&backend)?;
        return Ok(backend);
    }
    let staging = staging_dir(path)?;
    // Flushed before it is closed: its first writable open then has no log to replay,
    // and a reader opening beside that open cannot miss the manifest.
    let built = create_at(&staging, tables, cache_bytes).and_then(|backend| {
        init(&backend)?;
        backend.flush(true)
    });
    if let Err(e) = built {
        let _ = std::fs::remove_dir_all(&staging);
        return Err(e);
    }
    if let Err(e) = std::fs::rename(&staging, path) {
        let _ = std::fs::remove_dir_all(&staging);
        // Unless another process created a store there meanwhile (then it is opened).
        if !path.join("CURRENT").is_file() {
            return Err(creating(path)(e));
        }
    }
    std::fs::File::open(parent(path))
        .and_then(|dir| dir.sync_all())
        .map_err(creating(path))?;
    let cache = options::block_cache(cache_bytes);
    open_existing(path, &OpenMode::Writer, cache)
}

/// The directory holding `path` (`.` for a bare name).
fn parent(path: &Path) -> &Path {
    match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    }
}

/// A new staging directory for creating the store at `path`; staging directories of
/// creators that are no longer running (killed midway) are removed.
fn staging_dir(path: &Path) -> Result<PathBuf> {
    let name = path
        .file_name()
        .ok_or_else(|| Error::NotAStore {
            path: path.to_path_buf(),
            reason: "the path names no directory".into(),
        })?
        .to_string_lossy();
    let prefix = format!(".{name}.creating-");
    let entries = std::fs::read_dir(parent(path)).map_err(creating(path))?;
    for entry in entries.flatten() {
        let file = entry.file_name();
        let pid = file.to_str().and_then(|f| f.strip_prefix(&prefix));
        let running = |pid: &str| Path::new("/proc").join(pid).exists();
        if let Some(pid) = pid
            && pid.bytes().all(|b| b.is_ascii_digit())
            && Path::new("/proc/self").exists()
            && !running(pid)
        {
            let _ = std::fs::remove_dir_all(entry.path());
        }
    }
    let staging = parent(path).join(format!("{prefix}{}", std::process::id()));
    if staging.exists() {
        std::fs::remove_dir_all(&staging).map_err(creating(path))?;
    }
    Ok(staging)
}

/// Names the store being created in an I/O error.
fn creating(path: &Path) -> impl Fn(std::io::Error) -> Error + '_ {
    move |e| {
        let what = format!("cannot create the store {}: {e}", path.display());
        Error::Io(std::io::Error::new(e.kind(), what))
    }
}

/// Creates a new, empty database at `path` with the column families of `tables` tables.
fn create_at(path: &Path, tables: usize, cache_bytes: usize) -> Result<RocksBackend> {
    let cache = options::block_cache(cache_bytes);
    let mut opts = options::db_options(&cache);
    opts.create_if_missing(true);
    opts.create_missing_column_families(true);
    let names = options::cf_names(tables);
    let db = DB::open_cf_descriptors(
        &opts,
        path,
        names.iter().map(|n| options::cf_descriptor(n, &cache)),
    )
    .map_err(|e| open_error(path, e))?;
    Ok(assemble(db, cache, path, names, false))
}

/// How long a reader keeps retrying an open that races with the writer's compactions.
const RACE_RETRY_FOR: Duration = Duration::from_secs(10);

/// Opens an existing database, retrying a reader's open that lost a race with the writer.
///
/// A read-only or secondary open reads the MANIFEST, then opens the table files it
/// lists; a live writer that finishes a compaction or rotates its MANIFEST in between
/// deletes a file the reader is about to open ("No such file or directory"). Nothing is
/// damaged: the next attempt reads the new MANIFEST. Writers never race (they hold the
/// lock), so they are not retried.
fn open_beside_writer(path: &Path, mode: &OpenMode, cache: Cache) -> Result<RocksBackend> {
    let start = Instant::now();
    let mut attempt = 0;
    loop {
        match open_existing(path, mode, cache.clone()) {
            Err(e) if !mode.writes() && start.elapsed() < RACE_RETRY_FOR && raced(&e) => {
                attempt += 1;
                std::thread::sleep(Duration::from_millis(attempt.min(20)));
            }
            other => return other,
        }
    }
}

/// Whether an open failed because a file it had just read about is gone.
fn raced(e: &Error) -> bool {
    let msg = match e {
        Error::Storage { source, .. } => source.to_string(),
        Error::NotAStore { reason, .. } => reason.clone(),
        _ => return false,
    };
    vanished(&msg)
}

/// Whether RocksDB's message says a file it had just read about is gone: a reader racing
/// the writer's compactions, not damage.
fn vanished(msg: &str) -> bool {
    msg.contains("No such file or directory")
}

fn open_existing(path: &Path, mode: &OpenMode, cache: Cache) -> Result<RocksBackend> {
    let mut opts = options::db_options(&cache);
    if *mode == (OpenMode::Repair { salvage: true }) {
        opts.set_wal_recovery_mode(DBRecoveryMode::SkipAnyCorruptedRecord);
    }
    let names = DB::list_cf(&opts, path).map_err(|e| list_error(path, e))?;
    if !names.iter().any(|n| n == META) {
        return Err(Error::NotAStore {
            path: path.to_path_buf(),
            reason: "a RocksDB database without simstore's `meta` column family".into(),
        });
    }
    let repairing = matches!(mode, OpenMode::Repair { .. });
    let descriptors = names.iter().map(|n| {
        let mut cf_opts = options::cf_options(n, &cache);
        cf_opts.set_disable_auto_compactions(repairing && n != META);
        rocksdb::ColumnFamilyDescriptor::new(n, cf_opts)
    });
    let mut db = match mode {
        OpenMode::Secondary(dir) => {
            if dir == path {
                return Err(Error::NotAStore {
                    path: dir.clone(),
                    reason: "a secondary instance needs a directory of its own, not the store's"
                        .into(),
                });
            }
            std::fs::create_dir_all(dir)?;
            DB::open_cf_descriptors_as_secondary(&opts, path, dir, descriptors)
        }
        OpenMode::ReadOnly => DB::open_cf_descriptors_read_only(&opts, path, descriptors, false),
        OpenMode::Writer | OpenMode::Repair { .. } => {
            DB::open_cf_descriptors(&opts, path, descriptors)
        }
    }
    .map_err(|e| open_error(path, e))?;
    if mode.writes() {
        rewrite::recover(&mut db, &cache, &names)?;
        // A repair cut short between dropping `ids`/`exact` and making them anew.
        for name in [options::IDS, options::EXACT] {
            if db.cf_handle(name).is_none() {
                let opts = options::cf_options(name, &cache);
                db.create_cf(name, &opts).map_err(storage)?;
            }
        }
    }
    let secondary = matches!(mode, OpenMode::Secondary(_));
    let mut backend = assemble(db, cache, path, names, secondary);
    backend.repairing = repairing;
    // A read-only instance never changes, a secondary only in a catch-up (which empties
    // the pool); neither can refresh an iterator.
    backend.iters = IterPool::new(mode.writes());
    Ok(backend)
}

fn assemble(
    db: DB,
    cache: Cache,
    path: &Path,
    names: Vec<String>,
    secondary: bool,
) -> RocksBackend {
    let present_tables: Vec<String> = names
        .into_iter()
        .filter(|n| options::is_table_cf(n))
        .collect();
    RocksBackend {
        iters: IterPool::new(true),
        probes: super::probes::Probes::InTurn,
        db,
        cache,
        path: path.to_path_buf(),
        table_cfs: present_tables.clone(),
        table_bits: Vec::new(),
        present_tables,
        secondary,
        repairing: false,
        catch_up: RwLock::new(()),
        warming: Default::default(),
    }
}

fn open_error(path: &Path, e: rocksdb::Error) -> Error {
    let msg = e.to_string();
    if msg.contains("LOCK") || msg.contains("lock file") || msg.contains("lock hold") {
        return Error::Locked {
            path: path.to_path_buf(),
            detail: msg,
        };
    }
    if msg.contains("Corruption") && !vanished(&msg) {
        // The log is damaged before its end (its recovery mode refuses that): say how much.
        if let Ok(damage) = wal::scan(path)
            && !damage.is_clean()
        {
            return Error::DamagedLog {
                path: path.to_path_buf(),
                detail: format!("{msg}; {damage}"),
            };
        }
        return Error::Damaged {
            path: path.to_path_buf(),
            detail: msg,
        };
    }
    storage(e)
}

/// The error of a database whose column families cannot be listed: its MANIFEST is
/// damaged, or it is not a RocksDB database.
fn list_error(path: &Path, e: rocksdb::Error) -> Error {
    let msg = e.to_string();
    let damaged = msg.contains("Corruption") || has_rocksdb_files(path).unwrap_or(false);
    if damaged && !vanished(&msg) {
        return Error::Damaged {
            path: path.to_path_buf(),
            detail: format!("RocksDB cannot read the list of its files (MANIFEST): {msg}"),
        };
    }
    // Read again: a writer that just switched to a new MANIFEST names one that exists.
    let named = std::fs::read_to_string(path.join("CURRENT")).unwrap_or_default();
    let named = named.trim();
    if damaged && !named.is_empty() && !path.join(named).exists() {
        return Error::Damaged {
            path: path.to_path_buf(),
            detail: format!("its CURRENT file names {named}, which is missing"),
        };
    }
    Error::NotAStore {
        path: path.to_path_buf(),
        reason: format!("RocksDB cannot list its column families: {e}"),
    }
}

/// Whether `dir` holds files only a RocksDB database has (`IDENTITY`, `MANIFEST-*`).
fn has_rocksdb_files(dir: &Path) -> Result<bool> {
    for entry in std::fs::read_dir(dir)? {
        let name = entry?.file_name();
        let name = name.to_string_lossy();
        if name == "IDENTITY" || name.starts_with("MANIFEST-") {
            return Ok(true);
        }
    }
    Ok(false)
}

/// Rebuilds the MANIFEST of a store whose CURRENT is missing or whose MANIFEST does not
/// read (RocksDB's repair: from the table files and logs); a store that lists its column
/// families is left alone.
fn rebuild_manifest_if_damaged(path: &Path) -> Result<()> {
    let opts = rocksdb::Options::default();
    if path.join("CURRENT").is_file() && DB::list_cf(&opts, path).is_ok() {
        return Ok(());
    }
    if !has_rocksdb_files(path)? || current_restored(path)? {
        return Ok(());
    }
    DB::repair(&opts, path).map_err(|e| Error::Damaged {
        path: path.to_path_buf(),
        detail: format!("RocksDB could not rebuild its MANIFEST: {e}"),
    })
}

/// Points a missing CURRENT (or one naming a MANIFEST that does not read) at the newest
/// MANIFEST, when that one lists the column families; true if it did. This loses nothing,
/// where RocksDB's repair replays no write of a column family it finds no table of: a
/// store whose writes were all in its log lost them (moved to `lost/`).
fn current_restored(path: &Path) -> Result<bool> {
    let mut newest: Option<(u64, String)> = None;
    for entry in std::fs::read_dir(path)? {
        let name = entry?.file_name().to_string_lossy().into_owned();
        let number = name.strip_prefix("MANIFEST-").and_then(|n| n.parse().ok());
        if let Some(n) = number.filter(|&n| newest.as_ref().is_none_or(|(m, _)| n > *m)) {
            newest = Some((n, name));
        }
    }
    let Some((_, manifest)) = newest else {
        return Ok(false);
    };
    let current = path.join("CURRENT");
    let before = std::fs::read(&current).ok();
    let staged = path.join("CURRENT.simstore-restoring");
    std::fs::write(&staged, format!("{manifest}\n"))?;
    std::fs::File::open(&staged)?.sync_all()?;
    std::fs::rename(&staged, &current)?;
    if DB::list_cf(&rocksdb::Options::default(), path).is_ok() {
        std::fs::File::open(path)?.sync_all()?;
        return Ok(true);
    }
    match before {
        Some(bytes) => std::fs::write(&current, bytes)?,
        None => std::fs::remove_file(&current)?,
    }
    Ok(false)
}

/// What a salvage of the store at `path` drops of its write-ahead log (read before the
/// salvage replays it).
pub(crate) fn log_damage(path: &Path) -> Result<LogDamage> {
    Ok(wal::scan(path)?)
}
