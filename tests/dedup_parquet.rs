//! Dataset dedup of Parquet shards (`dedup shards/ --output kept/`): the kept rows are the
//! ones the same records dedup'd as JSONL keep (which tests/dedup_dataset.rs checks against
//! the brute-force model), for every keep policy, written with every column unchanged, in
//! shards of at most `--shard-rows` rows, with the input's compression or `--compression`.

use std::fs::File;
use std::os::unix::fs::FileTypeExt;
use std::path::Path;
use std::process::Command;
use std::sync::Arc;

use arrow_array::{Array, ArrayRef, Float64Array, Int64Array, RecordBatch, StringArray};
use arrow_schema::{DataType, Field, Schema};
use parquet::arrow::ArrowWriter;
use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;
use parquet::basic::Compression;
use parquet::file::properties::WriterProperties;
use rand::Rng;

use crate::util::{TestCommand, code, gen_text, rng, stderr};

/// One record of the corpus.
pub(crate) struct Row {
    pub id: String,
    pub text: Option<String>,
    pub ts: Option<i64>,
    pub score: f64,
}

/// Texts with near copies (one word changed) and exact copies, some timestamps missing.
fn corpus(seed: u64, n: usize) -> Vec<Row> {
    let mut r = rng(seed);
    let mut recent = Vec::new();
    (0..n)
        .map(|i| Row {
            id: format!("doc-{i}"),
            text: Some(gen_text(&mut r, &mut recent)),
            ts: (r.random_range(0..5) > 0).then(|| r.random_range(1_600_000_000..1_700_000_000)),
            score: r.random_range(0.0..1.0),
        })
        .collect()
}

fn schema() -> Arc<Schema> {
    Arc::new(Schema::new(vec![
        Field::new("id", DataType::Utf8, false),
        Field::new("content", DataType::Utf8, true),
        Field::new("ts", DataType::Int64, true),
        Field::new("score", DataType::Float64, false),
    ]))
}

fn batch(rows: &[Row]) -> RecordBatch {
    let cols: Vec<ArrayRef> = vec![
        Arc::new(StringArray::from_iter_values(
            rows.iter().map(|r| r.id.as_str()),
        )),
        Arc::new(
            rows.iter()
                .map(|r| r.text.as_deref())
                .collect::<StringArray>(),
        ),
        Arc::new(rows.iter().map(|r| r.ts).collect::<Int64Array>()),
        Arc::new(Float64Array::from_iter_values(rows.iter().map(|r| r.score))),
    ];
    RecordBatch::try_new(schema(), cols).unwrap()
}

/// Writes `rows` as a Parquet file (snappy, row groups of 16 rows).
pub(crate) fn write_parquet(path: &Path, rows: &[Row]) {
    let props = WriterProperties::builder()
        .set_compression(Compression::SNAPPY)
        .set_max_row_group_size(16)
        .build();
    let mut w = ArrowWriter::try_new(File::create(path).unwrap(), schema(), Some(props)).unwrap();
    w.write(&batch(rows)).unwrap();
    w.close().unwrap();
}

/// Writes one Parquet file of the named columns (default properties; names may repeat).
pub(crate) fn write_columns(path: &Path, columns: Vec<(&str, ArrayRef)>) {
    let fields: Vec<Field> = (columns.iter())
        .map(|(name, col)| Field::new(*name, col.data_type().clone(), true))
        .collect();
    let schema = Arc::new(Schema::new(fields));
    let cols = columns.into_iter().map(|(_, col)| col).collect();
    let batch = RecordBatch::try_new(schema.clone(), cols).unwrap();
    let mut w = ArrowWriter::try_new(File::create(path).unwrap(), schema, None).unwrap();
    w.write(&batch).unwrap();
    w.close().unwrap();
}

/// The column names and rows of one Parquet file, whatever its schema.
fn read_any(path: &Path) -> (Vec<String>, Vec<RecordBatch>) {
    let b = ParquetRecordBatchReaderBuilder::try_new(File::open(path).unwrap()).unwrap();
    let names = b
        .schema()
        .fields()
        .iter()
        .map(|f| f.name().clone())
        .collect();
    (names, b.build().unwrap().map(Result::unwrap).collect())
}

/// The same rows as JSONL lines.
fn jsonl(rows: &[Row]) -> String {
    rows.iter()
        .map(|r| {
            let v =
                serde_json::json!({"id": r.id, "content": r.text, "ts": r.ts, "score": r.score});
            format!("{v}\n")
        })
        .collect()
}

/// Every row of the Parquet files in `dir` (or the file `dir`), in order, with the shards'
/// row counts and compressions.
fn read_back(path: &Path) -> (Vec<RecordBatch>, Vec<usize>, Vec<Compression>) {
    let files: Vec<_> = match path.is_dir() {
        true => {
            let mut f: Vec<_> = std::fs::read_dir(path)
                .unwrap()
                .map(|e| e.unwrap().path())
                .collect();
            f.sort();
            f
        }
        false => vec![path.to_owned()],
    };
    let (mut batches, mut sizes, mut codecs) = (Vec::new(), Vec::new(), Vec::new());
    for f in files {
        let b = ParquetRecordBatchReaderBuilder::try_new(File::open(&f).unwrap()).unwrap();
        assert_eq!(
            b.schema().fields(),
            schema().fields(),
            "{f:?}: the schema is kept"
        );
        let meta = b.metadata().clone();
        sizes.push(meta.file_metadata().num_rows() as usize);
        if meta.num_row_groups() > 0 {
            codecs.push(meta.row_group(0).column(0).compression());
        }
        batches.extend(b.build().unwrap().map(Result::unwrap));
    }
    (batches, sizes, codecs)
}

/// The ids of the rows of `batches`.
fn ids(batches: &[RecordBatch]) -> Vec<String> {
    batches
        .iter()
        .flat_map(|b| {
            let a = b.column(0).as_any().downcast_ref::<StringArray>().unwrap();
            (0..a.len())
                .map(|i| a.value(i).to_owned())
                .collect::<Vec<_>>()
        })
        .collect()
}

/// The ids, in order, of the JSONL records in the file at `path` (string ids).
pub(crate) fn jsonl_ids(path: &Path) -> Vec<String> {
    json_lines(path)
        .iter()
        .map(|v| v["id"].as_str().unwrap().to_owned())
        .collect()
}

#[test]
fn parquet_shards_keep_what_jsonl_keeps_for_every_policy_with_every_column() {
    let t = TestCommand::new();
    let rows = corpus(3, 240);
    std::fs::create_dir(t.path("in")).unwrap();
    write_parquet(&t.path("in/a.parquet"), &rows[..150]);
    write_parquet(&t.path("in/b.parquet"), &rows[150..]);
    t.write("all.jsonl", jsonl(&rows).as_bytes());
    let common = ["--text-field", "content"];
    for policy in ["first", "longest", "newest:ts", "oldest:ts", "none"] {
        let o = t.run(
            &[
                &["dedup", "all.jsonl", "--keep", policy, "-o", "kept.jsonl"][..],
                &common,
            ]
            .concat(),
        );
        assert_eq!(code(&o), 0, "{}", stderr(&o));
        let want = jsonl_ids(&t.path("kept.jsonl"));
        assert!(
            want.len() < rows.len() - 20,
            "{policy}: duplicates in the data"
        );
        let _ = std::fs::remove_dir_all(t.path("kept"));
        let args = [
            "dedup",
            "in",
            "--keep",
            policy,
            "-o",
            "kept",
            "--shard-rows",
            "37",
        ];
        let o = t.run(&[&args[..], &common].concat());
        assert_eq!(code(&o), 0, "{policy}: {}", stderr(&o));
        let (batches, sizes, codecs) = read_back(&t.path("kept"));
        assert_eq!(ids(&batches), want, "{policy}: {}", stderr(&o));
        assert!(
            sizes.iter().all(|&n| n <= 37) && sizes.len() == want.len().div_ceil(37),
            "{sizes:?}"
        );
        assert!(
            codecs.iter().all(|c| *c == Compression::SNAPPY),
            "{codecs:?}"
        );
        // Every column of every kept row as it was.
        let by_id: std::collections::HashMap<&str, &Row> =
            rows.iter().map(|r| (r.id.as_str(), r)).collect();
        for b in &batches {
            let want: Vec<&Row> = ids(std::slice::from_ref(b))
                .iter()
                .map(|id| by_id[id.as_str()])
                .collect();
            let want: Vec<Row> = want
                .iter()
                .map(|r| Row {
                    id: r.id.clone(),
                    text: r.text.clone(),
                    ts: r.ts,
                    score: r.score,
                })
                .collect();
            assert_eq!(b, &batch(&want));
        }
    }
}

#[test]
fn one_parquet_file_out_compressed_as_asked_with_provenance_rows() {
    let t = TestCommand::new();
    let rows = corpus(4, 120);
    write_parquet(&t.path("a.parquet"), &rows);
    let o = t.run(&[
        "dedup",
        "a.parquet",
        "--text-field",
        "content",
        "-o",
        "kept.parquet",
        "--compression",
        "zstd",
        "--clusters",
        "why.jsonl",
        "--report",
        "r.html",
    ]);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    let (batches, _, codecs) = read_back(&t.path("kept.parquet"));
    assert!(matches!(codecs[0], Compression::ZSTD(_)), "{codecs:?}");
    // The names the help lists, with or without a level.
    for (name, want) in [
        ("gzip", "GZIP"),
        ("gzip(9)", "GZIP"),
        ("lz4_raw", "LZ4_RAW"),
    ] {
        let args = [
            "dedup",
            "a.parquet",
            "--text-field",
            "content",
            "--compression",
            name,
        ];
        let o = t.run(
            &[
                &args[..],
                &["-o", &format!("{want}-{}.parquet", name.len())],
            ]
            .concat(),
        );
        assert_eq!(code(&o), 0, "{name}: {}", stderr(&o));
        let (_, _, codecs) = read_back(&t.path(&format!("{want}-{}.parquet", name.len())));
        assert!(
            format!("{:?}", codecs[0]).starts_with(want),
            "{name}: {codecs:?}"
        );
    }
    let kept = ids(&batches);
    let rows_out = std::fs::read_to_string(t.path("why.jsonl")).unwrap();
    let mut dropped = 0;
    for line in rows_out.lines() {
        let v: serde_json::Value = serde_json::from_str(line).unwrap();
        let id = v["id"].as_str().unwrap();
        let row: usize = v["line"].as_u64().unwrap() as usize;
        assert_eq!(rows[row - 1].id, id, "the row number names the row: {line}");
        assert_eq!(
            v["kept"].as_bool().unwrap(),
            kept.iter().any(|k| k == id),
            "{line}"
        );
        dropped += usize::from(!v["kept"].as_bool().unwrap());
    }
    assert_eq!(kept.len() + dropped, rows.len(), "{}", stderr(&o));
    // The report shows the sampled members' texts, read from the text column.
    let html = std::fs::read_to_string(t.path("r.html")).unwrap();
    let first = rows
        .iter()
        .find(|r| html.contains(&format!("<b>{}</b>", r.id)))
        .unwrap();
    let words: Vec<&str> = first.text.as_deref().unwrap().split(' ').take(3).collect();
    assert!(
        html.contains(&words.join(" ")),
        "{}",
        &html[..html.len().min(300)]
    );
}

#[test]
fn what_a_parquet_dedup_refuses() {
    let t = TestCommand::new();
    let mut rows = corpus(5, 20);
    rows[3].text = None;
    write_parquet(&t.path("a.parquet"), &rows);
    t.write("b.jsonl", jsonl(&rows).as_bytes());
    std::fs::create_dir(t.path("full")).unwrap();
    t.write("full/x", b"x");
    for (args, says) in [
        (
            vec!["dedup", "a.parquet", "-o", "out"],
            "no column \"text\"",
        ),
        (
            vec![
                "dedup",
                "a.parquet",
                "b.jsonl",
                "--text-field",
                "content",
                "-o",
                "out",
            ],
            "not a Parquet file",
        ),
        (
            vec![
                "dedup",
                "a.parquet",
                "--text-field",
                "content",
                "-o",
                "full",
            ],
            "not empty",
        ),
        (
            vec![
                "dedup",
                "a.parquet",
                "--text-field",
                "content",
                "--keep",
                "newest:when",
                "-o",
                "o",
            ],
            "no column \"when\"",
        ),
    ] {
        let o = t.run(&args);
        assert_eq!(code(&o), 2, "{args:?}: {}", stderr(&o));
        assert!(stderr(&o).contains(says), "{args:?}: {}", stderr(&o));
    }
    // A FIFO named like a Parquet file is never replaced by one.
    let fifo = t.path("pipe.parquet");
    let made = Command::new("mkfifo").arg(&fifo).status().unwrap();
    assert!(made.success());
    let o = t.run(&[
        "dedup",
        "a.parquet",
        "--text-field",
        "content",
        "-o",
        "pipe.parquet",
    ]);
    assert!(
        code(&o) == 2 && stderr(&o).contains("not a regular file"),
        "{}",
        stderr(&o)
    );
    assert!(
        std::fs::symlink_metadata(&fifo)
            .unwrap()
            .file_type()
            .is_fifo()
    );
    // A null text is a row kept as it is, named; the others are deduplicated.
    let o = t.run(&["dedup", "a.parquet", "--text-field", "content", "-o", "out"]);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    let says = "a.parquet: row 4: the text column \"content\" is null; kept as it is";
    assert!(stderr(&o).contains(says), "{}", stderr(&o));
    assert!(ids(&read_back(&t.path("out")).0).contains(&"doc-3".to_owned()));
}

/// A run that fails in pass 2 (here: the second shard's columns differ from the first's,
/// found after the first shard's rows were written) leaves neither the output nor its
/// partial directory, and an output directory that was there stays as it was.
/// The rows of Parquet `batches` as JSON objects, every column (null where null).
fn rows_as_json(batches: &[RecordBatch]) -> Vec<serde_json::Value> {
    let mut out = Vec::new();
    for b in batches {
        let col = |i: usize| b.column(i).clone();
        let (id, text, ts, score) = (col(0), col(1), col(2), col(3));
        let id = id.as_any().downcast_ref::<StringArray>().unwrap();
        let text = text.as_any().downcast_ref::<StringArray>().unwrap();
        let ts = ts.as_any().downcast_ref::<Int64Array>().unwrap();
        let score = score.as_any().downcast_ref::<Float64Array>().unwrap();
        for i in 0..b.num_rows() {
            out.push(serde_json::json!({
                "id": id.value(i),
                "content": text.is_valid(i).then(|| text.value(i)),
                "ts": ts.is_valid(i).then(|| ts.value(i)),
                "score": score.value(i),
            }));
        }
    }
    out
}

/// The JSON objects of a JSONL file.
fn json_lines(path: &Path) -> Vec<serde_json::Value> {
    let text = std::fs::read_to_string(path).unwrap();
    text.lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

/// Parquet in, JSONL out and the reverse keep the records the same-format run keeps,
/// every field of each as it was (Parquet rows as JSON objects of all their columns;
/// JSONL lines as columns inferred from the kept lines: a field of numbers and strings is
/// a string column); lines whose fields Parquet cannot hold are refused, leaving nothing.
#[test]
fn jsonl_and_parquet_are_written_as_each_other() {
    let t = TestCommand::new();
    let rows = corpus(11, 200);
    std::fs::create_dir(t.path("in")).unwrap();
    write_parquet(&t.path("in/a.parquet"), &rows[..120]);
    write_parquet(&t.path("in/b.parquet"), &rows[120..]);
    t.write("all.jsonl", jsonl(&rows).as_bytes());
    let run = |args: &[&str]| {
        let o = t.run(&[args, &["--text-field", "content"][..]].concat());
        assert_eq!(code(&o), 0, "{args:?}: {}", stderr(&o));
    };
    run(&["dedup", "all.jsonl", "-o", "kept.jsonl"]);
    let want = json_lines(&t.path("kept.jsonl"));
    assert!(want.len() < rows.len() - 20, "duplicates in the data");
    // Parquet in, JSON lines out (plain and gzip'd); shards in subdirectories (a Hive
    // layout) are read too.
    run(&["dedup", "in", "-o", "from-parquet.jsonl"]);
    assert_eq!(json_lines(&t.path("from-parquet.jsonl")), want);
    for (dir, rows) in [("hive/y=1", &rows[..120]), ("hive/y=2", &rows[120..])] {
        std::fs::create_dir_all(t.path(dir)).unwrap();
        write_parquet(&t.path(&format!("{dir}/part.parquet")), rows);
    }
    run(&["dedup", "hive", "-o", "from-hive.jsonl"]);
    assert_eq!(json_lines(&t.path("from-hive.jsonl")), want);
    // A Parquet file without its extension, named so by --format.
    std::fs::copy(t.path("in/a.parquet"), t.path("noext")).unwrap();
    for (input, out) in [("in/a.parquet", "a.jsonl"), ("noext", "noext.jsonl")] {
        let o = t.run(&[
            "dedup",
            input,
            "--format",
            "parquet",
            "--text-field",
            "content",
            "-o",
            out,
        ]);
        assert!(code(&o) < 2, "{}", stderr(&o));
    }
    assert_eq!(
        json_lines(&t.path("noext.jsonl")),
        json_lines(&t.path("a.jsonl"))
    );
    run(&["dedup", "in", "-o", "from-parquet.jsonl.gz"]);
    let gz = std::fs::read(t.path("from-parquet.jsonl.gz")).unwrap();
    let mut back = String::new();
    std::io::Read::read_to_string(&mut flate2::read::MultiGzDecoder::new(&gz[..]), &mut back)
        .unwrap();
    t.write("gunzipped.jsonl", back.as_bytes());
    assert_eq!(json_lines(&t.path("gunzipped.jsonl")), want);
    // JSONL in, Parquet out: a file, and shards of a directory.
    run(&["dedup", "all.jsonl", "-o", "from-jsonl.parquet"]);
    run(&["dedup", "all.jsonl", "-o", "shards/", "--shard-rows", "40"]);
    for out in ["from-jsonl.parquet", "shards"] {
        let mut batches = Vec::new();
        let mut files: Vec<_> = match t.path(out).is_dir() {
            true => std::fs::read_dir(t.path(out))
                .unwrap()
                .map(|e| e.unwrap().path())
                .collect(),
            false => vec![t.path(out)],
        };
        files.sort();
        for f in &files {
            let b = ParquetRecordBatchReaderBuilder::try_new(File::open(f).unwrap()).unwrap();
            let names: Vec<_> = b
                .schema()
                .fields()
                .iter()
                .map(|f| f.name().clone())
                .collect();
            assert_eq!(names, ["id", "content", "ts", "score"], "{f:?}");
            batches.extend(b.build().unwrap().map(Result::unwrap));
        }
        // The original rows' values (a number parsed from the lines can differ from the
        // one written in its last bit: serde_json's parse is not correctly rounded).
        let by_id: std::collections::HashMap<&str, &Row> =
            rows.iter().map(|r| (r.id.as_str(), r)).collect();
        let original: Vec<serde_json::Value> = want
            .iter()
            .map(|v| {
                let r = by_id[v["id"].as_str().unwrap()];
                serde_json::json!({"id": r.id, "content": r.text, "ts": r.ts, "score": r.score})
            })
            .collect();
        assert!(rows_as_json(&batches) == original, "{out}");
        assert_eq!(
            files.len(),
            if out == "shards" {
                want.len().div_ceil(40)
            } else {
                1
            }
        );
    }
    // Mixed scalar types are a string column, and so are integers a double cannot hold
    // beside fractions or beyond i64 (as written: no value changes); an object beside a
    // number is refused.
    t.write(
        "mixed.jsonl",
        b"{\"text\":\"one two three four five six seven\",\"n\":1,\"big\":9007199254740993,\"u\":1}\n\
          {\"text\":\"eight nine ten eleven twelve thirteen\",\"n\":\"two\",\"big\":0.5,\"u\":18446744073709551615}\n",
    );
    let o = t.run(&["dedup", "mixed.jsonl", "-o", "mixed.parquet"]);
    assert_eq!(code(&o), 0, "no pairs, all written: {}", stderr(&o));
    let b = ParquetRecordBatchReaderBuilder::try_new(File::open(t.path("mixed.parquet")).unwrap())
        .unwrap();
    for field in ["n", "big", "u"] {
        let ty = b
            .schema()
            .field_with_name(field)
            .unwrap()
            .data_type()
            .clone();
        assert_eq!(ty, DataType::Utf8, "{field}");
    }
    let batch = b.build().unwrap().next().unwrap().unwrap();
    let col = |name: &str| {
        let a = batch.column_by_name(name).unwrap();
        let a = a.as_any().downcast_ref::<StringArray>().unwrap();
        (0..a.len())
            .map(|i| a.value(i).to_owned())
            .collect::<Vec<_>>()
    };
    assert_eq!(col("big"), ["9007199254740993", "0.5"]);
    assert_eq!(col("u"), ["1", "18446744073709551615"]);
    t.write(
        "bad.jsonl",
        b"{\"text\":\"one two three four five six seven\",\"n\":1}\n\
          {\"text\":\"eight nine ten eleven twelve thirteen\",\"n\":{\"k\":2}}\n",
    );
    let o = t.run(&["dedup", "bad.jsonl", "-o", "bad.parquet"]);
    assert_eq!(code(&o), 2, "{}", stderr(&o));
    assert!(
        stderr(&o).contains("write them as JSON lines"),
        "{}",
        stderr(&o)
    );
    assert!(!t.path("bad.parquet").exists());
    let left: Vec<_> = std::fs::read_dir(t.path(""))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.contains("simstore-partial"))
        .collect();
    assert!(left.is_empty(), "no spool left: {left:?}");
}

#[test]
fn a_failed_parquet_run_leaves_no_output_nor_partial_files() {
    let t = TestCommand::new();
    let rows = corpus(6, 60);
    std::fs::create_dir(t.path("in")).unwrap();
    write_parquet(&t.path("in/a.parquet"), &rows[..30]);
    let other = Arc::new(Schema::new(vec![
        Field::new("id", DataType::Utf8, false),
        Field::new("content", DataType::Utf8, true),
    ]));
    let cols: Vec<ArrayRef> = vec![
        Arc::new(StringArray::from_iter_values(
            rows[30..].iter().map(|r| r.id.as_str()),
        )),
        Arc::new(
            rows[30..]
                .iter()
                .map(|r| r.text.as_deref())
                .collect::<StringArray>(),
        ),
    ];
    let b = RecordBatch::try_new(other.clone(), cols).unwrap();
    let mut w =
        ArrowWriter::try_new(File::create(t.path("in/b.parquet")).unwrap(), other, None).unwrap();
    w.write(&b).unwrap();
    w.close().unwrap();
    std::fs::create_dir(t.path("kept")).unwrap();
    let o = t.run(&[
        "dedup",
        "in",
        "--text-field",
        "content",
        "-o",
        "kept",
        "--shard-rows",
        "5",
    ]);
    assert_eq!(code(&o), 2, "{}", stderr(&o));
    assert!(stderr(&o).contains("its columns differ"), "{}", stderr(&o));
    let left: Vec<_> = std::fs::read_dir(t.path(""))
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert!(
        !left
            .iter()
            .any(|n| n.to_string_lossy().contains("simstore-partial")),
        "{left:?}"
    );
    assert_eq!(
        std::fs::read_dir(t.path("kept")).unwrap().count(),
        0,
        "the empty directory stays empty"
    );
    // As JSON lines, shards of other columns are fine: each row has its own.
    let o = t.run(&["dedup", "in", "--text-field", "content", "-o", "rows.jsonl"]);
    assert!(code(&o) < 2, "{}", stderr(&o));
    let lines = json_lines(&t.path("rows.jsonl"));
    assert!(lines.iter().any(|v| v.get("ts").is_some()));
    assert!(
        lines
            .iter()
            .any(|v| v.get("ts").is_none() && v["id"] == "doc-45")
    );
    // The shards directory a killed run left (its process gone) is removed by the next
    // run writing beside it; one of a live process stays.
    let mut gone = Command::new("true").spawn().unwrap();
    gone.wait().unwrap();
    let stale = format!(".kept.simstore-partial-{}-abc123", gone.id());
    let live = format!(".other.simstore-partial-{}-abc123", std::process::id());
    for dir in [&stale, &live] {
        std::fs::create_dir(t.path(dir)).unwrap();
        t.write(&format!("{dir}/part-00000.parquet"), b"half");
    }
    std::fs::remove_file(t.path("in/b.parquet")).unwrap();
    let o = t.run(&["dedup", "in", "--text-field", "content", "-o", "kept"]);
    assert!(code(&o) < 2, "{}", stderr(&o));
    assert!(!t.path(&stale).exists() && t.path(&live).exists());
}

/// The rows of a `--clusters` Parquet file as JSON objects with every column (null where
/// null).
fn provenance_rows(path: &Path) -> Vec<serde_json::Value> {
    use arrow_array::{BooleanArray, UInt64Array};
    let b = ParquetRecordBatchReaderBuilder::try_new(File::open(path).unwrap()).unwrap();
    let mut out = Vec::new();
    for batch in b.build().unwrap().map(Result::unwrap) {
        let col = |name: &str| batch.column_by_name(name).unwrap().clone();
        for i in 0..batch.num_rows() {
            let mut v = serde_json::Map::new();
            for name in [
                "cluster",
                "id",
                "file",
                "line",
                "representative",
                "kept",
                "distance",
                "similarity",
                "stored",
            ] {
                let c = col(name);
                let any = c.as_any();
                let value = if c.is_null(i) {
                    serde_json::Value::Null
                } else if let Some(a) = any.downcast_ref::<UInt64Array>() {
                    a.value(i).into()
                } else if let Some(a) = any.downcast_ref::<StringArray>() {
                    a.value(i).into()
                } else if let Some(a) = any.downcast_ref::<BooleanArray>() {
                    a.value(i).into()
                } else {
                    any.downcast_ref::<Float64Array>().unwrap().value(i).into()
                };
                v.insert(name.to_owned(), value);
            }
            out.push(serde_json::Value::Object(v));
        }
    }
    out
}

/// The rows of a `--clusters` JSONL file, every column present (null where absent).
fn provenance_lines(path: &Path) -> Vec<serde_json::Value> {
    let text = std::fs::read_to_string(path).unwrap();
    text.lines()
        .map(|l| {
            let mut v: serde_json::Value = serde_json::from_str(l).unwrap();
            for name in ["file", "line", "similarity", "stored"] {
                v.as_object_mut()
                    .unwrap()
                    .entry(name)
                    .or_insert(serde_json::Value::Null);
            }
            v
        })
        .collect()
}

#[test]
fn provenance_rows_as_parquet_hold_what_the_json_lines_hold() {
    let t = TestCommand::new();
    let rows = corpus(7, 150);
    write_parquet(&t.path("a.parquet"), &rows);
    t.write("a.jsonl", jsonl(&rows).as_bytes());
    let runs: [&[&str]; 3] = [
        &[
            "dedup",
            "a.parquet",
            "--text-field",
            "content",
            "-o",
            "kept.parquet",
        ],
        &[
            "dedup",
            "a.jsonl",
            "--text-field",
            "content",
            "--id-field",
            "id",
            "--keep",
            "longest",
            "-o",
            "kept.jsonl",
        ],
        &[
            "dedup",
            "a.jsonl",
            "--text-field",
            "content",
            "--id-field",
            "id",
            "--against",
            "db",
            "--add",
            "-o",
            "k.jsonl",
        ],
    ];
    for (n, args) in runs.iter().enumerate() {
        let _ = std::fs::remove_dir_all(t.path("db"));
        let mut json = args.to_vec();
        json.extend(["--clusters", "rows.jsonl"]);
        let o = t.run(&json);
        assert_eq!(code(&o), 0, "{}", stderr(&o));
        let _ = std::fs::remove_dir_all(t.path("db"));
        let mut parquet = args.to_vec();
        parquet.extend(["--clusters", "rows.parquet"]);
        let o = t.run(&parquet);
        assert_eq!(code(&o), 0, "{}", stderr(&o));
        // The JSON lines' similarities are read back to within their last digit.
        let rounded = |mut rows: Vec<serde_json::Value>| {
            for r in &mut rows {
                if let Some(s) = r["similarity"].as_f64() {
                    r["similarity"] = ((s * 1e12).round() / 1e12).into();
                }
            }
            rows
        };
        let want = rounded(provenance_lines(&t.path("rows.jsonl")));
        assert!(want.len() > 20, "run {n}: {} rows", want.len());
        let got = rounded(provenance_rows(&t.path("rows.parquet")));
        assert_eq!(got, want, "run {n}");
    }
}

/// A text column of numbers is refused, naming the shard, the column and its type (it was
/// read as digits, every row "nothing to fingerprint").
#[test]
fn a_text_column_that_is_not_text_is_refused() {
    let t = TestCommand::new();
    let col: ArrayRef = Arc::new(Int64Array::from(vec![1, 2, 3]));
    write_columns(&t.path("n.parquet"), vec![("content", col)]);
    for out in [&["-o", "kept.parquet"][..], &[]] {
        let o = t.run(&[&["dedup", "n.parquet", "--text-field", "content"][..], out].concat());
        assert_eq!(code(&o), 2, "{}", stderr(&o));
        let says = "n.parquet: the column \"content\" (Int64) is not text";
        assert!(stderr(&o).contains(says), "{}", stderr(&o));
    }
    // A binary text column is read as UTF-8, a bad byte replaced (not a null text: the
    // record is kept, and its near copy found).
    let text = "the river rose overnight and the old bridge closed to traffic until noon, \
                when engineers found the pillars sound; buses ran again by evening, and the \
                ferry that had carried commuters across all morning went back to its usual \
                hourly timetable while the council promised a full inspection next week";
    let mut bad = text.as_bytes().to_vec();
    bad[4] = 0xff;
    let col: ArrayRef = Arc::new(arrow_array::BinaryArray::from(vec![
        text.as_bytes(),
        &bad[..],
        b"an entirely different record about the price of tea in the spring markets",
    ]));
    write_columns(&t.path("b.parquet"), vec![("content", col)]);
    for out in ["kb.parquet", "kb.ndjson"] {
        let o = t.run(&["dedup", "b.parquet", "--text-field", "content", "-o", out]);
        assert_eq!(code(&o), 0, "{}", stderr(&o));
        assert!(stderr(&o).contains("kept 2, dropped 1"), "{}", stderr(&o));
    }
    // As JSON lines (an .ndjson name), the binary text is text, not hex.
    let lines = std::fs::read_to_string(t.path("kb.ndjson")).unwrap();
    assert!(
        lines.starts_with("{\"content\":\"the river rose"),
        "{lines}"
    );
    // A timestamp of a named zone (as pandas writes them) is written as its instant.
    let when: ArrayRef = Arc::new(
        arrow_array::TimestampSecondArray::from(vec![1_704_153_600]).with_timezone("Etc/UTC"),
    );
    let content: ArrayRef = Arc::new(StringArray::from(vec![text]));
    write_columns(
        &t.path("tz.parquet"),
        vec![("content", content), ("ts", when)],
    );
    let o = t.run(&[
        "dedup",
        "tz.parquet",
        "--text-field",
        "content",
        "-o",
        "tz.jsonl",
    ]);
    assert_eq!(code(&o), 0, "no pairs, all written: {}", stderr(&o));
    let line = std::fs::read_to_string(t.path("tz.jsonl")).unwrap();
    assert!(line.contains("\"ts\":\"2024-01-02T00:00:00Z\""), "{line}");
}

/// What JSON lines cannot hold is said, not lost silently: NaN and infinite numbers are
/// written as `null` with a warning naming the column and the count; two columns of one
/// name are refused (a JSON reader would keep one), naming the shard and the column.
#[test]
fn what_json_lines_cannot_hold_is_reported_or_refused() {
    let t = TestCommand::new();
    let texts = [
        "the first record has its own words and nothing in common",
        "and so does \
                  this one, about an entirely different thing, the weather at sea",
    ];
    let content: ArrayRef = Arc::new(StringArray::from(texts.to_vec()));
    let x: ArrayRef = Arc::new(Float64Array::from(vec![f64::NAN, f64::INFINITY]));
    let y: ArrayRef = Arc::new(arrow_array::Float32Array::from(vec![Some(1.5), None]));
    write_columns(
        &t.path("n.parquet"),
        vec![("content", content.clone()), ("x", x), ("y", y)],
    );
    let o = t.run(&[
        "dedup",
        "n.parquet",
        "--text-field",
        "content",
        "-o",
        "n.jsonl",
    ]);
    assert_eq!(code(&o), 0, "no pairs, all written: {}", stderr(&o));
    let says = "n.jsonl holds `null` for NaN or infinite numbers (2 in column \"x\")";
    assert!(stderr(&o).contains(says), "{}", stderr(&o));
    let lines = json_lines(&t.path("n.jsonl"));
    assert_eq!(lines[0]["x"], serde_json::Value::Null);
    assert_eq!(lines[0]["y"], 1.5);
    // As Parquet they are kept, and nothing is said.
    let o = t.run(&["dedup", "n.parquet", "--text-field", "content", "-o", "n/"]);
    assert!(!stderr(&o).contains("NaN"), "{}", stderr(&o));
    let back = read_any(&t.path("n/part-00000.parquet")).1;
    let x = back[0].column_by_name("x").unwrap();
    let x = x.as_any().downcast_ref::<Float64Array>().unwrap();
    assert!(x.value(0).is_nan() && x.value(1).is_infinite());

    let v: ArrayRef = Arc::new(Int64Array::from(vec![1, 2]));
    write_columns(
        &t.path("d.parquet"),
        vec![("content", content), ("v", v.clone()), ("v", v)],
    );
    let o = t.run(&[
        "dedup",
        "d.parquet",
        "--text-field",
        "content",
        "-o",
        "d.jsonl",
    ]);
    assert_eq!(code(&o), 2, "{}", stderr(&o));
    let says = "d.parquet: two columns are named \"v\", and a JSON line holds one value per name";
    assert!(stderr(&o).contains(says), "{}", stderr(&o));
    assert!(!t.path("d.jsonl").exists());
    let o = t.run(&["dedup", "d.parquet", "--text-field", "content", "-o", "d/"]);
    assert_eq!(code(&o), 0, "as Parquet they are kept: {}", stderr(&o));
    assert_eq!(
        read_any(&t.path("d/part-00000.parquet")).0,
        ["content", "v", "v"]
    );
}

/// An output that keeps no JSONL line still has the input's columns as Parquet; an output
/// named by a link to a directory fills that directory and stays a link; a named pipe
/// named like a shard is refused at once (Parquet is read from its end), not waited on.
#[test]
fn an_empty_output_a_linked_output_and_a_piped_shard() {
    let t = TestCommand::new();
    let rows = corpus(8, 2);
    let line = jsonl(&rows[..1]);
    t.write("twice.jsonl", format!("{line}{line}").as_bytes());
    let args = [
        "dedup",
        "twice.jsonl",
        "--text-field",
        "content",
        "--keep",
        "none",
    ];
    let o = t.run(&[&args[..], &["-o", "none.parquet"]].concat());
    assert!(stderr(&o).contains("kept 0, dropped 2"), "{}", stderr(&o));
    let (names, batches) = read_any(&t.path("none.parquet"));
    assert_eq!(names, ["id", "content", "ts", "score"]);
    assert_eq!(batches.iter().map(RecordBatch::num_rows).sum::<usize>(), 0);

    std::fs::create_dir(t.path("real")).unwrap();
    std::os::unix::fs::symlink("real", t.path("link")).unwrap();
    write_parquet(&t.path("a.parquet"), &corpus(9, 30));
    let o = t.run(&[
        "dedup",
        "a.parquet",
        "--text-field",
        "content",
        "-o",
        "link",
    ]);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    assert!(
        std::fs::symlink_metadata(t.path("link"))
            .unwrap()
            .is_symlink()
    );
    assert!(t.path("real/part-00000.parquet").is_file());

    let made = Command::new("mkfifo")
        .arg(t.path("p.parquet"))
        .status()
        .unwrap();
    assert!(made.success());
    for out in [&["-o", "p/"][..], &[]] {
        let o = t.run(&[&["dedup", "p.parquet", "--text-field", "content"][..], out].concat());
        assert_eq!(code(&o), 2, "{}", stderr(&o));
        let says = "p.parquet: not a regular file; Parquet is read from a file";
        assert!(stderr(&o).contains(says), "{}", stderr(&o));
    }
}

/// An output directory that is a mount point cannot be replaced by a rename (EBUSY, after
/// the whole run): the shards are written inside it and moved into it at the end; a stale
/// partial directory a killed run left inside is no "not empty". Needs `mount` (root).
#[test]
fn an_output_that_is_a_mount_point_is_filled_in_place() {
    let t = TestCommand::new();
    write_parquet(&t.path("a.parquet"), &corpus(11, 40));
    let mnt = t.path("mnt");
    std::fs::create_dir(&mnt).unwrap();
    let mounted = Command::new("mount")
        .args(["-t", "tmpfs", "-o", "size=16m", "tmpfs"])
        .arg(&mnt)
        .output()
        .is_ok_and(|o| o.status.success());
    if !mounted {
        eprintln!("skipped: cannot mount a tmpfs here (needs root, as CI runs)");
        return;
    }
    std::fs::create_dir(mnt.join(".shards.simstore-partial-999999999-AAAAAA")).unwrap();
    let o = t.run(&["dedup", "a.parquet", "--text-field", "content", "-o", "mnt"]);
    let names: Vec<String> = std::fs::read_dir(&mnt)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    let (batches, _, _) = read_back(&mnt);
    let _ = Command::new("umount").arg(&mnt).status();
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    assert_eq!(names, ["part-00000.parquet"]);
    let n: usize = batches.iter().map(RecordBatch::num_rows).sum();
    assert!(stderr(&o).contains(&format!("kept {n},")), "{}", stderr(&o));
}
