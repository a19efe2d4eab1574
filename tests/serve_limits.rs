//! What bounds the memory of `simstore serve` and of a store: the stored title and url of a
//! document (every surface refuses a longer one), the bytes of one answer
//! (`--max-answer-bytes`), a body declared over `--max-body-bytes` (413 at once), and the
//! memory a server keeps after large bodies.

use serde_json::{Value, json};
use simstore::{DocMeta, Document, Entry, Error, MAX_TITLE_BYTES, MAX_URL_BYTES};

use crate::util::{BACKENDS, TestCommand, answer, code, http, new_store, stderr};

const TEXT: &str = "The rivers of the north run cold and clear in spring, and the mountains above them keep their snow until June.";

fn error(v: &Value) -> String {
    v["error"].as_str().unwrap_or("").to_owned()
}

#[test]
fn a_title_or_url_over_the_limit_is_refused_over_http() {
    let t = TestCommand::new();
    let s = t.serve(&[]);
    let h = http();
    let title_over = "t".repeat(MAX_TITLE_BYTES + 1);
    let url_over = format!("https://e.com/{}", "u".repeat(MAX_URL_BYTES));
    for path in ["/insert", "/check_and_insert"] {
        let doc = json!({"id": "big-title", "title": title_over, "text": TEXT});
        let (st, v) = answer(h.post(s.at(path)).send_json(&doc));
        assert_eq!(st, 422, "{path}: {v}");
        let want = format!(
            "document \"big-title\": its title is {} bytes; a stored title is at most {MAX_TITLE_BYTES} bytes",
            MAX_TITLE_BYTES + 1
        );
        assert!(error(&v).starts_with(&want), "{path}: {}", error(&v));
        let doc = json!({"id": "big-url", "url": url_over, "text": TEXT});
        let (st, v) = answer(h.post(s.at(path)).send_json(&doc));
        assert_eq!(st, 422, "{path}");
        let want = format!(
            "document \"big-url\": its url is {} bytes; a stored url is at most {MAX_URL_BYTES} bytes",
            url_over.len()
        );
        assert!(error(&v).starts_with(&want), "{path}: {}", error(&v));
    }
    // At the limits, stored; a long text (not stored, only fingerprinted) has no limit.
    let at = json!({"id": "at", "title": "t".repeat(MAX_TITLE_BYTES),
                    "url": "u".repeat(MAX_URL_BYTES), "text": TEXT});
    let (st, v) = answer(h.post(s.at("/insert")).send_json(&at));
    assert_eq!((st, v["status"].as_str()), (200, Some("inserted")), "{v}");
    let long = json!({"id": "long", "title": "a title", "text": TEXT.repeat(20_000)});
    let (st, v) = answer(h.post(s.at("/insert")).send_json(&long));
    assert_eq!((st, v["status"].as_str()), (200, Some("inserted")), "{v}");
    let (_, v) = answer(h.get(s.at("/stats")).call());
    assert_eq!(v["docs"], 2, "nothing refused was stored");
}

#[test]
fn import_skips_a_record_whose_title_or_url_is_too_long() {
    let t = TestCommand::new();
    let lines = [
        json!({"id": "a", "text": TEXT}),
        json!({"id": "b", "title": "t".repeat(MAX_TITLE_BYTES + 1), "text": TEXT}),
        json!({"id": "c", "url": "u".repeat(MAX_URL_BYTES + 1), "fp": "0f3a5c7e9b1d2f40"}),
        json!({"id": "d", "title": "fine", "text": TEXT.repeat(1000)}),
    ];
    let text: String = lines.iter().map(|l| format!("{l}\n")).collect();
    let file = t.write("in.jsonl", text.as_bytes());
    for extra in [&[][..], &["--bulk"][..]] {
        let db = t.path(&format!("store{}.db", extra.len()));
        let mut args = vec!["import"];
        args.extend_from_slice(extra);
        args.push("in.jsonl");
        let o = t.run_on(&db, &args);
        let err = stderr(&o);
        assert_eq!(code(&o), 1, "{extra:?}: {err}");
        let title = format!(
            "error: {}:2: document \"b\": its title is {} bytes; a stored title is at most {MAX_TITLE_BYTES} bytes: shorten it (the text has no such limit: it is fingerprinted, not stored); record skipped",
            file.file_name().unwrap().to_str().unwrap(),
            MAX_TITLE_BYTES + 1
        );
        assert!(err.contains(&title), "{extra:?}: {err}");
        let url = format!(
            "in.jsonl:3: document \"c\": its url is {} bytes; a stored url is at most {MAX_URL_BYTES} bytes",
            MAX_URL_BYTES + 1
        );
        assert!(err.contains(&url), "{extra:?}: {err}");
        assert!(
            err.contains("stored 2 (2 new, 0 replaced), failed 2"),
            "{err}"
        );
    }
}

#[test]
fn the_library_refuses_a_title_or_url_too_long_on_every_write() {
    let too_long = |r: Result<(), Error>, field: &str| match r {
        Err(Error::FieldTooLong { field: f, max, .. }) => {
            assert_eq!(f, field);
            assert!(max == MAX_TITLE_BYTES || max == MAX_URL_BYTES);
        }
        other => panic!("expected FieldTooLong for the {field}, got {other:?}"),
    };
    for backend in BACKENDS {
        let dir = tempfile::tempdir().unwrap();
        let store = new_store(backend, dir.path(), 3, 5);
        let title = "t".repeat(MAX_TITLE_BYTES + 1);
        let doc = Document::new("d", TEXT).with_title(title.clone());
        too_long(store.insert(&doc).map(drop), "title");
        too_long(store.check_and_insert(&doc, 3).map(drop), "title");
        let meta = DocMeta {
            url: Some("u".repeat(MAX_URL_BYTES + 1)),
            ..DocMeta::default()
        };
        let fp = simstore::Fingerprint(42);
        too_long(
            store.insert_fingerprint("e", fp, meta.clone()).map(drop),
            "url",
        );
        let entry = Entry {
            id: "e".into(),
            fp,
            meta,
        };
        too_long(store.insert_batch([entry.clone()]).map(drop), "url");
        if backend == crate::util::Backend::Rocks {
            let mut loader = store.bulk_loader().unwrap();
            too_long(loader.push(entry), "url");
            drop(loader);
        }
        assert_eq!(store.len(), 0, "{backend:?}: nothing refused is stored");
        let e = store.insert(&doc).unwrap_err().to_string();
        assert!(
            e.contains("document \"d\": its title is 65537 bytes"),
            "{e}"
        );
    }
}

/// Issue: a document with a 10 MB title queried 40 times in one batch made a 210 MB answer.
/// Titles are now bounded, and so is an answer's size.
#[test]
fn an_answer_over_max_answer_bytes_is_refused_naming_the_cap() {
    let t = TestCommand::new();
    let fp = "0f3a5c7e9b1d2f40";
    let title = "t".repeat(60 << 10);
    let lines: String = (0..40)
        .map(|i| {
            format!(
                "{}\n",
                json!({"id": format!("copy-{i}"), "fp": fp, "title": title})
            )
        })
        .collect();
    t.write("copies.jsonl", lines.as_bytes());
    let o = t.run(&["import", "copies.jsonl"]);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    let s = t.serve(&["--max-answer-bytes", "1000000"]);
    let h = http();
    let (st, v) = answer(h.post(s.at("/query")).send_json(json!({"fp": fp})));
    assert_eq!(
        st,
        422,
        "{}",
        &v.to_string()[..300.min(v.to_string().len())]
    );
    let e = error(&v);
    assert!(
        e.starts_with("the answer is too large: one answer is at most 1000000 bytes (simstore serve --max-answer-bytes)"),
        "{e}"
    );
    assert!(
        e.contains("\"limit\"") && e.contains("split the batch"),
        "{e}"
    );
    // Fewer matches fit.
    let (st, v) = answer(
        h.post(s.at("/query"))
            .send_json(json!({"fp": fp, "limit": 10})),
    );
    assert_eq!((st, v["matches"].as_array().map(Vec::len)), (200, Some(10)));
    // A batch is counted whole: each query fits, five of them do not.
    let batch: Vec<Value> = (0..5).map(|_| json!({"fp": fp, "limit": 5})).collect();
    let (st, v) = answer(h.post(s.at("/query/batch")).send_json(&batch));
    assert_eq!(st, 422);
    assert!(
        error(&v).starts_with("query 3: the answer is too large"),
        "{v}"
    );
    drop(s);
    // The default cap (32 MiB) refuses the issue's batch: 40 queries of 40 matches of 60 KiB.
    let s = t.serve(&[]);
    let batch: Vec<Value> = (0..40).map(|_| json!({"fp": fp})).collect();
    let (st, v) = answer(h.post(s.at("/query/batch")).send_json(&batch));
    assert_eq!(st, 422);
    assert!(error(&v).contains("at most 33554432 bytes"), "{v}");
    // Three such queries (7 MiB) are answered.
    let batch: Vec<Value> = (0..3).map(|_| json!({"fp": fp})).collect();
    let (st, v) = answer(h.post(s.at("/query/batch")).send_json(&batch));
    assert_eq!(st, 200);
    assert_eq!(v["results"][2]["matches"].as_array().unwrap().len(), 40);
}

/// Writes `request` to a new connection to `s` and reads the answer until the server
/// closes the connection, or for at most a minute (a liveness bound, not a timing
/// assertion): what arrived.
pub fn raw(s: &crate::util::Server, request: &[u8]) -> String {
    use std::io::{Read, Write};
    let mut c = std::net::TcpStream::connect(s.addr()).unwrap();
    c.set_read_timeout(Some(std::time::Duration::from_secs(60)))
        .unwrap();
    c.write_all(request).unwrap();
    let mut got = Vec::new();
    let mut buf = [0u8; 4096];
    while let Ok(n) = c.read(&mut buf) {
        if n == 0 {
            break;
        }
        got.extend_from_slice(&buf[..n]);
    }
    String::from_utf8_lossy(&got).into_owned()
}

/// Issue: a Content-Length over --max-body-bytes waited for the body (--body-timeout) and
/// got 408; it is refused from the header.
#[test]
fn a_declared_length_over_the_limit_gets_413_without_waiting_for_the_body() {
    let t = TestCommand::new();
    let s = t.serve(&["--max-body-bytes", "1000", "--body-timeout", "5"]);
    // Headers only: the body never comes.
    let head = "POST /insert HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n\
                Content-Length: 1000000000\r\n\r\n";
    let got = raw(&s, head.as_bytes());
    assert!(got.starts_with("HTTP/1.1 413"), "{got}");
    assert!(
        got.contains("the request body is 1000000000 bytes (Content-Length)"),
        "{got}"
    );
    assert!(got.contains("--max-body-bytes"), "{got}");
    // At the limit, the body is read and answered.
    let body = format!(r#"{{"id": "a", "text": "{}"}}"#, "w ".repeat(480));
    let request = format!(
        "POST /insert HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n\
         Content-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    );
    assert!(body.len() <= 1000);
    let got = raw(&s, request.as_bytes());
    assert!(got.starts_with("HTTP/1.1 200"), "{got}");
}

/// The server's resident memory, in MiB.
fn rss_mib(s: &crate::util::Server) -> u64 {
    s.rss_kib().expect("/proc/PID/status") >> 10
}

/// Issue: 48 connections each sending a 16 MiB body left the server holding ~1 GB after
/// they closed. Bodies are now buffered only up to a budget at once, and the allocator
/// gives freed memory back.
#[test]
fn memory_comes_back_after_many_large_bodies() {
    use std::io::{Read, Write};
    let t = TestCommand::new();
    let s = t.serve(&[]);
    let h = http();
    let (st, _) = answer(
        h.post(s.at("/insert"))
            .send_json(json!({"id": "a", "text": TEXT})),
    );
    assert_eq!(st, 200);
    let before = rss_mib(&s);
    let body = vec![b'x'; 16 << 20];
    let addr = s.addr();
    let peak = std::sync::atomic::AtomicU64::new(0);
    std::thread::scope(|scope| {
        for _ in 0..48 {
            scope.spawn(|| {
                let mut c = std::net::TcpStream::connect(addr).unwrap();
                let head = format!(
                    "POST /insert HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n\
                     Content-Length: {}\r\nConnection: close\r\n\r\n",
                    body.len()
                );
                c.write_all(head.as_bytes()).unwrap();
                let _ = c.write_all(&body);
                let mut got = String::new();
                let _ = c.read_to_string(&mut got);
                assert!(
                    got.starts_with("HTTP/1.1 400"),
                    "{}",
                    &got[..got.len().min(300)]
                );
            });
        }
        scope.spawn(|| {
            for _ in 0..200 {
                if let Some(kib) = s.rss_kib() {
                    peak.fetch_max(kib >> 10, std::sync::atomic::Ordering::Relaxed);
                }
                std::thread::sleep(std::time::Duration::from_millis(20));
            }
        });
    });
    // The server still answers, and a request after the large ones lets every freed page go.
    let (st, _) = answer(h.get(s.at("/health")).call());
    assert_eq!(st, 200);
    let after = rss_mib(&s);
    let peak = peak.into_inner();
    eprintln!("RSS: {before} MiB before, peak {peak} MiB, {after} MiB after 48 bodies of 16 MiB");
    assert!(
        after < before + 200,
        "RSS {after} MiB after 48 bodies of 16 MiB, {before} MiB before (peak {peak} MiB)"
    );
}
