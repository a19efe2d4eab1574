//! Format compatibility: the committed store of format v1 / fingerprint spec v1 is refused
//! clearly by this build (spec v2) and left untouched; its input re-imports.

use std::path::Path;

use simstore::reader::parse_jsonl;
use simstore::{Fingerprint, Fingerprinter, Store};

use crate::util::brute_force;

fn fixture(name: &str) -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(name)
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        std::fs::copy(entry.path(), to.join(entry.file_name())).unwrap();
    }
}

/// Every file of a directory with its bytes, to show that a refused open changed nothing.
fn snapshot(dir: &Path) -> Vec<(std::ffi::OsString, Vec<u8>)> {
    let mut files: Vec<_> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap())
        .filter(|e| e.file_name() != "LOCK" && !e.file_name().to_string_lossy().starts_with("LOG"))
        .map(|e| (e.file_name(), std::fs::read(e.path()).unwrap()))
        .collect();
    files.sort();
    files
}

/// A store of fingerprint spec v1 is refused by this build (spec v2): its fingerprints mean
/// something else. The message names both specs and says to re-import; the store is left
/// as it was, for a build with spec v1 to keep using.
#[test]
fn spec_v1_store_is_refused_clearly_and_left_intact() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("v1");
    copy_dir(&fixture("v1-store"), &path);
    let before = snapshot(&path);
    for read_only in [true, false] {
        let Err(err) = Store::builder(&path)
            .create_if_missing(false)
            .read_only(read_only)
            .open()
        else {
            panic!("a spec-v1 store must be refused");
        };
        let msg = err.to_string();
        assert!(matches!(err, simstore::Error::SpecMismatch { .. }), "{msg}");
        assert!(
            msg.contains("spec v1 (") && msg.contains("spec v2 ("),
            "{msg}"
        );
        assert!(
            msg.contains("re-import the documents into a new store"),
            "{msg}"
        );
        if read_only {
            assert_eq!(
                snapshot(&path),
                before,
                "a refused read-only open changes nothing"
            );
        }
    }

    // The CLI says the same and exits 2.
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_simstore"))
        .arg("--db")
        .arg(&path)
        .args(["query", "--k", "3", "some text"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("re-import"), "{stderr}");
}

/// The v1 fixture's input still parses, and its precomputed fingerprints still go into a
/// new store exactly (the fingerprint-only path does not depend on the spec).
#[test]
fn v1_input_reimports_into_a_new_store() {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::builder(dir.path().join("new")).open().unwrap();
    let input = std::fs::read(fixture("v1-input.jsonl")).unwrap();
    let f = Fingerprinter::new();
    let mut model = Vec::new();
    for line in input.split(|&b| b == b'\n').filter(|l| !l.is_empty()) {
        let record = parse_jsonl(line).unwrap();
        let entry = record.clone().into_entry(&f).unwrap();
        model.push((record.id.clone(), entry.fp.0));
        store.insert_batch([entry]).unwrap();
    }
    assert_eq!(store.len(), model.len() as u64);
    for (_, fp) in &model {
        for k in 0..=3 {
            let got: Vec<(u32, String)> = store
                .query(Fingerprint(*fp), k)
                .unwrap()
                .into_iter()
                .map(|m| (m.distance, m.doc.id))
                .collect();
            assert_eq!(got, brute_force(&model, *fp, k));
        }
    }
}
