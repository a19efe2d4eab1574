//! Opening and creating the RocksDB database of a store.

use std::path::{Path, PathBuf};
use std::sync::RwLock;

use rocksdb::{Cache, DB};

use super::options::{self, META};
use super::{RocksBackend, storage};
use crate::error::{Error, Result};

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
    if path.join("CURRENT").is_file() {
        let cache = Cache::new_lru_cache(cache_bytes);
        return open_existing(path, mode, cache).map(Some);
    }
    if path.is_dir() && std::fs::read_dir(path)?.next().is_some() {
        return Err(Error::NotAStore {
            path: path.to_path_buf(),
            reason: "the directory is not empty and holds no RocksDB database".into(),
        });
    }
    Ok(None)
}

/// Creates a new, empty database at `path` (where [`open`] found none) with the column
/// families of `tables` tables.
pub(crate) fn create(path: &Path, tables: usize, cache_bytes: usize) -> Result<RocksBackend> {
    let cache = Cache::new_lru_cache(cache_bytes);
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

fn open_existing(path: &Path, mode: &OpenMode, cache: Cache) -> Result<RocksBackend> {
    let opts = options::db_options(&cache);
    let names = DB::list_cf(&opts, path).map_err(|e| Error::NotAStore {
        path: path.to_path_buf(),
        reason: format!("RocksDB cannot list its column families: {e}"),
    })?;
    if !names.iter().any(|n| n == META) {
        return Err(Error::NotAStore {
            path: path.to_path_buf(),
            reason: "a RocksDB database without simstore's `meta` column family".into(),
        });
    }
    let descriptors = names.iter().map(|n| options::cf_descriptor(n, &cache));
    let db = match mode {
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
        OpenMode::Writer => DB::open_cf_descriptors(&opts, path, descriptors),
    }
    .map_err(|e| open_error(path, e))?;
    let secondary = matches!(mode, OpenMode::Secondary(_));
    Ok(assemble(db, cache, path, names, secondary))
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
    let sst_options = (
        options::cf_options(&options::table_cf_name(0), &cache),
        options::cf_options(options::DOCS, &cache),
    );
    RocksBackend {
        db,
        sst_options,
        cache,
        path: path.to_path_buf(),
        table_cfs: present_tables.clone(),
        present_tables,
        secondary,
        catch_up: RwLock::new(()),
    }
}

fn open_error(path: &Path, e: rocksdb::Error) -> Error {
    let msg = e.to_string();
    if msg.contains("LOCK") || msg.contains("lock file") || msg.contains("lock hold") {
        Error::Locked {
            path: path.to_path_buf(),
            detail: msg,
        }
    } else {
        storage(e)
    }
}
