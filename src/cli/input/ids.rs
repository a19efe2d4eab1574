//! The ids of documents read whole (a text or HTML file, stdin): the same however the
//! input is spelled and wherever simstore runs.
//!
//! An input's id is its path relative to the directory that holds it: a file's id is its
//! name (`./doc.txt`, `doc.txt` and `/abs/doc.txt` are all `doc.txt`); a file found in a
//! directory `site` is `site/` and its path inside it (`site/sub/a.html`, whether the
//! directory was given as `site`, `./site/` or `/abs/site`). Text or HTML read from stdin
//! is `stdin-` and the first 16 hexadecimal digits of its bytes' XXH3 hash, so that
//! different texts get different ids and the same text the same one.

use std::path::Path;

/// The last component of `dir` as given, or of its canonical path (for `.` or `..`); empty
/// for the root directory.
pub fn root_name(dir: &Path) -> String {
    let name = match dir.file_name() {
        Some(name) => Some(name.to_owned()),
        None => dir
            .canonicalize()
            .ok()
            .and_then(|c| c.file_name().map(ToOwned::to_owned)),
    };
    name.map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default()
}

/// The id of `file`, found under the directory `dir` (given as an argument) whose
/// [`root_name`] is `root`: `root/` and the path of `file` inside `dir`, `/`-separated.
pub fn in_directory(root: &str, dir: &Path, file: &Path) -> String {
    let inside = file.strip_prefix(dir).unwrap_or(file);
    let mut id = root.to_owned();
    for part in inside.components() {
        if !id.is_empty() {
            id.push('/');
        }
        id.push_str(&part.as_os_str().to_string_lossy());
    }
    id
}

/// The id of a whole-file input given as `path` (`-` = stdin) holding `bytes`.
pub fn of_file(path: &str, bytes: &[u8]) -> String {
    if path == "-" {
        return format!("stdin-{:016x}", xxhash_rust::xxh3::xxh3_64(bytes));
    }
    root_name(Path::new(path))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_file_is_named_by_its_name_however_spelled() {
        for spelled in ["doc.txt", "./doc.txt", "/abs/doc.txt", "a/../doc.txt"] {
            assert_eq!(of_file(spelled, b""), "doc.txt", "{spelled}");
        }
    }

    #[test]
    fn a_file_in_a_directory_is_named_from_the_directory() {
        for dir in ["site", "./site/", "/abs/site"] {
            let file = Path::new(dir).join("sub/a.html");
            let id = in_directory(&root_name(Path::new(dir)), Path::new(dir), &file);
            assert_eq!(id, "site/sub/a.html", "{dir}");
        }
    }

    #[test]
    fn stdin_texts_get_ids_by_content() {
        assert_eq!(of_file("-", b"one"), of_file("-", b"one"));
        assert_ne!(of_file("-", b"one"), of_file("-", b"two"));
        assert!(of_file("-", b"one").starts_with("stdin-"));
    }
}
