//! `kill -9` of the maintenance commands on a store on a real cluster: `simstore import
//! --bulk`, `simstore relayout` and `simstore copy --to redis://…`, each run as the real
//! binary and SIGKILLed at moments drawn over its measured duration (and, for a bulk load,
//! as soon as its `bulk-pending` marker is seen). After every kill:
//!
//! - the store opens for writing (which finishes or undoes the interrupted work);
//! - `Store::check` and `simstore check` find nothing wrong (after a copy, whose batches
//!   carry no marker to recover by, nothing but what the batch cut short left, until
//!   `simstore repair` mends it);
//! - what it holds is the model's, or part of it (a bulk load on Redis is visible as it is
//!   written, and an interrupted one is rebuilt from the records written): every document
//!   with its fingerprint, found by an exact query, and near queries equal brute force;
//! - run again to its end, the command completes the store: exactly the model.

use simstore::store::backend::Consistency;
use std::collections::BTreeMap;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use simstore::store::backend::MetaKey;
use simstore::{Fingerprint, Store, StoreBuilder};

use crate::cluster_harness::Cluster;
use crate::util::{TestCommand, brute_force, code, flip, rng, shape, stderr};

/// Documents of each store.
const DOCS: usize = 20_000;

/// When a run is killed.
#[derive(Debug, Clone, Copy)]
enum Kill {
    /// Not killed: run to its end.
    Never,
    /// This long after it started.
    After(Duration),
    /// This long after a reader first sees the `bulk-pending` marker.
    AfterMarker(Duration),
}

/// The model: `x0..x{DOCS}`, fingerprints spread out, some near copies of others.
fn model() -> BTreeMap<String, u64> {
    let mut r = rng(41);
    let mut out = BTreeMap::new();
    let mut last = 0u64;
    for i in 0..DOCS {
        let fp = if i % 5 == 0 {
            rand::Rng::random(&mut r)
        } else {
            flip(&mut r, last, 1 + (i % 4) as u32)
        };
        last = fp;
        out.insert(format!("x{i}"), fp);
    }
    out
}

/// The model as fingerprint records (JSONL).
fn records(model: &BTreeMap<String, u64>) -> String {
    model
        .iter()
        .map(|(id, fp)| format!("{{\"id\":\"{id}\",\"fp\":\"{fp:016x}\"}}\n"))
        .collect()
}

/// Runs `cmd` to its end (asserting success) or SIGKILLs it when `kill` says; returns
/// whether it was killed, and how long it ran.
fn run_or_kill(mut cmd: Command, kill: Kill, watch: Option<&Store>) -> (bool, Duration) {
    let mut child = cmd
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let start = Instant::now();
    let mut deadline = match kill {
        Kill::After(d) => Some(d),
        Kill::Never | Kill::AfterMarker(_) => None,
    };
    loop {
        if child.try_wait().unwrap().is_some() {
            let o = child.wait_with_output().unwrap();
            assert_eq!(code(&o), 0, "{}", stderr(&o));
            return (false, start.elapsed());
        }
        if let (None, Kill::AfterMarker(delay), Some(store)) = (deadline, kill, watch) {
            let marker = store
                .backend()
                .snapshot(Consistency::PointInTime)
                .meta(MetaKey::BulkPending);
            if matches!(marker, Ok(Some(_))) {
                deadline = Some(start.elapsed() + delay);
            }
        }
        if deadline.is_some_and(|d| start.elapsed() >= d) {
            child.kill().unwrap();
            child.wait().unwrap();
            return (true, start.elapsed());
        }
        std::thread::sleep(Duration::from_millis(2));
    }
}

/// Killed after `share` of `full`, a run's measured duration.
fn at(share: f64, full: Duration) -> Kill {
    Kill::After(full.mul_f64(share))
}

/// The store's content, id → fingerprint.
fn content(store: &Store) -> BTreeMap<String, u64> {
    let mut out = BTreeMap::new();
    store
        .scan_by_id(None, |_, doc| {
            out.insert(doc.id, doc.fp);
            Ok(true)
        })
        .unwrap();
    out
}

/// The checks after a kill (see the module docs): the store at `url` opens for writing,
/// checks clean (library and CLI), holds the model or part of it (all of it unless
/// `partial`), every document found by an exact query, near queries as brute force.
fn assert_sound(t: &TestCommand, url: &str, model: &BTreeMap<String, u64>, partial: bool) {
    let store = StoreBuilder::new(url).open().unwrap();
    let report = store.check().unwrap();
    assert!(report.is_ok(), "{url}: {:?}", report.problems);
    let o = t.run_on(Path::new(url), &["check"]);
    assert_eq!(code(&o), 0, "{url}: {}", stderr(&o));
    let got = content(&store);
    let wrong: Vec<_> = got
        .iter()
        .filter(|(id, fp)| model.get(*id) != Some(fp))
        .collect();
    assert!(
        wrong.is_empty(),
        "{url}: not the model's: {:?}",
        &wrong[..wrong.len().min(5)]
    );
    if !partial {
        assert_eq!(got.len(), model.len(), "{url}: documents missing");
    }
    assert_eq!(store.len(), got.len() as u64, "{url}: the live count");
    let stored: Vec<(String, u64)> = got.into_iter().collect();
    let k = store.layout().k_max();
    for (id, fp) in stored.iter().step_by(97) {
        let found = store.query(Fingerprint(*fp), 0).unwrap();
        assert!(
            found.iter().any(|m| &m.doc.id == id),
            "{url}: {id} not found"
        );
        let q = fp ^ 0b101;
        let near = store.query(Fingerprint(q), k).unwrap();
        assert_eq!(
            shape(&near),
            brute_force(&stored, q, k),
            "{url}: q={q:016x}"
        );
    }
}

/// `simstore import --bulk` killed while it loads into a new cluster store: the store
/// checks clean and holds part of the load (each document as loaded); the import run
/// again completes it.
#[test]
fn a_bulk_import_killed_leaves_a_sound_store_that_a_rerun_completes() {
    let Some(cluster) = Cluster::start() else {
        return;
    };
    let t = TestCommand::new();
    let model = model();
    t.write("load.jsonl", records(&model).as_bytes());
    let init = |url: &str| {
        let o = t.run_on(Path::new(url), &["init", "--expected-docs", "40000"]);
        assert_eq!(code(&o), 0, "{}", stderr(&o));
    };
    let bulk = |url: &str| t.command_on(Path::new(url), &["import", "--bulk", "load.jsonl"]);
    let measured = cluster.url("bulk-measured");
    init(&measured);
    let (_, full) = run_or_kill(bulk(&measured), Kill::Never, None);
    let kills = [
        Kill::AfterMarker(Duration::ZERO),
        Kill::AfterMarker(full / 8),
        at(0.5, full),
        at(0.8, full),
    ];
    for (round, kill) in kills.into_iter().enumerate() {
        let url = cluster.url(&format!("bulk{round}"));
        init(&url);
        let watch = StoreBuilder::new(&url).read_only(true).open().unwrap();
        let (killed, ran) = run_or_kill(bulk(&url), kill, Some(&watch));
        drop(watch);
        assert_sound(&t, &url, &model, true);
        let kept = StoreBuilder::new(&url)
            .read_only(true)
            .open()
            .unwrap()
            .len();
        run_or_kill(bulk(&url), Kill::Never, None);
        assert_sound(&t, &url, &model, false);
        eprintln!(
            "bulk {kill:?}: killed {killed} after {ran:?} (full run {full:?}); {kept} kept, completed"
        );
    }
}

/// `simstore relayout --k-max 4` killed while it rebuilds the tables of a cluster store:
/// the store opens (finishing or undoing the relayout) with every document, in the old
/// layout or the new one, and checks clean; a relayout run again ends in the new one.
#[test]
fn a_relayout_killed_leaves_a_complete_store_in_one_layout() {
    let Some(cluster) = Cluster::start() else {
        return;
    };
    let t = TestCommand::new();
    let model = model();
    t.write("load.jsonl", records(&model).as_bytes());
    let load = |url: &str| {
        for args in [
            &["init", "--expected-docs", "40000", "--k-max", "3"][..],
            &["import", "load.jsonl"],
        ] {
            let o = t.run_on(Path::new(url), args);
            assert_eq!(code(&o), 0, "{args:?}: {}", stderr(&o));
        }
    };
    let relayout = |url: &str| t.command_on(Path::new(url), &["relayout", "--k-max", "4"]);
    let measured = cluster.url("relayout-measured");
    load(&measured);
    let (_, full) = run_or_kill(relayout(&measured), Kill::Never, None);
    for (round, share) in [0.2, 0.5, 0.8].into_iter().enumerate() {
        let url = cluster.url(&format!("relayout{round}"));
        load(&url);
        let (killed, ran) = run_or_kill(relayout(&url), at(share, full), None);
        assert_sound(&t, &url, &model, false);
        let k = StoreBuilder::new(&url).open().unwrap().layout().k_max();
        assert!(k == 3 || k == 4, "k_max {k}");
        run_or_kill(relayout(&url), Kill::Never, None);
        assert_sound(&t, &url, &model, false);
        let k_after = StoreBuilder::new(&url).open().unwrap().layout().k_max();
        assert_eq!(k_after, 4);
        eprintln!("relayout killed at {share} ({killed} after {ran:?}, full {full:?}): k_max {k}");
    }
}

/// What a batch write killed midway leaves on a backend atomic per key, whose change set is
/// applied in phases (docs/scaling.md §4), and nothing else: table and `exact` entries of
/// documents whose record never came (queries drop them), records whose `ids` entry never
/// came (found by queries, not by `get`), a live count behind (added after the write).
/// `check` reports each; `repair` mends them all.
fn assert_only_a_cut_batch(store: &Store) {
    let report = store.check().unwrap();
    let cut = [
        "entry for missing document",
        "has no ids entry",
        "the counters say",
    ];
    let other: Vec<_> = report
        .problems
        .iter()
        .filter(|p| !cut.iter().any(|c| p.contains(c)))
        .collect();
    assert!(other.is_empty(), "not what a cut batch leaves: {other:?}");
}

/// `simstore copy --to redis://…` killed midway: the destination holds part of the source
/// (each document as in it) and at most what the batch cut short left, which `simstore
/// repair` mends; the copy run again completes it.
#[test]
fn a_copy_to_the_cluster_killed_is_completed_by_a_rerun() {
    let Some(cluster) = Cluster::start() else {
        return;
    };
    let t = TestCommand::new();
    let model = model();
    t.write("load.jsonl", records(&model).as_bytes());
    let o = t.run(&["import", "load.jsonl"]);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    let copy = |url: &str| t.command(&["copy", "--to", url]);
    let (_, full) = run_or_kill(copy(&cluster.url("copy-measured")), Kill::Never, None);
    for (round, share) in [0.3, 0.6, 0.9].into_iter().enumerate() {
        let url = cluster.url(&format!("copy{round}"));
        let (killed, ran) = run_or_kill(copy(&url), at(share, full), None);
        // Killed before it created the store: nothing to look at yet.
        if let Ok(store) = StoreBuilder::new(&url).read_only(true).open() {
            assert_only_a_cut_batch(&store);
            drop(store);
            let o = t.run_on(Path::new(&url), &["repair"]);
            assert_eq!(code(&o), 0, "{}", stderr(&o));
            assert_sound(&t, &url, &model, true);
        }
        run_or_kill(copy(&url), Kill::Never, None);
        assert_sound(&t, &url, &model, false);
        eprintln!("copy killed at {share} ({killed} after {ran:?}, full {full:?}): completed");
    }
}
