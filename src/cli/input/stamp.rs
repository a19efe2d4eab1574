//! What a file read was ([`Stamp`]): its identity, size and modification time when it was
//! opened, and an xxh3 of the bytes read from it — so that a command reading its inputs
//! twice (`dedup --output`) can tell that one changed in between.

use std::fs::{File, Metadata};
use std::io::{self, Read};
use std::os::unix::fs::MetadataExt;
use std::path::PathBuf;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::SystemTime;

use xxhash_rust::xxh3::Xxh3;

/// A file's identity (device, inode), size and modification time.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct FileId {
    dev: u64,
    ino: u64,
    len: u64,
    modified: Option<SystemTime>,
}

impl FileId {
    fn of(meta: &Metadata) -> Self {
        FileId {
            dev: meta.dev(),
            ino: meta.ino(),
            len: meta.len(),
            modified: meta.modified().ok(),
        }
    }
}

/// One file as it was read; see the module documentation.
pub struct Stamp {
    /// The file's path as given.
    pub path: PathBuf,
    opened: FileId,
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
        let opened = FileId::of(&file.metadata()?);
        let hash = Arc::new(Mutex::new(Xxh3::new()));
        let stamp = Stamp {
            path,
            opened,
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
    /// file, size or modification time when opened or now, or other bytes read.
    pub fn differs_from(&self, earlier: &Stamp) -> bool {
        let now = std::fs::metadata(&self.path).map(|m| FileId::of(&m)).ok();
        self.path != earlier.path
            || self.opened != earlier.opened
            || now != Some(earlier.opened)
            || self.digest() != earlier.digest()
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
