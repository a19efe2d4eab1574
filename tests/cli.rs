//! The `simstore` binary, run for real on temporary stores (ripgrep's TestCommand style).

use std::collections::HashMap;
use std::process::{Output, Stdio};

use rand::Rng;
use serde_json::Value;

use crate::util::{TestCommand, brute_force, clustered, code, flip, rng, stderr};

fn json_lines(o: &Output) -> Vec<Value> {
    String::from_utf8(o.stdout.clone())
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

#[test]
fn import_reports_each_bad_record_and_stores_the_good_ones() {
    let t = TestCommand::new();
    let mut input = Vec::new();
    input.extend_from_slice(br#"{"id":"good1","title":"T","text":"a first good document about rivers","url":"https://e.com/1"}"#);
    input.extend_from_slice(b"\n{\"id\":\"bad-utf8\",\"text\":\"caf\xe9\"}\n");
    input.extend_from_slice(b"{\"id\": \"trunc\", \"text\": \"no end\n");
    input.extend_from_slice(b"{\"id\":\"bin\",\"text\":\"a\\u0000b\"}\0\n");
    input.extend_from_slice(br#"{"text":"no id"}"#);
    input.extend_from_slice(b"\n");
    input.extend_from_slice(br#"{"id":"wrong","text":42}"#);
    input.extend_from_slice(b"\n");
    input.extend_from_slice(br#"{"id":"empty","text":""}"#);
    input.extend_from_slice(b"\n\n");
    input.extend_from_slice(br#"{"id":"badfp","fp":"12345"}"#);
    input.extend_from_slice(b"\n");
    input.extend_from_slice(br#"{"id":"good2","fp":"00000000000000ff"}"#);
    input.extend_from_slice(b"\n");
    t.write("in.jsonl", &input);
    let o = t.run(&["import", "in.jsonl"]);
    let err = stderr(&o);
    assert_eq!(code(&o), 1, "{err}");
    for (line, what) in [
        (2, "not valid UTF-8"),
        (3, "invalid JSON"),
        (4, "contains a NUL byte"),
        (6, "field \"text\" must be a string, found a number"),
        (7, "nothing to fingerprint"),
        (9, "field \"fp\" must be exactly 16 hexadecimal digits"),
    ] {
        assert!(
            err.contains(&format!("error: in.jsonl:{line}: {what}")),
            "line {line}: {err}"
        );
    }
    assert!(
        err.contains("read 9 records: stored 3 (3 new, 0 replaced), failed 6"),
        "{err}"
    );
    // A record without an id is named by its input and line number.
    assert_eq!(code(&t.run(&["get", "in.jsonl:5"])), 0);
    let o = t.run(&["get", "--json", "good1"]);
    assert_eq!(code(&o), 0);
    let doc = &json_lines(&o)[0];
    assert_eq!(
        (doc["title"].as_str(), doc["url"].as_str()),
        (Some("T"), Some("https://e.com/1"))
    );
    assert_eq!(
        json_lines(&t.run(&["get", "--json", "good2"]))[0]["fp"],
        "00000000000000ff"
    );
    assert_eq!(code(&t.run(&["get", "bad-utf8"])), 1);
}

#[test]
fn text_files_and_stdin() {
    let t = TestCommand::new();
    t.write(
        "a.txt",
        "今天北京的天气很好，我们去公园散步，看到很多人在跑步和放风筝。".as_bytes(),
    );
    t.write("bin.txt", b"\x00\x01\x02binary");
    let o = t.run(&["import", "a.txt", "bin.txt"]);
    assert_eq!(code(&o), 1);
    assert!(
        stderr(&o).contains("error: bin.txt: binary data (a NUL byte at offset 0), not text"),
        "{}",
        stderr(&o)
    );
    let o = t.run_stdin(
        &["import", "-"],
        br#"{"id":"s","text":"from standard input"}"#,
    );
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    let o = t.run(&["query", "--json", "--file", "a.txt", "--k", "0"]);
    assert_eq!(code(&o), 0);
    assert_eq!(json_lines(&o)[0]["id"], "a.txt");
    let o = t.run_stdin(
        &["fingerprint", "--batch", "-"],
        b"{\"id\":\"s\",\"text\":\"from standard input\"}\n",
    );
    let fp = json_lines(&o)[0]["fp"].as_str().unwrap().to_owned();
    let o = t.run(&["query", "--fp", &fp, "--k", "0"]);
    assert_eq!(code(&o), 0);
    assert!(String::from_utf8_lossy(&o.stdout).starts_with("0\ts\t"));
}

#[test]
fn query_exit_codes_and_k_max() {
    let t = TestCommand::new();
    t.write("in.jsonl", b"{\"id\":\"a\",\"fp\":\"00000000000000ff\"}\n");
    assert_eq!(code(&t.run(&["import", "in.jsonl"])), 0);
    assert_eq!(code(&t.run(&["query", "--fp", "00000000000000fe"])), 0);
    assert_eq!(code(&t.run(&["query", "--fp", "ffffffffffffff00"])), 1);
    let o = t.run(&["query", "--k", "4", "--fp", "00000000000000fe"]);
    assert_eq!(code(&o), 2);
    assert!(stderr(&o).contains("--exhaustive"), "{}", stderr(&o));
    let o = t.run(&[
        "query",
        "--k",
        "8",
        "--exhaustive",
        "--json",
        "--fp",
        "0000000000000000",
    ]);
    assert_eq!(code(&o), 0);
    assert_eq!(json_lines(&o)[0]["distance"], 8);
    let o = t.run(&["query", "--fp", "xyz"]);
    assert_eq!(code(&o), 2);
    assert!(stderr(&o).contains("16 hexadecimal digits"));
}

#[test]
fn missing_and_foreign_stores_are_clear_errors() {
    let t = TestCommand::new();
    let o = t.run(&["query", "--fp", "00000000000000fe"]);
    assert_eq!(code(&o), 2);
    assert!(
        stderr(&o).contains("no store at") && stderr(&o).contains("simstore init"),
        "{}",
        stderr(&o)
    );
    assert!(!t.db().exists(), "a query must not create a store");
    std::fs::create_dir(t.db()).unwrap();
    std::fs::write(t.db().join("x"), b"x").unwrap();
    let o = t.run(&["import", "-"]);
    assert_eq!(code(&o), 2);
    assert!(
        stderr(&o).contains("is not a simstore store"),
        "{}",
        stderr(&o)
    );
}

#[test]
fn init_stats_delete() {
    let t = TestCommand::new();
    let o = t.run(&["init", "--k-max", "2", "--blocks", "5"]);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    assert_eq!(code(&t.run(&["init"])), 2, "init refuses an existing path");
    t.write(
        "in.jsonl",
        b"{\"id\":\"a\",\"fp\":\"00000000000000ff\"}\n{\"id\":\"b\",\"fp\":\"00000000000000fe\"}\n",
    );
    assert_eq!(code(&t.run(&["import", "in.jsonl"])), 0);
    let s = &json_lines(&t.run(&["stats", "--json"]))[0];
    assert_eq!(
        (
            s["docs"].as_u64(),
            s["k_max"].as_u64(),
            s["tables"].as_u64()
        ),
        (Some(2), Some(2), Some(10))
    );
    assert_eq!(code(&t.run(&["delete", "a", "nope"])), 1);
    assert_eq!(code(&t.run(&["delete", "b"])), 0);
    assert_eq!(json_lines(&t.run(&["stats", "--json"]))[0]["docs"], 0);
    assert_eq!(
        code(&t.run(&["init", "--k-max", "4", "--blocks", "4", "--db", "other.db"])),
        2
    );
}

#[test]
fn broken_pipe_is_not_an_error() {
    let t = TestCommand::new();
    let lines: String = (0..20_000)
        .map(|i| {
            format!(
                "{{\"id\":\"d{i}\",\"fp\":\"{:016x}\"}}\n",
                i as u64 * 0x0001_2345_6789
            )
        })
        .collect();
    t.write("in.jsonl", lines.as_bytes());
    assert_eq!(code(&t.run(&["import", "in.jsonl"])), 0);
    let mut child = t
        .command(&["query", "--batch", "in.jsonl"])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    drop(child.stdout.take());
    let o = child.wait_with_output().unwrap();
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    assert!(stderr(&o).is_empty(), "{}", stderr(&o));
}

/// Import of precomputed fingerprints, then `query --batch` of planted queries, equals brute
/// force. (Run at N = 200,000 by hand; see docs/benchmarks.md.)
#[test]
fn planted_batch_queries_equal_brute_force() {
    let n: usize = std::env::var("SIMSTORE_PLANTED_N")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(20_000);
    let mut r = rng(7);
    let mut fps: Vec<u64> = (0..n * 9 / 10).map(|_| r.random()).collect();
    fps.extend(clustered(&mut r, n / 100, 10, 5));
    let entries: Vec<(String, u64)> = fps
        .iter()
        .enumerate()
        .map(|(i, &f)| (format!("p{i}"), f))
        .collect();
    let t = TestCommand::new();
    let mut input = String::new();
    for (id, f) in &entries {
        input.push_str(&format!("{{\"id\":\"{id}\",\"fp\":\"{f:016x}\"}}\n"));
    }
    t.write("fps.jsonl", input.as_bytes());
    let o = t.run(&["import", "fps.jsonl"]);
    assert_eq!(code(&o), 0, "{}", stderr(&o));

    // Planted queries at distance 0..=4 from stored fingerprints, as bare hex and as records.
    let mut queries = Vec::new();
    let mut batch = String::new();
    for i in 0..500 {
        let base = entries[r.random_range(0..entries.len())].1;
        let q = flip(&mut r, base, i % 5);
        queries.push(q);
        if i % 2 == 0 {
            batch.push_str(&format!("{q:016x}\n"));
        } else {
            batch.push_str(&format!("{{\"id\":\"q{i}\",\"fp\":\"{q:016x}\"}}\n"));
        }
    }
    t.write("queries.txt", batch.as_bytes());
    let o = t.run(&["query", "--batch", "queries.txt", "--k", "3"]);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    let out = json_lines(&o);
    assert_eq!(out.len(), queries.len());
    let mut total = 0;
    for (i, (line, &q)) in out.iter().zip(&queries).enumerate() {
        let want_query = if i % 2 == 0 {
            Value::from(i as u64 + 1)
        } else {
            Value::from(format!("q{i}"))
        };
        assert_eq!(line["query"], want_query);
        let got: Vec<(u32, String)> = line["matches"]
            .as_array()
            .unwrap()
            .iter()
            .map(|m| {
                (
                    m["distance"].as_u64().unwrap() as u32,
                    m["id"].as_str().unwrap().to_owned(),
                )
            })
            .collect();
        let want = brute_force(&entries, q, 3);
        total += want.len();
        assert_eq!(got, want, "query {q:016x}");
    }
    assert!(
        total >= 300,
        "planted queries must find their neighbours ({total})"
    );
    // The fingerprints shown are the stored ones.
    let by_id: HashMap<&str, u64> = entries.iter().map(|(id, f)| (id.as_str(), *f)).collect();
    for m in out.iter().flat_map(|l| l["matches"].as_array().unwrap()) {
        let f = u64::from_str_radix(m["fp"].as_str().unwrap(), 16).unwrap();
        assert_eq!(by_id[m["id"].as_str().unwrap()], f);
    }
}

/// Regression: a title holding a tab and a line break forged an extra column and an extra
/// row in `query`'s tab-separated output (and an extra line in `get`'s). Fields are escaped.
#[test]
fn tabs_and_newlines_in_fields_cannot_forge_rows() {
    let t = TestCommand::new();
    let record = serde_json::json!({
        "id": "a\tb",
        "fp": "00000000000000ff",
        "title": "real title\t999\nFORGED\tROW",
        "url": "http://x/\\path",
    });
    t.write("in.jsonl", format!("{record}\n").as_bytes());
    assert_eq!(code(&t.run(&["import", "in.jsonl"])), 0);
    let o = t.run(&["query", "--fp", "00000000000000ff"]);
    assert_eq!(code(&o), 0);
    let out = String::from_utf8(o.stdout).unwrap();
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines.len(), 1, "{out:?}");
    let fields: Vec<&str> = lines[0].split('\t').collect();
    assert_eq!(
        fields,
        [
            "0",
            "a\\tb",
            "00000000000000ff",
            "real title\\t999\\nFORGED\\tROW",
            "http://x/\\\\path"
        ]
    );
    let o = t.run(&["get", "a\tb"]);
    assert_eq!(code(&o), 0);
    let out = String::from_utf8(o.stdout).unwrap();
    assert_eq!(out.lines().count(), 6, "{out:?}");
    assert!(
        out.contains("title:  real title\\t999\\nFORGED\\tROW\n"),
        "{out:?}"
    );
    // Other control characters and Unicode line separators, which some readers take for
    // line breaks (a NUL, a form feed, NEL, U+2028): escaped as `\u{HEX}` in `ids`.
    // A direction override or a zero-width space would show another id than the stored one.
    let odd = serde_json::json!({"id": "c\u{0}d\u{c}e\u{85}f\u{2028}g\u{202e}h\u{200b}", "fp": "00000000000000fe"});
    t.write("odd.jsonl", format!("{odd}\n").as_bytes());
    assert_eq!(code(&t.run(&["import", "odd.jsonl"])), 0);
    let o = t.run(&["ids"]);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    let out = String::from_utf8(o.stdout).unwrap();
    assert!(
        !out.contains(|c: char| c != '\n' && (c.is_control() || c == '\u{2028}')),
        "{out:?}"
    );
    assert_eq!(out.matches('\n').count(), 2, "{out:?}");
    assert!(
        out.contains("c\\u{0}d\\u{c}e\\u{85}f\\u{2028}g\\u{202e}h\\u{200b}\n"),
        "{out:?}"
    );
    // A message naming an id escapes it too.
    let o = t.run(&["delete", "gone\u{1b}[31m"]);
    assert_eq!(code(&o), 1);
    assert!(
        stderr(&o).contains("not stored: gone\\u{1b}[31m"),
        "{}",
        stderr(&o)
    );
}

/// The arguments of a `bench` of 1,000 fingerprints that takes well under a second, with
/// `extra` after them.
pub(crate) fn small_bench<'a>(extra: &[&'a str]) -> Vec<&'a str> {
    let small = [
        "bench",
        "--n",
        "1000",
        "--queries",
        "20",
        "--seconds",
        "0.1",
        "--cold",
        "0",
        "--check-queries",
        "20",
        "--brute-queries",
        "5",
    ];
    [&small[..], extra].concat()
}

/// `bench` removes the directory it made for its store, and leaves a `--dir` it was given
/// with what it held.
#[test]
fn bench_removes_its_own_directory_and_leaves_a_given_one() {
    let t = TestCommand::new();
    std::fs::create_dir(t.path("tmp")).unwrap();
    let o = t
        .command(&small_bench(&[]))
        .env("TMPDIR", t.path("tmp"))
        .output()
        .unwrap();
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    let left: Vec<_> = std::fs::read_dir(t.path("tmp")).unwrap().collect();
    assert!(left.is_empty(), "{left:?}");
    std::fs::create_dir(t.path("mine")).unwrap();
    t.write("mine/keep", b"mine");
    let o = t.run(&small_bench(&["--dir", "mine"]));
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    assert_eq!(std::fs::read(t.path("mine/keep")).unwrap(), b"mine");
    assert!(
        t.path("mine/bench.db").is_dir(),
        "a given --dir keeps the store"
    );
}
