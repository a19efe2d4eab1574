//! Online backups and their restore: a backup taken during a concurrent import holds every
//! write acknowledged before it began, and no document in part; a `simstore backup` killed
//! mid-way leaves nothing restore takes for whole; a damaged backup is refused; backups in
//! one directory are incremental; the CLI, HTTP and the library agree.

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use rand::Rng;
use simstore::{DocMeta, Entry, Fingerprint, Store};

use crate::util::{TestCommand, answer, checked, code, http, rng, stderr};

fn entry(i: u64) -> Entry {
    Entry {
        id: format!("d{i}"),
        fp: Fingerprint(i.wrapping_mul(0x9E37_79B9_7F4A_7C15)),
        meta: DocMeta::default(),
    }
}

/// Every document of the restored store at `path` is whole (`check`), and has the
/// fingerprint it was written with; returns its ids' numbers.
fn restored_ids(path: &std::path::Path) -> Vec<u64> {
    let store = Store::builder(path).read_only(true).open().unwrap();
    let report = store.check().unwrap();
    assert!(report.is_ok(), "{:?}", report.problems);
    let mut ids = Vec::new();
    store
        .for_each_doc(|d| {
            let i: u64 = d.id[1..].parse().unwrap();
            assert_eq!(d.fp, entry(i).fp.0, "{}", d.id);
            ids.push(i);
            Ok(())
        })
        .unwrap();
    ids
}

#[test]
fn a_backup_during_writes_holds_every_acknowledged_write() {
    let t = TestCommand::new();
    let store = Store::open(t.db()).unwrap();
    let acked = AtomicU64::new(0);
    let dest = t.path("backups");
    let mut before = Vec::new();
    std::thread::scope(|s| {
        s.spawn(|| {
            // Batches of 100, each acknowledged when insert_batch returns.
            for b in 0..300u64 {
                store
                    .insert_batch((b * 100..(b + 1) * 100).map(entry))
                    .unwrap();
                acked.store((b + 1) * 100, Ordering::SeqCst);
            }
        });
        for _ in 0..3 {
            std::thread::sleep(Duration::from_millis(30));
            let n = acked.load(Ordering::SeqCst);
            let info = store.backup(&dest, None).unwrap();
            before.push((info.id, n));
        }
    });
    for (id, n) in before {
        let path = t.path(&format!("restored-{id}"));
        simstore::restore(&dest, Some(id), &path).unwrap();
        let ids = restored_ids(&path);
        // Every batch acknowledged before the backup, and only whole batches.
        assert!(
            ids.len() as u64 >= n,
            "backup {id}: {} of {n} acknowledged",
            ids.len()
        );
        assert_eq!(ids.len() % 100, 0, "backup {id}: a batch in part");
        assert!(
            ids.iter().all(|&i| i < ids.len() as u64),
            "backup {id}: not a prefix"
        );
    }
}

/// Backups of two stores into one directory at once, in threads that also list it: each
/// gets its own id and every backup said to be taken is listed and restores its store's
/// documents (they used to take each other's files for a dead backup's and give out one
/// id twice).
#[test]
fn concurrent_backups_into_one_directory_all_survive() {
    let t = TestCommand::new();
    let dest = t.path("backups");
    let stores: Vec<Store> = (0..2u64)
        .map(|s| {
            let store = Store::open(t.path(&format!("s{s}.db"))).unwrap();
            let n = 2_000 + s * 1_000;
            store.insert_batch((0..n).map(entry)).unwrap();
            store
        })
        .collect();
    let taken = std::sync::Mutex::new(Vec::new());
    std::thread::scope(|s| {
        for (i, store) in stores.iter().enumerate() {
            let (taken, dest) = (&taken, &dest);
            s.spawn(move || {
                for _ in 0..4 {
                    let info = store.backup(dest, None).unwrap();
                    taken.lock().unwrap().push((info.id, 2_000 + i * 1_000));
                    simstore::list_backups(dest).unwrap();
                }
            });
        }
    });
    let taken = taken.into_inner().unwrap();
    let listed: Vec<u32> = simstore::list_backups(&dest)
        .unwrap()
        .iter()
        .map(|b| b.id)
        .collect();
    let mut ids: Vec<u32> = taken.iter().map(|&(id, _)| id).collect();
    ids.sort();
    assert_eq!(ids, listed, "every backup taken is listed, each id once");
    for (id, n) in taken {
        let path = t.path(&format!("restored-{id}"));
        simstore::restore(&dest, Some(id), &path).unwrap();
        assert_eq!(restored_ids(&path).len(), n, "backup {id}");
    }
}

#[test]
fn backups_are_incremental_kept_and_a_damaged_one_is_refused() {
    let t = TestCommand::new();
    let store = Store::open(t.db()).unwrap();
    store.insert_batch((0..50_000).map(entry)).unwrap();
    let dest = t.path("backups");
    let first = store.backup(&dest, None).unwrap();
    let size = |p: &std::path::Path| crate::util::dir_bytes(p);
    let after_first = size(&dest);
    store.insert_batch((50_000..50_500).map(entry)).unwrap();
    let second = store.backup(&dest, None).unwrap();
    let added = size(&dest) - after_first;
    eprintln!(
        "backup of 50,000 documents: {after_first} bytes; after 1 % more: {added} bytes more"
    );
    // Less than a whole copy (a full one would add the store again); how much less depends
    // on what RocksDB compacted in between (0.16 MB to 2 MB seen here).
    assert!(
        added < after_first,
        "not incremental: {added} bytes after {after_first}"
    );
    store.backup(&dest, Some(2)).unwrap();
    let ids: Vec<u32> = simstore::list_backups(&dest)
        .unwrap()
        .iter()
        .map(|b| b.id)
        .collect();
    assert_eq!(ids, [second.id, second.id + 1]);
    assert!(first.id < second.id);
    drop(store);
    // Damage a file of the newest backup (the largest its meta file lists: another may be
    // an older backup's only): restore refuses it, and leaves no store.
    let victim = largest_file_of_backup(&dest, second.id + 1);
    let len = std::fs::metadata(&victim).unwrap().len();
    std::fs::OpenOptions::new()
        .write(true)
        .open(&victim)
        .unwrap()
        .set_len(len / 2)
        .unwrap();
    let err = simstore::restore(&dest, None, t.path("r.db")).unwrap_err();
    assert!(err.to_string().contains("damaged"), "{err}");
    assert!(!t.path("r.db").exists());
}

/// The largest file under `dir`.
/// The largest of the files backup `id` in `dest` consists of, as its meta file
/// (`meta/ID`, one `PATH crc32 ...` line a file) lists them.
fn largest_file_of_backup(dest: &std::path::Path, id: u32) -> std::path::PathBuf {
    let meta = std::fs::read_to_string(dest.join("meta").join(id.to_string())).unwrap();
    meta.lines()
        .filter_map(|l| l.split_whitespace().next())
        .filter(|f| f.contains('/'))
        .map(|f| dest.join(f))
        .max_by_key(|p| std::fs::metadata(p).map_or(0, |m| m.len()))
        .expect("the backup lists its files")
}

/// `kill -9` of `simstore backup` at random moments: afterwards the directory lists only
/// complete backups, and each of them restores to the whole store.
#[test]
fn kill_9_during_a_backup_leaves_no_backup_that_looks_complete() {
    let t = TestCommand::new();
    let store = Store::open(t.db()).unwrap();
    for b in 0..10u64 {
        store
            .insert_batch((b * 30_000..(b + 1) * 30_000).map(entry))
            .unwrap();
    }
    drop(store);
    let dest = t.path("backups");
    let dest_s = dest.to_str().unwrap().to_owned();
    // The first run flushes the store's log; time a second, whole one.
    checked(t.run(&["backup", &dest_s]));
    std::fs::remove_dir_all(&dest).unwrap();
    let start = std::time::Instant::now();
    checked(t.run(&["backup", &dest_s]));
    let took = start.elapsed();
    let mut r = rng(0xbac);
    // A loaded machine makes runs uneven: a kill that came after the run finished narrows
    // the window, and rounds go on (up to 16) until one was killed.
    let (mut killed, mut round, mut hi) = (0, 0, 0.95f64);
    while round < 4 || (killed == 0 && round < 16) {
        let _ = std::fs::remove_dir_all(&dest);
        let mut child = t.command(&["backup", &dest_s]).spawn().unwrap();
        let share = r.random_range(0.02..hi);
        std::thread::sleep(took.mul_f64(share));
        let _ = child.kill();
        let finished = child.wait().unwrap().success();
        killed += u32::from(!finished);
        if finished {
            hi = share.max(0.03);
        }
        let listed = simstore::list_backups(&dest).unwrap_or_default();
        for b in &listed {
            let path = t.path(&format!("r{round}-{}", b.id));
            simstore::restore(&dest, Some(b.id), &path).unwrap();
            assert_eq!(restored_ids(&path).len(), 300_000);
            std::fs::remove_dir_all(&path).unwrap();
        }
        round += 1;
    }
    eprintln!("backup kill test: {killed} of {round} runs killed; a whole run took {took:.1?}");
    assert!(
        killed >= 1,
        "no run of {round} was killed before it finished"
    );
}

/// A restore removes the staging directories that restores killed mid-way left beside its
/// path (their processes gone), not a live one's; into a missing directory it says so
/// rather than call the backup damaged.
#[test]
fn a_restore_clears_what_killed_restores_left_and_names_a_missing_directory() {
    let t = TestCommand::new();
    let store = Store::open(t.db()).unwrap();
    store.insert_batch((0..100).map(entry)).unwrap();
    let dest = t.path("backups");
    store.backup(&dest, None).unwrap();
    // pid_max is at most 2^22: no process has this pid; process 1 is always alive.
    let (dead, alive) = (
        t.path(".r.db.restoring-4294967295"),
        t.path(".r.db.restoring-1"),
    );
    for dir in [&dead, &alive] {
        std::fs::create_dir_all(dir.join("sub")).unwrap();
    }
    simstore::restore(&dest, None, t.path("r.db")).unwrap();
    assert_eq!(restored_ids(&t.path("r.db")).len(), 100);
    assert!(!dead.exists(), "a dead restore's staging is removed");
    assert!(alive.exists(), "a live process's staging is left alone");
    let err = simstore::restore(&dest, None, t.path("none/sub/r.db")).unwrap_err();
    assert!(err.to_string().contains("is not a directory"), "{err}");
    assert!(!err.to_string().contains("damaged"), "{err}");
}

#[test]
fn backup_and_restore_from_the_cli_and_over_http() {
    let t = TestCommand::new();
    let input = t.write(
        "docs.jsonl",
        b"{\"id\": \"a\", \"fp\": \"0000000000000001\"}\n",
    );
    checked(t.run(&["import", input.to_str().unwrap()]));
    let dest = t.path("backups");
    let dest_s = dest.to_str().unwrap();
    let o = checked(t.run(&["backup", dest_s, "--json"]));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["id"], 1);
    let list = checked(t.run(&["backup", dest_s, "--list"]));
    assert_eq!(String::from_utf8_lossy(&list.stdout).lines().count(), 1);
    let restored = t.path("restored.db");
    checked(t.run(&["restore", dest_s, restored.to_str().unwrap()]));
    assert!(Store::open(&restored).unwrap().get("a").unwrap().is_some());
    let again = t.run(&["restore", dest_s, restored.to_str().unwrap()]);
    assert_eq!(code(&again), 2);
    assert!(stderr(&again).contains("exists"), "{}", stderr(&again));
    // While serve holds the store: the CLI says to ask the server, and the server does it.
    let s = t.serve(&[]);
    let locked = t.run(&["backup", dest_s]);
    assert_eq!(code(&locked), 2);
    assert!(
        stderr(&locked).contains("POST /backup"),
        "{}",
        stderr(&locked)
    );
    let h = http();
    let (st, v) = answer(
        h.post(s.at("/backup"))
            .send_json(serde_json::json!({"dest": dest_s, "keep": 1})),
    );
    assert_eq!((st, v["id"].as_u64()), (200, Some(2)), "{v}");
    let (st, _) = answer(
        h.post(s.at("/backup"))
            .send_json(serde_json::json!({"to": dest_s})),
    );
    assert_eq!(st, 400);
    // Refused, nothing deleted nor written: keeping 0 (once kept the newest alone), an
    // empty destination (once the file system's root), one inside the store, another
    // store's directory (once mixed with its files).
    let inside = t.db().join("bk");
    let other = t.path("other.db");
    drop(Store::open(&other).unwrap());
    for bad in [
        serde_json::json!({"dest": dest_s, "keep": 0}),
        serde_json::json!({"dest": ""}),
        serde_json::json!({"dest": inside}),
        serde_json::json!({"dest": other}),
    ] {
        let (st, v) = answer(h.post(s.at("/backup")).send_json(&bad));
        assert_eq!(st, 400, "{bad} -> {v}");
    }
    assert!(!inside.exists() && !other.join("meta").exists());
    assert_eq!(simstore::list_backups(&dest).unwrap().len(), 1);
    let (st, v) = answer(h.post(s.at("/compact")).send_json(serde_json::json!({})));
    assert_eq!(st, 200, "{v}");
    assert!(v["disk_bytes"].as_u64().is_some(), "{v}");
    // A field /compact does not take is refused, not ignored.
    let (st, v) = answer(
        h.post(s.at("/compact"))
            .send_json(serde_json::json!({"x": 1})),
    );
    assert_eq!(st, 400, "{v}");
    assert!(v["error"].as_str().unwrap_or_default().contains("x"), "{v}");
    assert_eq!(simstore::list_backups(&dest).unwrap().len(), 1);
}

/// `stats` shows what deletes left behind, and `compact` gives it back.
#[test]
fn compact_gives_back_what_deletes_left() {
    let t = TestCommand::new();
    let store = Store::open(t.db()).unwrap();
    store.insert_batch((0..60_000).map(entry)).unwrap();
    store.flush().unwrap();
    let ids: Vec<String> = (0..60_000).step_by(2).map(|i| format!("d{i}")).collect();
    let refs: Vec<&str> = ids.iter().map(String::as_str).collect();
    store.delete_many(&refs).unwrap();
    store.flush().unwrap();
    drop(store);
    let stats = |t: &TestCommand| -> serde_json::Value {
        serde_json::from_slice(&checked(t.run(&["stats", "--json"])).stdout).unwrap()
    };
    let before = stats(&t);
    let o = checked(t.run(&["compact"]));
    assert!(stderr(&o).contains("compacted"), "{}", stderr(&o));
    let after = stats(&t);
    eprintln!(
        "compact: disk {} -> {} bytes, reclaimable {} -> {}",
        before["disk_bytes"],
        after["disk_bytes"],
        before["reclaimable_bytes"],
        after["reclaimable_bytes"]
    );
    assert!(after["disk_bytes"].as_u64() < before["disk_bytes"].as_u64());
    assert_eq!(after["docs"], 30_000);
    assert!(Store::open(t.db()).unwrap().check().unwrap().is_ok());
}

/// A store open in this process (a server, a crawler) gets the space back too: after
/// queries (whose iterators the store keeps) and deletes of every document, `compact`
/// leaves about what an empty store holds, with no log and no flushed deletes kept.
#[test]
fn compact_in_a_store_kept_open_gives_back_what_deletes_left() {
    let t = TestCommand::new();
    let store = Store::open(t.db()).unwrap();
    let empty = store.stats().unwrap().disk_bytes;
    store.insert_batch((0..60_000).map(entry)).unwrap();
    for i in (0..60_000).step_by(97) {
        assert_eq!(store.query(entry(i).fp, 3).unwrap().len(), 1);
    }
    let ids: Vec<String> = (0..60_000).map(|i| format!("d{i}")).collect();
    let refs: Vec<&str> = ids.iter().map(String::as_str).collect();
    store.delete_many(&refs).unwrap();
    let full = store.stats().unwrap().disk_bytes;
    store.compact().unwrap();
    let after = store.stats().unwrap().disk_bytes;
    eprintln!("in-process compact: empty {empty}, after deletes {full}, compacted {after} bytes");
    assert!(store.is_empty() && store.query(entry(97).fp, 3).unwrap().is_empty());
    // What stays is the tables' emptied buckets (one per prefix seen, at most 2^p a
    // table) and RocksDB's own files; the 60,000 records, their logs and tombstones go.
    assert!(after < full / 10, "{after} of {full} bytes left");
}

/// The logical backup of a Redis Cluster store: `simstore copy` out of the cluster while
/// another thread writes to it gives a consistent local store (`check` clean) with every
/// document acknowledged before the copy began, each as written; a backup of that restores.
#[test]
fn a_copy_out_of_a_cluster_during_writes_is_a_consistent_backup() {
    let Some(cluster) = crate::cluster_harness::Cluster::start() else {
        return;
    };
    let url = cluster.url("logical");
    let store = simstore::StoreBuilder::new(&url).open().unwrap();
    store.insert_batch((0..5_000).map(entry)).unwrap();
    let t = TestCommand::new();
    let local = t.path("local.db");
    let done = std::sync::atomic::AtomicBool::new(false);
    std::thread::scope(|s| {
        s.spawn(|| {
            let mut b = 50;
            while !done.load(Ordering::Relaxed) {
                store
                    .insert_batch((b * 100..(b + 1) * 100).map(entry))
                    .unwrap();
                b += 1;
            }
        });
        let o = t.run_on(
            std::path::Path::new(&url),
            &["copy", "--to", local.to_str().unwrap()],
        );
        done.store(true, Ordering::Relaxed);
        assert_eq!(code(&o), 0, "{}", stderr(&o));
    });
    let ids = restored_ids(&local);
    assert!(
        (0..5_000).all(|i| ids.contains(&i)),
        "a document acknowledged before the copy is missing"
    );
    let dest = t.path("backups");
    Store::open(&local).unwrap().backup(&dest, None).unwrap();
    simstore::restore(&dest, None, t.path("r.db")).unwrap();
    assert_eq!(restored_ids(&t.path("r.db")).len(), ids.len());
}
