//! Format compatibility: the committed format-v1 store opens, holds exactly the records of
//! its input, and answers queries like brute force over that input.

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

#[test]
fn format_v1_store_opens_and_answers() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("v1");
    copy_dir(&fixture("v1-store"), &path);
    let store = Store::builder(&path)
        .create_if_missing(false)
        .open()
        .expect("a v1 store must open");
    let input = std::fs::read(fixture("v1-input.jsonl")).unwrap();
    let f = Fingerprinter::new();
    let mut model = Vec::new();
    for line in input.split(|&b| b == b'\n').filter(|l| !l.is_empty()) {
        let record = parse_jsonl(line).unwrap();
        // Fingerprints stored under spec v1 are what this build computes (spec stability).
        let fp = record.fingerprint(&f).unwrap();
        let stored = store
            .get(&record.id)
            .unwrap()
            .expect("every input record is stored");
        assert_eq!(stored.fingerprint(), fp, "{}", record.id);
        assert_eq!(stored.title, record.title);
        assert_eq!(stored.url, record.url);
        model.push((record.id, fp.0));
    }
    assert_eq!(store.len(), model.len() as u64);
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
    let cluster = store.query("61790134676b1b69".parse().unwrap(), 3).unwrap();
    let ids: Vec<&str> = cluster.iter().map(|m| m.doc.id.as_str()).collect();
    assert_eq!(
        ids,
        [
            "fp-00", "fp-05", "fp-01", "fp-06", "fp-02", "fp-07", "fp-03", "fp-08"
        ]
    );
}
