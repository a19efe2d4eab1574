//! The rough edges a new user met (issue 23): hints name flags that exist, values that
//! cannot work are refused by the argument parser with the allowed range, defaults follow
//! the store, and errors say what the input was.

use crate::util::{TestCommand, code, stderr};

/// A store of k_max `k_max` holding `a` = ...00ff and `b` = ...ff00 (16 bits apart).
fn store_with_two(k_max: &str) -> TestCommand {
    let t = TestCommand::new();
    assert_eq!(code(&t.run(&["init", "--k-max", k_max])), 0);
    t.write(
        "in.jsonl",
        b"{\"id\":\"a\",\"fp\":\"00000000000000ff\"}\n{\"id\":\"b\",\"fp\":\"000000000000ff00\"}\n",
    );
    let o = t.run(&["import", "in.jsonl"]);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    t
}

#[test]
fn a_k_beyond_the_tables_names_commands_that_exist() {
    let t = store_with_two("3");
    for args in [
        &["dedup", "--k", "5"][..],
        &["import", "--dedup", "--k", "5", "in.jsonl"],
        &["query", "--k", "5", "--fp", "00000000000000ff"],
    ] {
        let o = t.run(args);
        let err = stderr(&o);
        assert_eq!(code(&o), 2, "{args:?}: {err}");
        // `dedup` and `import` have no --exhaustive: the hint names whole commands.
        assert!(!err.contains("use --exhaustive"), "{args:?}: {err}");
        assert!(
            err.contains("`simstore relayout --k-max 5`"),
            "{args:?}: {err}"
        );
        assert!(
            err.contains("`simstore query --exhaustive`"),
            "{args:?}: {err}"
        );
    }
    // Past what any layout answers (16), no relayout is offered: it would be refused.
    let o = t.run(&["query", "--k", "20", "--fp", "00000000000000ff"]);
    assert_eq!(code(&o), 2, "{}", stderr(&o));
    assert!(!stderr(&o).contains("relayout"), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("`simstore query --exhaustive`"),
        "{}",
        stderr(&o)
    );
}

#[test]
fn values_that_cannot_work_are_refused_with_the_range() {
    let t = store_with_two("3");
    for (args, range) in [
        (
            &[
                "query",
                "--k",
                "70",
                "--exhaustive",
                "--fp",
                "00000000000000ff",
            ][..],
            "0..=64",
        ),
        (&["dedup", "--k", "70"], "0..=16"),
        (&["dedup", "--k", "70", "in.jsonl"], "0..=16"),
        (
            &["query", "--limit", "0", "--fp", "00000000000000ff"],
            "1..",
        ),
        (&["relayout", "--k-max", "0"], "1..=16"),
        (&["init", "--k-max", "0"], "1..=16"),
    ] {
        let o = t.run(args);
        let err = stderr(&o);
        assert_eq!(code(&o), 2, "{args:?}: {err}");
        assert!(err.contains(range), "{args:?}: {err}");
        assert!(!err.contains("invalid layout"), "{args:?}: {err}");
    }
    // Nothing was changed by the refused relayout.
    let o = t.run(&["query", "--fp", "00000000000000fe"]);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
}

#[test]
fn query_k_defaults_to_the_stores_k_max() {
    // k_max = 1: a plain query (no --k) works, and answers within 1.
    let t = store_with_two("1");
    let o = t.run(&["query", "--fp", "00000000000000fe"]);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    assert!(String::from_utf8_lossy(&o.stdout).contains("\ta\t"));
    let o = t.run(&["query", "--fp", "00000000000000fc"]);
    assert_eq!(code(&o), 1, "{}", stderr(&o));
    assert!(stderr(&o).contains("within distance 1 "), "{}", stderr(&o));
    // The store's dedup follows its mode, exact within its k_max of 1.
    let o = t.run(&["dedup"]);
    assert_eq!(code(&o), 1, "{}", stderr(&o));
    assert!(
        stderr(&o).contains("(candidates within 1, "),
        "{}",
        stderr(&o)
    );
    let o = t.run(&["import", "--dedup", "in.jsonl"]);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
}

#[test]
fn fingerprints_may_carry_0x_and_bad_batch_lines_say_what_they_are() {
    let t = store_with_two("3");
    for fp in ["0x00000000000000ff", "0X00000000000000FF"] {
        let o = t.run(&["query", "--fp", fp]);
        assert_eq!(code(&o), 0, "{fp}: {}", stderr(&o));
    }
    let o = t.run_stdin(&["query", "--batch", "-"], b"not-a-fp\n00000000000000ff\n");
    let err = stderr(&o);
    assert!(
        err.contains("<stdin>:1: neither a JSON record")
            && err.contains("invalid fingerprint \"not-a-fp\""),
        "{err}"
    );
    assert!(!err.contains("invalid JSON"), "{err}");
    assert!(String::from_utf8_lossy(&o.stdout).contains("\"id\":\"a\""));
}

#[test]
fn a_dedup_whose_every_record_failed_is_an_error() {
    let t = TestCommand::new();
    t.write("bad.jsonl", b"{\"id\":\"x\",\"text\":\"\"}\nnot json\n");
    let o = t.run(&["dedup", "bad.jsonl"]);
    let err = stderr(&o);
    assert_eq!(code(&o), 2, "{err}");
    assert!(
        err.contains("no record of the input could be read (2 failed"),
        "{err}"
    );
    // One good record: no pairs, exit 1 as before.
    t.write(
        "one.jsonl",
        b"{\"id\":\"x\",\"fp\":\"00000000000000ff\"}\nnot json\n",
    );
    assert_eq!(code(&t.run(&["dedup", "one.jsonl"])), 1);
}

#[test]
fn output_reads_well() {
    let t = TestCommand::new();
    t.write("one.jsonl", b"{\"id\":\"a\",\"fp\":\"00000000000000ff\"}\n");
    let o = t.run(&["import", "one.jsonl"]);
    let err = stderr(&o);
    assert!(err.starts_with("read 1 record: stored 1 "), "{err}");
    assert!(
        err.trim_end().ends_with("the store holds 1 document"),
        "{err}"
    );
    // The spec by its version; in full on request.
    let o = t.run(&["stats"]);
    let out = String::from_utf8_lossy(&o.stdout).into_owned();
    let spec = out.lines().find(|l| l.starts_with("spec:")).unwrap();
    assert!(spec.len() < 60 && spec.contains(" v"), "{spec}");
    let o = t.run(&["stats", "--verbose"]);
    let out = String::from_utf8_lossy(&o.stdout).into_owned();
    let spec = out.lines().find(|l| l.starts_with("spec:")).unwrap();
    assert!(spec.len() > 200 && spec.contains("seed"), "{spec}");
    // Times as RFC 3339 (UTC), not Unix seconds.
    let o = t.run(&["get", "a"]);
    let out = String::from_utf8_lossy(&o.stdout).into_owned();
    let time = out.lines().find(|l| l.starts_with("time:")).unwrap();
    let stamp = time.trim_start_matches("time:").trim();
    assert!(
        stamp.len() == 20
            && stamp.starts_with("20")
            && stamp.ends_with('Z')
            && stamp.as_bytes()[10] == b'T',
        "{time}"
    );
}

#[test]
fn dedup_prints_readable_groups_with_titles() {
    let t = TestCommand::new();
    t.write(
        "in.jsonl",
        "{\"id\":\"a\",\"title\":\"Rain in Tucson\",\"fp\":\"00000000000000ff\"}\n\
         {\"id\":\"a-copy\",\"title\":\"UPDATE: Rain in Tucson\",\"fp\":\"00000000000000fe\"}\n\
         {\"id\":\"b\",\"title\":\"Other\",\"fp\":\"ffffffffffff0000\"}\n"
            .as_bytes(),
    );
    for args in [
        &["dedup", "--pretty", "in.jsonl"][..],
        &["dedup", "--pretty"],
    ] {
        if args.len() == 2 {
            assert_eq!(code(&t.run(&["import", "in.jsonl"])), 0);
        }
        let o = t.run(args);
        assert_eq!(code(&o), 0, "{}", stderr(&o));
        assert_eq!(
            String::from_utf8_lossy(&o.stdout),
            "cluster 1: 2 documents\n  a       Rain in Tucson\n  a-copy  UPDATE: Rain in Tucson\n",
            "{args:?}"
        );
        // Files: the standard mode's rule as a dataset's (0.6, every band of the sketch);
        // the store: its quality mode, without the band tables (the same pair:
        // fingerprints only, so within k_max).
        let within = match args.len() {
            3 => {
                "in the standard mode's rule (candidates within 3, and within 12 in the tables' spans, any distance sharing one of 15 bands of the sketch; kept at sketch similarity 0.6, Chinese 0.25 + 0.025 a bit, at least 0.55 (0.8 below 16 shingles, 24 in Chinese; only equal sketches below 4))"
            }
            _ => {
                "in the store's standard mode (candidates within 3, and within 12 in the tables' spans; kept at sketch similarity 0.3, Chinese 0.25 + 0.025 a bit (0.8 below 16 shingles, 24 in Chinese; none below 4))"
            }
        };
        assert!(
            stderr(&o).starts_with(&format!(
                "3 documents: 1 pair {within}, 1 cluster (largest 2)"
            )),
            "{}",
            stderr(&o)
        );
    }
    // Piped without --pretty: JSON lines, as before.
    let o = t.run(&["dedup", "in.jsonl"]);
    assert_eq!(
        String::from_utf8_lossy(&o.stdout),
        "{\"cluster\":0,\"ids\":[\"a\",\"a-copy\"]}\n"
    );
}

/// Whether the store holds a document `id` (`get` exits 0).
fn holds(t: &TestCommand, id: &str) -> bool {
    code(&t.run(&["get", id])) == 0
}

/// The number of documents the store holds (`stats --json`).
fn docs(t: &TestCommand) -> u64 {
    let o = t.run(&["stats", "--json"]);
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    v["docs"].as_u64().unwrap()
}

#[test]
fn a_file_has_one_id_however_its_path_is_spelled() {
    let t = TestCommand::new();
    let file = t.write(
        "doc.txt",
        b"Rivers of the north run cold and clear in spring.",
    );
    let abs = file.to_str().unwrap();
    for spelled in ["doc.txt", "./doc.txt", abs] {
        let o = t.run(&["import", spelled]);
        assert_eq!(code(&o), 0, "{spelled}: {}", stderr(&o));
    }
    assert_eq!(docs(&t), 1);
    assert!(holds(&t, "doc.txt"));
    // A directory: its name and the path inside it, however the directory is spelled.
    std::fs::create_dir_all(t.path("site/sub")).unwrap();
    t.write(
        "site/sub/a.txt",
        b"A page about compilers and their passes.",
    );
    let site = t.path("site");
    for spelled in ["site", "./site/", site.to_str().unwrap()] {
        let o = t.run(&["import", spelled]);
        assert_eq!(code(&o), 0, "{spelled}: {}", stderr(&o));
    }
    assert_eq!(docs(&t), 2);
    assert!(holds(&t, "site/sub/a.txt"));
}

#[test]
fn texts_from_stdin_get_their_own_ids() {
    let t = TestCommand::new();
    for text in [
        "The first text, about rivers.",
        "The second, about compilers.",
    ] {
        let o = t.run_stdin(&["import", "--format", "text", "-"], text.as_bytes());
        assert_eq!(code(&o), 0, "{}", stderr(&o));
    }
    // The first again: the same id (replaced, not added).
    let o = t.run_stdin(
        &["import", "--format", "text", "-"],
        b"The first text, about rivers.",
    );
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    assert_eq!(docs(&t), 2);
    let o = t.run(&[
        "query",
        "--json",
        "--k",
        "0",
        "The second, about compilers.",
    ]);
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let id = v["id"].as_str().unwrap();
    assert!(id.starts_with("stdin-") && id.len() == 22, "{v}");
}

#[test]
fn skipped_inputs_count_in_the_singular() {
    let t = TestCommand::new();
    std::fs::create_dir_all(t.path("site")).unwrap();
    t.write("site/a.txt", b"A page about compilers and their passes.");
    t.write("site/logo.png", b"\x89PNG");
    let o = t.run(&["import", "site"]);
    let err = stderr(&o);
    assert_eq!(code(&o), 0, "{err}");
    assert!(
        err.contains("skipped 1 (1 file in a directory that is not .html, .htm or .txt)"),
        "{err}"
    );
}

#[test]
fn the_server_counts_documents_in_the_singular() {
    let t = store_with_two("3");
    assert_eq!(code(&t.run(&["delete", "b"])), 0);
    let mut s = t.serve(&[]);
    s.signal("TERM");
    let (_, err) = s.wait();
    assert!(err.contains("(store "), "{err}");
    assert!(err.contains(", 1 document;"), "{err}");
    assert!(err.trim_end().ends_with("holds 1 document"), "{err}");
}

#[test]
fn http_bodies_with_unknown_fields_are_refused_naming_the_field() {
    let t = TestCommand::new();
    let s = t.serve(&[]);
    let h = crate::util::http();
    let post = |path: &str, body: &str| {
        crate::util::answer(
            h.post(s.at(path))
                .header("content-type", "application/json")
                .send(body),
        )
    };
    for (path, body) in [
        ("/query", r#"{"text": "some words here", "verfy": 0.4}"#),
        (
            "/query/batch",
            r#"[{"text": "some words here", "verfy": 0.4}]"#,
        ),
        (
            "/insert",
            r#"{"id": "a", "text": "some words here", "verify": 0.4}"#,
        ),
        // `k` is check-and-insert's, not a document's.
        (
            "/insert",
            r#"{"id": "a", "text": "some words here", "k": 3}"#,
        ),
    ] {
        let (st, v) = post(path, body);
        let field = if body.contains("\"k\"") {
            "k"
        } else if body.contains("verfy") {
            "verfy"
        } else {
            "verify"
        };
        assert_eq!(st, 400, "{path}: {v}");
        assert!(
            v["error"]
                .as_str()
                .unwrap_or("")
                .contains(&format!("unknown field `{field}`")),
            "{path}: {v}"
        );
    }
    // A document's field given twice is refused too, by both writes.
    for path in ["/insert", "/check_and_insert"] {
        let (st, v) = post(path, r#"{"id": "a", "text": "one", "text": "two"}"#);
        assert_eq!(st, 400, "{path}: {v}");
        let error = v["error"].as_str().unwrap_or("");
        assert!(error.contains("duplicate field `text`"), "{path}: {v}");
    }
    // Nothing was stored; the documented fields still work.
    let (st, v) = post(
        "/insert",
        r#"{"id": "a", "text": "some words here", "url": "u"}"#,
    );
    assert_eq!(st, 200, "{v}");
    let (st, v) = post(
        "/query",
        r#"{"id": "a", "url": "u", "text": "some words here", "k": 1}"#,
    );
    assert_eq!(
        (st, v["matches"].as_array().map(Vec::len)),
        (200, Some(1)),
        "{v}"
    );
    let (st, v) = post(
        "/check_and_insert",
        r#"{"id": "b", "text": "some words here", "k": 1}"#,
    );
    assert_eq!(
        (st, v["status"].as_str()),
        (200, Some("exact_duplicate")),
        "{v}"
    );
}

/// HTTP `/query` takes `"verify"` as `query --verify` does: matches below the sketch
/// similarity are dropped, the others say theirs; it needs a text.
#[test]
fn http_query_verifies_with_the_sketch() {
    let t = TestCommand::new();
    let s = t.serve(&[]);
    let h = crate::util::http();
    let post = |path: &str, body: serde_json::Value| {
        crate::util::answer(
            h.post(s.at(path))
                .header("content-type", "application/json")
                .send(body.to_string()),
        )
    };
    // 300 words, one of them changed: 1 bit apart, a sketch similarity below 1.
    let words: Vec<String> = (0..300)
        .map(|i| format!("word{}", i * 7919 % 1000))
        .collect();
    let text = words.join(" ");
    let (st, v) = post("/insert", serde_json::json!({"id": "a", "text": text}));
    assert_eq!(st, 200, "{v}");
    let mut edited = words.clone();
    edited[150] = "changed".into();
    let edited = edited.join(" ");
    let (st, v) = post("/query", serde_json::json!({"text": edited, "verify": 0.5}));
    assert_eq!(st, 200, "{v}");
    let m = &v["matches"][0];
    assert_eq!(m["id"], "a", "{v}");
    let sim = m["similarity"].as_f64().expect("a similarity");
    assert!((0.5..1.0).contains(&sim), "{v}");
    let (_, v) = post("/query", serde_json::json!({"text": edited, "verify": 1.0}));
    assert_eq!(v["matches"].as_array().map(Vec::len), Some(0), "{v}");
    let (_, v) = post("/query", serde_json::json!({"text": edited, "k": 3}));
    assert!(v["matches"][0].get("similarity").is_none(), "{v}");
    let (st, v) = post(
        "/query/batch",
        serde_json::json!([{"text": edited, "verify": 0.5}]),
    );
    assert_eq!(st, 200, "{v}");
    assert_eq!(v["results"][0]["matches"][0]["id"], "a", "{v}");
    let (st, v) = post(
        "/query",
        serde_json::json!({"fp": "0123456789abcdef", "verify": 0.5}),
    );
    assert_eq!(st, 422, "{v}");
    let (st, v) = post("/query", serde_json::json!({"text": edited, "verify": 1.5}));
    assert_eq!(st, 400, "{v}");
}
