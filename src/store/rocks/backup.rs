//! Online backups of a RocksDB store with RocksDB's backup engine: a consistent point in
//! time taken while the store is written, incremental (SST files unchanged since an
//! earlier backup in the same directory are shared, not copied again), and restored into a
//! staging directory that is renamed into place only when whole.

use std::path::Path;

use rocksdb::Env;
use rocksdb::backup::{BackupEngine, BackupEngineOptions, RestoreOptions};

use super::{RocksBackend, storage};
use crate::error::{Error, Result};
use crate::store::backend::BackupInfo;

/// The file in a backup directory that one backup engine at a time holds locked.
const LOCK: &str = ".simstore-backup.lock";

/// The backup engine of directory `dest` (which exists), with the directory's lock, held
/// until both are dropped: opening an engine drops what a backup killed mid-way left behind
/// (such a backup is never listed nor restored), and two backups into one directory would
/// take each other's files for that and give out one id twice. So a second backup, list or
/// restore of the directory, in this process or another, waits for the first.
fn engine(dest: &Path) -> Result<(std::fs::File, BackupEngine)> {
    let lock = std::fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(dest.join(LOCK))?;
    lock.lock()?;
    let mut opts = BackupEngineOptions::new(dest).map_err(storage)?;
    opts.set_sync(true);
    let env = Env::new().map_err(storage)?;
    let engine = BackupEngine::open(&opts, &env).map_err(|e| {
        Error::storage(
            "rocksdb",
            format!(
                "cannot open the backup directory {}: {}",
                dest.display(),
                e.into_string()
            ),
        )
    })?;
    Ok((lock, engine))
}

/// The backups in `dest`, oldest first.
fn infos(engine: &BackupEngine) -> Vec<BackupInfo> {
    engine
        .get_backup_info()
        .into_iter()
        .map(|i| BackupInfo {
            id: i.backup_id,
            time: u64::try_from(i.timestamp).unwrap_or(0),
            bytes: i.size,
            files: i.num_files,
        })
        .collect()
}

impl RocksBackend {
    /// Takes a backup into `dest` (flushing the memtables first, so the backup holds no
    /// log to replay), then keeps only the newest `keep` backups there.
    pub(super) fn backup_into(&self, dest: &Path, keep: Option<usize>) -> Result<BackupInfo> {
        if self.secondary {
            return Err(Error::Unsupported(
                "a secondary instance takes no backups: back up from the writer".into(),
            ));
        }
        if within(dest, &self.path) {
            return Err(Error::InvalidArgument(format!(
                "{} is inside the store's directory {}: a backup there is lost with the store \
                 and mixes with its files; back up into a directory outside it",
                dest.display(),
                self.path.display()
            )));
        }
        if dest.join("CURRENT").is_file() {
            return Err(Error::InvalidArgument(format!(
                "{} is a database's directory (it holds CURRENT): a backup there mixes with its \
                 files; back up into an empty or backup directory",
                dest.display()
            )));
        }
        std::fs::create_dir_all(dest)?;
        let (_lock, mut engine) = engine(dest)?;
        engine
            .create_new_backup_flush(&self.db, true)
            .map_err(storage)?;
        if let Some(n) = keep {
            engine.purge_old_backups(n.max(1)).map_err(storage)?;
        }
        infos(&engine)
            .pop()
            .ok_or_else(|| Error::storage("rocksdb", "the backup engine lists no backup after one"))
    }
}

/// Whether `path` (existing or yet to be made) lies in directory `dir`: its nearest
/// existing ancestor resolved, the rest of it appended.
fn within(path: &Path, dir: &Path) -> bool {
    let Ok(dir) = std::fs::canonicalize(dir) else {
        return false;
    };
    let mut rest = Vec::new();
    let mut p = path;
    loop {
        if let Ok(mut real) = std::fs::canonicalize(p) {
            real.extend(rest.iter().rev());
            return real.starts_with(&dir);
        }
        match (p.file_name(), p.parent()) {
            (Some(name), Some(up)) => {
                rest.push(name.to_owned());
                p = if up.as_os_str().is_empty() {
                    Path::new(".")
                } else {
                    up
                };
            }
            _ => return false,
        }
    }
}

/// The complete backups in `dest`, oldest first.
pub(crate) fn list(dest: &Path) -> Result<Vec<BackupInfo>> {
    Ok(infos(&existing(dest)?.1))
}

/// The backup engine of an existing directory `dest` (never created here), and its lock.
fn existing(dest: &Path) -> Result<(std::fs::File, BackupEngine)> {
    if !dest.is_dir() {
        return Err(Error::Unsupported(format!(
            "{} is not a backup directory (Store::backup makes one)",
            dest.display()
        )));
    }
    engine(dest)
}

/// Restores backup `id` (the newest when `None`) of `dest` into the directory `into`,
/// which must not exist, after verifying it (every file there, at its size).
pub(crate) fn restore(dest: &Path, id: Option<u32>, into: &Path) -> Result<BackupInfo> {
    let (_lock, mut engine) = existing(dest)?;
    let all = infos(&engine);
    let info = match id {
        None => all.last(),
        Some(id) => all.iter().find(|i| i.id == id),
    }
    .copied()
    .ok_or_else(|| {
        Error::Unsupported(format!(
            "{} holds no complete backup{}: a backup killed mid-way is never restored",
            dest.display(),
            id.map(|i| format!(" with id {i}")).unwrap_or_default()
        ))
    })?;
    let damaged = |e: rocksdb::Error| {
        Error::Corrupt(format!(
            "backup {} in {} is damaged ({}); restore another one (list_backups({}) lists them)",
            info.id,
            dest.display(),
            e.into_string(),
            dest.display()
        ))
    };
    engine.verify_backup(info.id).map_err(damaged)?;
    // The restore checks every file's checksum as it copies it: a mismatch is damage, an
    // error writing the copy (a full disk, a missing directory) is not the backup's.
    let opts = RestoreOptions::default();
    engine
        .restore_from_backup(into, into, &opts, info.id)
        .map_err(|e| match e.kind() {
            rocksdb::ErrorKind::Corruption => damaged(e),
            _ => Error::storage(
                "rocksdb",
                format!(
                    "cannot restore backup {} of {} into {}: {} (the backup itself was verified)",
                    info.id,
                    dest.display(),
                    into.display(),
                    e.into_string()
                ),
            ),
        })?;
    Ok(info)
}
