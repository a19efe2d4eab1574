//! The store's quality mode at the surfaces: `init --quality`, `stats`, and the defaults of
//! `query`, `import --dedup`, a store's `dedup` and HTTP `/query`, `/check_and_insert` (the
//! mode's rule when no k or verify is given); `--verify` on `import --dedup` and on a store's
//! `dedup`.
//!
//! The data: an article, a copy of it with two words changed (6 bits away, beyond k_max = 3,
//! within the mode's reach of 8, its sketch ≥ 0.2 similar) and a decoy made of the article's
//! words in reverse order (the same fingerprint, distance 0, but no shingle in common).

use serde_json::{Value, json};

use crate::quality::ARTICLE;
use crate::util::{TestCommand, code, stderr};

/// The article with two words replaced: 6 bits away.
fn copy() -> String {
    ARTICLE
        .replace("optimistic", "changed48")
        .replace("spring,", "changed87")
}

/// The article's words in reverse order: the same bag of words (the same fingerprint),
/// other shingles.
fn reversed() -> String {
    ARTICLE.split(' ').rev().collect::<Vec<_>>().join(" ")
}

fn stdout(o: &std::process::Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn json_lines(o: &std::process::Output) -> Vec<Value> {
    stdout(o)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

/// `records` as JSONL, written to `name`.
fn write_records(t: &TestCommand, name: &str, records: &[(&str, &str)]) {
    let lines: Vec<String> = records
        .iter()
        .map(|(id, text)| json!({"id": id, "text": text}).to_string() + "\n")
        .collect();
    t.write(name, lines.concat().as_bytes());
}

/// The article, its copy and the decoy (ids "article", "copy", "decoy") as `in.jsonl`.
fn write_article_copy_decoy(t: &TestCommand) {
    let (copy, decoy) = (copy(), reversed());
    write_records(
        t,
        "in.jsonl",
        &[("article", ARTICLE), ("copy", &copy), ("decoy", &decoy)],
    );
}

/// The test data is what the module says: the copy 4..=8 bits away, the decoy at 0.
#[test]
fn the_copy_lies_beyond_k_max_and_the_decoy_at_zero() {
    let f = simstore::Fingerprinter::new();
    let fp = |t: &str| f.fingerprint(None, t).unwrap();
    let d = fp(ARTICLE).distance(fp(&copy()));
    assert!((4..=8).contains(&d), "the copy is {d} bits away");
    assert_eq!(fp(ARTICLE).distance(fp(&reversed())), 0);
    let s = |t: &str| f.sketch(None, t).unwrap();
    assert!(s(ARTICLE).similarity(&s(&copy())) >= 0.5);
    assert!(s(ARTICLE).similarity(&s(&reversed())) < 0.2);
}

#[test]
fn init_quality_records_the_mode_and_its_k_max() {
    let t = TestCommand::new();
    let o = t.run(&["init", "--quality", "high"]);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    assert!(stderr(&o).contains("quality high"), "{}", stderr(&o));
    let o = t.run(&["stats"]);
    assert!(
        stdout(&o)
            .contains("quality:        high (candidates within 3, and within 14 in the tables' spans, 28 probes of weak bits, any distance sharing one of 4 bands of the sketch; kept at sketch similarity 0.3, Chinese 0.25 + 0.025 a bit (0.8 below 16 shingles, 24 in Chinese; none below 4))"),
        "{}",
        stdout(&o)
    );
    let v = &json_lines(&t.run(&["stats", "--json"]))[0];
    assert_eq!(
        (v["quality"].as_str(), v["k_max"].as_u64()),
        (Some("high"), Some(3))
    );
    assert_eq!(
        v["quality_rule"],
        json!({"k": 3, "reach": 14, "min_similarity": 0.3, "probes": 28,
            "min_shingles": 16, "few_shingles_similarity": 0.8, "min_content_shingles": 4,
            "han_min_similarity": 0.25, "han_similarity_per_bit": 0.025, "han_min_shingles": 24, "bands": 4})
    );
    assert_eq!(v["band_tables"], 4, "a high store keeps 4 band tables: {v}");
    // The default is standard (k_max 3); --k-max overrides the mode's k_max.
    let standard = t.path("standard.db");
    assert_eq!(code(&t.run_on(&standard, &["init"])), 0);
    let v = &json_lines(&t.run_on(&standard, &["stats", "--json"]))[0];
    assert_eq!(
        (v["quality"].as_str(), v["k_max"].as_u64()),
        (Some("standard"), Some(3))
    );
    assert_eq!(
        v["band_tables"], 2,
        "a standard store keeps 2 band tables: {v}"
    );
    let wide = t.path("wide.db");
    assert_eq!(
        code(&t.run_on(&wide, &["init", "--quality", "high", "--k-max", "6"])),
        0
    );
    let v = &json_lines(&t.run_on(&wide, &["stats", "--json"]))[0];
    assert_eq!(
        (v["quality"].as_str(), v["k_max"].as_u64()),
        (Some("high"), Some(6))
    );
    let o = t.run_on(&t.path("bad.db"), &["init", "--quality", "best"]);
    assert_eq!(code(&o), 2);
    assert!(stderr(&o).contains("standard, high"), "{}", stderr(&o));
}

/// A default query applies the mode: the copy 6 bits away is found (with the similarity
/// checked) and the decoy at distance 0 is not; `--k 3` is "distance ≤ 3", as before.
#[test]
fn a_default_query_finds_the_copy_beyond_k_max_and_not_the_decoy() {
    let t = TestCommand::new();
    write_records(
        &t,
        "in.jsonl",
        &[("article", ARTICLE), ("decoy", &reversed())],
    );
    assert_eq!(code(&t.run(&["import", "in.jsonl"])), 0);
    let copy = copy();
    let o = t.run(&["query", "--json", &copy]);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    let found = json_lines(&o);
    assert_eq!(found.len(), 1, "{found:?}");
    assert_eq!(found[0]["id"], "article");
    assert_eq!(found[0]["distance"], 6);
    assert!(found[0]["similarity"].as_f64().unwrap() >= 0.2);
    let o = t.run(&["query", &copy]);
    assert!(stdout(&o).starts_with("6\tarticle\t"), "{}", stdout(&o));
    let o = t.run(&["query", "--exhaustive", "--json", &copy]);
    assert_eq!(json_lines(&o).len(), 1, "{}", stdout(&o));
    // The batch the same; a bare fingerprint has no sketch: within k_max only.
    let fp = simstore::Fingerprinter::new()
        .fingerprint(None, &copy)
        .unwrap();
    let batch = format!("{}\n{fp}\n", json!({"id": "q", "text": copy}));
    let o = t.run_stdin(&["query", "--batch", "-"], batch.as_bytes());
    let answers = json_lines(&o);
    assert_eq!(answers[0]["matches"][0]["id"], "article", "{answers:?}");
    assert_eq!(answers[0]["matches"].as_array().unwrap().len(), 1);
    assert_eq!(answers[1]["matches"], json!([]), "{answers:?}");
    // --k 3: the copy is too far; the decoy at 0 is "within 3".
    let o = t.run(&["query", "--k", "3", &copy]);
    assert_eq!(code(&o), 1, "{}", stdout(&o));
    assert!(stderr(&o).contains("within distance 3"), "{}", stderr(&o));
    let o = t.run(&["query", "--json", "--k", "3", ARTICLE]);
    let ids: Vec<Value> = json_lines(&o).iter().map(|m| m["id"].clone()).collect();
    assert_eq!(ids, [json!("article"), json!("decoy")]);
    assert!(!stdout(&o).contains("similarity"), "{}", stdout(&o));
}

/// `import --dedup` without --k applies the mode: the copy is a near duplicate (6 bits),
/// the decoy is new; with `--k 3` the reverse.
#[test]
fn import_dedup_follows_the_mode_unless_k_is_given() {
    let t = TestCommand::new();
    write_article_copy_decoy(&t);
    let o = t.run(&["import", "--dedup", "in.jsonl"]);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    assert_eq!(
        json_lines(&o),
        [json!({"id": "copy", "duplicate_of": "article", "distance": 6})]
    );
    assert!(
        stderr(&o).contains("(candidates within 3, and within 12 in the tables' spans, any distance sharing one of 2 bands of the sketch; kept at sketch similarity 0.3, Chinese 0.25 + 0.025 a bit (0.8 below 16 shingles, 24 in Chinese; none below 4))"),
        "{}",
        stderr(&o)
    );
    let plain = t.path("plain.db");
    let o = t.run_on(&plain, &["import", "--dedup", "--k", "3", "in.jsonl"]);
    assert_eq!(
        json_lines(&o),
        [json!({"id": "decoy", "duplicate_of": "article", "distance": 0})]
    );
}

/// `import --dedup --verify T`: within --k and at least T similar by sketch.
#[test]
fn import_dedup_verify_keeps_the_copy_out_and_stores_the_decoy() {
    let t = TestCommand::new();
    write_article_copy_decoy(&t);
    assert_eq!(code(&t.run(&["init", "--k-max", "8"])), 0);
    let o = t.run(&[
        "import", "--dedup", "--k", "8", "--verify", "0.5", "in.jsonl",
    ]);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    assert_eq!(
        json_lines(&o),
        [json!({"id": "copy", "duplicate_of": "article", "distance": 6})]
    );
    assert!(
        stderr(&o).contains("within k = 8, verified at 0.5"),
        "{}",
        stderr(&o)
    );
    assert!(
        t.run(&["get", "decoy"]).status.success(),
        "the decoy is stored"
    );
    // Without --k: within the store's k_max (8 here), verified.
    let again = t.path("again.db");
    assert_eq!(code(&t.run_on(&again, &["init", "--k-max", "8"])), 0);
    let o = t.run_on(
        &again,
        &["import", "--dedup", "--verify", "0.5", "in.jsonl"],
    );
    assert_eq!(json_lines(&o).len(), 1, "{}", stdout(&o));
    for (args, why) in [
        (&["import", "--verify", "0.5", "in.jsonl"][..], "--dedup"),
        (
            &["import", "--dedup", "--verify", "1.5", "in.jsonl"][..],
            "between 0 and 1",
        ),
    ] {
        let o = t.run(args);
        assert_eq!(code(&o), 2, "{args:?}");
        assert!(stderr(&o).contains(why), "{args:?}: {}", stderr(&o));
    }
}

/// A store's `dedup --verify T`: the pairs within k whose stored sketches are at least T
/// similar; a document stored from a fingerprint (no sketch) is in none.
#[test]
fn store_dedup_verify_keeps_similar_pairs_only() {
    let t = TestCommand::new();
    write_article_copy_decoy(&t);
    assert_eq!(code(&t.run(&["import", "in.jsonl"])), 0);
    let fp = simstore::Fingerprinter::new()
        .fingerprint(None, ARTICLE)
        .unwrap();
    t.write(
        "fp.jsonl",
        json!({"id": "bare", "fp": fp.to_string()})
            .to_string()
            .as_bytes(),
    );
    assert_eq!(code(&t.run(&["import", "fp.jsonl"])), 0);
    let pairs = |args: &[&str]| -> Vec<(String, String)> {
        let o = t.run(args);
        assert!(code(&o) < 2, "{args:?}: {}", stderr(&o));
        json_lines(&o)
            .iter()
            .map(|p| {
                (
                    p["a"].as_str().unwrap().into(),
                    p["b"].as_str().unwrap().into(),
                )
            })
            .collect()
    };
    let mut plain = pairs(&["dedup", "--pairs", "--k", "3"]);
    plain.sort();
    let p = |a: &str, b: &str| (a.to_owned(), b.to_owned());
    assert_eq!(
        plain,
        [
            p("article", "bare"),
            p("article", "decoy"),
            p("bare", "decoy")
        ]
    );
    // Given no --k or --verify, the store's mode: the copy (6 bits away, in a shared span,
    // similar sketch) pairs with the article, the decoy (distance 0, another text) does
    // not; the bare fingerprint (no sketch) pairs within k_max.
    let mut mode = pairs(&["dedup", "--pairs"]);
    mode.sort();
    assert_eq!(
        mode,
        [
            p("article", "bare"),
            p("article", "copy"),
            p("bare", "decoy")
        ]
    );
    let o = t.run(&["dedup"]);
    assert!(
        stderr(&o)
            .contains("pairs in the store's standard mode (candidates within 3, and within 12"),
        "{}",
        stderr(&o)
    );
    let verified = pairs(&["dedup", "--pairs", "--k", "8", "--verify", "0.5"]);
    assert_eq!(verified, [p("article", "copy")]);
    let o = t.run(&["dedup", "--json", "--k", "8", "--verify", "0.5"]);
    assert_eq!(
        json_lines(&o),
        [json!({"cluster": 0, "ids": ["article", "copy"]})]
    );
    assert!(
        stderr(&o).contains("pairs verified at 0.5"),
        "{}",
        stderr(&o)
    );
    let o = t.run(&["dedup", "--k", "3", "--verify", "0.5"]);
    assert_eq!(code(&o), 1, "no pair within 3 is verified: {}", stdout(&o));
}

/// HTTP: `/check_and_insert` and `/query` without "k" apply the mode; with "k" they are
/// "distance ≤ k"; "verify" on `/check_and_insert` as on `/query`.
#[test]
fn http_defaults_follow_the_mode() {
    let t = TestCommand::new();
    let s = t.serve(&[]);
    let h = crate::util::http();
    let post = |path: &str, body: Value| {
        crate::util::answer(
            h.post(s.at(path))
                .header("content-type", "application/json")
                .send(body.to_string()),
        )
    };
    let copy = copy();
    let (st, v) = post("/insert", json!({"id": "article", "text": ARTICLE}));
    assert_eq!(st, 200, "{v}");
    let (st, v) = post(
        "/check_and_insert",
        json!({"id": "c1", "text": copy, "k": 3}),
    );
    assert_eq!((st, v["status"].as_str()), (200, Some("new")), "{v}");
    let (st, v) = crate::util::answer(h.delete(s.at("/docs/c1")).call());
    assert_eq!(st, 200, "{v}");
    let (st, v) = post("/check_and_insert", json!({"id": "c2", "text": copy}));
    assert_eq!(st, 200, "{v}");
    assert_eq!(
        (
            v["status"].as_str(),
            v["of"].as_str(),
            v["distance"].as_u64()
        ),
        (Some("near_duplicate"), Some("article"), Some(6)),
        "{v}"
    );
    let (_, v) = post("/query", json!({"text": copy}));
    assert_eq!(v["matches"][0]["id"], "article", "{v}");
    assert!(
        v["matches"][0]["similarity"].as_f64().unwrap() >= 0.2,
        "{v}"
    );
    let (_, v) = post("/query", json!({"text": copy, "k": 3}));
    assert_eq!(v["matches"], json!([]), "{v}");
    // "verify": the decoy (distance 0, other shingles) is new.
    let decoy = reversed();
    let (st, v) = post(
        "/check_and_insert",
        json!({"id": "d", "text": decoy, "verify": 0.5}),
    );
    assert_eq!((st, v["status"].as_str()), (200, Some("new")), "{v}");
    let (st, v) = post(
        "/check_and_insert",
        json!({"id": "e", "text": decoy, "verify": 2}),
    );
    assert_eq!(st, 400, "{v}");
    let (st, v) = post("/insert", json!({"id": "f", "text": decoy, "verify": 0.5}));
    assert_eq!(st, 400, "{v}");
    assert!(v["error"].as_str().unwrap().contains("`verify`"), "{v}");
    let (_, v) = crate::util::answer(h.get(s.at("/stats")).call());
    assert_eq!(v["quality"], "standard", "{v}");
    assert_eq!(v["band_tables"], 2, "{v}");
}

/// A high-mode store of the former k_max 4 gets the mode's layout of today with
/// `relayout --k-max 3` (the mode's k_max); another k_max keeps the plain rule.
#[test]
fn relayout_to_the_modes_k_max_takes_the_modes_layout() {
    let t = TestCommand::new();
    let init = ["init", "--quality", "high", "--k-max", "4"];
    assert_eq!(
        code(&t.run(&[&init[..], &["--expected-docs", "10000000"]].concat())),
        0
    );
    let layout = |t: &TestCommand| {
        let v = &json_lines(&t.run(&["stats", "--json"]))[0];
        (
            v["k_max"].as_u64(),
            v["tables"].as_u64(),
            v["blocks"].clone(),
        )
    };
    assert_eq!(layout(&t).0, Some(4));
    let o = t.run(&["relayout", "--k-max", "3", "--expected-docs", "10000000"]);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    assert_eq!(
        layout(&t),
        (Some(3), Some(5), json!([10, 9, 9, 9, 9, 9, 9])),
        "the high mode's layout for 10M"
    );
    let o = t.run(&["relayout", "--k-max", "4", "--expected-docs", "10000000"]);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    assert_eq!(layout(&t).0, Some(4));
}
