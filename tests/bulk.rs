//! Bulk loads with a memory budget: the external sort spills sorted runs to temporary
//! files in the store's directory, and the result is the same store `insert_batch` builds
//! (same documents, ids, content hashes, tables and answers; the last entry of an id
//! wins); the temporary files go when the load ends, however it ends.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use rand::Rng;
use simstore::{DocMeta, Entry, Error, Fingerprint, Store, StoreBuilder};

use crate::util::{brute_force, clustered, flip, rng, shape};

/// A budget that makes a load of a few thousand entries spill dozens of runs.
const TINY: usize = 16 << 10;

/// Random and clustered fingerprints; every third entry has a content hash (one hash
/// shared by two documents); then new versions of 300 ids spread over the whole input, so
/// repeated ids meet across runs.
fn entries() -> Vec<Entry> {
    let mut r = rng(20);
    let mut fps: Vec<u64> = (0..4000).map(|_| r.random()).collect();
    fps.extend(clustered(&mut r, 100, 10, 4));
    let entry = |i: usize, fp: u64, title: &str| Entry {
        id: format!("id{i:05}"),
        fp: Fingerprint(fp),
        meta: DocMeta {
            title: Some(title.into()),
            url: None,
            length: i as u64,
            content_hash: i
                .is_multiple_of(3)
                .then_some(u128::from(i as u64 / 6) << 64),
            sketch: None,
            weak_bits: None,
            main_sketch: None,
            times: None,
        },
    };
    let mut all: Vec<Entry> = (0..fps.len()).map(|i| entry(i, fps[i], "first")).collect();
    for j in 0..300 {
        let i = (j * 4999) % fps.len();
        all.push(entry(i, flip(&mut r, fps[i], 2), "again"));
    }
    all
}

/// What a store holds: every document (id, fp, title, length, content hash), sorted.
type Docs = Vec<(String, u64, Option<String>, u64, Option<u128>)>;

fn docs(store: &Store) -> Docs {
    let mut out = Vec::new();
    store
        .for_each_doc(|d| {
            out.push((d.id, d.fp, d.title, d.length, d.content_hash));
            Ok(())
        })
        .unwrap();
    out.sort();
    out
}

/// Every file under `dir`.
fn files(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        if e.path().is_dir() {
            out.extend(files(&e.path()));
        } else {
            out.push(e.path());
        }
    }
    out
}

/// The spilled runs of a load under way in the store at `path`.
fn spill_files(path: &Path) -> usize {
    files(&path.join("bulk-load.tmp"))
        .iter()
        .filter(|f| f.to_string_lossy().contains("spill-"))
        .count()
}

#[test]
fn a_load_with_a_tiny_or_a_large_memory_budget_equals_insert_batch_and_brute_force() {
    let entries = entries();
    let mut last: BTreeMap<String, u64> = BTreeMap::new();
    for e in &entries {
        last.insert(e.id.clone(), e.fp.0);
    }
    let model: Vec<(String, u64)> = last.into_iter().collect();
    let mut r = rng(21);
    let queries: Vec<u64> = model
        .iter()
        .step_by(41)
        .map(|(_, fp)| {
            let d = r.random_range(0..=4);
            flip(&mut r, *fp, d)
        })
        .collect();
    // A tiny budget sorts the table keys externally; 100 KiB holds one copy of the 5,000
    // keys in memory (one table at a time); the default holds a copy per thread (tables
    // made in parallel).
    let budgets = [TINY, 100 << 10, 256 << 20];
    for (blocks, budget) in [4, 6].into_iter().flat_map(|b| budgets.map(|m| (b, m))) {
        let dir = tempfile::tempdir().unwrap();
        let open = |name: &str| {
            StoreBuilder::new(dir.path().join(name))
                .blocks(blocks)
                .bulk_memory_bytes(budget)
                .open()
                .unwrap()
        };
        let bulk = open("bulk");
        let out = bulk.bulk_load(entries.clone()).unwrap();
        assert_eq!((out.inserted, out.replaced), (model.len() as u64, 300));
        let rows = open("rows");
        for chunk in entries.chunks(500) {
            rows.insert_batch(chunk.to_vec()).unwrap();
        }
        assert_eq!(bulk.len(), model.len() as u64);
        assert_eq!(docs(&bulk), docs(&rows));
        let report = bulk.check().unwrap();
        assert!(report.is_ok(), "{:?}", report.problems);
        assert_eq!(report, rows.check().unwrap());
        for (id, fp) in model.iter().step_by(13) {
            assert_eq!(
                bulk.get(id).unwrap().unwrap().fp,
                *fp,
                "{id}: the last wins"
            );
        }
        for &q in &queries {
            for k in 0..=3 {
                let got = shape(&bulk.query(Fingerprint(q), k).unwrap());
                assert_eq!(got, brute_force(&model, q, k), "q {q:016x} k {k}");
            }
        }
        assert!(!bulk.path().join("bulk-load.tmp").exists());
    }
}

#[test]
fn spilled_runs_live_in_the_store_directory_until_the_load_ends() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("db");
    let store = StoreBuilder::new(&path)
        .bulk_memory_bytes(TINY)
        .open()
        .unwrap();
    let mut loader = store.bulk_loader().unwrap();
    for e in entries() {
        loader.push(e).unwrap();
    }
    let spilled = spill_files(&path);
    assert!(spilled >= 10, "{spilled} runs spilled");
    let out = loader.finish().unwrap();
    assert_eq!(out.replaced, 300);
    assert!(!path.join("bulk-load.tmp").exists());
    assert!(store.check().unwrap().is_ok());
}

#[test]
fn a_load_that_fails_midway_leaves_no_temporary_file_and_the_store_as_it_was() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("db");
    let store = StoreBuilder::new(&path)
        .bulk_memory_bytes(TINY)
        .open()
        .unwrap();
    // An invalid id after runs were spilled: the load stops with its error.
    let mut loader = store.bulk_loader().unwrap();
    for e in entries().into_iter().take(3000) {
        loader.push(e).unwrap();
    }
    assert!(spill_files(&path) > 0);
    let bad = Entry {
        id: String::new(),
        fp: Fingerprint(1),
        meta: DocMeta::default(),
    };
    assert!(matches!(loader.push(bad), Err(Error::InvalidId(_))));
    drop(loader);
    assert_eq!(files(&path.join("bulk-load.tmp")), Vec::<PathBuf>::new());
    assert!(store.is_empty());
    assert!(store.check().unwrap().is_ok());
    // A load dropped unfinished (an importer's fatal error) is abandoned the same way.
    let mut loader = store.bulk_loader().unwrap();
    for e in entries() {
        loader.push(e).unwrap();
    }
    drop(loader);
    assert!(!path.join("bulk-load.tmp").exists());
    assert!(store.is_empty());
    // The handle and the reopened store go on.
    store.bulk_load(entries()).unwrap();
    drop(store);
    let store = Store::open(&path).unwrap();
    assert_eq!(store.len(), 4000 + 1000);
    assert!(store.check().unwrap().is_ok());
}

#[test]
fn import_bulk_with_a_small_memory_budget_stores_every_record() {
    let t = crate::util::TestCommand::new();
    let mut lines = String::new();
    let mut r = rng(22);
    let mut last = BTreeMap::new();
    for i in 0..60_000u64 {
        // Every 10th record repeats an earlier id (the last one wins).
        let id = if i % 10 == 9 { i / 3 } else { i };
        let fp: u64 = r.random();
        last.insert(id, fp);
        lines.push_str(&format!("{{\"id\": \"r{id}\", \"fp\": \"{fp:016x}\"}}\n"));
    }
    t.write("in.jsonl", lines.as_bytes());
    // 1 MiB: the rows of 60,000 records spill (the test cannot see the runs; the library
    // tests do).
    let o = crate::util::checked(t.run(&["import", "--bulk", "--bulk-memory", "1", "in.jsonl"]));
    let err = crate::util::stderr(&o);
    assert!(err.contains("read 60000 records: stored 60000"), "{err}");
    let store = Store::builder(t.db()).read_only(true).open().unwrap();
    assert_eq!(store.len(), last.len() as u64);
    for (id, fp) in last.iter().step_by(997) {
        assert_eq!(store.get(&format!("r{id}")).unwrap().unwrap().fp, *fp);
    }
    assert!(store.check().unwrap().is_ok());
    assert!(!t.db().join("bulk-load.tmp").exists());
}

/// The bulk path of `import` streams its records into the load: its memory is the sort
/// budget plus a constant, not the input. 500,000 records with a 4 MiB budget peak at
/// ~30 MiB; holding them (as `import` did) took ~165 MiB.
#[test]
fn import_bulk_memory_does_not_grow_with_the_input() {
    let t = crate::util::TestCommand::new();
    let mut lines = String::with_capacity(26_000_000);
    let mut r = rng(23);
    for i in 0..500_000u64 {
        let fp: u64 = r.random();
        lines.push_str(&format!(
            "{{\"id\": \"doc-{i:09}\", \"fp\": \"{fp:016x}\"}}\n"
        ));
    }
    t.write("in.jsonl", lines.as_bytes());
    drop(lines);
    let args = ["import", "--bulk", "--bulk-memory", "4", "in.jsonl"];
    let (o, peak) = crate::util::run_measured(t.command_on(&t.db(), &args));
    assert!(crate::util::stderr(&o).contains("stored 500000"));
    assert!(peak < 100 << 20, "peak RSS {} MiB", peak >> 20);
}
