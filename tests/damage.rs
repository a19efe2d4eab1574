//! Damaged files: a write-ahead log damaged in its middle is reported, never truncated
//! silently, and salvaged on request; a repair rebuilds damaged derived data (tables, `ids`,
//! `exact`) from the documents and steps over damaged documents, reporting them; a missing
//! CURRENT or a damaged MANIFEST is named as damage, not as "not a store".

use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

use simstore::{DocMeta, Entry, Error, Fingerprint, Store, StoreBuilder};

use crate::util::{code, raw_db, stderr};

fn fp(i: u64) -> Fingerprint {
    Fingerprint(i.wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ (i << 7))
}

fn entry(i: u64) -> Entry {
    Entry {
        id: format!("d{i}"),
        fp: fp(i),
        meta: DocMeta {
            title: Some(format!("title {i}")),
            ..DocMeta::default()
        },
    }
}

fn simstore(db: &Path, args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_simstore"))
        .arg("--db")
        .arg(db)
        .args(args)
        .output()
        .unwrap()
}

/// A store of `n` documents written one write each, all still only in the write-ahead log
/// (nothing flushed), and the path of that log.
fn store_in_log(dir: &Path, n: u64) -> (PathBuf, PathBuf) {
    let path = dir.join("db");
    let store = Store::open(&path).unwrap();
    for i in 0..n {
        let e = entry(i);
        store.insert_fingerprint(&e.id, e.fp, e.meta).unwrap();
    }
    drop(store);
    let log = largest_with_extension(&path, "log");
    (path, log)
}

fn largest_with_extension(dir: &Path, ext: &str) -> PathBuf {
    fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == ext))
        .max_by_key(|p| fs::metadata(p).unwrap().len())
        .unwrap_or_else(|| panic!("no .{ext} file in {}", dir.display()))
}

/// Flips `len` bytes of `file` from `at`.
fn flip(file: &Path, at: usize, len: usize) {
    let mut bytes = fs::read(file).unwrap();
    assert!(bytes.len() >= at + len, "{} is too short", file.display());
    for b in &mut bytes[at..at + len] {
        *b ^= 0x5a;
    }
    fs::write(file, bytes).unwrap();
}

/// Before: RocksDB's default recovery dropped every write after the damage (489 of 1,000
/// documents) and `stats`, `check` and `repair` all said ok.
#[test]
fn a_damaged_log_is_refused_reported_and_salvaged() {
    let dir = tempfile::tempdir().unwrap();
    let (path, log) = store_in_log(dir.path(), 1000);
    let len = fs::metadata(&log).unwrap().len() as usize;
    flip(&log, len / 2, 32);

    let writer = Store::open(&path).unwrap_err();
    assert!(matches!(writer, Error::DamagedLog { .. }), "{writer}");
    assert!(writer.to_string().contains("salvage"), "{writer}");
    let reader = StoreBuilder::new(&path).read_only(true).open().unwrap_err();
    assert!(matches!(reader, Error::DamagedLog { .. }), "{reader}");

    let check = simstore(&path, &["check"]);
    assert_eq!(code(&check), 1, "{}", stderr(&check));
    let out = String::from_utf8_lossy(&check.stdout);
    assert!(out.contains("write-ahead log"), "{out}");
    let plain = simstore(&path, &["repair"]);
    assert_eq!(
        code(&plain),
        2,
        "a plain repair must refuse: {}",
        stderr(&plain)
    );

    let salvage = simstore(&path, &["repair", "--salvage"]);
    assert_eq!(code(&salvage), 0, "{}", stderr(&salvage));
    let said = stderr(&salvage);
    assert!(said.contains("damaged places"), "{said}");

    let store = Store::open(&path).unwrap();
    let kept = store.len();
    // The damage loses the rest of one 32 KiB block of the log: the writes in it, not
    // every write after it (documents at the end are still there).
    assert!((800..1000).contains(&kept), "{kept} kept");
    assert!(
        store.get("d999").unwrap().is_some(),
        "the last write was lost"
    );
    for i in 0..1000 {
        if let Some(doc) = store.get(&format!("d{i}")).unwrap() {
            assert_eq!(doc.fp, fp(i).0);
        }
    }
    assert!(store.check().unwrap().is_ok());
}

/// A last record cut short (a crash in the middle of a write) is no damage: the store
/// opens with every complete write.
#[test]
fn a_log_cut_short_at_its_end_opens() {
    let dir = tempfile::tempdir().unwrap();
    let (path, log) = store_in_log(dir.path(), 200);
    let len = fs::metadata(&log).unwrap().len();
    fs::OpenOptions::new()
        .write(true)
        .open(&log)
        .unwrap()
        .set_len(len - 5)
        .unwrap();
    let store = Store::open(&path).unwrap();
    assert_eq!(store.len(), 199);
    assert!(store.get("d199").unwrap().is_none());
    assert!(store.check().unwrap().is_ok());
}

/// The SST files of column family `cf`.
fn files_of(path: &Path, cf: &str) -> Vec<PathBuf> {
    let db = raw_db(path);
    let files = db.live_files().unwrap();
    drop(db);
    files
        .into_iter()
        .filter(|f| f.column_family_name == cf)
        .map(|f| path.join(f.name.trim_start_matches('/')))
        .collect()
}

/// A store of `n` documents flushed into SST files (`import` of JSONL records, which also
/// fills `exact` with content hashes).
fn flushed_store(dir: &Path, n: u64) -> PathBuf {
    let path = dir.join("db");
    let store = Store::open(&path).unwrap();
    for i in 0..n {
        let doc = simstore::Document {
            id: format!("d{i}"),
            title: None,
            text: format!("document number {i} about {} and {}", i * 7, i % 13),
            ..simstore::Document::default()
        };
        store.insert(&doc).unwrap();
    }
    store.flush().unwrap();
    drop(store);
    path
}

/// Before: `repair` failed on the checksum, left its marker, and every later `get`,
/// `export` and `check` refused with "a repair of this store was interrupted".
#[test]
fn repair_rebuilds_damaged_derived_data() {
    for cf in ["ids", "t00", "exact"] {
        let dir = tempfile::tempdir().unwrap();
        let path = flushed_store(dir.path(), 3000);
        let files = files_of(&path, cf);
        assert!(!files.is_empty(), "{cf} has no file");
        for f in &files {
            flip(f, 64, 64);
        }
        let repair = simstore(&path, &["repair"]);
        assert_eq!(code(&repair), 0, "{cf}: {}", stderr(&repair));
        let store = Store::open(&path).unwrap();
        assert_eq!(store.len(), 3000, "{cf}");
        assert!(store.check().unwrap().is_ok(), "{cf}");
        let doc = store.get("d1234").unwrap().expect("d1234");
        let found = store.query(Fingerprint(doc.fp), 0).unwrap();
        assert!(found.iter().any(|m| m.doc.id == "d1234"), "{cf}");
    }
}

/// Damaged document records cost only themselves: the repair steps over them, says which
/// sequence numbers were lost, and keeps every other document.
#[test]
fn repair_steps_over_damaged_documents() {
    let dir = tempfile::tempdir().unwrap();
    let path = flushed_store(dir.path(), 20_000);
    let docs = files_of(&path, "docs");
    let file = docs
        .iter()
        .max_by_key(|f| fs::metadata(f).unwrap().len())
        .unwrap();
    let len = fs::metadata(file).unwrap().len() as usize;
    flip(file, len / 3, 64);
    let (store, report) = StoreBuilder::new(&path).repair().unwrap();
    assert!(!report.unreadable.is_empty(), "{report:?}");
    assert!(report.lost > 0 && report.lost < 2000, "{report:?}");
    assert_eq!(report.kept + report.lost, 20_000, "{report:?}");
    assert_eq!(store.len(), report.kept);
    let (lo, hi) = report.unreadable[0];
    let kept_after = store.get(&format!("d{}", hi + 1)).unwrap();
    assert!(
        kept_after.is_some(),
        "{report:?}: the document after the damage"
    );
    assert!(lo > 0 && store.get(&format!("d{}", lo - 1)).unwrap().is_some());
    assert!(store.check().unwrap().is_ok());
    // The damaged file is gone: writes (and the compactions they bring) go on.
    for i in 0..5000 {
        store
            .insert_fingerprint(&format!("d{i}"), fp(i), DocMeta::default())
            .unwrap();
    }
    store.flush().unwrap();
    drop(store);
    let store = Store::open(&path).unwrap();
    assert!(store.check().unwrap().is_ok());
    // Document `d{i}` was written with sequence number i: the lost ones below 5000 are back.
    let back: u64 = report
        .unreadable
        .iter()
        .filter(|(from, _)| *from < 5000)
        .map(|(from, to)| (*to).min(4999) - from + 1)
        .sum();
    assert_eq!(store.len(), report.kept + back);
}

/// Before: "not a simstore store … create a store with `simstore init`".
#[test]
fn a_missing_current_is_damage_and_salvage_rebuilds_it() {
    let dir = tempfile::tempdir().unwrap();
    let path = flushed_store(dir.path(), 500);
    fs::remove_file(path.join("CURRENT")).unwrap();
    refused_as_damaged_then_salvaged(&path, 500);
}

/// Writes only in the log when CURRENT went: RocksDB's repair replayed none of them (it
/// knew no column family to put them in) and moved the log to `lost/`, saying the log
/// was intact; the salvage now points CURRENT at the MANIFEST and keeps every write, as it
/// does for a CURRENT that names a MANIFEST that is gone.
#[test]
fn a_missing_current_loses_no_write_of_the_log() {
    let dir = tempfile::tempdir().unwrap();
    let (path, _) = store_in_log(dir.path(), 300);
    fs::remove_file(path.join("CURRENT")).unwrap();
    refused_as_damaged_then_salvaged(&path, 300);
    // Flushed documents and more in the log after them.
    let dir = tempfile::tempdir().unwrap();
    let path = flushed_store(dir.path(), 200);
    let store = Store::open(&path).unwrap();
    for i in 1000..1100 {
        let e = entry(i);
        store.insert_fingerprint(&e.id, e.fp, e.meta).unwrap();
    }
    drop(store);
    fs::remove_file(path.join("CURRENT")).unwrap();
    refused_as_damaged_then_salvaged(&path, 300);
    fs::write(path.join("CURRENT"), "MANIFEST-999999\n").unwrap();
    refused_as_damaged_then_salvaged(&path, 300);
}

/// The store at `path` is refused as damaged (and `check` says so), and a salvage gives back
/// its `n` documents.
fn refused_as_damaged_then_salvaged(path: &Path, n: u64) {
    let err = Store::open(path).unwrap_err();
    assert!(matches!(err, Error::Damaged { .. }), "{err}");
    assert!(!err.to_string().contains("simstore init"), "{err}");
    let check = simstore(path, &["check"]);
    assert_eq!(code(&check), 1, "{}", stderr(&check));
    let salvage = simstore(path, &["repair", "--salvage"]);
    assert_eq!(code(&salvage), 0, "{}", stderr(&salvage));
    let store = Store::open(path).unwrap();
    assert_eq!(store.len(), n);
    assert!(store.check().unwrap().is_ok());
}

#[test]
fn a_damaged_manifest_is_damage() {
    let dir = tempfile::tempdir().unwrap();
    let path = flushed_store(dir.path(), 500);
    let manifest = fs::read_dir(&path)
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| {
            p.file_name()
                .unwrap()
                .to_string_lossy()
                .starts_with("MANIFEST-")
        })
        .unwrap();
    let len = fs::metadata(&manifest).unwrap().len() as usize;
    flip(&manifest, len / 2, 16);
    refused_as_damaged_then_salvaged(&path, 500);
}

/// A rewrite of `docs` cut short: a partial copy (no marker) is dropped and `docs` kept; a
/// complete copy (marker written) whose `docs` was already dropped is copied back.
#[test]
fn a_docs_rewrite_cut_short_is_finished_or_undone() {
    for complete in [false, true] {
        let dir = tempfile::tempdir().unwrap();
        let path = flushed_store(dir.path(), 2000);
        let mut raw = raw_db(&path);
        let opts = rocksdb::Options::default();
        raw.create_cf("docs.rewrite", &opts).unwrap();
        {
            let (docs, copy) = (
                raw.cf_handle("docs").unwrap(),
                raw.cf_handle("docs.rewrite").unwrap(),
            );
            let all: Vec<_> = raw
                .iterator_cf(docs, rocksdb::IteratorMode::Start)
                .map(|r| r.unwrap())
                .collect();
            let take = if complete { all.len() } else { all.len() / 2 };
            for (k, v) in &all[..take] {
                raw.put_cf(copy, k, v).unwrap();
            }
        }
        if complete {
            let meta = raw.cf_handle("meta").unwrap();
            raw.put_cf(meta, b"docs-rewrite-complete", b"").unwrap();
            raw.drop_cf("docs").unwrap();
        }
        drop(raw);
        let store = Store::open(&path).unwrap();
        assert_eq!(store.len(), 2000, "complete: {complete}");
        assert!(store.check().unwrap().is_ok(), "complete: {complete}");
        drop(store);
        let names = rocksdb::DB::list_cf(&rocksdb::Options::default(), &path).unwrap();
        assert!(!names.iter().any(|n| n == "docs.rewrite"), "{names:?}");
    }
}

/// A document record that does not decode costs only itself: the repair deletes it, says
/// which, and the store is sound afterwards (it used to stop the repair).
#[test]
fn repair_deletes_a_record_that_does_not_decode() {
    let dir = tempfile::tempdir().unwrap();
    let path = flushed_store(dir.path(), 300);
    let raw = raw_db(&path);
    let docs = raw.cf_handle("docs").unwrap();
    raw.put_cf(docs, 5u64.to_be_bytes(), b"not a record")
        .unwrap();
    drop(raw);
    let (store, report) = StoreBuilder::new(&path).repair().unwrap();
    assert_eq!(report.undecodable, vec![5], "{report:?}");
    assert_eq!((report.kept, report.lost), (299, 1), "{report:?}");
    assert!(store.get("d5").unwrap().is_none());
    assert!(store.get("d6").unwrap().is_some());
    assert!(store.check().unwrap().is_ok());
}
