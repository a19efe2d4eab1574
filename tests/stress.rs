//! Concurrency stress: one `Store` in an `Arc`, many threads writing and reading at once.
//!
//! No test serializes its store calls with a lock of its own. Each thread owns an id
//! prefix and keeps its own model of it (only that thread writes those ids, so what it
//! reads back about them is exact even while the others write); shared ids are only
//! inserted, with a title naming the write, so any reader can tell that a shared
//! document's fingerprint is one written to it. At the end the merged model must equal
//! the store, before and after a reopen. Work is bounded by operation counts; set
//! `SIMSTORE_STRESS_SCALE=N` to multiply them.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::Path;
use std::sync::{Arc, Barrier};
use std::thread;
use std::time::Instant;

use rand::Rng;
use rand::rngs::StdRng;
use simstore::{DocMeta, Entry, Fingerprint, InsertOutcome, Match, RocksOptions, Store, StoredDoc};

use crate::util::{brute_force, flip, rng};

fn scale() -> usize {
    std::env::var("SIMSTORE_STRESS_SCALE")
        .ok()
        .and_then(|v| v.trim().parse().ok())
        .filter(|&n| n > 0)
        .unwrap_or(1)
}

fn open(path: &Path, create: bool) -> Store {
    Store::builder(path)
        .create_if_missing(create)
        .k_max(3)
        .blocks(4)
        .rocksdb(RocksOptions::new().block_cache_bytes(8 << 20))
        .open()
        .unwrap()
}

/// A few cluster centres shared by all threads, so queries find other threads' documents.
const CENTRES: [u64; 4] = [
    0x0123_4567_89ab_cdef,
    0xfedc_ba98_7654_3210,
    0xa5a5_5a5a_f0f0_0f0f,
    0,
];

fn mix(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// The fingerprint thread `t` writes to shared id `s` in its `j`-th write, and the title
/// that names that write.
fn shared_write(s: usize, t: usize, j: usize) -> (u64, String) {
    let fp = flip_det(
        CENTRES[s % CENTRES.len()],
        mix((s as u64) << 40 ^ (t as u64) << 32 ^ j as u64),
    );
    (fp, format!("{t}:{j}"))
}

/// `base` with 0..=4 bits flipped, chosen by `r`.
fn flip_det(base: u64, r: u64) -> u64 {
    let n = r % 5;
    (0..n).fold(base, |fp, i| fp ^ (1u64 << ((r >> (8 + 6 * i)) & 63)))
}

fn shared_id(s: usize) -> String {
    format!("shared/{s}")
}

/// A shared document is consistent: its title names a write whose fingerprint it has.
fn assert_shared_consistent(doc: &StoredDoc) {
    let s: usize = doc.id.strip_prefix("shared/").unwrap().parse().unwrap();
    let title = doc.title.as_deref().expect("shared documents have a title");
    let (t, j) = title.split_once(':').expect("title t:j");
    let (fp, _) = shared_write(s, t.parse().unwrap(), j.parse().unwrap());
    assert_eq!(doc.fp, fp, "shared document {:?} mixes two writes", doc.id);
}

/// Matches are sorted by (distance, id), distinct, within k, with the right distances.
fn assert_well_formed(matches: &[Match], q: u64, k: u32) {
    for m in matches {
        assert_eq!(m.distance, (m.doc.fp ^ q).count_ones());
        assert!(m.distance <= k);
        if m.doc.id.starts_with("shared/") {
            assert_shared_consistent(&m.doc);
        }
    }
    for w in matches.windows(2) {
        assert!(
            (w[0].distance, &w[0].doc.id) < (w[1].distance, &w[1].doc.id),
            "unsorted or duplicate matches"
        );
    }
}

/// What one thread did to its own ids (exact) and to the shared ids (a log).
#[derive(Default)]
struct ThreadLog {
    own: BTreeMap<String, (u64, DocMeta)>,
    own_touched: BTreeSet<String>,
    /// (shared index, fingerprint written, whether the store said Inserted)
    shared: Vec<(usize, u64, bool)>,
    ops: usize,
}

const SHARED: usize = 24;
const OWN_POOL: usize = 150;

fn own_fp(r: &mut StdRng) -> u64 {
    let centre = CENTRES[r.random_range(0..CENTRES.len())];
    if r.random_bool(0.1) {
        r.random()
    } else {
        let d = r.random_range(0..=8);
        flip(r, centre, d)
    }
}

fn worker(store: &Store, t: usize, ops: usize, seed: u64) -> ThreadLog {
    let mut r = rng(seed);
    let mut log = ThreadLog::default();
    let own_id = |n: usize| format!("t{t}/{n}");
    let mut shared_writes = 0usize;
    for i in 0..ops {
        log.ops += 1;
        match r.random_range(0..100) {
            // Insert or replace an own id.
            0..30 => {
                let id = own_id(r.random_range(0..OWN_POOL));
                let fp = own_fp(&mut r);
                let meta = DocMeta {
                    title: Some(format!("own:{i}")),
                    url: None,
                    length: i as u64,
                    content_hash: None,
                    sketch: None,
                    weak_bits: None,
                    main_sketch: None,
                    times: None,
                };
                let want = if log.own.contains_key(&id) {
                    InsertOutcome::Replaced
                } else {
                    InsertOutcome::Inserted
                };
                let got = store
                    .insert_fingerprint(&id, Fingerprint(fp), meta.clone())
                    .unwrap();
                assert_eq!(got, want, "insert {id}");
                log.own_touched.insert(id.clone());
                log.own.insert(id, (fp, meta));
            }
            // Delete an own id (live or not).
            30..38 => {
                let id = own_id(r.random_range(0..OWN_POOL));
                assert_eq!(store.delete(&id).unwrap(), log.own.remove(&id).is_some());
            }
            // A batch of own ids, with repeats.
            38..46 => {
                let n = r.random_range(1..10);
                let base = r.random_range(0..OWN_POOL);
                let (mut inserted, mut replaced) = (0, 0);
                let mut entries = Vec::new();
                for e in 0..n {
                    let id = own_id((base + r.random_range(0..4)) % OWN_POOL);
                    let fp = own_fp(&mut r);
                    let meta = DocMeta {
                        title: Some(format!("batch:{i}:{e}")),
                        url: None,
                        length: 0,
                        content_hash: None,
                        sketch: None,
                        weak_bits: None,
                        main_sketch: None,
                        times: None,
                    };
                    if log.own.insert(id.clone(), (fp, meta.clone())).is_some() {
                        replaced += 1;
                    } else {
                        inserted += 1;
                    }
                    log.own_touched.insert(id.clone());
                    entries.push(Entry {
                        id,
                        fp: Fingerprint(fp),
                        meta,
                    });
                }
                let out = store.insert_batch(entries).unwrap();
                assert_eq!((out.inserted, out.replaced), (inserted, replaced));
            }
            // Insert a shared id.
            46..56 => {
                let s = r.random_range(0..SHARED);
                let (fp, title) = shared_write(s, t, shared_writes);
                shared_writes += 1;
                let meta = DocMeta {
                    title: Some(title),
                    url: None,
                    length: 0,
                    content_hash: None,
                    sketch: None,
                    weak_bits: None,
                    main_sketch: None,
                    times: None,
                };
                let out = store
                    .insert_fingerprint(&shared_id(s), Fingerprint(fp), meta)
                    .unwrap();
                log.shared.push((s, fp, out == InsertOutcome::Inserted));
            }
            // Query: well formed, and exact on this thread's own documents.
            56..80 => {
                let base = if !log.own.is_empty() && r.random_bool(0.7) {
                    let n = r.random_range(0..log.own.len());
                    log.own.values().nth(n).unwrap().0
                } else {
                    CENTRES[r.random_range(0..CENTRES.len())]
                };
                let d = r.random_range(0..=4);
                let q = flip(&mut r, base, d);
                let k = r.random_range(0..=3);
                let got = store.query(Fingerprint(q), k).unwrap();
                assert_well_formed(&got, q, k);
                let prefix = format!("t{t}/");
                let mine: Vec<(u32, String)> = got
                    .iter()
                    .filter(|m| m.doc.id.starts_with(&prefix))
                    .map(|m| (m.distance, m.doc.id.clone()))
                    .collect();
                let model: Vec<(String, u64)> = log
                    .own
                    .iter()
                    .map(|(id, (fp, _))| (id.clone(), *fp))
                    .collect();
                assert_eq!(
                    mine,
                    brute_force(&model, q, k),
                    "thread {t}, query {q:016x} k={k}"
                );
                for m in got.iter().filter(|m| m.doc.id.starts_with(&prefix)) {
                    assert_eq!(m.doc.title, log.own[&m.doc.id].1.title);
                }
            }
            // Get: exact on own ids, consistent on shared ones.
            80..95 => {
                if r.random_bool(0.7) {
                    let id = own_id(r.random_range(0..OWN_POOL));
                    let got = store.get(&id).unwrap();
                    match (&got, log.own.get(&id)) {
                        (Some(doc), Some((fp, meta))) => {
                            assert_eq!((doc.fp, &doc.title), (*fp, &meta.title), "get {id}")
                        }
                        (None, None) => {}
                        _ => panic!("get {id}: {got:?}, model {:?}", log.own.get(&id)),
                    }
                } else if let Some(doc) = store.get(&shared_id(r.random_range(0..SHARED))).unwrap()
                {
                    assert_shared_consistent(&doc);
                }
            }
            // len() counts at least this thread's documents.
            95..99 => assert!(store.len() >= log.own.len() as u64),
            // check() sees a consistent snapshot while others write.
            _ => {
                if i % 4 == 0 {
                    let report = store.check().unwrap();
                    assert!(
                        report.is_ok(),
                        "check during the run: {:?}",
                        report.problems
                    );
                }
            }
        }
    }
    log
}

/// Compares the store with the merged model; returns the shared documents' fingerprints.
fn assert_merged(
    store: &Store,
    own: &BTreeMap<String, (u64, DocMeta)>,
    dead: &BTreeSet<String>,
    shared_written: &HashMap<usize, BTreeSet<u64>>,
) -> BTreeMap<String, u64> {
    let report = store.check().unwrap();
    assert!(report.is_ok(), "check: {:?}", report.problems);
    assert_eq!(store.len(), (own.len() + shared_written.len()) as u64);
    for (id, (fp, meta)) in own {
        let doc = store
            .get(id)
            .unwrap()
            .unwrap_or_else(|| panic!("{id} is lost"));
        assert_eq!(
            (doc.fp, &doc.title, doc.length),
            (*fp, &meta.title, meta.length),
            "{id}"
        );
    }
    for id in dead {
        assert_eq!(store.get(id).unwrap(), None, "{id} was deleted");
    }
    let mut shared = BTreeMap::new();
    for s in 0..SHARED {
        let doc = store.get(&shared_id(s)).unwrap();
        match (doc, shared_written.get(&s)) {
            (Some(doc), Some(written)) => {
                assert!(
                    written.contains(&doc.fp),
                    "shared {s} holds a fingerprint never written"
                );
                assert_shared_consistent(&doc);
                shared.insert(doc.id, doc.fp);
            }
            (None, None) => {}
            (doc, written) => panic!("shared {s}: {doc:?}, written {written:?}"),
        }
    }
    let mut ids = BTreeSet::new();
    store
        .for_each_doc(|d| {
            assert!(ids.insert(d.id), "two documents share an id");
            Ok(())
        })
        .unwrap();
    let want: BTreeSet<String> = own.keys().chain(shared.keys()).cloned().collect();
    assert_eq!(ids, want);
    for (id, fp) in own
        .iter()
        .map(|(id, (fp, _))| (id, *fp))
        .chain(shared.iter().map(|(i, f)| (i, *f)))
    {
        let found = store.query(Fingerprint(fp), 0).unwrap();
        assert!(
            found.iter().any(|m| &m.doc.id == id),
            "query(fp, 0) misses {id}"
        );
    }
    shared
}

#[test]
fn threads_mixing_writes_and_reads_match_the_merged_model() {
    const THREADS: usize = 6;
    let ops = 4000 * scale();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("db");
    let store = Arc::new(open(&path, true));
    let seed: u64 = rand::random();
    let start = Instant::now();
    let barrier = Arc::new(Barrier::new(THREADS));
    let handles: Vec<_> = (0..THREADS)
        .map(|t| {
            let (store, barrier) = (Arc::clone(&store), Arc::clone(&barrier));
            thread::spawn(move || {
                barrier.wait();
                worker(&store, t, ops, seed.wrapping_add(t as u64))
            })
        })
        .collect();
    let logs: Vec<ThreadLog> = handles
        .into_iter()
        .map(|h| {
            h.join()
                .unwrap_or_else(|_| panic!("a worker failed (seed {seed})"))
        })
        .collect();
    let elapsed = start.elapsed();

    let mut own = BTreeMap::new();
    let mut dead = BTreeSet::new();
    let mut shared_written: HashMap<usize, BTreeSet<u64>> = HashMap::new();
    let mut shared_inserted: HashMap<usize, usize> = HashMap::new();
    for log in &logs {
        own.extend(log.own.iter().map(|(k, v)| (k.clone(), v.clone())));
        dead.extend(
            log.own_touched
                .iter()
                .filter(|id| !log.own.contains_key(*id))
                .cloned(),
        );
        for &(s, fp, inserted) in &log.shared {
            shared_written.entry(s).or_default().insert(fp);
            *shared_inserted.entry(s).or_default() += usize::from(inserted);
        }
    }
    // Shared ids are never deleted: exactly one write created each of them.
    for (s, n) in &shared_inserted {
        assert_eq!(*n, 1, "shared {s} was inserted {n} times (seed {seed})");
    }
    let before = assert_merged(&store, &own, &dead, &shared_written);
    drop(store);
    let store = open(&path, false);
    let after = assert_merged(&store, &own, &dead, &shared_written);
    assert_eq!(
        before, after,
        "the reopened store holds other shared fingerprints"
    );
    eprintln!(
        "stress mixed: {THREADS} threads × {ops} ops in {elapsed:.2?}, {} documents, seed {seed}",
        store.len()
    );
}

#[test]
fn concurrent_batches_lose_no_document() {
    const THREADS: usize = 8;
    const SHARED_IDS: usize = 200;
    let batches = 100 * scale();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("db");
    let store = Arc::new(open(&path, true));
    let seed: u64 = rand::random();
    let start = Instant::now();
    let barrier = Arc::new(Barrier::new(THREADS));
    let handles: Vec<_> = (0..THREADS)
        .map(|t| {
            let (store, barrier) = (Arc::clone(&store), Arc::clone(&barrier));
            thread::spawn(move || {
                let mut r = rng(seed ^ (t as u64) << 32);
                let mut own = BTreeSet::new();
                let mut shared = BTreeSet::new();
                let (mut entries_sent, mut inserted, mut replaced) = (0u64, 0u64, 0u64);
                barrier.wait();
                for b in 0..batches {
                    let n = r.random_range(1..80);
                    let mut entries = Vec::with_capacity(n);
                    for e in 0..n {
                        let id = match r.random_range(0..10) {
                            // Repeat an id of this batch, or of an earlier one.
                            0 if e > 0 => format!("b{t}/{}/{}", b, r.random_range(0..e)),
                            1 if b > 0 => {
                                format!("b{t}/{}/{}", r.random_range(0..b), r.random_range(0..4))
                            }
                            2 => {
                                let s = format!("shared/{}", r.random_range(0..SHARED_IDS));
                                shared.insert(s.clone());
                                s
                            }
                            _ => format!("b{t}/{b}/{e}"),
                        };
                        if id.starts_with('b') {
                            own.insert(id.clone());
                        }
                        entries.push(Entry {
                            id,
                            fp: Fingerprint(r.random()),
                            meta: DocMeta::default(),
                        });
                    }
                    entries_sent += n as u64;
                    let out = store.insert_batch(entries).unwrap();
                    inserted += out.inserted;
                    replaced += out.replaced;
                }
                (own, shared, entries_sent, inserted, replaced)
            })
        })
        .collect();
    let mut own_total = 0u64;
    let mut all_own = BTreeSet::new();
    let mut shared = BTreeSet::new();
    let (mut sent, mut inserted, mut replaced) = (0, 0, 0);
    for h in handles {
        let (o, s, e, i, r) = h
            .join()
            .unwrap_or_else(|_| panic!("a batch thread failed (seed {seed})"));
        own_total += o.len() as u64;
        all_own.extend(o);
        shared.extend(s);
        sent += e;
        inserted += i;
        replaced += r;
    }
    let elapsed = start.elapsed();
    assert_eq!(own_total, all_own.len() as u64, "own ids are disjoint");
    let distinct = all_own.len() as u64 + shared.len() as u64;
    assert_eq!(
        inserted + replaced,
        sent,
        "every entry is counted once (seed {seed})"
    );
    assert_eq!(
        inserted, distinct,
        "each distinct id is inserted exactly once (seed {seed})"
    );
    assert_eq!(store.len(), distinct);
    let report = store.check().unwrap();
    assert!(report.is_ok(), "check: {:?}", report.problems);
    for id in all_own.iter().chain(&shared) {
        assert!(
            store.get(id).unwrap().is_some(),
            "{id} is lost (seed {seed})"
        );
    }

    // Every thread deletes every shared id at once: each is deleted exactly once.
    let shared: Arc<Vec<String>> = Arc::new(shared.into_iter().collect());
    let barrier = Arc::new(Barrier::new(THREADS));
    let handles: Vec<_> = (0..THREADS)
        .map(|t| {
            let (store, barrier, shared) = (
                Arc::clone(&store),
                Arc::clone(&barrier),
                Arc::clone(&shared),
            );
            thread::spawn(move || {
                barrier.wait();
                let n = shared.len();
                (0..n)
                    .map(|i| (i + t * n / THREADS) % n)
                    .filter(|&i| store.delete(&shared[i]).unwrap())
                    .collect::<Vec<usize>>()
            })
        })
        .collect();
    let mut deleted = vec![0u32; shared.len()];
    for h in handles {
        for i in h.join().unwrap() {
            deleted[i] += 1;
        }
    }
    assert!(
        deleted.iter().all(|&n| n == 1),
        "deleted counts {deleted:?}"
    );
    assert_eq!(store.len(), all_own.len() as u64);
    let report = store.check().unwrap();
    assert!(report.is_ok(), "check after deletes: {:?}", report.problems);
    drop(store);
    let store = open(&path, false);
    assert_eq!(store.len(), all_own.len() as u64);
    let report = store.check().unwrap();
    assert!(report.is_ok(), "check after reopen: {:?}", report.problems);
    eprintln!(
        "stress batches: {THREADS} threads × {batches} batches ({sent} entries, {distinct} ids) in {elapsed:.2?}, seed {seed}"
    );
}
