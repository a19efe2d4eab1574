//! The files commands write (`dedup --output`, `export -o`, `eval --json`, `man --dir`): one
//! rule for whatever is already at the path.
//!
//! - nothing, or a regular file: the output goes to a temporary file in the same directory
//!   (`.NAME.simstore-partial-PID-XXXXXX`), renamed over the path at the end, so a failed
//!   or killed run leaves the old file (or none) and never half an output; a temporary
//!   file left by a killed run (its process is gone) is removed by the next write into
//!   that directory;
//! - a symbolic link: followed to its final target, to which these rules apply (the link
//!   stays a link);
//! - a FIFO or a character device (`/dev/null`, `/dev/stdout` on a terminal): written
//!   through, opened for writing as it is (nothing is created, renamed or truncated); so
//!   is a regular file named by a file-descriptor link (`/dev/stdout` redirected to a
//!   file), appended to as the shell's `>>` would;
//! - anything else (a directory, a socket, a block device) is refused.

use std::fs::{self, File, Metadata, OpenOptions};
use std::io::{self, Write};
use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};
use tempfile::NamedTempFile;

/// What a temporary file's name holds after `.NAME`, before the pid of its writer.
const PARTIAL: &str = ".simstore-partial-";

/// Random characters ending a temporary file's name.
const RAND_CHARS: usize = 6;

/// An output file being written; see the module documentation. Dropped without
/// [`OutFile::finish`], it leaves what was at the path as it was (a write-through target
/// keeps what was written to it).
pub struct OutFile {
    inner: Inner,
    /// The path as given, for messages.
    path: PathBuf,
}

enum Inner {
    /// A temporary file, renamed to `target` (the final path, links followed) at the end.
    Replace {
        file: NamedTempFile,
        target: PathBuf,
    },
    /// A FIFO, a device or a descriptor's file, written as it is.
    Through(File),
}

impl OutFile {
    /// Opens `path` for writing by the rule of the module documentation.
    pub fn create(path: &Path) -> Result<Self> {
        let inner = match fs::metadata(path) {
            Ok(meta) => existing(path, &meta)?,
            Err(e) if e.kind() == io::ErrorKind::NotFound => {
                replace(&dangling_target(path)?, None)?
            }
            Err(e) => return Err(e).with_context(|| format!("cannot write {}", path.display())),
        };
        Ok(Self {
            inner,
            path: path.to_owned(),
        })
    }

    /// Whether [`OutFile::create`] could write `path`, without creating or opening
    /// anything: not a directory, socket or block device, and a new file's directory
    /// exists. For commands that read their input before they write (a bad path must fail
    /// before the work, not after it).
    pub fn check(path: &Path) -> Result<()> {
        match fs::metadata(path) {
            Ok(meta) => refuse_kind(path, &meta),
            Err(e) if e.kind() == io::ErrorKind::NotFound => {
                let dir = parent(&dangling_target(path)?).to_owned();
                match fs::metadata(&dir) {
                    Ok(m) if m.is_dir() => Ok(()),
                    Ok(_) => bail!(
                        "cannot write {}: {} is not a directory",
                        path.display(),
                        dir.display()
                    ),
                    Err(_) => bail!(
                        "cannot write {}: the directory {} does not exist",
                        path.display(),
                        dir.display()
                    ),
                }
            }
            Err(e) => Err(e).with_context(|| format!("cannot write {}", path.display())),
        }
    }

    /// Ends the output: a temporary file is synced and renamed into place; a write-through
    /// target is flushed.
    pub fn finish(self) -> Result<()> {
        let path = &self.path;
        match self.inner {
            Inner::Replace { file, target } => {
                file.as_file()
                    .sync_all()
                    .with_context(|| format!("cannot write {}", path.display()))?;
                file.persist(&target)
                    .with_context(|| format!("cannot write {}", path.display()))?;
                // The rename itself made durable; a directory that cannot be synced is no error.
                if let Ok(dir) = File::open(parent(&target)) {
                    let _ = dir.sync_all();
                }
            }
            Inner::Through(mut file) => file
                .flush()
                .with_context(|| format!("cannot write {}", path.display()))?,
        }
        Ok(())
    }
}

impl Write for OutFile {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        match &mut self.inner {
            Inner::Replace { file, .. } => file.write(buf),
            Inner::Through(file) => file.write(buf),
        }
    }

    fn flush(&mut self) -> io::Result<()> {
        match &mut self.inner {
            Inner::Replace { file, .. } => file.flush(),
            Inner::Through(file) => file.flush(),
        }
    }
}

/// The output for an existing `path` whose final target is described by `meta`.
fn existing(path: &Path, meta: &Metadata) -> Result<Inner> {
    use std::os::unix::fs::FileTypeExt;
    let kind = meta.file_type();
    let through = || {
        let mut open = OpenOptions::new();
        open.write(true).append(kind.is_file());
        open.open(path)
            .map(Inner::Through)
            .with_context(|| format!("cannot open {} for writing", path.display()))
    };
    refuse_kind(path, meta)?;
    if kind.is_fifo() || kind.is_char_device() || names_a_descriptor(path) {
        return through();
    }
    let target =
        fs::canonicalize(path).with_context(|| format!("cannot resolve {}", path.display()))?;
    replace(&target, Some(meta))
}

/// Refuses a `path` whose target (`meta`) is not a file, a FIFO or a character device.
fn refuse_kind(path: &Path, meta: &Metadata) -> Result<()> {
    use std::os::unix::fs::FileTypeExt;
    let kind = meta.file_type();
    if kind.is_file() || kind.is_fifo() || kind.is_char_device() {
        return Ok(());
    }
    let what = if kind.is_dir() {
        "a directory"
    } else if kind.is_socket() {
        "a socket"
    } else if kind.is_block_device() {
        "a block device"
    } else {
        "neither a file, a FIFO nor a character device"
    };
    bail!(
        "cannot write to {}: it is {what}; give the path of a new or regular file (or a FIFO, \
         or a character device such as /dev/null)",
        path.display()
    )
}

/// Whether `path` reaches its target through a file descriptor's link (`/dev/stdout`,
/// `/dev/fd/N`, `/proc/self/fd/N`): the file an open descriptor names.
pub fn names_a_descriptor(path: &Path) -> bool {
    let mut p = path.to_path_buf();
    for _ in 0..40 {
        if p.starts_with("/proc") || p.starts_with("/dev/fd") {
            return true;
        }
        match fs::read_link(&p) {
            Ok(link) => p = parent(&p).join(link),
            Err(_) => return false,
        }
    }
    false
}

/// Where a write to `path` ends: its symbolic links followed, to a file or directory that
/// exists or is yet to be made.
pub fn final_target(path: &Path) -> Result<PathBuf> {
    fs::canonicalize(path).or_else(|_| dangling_target(path))
}

/// Refuses an output `path` inside the store directory `db` (a file of the store would be
/// replaced: `export -o DB/CURRENT` damaged the store it read), its links followed.
pub fn outside_store(path: &Path, db: &Path) -> Result<()> {
    let db_name = [db.to_string_lossy().into_owned()];
    if db.is_dir() && input_holding(path, &db_name).is_some() {
        bail!(
            "{} is inside the store directory {}: writing it there would replace or mix with \
             the store's own files; write it outside the store's directory",
            path.display(),
            db.display()
        );
    }
    Ok(())
}

/// The first of `inputs` that `path` (a file to be written) is, or is inside of (an input
/// directory, whose files a dedup reads): writing it would replace an input.
pub fn input_holding<'a>(path: &Path, inputs: &'a [String]) -> Option<&'a str> {
    // A path that does not exist yet: its directory's canonical path and its name.
    let canonical = |p: &Path| {
        std::fs::canonicalize(p).ok().or_else(|| {
            let parent = p.parent().filter(|d| !d.as_os_str().is_empty());
            Some(
                std::fs::canonicalize(parent.unwrap_or(Path::new(".")))
                    .ok()?
                    .join(p.file_name()?),
            )
        })
    };
    let target = canonical(path)?;
    inputs
        .iter()
        .map(String::as_str)
        .filter(|&f| f != "-")
        .find(|&f| {
            canonical(f.as_ref())
                .is_some_and(|c| c == target || (c.is_dir() && target.starts_with(&c)))
        })
}

/// Where a `path` that does not exist is created: itself, or the final target of the
/// symbolic links it names (a link to a file yet to be written).
fn dangling_target(path: &Path) -> Result<PathBuf> {
    let mut p = path.to_path_buf();
    for _ in 0..40 {
        match fs::symlink_metadata(&p) {
            Ok(m) if m.file_type().is_symlink() => {
                let link = fs::read_link(&p)
                    .with_context(|| format!("cannot resolve {}", path.display()))?;
                p = parent(&p).join(link);
            }
            _ => return Ok(p),
        }
    }
    bail!(
        "cannot write {}: too many levels of symbolic links",
        path.display()
    )
}

/// The directory holding `path` (`.` for a bare name).
fn parent(path: &Path) -> &Path {
    match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    }
}

/// A temporary file beside `target`, with the permissions of the file it replaces
/// (`old`), or a new file's.
fn replace(target: &Path, old: Option<&Metadata>) -> Result<Inner> {
    let dir = parent(target);
    let file = temp_beside(target)?;
    if let Some(old) = old {
        fs::set_permissions(file.path(), old.permissions())
            .with_context(|| format!("cannot create a file in {}", dir.display()))?;
    }
    Ok(Inner::Replace {
        file,
        target: target.to_owned(),
    })
}

/// A scratch file beside `path` (`path`'s links followed), named as a temporary output so
/// that one left by a killed run is removed by the next write into that directory;
/// deleted when dropped.
pub fn scratch_beside(path: &Path) -> Result<NamedTempFile> {
    temp_beside(&dangling_target(path)?)
}

/// A new temporary file beside `target`, `.NAME.simstore-partial-PID-XXXXXX`, after the
/// stale ones of that directory are removed.
fn temp_beside(target: &Path) -> Result<NamedTempFile> {
    let dir = parent(target);
    let prefix = partial_prefix(target);
    let mut builder = tempfile::Builder::new();
    builder.prefix(&prefix).rand_bytes(RAND_CHARS);
    builder.permissions(std::os::unix::fs::PermissionsExt::from_mode(0o666));
    builder
        .tempfile_in(dir)
        .with_context(|| format!("cannot create a file in {}", dir.display()))
}

/// A new directory beside `target`, named as the temporary files are (so that one a killed
/// run leaves is removed by the next write into that directory), for an output written as
/// several files and renamed into place at the end; the caller renames or removes it.
pub fn partial_dir_beside(target: &Path) -> Result<PathBuf> {
    let dir = parent(target);
    let prefix = partial_prefix(target);
    let made = tempfile::Builder::new()
        .prefix(&prefix)
        .rand_bytes(RAND_CHARS)
        .tempdir_in(dir);
    Ok(made
        .with_context(|| format!("cannot create a directory in {}", dir.display()))?
        .keep())
}

/// The start of the name of a temporary file or directory beside `target`,
/// `.NAME.simstore-partial-PID-`, once the stale ones of its directory are removed.
fn partial_prefix(target: &Path) -> String {
    remove_stale(parent(target));
    let name = target
        .file_name()
        .map(|n| n.to_string_lossy().chars().take(64).collect::<String>())
        .unwrap_or_default();
    format!(".{name}{PARTIAL}{}-", std::process::id())
}

/// Removes the temporary files and directories in `dir` ([`PARTIAL`] in their name) whose
/// writer is no longer running (killed midway). Only where `/proc` tells which processes run.
pub fn remove_stale(dir: &Path) {
    if !Path::new("/proc/self").exists() {
        return;
    }
    let Ok(entries) = fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let name = entry.file_name();
        let Some(pid) = name.to_str().and_then(stale_pid) else {
            continue;
        };
        let Ok(kind) = entry.file_type() else {
            continue;
        };
        if !Path::new("/proc").join(pid).exists() {
            let _ = match (kind.is_file(), kind.is_dir()) {
                (true, _) => fs::remove_file(entry.path()),
                (_, true) => fs::remove_dir_all(entry.path()),
                _ => Ok(()),
            };
        }
    }
}

/// The writer's pid in the name of one of our temporary files
/// (`.NAME.simstore-partial-PID-XXXXXX`); `None` for any other name.
fn stale_pid(name: &str) -> Option<&str> {
    let (head, tail) = name.rsplit_once(PARTIAL)?;
    let (pid, rand) = tail.split_once('-')?;
    let ours = head.starts_with('.')
        && !pid.is_empty()
        && pid.bytes().all(|b| b.is_ascii_digit())
        && rand.len() == RAND_CHARS
        && rand.bytes().all(|b| b.is_ascii_alphanumeric());
    ours.then_some(pid)
}

#[cfg(test)]
mod tests {
    use std::io::Write;
    use std::os::unix::fs::FileTypeExt;
    use std::path::Path;

    use super::{OutFile, stale_pid};

    /// The machine's own `/dev/null`, written through (the integration tests use a node of
    /// their own, made with `mknod`): it is still a character device afterwards.
    #[test]
    fn dev_null_is_written_through_and_stays_a_device() {
        let mut out = OutFile::create(Path::new("/dev/null")).unwrap();
        out.write_all(b"some output\n").unwrap();
        out.finish().unwrap();
        let kind = std::fs::symlink_metadata("/dev/null").unwrap().file_type();
        assert!(kind.is_char_device());
    }

    #[test]
    fn only_our_own_names_are_stale_candidates() {
        assert_eq!(
            stale_pid(".kept.jsonl.simstore-partial-4242-aB3xY9"),
            Some("4242")
        );
        assert_eq!(stale_pid(".x.simstore-partial-1-000000"), Some("1"));
        assert_eq!(stale_pid("kept.jsonl.simstore-partial-4242-aB3xY9"), None);
        assert_eq!(stale_pid(".kept.simstore-partial-42a-aB3xY9"), None);
        assert_eq!(stale_pid(".kept.simstore-partial-42-aB3x"), None);
        assert_eq!(stale_pid(".kept.simstore-partial--aB3xY9"), None);
        assert_eq!(stale_pid(".simstore-dedup-aB3xY9"), None);
    }
}
