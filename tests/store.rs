//! Store behaviours: reopening, refusing other versions, locking, replacing, deleting,
//! batches with repeated ids, and concurrent queries.

use simstore::store::backend::Consistency;
use std::sync::Arc;

use rocksdb::{DB, Options};
use simstore::store::codec::{self, Manifest};
use simstore::{
    DocMeta, Document, Entry, Error, Fingerprint, FingerprintSpec, InsertOutcome, Store,
};
use simstore::{RocksOptions, Rule};

use crate::util::{fp, rewrite_manifest};

fn meta(title: &str) -> DocMeta {
    DocMeta {
        title: Some(title.into()),
        url: Some(format!("https://example.com/{title}")),
        length: 10,
        content_hash: None,
        sketch: None,
        weak_bits: None,
        main_sketch: None,
        times: None,
    }
}

/// Rewrites the manifest of a closed store with `f` applied to its bytes.
/// Entries `d0`..`d{n-1}`, fingerprints spread over the space (a golden-ratio multiple).
fn spread(n: u64) -> impl Iterator<Item = Entry> {
    (0..n).map(|i| Entry {
        id: format!("d{i}"),
        fp: Fingerprint(i.wrapping_mul(0x9E37_79B9_7F4A_7C15)),
        meta: DocMeta::default(),
    })
}

#[test]
fn reopened_store_keeps_documents_and_counts() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("db");
    {
        let store = Store::open(&path).unwrap();
        store
            .insert_fingerprint("a", fp("00000000000000ff"), meta("a"))
            .unwrap();
        store
            .insert_fingerprint("b", fp("00000000000000fe"), meta("b"))
            .unwrap();
        store.delete("a").unwrap();
        store
            .insert(&Document::new("c", "hello world, a document").with_title("greeting"))
            .unwrap();
    }
    let store = Store::builder(&path)
        .create_if_missing(false)
        .open()
        .unwrap();
    assert_eq!(store.len(), 2);
    let b = store.get("b").unwrap().unwrap();
    assert_eq!((b.fp, b.title.as_deref(), b.length), (0xfe, Some("b"), 10));
    assert!(store.get("a").unwrap().is_none());
    let c = store.get("c").unwrap().unwrap();
    assert_eq!(c.length, 23);
    assert_eq!(store.query(fp("00000000000000ff"), 1).unwrap().len(), 1);
    // New sequence numbers do not collide with old ones after reopening.
    store
        .insert_fingerprint("d", fp("00000000000000fc"), DocMeta::default())
        .unwrap();
    let ids: Vec<String> = store
        .query(fp("00000000000000fe"), 2)
        .unwrap()
        .into_iter()
        .map(|m| m.doc.id)
        .collect();
    assert_eq!(ids, ["b", "d"]);
}

#[test]
fn replace_moves_the_document_in_every_table() {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(dir.path().join("db")).unwrap();
    let old = fp("123456789abcdef0");
    let new = fp("0fedcba987654321");
    assert_eq!(
        store.insert_fingerprint("x", old, meta("v1")).unwrap(),
        InsertOutcome::Inserted
    );
    assert_eq!(
        store.insert_fingerprint("x", new, meta("v2")).unwrap(),
        InsertOutcome::Replaced
    );
    assert_eq!(store.len(), 1);
    assert!(
        store.query(old, 3).unwrap().is_empty(),
        "no table may still point at the old fingerprint"
    );
    assert!(store.query(old, Rule::Exhaustive(3)).unwrap().is_empty());
    let hits = store.query(new, 0).unwrap();
    assert_eq!(hits.len(), 1);
    assert_eq!(hits[0].doc.title.as_deref(), Some("v2"));
}

#[test]
fn repeated_ids_in_one_batch_keep_the_last() {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(dir.path().join("db")).unwrap();
    let e = |id: &str, hex: &str| Entry {
        id: id.into(),
        fp: fp(hex),
        meta: DocMeta::default(),
    };
    let out = store
        .insert_batch([
            e("a", "1111111111111111"),
            e("b", "2222222222222222"),
            e("a", "3333333333333333"),
        ])
        .unwrap();
    assert_eq!((out.inserted, out.replaced), (2, 1));
    assert_eq!(store.len(), 2);
    assert_eq!(store.get("a").unwrap().unwrap().fp, 0x3333_3333_3333_3333);
    assert!(store.query(fp("1111111111111111"), 3).unwrap().is_empty());
    let mut all = Vec::new();
    store
        .for_each_doc(|d| {
            all.push(d.id);
            Ok(())
        })
        .unwrap();
    assert_eq!(all, ["b", "a"]);
}

#[test]
fn bad_documents_are_refused_without_side_effects() {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(dir.path().join("db")).unwrap();
    assert!(matches!(
        store.insert(&Document::new("e", "  ，。 ")),
        Err(Error::EmptyDocument)
    ));
    assert!(matches!(
        store.insert_fingerprint("", fp("0000000000000001"), DocMeta::default()),
        Err(Error::InvalidId(_))
    ));
    let long = "x".repeat(5000);
    let batch = [
        Entry {
            id: "ok".into(),
            fp: fp("0000000000000001"),
            meta: DocMeta::default(),
        },
        Entry {
            id: long,
            fp: fp("0000000000000002"),
            meta: DocMeta::default(),
        },
    ];
    assert!(matches!(
        store.insert_batch(batch),
        Err(Error::InvalidId(_))
    ));
    assert_eq!(store.len(), 0, "a refused batch stores nothing");
}

#[test]
fn another_spec_is_refused_with_what_to_do() {
    // A future spec, spec v5 (the previous release: idf, ±1 projections), spec v4 (clean
    // v2), spec v3 (tf^4, 20 % share, words at full weight) and spec v2 (tf^1.5 weights).
    let v5 = FingerprintSpec {
        version: 5,
        weighting: "(body tf^3 + title tf) x idf (resources/idf-zh.txt from jieba, \
                    resources/idf-en.txt from wordfreq; unknown 11.95 Han / 14.0 other); title \
                    tokens 2x, title total <= 20% of body tf x idf; votes in 2^20 fixed point of the \
                    heaviest, each at most 1/6 of all"
            .into(),
        hash: "xxh3-64".into(),
        ..FingerprintSpec::current()
    };
    let v4 = FingerprintSpec {
        version: 4,
        normalizer: "unicode NFKC + lowercase; lines weighted by simstore::text::clean v2 \
                     (boilerplate 0, short 0.25, content 1; v3 fallbacks); URLs, digit runs and stop words dropped; \
                     site names cut from titles"
            .into(),
        ..FingerprintSpec::current()
    };
    let v3 = FingerprintSpec {
        version: 3,
        features: "token unigrams; Han words of 2+ characters also count their characters".into(),
        weighting: "(body tf^4 + title tf) x idf (resources/idf-zh.txt from jieba, \
                    resources/idf-en.txt from wordfreq; unknown 11.95 Han / 14.0 other); title \
                    tokens 2x, title total <= 20% of body tf x idf; votes in 2^20 fixed point of the \
                    heaviest, each at most 20% of all"
            .into(),
        ..FingerprintSpec::current()
    };
    let v2 = FingerprintSpec {
        version: 2,
        weighting: "body tf^1.5 x idf (resources/idf-zh.txt from jieba, resources/idf-en.txt from \
                    wordfreq; unknown 11.95 Han / 14.0 other); title tokens 2x, title total <= 20% of body"
            .into(),
        ..FingerprintSpec::current()
    };
    let v99 = FingerprintSpec {
        version: 99,
        ..FingerprintSpec::current()
    };
    // Spec v6: v7's fingerprints, with a sketch of the body's words alone.
    let v6 = FingerprintSpec {
        version: 6,
        features: "token unigrams; Han words of 2+ characters weigh 0.5 and also count their \
                   characters"
            .into(),
        ..FingerprintSpec::current()
    };
    // Spec v8: v9's, with Chinese sketched by jieba's words.
    let v8 = FingerprintSpec {
        version: 8,
        features: "token unigrams; Han words of 2+ characters weigh 0.5 and also count their \
                   characters; sketch: 63 one-byte minima of the title's and body's 3-token \
                   shingles, digit runs included, and the number of the 63 bins they filled"
            .into(),
        ..FingerprintSpec::current()
    };
    // Spec v9: v10 with the cleaner's prose test in English stop words alone.
    let v9 = FingerprintSpec {
        version: 9,
        normalizer: "unicode NFKC + lowercase; lines weighted by simstore::clean v3 \
                     (boilerplate 0, short 0.25, content 1; v3 fallbacks; short lines outside the \
                     content span 0; two-item navigation; function-word density only without clause \
                     marks); URLs, digit runs and stop words dropped; site names cut from titles"
            .into(),
        ..FingerprintSpec::current()
    };
    for (spec, name) in [
        (v99, "v99"),
        (v9, "v9 ("),
        (v8, "v8 ("),
        (v6, "v6 ("),
        (v5, "v5 ("),
        (v4, "v4 ("),
        (v3, "v3 ("),
        (v2, "v2 ("),
    ] {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("db");
        drop(Store::open(&path).unwrap());
        rewrite_manifest(&path, |bytes| {
            let mut m: Manifest = codec::decode_manifest(&bytes).unwrap();
            m.spec = spec.clone();
            codec::encode_manifest(&m)
        });
        let err = Store::open(&path).unwrap_err();
        assert!(matches!(err, Error::SpecMismatch { .. }), "{err:?}");
        let msg = err.to_string();
        assert!(
            msg.contains(name) && msg.contains("v10 (") && msg.contains("re-import"),
            "{msg}"
        );
    }
}

/// Opens `path` expecting `Error::FormatVersion { found, expected: 8 }`; returns the error.
fn refused_format(path: &std::path::Path, found: u32) -> Error {
    let err = Store::open(path).unwrap_err();
    assert!(
        matches!(err, Error::FormatVersion { found: f, expected: 8, .. } if f == found),
        "{err:?}"
    );
    err
}

/// A RocksDB store of format 3 or 4 (one table key per entry, before the buckets of
/// format 5) is refused with what to do, its files untouched; a format-3 manifest still
/// decodes (in the standard mode), for the Redis stores whose layout did not change.
#[test]
fn a_format_3_or_4_rocksdb_store_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("db");
    let store = Store::open(&path).unwrap();
    store.insert_batch(spread(100)).unwrap();
    drop(store);
    for old in [3u32, 4] {
        crate::util::set_format_version(&path, old);
        let err = refused_format(&path, old);
        assert!(
            matches!(err, Error::FormatVersion { oldest: 5, .. }),
            "{err:?}"
        );
        let msg = err.to_string();
        assert!(
            msg.contains("it reads versions 5 to 8") && msg.contains("re-import"),
            "{msg}"
        );
    }
    crate::util::set_format_version(&path, 5);
    assert_eq!(Store::open(&path).unwrap().len(), 100);
}

/// A format-6 `ids` value whose record is gone (a damaged store): deleting or replacing
/// the id is an error naming it and what to do, not a panic or a silent skip.
#[test]
fn an_id_without_its_record_is_a_clear_error() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("db");
    let store = Store::open(&path).unwrap();
    store
        .insert_fingerprint("lost", Fingerprint(7), DocMeta::default())
        .unwrap();
    drop(store);
    {
        let db = crate::util::raw_db(&path);
        let ids = db.cf_handle("ids").unwrap();
        let value = db.get_cf(ids, "lost").unwrap().unwrap();
        let seq = codec::decode_id_value(&value).unwrap().seq;
        let docs = db.cf_handle("docs").unwrap();
        db.delete_cf(docs, codec::doc_key(seq)).unwrap();
    }
    let store = Store::open(&path).unwrap();
    let replace = store.insert_fingerprint("lost", Fingerprint(8), DocMeta::default());
    for err in [store.delete("lost").unwrap_err(), replace.unwrap_err()] {
        assert!(matches!(err, Error::Corrupt(_)), "{err:?}");
        let msg = err.to_string();
        assert!(
            msg.contains("\"lost\"") && msg.contains("Store::repair") && !msg.contains("`simstore"),
            "{msg}"
        );
    }
}

/// The length of the raw `ids` value of `id` in the closed RocksDB store at `path`.
fn raw_id_len(path: &std::path::Path, id: &str) -> Option<usize> {
    let db = crate::util::raw_db(path);
    let ids = db.cf_handle("ids").unwrap();
    db.get_cf(ids, id).unwrap().map(|v| v.len())
}

/// From format 6 an `ids` value leaves the fingerprint out (8 bytes without a content
/// hash): a replacement or a delete reads it from the document's record and unlinks the
/// old table entries. A store of format 5 keeps writing it (16 bytes), so that the simstore
/// that wrote the store still reads every value; this build reads both.
#[test]
fn ids_values_hold_the_fingerprint_only_before_format_6() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("db");
    let (a, b) = (0x0123_4567_89ab_cdefu64, 0xfedc_ba98_7654_3210u64);
    let ids_at = |store: &Store, q: u64| -> Vec<String> {
        let hits = store.query(Fingerprint(q), 3).unwrap();
        hits.into_iter().map(|m| m.doc.id).collect()
    };
    let put = |store: &Store, id: &str, f: u64| {
        store
            .insert_fingerprint(id, Fingerprint(f), DocMeta::default())
            .unwrap();
    };
    let store = Store::open(&path).unwrap();
    put(&store, "x", a);
    put(&store, "y", a);
    drop(store);
    assert_eq!(raw_id_len(&path, "x"), Some(8));
    let store = Store::open(&path).unwrap();
    put(&store, "x", b);
    assert_eq!(ids_at(&store, a), ["y"]);
    assert_eq!(ids_at(&store, b), ["x"]);
    assert!(store.delete("x").unwrap());
    assert!(ids_at(&store, b).is_empty());
    drop(store);
    // As if written by format 5: new values hold the fingerprint; the short ones still read.
    crate::util::set_format_version(&path, 5);
    let store = Store::open(&path).unwrap();
    put(&store, "z", b);
    put(&store, "y", b);
    assert!(ids_at(&store, a).is_empty());
    assert_eq!(ids_at(&store, b), ["y", "z"]);
    assert_eq!(store.check().unwrap().problem_count, 0);
    drop(store);
    assert_eq!(raw_id_len(&path, "z"), Some(16));
    assert_eq!(raw_id_len(&path, "y"), Some(16));
    let store = Store::open(&path).unwrap();
    assert!(store.delete("z").unwrap());
    assert_eq!(ids_at(&store, b), ["y"]);
}

#[test]
fn another_format_version_is_refused_with_what_to_do() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("db");
    drop(Store::open(&path).unwrap());
    rewrite_manifest(&path, |mut bytes| {
        bytes[8..12].copy_from_slice(&9u32.to_be_bytes());
        bytes
    });
    let err = refused_format(&path, 9);
    assert!(err.to_string().contains("upgrade simstore"), "{err}");
    // An older format (1, before the `exact` column family): re-import.
    rewrite_manifest(&path, |mut bytes| {
        bytes[8..12].copy_from_slice(&1u32.to_be_bytes());
        bytes
    });
    let err = refused_format(&path, 1);
    assert!(err.to_string().contains("re-import"), "{err}");
}

#[test]
fn paths_that_are_not_stores_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("file");
    std::fs::write(&file, b"hello").unwrap();
    assert!(matches!(Store::open(&file), Err(Error::NotAStore { .. })));
    let full = dir.path().join("full");
    std::fs::create_dir(&full).unwrap();
    std::fs::write(full.join("notes.txt"), b"hello").unwrap();
    let err = Store::open(&full).unwrap_err();
    assert!(matches!(err, Error::NotAStore { .. }), "{err:?}");
    assert!(
        std::fs::read_dir(&full).unwrap().count() == 1,
        "nothing was written into it"
    );
    // A RocksDB database that is not a simstore store.
    let other = dir.path().join("rocks");
    drop(DB::open_default(&other).unwrap());
    assert!(matches!(Store::open(&other), Err(Error::NotAStore { .. })));
    // Missing, not allowed to create.
    let missing = dir.path().join("missing");
    assert!(matches!(
        Store::builder(&missing).create_if_missing(false).open(),
        Err(Error::NoStore { .. })
    ));
    assert!(!missing.exists());
}

#[test]
fn invalid_layouts_are_errors_at_creation() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("db");
    let err = Store::builder(&path).k_max(4).blocks(4).open().unwrap_err();
    assert!(matches!(err, Error::InvalidLayout(_)), "{err:?}");
    assert!(
        !path.join("CURRENT").exists(),
        "no store is created for an invalid layout"
    );
}

#[test]
fn a_second_writer_is_refused_and_a_reader_is_allowed() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("db");
    let store = Store::open(&path).unwrap();
    store
        .insert_fingerprint("a", fp("00000000000000ff"), DocMeta::default())
        .unwrap();
    let err = Store::open(&path).unwrap_err();
    assert!(matches!(err, Error::Locked { .. }), "{err:?}");
    let reader = Store::builder(&path).read_only(true).open().unwrap();
    assert_eq!(reader.query(fp("00000000000000ff"), 0).unwrap().len(), 1);
    assert!(matches!(reader.delete("a"), Err(Error::ReadOnly)));
}

/// Probes reuse table iterators (kept between queries and refreshed by the writer). A
/// read-only instance cannot refresh one (RocksDB: "Creating renew iterator is not
/// allowed") and need not; a secondary instance renews them when it catches up; the writer
/// sees every acknowledged write through them.
#[test]
fn kept_iterators_see_what_each_instance_should() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("db");
    let store = Store::open(&path).unwrap();
    let entries: Vec<Entry> = spread(50).collect();
    store.insert_batch(entries.clone()).unwrap();
    let reader = Store::builder(&path).read_only(true).open().unwrap();
    let follower = Store::builder(&path)
        .rocksdb(RocksOptions::new().secondary(dir.path().join("follower")))
        .open()
        .unwrap();
    for round in 0..3 {
        for e in &entries {
            for s in [&store, &reader, &follower] {
                let hits = s.query(e.fp, 3).unwrap();
                assert!(hits.iter().any(|m| m.doc.id == e.id), "round {round}");
            }
        }
        // The writer's next query sees a write made after its iterators were kept; the
        // follower sees it after a catch-up; the read-only reader never does.
        let new = Fingerprint(0x0123_4567_89ab_cdef ^ round);
        store
            .insert_fingerprint(&format!("new{round}"), new, DocMeta::default())
            .unwrap();
        assert_eq!(store.query(new, 0).unwrap().len(), 1);
        assert!(follower.query(new, 0).unwrap().is_empty());
        follower.try_catch_up().unwrap();
        assert_eq!(follower.query(new, 0).unwrap().len(), 1);
        assert!(reader.query(new, 0).unwrap().is_empty());
    }
}

/// `RocksOptions::probe_threads`: the spans of a query read at once on a pool give the
/// answers of spans read in turn, and those of brute force.
#[test]
fn probes_on_threads_answer_as_probes_in_turn() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("db");
    let store = Store::builder(&path)
        .rocksdb(RocksOptions::new().probe_threads(4))
        .open()
        .unwrap();
    let mut entries: Vec<Entry> = spread(3000).collect();
    for i in 0..300u64 {
        let base = entries[i as usize].fp.0;
        entries.push(Entry {
            id: format!("near{i}"),
            fp: Fingerprint(base ^ (1 << (i % 64)) ^ (1 << ((i * 7) % 64))),
            meta: DocMeta::default(),
        });
    }
    store.insert_batch(entries.clone()).unwrap();
    let in_turn = Store::builder(&path)
        .read_only(true)
        .rocksdb(RocksOptions::new().probe_threads(0))
        .open()
        .unwrap();
    let ids = |m: Vec<simstore::Match>| {
        let mut v: Vec<String> = m.into_iter().map(|m| m.doc.id).collect();
        v.sort();
        v
    };
    for (i, e) in entries.iter().enumerate().step_by(7) {
        let q = Fingerprint(e.fp.0 ^ (1 << (i % 64)));
        for k in 0..=3 {
            let got = ids(store.query(q, k).unwrap());
            assert_eq!(got, ids(in_turn.query(q, k).unwrap()), "query {i}, k = {k}");
            let mut want: Vec<String> = entries
                .iter()
                .filter(|x| x.fp.distance(q) <= k)
                .map(|x| x.id.clone())
                .collect();
            want.sort();
            assert_eq!(got, want, "query {i}, k = {k}");
        }
    }
    let batch: Vec<Fingerprint> = entries.iter().take(50).map(|e| e.fp).collect();
    assert_eq!(
        store.query_batch(batch.iter().copied(), 3).unwrap(),
        in_turn.query_batch(batch.iter().copied(), 3).unwrap()
    );
}

#[test]
fn queries_from_many_threads() {
    fn assert_send_sync<T: Send + Sync>() {}
    assert_send_sync::<Store>();
    let dir = tempfile::tempdir().unwrap();
    let store = Arc::new(Store::open(dir.path().join("db")).unwrap());
    let entries: Vec<Entry> = spread(2000).collect();
    store.insert_batch(entries.clone()).unwrap();
    let handles: Vec<_> = (0..4)
        .map(|t| {
            let store = Arc::clone(&store);
            let entries = entries.clone();
            std::thread::spawn(move || {
                for e in entries.iter().skip(t).step_by(4) {
                    let hits = store.query(e.fp, 3).unwrap();
                    assert!(hits.iter().any(|m| m.doc.id == e.id && m.distance == 0));
                }
                store
                    .insert_fingerprint(&format!("t{t}"), Fingerprint(t as u64), DocMeta::default())
                    .unwrap();
            })
        })
        .collect();
    for h in handles {
        h.join().unwrap();
    }
    assert_eq!(store.len(), 2004);
}

#[test]
fn check_finds_damage_and_repair_mends_it() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("db");
    {
        let store = Store::open(&path).unwrap();
        let entries: Vec<Entry> = spread(500).collect();
        store.insert_batch(entries).unwrap();
        store.delete("d7").unwrap();
        let report = store.check().unwrap();
        assert!(report.is_ok(), "{report:?}");
        assert_eq!(
            (report.docs, report.ids, report.table_entries.clone()),
            // 4 permutation tables; the 2 band tables hold no document without a sketch.
            (499, 499, vec![499, 499, 499, 499, 0, 0])
        );
    }
    // Damage it behind the logic's back, through the backend: drop a table entry, add a
    // stray one, drop an id.
    let mut store = Store::open(&path).unwrap();
    {
        use simstore::store::backend::{Change, ChangeSet, Durability};
        let mut first = None;
        let snap = store.backend().snapshot(Consistency::PointInTime);
        snap.scan_table(2, 0, None, &mut |e| {
            first = Some(e?);
            Ok(false)
        })
        .unwrap();
        drop(snap);
        let (permuted, seq) = first.unwrap();
        let mut damage = ChangeSet::new();
        damage.push(Change::DeleteTable(2, permuted, seq));
        damage.push(Change::PutTable(0, 42, 999_999));
        damage.push(Change::DeleteId("d3".into()));
        store.backend().write(&damage, Durability::Synced).unwrap();
    }
    let report = store.check().unwrap();
    assert_eq!(report.problem_count, 3, "{:?}", report.problems);
    let all = report.problems.join("\n");
    assert!(
        all.contains("table t02")
            && all.contains("missing document 999999")
            && all.contains("no ids entry"),
        "{all}"
    );
    assert_eq!(store.repair().unwrap().kept, 499);
    assert!(store.check().unwrap().is_ok());
    assert_eq!(store.len(), 499);
    assert_eq!(
        store.get("d3").unwrap().unwrap().fp,
        3u64.wrapping_mul(0x9E37_79B9_7F4A_7C15)
    );
}

/// A stored document as (id, fp, title, url, length).
type DocRow = (String, u64, Option<String>, Option<String>, u64);

/// Everything a store holds, for comparing two stores: (id, fp, title, url, length) of every
/// document, and the answers to some queries.
fn contents(store: &Store, queries: &[u64]) -> (Vec<DocRow>, Vec<Vec<(u32, String)>>) {
    let mut docs = Vec::new();
    store
        .for_each_doc(|d| {
            docs.push((d.id, d.fp, d.title, d.url, d.length));
            Ok(())
        })
        .unwrap();
    docs.sort();
    let answers = queries
        .iter()
        .map(|&q| {
            store
                .query(Fingerprint(q), 3)
                .unwrap()
                .iter()
                .map(|m| (m.distance, m.doc.id.clone()))
                .collect()
        })
        .collect();
    (docs, answers)
}

#[test]
fn bulk_load_equals_row_by_row_insertion() {
    use rand::Rng;
    let mut r = crate::util::rng(11);
    let mut fps: Vec<u64> = (0..3000).map(|_| r.random()).collect();
    fps.extend(crate::util::clustered(&mut r, 100, 10, 4));
    let mut entries: Vec<Entry> = fps
        .iter()
        .enumerate()
        .map(|(i, &f)| Entry {
            id: format!("id{i}"),
            fp: Fingerprint(f),
            meta: meta(&format!("t{i}")),
        })
        .collect();
    // Repeated ids: the last one wins in both paths.
    for (i, fp) in fps.iter().enumerate().take(50) {
        entries.push(Entry {
            id: format!("id{i}"),
            fp: Fingerprint(fp ^ 0b111),
            meta: meta("again"),
        });
    }
    let queries: Vec<u64> = fps
        .iter()
        .step_by(37)
        .map(|&f| crate::util::flip(&mut r, f, 2))
        .collect();
    for blocks in [4, 6] {
        let dir = tempfile::tempdir().unwrap();
        let bulk = Store::builder(dir.path().join("bulk"))
            .blocks(blocks)
            .open()
            .unwrap();
        let out = bulk.bulk_load(entries.clone()).unwrap();
        assert_eq!((out.inserted, out.replaced), (4000, 50));
        let rows = Store::builder(dir.path().join("rows"))
            .blocks(blocks)
            .open()
            .unwrap();
        for chunk in entries.chunks(333) {
            rows.insert_batch(chunk.to_vec()).unwrap();
        }
        assert_eq!(bulk.len(), rows.len());
        let report = bulk.check().unwrap();
        assert!(report.is_ok(), "{:?}", report.problems);
        assert_eq!(report, rows.check().unwrap());
        assert_eq!(contents(&bulk, &queries), contents(&rows, &queries));
        // The bulk-loaded store keeps working: reopen, then row-by-row on top of it.
        let path = bulk.path().to_path_buf();
        drop(bulk);
        let bulk = Store::open(&path).unwrap();
        bulk.insert_fingerprint("late", Fingerprint(fps[0]), DocMeta::default())
            .unwrap();
        rows.insert_fingerprint("late", Fingerprint(fps[0]), DocMeta::default())
            .unwrap();
        assert_eq!(contents(&bulk, &queries), contents(&rows, &queries));
        // Into a non-empty store, bulk_load falls back to batches with the same result.
        let more: Vec<Entry> = (0..100)
            .map(|i| Entry {
                id: format!("id{i}"),
                fp: Fingerprint(i),
                meta: DocMeta::default(),
            })
            .collect();
        bulk.bulk_load(more.clone()).unwrap();
        rows.insert_batch(more).unwrap();
        assert_eq!(contents(&bulk, &queries), contents(&rows, &queries));
        assert!(bulk.check().unwrap().is_ok());
    }
}

#[test]
fn interrupted_bulk_load_is_recovered_on_open() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("db");
    let entries: Vec<Entry> = spread(1000).collect();
    Store::open(&path).unwrap().bulk_load(entries).unwrap();
    // Simulate a crash after ingestion but before the final batch: marker present, counters stale.
    {
        let db = crate::util::raw_db(&path);
        let meta = db.cf_handle("meta").unwrap();
        db.put_cf(meta, codec::BULK_PENDING_KEY, b"").unwrap();
        db.put_cf(meta, codec::COUNTERS_KEY, codec::encode_counters(0, 0))
            .unwrap();
    }
    assert!(
        Store::builder(&path).read_only(true).open().is_err(),
        "a reader cannot recover it"
    );
    let store = Store::open(&path).unwrap();
    assert_eq!(store.len(), 1000);
    assert!(store.check().unwrap().is_ok());
    store
        .insert_fingerprint("new", Fingerprint(1), DocMeta::default())
        .unwrap();
    assert_eq!(store.get("new").unwrap().unwrap().fp, 1);
    assert!(
        store.check().unwrap().is_ok(),
        "sequence numbers were not reused"
    );
}

#[test]
fn relayout_rebuilds_tables_for_another_layout() {
    use rand::Rng;
    let mut r = crate::util::rng(5);
    let mut fps: Vec<u64> = (0..2000).map(|_| r.random()).collect();
    fps.extend(crate::util::clustered(&mut r, 50, 10, 6));
    let model: Vec<(String, u64)> = fps
        .iter()
        .enumerate()
        .map(|(i, &f)| (format!("r{i}"), f))
        .collect();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("db");
    // The in-memory backend relayouts the same way (tables replaced, rebuilt from docs).
    let memory = crate::util::new_store(crate::util::Backend::Memory, dir.path(), 3, 4);
    let store = Store::builder(&path).blocks(4).open().unwrap();
    for s in [&store, &memory] {
        s.insert_batch(model.iter().map(|(id, f)| Entry {
            id: id.clone(),
            fp: Fingerprint(*f),
            meta: DocMeta::default(),
        }))
        .unwrap();
    }
    // More blocks and a larger k_max.
    let store = store
        .relayout(simstore::Layout::new(4, 6).unwrap())
        .unwrap();
    let memory = memory
        .relayout(simstore::Layout::new(4, 6).unwrap())
        .unwrap();
    assert_eq!(memory.layout().tables().len(), 15);
    assert!(memory.check().unwrap().is_ok());
    assert_eq!(store.layout().tables().len(), 15);
    assert_eq!(store.len(), model.len() as u64);
    assert!(store.check().unwrap().is_ok());
    let queries: Vec<u64> = fps
        .iter()
        .step_by(41)
        .map(|&f| crate::util::flip(&mut r, f, 3))
        .collect();
    for &q in &queries {
        for k in 0..=4 {
            let want = crate::util::brute_force(&model, q, k);
            let got = crate::util::shape(&store.query(Fingerprint(q), k).unwrap());
            assert_eq!(got, want);
            let mem = crate::util::shape(&memory.query(Fingerprint(q), k).unwrap());
            assert_eq!(mem, want, "memory backend after relayout, k = {k}");
        }
    }
    drop(store);
    // An interrupted relayout (the pending manifest written, nothing else) finishes on open.
    {
        let db = crate::util::raw_db(&path);
        let pending = Manifest {
            layout: simstore::Layout::new(2, 3).unwrap(),
            spec: FingerprintSpec::current(),
            created: 0,
            quality: simstore::Quality::Standard,
            bands: 2,
        };
        db.put_cf(
            db.cf_handle("meta").unwrap(),
            codec::RELAYOUT_PENDING_KEY,
            codec::encode_manifest(&pending),
        )
        .unwrap();
    }
    assert!(
        Store::builder(&path).read_only(true).open().is_err(),
        "a reader cannot finish it"
    );
    let store = Store::open(&path).unwrap();
    assert_eq!(store.layout(), &simstore::Layout::new(2, 3).unwrap());
    assert!(store.check().unwrap().is_ok());
    let tables = DB::list_cf(&Options::default(), &path)
        .unwrap()
        .into_iter()
        .filter(|n| n.starts_with('t'))
        .count();
    assert_eq!(
        tables,
        3 + 2,
        "old table column families are gone (3 tables, 2 bands)"
    );
    for &q in &queries {
        let got: Vec<(u32, String)> = store
            .query(Fingerprint(q), 2)
            .unwrap()
            .into_iter()
            .map(|m| (m.distance, m.doc.id))
            .collect();
        assert_eq!(got, crate::util::brute_force(&model, q, 2));
    }
}

/// The same damage done through the storage seam, on every backend: `check` finds each
/// problem (in both directions: an entry without its document, a document without its
/// entries) and `repair` mends them.
#[test]
fn check_and_repair_on_every_backend() {
    use simstore::store::backend::{Change, ChangeSet, Durability};
    use simstore::store::codec::IdValue;

    let fp = |i: u64| i.wrapping_mul(0x9E37_79B9_7F4A_7C15);
    for backend in crate::util::BACKENDS {
        let dir = tempfile::tempdir().unwrap();
        let mut store = crate::util::new_store(backend, dir.path(), 3, 4);
        let entries: Vec<Entry> = (0..300u64)
            .map(|i| Entry {
                id: format!("d{i}"),
                fp: Fingerprint(fp(i)),
                meta: DocMeta::default(),
            })
            .collect();
        store.insert_batch(entries).unwrap();
        assert!(store.check().unwrap().is_ok(), "{backend:?}");
        let layout = store.layout().clone();
        let seq_of_d5 = {
            let mut found = None;
            store
                .backend()
                .snapshot(Consistency::PointInTime)
                .scan_ids(&mut |(id, v)| {
                    if id == b"d5" {
                        found = Some(v.unwrap().seq);
                    }
                    Ok(true)
                })
                .unwrap();
            found.unwrap()
        };
        let mut damage = ChangeSet::new();
        damage.push(Change::DeleteTable(2, layout.permute(2, fp(5)), seq_of_d5));
        damage.push(Change::PutTable(0, 42, 999_999));
        damage.push(Change::DeleteId("d3".into()));
        damage.push(Change::PutId(
            "ghost".into(),
            IdValue {
                seq: 777_777,
                fp: Some(1),
                hash: None,
            },
        ));
        store.backend().write(&damage, Durability::Synced).unwrap();
        let report = store.check().unwrap();
        assert_eq!(
            report.problem_count, 4,
            "{backend:?}: {:?}",
            report.problems
        );
        let all = report.problems.join("\n");
        for want in [
            "table t02: document",
            "missing document 999999",
            "(\"d3\") has no ids entry",
            "id \"ghost\" points at missing document 777777",
        ] {
            assert!(all.contains(want), "{backend:?}: {want:?} not in {all}");
        }
        // A query near d5 still finds it through the other tables; repair restores t02.
        assert_eq!(store.repair().unwrap().kept, 300, "{backend:?}");
        assert!(store.check().unwrap().is_ok(), "{backend:?}");
        assert_eq!(store.len(), 300);
        assert_eq!(store.get("d3").unwrap().unwrap().fp, fp(3));
        assert!(store.get("ghost").unwrap().is_none());
        let near = store.query(Fingerprint(fp(5) ^ 0b101), 3).unwrap();
        assert_eq!(near[0].doc.id, "d5", "{backend:?}");
    }
}

/// Regression: `check` held the writer lock for its whole scan (minutes at 10M), so a
/// crawler's writes stalled behind it although it reads one snapshot. Inserts that start
/// and finish while a check runs are counted: with the lock held there were none.
#[test]
fn writes_go_on_while_check_runs() {
    use std::sync::Arc;
    use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
    let dir = tempfile::tempdir().unwrap();
    let store = Arc::new(Store::open(dir.path().join("db")).unwrap());
    store.bulk_load(spread(300_000)).unwrap();
    let checking = Arc::new(AtomicBool::new(false));
    let done = Arc::new(AtomicBool::new(false));
    let during = Arc::new(AtomicU64::new(0));
    let writer = {
        let (store, checking, done, during) = (
            store.clone(),
            checking.clone(),
            done.clone(),
            during.clone(),
        );
        std::thread::spawn(move || {
            let mut i = 0u64;
            while !done.load(Ordering::SeqCst) && i < 1_000_000 {
                let before = checking.load(Ordering::SeqCst);
                store
                    .insert_fingerprint(&format!("w{i}"), Fingerprint(i), DocMeta::default())
                    .unwrap();
                if before && checking.load(Ordering::SeqCst) {
                    during.fetch_add(1, Ordering::SeqCst);
                }
                i += 1;
            }
        })
    };
    checking.store(true, Ordering::SeqCst);
    let report = store.check().unwrap();
    checking.store(false, Ordering::SeqCst);
    done.store(true, Ordering::SeqCst);
    writer.join().unwrap();
    assert!(report.is_ok(), "{:?}", report.problems);
    assert!(
        during.load(Ordering::SeqCst) > 0,
        "no insert started and finished while check ran ({} documents checked)",
        report.docs
    );
    assert!(store.check().unwrap().is_ok());
}

/// A repair cut short (here: the marker written and some derived column families dropped,
/// as a `kill -9` after repair's first steps leaves them) is refused to readers and finished
/// by the next writable open.
#[test]
fn interrupted_repair_is_finished_on_open() {
    use simstore::store::backend::{Change, ChangeSet, Durability, MetaKey};
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("db");
    let store = Store::open(&path).unwrap();
    let entries: Vec<Entry> = spread(500).collect();
    store.insert_batch(entries.clone()).unwrap();
    let mut cut = ChangeSet::new();
    cut.push(Change::PutMeta(MetaKey::RepairPending, Vec::new()));
    store.backend().write(&cut, Durability::Synced).unwrap();
    drop(store);
    let mut raw = crate::util::raw_db(&path);
    for cf in ["ids", "t00", "t01"] {
        raw.drop_cf(cf).unwrap();
    }
    drop(raw);
    let err = simstore::StoreBuilder::new(&path)
        .read_only(true)
        .open()
        .unwrap_err();
    assert!(
        err.to_string()
            .contains("a repair of this store was interrupted"),
        "{err}"
    );
    let store = Store::open(&path).unwrap();
    for e in &entries {
        assert!(store.get(&e.id).unwrap().is_some(), "{} lost", e.id);
        let hits = store.query(e.fp, 0).unwrap();
        assert!(hits.iter().any(|m| m.doc.id == e.id), "{} not found", e.id);
    }
    assert!(store.check().unwrap().is_ok());
    let snap = store.backend().snapshot(Consistency::PointInTime);
    assert_eq!(snap.meta(MetaKey::RepairPending).unwrap(), None);
}

/// A store written before the band tables (format 7) opens without them: its mode reads
/// the former 4 probes and no band, and its writes keep no band entry. `relayout` moves it
/// to format 8 with the band tables rebuilt from its records, after which a copy that
/// only a band finds is found.
#[test]
fn a_format_7_store_has_no_bands_until_relayout() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("db");
    let article = crate::quality::ARTICLE;
    let apart = crate::util::article_edit(article, false);
    let doc = |id: &str, text: &str| simstore::Document {
        id: id.into(),
        title: None,
        text: text.into(),
        ..simstore::Document::default()
    };
    let store = Store::builder(&path)
        .expected_docs(1_000_000)
        .open()
        .unwrap();
    store.insert(&doc("article", article)).unwrap();
    drop(store);
    crate::util::set_format_version(&path, 7);
    let store = Store::open(&path).unwrap();
    let rule = store.rule(Rule::Mode);
    assert_eq!((rule.bands, rule.probes), (0, 4));
    assert!(
        store
            .query(&doc("q", &apart), Rule::Mode)
            .unwrap()
            .is_empty(),
        "no band read"
    );
    let reversed: Vec<&str> = article.split(' ').rev().collect();
    store.insert(&doc("other", &reversed.join(" "))).unwrap();
    let report = store.check().unwrap();
    assert!(report.is_ok(), "{report:?}");
    assert_eq!(report.table_entries.len(), 4, "the permutation tables only");
    let layout = store.layout().clone();
    let store = store.relayout(layout).unwrap();
    assert_eq!(store.stats().unwrap().format_version, codec::FORMAT_VERSION);
    assert_eq!(store.rule(Rule::Mode), simstore::Quality::Standard.rule(3));
    let report = store.check().unwrap();
    assert!(report.is_ok(), "{report:?}");
    assert_eq!(
        report.table_entries[4..],
        [2, 2],
        "both documents in both bands"
    );
    let found = store.query(&doc("q", &apart), Rule::Mode).unwrap();
    assert_eq!(
        found.iter().map(|m| m.doc.id.as_str()).collect::<Vec<_>>(),
        ["article"]
    );
}

/// One bucket written and read many times over (one fingerprint stored again and again,
/// its table entries merge records folded into the bucket's value as they pile up in the
/// memtable): every read, before and after a reopen, sees exactly what was written.
#[test]
fn a_bucket_written_many_times_reads_what_was_written() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("db");
    let store = Store::open(&path).unwrap();
    let base = 0x5eed_5eed_0000_0000u64;
    let mut live: Vec<String> = Vec::new();
    for i in 0..300u64 {
        // Under one prefix: fingerprints that differ in their lowest bits only.
        let id = format!("d{i}");
        store
            .insert_fingerprint(&id, Fingerprint(base | (i % 3)), DocMeta::default())
            .unwrap();
        live.push(id);
        if i % 7 == 6 {
            let gone = live.remove(live.len() / 2);
            assert_eq!(store.delete_many(&[gone.as_str()]).unwrap(), [true]);
        }
        if i % 25 == 24 {
            let mut found: Vec<String> = (store.query(Fingerprint(base), 3).unwrap())
                .into_iter()
                .map(|m| m.doc.id)
                .collect();
            found.sort();
            let mut want = live.clone();
            want.sort();
            assert_eq!(found, want, "after {} writes", i + 1);
        }
    }
    drop(store);
    let store = Store::open(&path).unwrap();
    assert_eq!(store.query(Fingerprint(base), 3).unwrap().len(), live.len());
    assert!(store.check().unwrap().is_ok());
}
