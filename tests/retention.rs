//! Retention: expiry by stored and by last-seen time against a model, on every backend
//! (the cluster test reuses [`expiry_matches_the_model`]); last-seen tracking; the CLI.

use std::thread::sleep;
use std::time::Duration;

use simstore::Rule;
use simstore::{DocMeta, Document, Entry, ExpireOptions, Fingerprint, Retention, Store, TimeField};

use crate::util::{BACKENDS, TestCommand, brute_force, checked, new_store, rng, shape, stderr};
use rand::Rng;

/// A second and a bit: stored times are whole seconds.
const TICK: Duration = Duration::from_millis(1_100);

fn entry(id: &str, fp: u64) -> Entry {
    Entry {
        id: id.to_owned(),
        fp: Fingerprint(fp),
        meta: DocMeta::default(),
    }
}

/// Stores three generations of documents a second apart — replacing some of the first
/// with the same fingerprint and some with another, deleting some — then expires by
/// stored time before the second generation and by last-seen time before the third, and
/// compares what is left (documents, queries, `check`) with a model built from the
/// documents' own times. Returns whether the expiry read every record.
pub fn expiry_matches_the_model(store: &Store, prefix: &str) -> bool {
    let mut r = rng(42);
    let mut fps = std::collections::BTreeMap::new();
    let mut cutoffs = Vec::new();
    for generation in 0..3 {
        if generation > 0 {
            sleep(TICK);
        }
        cutoffs.push(now());
        let batch: Vec<Entry> = (0..200)
            .map(|i| {
                let id = format!("{prefix}g{generation}-{i:03}");
                let fp = r.random::<u64>();
                fps.insert(id.clone(), fp);
                entry(&id, fp)
            })
            .collect();
        store.insert_batch(batch).unwrap();
        if generation == 2 {
            // Generation 0 again: every 3rd with its own fingerprint (keeps its stored
            // time, not its last-seen time), every 5th with another (a new document).
            for i in (0..200).step_by(3) {
                let id = format!("{prefix}g0-{i:03}");
                store.insert_batch([entry(&id, fps[&id])]).unwrap();
            }
            for i in (0..200).step_by(5) {
                let id = format!("{prefix}g0-{i:03}");
                let fp = r.random::<u64>();
                fps.insert(id.clone(), fp);
                store.insert_batch([entry(&id, fp)]).unwrap();
            }
            for i in (0..200).step_by(7) {
                let id = format!("{prefix}g1-{i:03}");
                assert!(store.delete(&id).unwrap());
                fps.remove(&id);
            }
        }
    }
    let mut full_scan = false;
    for (by, before) in [
        (TimeField::Stored, cutoffs[1]),
        (TimeField::Seen, cutoffs[2]),
    ] {
        let times: Vec<(String, u64)> = fps
            .keys()
            .map(|id| (id.clone(), by.of(&store.get(id).unwrap().unwrap())))
            .collect();
        let old = times.iter().filter(|(_, t)| *t < before).count() as u64;
        assert!(old > 0, "{by:?}: nothing to expire");
        let opts = ExpireOptions {
            before,
            by,
            dry_run: true,
            batch: 64,
        };
        assert_eq!(
            store.expire(&opts, |_| {}).unwrap().expired,
            old,
            "{by:?} dry run"
        );
        assert_eq!(store.len(), fps.len() as u64);
        let mut calls = 0;
        let report = store
            .expire(
                &ExpireOptions {
                    dry_run: false,
                    ..opts
                },
                |_| calls += 1,
            )
            .unwrap();
        assert_eq!(report.expired, old, "{by:?}");
        assert!(calls >= 1);
        full_scan |= report.full_scan;
        for (id, t) in &times {
            assert_eq!(
                store.get(id).unwrap().is_some(),
                *t >= before,
                "{by:?} {id}"
            );
            if *t < before {
                fps.remove(id);
            }
        }
        assert_eq!(store.len(), fps.len() as u64);
        assert!(store.check().unwrap().is_ok(), "{by:?}: check");
        let model: Vec<(String, u64)> = fps.iter().map(|(id, fp)| (id.clone(), *fp)).collect();
        for (_, &fp) in fps.iter().take(40) {
            let q = fp ^ 0b101;
            assert_eq!(
                shape(&store.query(Fingerprint(q), 3).unwrap()),
                brute_force(&model, q, 3)
            );
        }
    }
    full_scan
}

fn now() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs()
}

#[test]
fn expiry_equals_a_model_on_every_backend() {
    for backend in BACKENDS {
        let dir = TestCommand::new();
        let store = new_store(backend, dir.path("").as_path(), 3, 4);
        let full_scan = expiry_matches_the_model(&store, "");
        assert!(
            !full_scan,
            "{backend:?}: a format-7 store reads only the old records"
        );
    }
}

/// An expiry by stored time reads the old records and stops at the first one stored an
/// minute (the slack for a clock stepped back) past the cutoff: on a store of 2,000
/// documents of which 100 are old, it reads those 100.
#[test]
fn expiry_by_stored_time_reads_only_the_old_records() {
    let store = new_store(
        crate::util::Backend::Memory,
        std::path::Path::new("."),
        3,
        4,
    );
    store
        .insert_batch((0..100).map(|i| entry(&format!("old{i}"), i)))
        .unwrap();
    sleep(TICK);
    let before = now();
    store
        .insert_batch((0..1_900).map(|i| entry(&format!("new{i}"), i << 20)))
        .unwrap();
    // With the cutoff a minute (the slack) before the new documents, the first of them stops it.
    let opts = ExpireOptions::older_than(0, TimeField::Stored);
    let report = store
        .expire(
            &ExpireOptions {
                before: before - simstore::store::CLOCK_SLACK,
                ..opts
            },
            |_| {},
        )
        .unwrap();
    assert_eq!((report.expired, report.scanned), (0, 100));
    let report = store
        .expire(&ExpireOptions { before, ..opts }, |_| {})
        .unwrap();
    assert_eq!(report.expired, 100);
    assert_eq!(store.len(), 1_900);
}

#[test]
fn last_seen_tracking_refreshes_the_duplicate_found() {
    for track_seen in [true, false] {
        let store = simstore::StoreBuilder::in_memory().open().unwrap();
        let r = Retention {
            track_seen,
            ..Retention::default()
        };
        store.set_retention(r).unwrap();
        assert_eq!(store.retention(), r);
        let page = |id: &str| Document {
            id: id.into(),
            title: None,
            text: "the same page crawled twice, under two addresses, word for word".into(),
            ..Document::default()
        };
        assert!(
            store
                .check_and_insert(&page("a"), Rule::Mode)
                .unwrap()
                .is_new()
        );
        let first = store.get("a").unwrap().unwrap();
        assert_eq!(first.seen, first.time);
        sleep(TICK);
        let out = store.check_and_insert(&page("b"), Rule::Mode).unwrap();
        assert_eq!(out.duplicate_of(), Some("a"));
        let after = store.get("a").unwrap().unwrap();
        assert_eq!(after.time, first.time, "the stored time stays");
        assert_eq!(
            after.seen > after.time,
            track_seen,
            "track_seen {track_seen}"
        );
        // By last-seen time, a refreshed document is not old.
        let opts = ExpireOptions {
            before: after.time + 1,
            by: TimeField::Seen,
            dry_run: false,
            batch: 10,
        };
        assert_eq!(
            store.expire(&opts, |_| {}).unwrap().expired,
            u64::from(!track_seen)
        );
    }
}

#[test]
fn the_policy_survives_a_reopen_and_the_cli_sets_and_shows_it() {
    let t = TestCommand::new();
    checked(t.run(&[
        "init",
        "--retain",
        "90d",
        "--track-seen",
        "--retain-by",
        "seen",
    ]));
    let out = checked(t.run(&["retention", "--json"]));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["retain_secs"], 90 * 86_400);
    assert_eq!(v["by"], "seen");
    assert_eq!(v["track_seen"], true);
    checked(t.run(&["retention", "--keep-all", "--track-seen", "false"]));
    let store = Store::open(t.db()).unwrap();
    assert_eq!(
        store.retention(),
        Retention {
            track_seen: false,
            retain_secs: None,
            by: TimeField::Seen
        }
    );
    drop(store);
    let bad = t.run(&["retention", "--retain", "ninety days"]);
    assert_eq!(crate::util::code(&bad), 2);
    assert!(stderr(&bad).contains("not a duration"), "{}", stderr(&bad));
    // A retention of 0 would expire every document as it is stored: refused, the policy
    // left as it was (the library's error, so HTTP and Python refuse it too).
    let zero = t.run(&["retention", "--retain", "0s"]);
    assert_eq!(crate::util::code(&zero), 2);
    assert!(
        stderr(&zero).contains("retention of 0 seconds"),
        "{}",
        stderr(&zero)
    );
    let store = Store::open(t.db()).unwrap();
    assert_eq!(store.retention().retain_secs, None);
    let policy = Retention {
        retain_secs: Some(0),
        ..store.retention()
    };
    assert!(matches!(
        store.set_retention(policy),
        Err(simstore::Error::InvalidArgument(_))
    ));
}

#[test]
fn expire_from_the_command_line() {
    let t = TestCommand::new();
    let input = t.write(
        "docs.jsonl",
        b"{\"id\": \"a\", \"fp\": \"0000000000000001\"}\n{\"id\": \"b\", \"fp\": \"00000000000000f0\"}\n",
    );
    checked(t.run(&["import", input.to_str().unwrap()]));
    sleep(TICK);
    let dry = checked(t.run(&["expire", "--older-than", "0s", "--dry-run"]));
    assert!(
        stderr(&dry).contains("would expire 2 documents"),
        "{}",
        stderr(&dry)
    );
    let none = checked(t.run(&["expire", "--before", "2001-01-01"]));
    assert!(
        stderr(&none).contains("expired 0 documents"),
        "{}",
        stderr(&none)
    );
    let all = checked(t.run(&["expire", "--older-than", "0s"]));
    assert!(
        stderr(&all).contains("expired 2 documents"),
        "{}",
        stderr(&all)
    );
    assert!(
        stderr(&all).contains("0 documents left"),
        "{}",
        stderr(&all)
    );
    let bad = t.run(&["expire", "--before", "yesterday"]);
    assert_eq!(crate::util::code(&bad), 2);
    assert!(stderr(&bad).contains("not a time"), "{}", stderr(&bad));
    assert_eq!(crate::util::code(&t.run(&["expire"])), 2);
}

/// A record imported with a stored time ahead of the clock (from a machine whose clock ran
/// ahead, or a mistake) keeps it, but later documents are stamped by the clock — in this
/// process and after a reopen — and expire by it; times past the year 9999 print as seconds.
#[test]
fn a_time_ahead_of_the_clock_does_not_stamp_later_documents() {
    let t = TestCommand::new();
    let far = 253_402_300_800u64; // 10000-01-01
    let future = format!(
        "{{\"id\":\"future\",\"fp\":\"0123456789abcdef\",\"time\":{far}}}\n\
         {{\"id\":\"now1\",\"fp\":\"00000000000000f0\"}}\n"
    );
    checked(t.run(&[
        "import",
        t.write("a.jsonl", future.as_bytes()).to_str().unwrap(),
    ]));
    let later = b"{\"id\":\"now2\",\"fp\":\"0000000000000f00\"}\n";
    checked(t.run(&["import", t.write("b.jsonl", later).to_str().unwrap()]));
    let time = |id: &str| {
        let o = checked(t.run(&["get", "--json", id]));
        let doc: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
        doc["time"].as_u64().unwrap()
    };
    assert_eq!(time("future"), far);
    for id in ["now1", "now2"] {
        assert!(time(id) <= now() + 1, "{id} stamped {}", time(id));
    }
    let o = checked(t.run(&["get", "future"]));
    let shown = format!("{far} (Unix seconds, after 9999-12-31T23:59:59Z)");
    assert!(String::from_utf8_lossy(&o.stdout).contains(&shown));
    let before = (now() + 100).to_string();
    let o = checked(t.run(&["expire", "--before", &before]));
    assert!(stderr(&o).contains("expired 2 documents"), "{}", stderr(&o));
    let o = checked(t.run(&["expire", "--before", &u64::MAX.to_string(), "--dry-run"]));
    assert!(
        stderr(&o).contains("would expire 1 document"),
        "{}",
        stderr(&o)
    );
}

#[test]
fn expiry_and_the_policy_over_http() {
    use crate::util::{answer, http};
    use serde_json::json;
    let t = TestCommand::new();
    let s = t.serve(&[]);
    let h = http();
    for i in 0..5 {
        let doc = json!({"id": format!("d{i}"), "fp": format!("{:016x}", 1u64 << (i * 9))});
        assert_eq!(answer(h.post(s.at("/insert")).send_json(&doc)).0, 200);
    }
    sleep(TICK);
    let (st, v) = answer(
        h.post(s.at("/expire"))
            .send_json(json!({"older_than": "0s", "dry_run": true})),
    );
    assert_eq!(
        (st, v["expired"].as_u64(), v["docs"].as_u64()),
        (200, Some(5), Some(5)),
        "{v}"
    );
    let (st, v) = answer(
        h.post(s.at("/expire"))
            .send_json(json!({"before": "2001-01-01"})),
    );
    assert_eq!((st, v["expired"].as_u64()), (200, Some(0)), "{v}");
    let (st, v) = answer(
        h.post(s.at("/expire"))
            .send_json(json!({"older_than": "0s", "by": "seen"})),
    );
    assert_eq!(
        (st, v["expired"].as_u64(), v["docs"].as_u64()),
        (200, Some(5), Some(0)),
        "{v}"
    );
    for bad in [
        json!({}),
        json!({"older_than": "1d", "before": 5}),
        json!({"older_than": "soon"}),
        json!({"older_than": "1d", "by": "first"}),
        json!({"age": "1d"}),
    ] {
        let (st, v) = answer(h.post(s.at("/expire")).send_json(&bad));
        assert_eq!(st, 400, "{bad} -> {v}");
    }
    let (st, v) = answer(
        h.post(s.at("/retention"))
            .send_json(json!({"retain": "30d", "track_seen": true})),
    );
    assert_eq!(
        (st, v["retain_secs"].as_u64(), v["track_seen"].as_bool()),
        (200, Some(30 * 86_400), Some(true)),
        "{v}"
    );
    let (_, v) = answer(h.get(s.at("/retention")).call());
    assert_eq!(v["retain"], "30d");
    let (st, v) = answer(
        h.post(s.at("/retention"))
            .send_json(json!({"retain": "0s"})),
    );
    assert_eq!(st, 400, "{v}");
    let (_, v) = answer(h.get(s.at("/retention")).call());
    assert_eq!(v["retain"], "30d", "unchanged");
    let (st, v) = answer(
        h.post(s.at("/retention"))
            .send_json(json!({"retain": null})),
    );
    assert_eq!(
        (st, v["retain_secs"].clone()),
        (200, serde_json::Value::Null),
        "{v}"
    );
    assert_eq!(v["track_seen"], true);
}

/// `serve` applies a retention policy by itself: a store whose policy keeps documents for
/// 1 second loses them while the server runs.
#[test]
fn serve_applies_the_retention_policy() {
    use crate::util::{answer, http};
    let t = TestCommand::new();
    let input = t.write(
        "docs.jsonl",
        b"{\"id\": \"a\", \"fp\": \"0000000000000001\"}\n",
    );
    checked(t.run(&["init", "--retain", "1s"]));
    checked(t.run(&["import", input.to_str().unwrap()]));
    sleep(TICK);
    let s = t.serve(&[]);
    let h = http();
    let start = std::time::Instant::now();
    loop {
        let (_, v) = answer(h.get(s.at("/stats")).call());
        if v["docs"] == 0 {
            break;
        }
        assert!(
            start.elapsed() < Duration::from_secs(30),
            "the policy never ran: {v}"
        );
        sleep(Duration::from_millis(100));
    }
}

/// A store of format 6 (written by the simstore before last-seen times) is expired by
/// reading every record, and refuses last-seen tracking with what to do.
#[test]
fn a_format_6_store_is_expired_by_a_full_scan() {
    let t = TestCommand::new();
    let store = Store::open(t.db()).unwrap();
    store
        .insert_batch((0..50).map(|i| entry(&format!("d{i}"), i << 30)))
        .unwrap();
    drop(store);
    crate::util::set_format_version(&t.db(), 6);
    let store = Store::open(t.db()).unwrap();
    let err = store
        .set_retention(Retention {
            track_seen: true,
            ..Retention::default()
        })
        .unwrap_err();
    assert!(
        err.to_string()
            .contains("copy it into a new store (Store::for_each_doc"),
        "{err}"
    );
    sleep(TICK);
    let r = store
        .expire(&ExpireOptions::older_than(0, TimeField::Stored), |_| {})
        .unwrap();
    assert_eq!((r.expired, r.full_scan), (50, true));
    assert!(store.check().unwrap().is_ok());
}

/// `export | import` is a lossless logical backup: every stored field (times, last-seen
/// times, content hashes, sketches, lengths) comes back, so the restored store answers
/// every check and verified query as the original; `copy` keeps them too.
#[test]
fn export_then_import_restores_every_stored_field() {
    let t = TestCommand::new();
    let sample = concat!(env!("CARGO_MANIFEST_DIR"), "/data/sample.jsonl");
    checked(t.run(&["init", "--track-seen"]));
    checked(t.run(&["import", sample]));
    sleep(TICK);
    // Seen again: the duplicates found get a last-seen time of their own.
    checked(t.run(&["import", "--dedup", sample]));
    let export = checked(t.run(&["export"]));
    let file = t.write("export.jsonl", &export.stdout);
    let restored = t.path("restored.db");
    checked(t.run_on(&restored, &["import", file.to_str().unwrap()]));
    let copied = t.path("copied.db");
    checked(t.run(&["copy", "--to", copied.to_str().unwrap()]));
    let original = Store::open(t.db()).unwrap();
    let mut refreshed = 0;
    original
        .for_each_doc(|d| {
            refreshed += u64::from(d.seen > d.time);
            Ok(())
        })
        .unwrap();
    assert!(refreshed > 100, "only {refreshed} documents seen again");
    for other in [&restored, &copied] {
        let other = Store::open(other).unwrap();
        assert_eq!(other.len(), original.len());
        original
            .for_each_doc(|d| {
                assert_eq!(other.get(&d.id).unwrap().as_ref(), Some(&d));
                Ok(())
            })
            .unwrap();
    }
    // Stored times out of order (restored into a store that had newer documents) make
    // the next expiry read them all, and it still expires exactly the old ones.
    let late = t.path("late.db");
    let store = Store::open(&late).unwrap();
    store.insert_batch([entry("new", 1)]).unwrap();
    drop(store);
    checked(t.run_on(&late, &["import", file.to_str().unwrap()]));
    let store = Store::open(&late).unwrap();
    let newest = store.get("new").unwrap().unwrap().time;
    let r = store
        .expire(&ExpireOptions::before(newest, TimeField::Stored), |_| {})
        .unwrap();
    assert_eq!((r.expired, r.full_scan), (original.len(), false));
    assert_eq!(store.len(), 1);
}

/// A long import applies the store's retention policy beside it.
#[test]
fn import_applies_the_retention_policy() {
    let t = TestCommand::new();
    let old = t.write(
        "old.jsonl",
        b"{\"id\": \"old\", \"fp\": \"0000000000000001\"}\n",
    );
    let new = t.write(
        "new.jsonl",
        b"{\"id\": \"new\", \"fp\": \"00000000000000f0\"}\n",
    );
    checked(t.run(&["init", "--retain", "1s"]));
    checked(t.run(&["import", old.to_str().unwrap()]));
    sleep(2 * TICK);
    let out = checked(t.run(&["import", "--json", new.to_str().unwrap()]));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(
        (v["expired"].as_u64(), v["docs"].as_u64()),
        (Some(1), Some(1)),
        "{v}"
    );
    assert!(
        stderr(&out).contains("1 document expired by the retention policy"),
        "{}",
        stderr(&out)
    );
}

/// Expiry on a real Redis Cluster (the same model as the local backends): many processes
/// may write a cluster store, so its times do not follow its sequence numbers, and an
/// expiry reads every record. The policy is kept in the cluster store too.
#[test]
fn expiry_on_a_cluster_equals_the_model() {
    let Some(cluster) = crate::cluster_harness::Cluster::start() else {
        return;
    };
    let store = simstore::StoreBuilder::new(cluster.url("expiry"))
        .k_max(3)
        .blocks(4)
        .open()
        .unwrap();
    assert!(
        expiry_matches_the_model(&store, "c"),
        "a cluster expiry reads every record"
    );
    let r = Retention {
        track_seen: false,
        retain_secs: Some(3_600),
        by: TimeField::Seen,
    };
    store.set_retention(r).unwrap();
    drop(store);
    let again = simstore::StoreBuilder::new(cluster.url("expiry"))
        .open()
        .unwrap();
    assert_eq!(again.retention(), r);
}
