//! `simstore export` / `simstore ids` and `Store::scan_by_seq` / `Store::scan_by_id`: every
//! document out, in both orders, resumed where a run stopped, and back in.

use serde_json::Value;
use simstore::{DocMeta, Fingerprint};

use crate::util::{BACKENDS, TestCommand, code, new_store, stderr};

/// Documents with texts (a title with a comma and a quote), one given as a fingerprint;
/// ids not in insertion order.
const INPUT: &str = r#"{"id": "m", "title": "Rain, \"heavy\" rain", "text": "Rain fell all night over the hills and the rivers rose.", "url": "https://e.com/m"}
{"id": "b", "text": "A page about compilers, register allocation and instruction scheduling."}
{"id": "z", "fp": "00000000000000ff"}
{"id": "a", "text": "The mountains keep their snow until June, and the passes stay closed."}
{"id": "k", "text": "Shepherds move their flocks to the high meadows in summer."}
"#;

fn store() -> TestCommand {
    let t = TestCommand::new();
    t.write("in.jsonl", INPUT.as_bytes());
    let o = t.run(&["import", "in.jsonl"]);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    t
}

fn lines(t: &TestCommand, args: &[&str]) -> Vec<String> {
    let o = t.run(args);
    assert_eq!(code(&o), 0, "{args:?}: {}", stderr(&o));
    String::from_utf8(o.stdout)
        .unwrap()
        .lines()
        .map(str::to_owned)
        .collect()
}

fn json(line: &str) -> Value {
    serde_json::from_str(line).unwrap()
}

#[test]
fn export_writes_every_document_in_seq_and_id_order() {
    let t = store();
    let by_seq: Vec<Value> = lines(&t, &["export"]).iter().map(|l| json(l)).collect();
    let ids: Vec<&str> = by_seq.iter().map(|v| v["id"].as_str().unwrap()).collect();
    assert_eq!(ids, ["m", "b", "z", "a", "k"]);
    let m = &by_seq[0];
    assert_eq!(m["title"], "Rain, \"heavy\" rain");
    assert_eq!(m["url"], "https://e.com/m");
    assert_eq!(m["length"], 55);
    assert!(m["time"].as_u64().unwrap() > 1_700_000_000, "{m}");
    assert_eq!(m["content_hash"].as_str().unwrap().len(), 32, "{m}");
    assert_eq!(by_seq[2]["fp"], "00000000000000ff");
    assert!(by_seq[2].get("content_hash").is_none(), "{}", by_seq[2]);
    // Each fp is the stored one.
    for v in &by_seq {
        let o = t.run(&["get", "--json", v["id"].as_str().unwrap()]);
        assert_eq!(json(&String::from_utf8_lossy(&o.stdout))["fp"], v["fp"]);
    }
    let by_id: Vec<String> = lines(&t, &["export", "--order", "id"])
        .iter()
        .map(|l| json(l)["id"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(by_id, ["a", "b", "k", "m", "z"]);
    assert_eq!(lines(&t, &["ids", "--order", "id"]), by_id);
    assert_eq!(lines(&t, &["export", "--ids-only"]), ids);
}

#[test]
fn an_export_resumes_where_it_stopped() {
    let t = store();
    let full = lines(&t, &["export"]);
    let third = json(&full[2]);
    let from = (third["seq"].as_u64().unwrap() + 1).to_string();
    let rest = lines(&t, &["export", "--from-seq", &from]);
    assert_eq!([&full[..3], &rest[..]].concat(), full);
    let full = lines(&t, &["export", "--order", "id"]);
    let rest = lines(&t, &["export", "--after", "b"]);
    assert_eq!([&full[..2], &rest[..]].concat(), full);
    // The resume point belongs to one order.
    let o = t.run(&["export", "--order", "seq", "--after", "b"]);
    assert_eq!(code(&o), 2);
    assert!(stderr(&o).contains("--after resumes an export in id order"));
}

#[test]
fn csv_quotes_what_it_must_and_files_are_written() {
    let t = store();
    let o = t.run(&["export", "--format", "csv", "--output", "out.csv"]);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    assert!(
        stderr(&o).contains("exported 5 documents"),
        "{}",
        stderr(&o)
    );
    assert!(o.stdout.is_empty());
    let csv = std::fs::read_to_string(t.path("out.csv")).unwrap();
    let rows: Vec<&str> = csv.lines().collect();
    assert_eq!(rows[0], "seq,id,fp,title,url,length,time,content_hash");
    assert_eq!(rows.len(), 6);
    assert!(
        rows[1].starts_with("0,m,")
            && rows[1].contains(",\"Rain, \"\"heavy\"\" rain\",https://e.com/m,55,"),
        "{}",
        rows[1]
    );
    // The fingerprint-only document: no title, url or hash.
    assert!(rows[3].starts_with("2,z,00000000000000ff,,,0,") && rows[3].ends_with(','));
}

/// An output inside the store's directory (its CURRENT, say) is refused before anything is
/// written: the store stays whole.
#[test]
fn an_export_into_the_store_itself_is_refused() {
    let t = store();
    for out in ["store.db/CURRENT", "store.db/new.jsonl"] {
        let o = t.run(&["export", "--output", out]);
        assert_eq!(code(&o), 2, "{}", stderr(&o));
        assert!(
            stderr(&o).contains("inside the store directory"),
            "{}",
            stderr(&o)
        );
    }
    assert!(!t.path("store.db/new.jsonl").exists());
    assert_eq!(
        lines(&t, &["ids"]).len(),
        5,
        "the store opens and holds every document"
    );
}

#[test]
fn exported_jsonl_imports_into_a_new_store() {
    let t = store();
    t.write("docs.jsonl", lines(&t, &["export"]).join("\n").as_bytes());
    let o = t.run_on(&t.path("new.db"), &["import", "docs.jsonl"]);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    let shape = |db: &str| -> Vec<(String, String, String)> {
        let o = t.run_on(&t.path(db), &["export", "--order", "id"]);
        String::from_utf8_lossy(&o.stdout)
            .lines()
            .map(|l| {
                let v = json(l);
                let s = |k: &str| v[k].as_str().unwrap_or("-").to_owned();
                (s("id"), s("fp"), s("title"))
            })
            .collect()
    };
    assert_eq!(shape("new.db"), shape("store.db"));
}

#[test]
fn scans_stop_and_resume_on_every_backend() {
    for backend in BACKENDS {
        let dir = tempfile::tempdir().unwrap();
        let s = new_store(backend, dir.path(), 3, 4);
        // Inserted in an order unlike the ids'; d3 replaced by another fingerprint (a new
        // sequence number).
        for (i, fp) in [(7u64, 7), (3, 3), (9, 9), (1, 1), (5, 5), (3, 33)] {
            s.insert_fingerprint(&format!("d{i}"), Fingerprint(fp), DocMeta::default())
                .unwrap();
        }
        let mut seen = Vec::new();
        s.scan_by_id(None, |_, d| {
            seen.push(d.id);
            Ok(true)
        })
        .unwrap();
        assert_eq!(seen, ["d1", "d3", "d5", "d7", "d9"], "{backend:?}");
        // Stop after two, resume after the second.
        let mut first = Vec::new();
        s.scan_by_id(None, |_, d| {
            first.push(d.id);
            Ok(first.len() < 2)
        })
        .unwrap();
        let mut rest = Vec::new();
        s.scan_by_id(Some(&first[1]), |_, d| {
            rest.push(d.id);
            Ok(true)
        })
        .unwrap();
        assert_eq!([first, rest].concat(), seen, "{backend:?}");
        let mut by_seq = Vec::new();
        s.scan_by_seq(0, |seq, d| {
            by_seq.push((seq, d.id));
            Ok(true)
        })
        .unwrap();
        let ids: Vec<&str> = by_seq.iter().map(|(_, id)| id.as_str()).collect();
        assert_eq!(ids, ["d7", "d9", "d1", "d5", "d3"], "{backend:?}");
        let mut later = Vec::new();
        s.scan_by_seq(by_seq[2].0 + 1, |_, d| {
            later.push(d.id);
            Ok(true)
        })
        .unwrap();
        assert_eq!(later, ["d5", "d3"], "{backend:?}");
    }
}

/// Regression: an id starting with `-` after `--after` (and a number after `--from-seq`)
/// was taken for an option unless written `--after=-x`.
#[test]
fn after_takes_an_id_starting_with_a_dash() {
    let t = TestCommand::new();
    t.write(
        "dash.jsonl",
        b"{\"id\":\"-a\",\"fp\":\"0000000000000001\"}\n{\"id\":\"-b\",\"fp\":\"0000000000000002\"}\n{\"id\":\"c\",\"fp\":\"0000000000000003\"}\n",
    );
    let o = t.run(&["import", "dash.jsonl"]);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    assert_eq!(lines(&t, &["ids", "--after", "-a"]), ["-b", "c"]);
    let rows = lines(&t, &["export", "--after", "-b", "--format", "csv"]);
    assert_eq!(rows.len(), 2, "{rows:?}");
    assert!(rows[1].starts_with("2,c,"), "{rows:?}");
    assert_eq!(
        lines(&t, &["export", "--after=-a", "--ids-only"]),
        ["-b", "c"]
    );
    let o = t.run(&["export", "--from-seq", "-1"]);
    assert_eq!(code(&o), 2);
    assert!(
        stderr(&o).contains("invalid value '-1' for '--from-seq <N>'"),
        "{}",
        stderr(&o)
    );
}

/// The layout fields of `simstore stats --json` of `db`.
fn layout_of(t: &TestCommand, db: &std::path::Path) -> Value {
    let o = t.run_on(db, &["stats", "--json"]);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    let s = json(String::from_utf8(o.stdout).unwrap().lines().next().unwrap());
    let keys = [
        "k_max",
        "blocks",
        "tables",
        "prefix_bits",
        "quality",
        "docs",
    ];
    keys.iter().map(|k| (k.to_string(), s[k].clone())).collect()
}

/// `copy` into a new store keeps the source's tables, block widths, k_max and quality
/// mode (it used to pick a layout for the current size, and the standard mode); with
/// `--relayout` or `--k-max` it picks one.
#[test]
fn copy_keeps_the_layout_unless_asked() {
    let t = TestCommand::new();
    let o = t.run(&[
        "init",
        "--quality",
        "high",
        "--k-max",
        "4",
        "--blocks",
        "9",
        "--lead",
        "3",
    ]);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    t.write("in.jsonl", INPUT.as_bytes());
    assert_eq!(code(&t.run(&["import", "in.jsonl"])), 0);
    let source = layout_of(&t, &t.db());
    assert_eq!(
        (
            source["blocks"].as_array().unwrap().len(),
            source["docs"].as_u64()
        ),
        (9, Some(5))
    );

    let kept = t.path("kept.db");
    let o = t.run(&["copy", "--to", kept.to_str().unwrap()]);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    assert_eq!(layout_of(&t, &kept), source);
    assert_eq!(lines(&t, &["export"]), {
        let o = t.run_on(&kept, &["export"]);
        String::from_utf8(o.stdout)
            .unwrap()
            .lines()
            .map(str::to_owned)
            .collect::<Vec<_>>()
    });

    for (name, extra) in [("relayout.db", "--relayout"), ("k3.db", "--k-max=3")] {
        let dest = t.path(name);
        let o = t.run(&["copy", "--to", dest.to_str().unwrap(), extra]);
        assert_eq!(code(&o), 0, "{}", stderr(&o));
        let chosen = layout_of(&t, &dest);
        assert_eq!(
            (&chosen["quality"], &chosen["docs"]),
            (&source["quality"], &source["docs"])
        );
        assert_ne!(
            chosen["blocks"], source["blocks"],
            "{extra}: a layout for 10 documents"
        );
    }
}

/// The rows of a Parquet export as the JSON lines `export` writes (null columns left out,
/// `seen` only where it is not `time`), in file order; and how many row groups it has.
fn parquet_as_jsonl(path: &std::path::Path) -> (Vec<Value>, usize) {
    use arrow_array::{Array, BinaryArray, StringArray, UInt64Array};
    use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;
    let b = ParquetRecordBatchReaderBuilder::try_new(std::fs::File::open(path).unwrap()).unwrap();
    let groups = b.metadata().num_row_groups();
    let mut rows = Vec::new();
    for batch in b.build().unwrap().map(Result::unwrap) {
        let col = |name: &str| batch.column_by_name(name).unwrap().clone();
        let (seq, length, time, seen) = (col("seq"), col("length"), col("time"), col("seen"));
        let u64s =
            |a: &arrow_array::ArrayRef| a.as_any().downcast_ref::<UInt64Array>().unwrap().clone();
        let (seq, length, time, seen) = (u64s(&seq), u64s(&length), u64s(&time), u64s(&seen));
        let text = |name: &str| {
            col(name)
                .as_any()
                .downcast_ref::<StringArray>()
                .unwrap()
                .clone()
        };
        let (id, fp, title, url, hash) = (
            text("id"),
            text("fp"),
            text("title"),
            text("url"),
            text("content_hash"),
        );
        let sketch = col("sketch");
        let sketch = sketch.as_any().downcast_ref::<BinaryArray>().unwrap();
        for i in 0..batch.num_rows() {
            let mut v =
                serde_json::json!({"seq": seq.value(i), "id": id.value(i), "fp": fp.value(i)});
            let mut opt = |name: &str, a: &StringArray| {
                if a.is_valid(i) {
                    v[name] = a.value(i).into();
                }
            };
            opt("title", &title);
            opt("url", &url);
            v["length"] = length.value(i).into();
            v["time"] = time.value(i).into();
            if seen.value(i) != time.value(i) {
                v["seen"] = seen.value(i).into();
            }
            if hash.is_valid(i) {
                v["content_hash"] = hash.value(i).into();
            }
            if sketch.is_valid(i) {
                let hex: String = sketch.value(i).iter().map(|b| format!("{b:02x}")).collect();
                v["sketch"] = hex.into();
            }
            rows.push(v);
        }
    }
    (rows, groups)
}

#[test]
fn parquet_holds_what_jsonl_holds() {
    let t = store();
    for order in ["seq", "id"] {
        let jsonl: Vec<Value> = lines(&t, &["export", "--order", order])
            .iter()
            .map(|l| json(l))
            .collect();
        let o = t.run(&[
            "export",
            "--order",
            order,
            "--format",
            "parquet",
            "-o",
            "out.parquet",
        ]);
        assert_eq!(code(&o), 0, "{}", stderr(&o));
        assert!(
            stderr(&o).contains("exported 5 documents"),
            "{}",
            stderr(&o)
        );
        let (rows, _) = parquet_as_jsonl(&t.path("out.parquet"));
        assert_eq!(rows, jsonl, "order {order}");
    }
    assert!(
        lines(&t, &["export"])
            .iter()
            .any(|l| l.contains("\"sketch\"")),
        "sketches are exported"
    );
    // A file is needed; --ids-only is still lines.
    let o = t.run(&["export", "--format", "parquet"]);
    assert_eq!(code(&o), 2);
    assert!(
        stderr(&o).contains("give --output FILE.parquet"),
        "{}",
        stderr(&o)
    );
    assert_eq!(
        lines(&t, &["export", "--format", "parquet", "--ids-only"]).len(),
        5
    );
}

#[test]
fn a_large_parquet_export_spans_batches_and_resumes() {
    let t = TestCommand::new();
    let n = 70_000;
    let input: String = (0..n)
        .map(|i: u64| {
            format!(
                "{{\"id\": \"d{i:06}\", \"fp\": \"{:016x}\"}}\n",
                i.wrapping_mul(0x9E37_79B9_7F4A_7C15)
            )
        })
        .collect();
    t.write("fps.jsonl", input.as_bytes());
    let o = t.run(&["import", "fps.jsonl"]);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    let o = t.run(&["export", "--format", "parquet", "-o", "all.parquet"]);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    let (rows, _) = parquet_as_jsonl(&t.path("all.parquet"));
    let jsonl: Vec<Value> = lines(&t, &["export"]).iter().map(|l| json(l)).collect();
    assert_eq!(rows.len(), n as usize);
    assert_eq!(rows, jsonl);
    // Resumed from a sequence number: the rest, in a file of its own.
    let from = rows[65_000]["seq"].as_u64().unwrap().to_string();
    let o = t.run(&[
        "export",
        "--format",
        "parquet",
        "--from-seq",
        &from,
        "-o",
        "rest.parquet",
    ]);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    assert_eq!(parquet_as_jsonl(&t.path("rest.parquet")).0, rows[65_000..]);
}

/// A Parquet export imports back as its JSONL does: the store it makes exports the same
/// lines, every stored field (the binary `sketch` column reads as its hex digits).
#[test]
fn a_parquet_export_imports_back() {
    let t = store();
    let jsonl = lines(&t, &["export"]);
    assert!(jsonl.iter().any(|l| json(l).get("sketch").is_some()));
    let o = t.run(&["export", "--format", "parquet", "-o", "docs.parquet"]);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    let copy = t.path("copy.db");
    let o = t.run_on(&copy, &["import", t.path("docs.parquet").to_str().unwrap()]);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    let o = t.run_on(&copy, &["export"]);
    assert_eq!(
        String::from_utf8(o.stdout)
            .unwrap()
            .lines()
            .collect::<Vec<_>>(),
        jsonl
    );
}

/// An export says what it does not hold, the store's settings, with the `init` that makes
/// a store like it: a store made so and given the export has the same settings and
/// documents.
#[test]
fn an_export_names_the_init_that_makes_a_store_like_its_own() {
    let t = TestCommand::new();
    let init = [
        "init",
        "--quality",
        "high",
        "--k-max",
        "4",
        "--retain",
        "30d",
        "--track-seen",
    ];
    assert_eq!(code(&t.run(&init)), 0);
    t.write("in.jsonl", INPUT.as_bytes());
    assert_eq!(code(&t.run(&["import", "in.jsonl"])), 0);
    let o = t.run(&["export", "-o", "docs.jsonl"]);
    let err = stderr(&o);
    let (_, init) = err.split_once("simstore --db NEW init ").expect("the note");
    let init: Vec<&str> = init.trim_end().trim_end_matches('`').split(' ').collect();
    let copy = t.path("copy.db");
    assert_eq!(code(&t.run_on(&copy, &[&["init"][..], &init].concat())), 0);
    let o = t.run_on(&copy, &["import", t.path("docs.jsonl").to_str().unwrap()]);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    let settings = |o: std::process::Output| {
        let mut v: Value = serde_json::from_slice(&o.stdout).unwrap();
        for own in ["path", "disk_bytes"] {
            v.as_object_mut().unwrap().remove(own);
        }
        v
    };
    let stats = ["stats", "--json"];
    assert_eq!(settings(t.run(&stats)), settings(t.run_on(&copy, &stats)));
    for args in [&["retention"][..], &["export"]] {
        assert_eq!(t.run(args).stdout, t.run_on(&copy, args).stdout, "{args:?}");
    }
}
