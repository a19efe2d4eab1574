//! The Redis Cluster backend on a real cluster (6 `redis-server` processes on loopback,
//! started by [`Cluster`]): answers equal brute force for every k ≤ k_max (and the quality
//! modes' answers their model), writes survive a
//! master's `kill -9` with replica acknowledgement, queries stay exact while slots move,
//! exact duplicates are claimed once across processes, other specs and formats are refused.
//! Without `redis-server` (outside CI) each test says it skips.

use simstore::store::backend::Consistency;
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use simstore::store::backend::{Change, ChangeSet, Durability, MetaKey};
use simstore::store::codec::{self, Manifest};
use simstore::{
    DocMeta, Entry, Error, Fingerprint, FingerprintSpec, Rule, Store, StoreBuilder, StoredDoc,
};

use crate::cluster_harness::Cluster;
use crate::util::{TestCommand, brute_force, code, flip, rng, shape, stderr};

fn open(url: &str, k_max: u32, blocks: u32, expected: u64) -> Store {
    StoreBuilder::new(url)
        .k_max(k_max)
        .blocks(blocks)
        .expected_docs(expected)
        .open()
        .unwrap()
}

fn entry(id: String, fp: u64) -> Entry {
    Entry {
        id,
        fp: Fingerprint(fp),
        meta: DocMeta::default(),
    }
}

/// Stores `entries` (`(id, fp)`) in one batch.
fn insert_all(store: &Store, entries: &[(String, u64)]) {
    store
        .insert_batch(entries.iter().map(|(id, fp)| entry(id.clone(), *fp)))
        .unwrap();
}

/// Random fingerprints with near copies (1..=4 bits away), as `(id, fp)`.
fn corpus(seed: u64, n: usize) -> Vec<(String, u64)> {
    let mut r = rng(seed);
    let mut out = Vec::with_capacity(n);
    while out.len() < n {
        let base: u64 = rand::Rng::random(&mut r);
        out.push((format!("d{}", out.len()), base));
        for d in 1..=4 {
            out.push((format!("d{}", out.len()), flip(&mut r, base, d)));
        }
    }
    out.truncate(n);
    out
}

/// Queries at stored fingerprints and near them, each against brute force, for k ≤ k_max;
/// also the batch query against the single ones.
fn assert_exact(store: &Store, entries: &[(String, u64)], k_max: u32, seed: u64) {
    let mut r = rng(seed);
    let mut queries: Vec<u64> = entries.iter().step_by(37).map(|e| e.1).collect();
    queries.extend(entries.iter().step_by(53).map(|e| flip(&mut r, e.1, 2)));
    queries.push(rand::Rng::random(&mut r));
    for k in 0..=k_max {
        let fps: Vec<Fingerprint> = queries.iter().map(|&q| Fingerprint(q)).collect();
        let batch = store.query_batch(fps.iter().copied(), k).unwrap();
        for (q, answer) in queries.iter().zip(&batch) {
            let single = store.query(Fingerprint(*q), k).unwrap();
            assert_eq!(
                shape(&single),
                brute_force(entries, *q, k),
                "k={k} q={q:016x}"
            );
            assert_eq!(shape(answer), shape(&single), "batch k={k} q={q:016x}");
        }
    }
}

#[test]
fn store_on_a_cluster_equals_brute_force() {
    let Some(cluster) = Cluster::start() else {
        return;
    };
    // 256 buckets per space (expected 10,000) and one (expected 10): both key shapes.
    for (name, expected) in [("wide", 10_000), ("narrow", 10)] {
        let store = open(&cluster.url(name), 3, 5, expected);
        let mut entries = corpus(7, 3000);
        insert_all(&store, &entries);
        // One batch storing ids twice (a re-crawl within one input): the second replaces
        // the first, which leaves nothing behind (`check` below).
        let twice = (0..3000).step_by(29).flat_map(|i| {
            let (id, fp) = entries[i].clone();
            [entry(id.clone(), fp ^ 0xFF00_0000), entry(id, fp)]
        });
        store.insert_batch(twice.collect::<Vec<_>>()).unwrap();
        // Replace some (new fingerprints), delete some.
        for i in (0..3000).step_by(11) {
            entries[i].1 ^= 0xF0F0;
            let e = entry(entries[i].0.clone(), entries[i].1);
            store.insert_batch([e]).unwrap();
        }
        for i in (5..3000).step_by(17) {
            assert!(store.delete(&entries[i].0).unwrap());
        }
        entries = entries
            .into_iter()
            .enumerate()
            .filter(|(i, _)| i < &5 || (i - 5) % 17 != 0)
            .map(|(_, e)| e)
            .collect();
        assert_eq!(store.len(), entries.len() as u64, "{name}");
        assert_exact(&store, &entries, 3, 11);
        let report = store.check().unwrap();
        assert!(report.is_ok(), "{name}: {:?}", report.problems);
        // Another process (here: another client) sees the same store.
        let other = StoreBuilder::new(cluster.url(name)).open().unwrap();
        assert_eq!(other.layout(), store.layout());
        assert_exact(&other, &entries, 3, 12);
    }
}

/// Both quality modes on the cluster: queries and checks of the mode's rule (candidates
/// beyond k_max in the spans, sketches compared) equal the model of `tests/modes.rs`.
#[test]
fn quality_modes_on_a_cluster_equal_the_model() {
    let Some(cluster) = Cluster::start() else {
        return;
    };
    for quality in simstore::Quality::ALL {
        let open = |name: &str| {
            StoreBuilder::new(cluster.url(&format!("{name}-{quality}")))
                .quality(quality)
                .expected_docs(10_000_000)
                .open()
                .unwrap()
        };
        crate::modes::check_mode_queries(&open("queries"), "cluster");
        crate::modes::check_mode_checks(&open("checks"), "cluster");
    }
}

/// Two processes (here: handles) bulk-loading into one new store at once both load it
/// sorted; the live count is the sum of their loads, not the last one's.
#[test]
fn bulk_loads_into_one_new_store_at_once_count_every_document() {
    let Some(cluster) = Cluster::start() else {
        return;
    };
    let url = cluster.url("two_loads");
    let handles = [open(&url, 3, 5, 2_000), open(&url, 3, 5, 2_000)];
    let barrier = std::sync::Barrier::new(2);
    std::thread::scope(|s| {
        for (i, store) in handles.iter().enumerate() {
            let barrier = &barrier;
            s.spawn(move || {
                let load = corpus(20 + i as u64, 1500);
                let load = load
                    .into_iter()
                    .map(|(id, fp)| entry(format!("p{i}{id}"), fp));
                barrier.wait();
                assert_eq!(store.bulk_load(load).unwrap().inserted, 1500);
            });
        }
    });
    let store = StoreBuilder::new(&url).open().unwrap();
    assert_eq!(store.len(), 3000);
    assert!(store.check().unwrap().is_ok());
}

#[test]
fn bulk_load_on_a_cluster_equals_brute_force() {
    let Some(cluster) = Cluster::start() else {
        return;
    };
    let store = open(&cluster.url("bulk"), 3, 5, 2_000);
    let mut entries = corpus(9, 3000);
    // Repeated ids in the load: the last one wins.
    let mut load: Vec<Entry> = entries.iter().map(|(i, f)| entry(i.clone(), *f)).collect();
    for i in (0..3000).step_by(29) {
        entries[i].1 ^= 0xFF00_0000;
        load.push(entry(entries[i].0.clone(), entries[i].1));
    }
    let out = store.bulk_load(load).unwrap();
    assert_eq!((out.inserted, store.len()), (3000, 3000));
    assert_exact(&store, &entries, 3, 13);
    let report = store.check().unwrap();
    assert!(report.is_ok(), "{:?}", report.problems);
    // Not empty any more: a second load goes in batches, and replaces.
    store.bulk_load([entry("d0".into(), 7)]).unwrap();
    entries[0].1 = 7;
    assert_exact(&store, &entries, 3, 14);
}

#[test]
fn cli_runs_on_a_cluster() {
    let Some(cluster) = Cluster::start() else {
        return;
    };
    let t = TestCommand::new();
    let url = cluster.url("pages");
    t.write(
        "in.jsonl",
        b"{\"id\":\"a\",\"fp\":\"00000000000000ff\"}\n{\"id\":\"b\",\"fp\":\"ff00000000000000\"}\n",
    );
    for args in [
        &["init", "--expected-docs", "1000"][..],
        &["import", "in.jsonl"],
        &["check"],
    ] {
        let o = t.run_on(Path::new(&url), args);
        assert_eq!(code(&o), 0, "{args:?}: {}", stderr(&o));
    }
    let o = t.run_on(
        Path::new(&url),
        &["query", "--fp", "00000000000000fe", "--k", "1"],
    );
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    assert!(String::from_utf8_lossy(&o.stdout).starts_with("1\ta\t"));
    let o = t.run_on(Path::new(&url), &["stats"]);
    let out = String::from_utf8_lossy(&o.stdout).to_string();
    assert!(
        out.contains("documents:      2") && out.contains("memory:"),
        "{out}"
    );
    // Many queries in one batch (one query_batch per chunk), and dedup's table scans.
    t.write(
        "q.txt",
        b"00000000000000fe\nff00000000000001\n0f0f0f0f0f0f0f0f\n",
    );
    let o = t.run_on(Path::new(&url), &["query", "--batch", "q.txt", "--k", "1"]);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    let out = String::from_utf8_lossy(&o.stdout).to_string();
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines.len(), 3, "{out}");
    assert!(lines[0].contains("\"id\":\"a\"") && lines[1].contains("\"id\":\"b\""));
    assert!(lines[2].contains("\"matches\":[]"), "{out}");
    t.write("c.jsonl", br#"{"id":"c","fp":"01000000000000ff"}"#);
    let o = t.run_on(Path::new(&url), &["import", "c.jsonl"]);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    let o = t.run_on(Path::new(&url), &["dedup", "--k", "1"]);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    assert_eq!(
        String::from_utf8_lossy(&o.stdout),
        "{\"cluster\":0,\"ids\":[\"a\",\"c\"]}\n"
    );
    // Export in both orders (hash buckets list ids and records in no order), resumed.
    let ids = |args: &[&str]| {
        let o = t.run_on(Path::new(&url), args);
        assert_eq!(code(&o), 0, "{args:?}: {}", stderr(&o));
        String::from_utf8_lossy(&o.stdout).into_owned()
    };
    assert_eq!(ids(&["ids", "--order", "id"]), "a\nb\nc\n");
    assert_eq!(ids(&["ids", "--after", "a"]), "b\nc\n");
    assert_eq!(ids(&["ids", "--order", "seq"]), "a\nb\nc\n");
    assert_eq!(ids(&["ids", "--from-seq", "1"]), "b\nc\n");
    let o = t.run_on(Path::new(&url), &["delete", "a"]);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    let o = t.run_on(Path::new(&url), &["get", "a"]);
    assert_ne!(code(&o), 0);
    // `bench --cluster --dir D` leaves D and what it held (it removed D once).
    std::fs::create_dir(t.path("bench")).unwrap();
    t.write("bench/keep", b"mine");
    let bench_url = cluster.url("bench");
    let args = crate::cli::small_bench(&["--cluster", &bench_url, "--dir", "bench"]);
    let o = t.run(&args);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    assert_eq!(std::fs::read(t.path("bench/keep")).unwrap(), b"mine");
}

#[test]
fn exact_duplicates_are_claimed_once_across_processes() {
    let Some(cluster) = Cluster::start() else {
        return;
    };
    let url = cluster.url("crawl");
    drop(open(&url, 3, 4, 10_000));
    // Two processes import the same 40 pages (under other ids) with --dedup, at once.
    let t = TestCommand::new();
    for side in ["a", "b"] {
        let lines: String = (0..40)
            .map(|i| format!("{{\"id\":\"{side}{i}\",\"text\":\"{}\"}}\n", page(i)))
            .collect();
        t.write(&format!("{side}.jsonl"), lines.as_bytes());
    }
    let spawn = |side: &str| {
        let file = format!("{side}.jsonl");
        t.command_on(Path::new(&url), &["import", "--dedup", "--k", "0", &file])
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap()
    };
    let (a, b) = (spawn("a"), spawn("b"));
    for child in [a, b] {
        let o = child.wait_with_output().unwrap();
        assert!(o.status.code().is_some_and(|c| c <= 1), "{}", stderr(&o));
    }
    // Across processes, a check made after another's insert returned sees it: a
    // fingerprint 1 bit from a stored page's is its near duplicate for a third client.
    let third = StoreBuilder::new(&url).open().unwrap();
    let stored = [third.get("a5").unwrap(), third.get("b5").unwrap()];
    let fp = stored.iter().flatten().next().expect("page 5 stored").fp;
    let out = third
        .check_and_insert(
            &Entry::new("c5", Fingerprint(fp ^ 1), DocMeta::default()),
            3,
        )
        .unwrap();
    assert!(
        matches!(out.duplicate_of(), Some("a5" | "b5")) && out.distance() == Some(1),
        "{out:?}"
    );
    let store = StoreBuilder::new(&url).read_only(true).open().unwrap();
    assert_eq!(store.len(), 40);
    for i in 0..40 {
        let (a, b) = (store.get(&format!("a{i}")), store.get(&format!("b{i}")));
        let stored = a.unwrap().is_some() as u32 + b.unwrap().is_some() as u32;
        assert_eq!(stored, 1, "page {i} stored {stored} times");
    }
    assert!(store.check().unwrap().is_ok());
}

/// A page of 40 made-up words, its own for each `i`.
fn page(i: u64) -> String {
    let mut r = rng(1000 + i);
    (0..40)
        .map(|_| {
            (0..6)
                .map(|_| char::from(b'a' + rand::Rng::random_range(&mut r, 0..26u8)))
                .collect::<String>()
        })
        .collect::<Vec<_>>()
        .join(" ")
}

#[test]
fn failover_keeps_every_acknowledged_write() {
    let Some(mut cluster) = Cluster::start() else {
        return;
    };
    let url = cluster.url("fail");
    let store = Arc::new(open(&url, 3, 4, 100_000));
    let acked = Arc::new(Mutex::new(Vec::<(String, u64)>::new()));
    let stop = Arc::new(AtomicBool::new(false));
    let writer = {
        let (store, acked, stop) = (store.clone(), acked.clone(), stop.clone());
        std::thread::spawn(move || {
            let mut r = rng(3);
            let mut n = 0;
            while !stop.load(Ordering::SeqCst) {
                let batch: Vec<(String, u64)> = (0..50)
                    .map(|i| (format!("w{n}-{i}"), rand::Rng::random(&mut r)))
                    .collect();
                n += 1;
                let entries = batch.iter().map(|(id, fp)| entry(id.clone(), *fp));
                match store.insert_batch(entries) {
                    Ok(_) => acked.lock().unwrap().extend(batch),
                    // Not acknowledged: a write may fail while the cluster fails over (or,
                    // with no replica left to acknowledge, after it).
                    Err(_) => std::thread::sleep(std::time::Duration::from_millis(50)),
                }
            }
        })
    };
    // Kill once a thousand writes are acknowledged (however slow the machine).
    let start = std::time::Instant::now();
    while acked.lock().unwrap().len() < 1000 {
        assert!(
            start.elapsed().as_secs() < 120,
            "no 1000 writes acknowledged in 2 min"
        );
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    let victim = cluster.masters()[0];
    cluster.kill(victim);
    cluster.wait_for_failover(victim);
    std::thread::sleep(std::time::Duration::from_millis(500));
    stop.store(true, Ordering::SeqCst);
    writer.join().unwrap();
    let acked = acked.lock().unwrap().clone();
    assert!(acked.len() >= 1000, "only {} acknowledged", acked.len());
    let mut after = StoreBuilder::new(&url).open().unwrap();
    let fps: Vec<Fingerprint> = acked.iter().map(|e| Fingerprint(e.1)).collect();
    let answers = after.query_batch(fps.iter().copied(), 0).unwrap();
    for ((id, _), found) in acked.iter().zip(&answers) {
        assert!(
            found.iter().any(|m| &m.doc.id == id),
            "acknowledged {id} lost"
        );
    }
    after.repair().unwrap();
    let report = after.check().unwrap();
    assert!(report.is_ok(), "{:?}", report.problems);
    eprintln!(
        "failover: {} acknowledged documents, all found; {} stored after repair",
        acked.len(),
        after.len()
    );
}

/// Sets the flag when dropped.
struct SetOnDrop<'a>(&'a AtomicBool);

impl Drop for SetOnDrop<'_> {
    fn drop(&mut self) {
        self.0.store(true, Ordering::SeqCst);
    }
}

#[test]
fn queries_stay_exact_while_slots_move() {
    let Some(cluster) = Cluster::start() else {
        return;
    };
    let url = cluster.url("moving");
    let store = open(&url, 3, 4, 10_000);
    let entries = corpus(5, 2000);
    insert_all(&store, &entries);
    let done = AtomicBool::new(false);
    let mut rounds = 0;
    std::thread::scope(|s| {
        s.spawn(|| {
            let _done = SetOnDrop(&done); // also when resharding panics
            let m = cluster.masters();
            cluster.reshard(m[0], m[1], 2000);
            cluster.reshard(m[1], m[2], 1000);
        });
        while !done.load(Ordering::SeqCst) {
            assert_exact(&store, &entries, 3, rounds);
            rounds += 1;
        }
    });
    assert_exact(&store, &entries, 3, 99);
    eprintln!("resharding: {rounds} rounds of exact queries while 3000 slots moved");
}

/// A master that lost its data takes the store's settings key with it when it holds that
/// key (here: deleted as such a loss leaves it). The rest of the store must not be taken
/// for no store: creating one would number documents from 0 over the surviving ones.
#[test]
fn a_store_whose_settings_are_lost_is_not_created_again() {
    let Some(cluster) = Cluster::start() else {
        return;
    };
    let url = cluster.url("lost");
    let store = open(&url, 3, 4, 1000);
    let entries = corpus(5, 500);
    insert_all(&store, &entries);
    drop(store);
    let port = cluster.masters()[0];
    assert_eq!(cluster.cli(port, &["-c", "DEL", "lost:m"]), "1");
    for builder in [
        StoreBuilder::new(&url),
        StoreBuilder::new(&url).read_only(true),
    ] {
        let err = builder.open().unwrap_err();
        assert!(matches!(err, Error::NotAStore { .. }), "{err:?}");
        assert!(err.to_string().contains("keys of it remain"), "{err}");
    }
    let t = TestCommand::new();
    for args in [&["import", "-"][..], &["init"], &["stats"]] {
        let o = t.run_on(Path::new(&url), args);
        assert_eq!(code(&o), 2, "{args:?}: {}", stderr(&o));
        assert!(stderr(&o).contains("lost its data"), "{}", stderr(&o));
    }
    assert_eq!(cluster.cli(port, &["-c", "EXISTS", "lost:d:0"]), "1");
    assert_eq!(cluster.cli(port, &["-c", "EXISTS", "lost:m"]), "0");
    // A name with no keys is created as before.
    assert!(StoreBuilder::new(cluster.url("found")).open().is_ok());
}

/// A writer killed between its phases (the `ids` entry is written last) leaves records
/// and table entries no id points at: of a replacement of a stored id, and of a new one.
/// Queries (tables and exhaustive), checks and dedup leave them out; `check` reports
/// them and `repair` removes them.
#[test]
fn records_a_killed_writer_left_uncommitted_are_left_out() {
    let Some(cluster) = Cluster::start() else {
        return;
    };
    let mut store = open(&cluster.url("half"), 3, 4, 1000);
    let entries = corpus(9, 300);
    insert_all(&store, &entries);
    let mut half = ChangeSet::new();
    let layout = store.layout().clone();
    for (seq, id, fp) in [
        (1 << 30, "d0", entries[0].1 ^ 1),
        (1 << 31, "ghost", entries[1].1 ^ 2),
    ] {
        let doc = StoredDoc {
            id: id.into(),
            fp,
            title: None,
            url: None,
            length: 0,
            time: 0,
            seen: 0,
            content_hash: None,
            sketch: None,
        };
        half.push(Change::PutDoc(seq, Box::new(doc)));
        for t in 0..layout.tables().len() {
            half.push(Change::PutTable(t, layout.permute(t, fp), seq));
        }
    }
    // The page "ghost" was being stored with its content hash claimed.
    let ghost = "a page whose writer was killed after its record, before its id was written";
    let hash = store.fingerprinter().content_hash(None, ghost).unwrap();
    half.push(Change::PutExact(hash, 1 << 31));
    store.backend().write(&half, Durability::Process).unwrap();
    assert_exact(&store, &entries, 3, 13);
    for q in [entries[0].1, entries[1].1] {
        let got = store.query(Fingerprint(q), Rule::Exhaustive(3)).unwrap();
        assert_eq!(shape(&got), brute_force(&entries, q, 3), "{q:016x}");
    }
    assert_eq!(store.dedup(3).unwrap(), local_dedup(&entries));
    // A replacement of d5 and a delete of d6 killed after their first phase (the old
    // record removed): the ids name missing records; d5 is stored again, d6 deleted.
    let seqs: Vec<u64> = {
        let snap = store.backend().snapshot(Consistency::PointInTime);
        let ids = snap.ids(&["d5", "d6"]).unwrap();
        ids.into_iter().map(|v| v.unwrap().seq).collect()
    };
    let mut cut = ChangeSet::new();
    seqs.iter().for_each(|&s| cut.push(Change::DeleteDoc(s)));
    store.backend().write(&cut, Durability::Process).unwrap();
    let out = store
        .insert_batch([entry("d5".into(), entries[5].1)])
        .unwrap();
    assert_eq!((out.inserted, out.replaced), (0, 1));
    assert!(store.delete("d6").unwrap());
    let mut entries = entries;
    entries.remove(6);
    // Its claim names a record no id points at: stale, taken over, the page stored (not
    // "an exact duplicate of ghost").
    let out = store
        .check_and_insert(&simstore::Document::new("ghost", ghost), 0)
        .unwrap();
    assert!(out.is_new(), "{out:?}");
    entries.push(("ghost".into(), store.get("ghost").unwrap().unwrap().fp));
    assert!(!store.check().unwrap().is_ok());
    store.repair().unwrap();
    assert!(store.check().unwrap().is_ok());
    assert_exact(&store, &entries, 3, 14);
}

/// The dedup of `entries` by a store in memory.
fn local_dedup(entries: &[(String, u64)]) -> simstore::DedupReport {
    let store = StoreBuilder::in_memory().k_max(3).blocks(4).open().unwrap();
    insert_all(&store, entries);
    store.dedup(3).unwrap()
}

/// A URL naming a Redis server without cluster mode is refused saying so (the cluster
/// client's own error was "ClusterConnectionNotFound").
#[test]
fn a_redis_server_without_cluster_mode_is_named() {
    let Some(_cluster) = Cluster::start() else {
        return;
    };
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let dir = tempfile::tempdir().unwrap();
    let mut server = std::process::Command::new("redis-server")
        .args([
            "--port",
            &port.to_string(),
            "--bind",
            "127.0.0.1",
            "--save",
            "",
        ])
        .args(["--appendonly", "no", "--daemonize", "no"])
        .current_dir(dir.path())
        .stdout(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let url = format!("redis://127.0.0.1:{port}/plain");
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    let err = loop {
        let err = StoreBuilder::new(&url).open().unwrap_err();
        if err.to_string().contains("cluster mode") || std::time::Instant::now() > deadline {
            break err;
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    };
    let _ = server.kill();
    let _ = server.wait();
    assert!(matches!(err, Error::Unsupported(_)), "{err:?}");
    assert!(err.to_string().contains("cluster_enabled:0"), "{err}");
}

#[test]
fn another_spec_or_format_on_the_cluster_is_refused() {
    let Some(cluster) = Cluster::start() else {
        return;
    };
    let url = cluster.url("old");
    let store = open(&url, 3, 4, 1000);
    let bytes = store
        .backend()
        .snapshot(Consistency::PointInTime)
        .meta(MetaKey::Manifest)
        .unwrap()
        .unwrap();
    let put = |b: Vec<u8>| {
        let mut c = ChangeSet::new();
        c.push(Change::PutMeta(MetaKey::Manifest, b));
        store.backend().write(&c, Durability::Process).unwrap();
    };
    let mut m: Manifest = codec::decode_manifest(&bytes).unwrap();
    m.spec = FingerprintSpec {
        version: 99,
        ..FingerprintSpec::current()
    };
    put(codec::encode_manifest(&m));
    let err = StoreBuilder::new(&url).open().unwrap_err();
    assert!(matches!(err, Error::SpecMismatch { .. }), "{err:?}");
    assert!(err.to_string().contains("re-import"), "{err}");
    let mut other = bytes.clone();
    other[8..12].copy_from_slice(&9u32.to_be_bytes());
    put(other);
    let err = StoreBuilder::new(&url).open().unwrap_err();
    assert!(
        matches!(err, Error::FormatVersion { found: 9, .. }),
        "{err:?}"
    );
    // The CLI says the same, naming the URL.
    let t = TestCommand::new();
    let o = t.run_on(Path::new(&url), &["stats"]);
    assert_eq!(code(&o), 2);
    assert!(stderr(&o).contains("upgrade simstore"), "{}", stderr(&o));
    // Format 5 changed only RocksDB's tables: a cluster store of format 4 still opens.
    // (Its manifest has no band tables: format 8 added them.)
    let mut v4 = bytes.clone();
    v4.pop();
    v4[8..12].copy_from_slice(&4u32.to_be_bytes());
    put(v4);
    assert!(StoreBuilder::new(&url).open().is_ok());
}

#[test]
fn copy_moves_a_store_to_the_cluster_and_back() {
    let Some(cluster) = Cluster::start() else {
        return;
    };
    let t = TestCommand::new();
    let lines: String = (0..300)
        .map(|i| {
            format!(
                "{{\"id\":\"p{i}\",\"title\":\"t{i}\",\"text\":\"{}\"}}\n",
                page(i % 250)
            )
        })
        .collect();
    t.write("pages.jsonl", lines.as_bytes());
    let o = t.run(&["import", "pages.jsonl"]);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    let url = cluster.url("copied");
    // Twice: a copy run again (as after an interruption) stores each document once.
    for _ in 0..2 {
        let o = t.run(&["copy", "--to", &url]);
        assert_eq!(code(&o), 0, "{}", stderr(&o));
    }
    let back = t.path("back.db");
    let o = t.run_on(Path::new(&url), &["copy", "--to", back.to_str().unwrap()]);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    let local = Store::open(t.db()).unwrap();
    let remote = StoreBuilder::new(&url).read_only(true).open().unwrap();
    let back = Store::open(&back).unwrap();
    assert_eq!((remote.len(), back.len()), (300, 300));
    assert!(remote.check().unwrap().is_ok() && back.check().unwrap().is_ok());
    for i in 0..300 {
        let id = format!("p{i}");
        let want = local.get(&id).unwrap().unwrap();
        for store in [&remote, &back] {
            let got = store.get(&id).unwrap().unwrap();
            assert_eq!(
                (got.fp, &got.title, got.content_hash, got.sketch),
                (want.fp, &want.title, want.content_hash, want.sketch)
            );
        }
        // The copies find the page by its text (tables rebuilt in their own layout).
        let mut doc = simstore::Document::new(format!("again{i}"), page(i % 250));
        doc.title = Some(format!("t{i}"));
        for store in [&remote, &back] {
            let dup = store.query(&doc, 0).unwrap();
            assert!(dup.iter().any(|m| m.doc.id == id), "{id}");
        }
    }
}

#[test]
fn serve_fronts_a_cluster() {
    let Some(cluster) = Cluster::start() else {
        return;
    };
    let url = cluster.url("served");
    let t = TestCommand::new();
    let s = t.serve_on(Path::new(&url), &[]);
    let h = crate::util::http();
    let check = |id: &str, text: String| {
        let doc = serde_json::json!({"id": id, "text": text});
        crate::util::answer(h.post(s.at("/check_and_insert")).send_json(doc))
    };
    let (st, v) = check("a", page(1));
    assert_eq!((st, v["status"].as_str()), (200, Some("new")), "{v}");
    let (st, v) = check("a-copy", page(1));
    assert_eq!(
        (st, v["status"].as_str()),
        (200, Some("exact_duplicate")),
        "{v}"
    );
    assert_eq!(v["of"], "a");
    let (st, v) = crate::util::answer(h.get(s.at("/docs/a")).call());
    assert_eq!((st, v["id"].as_str()), (200, Some("a")), "{v}");
    // Another process (the library here) sees what the server stored.
    let store = StoreBuilder::new(&url).read_only(true).open().unwrap();
    assert_eq!(store.len(), 1);
}
