//! `kill -9` of `simstore expire` at random moments: every document is then whole (its
//! record, id, every table entry: `check` clean, found by an exact query) or gone (not
//! found by `get` nor by a query), the documents newer than the cutoff are all there, and
//! a second expiry finishes the job.

use std::path::Path;
use std::thread;
use std::time::Duration;

use rand::Rng;
use simstore::{DocMeta, Entry, Fingerprint, Store};

use super::maintenance::{End, Kill, run};
use crate::util::rng;

/// Documents stored before the cutoff (expired) and after it (kept).
const OLD: u64 = 20_000;
const NEW: u64 = 2_000;
/// Kills, each of a fresh copy of the store; more, up to `MAX_ROUNDS`, until one lands in
/// the middle of the deletes.
const ROUNDS: usize = 6;
const MAX_ROUNDS: usize = 24;

fn fp_of(i: u64) -> u64 {
    i.wrapping_mul(0x9E37_79B9_7F4A_7C15)
}

/// A store of `OLD` documents, then (a second later) `NEW` more; returns the cutoff.
fn build(path: &Path) -> u64 {
    let store = Store::open(path).unwrap();
    let entry = |i: u64| Entry {
        id: format!("d{i}"),
        fp: Fingerprint(fp_of(i)),
        meta: DocMeta::default(),
    };
    for chunk in (0..OLD).collect::<Vec<_>>().chunks(5_000) {
        store.insert_batch(chunk.iter().map(|&i| entry(i))).unwrap();
    }
    thread::sleep(Duration::from_millis(1_100));
    let cutoff = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs();
    store.insert_batch((OLD..OLD + NEW).map(entry)).unwrap();
    cutoff
}

/// Runs `simstore expire --before CUTOFF --batch 20` on `path`, killed after `after` (if
/// it has not finished); returns whether it was killed, and how long it ran.
fn expire(path: &Path, cutoff: u64, after: Duration, dir: &Path) -> (bool, Duration) {
    let cutoff = cutoff.to_string();
    let args = ["expire", "--before", &cutoff, "--batch", "20"];
    match run(path, &args, Kill::At(after), dir) {
        End::Killed(took) => (true, took),
        End::Finished(took) => (false, took),
    }
}

/// Every document whole or gone; every new one there; returns how many old ones are left.
fn verify(path: &Path) -> u64 {
    let store = Store::open(path).unwrap();
    let report = store.check().unwrap();
    assert!(report.is_ok(), "{:?}", report.problems);
    let mut left = 0;
    for i in 0..OLD + NEW {
        let got = store.get(&format!("d{i}")).unwrap();
        let found = store
            .query(Fingerprint(fp_of(i)), 0)
            .unwrap()
            .iter()
            .any(|m| m.doc.id == format!("d{i}"));
        assert_eq!(got.is_some(), found, "d{i}: record and tables disagree");
        if i >= OLD {
            assert!(found, "d{i} is newer than the cutoff and must stay");
        } else if found {
            left += 1;
        }
    }
    assert_eq!(store.len(), left + NEW);
    left
}

#[test]
fn kill_9_during_an_expiry_leaves_every_document_whole_or_gone() {
    let dir = tempfile::tempdir().unwrap();
    let template = dir.path().join("template");
    let cutoff = build(&template);
    let full = dir.path().join("full");
    super::maintenance::copy_dir(&template, &full);
    let (_, took) = expire(&full, cutoff, Duration::from_secs(600), dir.path());
    assert_eq!(verify(&full), 0);
    let mut r = rng(0xe8_9172);
    let (mut kills, mut partial) = (0, 0);
    // The kill moment is a share of one full run's time, which a loaded machine makes
    // uneven: a kill that came too late (the run finished) or too early (nothing deleted
    // yet) narrows the window, and rounds go on (up to MAX_ROUNDS) until one landed in the
    // middle of the deletes.
    let (mut lo, mut hi) = (0.3, 0.95);
    let mut round = 0;
    while round < ROUNDS || (partial == 0 && round < MAX_ROUNDS) {
        let path = dir.path().join(format!("round{round}"));
        super::maintenance::copy_dir(&template, &path);
        let share = r.random_range(lo..hi);
        let (killed, _) = expire(&path, cutoff, took.mul_f64(share), dir.path());
        kills += u64::from(killed);
        let left = verify(&path);
        partial += u64::from(killed && left > 0 && left < OLD);
        match (killed, left) {
            (false, _) | (true, 0) => hi = share.max(lo + 0.01),
            (true, OLD) => lo = share.min(hi - 0.01),
            _ => {}
        }
        // The next expiry finishes the job.
        expire(&path, cutoff, Duration::from_secs(600), dir.path());
        assert_eq!(verify(&path), 0);
        let _ = std::fs::remove_dir_all(&path);
        round += 1;
    }
    eprintln!(
        "expire crash test: {kills} of {round} runs killed, {partial} with part of the old \
         documents expired; a full run took {took:.1?}"
    );
    assert!(
        partial >= 1,
        "no run was killed in the middle of its deletes"
    );
}
