//! Inputs that cannot be opened twice — stdin, a `<(...)` or `/dev/stdin` (a descriptor's
//! pipe), a character device — copied to a scratch file for a command that reads its
//! inputs twice (`dedup --output`). Messages still name the input as given, and its
//! format is sniffed from its bytes as stdin's is. A named FIFO is not copied: it can be
//! opened again, and its writer decides what the second open reads.

use std::fs;
use std::io;
use std::path::Path;
use std::sync::Mutex;

use anyhow::{Context, Result};
use tempfile::NamedTempFile;

use super::display_name;

/// The scratch files of this process and the names of the inputs they copy.
static SPOOLED: Mutex<Vec<(String, &'static str)>> = Mutex::new(Vec::new());

/// Whether `path` is an input that cannot be opened a second time.
pub fn cannot_reopen(path: &str) -> bool {
    use std::os::unix::fs::FileTypeExt;
    let Ok(meta) = fs::metadata(path) else {
        return path == "-";
    };
    let kind = meta.file_type();
    path == "-"
        || kind.is_char_device()
        || (kind.is_fifo() && crate::cli::outfile::names_a_descriptor(Path::new(path)))
}

/// Copies the input `path` into a new scratch file beside `beside`, removed when the
/// returned file is dropped; returns the scratch file's path (to read instead of `path`).
pub fn spool(path: &str, beside: &Path) -> Result<(String, NamedTempFile)> {
    let name = display_name(path).to_owned();
    // Beside the output, unless it is written through (a pipe, `/dev/stdout`): then in the
    // temporary directory.
    let mut file = match crate::cli::outfile::scratch_beside(beside) {
        Ok(file) => file,
        Err(_) => NamedTempFile::new().context("cannot create a scratch file")?,
    };
    let copied = match path {
        "-" => io::copy(&mut io::stdin().lock(), &mut file),
        _ => fs::File::open(path).and_then(|mut f| io::copy(&mut f, &mut file)),
    };
    copied.with_context(|| {
        format!(
            "cannot copy {name} to a scratch file in the output's directory (its inputs are \
             read twice)"
        )
    })?;
    let scratch = file.path().to_string_lossy().into_owned();
    let mut spooled = SPOOLED.lock().unwrap_or_else(|e| e.into_inner());
    spooled.push((scratch.clone(), Box::leak(name.into_boxed_str())));
    Ok((scratch, file))
}

/// The name of the input that the scratch file `path` copies, if it is one.
pub(super) fn spooled_name(path: &str) -> Option<&'static str> {
    let spooled = SPOOLED.lock().unwrap_or_else(|e| e.into_inner());
    spooled.iter().find(|(p, _)| p == path).map(|(_, n)| *n)
}
