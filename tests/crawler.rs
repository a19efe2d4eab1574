//! Deduplication on insert (`Store::check_and_insert`): exact and near duplicates against a
//! model, the same-id rule, atomicity under concurrent crawler threads, and the `exact`
//! column family kept consistent by every write path (insert, replace, delete, batch, bulk
//! load, repair).

use std::path::Path;
use std::sync::{Arc, Barrier};
use std::thread;

use rand::Rng;
use simstore::{
    CheckOutcome, DocMeta, Document, Entry, Error, Fingerprint, Store, StoreBuilder, store::codec,
};

use crate::util::{TestCommand, clustered, code, flip, rng, stderr};

fn open(path: &Path) -> Store {
    StoreBuilder::new(path).k_max(3).blocks(4).open().unwrap()
}

fn meta(hash: Option<u128>) -> DocMeta {
    DocMeta {
        content_hash: hash,
        ..DocMeta::default()
    }
}

const PAGE: &str = "The river Thames flows through London and past Oxford; the boat race between \
                    the two universities is rowed on it every spring, watched by thousands of people \
                    along the banks from Putney to Mortlake.";

/// What the model expects of one check: exact (earliest stored with the hash), else the
/// nearest within k (ties: smallest id), else new.
fn expected(model: &[(String, u64, Option<u128>)], fp: u64, hash: Option<u128>, k: u32) -> Expect {
    if let Some(h) = hash
        && let Some((id, _, _)) = model.iter().find(|(_, _, mh)| *mh == Some(h))
    {
        return Expect::Exact(id.clone());
    }
    model
        .iter()
        .map(|(id, f, _)| ((f ^ fp).count_ones(), id.clone()))
        .filter(|(d, _)| *d <= k)
        .min()
        .map_or(Expect::New, |(d, id)| Expect::Near(id, d))
}

#[derive(Debug, PartialEq, Eq)]
enum Expect {
    New,
    Exact(String),
    Near(String, u32),
}

fn shape(o: &CheckOutcome) -> Expect {
    match o {
        CheckOutcome::New { .. } => Expect::New,
        CheckOutcome::ExactDuplicate { of, .. } => Expect::Exact(of.clone()),
        CheckOutcome::NearDuplicate { of, distance, .. } => Expect::Near(of.clone(), *distance),
        _ => panic!("unknown outcome {o:?}"),
    }
}

#[test]
fn check_and_insert_matches_the_model_for_every_k() {
    for k in 0..=3u32 {
        let dir = tempfile::tempdir().unwrap();
        let store = open(&dir.path().join("s"));
        let mut r = rng(100 + u64::from(k));
        // Clusters around a few centres (near duplicates at 0..=5 bits), some random
        // fingerprints, and content hashes drawn from a small set (exact duplicates, also
        // between documents with far-apart fingerprints).
        let mut fps = clustered(&mut r, 30, 8, 5);
        fps.extend((0..60).map(|_| r.random::<u64>()));
        let mut model: Vec<(String, u64, Option<u128>)> = Vec::new();
        let (mut new, mut exact, mut near) = (0, 0, 0);
        for (i, &fp) in fps.iter().enumerate() {
            let hash = match r.random_range(0..4) {
                0 => None,
                1 => Some(u128::from(r.random_range(0..20u32))),
                _ => Some(r.random::<u128>()),
            };
            let id = format!("doc{:04}", r.random_range(0..100_000u32) * 1000 + i as u32);
            let want = expected(&model, fp, hash, k);
            let got = store
                .check_and_insert(&Entry::new(&id, Fingerprint(fp), meta(hash)), k)
                .unwrap();
            assert_eq!(shape(&got), want, "k = {k}, doc {i}");
            assert_eq!(got.fingerprint(), Fingerprint(fp));
            match want {
                Expect::New => {
                    new += 1;
                    model.push((id.clone(), fp, hash));
                    assert!(store.get(&id).unwrap().is_some());
                }
                Expect::Exact(_) => {
                    exact += 1;
                    assert!(
                        store.get(&id).unwrap().is_none(),
                        "a duplicate is not stored"
                    );
                }
                Expect::Near(..) => {
                    near += 1;
                    assert!(
                        store.get(&id).unwrap().is_none(),
                        "a duplicate is not stored"
                    );
                }
            }
        }
        assert!(
            new > 0 && exact > 0 && near > 0,
            "k = {k}: {new} {exact} {near}"
        );
        assert_eq!(store.len(), model.len() as u64);
        assert!(store.check().unwrap().is_ok());
    }
}

#[test]
fn documents_exact_near_and_new() {
    let dir = tempfile::tempdir().unwrap();
    let store = open(&dir.path().join("s"));
    let page = Document::new("https://a.example/1", PAGE).with_title("Thames");
    let first = store.check_and_insert(&page, 3).unwrap();
    assert!(
        matches!(
            first,
            CheckOutcome::New {
                replaced: false,
                ..
            }
        ),
        "{first:?}"
    );
    assert!(first.is_new());
    // The same words with other case, punctuation and full-width forms: exact.
    let copy = Document::new(
        "https://b.example/copy",
        PAGE.to_uppercase().replace(';', "；").replace(',', " ,"),
    )
    .with_title("THAMES");
    let out = store.check_and_insert(&copy, 3).unwrap();
    assert!(
        matches!(&out, CheckOutcome::ExactDuplicate { of, .. } if of == "https://a.example/1"),
        "{out:?}"
    );
    assert_eq!(out.distance(), Some(0));
    assert_eq!(out.duplicate_of(), Some("https://a.example/1"));
    // The same page with one word changed: near (not exact), within 3 of the first.
    let edited = Document::new(
        "https://c.example/ed",
        PAGE.replace("thousands", "hundreds"),
    )
    .with_title("Thames");
    let d = store
        .fingerprinter()
        .fingerprint_doc(&edited)
        .unwrap()
        .distance(first.fingerprint());
    let out = store.check_and_insert(&edited, 3).unwrap();
    if d <= 3 {
        assert!(
            matches!(&out, CheckOutcome::NearDuplicate { of, distance, .. }
                if of == "https://a.example/1" && *distance == d),
            "{out:?}"
        );
    } else {
        assert!(out.is_new(), "{out:?}");
    }
    // Unrelated text: new.
    let other = Document::new(
        "https://d.example/x",
        "今天北京的天气很好，我们去公园散步。",
    );
    assert!(store.check_and_insert(&other, 3).unwrap().is_new());
    assert!(store.get("https://b.example/copy").unwrap().is_none());
    assert_eq!(
        store
            .get("https://a.example/1")
            .unwrap()
            .unwrap()
            .content_hash,
        Some(store.fingerprinter().content_hash_doc(&page).unwrap())
    );
    assert!(store.check().unwrap().is_ok());
    // Errors: k beyond k_max, an empty page, an empty id, a read-only store.
    assert!(matches!(
        store.check_and_insert(&page, 4),
        Err(Error::KTooLarge { k: 4, k_max: 3 })
    ));
    assert!(matches!(
        store.check_and_insert(&Document::new("e", " ,; "), 3),
        Err(Error::EmptyDocument)
    ));
    assert!(matches!(
        store.check_and_insert(&Entry::new("", Fingerprint(1), DocMeta::default()), 3),
        Err(Error::InvalidId(_))
    ));
    drop(store);
    let ro = StoreBuilder::new(dir.path().join("s"))
        .read_only(true)
        .open()
        .unwrap();
    assert!(matches!(
        ro.check_and_insert(&other, 3),
        Err(Error::ReadOnly)
    ));
}

/// A plain `insert` records the content hash too, so a later check finds it exact; a
/// document stored by fingerprint only is found by the near path (distance 0).
#[test]
fn plain_inserts_feed_the_exact_path() {
    let dir = tempfile::tempdir().unwrap();
    let store = open(&dir.path().join("s"));
    let page = Document::new("p1", PAGE);
    store.insert(&page).unwrap();
    let fp = store.fingerprinter().fingerprint_doc(&page).unwrap();
    store
        .insert_fingerprint("byfp", Fingerprint(fp.0 ^ 0xff00), DocMeta::default())
        .unwrap();
    let out = store
        .check_and_insert(&Document::new("p2", PAGE), 0)
        .unwrap();
    assert!(
        matches!(&out, CheckOutcome::ExactDuplicate { of, .. } if of == "p1"),
        "{out:?}"
    );
    let out = store
        .check_and_insert(
            &Entry::new("q", Fingerprint(fp.0 ^ 0xff00), DocMeta::default()),
            0,
        )
        .unwrap();
    assert!(
        matches!(&out, CheckOutcome::NearDuplicate { of, distance: 0, .. } if of == "byfp"),
        "{out:?}"
    );
}

/// The same id: its stored version counts like any other document.
#[test]
fn same_id_is_compared_with_its_stored_version() {
    let dir = tempfile::tempdir().unwrap();
    let store = open(&dir.path().join("s"));
    let h1 = Some(1u128);
    let fp = 0x0123_4567_89ab_cdefu64;
    let out = store
        .check_and_insert(&Entry::new("u", Fingerprint(fp), meta(h1)), 3)
        .unwrap();
    assert!(matches!(
        out,
        CheckOutcome::New {
            replaced: false,
            ..
        }
    ));
    // Unchanged re-crawl: exact duplicate of itself; nothing changes.
    let out = store
        .check_and_insert(&Entry::new("u", Fingerprint(fp), meta(h1)), 3)
        .unwrap();
    assert!(
        matches!(&out, CheckOutcome::ExactDuplicate { of, .. } if of == "u"),
        "{out:?}"
    );
    // Slightly changed: near duplicate of itself; the old version stays.
    let out = store
        .check_and_insert(&Entry::new("u", Fingerprint(fp ^ 0b101), meta(Some(2))), 3)
        .unwrap();
    assert!(
        matches!(&out, CheckOutcome::NearDuplicate { of, distance: 2, .. } if of == "u"),
        "{out:?}"
    );
    assert_eq!(store.get("u").unwrap().unwrap().fp, fp);
    // Changed beyond k: replaces the old version, whose hash no longer matches.
    let out = store
        .check_and_insert(&Entry::new("u", Fingerprint(!fp), meta(Some(3))), 3)
        .unwrap();
    assert!(
        matches!(out, CheckOutcome::New { replaced: true, .. }),
        "{out:?}"
    );
    let stored = store.get("u").unwrap().unwrap();
    assert_eq!((stored.fp, stored.content_hash), (!fp, Some(3)));
    assert_eq!(store.len(), 1);
    let out = store
        .check_and_insert(&Entry::new("v", Fingerprint(fp), meta(h1)), 3)
        .unwrap();
    assert!(
        out.is_new(),
        "the replaced version is gone from exact and tables: {out:?}"
    );
    assert!(store.check().unwrap().is_ok());
}

/// Many crawler threads checking near-identical pages at once: exactly one is new, every
/// other one names it.
#[test]
fn concurrent_checks_admit_exactly_one() {
    let dir = tempfile::tempdir().unwrap();
    let store = Arc::new(open(&dir.path().join("s")));
    let threads = 8;
    for round in 0..100u64 {
        let mut r = rng(round);
        let centre: u64 = r.random();
        let barrier = Arc::new(Barrier::new(threads));
        let handles: Vec<_> = (0..threads)
            .map(|t| {
                let store = Arc::clone(&store);
                let barrier = Arc::clone(&barrier);
                // Half the threads send the same content (exact), half a near copy.
                let fp = if t % 2 == 0 {
                    centre
                } else {
                    flip(&mut rng(round * 100 + t as u64), centre, 1)
                };
                let hash = (t % 2 == 0).then_some(u128::from(round) << 64 | 7);
                thread::spawn(move || {
                    barrier.wait();
                    let out = store
                        .check_and_insert(
                            &Entry::new(format!("r{round}-t{t}"), Fingerprint(fp), meta(hash)),
                            3,
                        )
                        .unwrap();
                    (format!("r{round}-t{t}"), out)
                })
            })
            .collect();
        let outs: Vec<(String, CheckOutcome)> =
            handles.into_iter().map(|h| h.join().unwrap()).collect();
        let winners: Vec<&String> = outs
            .iter()
            .filter(|(_, o)| o.is_new())
            .map(|(id, _)| id)
            .collect();
        assert_eq!(winners.len(), 1, "round {round}: {outs:?}");
        for (id, o) in &outs {
            if id != winners[0] {
                assert_eq!(o.duplicate_of(), Some(winners[0].as_str()), "{outs:?}");
            }
        }
    }
    assert_eq!(store.len(), 100);
    assert!(store.check().unwrap().is_ok());
}

/// Deletes one `exact` key straight in RocksDB (the store closed).
fn drop_exact_key(path: &Path, hash: u128) {
    let db = crate::util::raw_db(path);
    let exact = db.cf_handle("exact").unwrap();
    let mut it = db.raw_iterator_cf(exact);
    it.seek(codec::exact_prefix(hash));
    let key = it.key().unwrap().to_vec();
    assert_eq!(codec::decode_exact_key(&key).unwrap().0, hash);
    drop(it);
    db.delete_cf(exact, key).unwrap();
}

/// Every write path keeps `exact` consistent: several documents sharing a content hash
/// stay findable as one is deleted or replaced; batches and bulk loads fill it like single
/// inserts; check notices a missing entry and repair rebuilds it.
#[test]
fn exact_index_follows_every_write_path() {
    let dir = tempfile::tempdir().unwrap();
    let entries = |n: usize| -> Vec<Entry> {
        (0..n)
            .map(|i| Entry {
                id: format!("e{i:03}"),
                fp: Fingerprint((i as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15)),
                meta: meta((i % 3 != 0).then_some((i % 10) as u128)),
            })
            .collect()
    };
    let probe = |store: &Store, hash: u128| -> Option<String> {
        // A far-away fingerprint, so only the exact path can match.
        match store
            .check_and_insert(
                &Entry::new(
                    "probe",
                    Fingerprint(0x5555_5555_5555_5555),
                    meta(Some(hash)),
                ),
                0,
            )
            .unwrap()
        {
            CheckOutcome::ExactDuplicate { of, .. } => Some(of),
            CheckOutcome::New { .. } => {
                assert!(store.delete("probe").unwrap());
                None
            }
            o => panic!("{o:?}"),
        }
    };
    let batch_path = dir.path().join("batch");
    let bulk_path = dir.path().join("bulk");
    let batch = open(&batch_path);
    batch.insert_batch(entries(50)).unwrap();
    let bulk = open(&bulk_path);
    bulk.bulk_load(entries(50)).unwrap();
    for store in [&batch, &bulk] {
        assert!(store.check().unwrap().is_ok());
        // Hash 1 belongs to e001, e011, e031, e041 (not e021: 21 % 3 == 0 has no hash):
        // the first stored wins.
        assert_eq!(probe(store, 1).as_deref(), Some("e001"));
        assert_eq!(probe(store, 0).as_deref(), Some("e010"));
        assert_eq!(probe(store, 99), None);
        assert_eq!(store.check().unwrap().exact_entries, 33);
        // Delete the first holder: the next one is found.
        assert!(store.delete("e001").unwrap());
        assert_eq!(probe(store, 1).as_deref(), Some("e011"));
        // Replace e011 with other content (same fingerprint): its old hash goes.
        let fp = store.get("e011").unwrap().unwrap().fingerprint();
        store
            .insert_fingerprint("e011", fp, meta(Some(1234)))
            .unwrap();
        assert_eq!(probe(store, 1).as_deref(), Some("e031"));
        assert_eq!(probe(store, 1234).as_deref(), Some("e011"));
        // Replace by fingerprint only: no hash left for e011.
        store
            .insert_fingerprint("e011", Fingerprint(42), DocMeta::default())
            .unwrap();
        assert_eq!(probe(store, 1234), None);
        assert!(store.check().unwrap().is_ok());
    }
    drop((batch, bulk));
    drop_exact_key(&batch_path, 1);
    let mut store = open(&batch_path);
    let report = store.check().unwrap();
    assert!(!report.is_ok());
    assert!(
        report.problems.iter().any(|p| p.contains("exact")),
        "{report:?}"
    );
    store.repair().unwrap();
    assert!(store.check().unwrap().is_ok());
    assert_eq!(probe(&store, 1).as_deref(), Some("e031"));
}

fn stdout_lines(o: &std::process::Output) -> Vec<String> {
    String::from_utf8(o.stdout.clone())
        .unwrap()
        .lines()
        .map(str::to_owned)
        .collect()
}

/// `simstore import --dedup`: planted exact and near copies are reported one JSON line
/// each, in input order, and not stored; the summary counts them.
#[test]
fn cli_import_dedup_reports_planted_copies() {
    let t = TestCommand::new();
    let f = 0x0f0f_0f0f_0f0f_0f0fu64;
    let fp = |x: u64| format!("{x:016x}");
    let lines = [
        format!(r#"{{"id":"a","title":"Thames","text":"{PAGE}"}}"#),
        // Same words, other case and punctuation: exact duplicate of a.
        format!(
            r#"{{"id":"b","title":"THAMES","text":"{}"}}"#,
            PAGE.to_uppercase().replace(';', ",")
        ),
        format!(r#"{{"id":"c","fp":"{}"}}"#, fp(f)),
        format!(r#"{{"id":"d","fp":"{}"}}"#, fp(f ^ 1)),
        format!(r#"{{"id":"e","fp":"{}"}}"#, fp(f ^ 0b111 << 20)),
        format!(r#"{{"id":"f","fp":"{}"}}"#, fp(f ^ 0xf000)),
        r#"{"id":"g","text":"今天北京的天气很好，我们去公园散步，看到很多人在跑步。"}"#.to_owned(),
        format!(r#"{{"id":"h","fp":"{}"}}"#, fp(f)),
        r#"{"id":"bad","text":""}"#.to_owned(),
    ];
    t.write("in.jsonl", lines.join("\n").as_bytes());
    let o = t.run(&["import", "--dedup", "in.jsonl"]);
    let err = stderr(&o);
    assert_eq!(code(&o), 1, "one bad record: {err}");
    assert_eq!(
        stdout_lines(&o),
        [
            r#"{"id":"b","duplicate_of":"a","distance":0}"#,
            r#"{"id":"d","duplicate_of":"c","distance":1}"#,
            r#"{"id":"e","duplicate_of":"c","distance":3}"#,
            r#"{"id":"h","duplicate_of":"c","distance":0}"#,
        ]
    );
    assert!(
        err.contains(
            "read 9 records: stored 4 (4 new, 0 replaced), not stored: 1 exact duplicates, \
             3 near duplicates (candidates within 3, and within 12 in the tables' spans, any distance sharing one of 2 bands of the sketch; kept at sketch similarity 0.3, Chinese 0.25 + 0.025 a bit (0.8 below 16 shingles, 24 in Chinese; none below 4)), failed 1"
        ),
        "{err}"
    );
    assert!(err.contains("the store holds 4 documents"), "{err}");
    // Again into the same store with k = 0: stored records are duplicates of themselves
    // (exact with a content hash, near at 0 by fingerprint only); d and e are now new.
    let o = t.run(&["import", "--dedup", "--k", "0", "--json", "in.jsonl"]);
    let mut out = stdout_lines(&o);
    let summary: serde_json::Value = serde_json::from_str(&out.pop().unwrap()).unwrap();
    assert_eq!(
        out,
        [
            r#"{"id":"a","duplicate_of":"a","distance":0}"#,
            r#"{"id":"b","duplicate_of":"a","distance":0}"#,
            r#"{"id":"c","duplicate_of":"c","distance":0}"#,
            r#"{"id":"f","duplicate_of":"f","distance":0}"#,
            r#"{"id":"g","duplicate_of":"g","distance":0}"#,
            r#"{"id":"h","duplicate_of":"c","distance":0}"#,
        ]
    );
    assert_eq!(summary["new"], 2);
    assert_eq!(summary["exact_duplicates"], 3);
    assert_eq!(summary["near_duplicates"], 3);
    assert_eq!(summary["docs"], 6);
    // --bulk and --dedup exclude each other; --k needs --dedup; k > k_max is refused.
    let o = t.run(&["import", "--dedup", "--bulk", "in.jsonl"]);
    assert_eq!(code(&o), 2);
    assert!(stderr(&o).contains("cannot be used with"), "{}", stderr(&o));
    let o = t.run(&["import", "--k", "2", "in.jsonl"]);
    assert_eq!(code(&o), 2);
    let o = t.run(&["import", "--dedup", "--k", "4", "in.jsonl"]);
    assert_eq!(code(&o), 2);
    assert!(stderr(&o).contains("k = 4 exceeds"), "{}", stderr(&o));
    assert!(code(&t.run(&["check"])) == 0);
}

/// `simstore import --dedup ... | head`: a closed stdout stops the duplicate lines, not the
/// import (regression: it stopped the import at the first duplicate after the pipe closed).
#[test]
fn cli_import_dedup_goes_on_when_stdout_closes() {
    let t = TestCommand::new();
    let sample = concat!(env!("CARGO_MANIFEST_DIR"), "/data/sample.jsonl");
    let mut child = t
        .command(&["import", "--dedup", sample])
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    drop(child.stdout.take());
    let o = crate::util::checked(child.wait_with_output().unwrap());
    let err = stderr(&o);
    assert_eq!(code(&o), 0, "{err}");
    // Every record was checked: the same counts as with stdout open.
    let full = t.run_on(&t.path("other.db"), &["import", "--dedup", sample]);
    let counts = |s: &str| s.split(" — ").next().unwrap().to_owned();
    assert_eq!(counts(&err), counts(&stderr(&full)));
    assert!(err.starts_with("read 300 records: stored "), "{err}");
    assert_eq!(stdout_lines(&full).len(), 300 - store_len(&t));
}

fn store_len(t: &TestCommand) -> usize {
    let o = t.run(&["stats", "--json"]);
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    v["docs"].as_u64().unwrap() as usize
}

/// Regression: the exact-duplicate path read the `exact` entry and then the document it
/// points at without one consistent view, so a replace or delete of that document in
/// between was reported as `Error::Corrupt` on a healthy store. Checks race against a
/// thread that keeps deleting and re-storing the original (bounded iterations).
#[test]
fn exact_path_under_concurrent_deletes_is_never_corrupt() {
    let dir = tempfile::tempdir().unwrap();
    let store = Arc::new(open(&dir.path().join("s")));
    let original = Document::new("original", PAGE).with_title("Thames");
    store.insert(&original).unwrap();
    let barrier = Arc::new(Barrier::new(3));
    let churn = {
        let (store, barrier, original) = (store.clone(), barrier.clone(), original.clone());
        thread::spawn(move || {
            barrier.wait();
            for _ in 0..1_500 {
                store.delete("original").unwrap();
                store.insert(&original).unwrap();
            }
        })
    };
    let checkers: Vec<_> = (0..2)
        .map(|t| {
            let (store, barrier) = (store.clone(), barrier.clone());
            thread::spawn(move || {
                barrier.wait();
                let copy = Document::new(format!("copy-{t}"), PAGE).with_title("Thames");
                for i in 0..1_500 {
                    match store.check_and_insert(&copy, 3) {
                        Ok(CheckOutcome::New { .. }) => {
                            // Stored while the original was away: take it out again.
                            store.delete(&copy.id).unwrap();
                        }
                        Ok(_) => {}
                        Err(e) => panic!("check {i} of thread {t}: {e}"),
                    }
                }
            })
        })
        .collect();
    churn.join().unwrap();
    for c in checkers {
        c.join().unwrap();
    }
    assert!(store.check().unwrap().is_ok());
}
