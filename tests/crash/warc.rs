//! `kill -9` of `simstore import` reading a gzip'd WARC file, into a standard-mode and a
//! high-mode store: after each kill the store is sound (`check`), holds only whole records
//! with the fingerprints a complete import gives them, and a second import completes it.

use std::collections::BTreeMap;
use std::io::Write;
use std::path::Path;
use std::process::{Command, Stdio};
use std::thread;
use std::time::Instant;

use rand::Rng;
use simstore::{Quality, Store};

use crate::util::{gen_text, rng};

const PAGES: usize = 6_000;
const ROUNDS: u64 = 4;

/// One WARC response record of an HTML page (with its trailing CRLF CRLF).
fn record(uri: &str, html: &str) -> Vec<u8> {
    let block = format!("HTTP/1.1 200 OK\r\nContent-Type: text/html; charset=utf-8\r\n\r\n{html}");
    format!(
        "WARC/1.0\r\nWARC-Type: response\r\nWARC-Target-URI: {uri}\r\nContent-Length: {}\r\n\r\n{block}\r\n\r\n",
        block.len()
    )
    .into_bytes()
}

/// A gzip'd WARC file of `PAGES` pages, one gzip member per record (as crawlers write them).
fn write_warc(path: &Path) {
    let mut r = rng(0x77a6c);
    let mut recent = Vec::new();
    let mut out = std::fs::File::create(path).unwrap();
    for i in 0..PAGES {
        let html = format!(
            "<html><head><title>page {i}</title></head><body><nav>home | news</nav><p>{}</p></body></html>",
            gen_text(&mut r, &mut recent)
        );
        let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
        gz.write_all(&record(&format!("http://example.com/p{i}"), &html))
            .unwrap();
        out.write_all(&gz.finish().unwrap()).unwrap();
    }
}

fn import(db: &Path, warc: &Path) -> std::process::Child {
    Command::new(env!("CARGO_BIN_EXE_simstore"))
        .arg("--db")
        .arg(db)
        .args(["import", "--batch-size", "50"])
        .arg(warc)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap()
}

/// id → fingerprint of every document.
fn contents(store: &Store) -> BTreeMap<String, u64> {
    let mut all = BTreeMap::new();
    store
        .for_each_doc(|d| {
            all.insert(d.id, d.fp);
            Ok(())
        })
        .unwrap();
    all
}

#[test]
fn kill_9_during_a_warc_import_keeps_whole_records() {
    let dir = tempfile::tempdir().unwrap();
    let warc = dir.path().join("pages.warc.gz");
    write_warc(&warc);
    let mut r = rng(0x6b1);
    for round in 0..ROUNDS {
        let quality = if round % 2 == 0 {
            Quality::Standard
        } else {
            Quality::High
        };
        let reference_db = dir.path().join(format!("reference-{round}"));
        drop(
            Store::builder(&reference_db)
                .quality(quality)
                .open()
                .unwrap(),
        );
        let start = Instant::now();
        assert!(import(&reference_db, &warc).wait().unwrap().success());
        let full = start.elapsed();
        let reference = contents(&Store::open(&reference_db).unwrap());
        assert_eq!(reference.len(), PAGES);

        let db = dir.path().join(format!("killed-{round}"));
        drop(Store::builder(&db).quality(quality).open().unwrap());
        let mut child = import(&db, &warc);
        thread::sleep(full.mul_f64(r.random_range(0.05..0.9)));
        child.kill().unwrap();
        child.wait().unwrap();

        let store = Store::open(&db).unwrap();
        let report = store.check().unwrap();
        assert!(report.is_ok(), "round {round}: {:?}", report.problems);
        let stored = contents(&store);
        for (id, fp) in &stored {
            assert_eq!(reference.get(id), Some(fp), "round {round}: {id}");
        }
        drop(store);
        assert!(import(&db, &warc).wait().unwrap().success());
        let store = Store::open(&db).unwrap();
        assert_eq!(contents(&store), reference, "round {round}");
        assert!(store.check().unwrap().is_ok());
        eprintln!(
            "warc import ({quality:?}) killed after {} of {} records; the second import \
             completed it",
            stored.len(),
            PAGES
        );
    }
}
