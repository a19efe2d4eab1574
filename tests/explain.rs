//! `simstore explain`, `fingerprint --explain` and the similarity `query --verify` checked.

use serde_json::Value;
use simstore::Fingerprinter;
use simstore::text::explain::explain;

use crate::util::{TestCommand, code, stderr};

const A: &str = "Home | News\nRain fell all night over the hills and the rivers rose by two metres before dawn.\nCopyright 2024 Example Inc. All rights reserved.\n";
const B: &str =
    "Rain fell all night over the hills and the rivers rose by three metres before dawn.\n";

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
}

#[test]
fn explain_two_stored_ids_at_the_stores_k() {
    let t = TestCommand::new();
    assert_eq!(code(&t.run(&["init", "--k-max", "8"])), 0);
    let records = format!(
        "{}\n{}\n",
        serde_json::json!({"id": "a", "text": A}),
        serde_json::json!({"id": "b", "text": B})
    );
    t.write("in.jsonl", records.as_bytes());
    assert_eq!(code(&t.run(&["import", "in.jsonl"])), 0);
    let o = t.run(&["explain", "a", "b"]);
    let text = out(&o);
    let distance = fp(&t, A).distance(fp(&t, B));
    assert_eq!(code(&o), if distance <= 8 { 0 } else { 1 }, "{text}");
    assert!(
        text.contains(&format!("Hamming distance: {distance} ")),
        "{text}"
    );
    assert!(text.contains("verdict at k = 8: "), "{text}");
    assert!(text.contains("text not stored"), "{text}");
    assert!(
        text.contains("Jaccard estimate (shingle sketches): 0."),
        "{text}"
    );
    let o = t.run(&["explain", "a", "nope"]);
    assert_eq!(code(&o), 2);
    assert!(
        stderr(&o).contains("no document with id \"nope\""),
        "{}",
        stderr(&o)
    );
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
