//! Detection quality: `simstore eval` counts exactly on a small labelled set of our own, and
//! (only where the development set `../shared/data/dev` exists) spec v2 keeps its measured
//! precision and recall at k = 3.

use std::path::Path;

use serde_json::{Value, json};

use crate::util::{TestCommand, checked};

/// A labelled set in the development set's format: one article, a copy inside page chrome,
/// a copy with a timestamp line, and an unrelated article inside the same chrome.
fn write_small_set(t: &TestCommand) -> std::path::PathBuf {
    let article = "The city council approved a new budget on Tuesday, adding funds for parks and libraries.\nRoad repairs across the northern districts will start in the spring, the mayor said.";
    let other = "Heavy rain flooded several streets near the river on Sunday night, and two bridges were closed.\nEngineers will inspect the embankments before traffic is allowed back, officials said.";
    let chrome = |body: &str| {
        format!(
            "Home | World | Business | Sport | Weather | Contact us\n{body}\nCopyright (c) 2026 Example Inc. All rights reserved."
        )
    };
    let docs = [
        json!({"id": "a", "lang": "en", "title": "Budget approved", "text": article}),
        json!({"id": "c", "lang": "en", "title": "Flooding", "text": other}),
    ];
    let variants = [
        json!({"id": "a-chrome", "lang": "en", "title": "Budget approved | Example", "text": chrome(article), "base_id": "a"}),
        json!({"id": "a-time", "lang": "en", "title": "Budget approved", "text": format!("Published Mar 22, 2020 10:35 | 135,375 views | 4302 comments\n{article}"), "base_id": "a"}),
        json!({"id": "c-chrome", "lang": "en", "title": "Flooding", "text": chrome(other), "base_id": "c"}),
    ];
    let pairs = [
        json!({"a": "a", "b": "a-chrome", "label": 1, "class": "boiler_both", "lang": "en"}),
        json!({"a": "a", "b": "a-time", "label": 1, "class": "timestamp_counter", "lang": "en"}),
        json!({"a": "a-chrome", "b": "c-chrome", "label": 0, "class": "neg_shared_template", "lang": "en"}),
        json!({"a": "a", "b": "missing", "label": 1, "class": "boiler_both", "lang": "en"}),
    ];
    let lines = |v: &[Value]| {
        v.iter()
            .map(|x| x.to_string() + "\n")
            .collect::<String>()
            .into_bytes()
    };
    std::fs::create_dir_all(t.path("set")).unwrap();
    t.write("set/docs.jsonl", &lines(&docs));
    t.write("set/variants.jsonl", &lines(&variants));
    t.write("set/pairs.jsonl", &lines(&pairs));
    t.path("set")
}

#[test]
fn eval_counts_a_small_labelled_set() {
    let t = TestCommand::new();
    let dir = write_small_set(&t);
    let report = t.path("report.json");
    let out = checked(t.run(&[
        "eval",
        dir.to_str().unwrap(),
        "--json",
        report.to_str().unwrap(),
    ]));
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.contains("spec v2 ("), "{stdout}");
    assert!(
        stdout.contains("3 pairs (1 naming unknown documents"),
        "{stdout}"
    );
    let r: Value = serde_json::from_slice(&std::fs::read(&report).unwrap()).unwrap();
    assert_eq!(r["spec_version"], 2);
    assert_eq!(r["pairs"], 3);
    assert_eq!(r["missing"], 1);
    // Chrome and timestamps do not move the fingerprint: both copies at distance 0, the
    // other article inside the same chrome far away.
    let k0 = &r["overall"][0];
    assert_eq!((k0["tp"].as_u64(), k0["fp"].as_u64()), (Some(2), Some(0)));
    assert_eq!(k0["recall"], 1.0);
    let k3 = &r["by_class"]["en:neg_shared_template"][3];
    assert_eq!(k3["false_positive_rate"], 0.0);
    assert_eq!(r["overall"].as_array().unwrap().len(), 9, "k = 0..8");

    // Two-stage: the sketches of the chrome copies agree, so verification keeps them.
    let out = checked(t.run(&["eval", dir.to_str().unwrap(), "--verify", "0.3"]));
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.contains("two-stage"), "{stdout}");

    // A directory without the files says what it needs.
    let out = t.run(&["eval", t.path("nowhere").to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("docs.jsonl.gz or docs.jsonl"));
}

/// Spec v2 on the development set, k = 3: the figures of docs/quality.md must not regress.
/// Skips when the development set is not there (it is never part of the repository).
#[test]
fn dev_set_quality_holds_when_present() {
    let dev = Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/data/dev");
    if !dev.join("pairs.jsonl.gz").is_file() {
        eprintln!("skipped: {} is absent", dev.display());
        return;
    }
    let t = TestCommand::new();
    let report = t.path("dev.json");
    checked(t.run(&[
        "eval",
        dev.to_str().unwrap(),
        "--json",
        report.to_str().unwrap(),
    ]));
    let r: Value = serde_json::from_slice(&std::fs::read(&report).unwrap()).unwrap();
    let k3 = &r["overall"][3];
    let (p, f1) = (
        k3["precision"].as_f64().unwrap(),
        k3["f1"].as_f64().unwrap(),
    );
    assert!(p >= 0.99, "precision {p}");
    assert!(f1 >= 0.77, "F1 {f1}");
    for (class, per_k) in r["by_class"].as_object().unwrap() {
        if class.contains("template") {
            let fpr = per_k[3]["false_positive_rate"].as_f64().unwrap();
            assert!(fpr <= 0.005, "{class}: false-positive rate {fpr}");
        }
    }
}
