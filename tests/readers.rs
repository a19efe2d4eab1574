//! Readers beside a writer: `simstore query` (another process) answers from a store whose
//! writer holds it open; reading commands never take the writer's lock, so they never
//! block a writer; a secondary instance follows the writer's new writes after
//! `try_catch_up`.

use simstore::Entry;
use simstore::{CheckOutcome, DocMeta, Error, Fingerprint, RocksOptions, Store, StoreBuilder};

use crate::util::{TestCommand, code, stderr};

fn meta() -> DocMeta {
    DocMeta::default()
}

#[test]
fn cli_query_reads_a_store_held_by_a_writer() {
    let t = TestCommand::new();
    let writer = Store::open(t.db()).unwrap();
    writer
        .insert_fingerprint("a", Fingerprint(0x00ff), meta())
        .unwrap();
    let query = |fp: &str| t.run(&["query", "--fp", fp, "--k", "2", "--json"]);
    let o = query("00000000000000fe");
    let err = stderr(&o);
    assert_eq!(code(&o), 0, "{err}");
    assert!(
        err.is_empty(),
        "a reader opens read-only, with nothing to say: {err}"
    );
    let out = String::from_utf8(o.stdout.clone()).unwrap();
    assert!(
        out.contains("\"id\":\"a\"") && out.contains("\"distance\":1"),
        "{out}"
    );
    // A write made while the writer stays open is seen by the next reader process.
    writer
        .insert_fingerprint("b", Fingerprint(0xff00_0000_0000_0000), meta())
        .unwrap();
    let o = query("fe00000000000000");
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    assert!(String::from_utf8_lossy(&o.stdout).contains("\"id\":\"b\""));
    // dedup reads beside the writer too: a, b are 16 bits apart, c is near a.
    writer
        .insert_fingerprint("c", Fingerprint(0x01ff), meta())
        .unwrap();
    let o = t.run(&["dedup", "--k", "1"]);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    assert_eq!(
        String::from_utf8_lossy(&o.stdout),
        "{\"cluster\":0,\"ids\":[\"a\",\"c\"]}\n"
    );
    // Writes are refused while the writer holds the lock (one writer process at a time).
    t.write("in.jsonl", br#"{"id":"c","fp":"0000000000000001"}"#);
    let o = t.run(&["import", "in.jsonl"]);
    assert_eq!(code(&o), 2);
    assert!(
        stderr(&o).contains("locked by another writer"),
        "{}",
        stderr(&o)
    );
    drop(writer);
    assert_eq!(code(&t.run(&["import", "in.jsonl"])), 0);
}

/// Regression: `simstore query` (and `get`, `stats`, `check`, `dedup`) opened the store for
/// writing when no writer held it, so a long `query --batch -` kept the crawler's `import`
/// out ("locked by another writer"). Readers open read-only: the import goes through.
#[test]
fn a_long_reader_does_not_block_the_writer() {
    use std::io::Write;
    let t = TestCommand::new();
    t.write("one.jsonl", br#"{"id":"a","fp":"00000000000000ff"}"#);
    assert_eq!(code(&t.run(&["import", "one.jsonl"])), 0);
    let mut reader = t
        .command(&["query", "--batch", "-", "--json"])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = reader.stdin.take().unwrap();
    // Answers prove the reader has the store open (it answers a chunk of 1,024 lines at
    // a time, then waits for more input with the store still open).
    for _ in 0..1024 {
        writeln!(stdin, "00000000000000fe").unwrap();
    }
    stdin.flush().unwrap();
    let stdout = reader.stdout.take().unwrap();
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let mut first = String::new();
        let _ = std::io::BufRead::read_line(&mut std::io::BufReader::new(stdout), &mut first);
        let _ = tx.send(first);
    });
    let first = rx
        .recv_timeout(std::time::Duration::from_secs(120))
        .unwrap_or_else(|_| {
            let _ = reader.kill();
            panic!("the reader answered nothing in 120 s")
        });
    assert!(first.contains("\"id\":\"a\""), "{first}");
    // The reader still holds the store open (its stdin is open): a writer gets in.
    t.write("two.jsonl", br#"{"id":"b","fp":"ff00000000000000"}"#);
    let o = t.run(&["import", "two.jsonl"]);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    for args in [
        &["get", "a"][..],
        &["stats"],
        &["check"],
        &["dedup", "--k", "1"],
    ] {
        let o = t.run(args);
        // 0, or 1 for a dedup that finds no pair: not 2 (an error, such as a lock).
        assert_ne!(code(&o), 2, "{args:?}: {}", stderr(&o));
    }
    drop(stdin);
    assert!(reader.wait().unwrap().success());
}

#[test]
fn secondary_instance_follows_the_writer() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("s");
    let writer = StoreBuilder::new(&path).k_max(3).blocks(4).open().unwrap();
    writer
        .insert_fingerprint("a", Fingerprint(1), meta())
        .unwrap();
    let reader = StoreBuilder::new(&path)
        .rocksdb(RocksOptions::new().secondary(dir.path().join("reader")))
        .open()
        .unwrap();
    assert_eq!(reader.len(), 1);
    assert_eq!(reader.query(Fingerprint(0), 1).unwrap().len(), 1);
    // New writes (in the writer's WAL, and flushed ones) appear after catching up.
    for i in 0..50u64 {
        writer
            .insert_fingerprint(&format!("n{i}"), Fingerprint(i << 20 | 3), meta())
            .unwrap();
    }
    assert!(
        reader.get("n7").unwrap().is_none(),
        "not seen before catching up"
    );
    reader.try_catch_up().unwrap();
    assert_eq!(reader.len(), 51);
    assert_eq!(
        reader.get("n7").unwrap().unwrap().fingerprint(),
        Fingerprint(7 << 20 | 3)
    );
    let near: Vec<String> = reader
        .query(Fingerprint(7 << 20 | 1), 1)
        .unwrap()
        .into_iter()
        .map(|m| m.doc.id)
        .collect();
    assert_eq!(near, ["n7"]);
    writer.flush().unwrap();
    assert!(writer.delete("n7").unwrap());
    writer
        .insert_fingerprint("late", Fingerprint(u64::MAX), meta())
        .unwrap();
    reader.try_catch_up().unwrap();
    assert!(reader.get("n7").unwrap().is_none());
    assert!(reader.get("late").unwrap().is_some());
    assert_eq!(reader.len(), 51);
    assert!(reader.check().unwrap().is_ok());
    // A secondary never writes; a primary cannot catch up.
    assert!(matches!(
        reader.check_and_insert(&Entry::new("x", Fingerprint(5), meta()), 3),
        Err(Error::ReadOnly)
    ));
    assert!(matches!(writer.try_catch_up(), Err(Error::ReadOnly)));
    let out = writer
        .check_and_insert(&Entry::new("y", Fingerprint(u64::MAX ^ 1), meta()), 3)
        .unwrap();
    assert!(
        matches!(&out, CheckOutcome::NearDuplicate { of, distance: 1, .. } if of == "late"),
        "{out:?}"
    );
    // The secondary directory must not be the store's.
    assert!(
        StoreBuilder::new(&path)
            .rocksdb(RocksOptions::new().secondary(&path))
            .open()
            .is_err()
    );
}

/// A reader opening while the writer compacts can read a MANIFEST whose table files the
/// writer deletes a moment later; the open is retried, never reported as corruption.
/// (Seen in CI: "Corruption: IO error: No such file or directory ... 000012.sst".)
#[test]
fn readers_opening_during_compactions_never_see_corruption() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("store.db");
    let writer = Store::open(&path).unwrap();
    writer
        .insert_fingerprint("seed", Fingerprint(1), meta())
        .unwrap();
    writer.flush().unwrap();
    let stop = std::sync::atomic::AtomicBool::new(false);
    std::thread::scope(|s| {
        s.spawn(|| {
            let mut n = 0u64;
            while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                let batch = (0..200).map(|i| {
                    n += 1;
                    let fp = Fingerprint((n * 0x9E37_79B9_7F4A_7C15) ^ i);
                    simstore::Entry {
                        id: format!("d{n}"),
                        fp,
                        meta: meta(),
                    }
                });
                writer.insert_batch(batch.collect::<Vec<_>>()).unwrap();
                writer.flush().unwrap(); // L0 files pile up, compactions delete them
            }
        });
        for i in 0..100 {
            let sec = tempfile::tempdir().unwrap();
            let reader = match i % 2 {
                0 => StoreBuilder::new(&path).read_only(true).open(),
                _ => StoreBuilder::new(&path)
                    .rocksdb(RocksOptions::new().secondary(sec.path()))
                    .open(),
            };
            if let Err(e) = reader {
                stop.store(true, std::sync::atomic::Ordering::Relaxed);
                panic!("open {i} beside a compacting writer failed: {e}");
            }
        }
        stop.store(true, std::sync::atomic::Ordering::Relaxed);
    });
}
