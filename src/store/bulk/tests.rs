//! Bulk loads that fail after part of them reached the store, through a backend that
//! injects the failure (RocksDB underneath, so the store can be reopened and checked).

use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

use crate::error::{Error, Result};
use crate::index::layout::Layout;
use crate::store::backend::{Change, Consistency, MetaKey, Space};
use crate::store::hooked::Hooked;
use crate::store::{Store, StoreBuilder, rocks};
use crate::types::{DocMeta, Entry, Fingerprint};

fn injected(what: &str) -> Error {
    Error::storage("memory", format!("injected failure: {what}"))
}

/// A new RocksDB store at `path` that fails once where the test asks: its ingest after
/// making `ingest_after` runs visible (`docs` first; 0: never), and, when `commit`, the
/// change set that removes the bulk-load marker.
fn faulty_store(path: &Path, ingest_after: usize, commit: bool) -> Store {
    let layout = Layout::new(3, 4).unwrap();
    // A small budget, so the load spills too.
    let options = StoreBuilder::new(path)
        .bulk_memory_bytes(64 << 10)
        .with_layout(layout.clone());
    let inner =
        rocks::create(path, options.backend_tables().unwrap(), 8 << 20, |_| Ok(())).unwrap();
    let mut backend = Hooked::new(Box::new(inner));
    let commit = AtomicBool::new(commit);
    backend.on_write = Box::new(move |changes| {
        let unmarks = changes
            .changes()
            .contains(&Change::DeleteMeta(MetaKey::BulkPending));
        if unmarks && commit.swap(false, Ordering::SeqCst) {
            return Err(injected("the commit of the load"));
        }
        Ok(())
    });
    let ingest_after = AtomicUsize::new(ingest_after);
    backend.on_ingest = Box::new(move |ingest, mut runs| {
        let after = ingest_after.swap(0, Ordering::SeqCst);
        if after == 0 {
            return ingest.ingest(runs);
        }
        runs.sort_by_key(|r| match r.space() {
            Space::Meta | Space::Docs => 0,
            Space::Ids => 1,
            Space::Exact => 2,
            Space::Table(t) => 3 + t,
        });
        runs.truncate(after);
        ingest.ingest(runs)?;
        Err(injected("the ingest of the tables"))
    });
    Store::create(Box::new(backend), options, layout).unwrap()
}

/// 2,000 entries `d0`.., then new versions of `d1900`..`d1999` (the last one wins).
fn entries() -> Vec<Entry> {
    let entry = |i: u64, fp: u64| Entry {
        id: format!("d{i}"),
        fp: Fingerprint(fp),
        meta: DocMeta::default(),
    };
    let mut all: Vec<Entry> = (0..2000)
        .map(|i| entry(i, i.wrapping_mul(0x9E37_79B9_7F4A_7C15)))
        .collect();
    all.extend((1900..2000).map(|i| entry(i, !i)));
    all
}

/// The fingerprint `d{i}` holds after [`entries`].
fn loaded_fp(i: u64) -> u64 {
    if i >= 1900 {
        !i
    } else {
        i.wrapping_mul(0x9E37_79B9_7F4A_7C15)
    }
}

fn assert_loaded(store: &Store, extra: u64) {
    assert_eq!(store.len(), 2000 + extra);
    for i in (0..2000).step_by(7).chain(1990..2000) {
        let doc = store.get(&format!("d{i}")).unwrap().expect("loaded");
        assert_eq!(doc.fp, loaded_fp(i), "d{i}");
    }
    let report = store.check().unwrap();
    assert!(report.is_ok(), "{:?}", report.problems);
    let snap = store.backend().snapshot(Consistency::PointInTime);
    assert_eq!(snap.meta(MetaKey::BulkPending).unwrap(), None);
}

fn insert(store: &Store, id: &str) -> Result<crate::store::InsertOutcome> {
    store.insert_fingerprint(id, Fingerprint(42), DocMeta::default())
}

#[test]
fn a_failed_ingest_leaves_the_handle_refusing_writes_until_repaired() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("db");
    let mut store = faulty_store(&path, 2, false);
    let err = store.bulk_load(entries()).unwrap_err();
    assert!(err.to_string().contains("injected"), "{err}");
    // `docs` and `ids` were ingested, the tables not. The handle's next sequence number
    // is the load's first (d0's): a write would overwrite a loaded document.
    let attempt = insert(&store, "new");
    let d0 = store.get("d0").unwrap().unwrap();
    assert_eq!(
        (d0.id.as_str(), d0.fp),
        ("d0", loaded_fp(0)),
        "d0 overwritten"
    );
    let refused = attempt.unwrap_err();
    assert!(matches!(refused, Error::BulkLoadFailed(_)), "{refused}");
    assert!(refused.to_string().contains("injected"), "{refused}");
    assert!(matches!(store.delete("d5"), Err(Error::BulkLoadFailed(_))));
    assert!(matches!(
        store.check_and_insert(&Entry::new("x", Fingerprint(1), DocMeta::default()), 3),
        Err(Error::BulkLoadFailed(_))
    ));
    assert!(matches!(
        store.bulk_load(entries()),
        Err(Error::BulkLoadFailed(_))
    ));
    assert_eq!(store.get("d0").unwrap().unwrap().fp, loaded_fp(0));
    // A repair through the handle finishes the load (its documents were ingested).
    assert_eq!(store.repair().unwrap().kept, 2000);
    insert(&store, "new").unwrap();
    assert_loaded(&store, 1);
    drop(store);
    let store = Store::open(&path).unwrap();
    assert_loaded(&store, 1);
    assert!(!path.join("bulk-load.tmp").exists());
}

#[test]
fn a_failed_commit_is_recovered_by_the_next_open() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("db");
    let store = faulty_store(&path, 0, true);
    let err = store.bulk_load(entries()).unwrap_err();
    assert!(err.to_string().contains("injected"), "{err}");
    let attempt = insert(&store, "new");
    let d0 = store.get("d0").unwrap().unwrap();
    assert_eq!(
        (d0.id.as_str(), d0.fp),
        ("d0", loaded_fp(0)),
        "d0 overwritten"
    );
    assert!(matches!(attempt, Err(Error::BulkLoadFailed(_))));
    drop(store);
    // The marker is still set: the next writable open completes the load.
    let store = Store::open(&path).unwrap();
    assert_loaded(&store, 0);
    insert(&store, "new").unwrap();
    assert_loaded(&store, 1);
}

#[test]
fn a_failure_before_the_ingest_leaves_the_handle_usable() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("db");
    let store = faulty_store(&path, 0, false);
    let mut bad = entries();
    bad.insert(
        1500,
        Entry {
            id: String::new(),
            fp: Fingerprint(0),
            meta: DocMeta::default(),
        },
    );
    assert!(matches!(store.bulk_load(bad), Err(Error::InvalidId(_))));
    assert!(store.is_empty());
    assert!(
        !path.join("bulk-load.tmp").exists(),
        "staged and spilled runs removed"
    );
    // Nothing was ingested, so the counters are right: the handle goes on.
    store.bulk_load(entries()).unwrap();
    assert_loaded(&store, 0);
}
