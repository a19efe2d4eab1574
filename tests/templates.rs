//! Template-sharing pages must not merge: articles generated from one site's templates
//! (`data/gen_sample.py` with several seeds: shared chrome, shared stock sentences, one
//! topic's dominant words) checked into a store of the default quality mode, as a crawler
//! does. A page is only ever reported as a copy of its own article.

use std::collections::HashMap;

use serde_json::Value;

use crate::scripts::gen_sample_seeded;
use crate::util::TestCommand;

/// The article a generated record belongs to: `zh-0007` for itself and its variants
/// `zh-0007-v2`, prefixed by the seed.
fn article(id: &str) -> &str {
    match id.match_indices("-v").last() {
        Some((i, _)) => &id[..i],
        None => id,
    }
}

/// Generates `N_BASE` articles per language for each seed, ids prefixed by the seed.
fn corpus(t: &TestCommand) -> Vec<String> {
    let mut lines = Vec::new();
    for seed in [11u64, 12, 13] {
        let out = t.path(&format!("seed{seed}.jsonl"));
        gen_sample_seeded(Some(120), Some(seed), &out);
        for line in std::fs::read_to_string(&out).unwrap().lines() {
            let mut v: Value = serde_json::from_str(line).unwrap();
            v["id"] = format!("s{seed}-{}", v["id"].as_str().unwrap()).into();
            lines.push(v.to_string());
        }
    }
    lines
}

/// `import --dedup` of the corpus into a store with `init_args`: per reported copy, the
/// article of the copy and of what it was reported a copy of.
fn copies(
    t: &TestCommand,
    db: &str,
    init_args: &[&str],
    dedup_args: &[&str],
) -> Vec<(String, String)> {
    let db = t.path(db);
    let mut args = vec!["init"];
    args.extend_from_slice(init_args);
    assert!(t.run_on(&db, &args).status.success());
    let all = t.path("all.jsonl");
    let mut args = vec!["import", "--dedup", all.to_str().unwrap()];
    args.extend_from_slice(dedup_args);
    let o = t.run_on(&db, &args);
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    String::from_utf8_lossy(&o.stdout)
        .lines()
        .map(|l| {
            let v: Value = serde_json::from_str(l).unwrap();
            let id = v["id"].as_str().unwrap();
            let of = v["duplicate_of"].as_str().unwrap();
            (article(id).to_owned(), article(of).to_owned())
        })
        .collect()
}

#[test]
fn template_sharing_articles_are_never_merged_by_the_default_mode() {
    let t = TestCommand::new();
    let lines = corpus(&t);
    t.write("all.jsonl", (lines.join("\n") + "\n").as_bytes());
    let variants = lines.iter().filter(|l| l.contains("-v")).count();
    for (db, init) in [
        ("standard.db", &["--quality", "standard"][..]),
        ("high.db", &["--quality", "high"][..]),
    ] {
        let found = copies(&t, db, init, &[]);
        let merged: Vec<_> = found.iter().filter(|(a, b)| a != b).collect();
        assert!(
            merged.is_empty(),
            "{db}: different articles merged: {merged:?}"
        );
        // The mode still finds the reposts (a variant is at most a light edit).
        assert!(
            found.len() * 10 >= variants * 9,
            "{db}: {} of {variants} copies found",
            found.len()
        );
    }
    // The corpus is hard: "distance <= 3" alone merges different articles.
    let plain = copies(&t, "plain.db", &[], &["--k", "3"]);
    let merged: HashMap<_, _> = plain.iter().filter(|(a, b)| a != b).cloned().collect();
    assert!(
        !merged.is_empty(),
        "plain k = 3 merged no two articles: the test has no teeth"
    );
}
