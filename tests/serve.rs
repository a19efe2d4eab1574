//! `simstore serve`: the real binary on a temporary store, driven over loopback HTTP.

use std::collections::BTreeSet;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use serde_json::{Value, json};

use crate::util::{TestCommand, answer, http};

const TEXT_A: &str = "今天北京的天气很好，我们去公园散步，看到很多人在跑步和放风筝。The rivers of the north run cold and clear in spring.";
const TEXT_A2: &str = "今天北京的天气很好,我们去公园散步,看到很多人在跑步和放风筝!The rivers of the north run cold and clear in spring.";
/// A long text; adding ", silver" moves its fingerprint by 2 bits (spec v6, no title).
const LONG: &str = "The rivers of the north run cold and clear in spring, and the mountains above them keep their snow until June. Farmers in the valleys plant barley and oats, shepherds move their flocks to the high meadows, and travellers cross the passes on old stone roads built centuries ago by monks and merchants who traded salt, wool and copper between the towns of the plain";
const TEXT_B: &str =
    "A completely different page about compilers, register allocation and instruction scheduling.";

#[test]
fn every_endpoint_answers() {
    let t = TestCommand::new();
    let s = t.serve(&[]);
    let h = http();

    let (st, v) = answer(h.get(s.at("/health")).call());
    assert_eq!((st, v), (200, json!({"status": "ok"})));

    let doc = json!({"id": "https://e.com/a?x=1", "title": "北京天气", "text": TEXT_A, "url": "https://e.com/a?x=1"});
    let (st, v) = answer(h.post(s.at("/insert")).send_json(&doc));
    assert_eq!(st, 200, "{v}");
    assert_eq!(v["status"], "inserted");
    let fp_a = v["fp"].as_str().unwrap().to_owned();
    assert_eq!(fp_a.len(), 16);
    let (st, v) = answer(h.post(s.at("/insert")).send_json(&doc));
    assert_eq!((st, v["status"].as_str()), (200, Some("replaced")));
    let (st, v) = answer(
        h.post(s.at("/insert"))
            .send_json(json!({"id": "b", "text": TEXT_B})),
    );
    assert_eq!((st, v["status"].as_str()), (200, Some("inserted")));
    let (st, v) = answer(
        h.post(s.at("/insert"))
            .send_json(json!({"id": "fp-only", "fp": "00000000000000ff"})),
    );
    assert_eq!((st, v["fp"].as_str()), (200, Some("00000000000000ff")));

    // GET /docs/{id}: the id percent-encoded in the path.
    let (st, v) = answer(h.get(s.at("/docs/https%3A%2F%2Fe.com%2Fa%3Fx%3D1")).call());
    assert_eq!(st, 200, "{v}");
    assert_eq!(v["id"], "https://e.com/a?x=1");
    assert_eq!(v["title"], "北京天气");
    assert_eq!(v["fp"], fp_a.as_str());
    // Slashes may also stay unencoded (a `?` may not: it starts the query string).
    let (st, v) = answer(h.get(s.at("/docs/https://e.com/a%3Fx=1")).call());
    assert_eq!(
        (st, v["id"].as_str()),
        (200, Some("https://e.com/a?x=1")),
        "{v}"
    );
    let (st, v) = answer(h.get(s.at("/docs/nope")).call());
    assert_eq!(st, 404);
    assert!(
        v["error"]
            .as_str()
            .unwrap()
            .contains("no document with id \"nope\"")
    );
    // An id that is not UTF-8 once decoded: a 400 in JSON, as every refusal.
    for path in ["/docs/%ff", "/docs/a%C3"] {
        let (st, v) = answer(h.get(s.at(path)).call());
        assert_eq!(st, 400, "{path}: {v}");
        let error = v["error"].as_str().unwrap_or_default();
        assert!(
            error.contains("percent-encode its UTF-8 bytes"),
            "{path}: {v}"
        );
    }
    // A body after a UTF-8 byte-order mark reads as `import` reads a file after one.
    let bom = [
        &b"\xEF\xBB\xBF"[..],
        br#"{"id": "bom", "fp": "00000000000000f1"}"#,
    ]
    .concat();
    let posted = h
        .post(s.at("/insert"))
        .header("content-type", "application/json");
    let (st, v) = answer(posted.send(&bom[..]));
    assert_eq!((st, v["status"].as_str()), (200, Some("inserted")), "{v}");
    let (st, v) = answer(h.delete(s.at("/docs/bom")).call());
    assert_eq!((st, v["deleted"].as_bool()), (200, Some(true)), "{v}");
    // An unpaired surrogate escape (an emoji cut in half) reads as U+FFFD, in a query as in
    // a document: the query finds the document.
    let text = r"a page whose emoji was cut in half \ud83d by the scraper that fetched it";
    let json = |body: String| {
        let posted = h.post(s.at(if body.contains("\"id\"") {
            "/insert"
        } else {
            "/query"
        }));
        answer(
            posted
                .header("content-type", "application/json")
                .send(body.as_bytes()),
        )
    };
    let (st, v) = json(format!(r#"{{"id": "cut", "text": "{text}"}}"#));
    assert_eq!(st, 200, "{v}");
    let (st, v) = json(format!(r#"{{"text": "{text}", "k": 0}}"#));
    assert_eq!(
        (st, v["matches"][0]["id"].as_str()),
        (200, Some("cut")),
        "{v}"
    );
    let (st, v) = answer(h.delete(s.at("/docs/cut")).call());
    assert_eq!((st, v["deleted"].as_bool()), (200, Some(true)), "{v}");

    // POST /query: a near-duplicate text finds the page; a fingerprint finds its neighbours.
    let (st, v) = answer(
        h.post(s.at("/query"))
            .send_json(json!({"text": TEXT_A2, "title": "北京天气", "k": 3})),
    );
    assert_eq!(st, 200, "{v}");
    let matches = v["matches"].as_array().unwrap();
    assert_eq!(matches.len(), 1, "{v}");
    assert_eq!(matches[0]["id"], "https://e.com/a?x=1");
    assert!(matches[0]["distance"].as_u64().unwrap() <= 3);
    let (st, v) = answer(
        h.post(s.at("/query"))
            .send_json(json!({"fp": "00000000000000fe"})),
    );
    assert_eq!(st, 200, "{v}");
    assert_eq!(v["k"], 3, "k defaults to the store's k_max");
    assert_eq!(v["matches"][0]["id"], "fp-only");
    assert_eq!(v["matches"][0]["distance"], 1);
    let (_, v) = answer(
        h.post(s.at("/query"))
            .send_json(json!({"fp": "00000000000000fe", "k": 0})),
    );
    assert_eq!(v["matches"], json!([]));

    // POST /query/batch: one result per query, in order.
    let (st, v) = answer(h.post(s.at("/query/batch")).send_json(json!([
        {"fp": fp_a, "k": 0},
        {"text": TEXT_B, "limit": 1},
        {"fp": "ffffffffffffff00", "k": 2}
    ])));
    assert_eq!(st, 200, "{v}");
    let results = v["results"].as_array().unwrap();
    assert_eq!(results.len(), 3);
    assert_eq!(results[0]["matches"][0]["id"], "https://e.com/a?x=1");
    assert_eq!(results[1]["matches"][0]["id"], "b");
    assert_eq!(results[2]["matches"], json!([]));
    // "limit": 0 answered no match, read as "no near duplicate": refused.
    let (st, v) = answer(
        h.post(s.at("/query"))
            .send_json(json!({"fp": fp_a, "k": 0, "limit": 0})),
    );
    assert_eq!(st, 400, "{v}");

    let (st, v) = answer(h.get(s.at("/stats")).call());
    assert_eq!(st, 200);
    assert_eq!(
        (v["docs"].as_u64(), v["k_max"].as_u64()),
        (Some(3), Some(3))
    );

    // DELETE /docs/{id}.
    let (st, v) = answer(h.delete(s.at("/docs/b")).call());
    assert_eq!((st, v["deleted"].as_bool()), (200, Some(true)));
    let (st, _) = answer(h.delete(s.at("/docs/b")).call());
    assert_eq!(st, 404);
    let (st, _) = answer(h.get(s.at("/docs/b")).call());
    assert_eq!(st, 404);
    let (_, v) = answer(h.get(s.at("/stats")).call());
    assert_eq!(v["docs"], 2);
}

#[test]
fn bad_requests_get_status_codes_and_json_errors() {
    let t = TestCommand::new();
    let s = t.serve(&["--max-body-bytes", "1024"]);
    let h = http();
    let post = |path: &str, body: &str| {
        answer(
            h.post(s.at(path))
                .header("content-type", "application/json")
                .send(body),
        )
    };
    let error = |v: &Value| v["error"].as_str().unwrap_or("").to_owned();

    let (st, v) = post("/insert", "{not json");
    assert_eq!(st, 400);
    assert!(error(&v).starts_with("invalid JSON"), "{v}");
    let (st, v) = post("/insert", r#"{"text": "no id"}"#);
    assert_eq!(st, 400);
    assert!(error(&v).starts_with("missing \"id\""), "{v}");
    let (st, v) = post("/insert", r#"{"id": "a", "text": 42}"#);
    assert_eq!(st, 400);
    assert!(error(&v).contains("field \"text\" must be a string"), "{v}");
    let (st, v) = post("/insert", r#"{"id": "a", "fp": "xyz"}"#);
    assert_eq!(st, 400);
    assert!(error(&v).contains("16 hexadecimal digits"), "{v}");
    let (st, v) = post("/insert", r#"{"id": "a", "text": " ... !!! "}"#);
    assert_eq!(st, 422);
    assert!(error(&v).starts_with("nothing to fingerprint"), "{v}");
    let (st, v) = post("/query", r#"{"k": 2}"#);
    assert_eq!(st, 422);
    assert!(error(&v).starts_with("nothing to query with"), "{v}");
    let (st, v) = post("/query", r#"{"fp": "00000000000000ff", "k": 9}"#);
    assert_eq!(st, 400);
    assert!(error(&v).contains("exceeds this store's k_max = 3"), "{v}");
    let (st, v) = post("/query", r#"{"text": "x", "k": "three"}"#);
    assert_eq!(st, 400);
    assert!(error(&v).starts_with("invalid query"), "{v}");
    let (st, v) = post("/query/batch", r#"{"text": "not an array"}"#);
    assert_eq!(st, 400);
    assert!(error(&v).contains("JSON array"), "{v}");
    let (st, v) = post("/query/batch", r#"[{"text": "fine words"}, {"k": 1}]"#);
    assert_eq!(st, 422);
    assert!(
        error(&v).starts_with("query 1: nothing to query with"),
        "{v}"
    );

    // Larger than --max-body-bytes: 413, and the server goes on.
    let big = format!(r#"{{"id": "big", "text": "{}"}}"#, "word ".repeat(1000));
    let (st, v) = post("/insert", &big);
    assert_eq!(st, 413, "{v}");
    assert!(error(&v).contains("--max-body-bytes"), "{v}");

    let (st, v) = answer(h.get(s.at("/no/such/endpoint")).call());
    assert_eq!(st, 404);
    assert!(error(&v).contains("no such endpoint"), "{v}");
    let (st, v) = answer(h.get(s.at("/insert")).call());
    assert_eq!(st, 405);
    assert!(error(&v).starts_with("method not allowed here"), "{v}");

    // Nothing bad was stored, and the server still answers.
    let (st, v) = answer(h.get(s.at("/stats")).call());
    assert_eq!((st, v["docs"].as_u64()), (200, Some(0)));
}

#[test]
fn check_and_insert_answers_new_exact_or_near() {
    let t = TestCommand::new();
    let s = t.serve(&[]);
    let h = http();
    let check = |doc: Value| answer(h.post(s.at("/check_and_insert")).send_json(doc));
    let (st, v) = check(json!({"id": "a", "text": LONG, "url": "https://e.com/a"}));
    assert_eq!(st, 200, "{v}");
    assert_eq!(
        (v["status"].as_str(), v["replaced"].as_bool()),
        (Some("new"), Some(false))
    );
    assert!(v.get("of").is_none());
    // The same content under another id: an exact duplicate, not stored.
    let (st, v) = check(json!({"id": "a-copy", "text": LONG}));
    assert_eq!(st, 200, "{v}");
    assert_eq!(v["status"], "exact_duplicate");
    assert_eq!(
        (v["of"].as_str(), v["distance"].as_u64()),
        (Some("a"), Some(0))
    );
    // One more word: 2 bits away, a near duplicate within the default k (the store's
    // k_max = 3)...
    let near = format!("{LONG}, silver");
    let (st, v) = check(json!({"id": "a-near", "text": near}));
    assert_eq!(st, 200, "{v}");
    assert_eq!(v["status"], "near_duplicate");
    assert_eq!(
        (v["of"].as_str(), v["distance"].as_u64()),
        (Some("a"), Some(2))
    );
    // ... but new with k = 0, and then stored.
    let (st, v) = check(json!({"id": "a-near", "text": near, "k": 0}));
    assert_eq!((st, v["status"].as_str()), (200, Some("new")), "{v}");
    for (id, want) in [("a", 200), ("a-copy", 404), ("a-near", 200)] {
        let (st, _) = answer(h.get(s.at(&format!("/docs/{id}"))).call());
        assert_eq!(st, want, "{id}");
    }
    // Errors as for /insert; k > k_max and a wrong k are refused.
    let (st, v) = check(json!({"id": "x", "text": LONG, "k": 4}));
    assert_eq!(st, 400, "{v}");
    assert!(
        v["error"]
            .as_str()
            .unwrap()
            .contains("exceeds this store's k_max")
    );
    let (st, v) = check(json!({"id": "x", "text": LONG, "k": "two"}));
    assert_eq!(st, 400, "{v}");
    assert!(v["error"].as_str().unwrap().starts_with("invalid \"k\""));
    let (st, _) = check(json!({"id": "x", "text": "!!!"}));
    assert_eq!(st, 422);
    let (st, _) = check(json!({"text": LONG}));
    assert_eq!(st, 400);
}

#[test]
fn concurrent_check_and_insert_stores_exactly_one_of_near_identical_pages() {
    // Five rounds, each on a fresh server: 8 clients released at once with near-identical
    // pages (exact copies and 1-bit variants).
    for round in 0..5 {
        let t = TestCommand::new();
        let s = t.serve(&[]);
        let variants = ["", ", silver"];
        let threads = 8;
        let start = std::sync::Barrier::new(threads);
        let answers: Vec<Value> = std::thread::scope(|scope| {
            let handles: Vec<_> = (0..threads)
                .map(|i| {
                    let (s, start) = (&s, &start);
                    scope.spawn(move || {
                        let h = http();
                        let doc = json!({"id": format!("page-{i}"), "text": format!("{LONG}{}", variants[(i + round) % 2])});
                        start.wait();
                        let (st, v) = answer(h.post(s.at("/check_and_insert")).send_json(doc));
                        assert_eq!(st, 200, "{v}");
                        v
                    })
                })
                .collect();
            handles.into_iter().map(|h| h.join().unwrap()).collect()
        });
        let new: Vec<&Value> = answers.iter().filter(|v| v["status"] == "new").collect();
        assert_eq!(new.len(), 1, "round {round}: {answers:?}");
        let winner = new[0]["id"].as_str().unwrap();
        for v in &answers {
            if v["status"] != "new" {
                assert_eq!(v["of"], winner, "{v}");
                assert!(v["distance"].as_u64().unwrap() <= 3);
            }
        }
        let (_, v) = answer(http().get(s.at("/stats")).call());
        assert_eq!(v["docs"], 1);
    }
}

#[test]
fn concurrent_inserts_all_land() {
    let t = TestCommand::new();
    let s = t.serve(&[]);
    std::thread::scope(|scope| {
        for thread in 0..6 {
            let s = &s;
            scope.spawn(move || {
                let h = http();
                for i in 0..20 {
                    let doc = json!({"id": format!("t{thread}-{i}"), "text": format!("page {i} of thread {thread}: {TEXT_B}")});
                    let (st, v) = answer(h.post(s.at("/insert")).send_json(doc));
                    assert_eq!(st, 200, "{v}");
                }
            });
        }
    });
    let (_, v) = answer(http().get(s.at("/stats")).call());
    assert_eq!(v["docs"], 120);
}

/// Inserts from `threads` clients until the server stops answering 200; returns the ids
/// acknowledged. `acked` counts them as they come.
fn insert_until_refused(
    s: &crate::util::Server,
    threads: usize,
    acked: &AtomicUsize,
    stop: &AtomicBool,
) -> BTreeSet<String> {
    let ids = Mutex::new(BTreeSet::new());
    std::thread::scope(|scope| {
        for thread in 0..threads {
            let ids = &ids;
            scope.spawn(move || {
                let h = http();
                for i in 0.. {
                    if stop.load(Ordering::SeqCst) {
                        break;
                    }
                    let id = format!("w{thread}-{i}");
                    let doc =
                        json!({"id": id, "text": format!("{TEXT_B} number {i} from {thread}")});
                    match h.post(s.at("/insert")).send_json(doc) {
                        Ok(r) if r.status().as_u16() == 200 => {
                            ids.lock().unwrap().insert(id);
                            acked.fetch_add(1, Ordering::SeqCst);
                        }
                        Ok(r) => {
                            assert_eq!(r.status().as_u16(), 503, "only 503 while shutting down");
                            break;
                        }
                        Err(_) => break, // the listener is closed
                    }
                }
            });
        }
    });
    ids.into_inner().unwrap()
}

#[test]
fn sigterm_finishes_requests_and_keeps_every_acknowledged_write() {
    let t = TestCommand::new();
    let mut s = t.serve(&[]);
    let acked = AtomicUsize::new(0);
    let stop = AtomicBool::new(false);
    let ids = std::thread::scope(|scope| {
        let writers = scope.spawn(|| insert_until_refused(&s, 4, &acked, &stop));
        while acked.load(Ordering::SeqCst) < 40 {
            std::thread::yield_now();
        }
        s.signal("TERM");
        let ids = writers.join().unwrap();
        stop.store(true, Ordering::SeqCst);
        ids
    });
    let (status, err) = s.wait();
    assert_eq!(status.code(), Some(0), "{err}");
    assert!(err.contains("SIGTERM: shutting down"), "{err}");
    assert!(err.contains("shut down cleanly"), "{err}");
    assert!(ids.len() >= 40);

    let s = t.serve(&[]);
    let h = http();
    for id in &ids {
        let (st, _) = answer(h.get(s.at(&format!("/docs/{id}"))).call());
        assert_eq!(st, 200, "acknowledged {id} is missing after the restart");
    }
    let (_, v) = answer(h.get(s.at("/stats")).call());
    // Writes under way at the signal may have landed without their answer arriving.
    assert!(v["docs"].as_u64().unwrap() >= ids.len() as u64);
}

#[test]
fn sigkill_loses_no_acknowledged_write() {
    let t = TestCommand::new();
    let mut s = t.serve(&[]);
    let acked = AtomicUsize::new(0);
    let stop = Arc::new(AtomicBool::new(false));
    let ids = std::thread::scope(|scope| {
        let writers = scope.spawn(|| insert_until_refused(&s, 3, &acked, &stop));
        while acked.load(Ordering::SeqCst) < 30 {
            std::thread::yield_now();
        }
        s.signal("KILL");
        writers.join().unwrap()
    });
    let (status, _) = s.wait();
    assert_eq!(status.code(), None, "killed by the signal");
    let s = t.serve(&[]);
    let h = http();
    for id in &ids {
        let (st, _) = answer(h.get(s.at(&format!("/docs/{id}"))).call());
        assert_eq!(st, 200, "acknowledged {id} is missing after kill -9");
    }
}

#[test]
fn sigint_on_an_idle_server_exits_zero() {
    let t = TestCommand::new();
    let mut s = t.serve(&[]);
    let (st, _) = answer(
        http()
            .post(s.at("/insert"))
            .send_json(json!({"id": "a", "text": TEXT_B})),
    );
    assert_eq!(st, 200);
    s.signal("INT");
    let (status, err) = s.wait();
    assert_eq!(status.code(), Some(0), "{err}");
    assert!(err.contains("holds 1 document"), "{err}");
}

#[test]
fn a_second_server_on_the_same_store_is_refused() {
    let t = TestCommand::new();
    let _s = t.serve(&[]);
    let o = crate::util::checked(
        t.command(&["serve", "--port", "0"])
            .stdin(std::process::Stdio::null())
            .output()
            .unwrap(),
    );
    assert_eq!(o.status.code(), Some(2));
    assert!(crate::util::stderr(&o).contains("locked by another writer"));
}

/// Requests/s over loopback, printed (not asserted): run with
/// `cargo test --release --test tests serve::throughput -- --ignored --nocapture`.
/// `SIMSTORE_SERVE_BENCH_N` sets the requests per endpoint (default 4000).
#[test]
#[ignore = "a measurement, not a test"]
fn throughput() {
    let n: usize = std::env::var("SIMSTORE_SERVE_BENCH_N")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(4000);
    // As many clients as the server's default --workers: that many store calls at once.
    let threads = 16;
    for sync in [true, false] {
        let t = TestCommand::new();
        let s = if sync {
            t.serve(&[])
        } else {
            t.serve(&["--no-sync"])
        };
        // The spec drops digit runs: pages differ by words, 16 of a 48-word vocabulary
        // picked by a hash of the page number.
        const VOCABULARY: [&str; 48] = [
            "river",
            "mountain",
            "valley",
            "harbour",
            "forest",
            "desert",
            "island",
            "glacier",
            "compiler",
            "register",
            "pipeline",
            "cache",
            "kernel",
            "socket",
            "thread",
            "mutex",
            "北京",
            "上海",
            "天气",
            "公园",
            "散步",
            "跑步",
            "风筝",
            "孩子",
            "barley",
            "copper",
            "wool",
            "salt",
            "merchant",
            "monk",
            "shepherd",
            "traveller",
            "violin",
            "piano",
            "chorus",
            "sonata",
            "poem",
            "novel",
            "theatre",
            "painter",
            "电脑",
            "手机",
            "网络",
            "数据",
            "算法",
            "模型",
            "系统",
            "服务",
        ];
        let docs: Vec<Value> = (0..n)
            .map(|i| {
                let mut x = (i as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
                let words: Vec<&str> = (0..16)
                    .map(|_| {
                        x ^= x << 13;
                        x ^= x >> 7;
                        x ^= x << 17;
                        VOCABULARY[(x % 48) as usize]
                    })
                    .collect();
                json!({"id": format!("https://e.com/{i}"), "title": format!("page {}", words[0]),
                       "text": format!("{TEXT_A} {TEXT_B} {}", words.join(" "))})
            })
            .collect();
        let label = if sync { "fsync per write" } else { "--no-sync" };
        for (endpoint, path) in [
            ("check_and_insert", "/check_and_insert"),
            ("insert", "/insert"),
            ("query", "/query"),
        ] {
            let next = AtomicUsize::new(0);
            let new = AtomicUsize::new(0);
            let start = std::time::Instant::now();
            std::thread::scope(|scope| {
                for _ in 0..threads {
                    scope.spawn(|| {
                        let h = http();
                        loop {
                            let i = next.fetch_add(1, Ordering::SeqCst);
                            let Some(doc) = docs.get(i) else { break };
                            let (st, v) = answer(h.post(s.at(path)).send_json(doc));
                            assert_eq!(st, 200, "{v}");
                            if v["status"] == "new" {
                                new.fetch_add(1, Ordering::SeqCst);
                            }
                        }
                    });
                }
            });
            let secs = start.elapsed().as_secs_f64();
            let stored = if path == "/check_and_insert" {
                format!(" ({} new, stored)", new.load(Ordering::SeqCst))
            } else {
                String::new()
            };
            println!(
                "{endpoint:>16} ({label}): {n} requests from {threads} threads in {secs:.2} s = {:.0} requests/s{stored}",
                n as f64 / secs
            );
        }
    }
}

/// The documents the server holds, asked with the library (a reader beside the server).
fn stored(t: &TestCommand) -> u64 {
    simstore::StoreBuilder::new(t.db())
        .read_only(true)
        .open()
        .unwrap()
        .len()
}

#[test]
fn foreign_hosts_and_non_json_bodies_are_refused_before_any_work() {
    let t = TestCommand::new();
    let s = t.serve(&[]);
    let h = http();
    let doc = r#"{"id": "x", "text": "a page a browser should not be able to store"}"#;
    // A cross-site "simple" POST (text/plain, form) and a DNS-rebound Host.
    for content_type in ["text/plain", "application/x-www-form-urlencoded", ""] {
        let mut req = h.post(s.at("/insert"));
        if !content_type.is_empty() {
            req = req.header("content-type", content_type);
        }
        let r = req.send(doc).unwrap();
        // The body is unread: the connection is closed, and the client is told so that it
        // does not send its next request on it.
        let connection = r.headers().get("connection").map(|v| v.to_str().unwrap());
        assert_eq!(connection, Some("close"), "{content_type}");
        let (st, v) = answer(Ok(r));
        assert_eq!(st, 415, "{content_type}: {v}");
        assert!(v["error"].as_str().unwrap().contains("application/json"));
    }
    let (st, v) = answer(
        h.post(s.at("/insert"))
            .header("host", "rebound.example:7171")
            .header("content-type", "application/json")
            .send(doc),
    );
    assert_eq!(st, 403, "{v}");
    let (st, _) = answer(
        h.get(s.at("/health"))
            .header("host", "rebound.example")
            .call(),
    );
    assert_eq!(st, 403);
    assert_eq!(stored(&t), 0, "a refused request stored something");
    // The same request done right is stored.
    let (st, v) = answer(
        h.post(s.at("/insert"))
            .send_json(json!({"id": "x", "text": TEXT_B})),
    );
    assert_eq!((st, v["status"].as_str()), (200, Some("inserted")), "{v}");
}

#[test]
fn with_a_token_every_request_must_carry_it() {
    let t = TestCommand::new();
    let token = t.write("token", b"  s3cret-token-for-tests\n");
    let token = token.to_str().unwrap();
    let s = t.serve(&["--token-file", token]);
    let h = http();
    let insert = |auth: Option<&str>| {
        let mut req = h.post(s.at("/insert"));
        if let Some(a) = auth {
            req = req.header("authorization", a);
        }
        answer(req.send_json(json!({"id": "x", "text": TEXT_B})))
    };
    for auth in [None, Some("Bearer wrong"), Some("s3cret-token-for-tests")] {
        let (st, v) = insert(auth);
        assert_eq!(st, 401, "{auth:?}: {v}");
    }
    let (st, _) = answer(h.get(s.at("/health")).call());
    assert_eq!(st, 401, "loopback too");
    assert_eq!(stored(&t), 0);
    let (st, v) = insert(Some("Bearer s3cret-token-for-tests"));
    assert_eq!((st, v["status"].as_str()), (200, Some("inserted")), "{v}");
    let serve_log = std::fs::read_dir(t.path("."))
        .unwrap()
        .flatten()
        .filter(|e| e.file_name().to_string_lossy().starts_with("serve-"))
        .map(|e| std::fs::read_to_string(e.path()).unwrap())
        .collect::<String>();
    assert!(!serve_log.contains("s3cret"), "the token was logged");
}

#[test]
fn another_address_without_a_token_is_refused_at_start() {
    let t = TestCommand::new();
    // Refused before anything listens (so nothing leaves loopback).
    let o = t.run(&["serve", "--addr", "0.0.0.0", "--port", "0"]);
    assert_eq!(crate::util::code(&o), 2);
    let err = crate::util::stderr(&o);
    assert!(
        err.contains("needs a token") && err.contains("--token-file"),
        "{err}"
    );
    assert!(!t.db().exists(), "nothing opened or created");
}

/// Opens `n` connections at once that never send a byte. Those the server neither accepts
/// nor queues (its listen backlog is full) give up after a few seconds: not returned.
fn hold_idle_connections(s: &crate::util::Server, n: usize) -> Vec<std::net::TcpStream> {
    let addr = s.addr();
    std::thread::scope(|scope| {
        let tries: Vec<_> = (0..n)
            .map(|_| {
                scope.spawn(move || {
                    std::net::TcpStream::connect_timeout(&addr, std::time::Duration::from_secs(3))
                })
            })
            .collect();
        tries
            .into_iter()
            .filter_map(|t| t.join().unwrap().ok())
            .collect()
    })
}

/// Issue 20: with ~22k idle sockets held against the server, writes got
/// `500 ... Too many open files` (one of them in fact stored), every later write failed while
/// /health said ok, and SIGTERM could not flush. Here the descriptor limit is 256 and 400
/// idle connections (never sending a byte) are held while one keep-alive connection writes
/// documents big enough (64 KiB titles, the most stored) to fill RocksDB's memtables, whose
/// switches open new files.
#[test]
fn idle_connections_past_the_descriptor_limit_never_starve_the_store() {
    let t = TestCommand::new();
    let mut s = t.serve_after("ulimit -n 256", &["--no-sync"]);
    // One agent, one request at a time: every request below goes over one connection,
    // opened before the idle ones.
    let h = http();
    let (st, _) = answer(h.get(s.at("/health")).call());
    assert_eq!(st, 200);
    let idle = hold_idle_connections(&s, 400);
    let title = "x".repeat(simstore::MAX_TITLE_BYTES);
    let mut answers = Vec::new();
    // 160 MiB in all.
    for i in 0..2560u64 {
        let doc = json!({"id": format!("big-{i}"), "fp": format!("{i:016x}"), "title": title});
        let (st, v) = answer(h.post(s.at("/insert")).send_json(doc));
        answers.push((format!("big-{i}"), st, v));
    }
    let (health, hv) = answer(h.get(s.at("/health")).call());
    let mut wrong = Vec::new();
    for (id, st, v) in &answers {
        let (got, _) = answer(h.get(s.at(&format!("/docs/{id}"))).call());
        let unknown = v["outcome"] == "unknown";
        match (*st, got) {
            (200, 200) | (_, 404) => {}
            (_, 200) if unknown => {}
            _ => wrong.push(format!("{id}: answered {st} {v}, then GET said {got}")),
        }
        if *st != 200 && health == 200 {
            wrong.push(format!("{id} answered {st} {v}, yet /health says ok: {hv}"));
        }
    }
    assert!(wrong.is_empty(), "{wrong:#?}");
    let refused: Vec<_> = answers.iter().filter(|(_, st, _)| *st != 200).collect();
    assert!(refused.is_empty(), "the store was starved: {refused:?}");
    drop(idle);
    s.signal("TERM");
    let (status, err) = s.wait();
    assert_eq!(status.code(), Some(0), "{err}");
    assert!(err.contains("shut down cleanly"), "{err}");
}

/// The soft descriptor limit is raised to the hard one at start (Linux: read from /proc).
#[test]
fn the_soft_descriptor_limit_is_raised_to_the_hard_one() {
    let t = TestCommand::new();
    let s = t.serve_after("ulimit -Sn 256 && ulimit -Hn 4000", &[]);
    let limits = std::fs::read_to_string(format!("/proc/{}/limits", s.pid())).unwrap();
    let line = limits
        .lines()
        .find(|l| l.starts_with("Max open files"))
        .unwrap();
    let numbers: Vec<&str> = line.split_whitespace().skip(3).take(2).collect();
    assert_eq!(numbers, ["4000", "4000"], "{line}");
    drop(s);
    // More connections than the limit leaves beside the store are refused at start.
    let o = t.serve_refused_after("ulimit -n 256", &["--max-connections", "200"]);
    assert_eq!(crate::util::code(&o), 2);
    let err = crate::util::stderr(&o);
    assert!(err.contains("--max-connections 200 is more than the descriptor limit allows: of 256 (ulimit -n, raised to the hard limit)"), "{err}");
    assert!(err.contains("use at most 1"), "{err}");
}

/// Issue 20: a write that failed in the store was answered 500 (which says nothing was
/// stored) though it could have landed, later writes failed one by one, and /health said
/// ok. Here the server may not write files past 8 MiB (`ulimit -f`, SIGXFSZ ignored), so
/// its write-ahead log fails after about 128 documents of 64 KiB (the largest title stored).
#[test]
fn a_write_failing_in_the_store_says_outcome_unknown_and_health_tells() {
    let t = TestCommand::new();
    let s = t.serve_after("trap '' XFSZ && ulimit -f 8192", &[]);
    let h = http();
    let title = "x".repeat(simstore::MAX_TITLE_BYTES);
    let answers: Vec<(String, u16, Value)> = (0..200u64)
        .map(|i| {
            let doc = json!({"id": format!("big-{i}"), "fp": format!("{i:016x}"), "title": title});
            let (st, v) = answer(h.post(s.at("/insert")).send_json(doc));
            (format!("big-{i}"), st, v)
        })
        .collect();
    let unknown: Vec<_> = answers
        .iter()
        .filter(|a| a.2["outcome"] == "unknown")
        .collect();
    assert_eq!(
        unknown.len(),
        1,
        "the first failure, and only it: {answers:#?}"
    );
    assert!(answers.iter().all(|a| a.1 != 500), "{answers:#?}");
    let (st, v) = answer(h.get(s.at("/health")).call());
    assert_eq!(st, 503, "{v}");
    assert!(
        v["error"].as_str().unwrap().contains("File too large"),
        "{v}"
    );
    drop(s);
    // Restarted without the limit: every 200 is there, every refusal is not.
    let s = t.serve(&[]);
    for (id, st, v) in &answers {
        let (got, _) = answer(h.get(s.at(&format!("/docs/{id}"))).call());
        match (*st, v["outcome"] == "unknown") {
            (200, _) => assert_eq!(got, 200, "acknowledged {id} is missing"),
            (_, false) => assert_eq!(got, 404, "{id} was refused ({st} {v}) but stored"),
            (_, true) => {}
        }
    }
    assert!(answers.iter().any(|a| a.1 == 200), "{answers:#?}");
}

/// Writes `head` to a new connection to `s`, then the bytes of `drip` one every 100 ms
/// (none if `drip` is empty) until the server closes the connection. What the server answered meanwhile (possibly
/// nothing), or `None` if it still held the connection after a minute: a liveness bound,
/// far above every timeout the tests set.
fn drip(s: &crate::util::Server, head: &str, drip: &str) -> Option<String> {
    use std::io::{Read, Write};
    let mut c = std::net::TcpStream::connect(s.addr()).unwrap();
    c.set_read_timeout(Some(std::time::Duration::from_millis(100)))
        .unwrap();
    c.write_all(head.as_bytes()).unwrap();
    let mut got = Vec::new();
    let start = std::time::Instant::now();
    let mut bytes = drip.bytes().cycle();
    loop {
        if start.elapsed() > std::time::Duration::from_secs(60) {
            return None;
        }
        let mut buf = [0u8; 4096];
        match c.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => got.extend_from_slice(&buf[..n]),
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {}
            Err(e) if e.kind() == std::io::ErrorKind::TimedOut => {}
            Err(_) => break, // reset
        }
        if let Some(byte) = bytes.next()
            && c.write_all(&[byte]).is_err()
        {
            break;
        }
    }
    Some(String::from_utf8_lossy(&got).into_owned())
}

#[test]
fn slow_clients_are_disconnected() {
    let t = TestCommand::new();
    let s = t.serve(&["--header-timeout", "1", "--body-timeout", "1"]);
    // Headers a byte at a time (slow loris), then a body a byte at a time.
    let got = drip(
        &s,
        "POST /insert HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ",
        "a",
    );
    assert!(
        got.is_some(),
        "a client sending headers slowly was never disconnected"
    );
    let head = "POST /insert HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n\
                Content-Length: 100000\r\n\r\n{\"id\": \"slow\", \"text\": \"";
    let got = drip(&s, head, "a").expect("a client sending its body slowly was never answered");
    assert!(got.starts_with("HTTP/1.1 408"), "{got}");
    assert!(got.contains("--body-timeout"), "{got}");
    // An idle keep-alive connection is closed too; the server goes on.
    let got = drip(&s, "GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n", "");
    assert!(got.is_some_and(|g| g.starts_with("HTTP/1.1 200")));
    assert_eq!(stored(&t), 0, "the slow body was stored");
    let (st, _) = answer(http().get(s.at("/health")).call());
    assert_eq!(st, 200);
}

#[test]
fn sigterm_with_a_stalled_client_exits_within_the_bound_and_flushes() {
    use std::io::{Read, Write};
    let t = TestCommand::new();
    let mut s = t.serve(&[
        "--shutdown-timeout",
        "1",
        "--body-timeout",
        "600",
        "--header-timeout",
        "600",
    ]);
    let h = http();
    for i in 0..10 {
        let doc = json!({"id": format!("d{i}"), "text": format!("{TEXT_B} number {i}")});
        let (st, v) = answer(h.post(s.at("/insert")).send_json(doc));
        assert_eq!(st, 200, "{v}");
    }
    // A request stalled in its body: `100 Continue` says the server is reading it.
    let mut stalled = std::net::TcpStream::connect(s.addr()).unwrap();
    let head = "POST /insert HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n\
                Content-Length: 1000\r\nExpect: 100-continue\r\n\r\n";
    stalled.write_all(head.as_bytes()).unwrap();
    let mut buf = [0u8; 64];
    let n = stalled.read(&mut buf).unwrap();
    assert!(buf[..n].starts_with(b"HTTP/1.1 100"), "{:?}", &buf[..n]);
    stalled.write_all(b"{\"id\": \"stalled\", \"te").unwrap();
    // And a connection stalled in its headers.
    let mut half = std::net::TcpStream::connect(s.addr()).unwrap();
    half.write_all(b"GET /health HTTP/1.1\r\nHo").unwrap();
    s.signal("TERM");
    let (status, err) = s
        .wait_at_most(std::time::Duration::from_secs(60))
        .expect("a stalled client kept the server from exiting");
    assert_eq!(status.code(), Some(0), "{err}");
    assert!(err.contains("shut down cleanly"), "{err}");
    drop((stalled, half));
    let s = t.serve(&[]);
    for i in 0..10 {
        let (st, _) = answer(h.get(s.at(&format!("/docs/d{i}"))).call());
        assert_eq!(st, 200, "acknowledged d{i} is missing after the restart");
    }
    let (st, _) = answer(h.get(s.at("/docs/stalled")).call());
    assert_eq!(st, 404);
}

/// Issue 20: 3,000 copies of a fingerprint shared by 1,000 documents took the server to
/// 3.9 GB and a 161 MB answer. Here 1,000 copies of one shared by 200 (200,000 matches
/// against the default cap of 10,000).
#[test]
fn a_batch_past_the_match_cap_gets_a_clear_error() {
    let t = TestCommand::new();
    let fp = "0f3a5c7e9b1d2f40";
    let lines: String = (0..200)
        .map(|i| format!("{{\"id\": \"copy-{i}\", \"fp\": \"{fp}\"}}\n"))
        .collect();
    let file = t.write("copies.jsonl", lines.as_bytes());
    let o = t.run(&["import", file.to_str().unwrap()]);
    assert_eq!(crate::util::code(&o), 0, "{}", crate::util::stderr(&o));
    let s = t.serve(&[]);
    let h = http();
    let batch: Vec<Value> = (0..1000).map(|_| json!({"fp": fp})).collect();
    let (st, v) = answer(h.post(s.at("/query/batch")).send_json(&batch));
    assert_eq!(
        st,
        422,
        "{}",
        &v.to_string()[..v.to_string().len().min(300)]
    );
    let e = v["error"].as_str().unwrap();
    let start = "query 50: too many matches: this query has 200 (after \"limit\"), 10000 already answered by this request; one request answers at most 10000";
    assert!(e.starts_with(start), "{e}");
    for part in ["--max-matches", "\"limit\"", "split the batch"] {
        assert!(e.contains(part), "{e}");
    }
    // Asked with "limit", the same batch is answered.
    let batch: Vec<Value> = (0..1000).map(|_| json!({"fp": fp, "limit": 3})).collect();
    let (st, v) = answer(h.post(s.at("/query/batch")).send_json(&batch));
    assert_eq!(st, 200, "{v}");
    assert_eq!(v["results"].as_array().unwrap().len(), 1000);
    assert_eq!(v["results"][999]["matches"].as_array().unwrap().len(), 3);
    // One query under the cap is answered whole; a lower cap refuses it.
    let (st, v) = answer(h.post(s.at("/query")).send_json(json!({"fp": fp})));
    assert_eq!(
        (st, v["matches"].as_array().map(Vec::len)),
        (200, Some(200))
    );
    drop(s);
    let s = t.serve(&["--max-matches", "100"]);
    let (st, v) = answer(h.post(s.at("/query")).send_json(json!({"fp": fp})));
    assert_eq!(st, 422, "{v}");
    assert!(
        v["error"].as_str().unwrap().contains("this query has 200"),
        "{v}"
    );
}
