//! Format compatibility: the committed format-v1 store (tests/fixtures/v1-store) is refused
//! by this format-2 build with an error that says to re-import; its input re-imports into a
//! format-2 store that answers like brute force.

use std::path::Path;

use simstore::input::reader::parse_jsonl;
use simstore::{Error, Fingerprint, Fingerprinter, Store};

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

/// Format 3 (format 2's `exact` column family and content hashes, shorter table keys) cannot read a
/// format-1 store: it is refused on open, for writing and read-only, with an error that
/// says to re-import, and its data files are left untouched.
#[test]
fn format_v1_store_is_refused_with_what_to_do() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("v1");
    copy_dir(&fixture("v1-store"), &path);
    let before = dir_bytes(&path);
    for read_only in [false, true] {
        let err = Store::builder(&path)
            .create_if_missing(false)
            .read_only(read_only)
            .open()
            .expect_err("a v1 store must be refused");
        assert!(
            matches!(
                err,
                Error::FormatVersion {
                    found: 1,
                    oldest: 5,
                    expected: 8,
                    ..
                }
            ),
            "{err:?}"
        );
        let msg = err.to_string();
        assert_eq!(
            msg,
            "store format version 1 is not supported by this build (it reads versions 5 to 8); \
             it was written by an older simstore: re-import its documents from their original \
             input into a new store; if the simstore that wrote it can export them, export \
             them with it and import the export into a new store with this one (that keeps \
             ids, fingerprints, titles and urls; a store holds no texts, so exact-duplicate \
             checks and verification need the original input)"
        );
    }
    // The refusal changed no data file of the old store.
    let after = dir_bytes(&path);
    let ssts: Vec<&String> = before.keys().filter(|n| n.ends_with(".sst")).collect();
    assert!(!ssts.is_empty());
    for name in ssts {
        assert_eq!(after.get(name), before.get(name), "{name} changed");
    }
}

/// The documented way out: re-importing the fixture's input into a new store gives a
/// current-format store with the same documents and answers.
#[test]
fn format_v1_input_reimports() {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(dir.path().join("v2")).unwrap();
    let input = std::fs::read(fixture("v1-input.jsonl")).unwrap();
    let f = Fingerprinter::new();
    let mut model = Vec::new();
    for line in input.split(|&b| b == b'\n').filter(|l| !l.is_empty()) {
        let record = parse_jsonl(line).unwrap();
        let id = record.id.clone();
        let entry = record.into_entry(&f).unwrap();
        model.push((id, entry.fp.0));
        store.insert_batch([entry]).unwrap();
    }
    assert_eq!(store.len(), model.len() as u64);
    assert_eq!(store.stats().unwrap().format_version, 8);
    assert!(store.check().unwrap().is_ok());
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

fn dir_bytes(path: &Path) -> std::collections::BTreeMap<String, Vec<u8>> {
    std::fs::read_dir(path)
        .unwrap()
        .map(|e| e.unwrap())
        .map(|e| {
            (
                e.file_name().to_string_lossy().into_owned(),
                std::fs::read(e.path()).unwrap(),
            )
        })
        .collect()
}
