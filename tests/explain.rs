//! `simstore explain`, `fingerprint --explain` and the similarity `query --verify` checked.

use serde_json::{Value, json};
use simstore::Fingerprinter;
use simstore::index::near::is_partial;
use simstore::text::explain::explain;

use crate::quality::ARTICLE;
use crate::util::{TestCommand, code, stderr};

const A: &str = "Home | News\nRain fell all night over the hills and the rivers rose by two metres before dawn. The roads along the valley were closed and the schools stayed shut on Monday morning.\nCopyright 2024 Example Inc. All rights reserved.\n";
const B: &str = "Rain fell all night over the hills and the rivers rose by three metres before dawn. The roads along the valley were closed and the schools stayed shut on Monday morning.\n";

fn out(o: &std::process::Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn fp(t: &TestCommand, text: &str) -> simstore::Fingerprint {
    out(&t.run(&["fingerprint", text])).trim().parse().unwrap()
}

#[test]
fn explain_shows_lines_features_distance_and_verdict() {
    let t = TestCommand::new();
    t.write("a.txt", A.as_bytes());
    t.write("b.txt", B.as_bytes());
    let o = t.run(&["explain", "--files", "a.txt", "b.txt"]);
    let text = out(&o);
    let distance = fp(&t, A).distance(fp(&t, B));
    assert!(
        distance > 3,
        "the example needs a distance over 3: {distance}"
    );
    assert_eq!(code(&o), 1, "{text}{}", stderr(&o));
    assert!(text.contains("lines (1 of 3 kept"), "{text}");
    assert!(text.contains("drop  copyright 2024"), "{text}");
    assert!(text.contains("features only in A: two ("), "{text}");
    assert!(text.contains("features only in B: three ("), "{text}");
    assert!(
        text.contains(&format!("Hamming distance: {distance} of 64")),
        "{text}"
    );
    assert!(
        text.contains("Jaccard estimate (shingle sketches): 0."),
        "{text}"
    );
    assert!(
        text.contains(&format!(
            "verdict at k = 3: not near duplicates (distance {distance} > 3)"
        )),
        "{text}"
    );
    // At a k that admits them: exit 0; JSON says the same.
    let k = distance.to_string();
    let o = t.run(&["explain", "--json", "--k", &k, "--text", A, B]);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    let v: Value = serde_json::from_str(&out(&o)).unwrap();
    assert_eq!(v["distance"], distance);
    assert_eq!(v["near_duplicates"], true);
    assert_eq!(v["differ"]["only_in_a"][0], "two");
    assert!(v["jaccard"].as_f64().unwrap() > 0.3, "{v}");
    // The texts' exact similarity as a dedup of files computes it: A's fingerprint misses
    // its chrome (more than a tenth of its tokens), so its whole text counts; B's is all of B.
    let f = simstore::Fingerprinter::new();
    let partial = |t: &str| is_partial(&f, &f.analyze(None, t).unwrap(), None);
    assert!(partial(A) && !partial(B));
    let b = f.shingle_sets(None, B, None);
    let exact = f.shingle_sets(None, A, Some("")).similarity(&b);
    assert!(exact < simstore::text::sketch::jaccard(&f.shingles(None, A), &b.cleaned));
    assert_eq!(v["jaccard_exact"].as_f64(), Some(exact), "{v}");
    assert!(
        text.contains(&format!(
            "Jaccard of the texts' shingles, exactly: {exact:.3}"
        )),
        "{text}"
    );
}

#[test]
fn explain_two_stored_ids_by_the_stores_rule() {
    let t = TestCommand::new();
    assert_eq!(code(&t.run(&["init", "--k-max", "8"])), 0);
    let records = format!(
        "{}\n{}\n",
        json!({"id": "a", "text": A}),
        json!({"id": "b", "text": B})
    );
    t.write("in.jsonl", records.as_bytes());
    assert_eq!(code(&t.run(&["import", "in.jsonl"])), 0);
    let distance = fp(&t, A).distance(fp(&t, B));
    assert!(
        distance <= 8,
        "the example needs a distance within 8: {distance}"
    );
    // The store's mode (standard, here with k_max 8): the sketches decide.
    let o = t.run(&["explain", "a", "b"]);
    let text = out(&o);
    assert_eq!(code(&o), 0, "{text}");
    assert!(
        text.contains(&format!("Hamming distance: {distance} ")),
        "{text}"
    );
    assert!(
        text.contains(&format!(
            "verdict by the store's quality mode standard (candidates within 8, and within 12 in the tables' spans, any distance sharing one of 2 bands of the sketch; kept at sketch similarity 0.3, Chinese 0.25 + 0.025 a bit (0.8 below 16 shingles, 24 in Chinese; none below 4)): near duplicates (distance {distance} <= k = 8; sketch similarity 0."
        )),
        "{text}"
    );
    assert!(text.contains("text not stored"), "{text}");
    assert!(
        !text.contains("exactly"),
        "a stored document keeps no text: {text}"
    );
    assert!(
        text.contains("Jaccard estimate (shingle sketches): 0."),
        "{text}"
    );
    // --k: "distance <= k", as before the modes.
    let o = t.run(&["explain", "--k", "8", "a", "b"]);
    assert!(
        out(&o).contains(&format!(
            "verdict at k = 8: near duplicates (distance {distance} <= 8)"
        )),
        "{}",
        out(&o)
    );
    let o = t.run(&["explain", "a", "nope"]);
    assert_eq!(code(&o), 2);
    assert!(
        stderr(&o).contains("no document with id \"nope\""),
        "{}",
        stderr(&o)
    );
}

/// The article with two words replaced: 6 bits away, in a span of the default store's
/// tables, sketches agreeing (the pair of `mode_cli`).
fn copy() -> String {
    ARTICLE
        .replace("optimistic", "changed48")
        .replace("spring,", "changed87")
}

/// The article's words in reverse order: its fingerprint, no shingle in common.
fn reversed() -> String {
    ARTICLE.split(' ').rev().collect::<Vec<_>>().join(" ")
}

/// An edit of the article 4 to 8 bits away with agreeing sketches that the default store's
/// tables (the standard mode's at 1M) put in no common span with it, sharing a band of the
/// sketch with it.
fn copy_apart() -> String {
    crate::util::article_edit(ARTICLE, false)
}

/// The verdict of a store's `explain` given no --k is the store's quality mode's, with the
/// part of the rule that decided: a copy 6 bits away is a near duplicate by its sketch, the
/// reversed decoy at distance 0 is not, an edit in no common span is, by a band of its
/// sketch, a document without a sketch within k_max is. JSON adds the rule and the
/// decision.
#[test]
fn explain_gives_the_verdict_of_the_stores_quality_mode() {
    let t = TestCommand::new();
    assert_eq!(code(&t.run(&["init"])), 0);
    let article_fp = fp(&t, ARTICLE).to_string();
    let (copy, decoy, apart) = (copy(), reversed(), copy_apart());
    let records: Vec<String> = [
        json!({"id": "article", "text": ARTICLE}),
        json!({"id": "copy", "text": copy}),
        json!({"id": "decoy", "text": decoy}),
        json!({"id": "apart", "text": apart}),
        json!({"id": "bare", "fp": article_fp}),
    ]
    .iter()
    .map(|r| format!("{r}\n"))
    .collect();
    t.write("in.jsonl", records.concat().as_bytes());
    assert_eq!(code(&t.run(&["import", "in.jsonl"])), 0);
    let mode = "verdict by the store's quality mode standard (candidates within 3, and within 12 in the tables' spans, any distance sharing one of 2 bands of the sketch; kept at sketch similarity 0.3, Chinese 0.25 + 0.025 a bit (0.8 below 16 shingles, 24 in Chinese; none below 4))";

    let o = t.run(&["explain", "article", "copy"]);
    assert_eq!(code(&o), 0, "{}{}", out(&o), stderr(&o));
    let want = format!(
        "{mode}: near duplicates (distance 6 > k = 3 but within reach 12, in a span of the store's tables; sketch similarity 0."
    );
    assert!(out(&o).contains(&want), "{}", out(&o));
    let v: Value =
        serde_json::from_str(&out(&t.run(&["explain", "--json", "article", "copy"]))).unwrap();
    assert_eq!(
        (
            &v["near_duplicates"],
            &v["k"],
            &v["distance"],
            &v["decided_by"],
            &v["quality"]
        ),
        (
            &json!(true),
            &json!(3),
            &json!(6),
            &json!("sketches_agree"),
            &json!("standard")
        )
    );
    assert_eq!(
        v["rule"],
        json!({"k": 3, "reach": 12, "min_similarity": 0.3,
            "min_shingles": 16, "few_shingles_similarity": 0.8, "min_content_shingles": 4,
            "han_min_similarity": 0.25, "han_similarity_per_bit": 0.025, "han_min_shingles": 24, "bands": 2})
    );
    assert!(v["similarity"].as_f64().unwrap() >= 0.2, "{v}");

    let o = t.run(&["explain", "article", "decoy"]);
    assert_eq!(code(&o), 1, "{}", out(&o));
    let want = format!("{mode}: not near duplicates (distance 0 <= k = 3; sketch similarity 0.");
    assert!(out(&o).contains(&want), "{}", out(&o));
    assert!(out(&o).contains(" < 0.3)"), "{}", out(&o));

    let o = t.run(&["explain", "--json", "article", "apart"]);
    assert_eq!(code(&o), 0, "{}", out(&o));
    let v: Value = serde_json::from_str(&out(&o)).unwrap();
    assert_eq!(v["decided_by"], "band_sketches_agree", "{v}");
    assert!(
        v["reason"]
            .as_str()
            .unwrap()
            .contains("the sketches share a band"),
        "{v}"
    );
    // Under --verify (no bands) the same pair is in no common span within k = 3.
    let o = t.run(&["explain", "--json", "--verify", "0.3", "article", "apart"]);
    assert_eq!(code(&o), 1, "{}", out(&o));

    let o = t.run(&["explain", "--json", "article", "bare"]);
    assert_eq!(code(&o), 0, "{}", out(&o));
    let v: Value = serde_json::from_str(&out(&o)).unwrap();
    assert_eq!(v["decided_by"], "within_k_unverifiable", "{v}");

    // The texts judged by the store's rule too.
    let o = t.run(&["explain", "--text", ARTICLE, &copy]);
    assert_eq!(code(&o), 0, "{}", out(&o));
    assert!(
        out(&o).contains(&format!("{mode}: near duplicates")),
        "{}",
        out(&o)
    );

    // --k and --verify: the explicit rules, no mode.
    let o = t.run(&["explain", "--k", "3", "article", "copy"]);
    assert_eq!(code(&o), 1);
    assert!(
        out(&o).contains("verdict at k = 3: not near duplicates (distance 6 > 3)"),
        "{}",
        out(&o)
    );
    assert_eq!(
        code(&t.run(&["explain", "--k", "3", "article", "decoy"])),
        0
    );
    let o = t.run(&[
        "explain", "--json", "--verify", "0.5", "--k", "8", "article", "copy",
    ]);
    assert_eq!(code(&o), 0, "{}", out(&o));
    let v: Value = serde_json::from_str(&out(&o)).unwrap();
    assert_eq!(
        (&v["decided_by"], &v["quality"]),
        (&json!("sketches_agree"), &Value::Null)
    );
    let o = t.run(&["explain", "--verify", "0.5", "article", "bare"]);
    assert_eq!(code(&o), 1);
    assert!(
        out(&o).contains("verdict within k = 3, verified at 0.5: not near duplicates"),
        "{}",
        out(&o)
    );
    let o = t.run(&["explain", "--verify", "2", "article", "copy"]);
    assert_eq!(code(&o), 2);
    assert!(stderr(&o).contains("between 0 and 1"), "{}", stderr(&o));
}

#[test]
fn fingerprint_explain_shows_what_drove_it() {
    let t = TestCommand::new();
    let o = t.run(&["fingerprint", "--explain", A]);
    let text = out(&o);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    assert!(
        text.starts_with(&format!("fingerprint: (text) fp {}\n", fp(&t, A))),
        "{text}"
    );
    assert!(text.contains("drop  home | news"), "{text}");
    assert!(text.contains("%  metres\n"), "{text}");
}

#[test]
fn the_explained_fingerprint_is_the_fingerprint_on_the_sample() {
    let f = Fingerprinter::new();
    let sample =
        std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/data/sample.jsonl")).unwrap();
    for line in sample.lines() {
        let v: Value = serde_json::from_str(line).unwrap();
        let (title, text) = (v["title"].as_str(), v["text"].as_str().unwrap_or(""));
        let e = explain(&f, title, text).unwrap();
        assert_eq!(
            e.fingerprint,
            f.fingerprint(title, text).unwrap(),
            "{}",
            v["id"]
        );
    }
}

#[test]
fn query_verify_prints_the_similarity_it_checked() {
    let t = TestCommand::new();
    let records = format!("{}\n", serde_json::json!({"id": "a", "text": A}));
    t.write("in.jsonl", records.as_bytes());
    assert_eq!(code(&t.run(&["import", "in.jsonl"])), 0);
    let o = t.run(&["query", "--json", "--verify", "0.3", A]);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    let v: Value = serde_json::from_str(out(&o).trim()).unwrap();
    assert_eq!(v["similarity"], 1.0, "{v}");
    let o = t.run(&["query", "--verify", "0.3", A]);
    assert!(out(&o).trim_end().ends_with("\t1.000"), "{}", out(&o));
    // The quality mode's rule verifies too: the similarity is shown; with --k alone, not.
    let o = t.run(&["query", "--json", A]);
    let v: Value = serde_json::from_str(out(&o).trim()).unwrap();
    assert_eq!(v["similarity"], 1.0, "{v}");
    let o = t.run(&["query", "--json", "--k", "3", A]);
    assert!(!out(&o).contains("similarity"), "{}", out(&o));
    // Batch answers carry it too.
    let batch = format!("{}\n", serde_json::json!({"id": "q", "text": A}));
    let o = t.run_stdin(
        &["query", "--verify", "0.3", "--batch", "-"],
        batch.as_bytes(),
    );
    let v: Value = serde_json::from_str(out(&o).trim()).unwrap();
    assert_eq!(v["matches"][0]["similarity"], 1.0, "{v}");
}

/// `explain --json` of `args`: its JSON, having exited 0 or 1.
fn explained(t: &TestCommand, args: &[&str]) -> Value {
    let o = t.run(args);
    assert!(matches!(code(&o), 0 | 1), "{args:?}: {}", stderr(&o));
    serde_json::from_str(&out(&o)).unwrap()
}

#[test]
fn explain_weighs_titles_as_import_does() {
    const TA: &str = "Valley floods close the schools";
    const TB: &str = "Storm report from the northern hills";
    let t = TestCommand::new();
    let (ra, rb) = (
        json!({"id": "a", "title": TA, "text": A}),
        json!({"id": "b", "title": TB, "text": B}),
    );
    t.write("a.jsonl", format!("{ra}\n").as_bytes());
    t.write("b.jsonl", format!("\n{rb}\n").as_bytes());
    t.write("both.jsonl", format!("{ra}\n{rb}\n").as_bytes());
    assert_eq!(code(&t.run(&["import", "both.jsonl"])), 0);
    let stored = explained(&t, &["explain", "--json", "a", "b"]);
    let fps =
        |v: &Value| [&v["a"]["fp"], &v["b"]["fp"], &v["distance"], &v["jaccard"]].map(Value::clone);
    let files = explained(&t, &["explain", "--json", "--files", "a.jsonl", "b.jsonl"]);
    assert_eq!(fps(&files), fps(&stored), "{files}");
    t.write(
        "a.jsonl.gz",
        &crate::inputs::gzip(format!("{ra}\n").as_bytes()),
    );
    let gz = explained(
        &t,
        &["explain", "--json", "--files", "a.jsonl.gz", "b.jsonl"],
    );
    assert_eq!(fps(&gz), fps(&stored), "{gz}");
    let texts = ["explain", "--json", "--text", A, B];
    let titled: Vec<&str> = texts
        .iter()
        .copied()
        .chain(["--title-a", TA, "--title-b", TB])
        .collect();
    assert_eq!(fps(&explained(&t, &titled)), fps(&stored));
    let untitled = explained(&t, &texts);
    assert_ne!(untitled["distance"], stored["distance"], "{untitled}");
    // A title given beats the file's own; stored ids take none.
    let retitled = [
        "explain",
        "--json",
        "--files",
        "a.jsonl",
        "b.jsonl",
        "--title-a",
        TB,
    ];
    assert_ne!(explained(&t, &retitled)["a"]["fp"], stored["a"]["fp"]);
    let o = t.run(&["explain", "a", "b", "--title-a", TA]);
    assert_eq!(code(&o), 2);
    assert!(
        stderr(&o).contains("--title-a and --title-b title"),
        "{}",
        stderr(&o)
    );
}

#[test]
fn explain_files_take_one_jsonl_record() {
    let t = TestCommand::new();
    let (ra, rb) = (json!({"id": "a", "text": A}), json!({"id": "b", "text": B}));
    t.write("two.jsonl", format!("{ra}\n{rb}\n").as_bytes());
    t.write("b.jsonl", format!("{rb}\n").as_bytes());
    let o = t.run(&["explain", "--files", "two.jsonl", "b.jsonl"]);
    assert_eq!(code(&o), 2);
    assert!(
        stderr(&o).contains("two.jsonl:2: a second record"),
        "{}",
        stderr(&o)
    );
    t.write("bad.jsonl", b"{\"id\": \"x\", \"text\": 3}\n");
    let o = t.run(&["explain", "--files", "bad.jsonl", "b.jsonl"]);
    assert_eq!(code(&o), 2);
    assert!(
        stderr(&o).contains("bad.jsonl:1: field \"text\""),
        "{}",
        stderr(&o)
    );
}
