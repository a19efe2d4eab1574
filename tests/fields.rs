//! `--text-field` and `--id-field` of `import`, `query --batch` and `fingerprint --batch`:
//! records in another shape than simstore's, and records without ids.

use std::process::Output;

use serde_json::{Value, json};

use crate::util::{TestCommand, code, stderr};

const TEXTS: [&str; 3] = [
    "Rain fell all night over the hills and the rivers rose by two metres before dawn.",
    "The city council voted to build a new library beside the old market square.",
    "A rare orchid flowered in the botanical garden for the first time in forty years.",
];

const MAPPING: [&str; 4] = ["--text-field", "content", "--id-field", "url"];

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn json_lines(o: &Output) -> Vec<Value> {
    stdout(o)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

fn url(i: usize) -> String {
    format!("https://e.com/{i}")
}

/// The records of [`TEXTS`] as `{"url", "content"}`, and as `{"id", "text"}`.
fn datasets(t: &TestCommand) {
    let (mut mapped, mut own) = (String::new(), String::new());
    for (i, text) in TEXTS.iter().enumerate() {
        mapped += &format!(
            "{}\n",
            json!({ "url": url(i), "content": text, "lang": "en" })
        );
        own += &format!("{}\n", json!({ "id": url(i), "text": text }));
    }
    t.write("mapped.jsonl", mapped.as_bytes());
    t.write("own.jsonl", own.as_bytes());
}

/// `args` then the field mapping.
fn mapped<'a>(args: &[&'a str]) -> Vec<&'a str> {
    args.iter().copied().chain(MAPPING).collect()
}

/// The stored fingerprint of `id`, if stored.
fn stored_fp(t: &TestCommand, id: &str) -> Option<String> {
    let o = t.run(&["get", "--json", id]);
    (code(&o) == 0).then(|| json_lines(&o)[0]["fp"].as_str().unwrap().to_owned())
}

#[test]
fn fingerprint_batch_reads_the_named_fields() {
    let t = TestCommand::new();
    datasets(&t);
    let o = t.run(&mapped(&["fingerprint", "--batch", "mapped.jsonl"]));
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    let own = t.run(&["fingerprint", "--batch", "own.jsonl"]);
    assert_eq!(code(&own), 0, "{}", stderr(&own));
    assert_eq!(json_lines(&o), json_lines(&own));
    assert_eq!(json_lines(&o).len(), TEXTS.len());
    // Without the mapping the records have no text.
    let o = t.run(&["fingerprint", "--batch", "mapped.jsonl"]);
    assert_eq!(code(&o), 2);
    assert!(
        stderr(&o).contains("mapped.jsonl:1: nothing to fingerprint"),
        "{}",
        stderr(&o)
    );
}

#[test]
fn import_and_query_batch_read_the_named_fields() {
    let t = TestCommand::new();
    datasets(&t);
    let o = t.run(&mapped(&["import", "mapped.jsonl"]));
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    for (i, text) in TEXTS.iter().enumerate() {
        let fp = stdout(&t.run(&["fingerprint", text])).trim().to_owned();
        assert_eq!(stored_fp(&t, &url(i)), Some(fp), "record {i}");
    }
    let o = t.run(&mapped(&["query", "--json", "--batch", "mapped.jsonl"]));
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    let answers = json_lines(&o);
    assert_eq!(answers.len(), TEXTS.len());
    for (i, a) in answers.iter().enumerate() {
        assert_eq!(a["query"], url(i), "{a}");
        assert_eq!(a["matches"][0]["id"], url(i), "{a}");
        assert_eq!(a["matches"][0]["distance"], 0, "{a}");
    }
}

#[test]
fn a_record_without_an_id_gets_its_line_number_and_import_its_input_too() {
    let t = TestCommand::new();
    let lines = [
        json!({ "id": "named", "text": TEXTS[0] }).to_string(),
        String::new(),
        json!({ "text": TEXTS[1] }).to_string(),
        json!({ "id": 42, "text": TEXTS[2] }).to_string(),
    ];
    t.write("in.jsonl", format!("{}\n", lines.join("\n")).as_bytes());
    let o = t.run(&["import", "in.jsonl"]);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    let fp = |text: &str| stdout(&t.run(&["fingerprint", text])).trim().to_owned();
    assert_eq!(stored_fp(&t, "named"), Some(fp(TEXTS[0])));
    assert_eq!(
        stored_fp(&t, "in.jsonl:3"),
        Some(fp(TEXTS[1])),
        "line 3, blank line 2 counted"
    );
    assert_eq!(
        stored_fp(&t, "42"),
        Some(fp(TEXTS[2])),
        "a number as written"
    );
    let o = t.run(&["fingerprint", "--batch", "in.jsonl"]);
    let ids: Vec<Value> = json_lines(&o).iter().map(|v| v["id"].clone()).collect();
    assert_eq!(ids, [json!("named"), json!("3"), json!("42")]);
    // Two inputs' records without ids are stored apart, not one over the other.
    t.write("again.jsonl", format!("{}\n", lines.join("\n")).as_bytes());
    assert_eq!(code(&t.run(&["import", "in.jsonl", "again.jsonl"])), 0);
    assert_eq!(stored_fp(&t, "again.jsonl:3"), stored_fp(&t, "in.jsonl:3"));
    assert!(stored_fp(&t, "3").is_none());
    // Through --id-field too: a record without that field is named by its line.
    t.write(
        "urls.jsonl",
        format!("{}\n", json!({ "id": "ignored", "text": TEXTS[0] })).as_bytes(),
    );
    let o = t.run(&["fingerprint", "--batch", "urls.jsonl", "--id-field", "url"]);
    assert_eq!(json_lines(&o)[0]["id"], "1", "{}", stderr(&o));
}

#[test]
fn a_missing_text_field_names_file_and_line() {
    let t = TestCommand::new();
    let input = format!(
        "{}\n{}\n",
        json!({ "url": url(0), "content": TEXTS[0] }),
        json!({ "url": url(1), "text": TEXTS[1] })
    );
    t.write("in.jsonl", input.as_bytes());
    let want = "error: in.jsonl:2: field \"content\" (--text-field) is missing";
    let o = t.run(&mapped(&["import", "in.jsonl"]));
    assert_eq!(code(&o), 1, "{}", stderr(&o));
    assert!(stderr(&o).contains(want), "{}", stderr(&o));
    assert!(stored_fp(&t, &url(0)).is_some());
    assert!(stored_fp(&t, &url(1)).is_none());
    for batch in [["fingerprint", "--batch"], ["query", "--batch"]] {
        let o = t.run(&mapped(&[batch[0], batch[1], "in.jsonl"]));
        assert_eq!(code(&o), 2, "{batch:?}: {}", stderr(&o));
        assert!(stderr(&o).contains(want), "{batch:?}: {}", stderr(&o));
    }
}

#[test]
fn the_fields_apply_to_jsonl_lines_only() {
    let t = TestCommand::new();
    t.write("page.txt", TEXTS[0].as_bytes());
    let o = t.run(&mapped(&["import", "page.txt"]));
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    assert!(stored_fp(&t, "page.txt").is_some());
    // Without --batch there are no records to map.
    let o = t.run(&mapped(&["fingerprint", TEXTS[0]]));
    assert_eq!(code(&o), 2);
    assert!(
        stderr(&o).contains("--text-field applies to the JSONL records of --batch"),
        "{}",
        stderr(&o)
    );
    let o = t.run(&["query", "--id-field", "url", TEXTS[0]]);
    assert_eq!(code(&o), 2);
    assert!(
        stderr(&o).contains("--id-field applies to the JSONL records of --batch"),
        "{}",
        stderr(&o)
    );
}
