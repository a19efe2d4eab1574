//! What a file read was ([`Stamp`]): its identity, size, modification and status change
//! times ([`FileId`]) when it was opened, and an xxh3 of the bytes read from it — so that a command reading its inputs
//! twice (`dedup --output`) can tell that one changed in between.

use std::fs::{File, Metadata};
use std::io::{self, Read};
use std::os::unix::fs::MetadataExt;
use std::path::PathBuf;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::SystemTime;

use xxhash_rust::xxh3::Xxh3;

/// A file's identity (device, inode), size, modification time and status change time: a
/// write changes the last, and so does putting the modification time back (`touch -d`),
/// so an edit of the same size with its old time restored is seen.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FileId {
    dev: u64,
    ino: u64,
    len: u64,
    modified: Option<SystemTime>,
    changed: (i64, i64),
}

impl FileId {
    fn of(meta: &Metadata) -> Self {
        FileId {
            dev: meta.dev(),
            ino: meta.ino(),
            len: meta.len(),
            modified: meta.modified().ok(),
            changed: (meta.ctime(), meta.ctime_nsec()),
        }
    }

    /// The file at `path` as it is now.
    pub fn of_path(path: &std::path::Path) -> io::Result<Self> {
        std::fs::metadata(path).map(|m| FileId::of(&m))
    }
}

/// The files some inputs name (directories walked) as they are now: a command that reads
/// them more than once tells at its end whether one changed meanwhile.
pub struct Snapshot(Vec<(PathBuf, FileId)>);

impl Snapshot {
    /// `paths` as they are now: every regular file named, or inside a directory named
    /// (each directory walked once); streams and what cannot be read are left out.
    pub fn of(paths: &[String]) -> Self {
        let (mut files, mut dirs) = (Vec::new(), std::collections::HashSet::new());
        let mut todo: Vec<PathBuf> = paths.iter().map(PathBuf::from).collect();
        while let Some(p) = todo.pop() {
            match std::fs::metadata(&p) {
                Ok(m) if m.is_dir() && dirs.insert((m.dev(), m.ino())) => {
                    let entries = std::fs::read_dir(&p).into_iter().flatten().flatten();
                    todo.extend(entries.map(|e| e.path()));
                }
                Ok(m) if m.is_file() => files.push((p, FileId::of(&m))),
                _ => {}
            }
        }
        Snapshot(files)
    }

    /// The first of the files that is now another file, of another size, modification or
    /// status change time, or gone.
    pub fn changed(&self) -> Option<&std::path::Path> {
        let now = |p: &PathBuf| FileId::of_path(p).ok();
        self.0
            .iter()
            .find(|(p, then)| now(p) != Some(*then))
            .map(|(p, _)| p.as_path())
    }
}

/// One file as it was read; see the module documentation.
pub struct Stamp {
    /// The file's path as given.
    pub path: PathBuf,
    opened: FileId,
    /// A regular file (not a named pipe or a device, whose times move with every write
    /// and whose bytes alone tell what was read).
    regular: bool,
    hash: Arc<Mutex<Xxh3>>,
}

impl std::fmt::Debug for Stamp {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Stamp")
            .field("path", &self.path)
            .finish_non_exhaustive()
    }
}

impl Stamp {
    /// The stamp of `file` (opened from `path`), and `file` wrapped so that the bytes read
    /// through it are hashed into the stamp.
    pub(super) fn of(path: PathBuf, file: File) -> io::Result<(Self, Hashing<File>)> {
        let meta = file.metadata()?;
        let hash = Arc::new(Mutex::new(Xxh3::new()));
        let stamp = Stamp {
            path,
            opened: FileId::of(&meta),
            regular: meta.is_file(),
            hash: Arc::clone(&hash),
        };
        Ok((stamp, Hashing { inner: file, hash }))
    }

    /// The xxh3 of the bytes read so far.
    fn digest(&self) -> u64 {
        self.hash
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .digest()
    }

    /// Whether the file read for `self` is not the one `earlier` read, as it was: another
    /// file, size or modification time when opened or now, or other bytes read (of a named
    /// pipe, whose writer writes it again: the bytes alone).
    pub fn differs_from(&self, earlier: &Stamp) -> bool {
        let now = FileId::of_path(&self.path).ok();
        let moved = self.opened != earlier.opened || now != Some(earlier.opened);
        self.path != earlier.path || (earlier.regular && moved) || self.digest() != earlier.digest()
    }
}

/// A reader hashing the bytes read through it into a [`Stamp`].
pub(super) struct Hashing<R> {
    inner: R,
    hash: Arc<Mutex<Xxh3>>,
}

impl<R: Read> Read for Hashing<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.hash
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .update(&buf[..n]);
        Ok(n)
    }
}

#[cfg(test)]
mod tests {
    use super::Snapshot;

    #[test]
    fn a_snapshot_names_a_file_that_changed_or_vanished_directories_walked() {
        let dir = tempfile::tempdir().unwrap();
        let path = |name: &str| dir.path().join(name);
        std::fs::create_dir_all(path("d/e")).unwrap();
        for name in ["a.jsonl", "d/b.jsonl", "d/e/c.jsonl"] {
            std::fs::write(path(name), b"{\"text\":\"x\"}\n").unwrap();
        }
        let args = [
            path("a.jsonl").to_string_lossy().into_owned(),
            path("d").to_string_lossy().into_owned(),
            "-".to_owned(),
        ];
        let snapshot = Snapshot::of(&args);
        assert_eq!(
            snapshot.0.len(),
            3,
            "every file, nested ones too; stdin left out"
        );
        assert_eq!(snapshot.changed(), None);
        std::fs::write(path("d/e/c.jsonl"), b"{\"text\":\"longer\"}\n").unwrap();
        assert_eq!(snapshot.changed(), Some(path("d/e/c.jsonl").as_path()));
        // The same size, the modification time put back: the status change time tells.
        let snapshot = Snapshot::of(&args);
        let then = std::fs::metadata(path("d/b.jsonl"))
            .unwrap()
            .modified()
            .unwrap();
        std::thread::sleep(std::time::Duration::from_millis(20));
        std::fs::write(path("d/b.jsonl"), b"{\"text\":\"y\"}\n").unwrap();
        let file = std::fs::File::options()
            .write(true)
            .open(path("d/b.jsonl"))
            .unwrap();
        file.set_modified(then).unwrap();
        let now = std::fs::metadata(path("d/b.jsonl")).unwrap();
        assert_eq!((now.len(), now.modified().unwrap()), (13, then), "premise");
        assert_eq!(snapshot.changed(), Some(path("d/b.jsonl").as_path()));
        let snapshot = Snapshot::of(&args);
        std::fs::remove_file(path("a.jsonl")).unwrap();
        assert_eq!(snapshot.changed(), Some(path("a.jsonl").as_path()));
    }
}
