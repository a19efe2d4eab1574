//! Backups of a live store and their restore (RocksDB: `store/rocks/backup.rs`).

use std::path::Path;

use super::backend::BackupInfo;
use super::{Store, StoreBuilder, rocks};
use crate::error::{Error, Result};

impl Store {
    /// Takes an online backup of the store into directory `dest` (created if missing),
    /// while other threads go on reading and writing: a consistent point in time — every
    /// write acknowledged before the call is in it, no change set in part. Backups in one
    /// directory share the files that did not change (the second costs what was written
    /// since); with `keep`, only the newest `keep` stay. A process killed mid-way leaves
    /// no backup that [`restore`] accepts. Put `dest` on the same file system for speed,
    /// on another disk for safety.
    ///
    /// Errors: [`Error::InvalidArgument`] for an empty `dest` or `keep` of 0 (which would
    /// keep no backup); [`Error::Unsupported`] on a backend without backups (Redis Cluster:
    /// see docs/scaling.md; in memory), I/O and storage errors.
    pub fn backup(&self, dest: impl AsRef<Path>, keep: Option<usize>) -> Result<BackupInfo> {
        let dest = dest.as_ref();
        if dest.as_os_str().is_empty() {
            return Err(Error::InvalidArgument(
                "a backup needs a directory to go to, and the path given is empty".into(),
            ));
        }
        if keep == Some(0) {
            return Err(Error::InvalidArgument(
                "keeping 0 backups would delete the one just taken: keep at least 1, or give \
                 no number to keep them all"
                    .into(),
            ));
        }
        self.backend.backup(dest, keep)
    }
}

/// The complete backups in directory `dest`, oldest first.
pub fn list_backups(dest: impl AsRef<Path>) -> Result<Vec<BackupInfo>> {
    rocks::list_backups(dest.as_ref())
}

/// Restores backup `id` (the newest when `None`) of directory `dest` as a new store at
/// `path`, which must not exist: the backup is verified, restored beside `path` and opened
/// (its manifest checked, work a bulk load or relayout left under way finished) before it
/// is renamed into place, so `path` is a whole store or absent.
///
/// Errors: [`Error::Unsupported`] when `path` exists or `dest` holds no complete backup
/// (of that id); [`Error::Corrupt`] for a damaged backup; I/O and storage errors.
pub fn restore(
    dest: impl AsRef<Path>,
    id: Option<u32>,
    path: impl AsRef<Path>,
) -> Result<BackupInfo> {
    let (dest, path) = (dest.as_ref(), path.as_ref());
    if path.exists() {
        return Err(Error::Unsupported(format!(
            "{} exists: restore into a new path (a restore never overwrites a store)",
            path.display()
        )));
    }
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let parent = path
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    if !parent.is_dir() {
        return Err(Error::InvalidArgument(format!(
            "{} is not a directory: make the directory to restore into first",
            parent.display()
        )));
    }
    remove_dead_staging(parent, &name);
    let staging = parent.join(format!(".{name}.restoring-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&staging);
    // Opened once as its writer: a backup taken while a bulk load, relayout or repair was
    // under way holds its marker, and the open finishes or undoes that work.
    let restored = rocks::restore_backup(dest, id, &staging).and_then(|info| {
        drop(
            StoreBuilder::new(&staging)
                .create_if_missing(false)
                .open()?,
        );
        Ok(info)
    });
    match restored {
        Ok(info) => {
            std::fs::rename(&staging, path)?;
            Ok(info)
        }
        Err(e) => {
            let _ = std::fs::remove_dir_all(&staging);
            Err(e)
        }
    }
}

/// Removes what restores into `name` killed mid-way left in `parent`: the staging
/// directories `.NAME.restoring-PID` of processes that are gone (known where `/proc` lists
/// the processes; elsewhere they stay).
fn remove_dead_staging(parent: &Path, name: &str) {
    let prefix = format!(".{name}.restoring-");
    let Ok(entries) = std::fs::read_dir(parent) else {
        return;
    };
    if !Path::new("/proc/self").exists() {
        return;
    }
    for entry in entries.flatten() {
        let file = entry.file_name();
        let pid = file.to_str().and_then(|f| f.strip_prefix(&prefix));
        let Some(pid) = pid.and_then(|p| p.parse::<u32>().ok()) else {
            continue;
        };
        if !Path::new(&format!("/proc/{pid}")).exists() {
            let _ = std::fs::remove_dir_all(entry.path());
        }
    }
}
