//! Input formats of `import`, `query --batch` and `fingerprint --batch`: WARC (plain and
//! gzip'd), gzip'd JSONL (by name, by magic, on stdin) and directories.

use std::io::Write;
use std::process::Output;

use serde_json::Value;

use crate::util::{TestCommand, code, stderr};

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn json_lines(o: &Output) -> Vec<Value> {
    stdout(o)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

fn get(t: &TestCommand, id: &str) -> Option<Value> {
    let o = t.run(&["get", "--json", id]);
    (code(&o) == 0).then(|| serde_json::from_str(stdout(&o).trim()).unwrap())
}

pub fn gzip(bytes: &[u8]) -> Vec<u8> {
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    gz.write_all(bytes).unwrap();
    gz.finish().unwrap()
}

/// "今天北京的天气很好，我们去公园散步。" in GBK.
const GBK_SENTENCE: &[u8] = b"\xbd\xf1\xcc\xec\xb1\xb1\xbe\xa9\xb5\xc4\xcc\xec\xc6\xf8\xba\xdc\xba\xc3\xa3\xac\xce\xd2\xc3\xc7\xc8\xa5\xb9\xab\xd4\xb0\xc9\xa2\xb2\xbd\xa1\xa3";

const RIVERS: &str = "The rivers of the north run cold and clear in spring, and the mountains above them keep their snow until June.";

/// One WARC record (with its trailing CRLF CRLF).
fn record(kind: &str, uri: &str, block: &[u8]) -> Vec<u8> {
    let mut out = format!(
        "WARC/1.0\r\nWARC-Type: {kind}\r\nWARC-Record-ID: <urn:uuid:{kind}-{uri}>\r\nWARC-Date: 2026-11-23T12:00:00Z\r\n\
         WARC-Target-URI: {uri}\r\nContent-Type: application/http; msgtype=response\r\nContent-Length: {}\r\n\r\n",
        block.len()
    )
    .into_bytes();
    out.extend_from_slice(block);
    out.extend_from_slice(b"\r\n\r\n");
    out
}

fn http(content_type: &str, body: &[u8]) -> Vec<u8> {
    let mut out = format!("HTTP/1.1 200 OK\r\nServer: test\r\nContent-Type: {content_type}\r\nContent-Length: {}\r\n\r\n", body.len()).into_bytes();
    out.extend_from_slice(body);
    out
}

fn html_page(title: &str, text: &str) -> Vec<u8> {
    format!("<html><head><title>{title}</title></head><body><p>{text}</p></body></html>")
        .into_bytes()
}

/// The test WARC: its records (each its own slice, so that they can be gzip'd one member
/// each, as Common Crawl does) and the byte offsets of the two truncated ones.
struct Warc {
    records: Vec<Vec<u8>>,
    cut_offset: usize,
    end_offset: usize,
}

impl Warc {
    fn new() -> Self {
        let mut gbk_body = b"<html><head><title>GBK</title></head><body><p>".to_vec();
        gbk_body.extend_from_slice(GBK_SENTENCE);
        gbk_body.extend_from_slice(b"</p></body></html>");
        let mut records = vec![
            record(
                "warcinfo",
                "",
                b"software: simstore-test\r\nformat: WARC File Format 1.0\r\n",
            ),
            record(
                "request",
                "http://e.com/a",
                b"GET /a HTTP/1.1\r\nHost: e.com\r\n\r\n",
            ),
            record(
                "response",
                "http://e.com/a",
                &http("text/html; charset=utf-8", &html_page("Rivers", RIVERS)),
            ),
            record("metadata", "http://e.com/a", b"fetchTimeMs: 12\r\n"),
            record(
                "response",
                "http://e.com/gbk",
                &http("text/html; charset=GBK", &gbk_body),
            ),
            record(
                "response",
                "http://e.com/plain.txt",
                &http(
                    "text/plain",
                    b"Plain words about the weather in the mountains.",
                ),
            ),
            record(
                "response",
                "http://e.com/logo.png",
                &http("image/png", b"\x89PNG\r\n\x1a\n"),
            ),
            record(
                "response",
                "http://e.com/missing",
                b"HTTP/1.1 404 Not Found\r\nContent-Type: text/html\r\n\r\n<p>gone</p>",
            ),
        ];
        // Record 9 is cut short in the middle of the file: record 10 follows it.
        let mut cut = record(
            "response",
            "http://e.com/cut",
            &http("text/html", &html_page("Cut", RIVERS)),
        );
        cut.truncate(cut.len() - 40);
        records.push(cut);
        records.push(record(
            "response",
            "http://e.com/after",
            &http(
                "text/html",
                &html_page("After", "A page after the damaged one, about compilers."),
            ),
        ));
        // Record 11 is cut short at the end of the file.
        let mut end = record(
            "response",
            "http://e.com/end",
            &http("text/html", &html_page("End", RIVERS)),
        );
        end.truncate(end.len() - 30);
        records.push(end);
        let offset = |n: usize| records[..n].iter().map(Vec::len).sum();
        Self {
            cut_offset: offset(8),
            end_offset: offset(10),
            records,
        }
    }

    fn plain(&self) -> Vec<u8> {
        self.records.concat()
    }

    fn gzipped(&self) -> Vec<u8> {
        self.records.iter().flat_map(|r| gzip(r)).collect()
    }
}

const WARC_SKIPPED: &str = "skipped 5 (3 WARC records that are not responses, 1 response that is not HTML or plain text, 1 response with a non-2xx HTTP status)";

#[test]
fn warc_responses_are_documents_and_the_rest_is_counted() {
    let t = TestCommand::new();
    let w = Warc::new();
    t.write("site.warc", &w.plain());
    let o = t.run(&["import", "site.warc"]);
    let err = stderr(&o);
    assert_eq!(code(&o), 1, "{err}");
    let cut = format!(
        "error: site.warc: record 9 at byte {}: truncated record: its Content-Length is ",
        w.cut_offset
    );
    assert!(
        err.lines().any(|l| l.starts_with(&cut)
            && l.contains("bytes but the next record starts after")
            && l.ends_with("; record skipped")),
        "{err}"
    );
    let end = format!(
        "error: site.warc: record 11 at byte {}: truncated record: its Content-Length is ",
        w.end_offset
    );
    assert!(
        err.lines()
            .any(|l| l.starts_with(&end) && l.contains("but the input ends after")),
        "{err}"
    );
    assert!(
        err.contains(&format!(
            "read 6 records: stored 4 (4 new, 0 replaced), failed 2, {WARC_SKIPPED} — "
        )),
        "{err}"
    );
    let a = get(&t, "http://e.com/a").expect("the HTML response is stored");
    assert_eq!(a["url"], "http://e.com/a");
    assert!(get(&t, "http://e.com/gbk").is_some());
    assert!(get(&t, "http://e.com/plain.txt").is_some());
    assert!(
        get(&t, "http://e.com/after").is_some(),
        "the record after the cut one is read"
    );
    for id in [
        "http://e.com/logo.png",
        "http://e.com/missing",
        "http://e.com/cut",
        "http://e.com/end",
    ] {
        assert!(get(&t, id).is_none(), "{id} must not be stored");
    }
    // The page's fingerprint is the one of the text the WARC response carries, not of the
    // HTTP headers around it.
    let o = t.run(&["fingerprint", "--batch", "site.warc"]);
    let fps = json_lines(&o);
    assert_eq!(fps.len(), 4);
    assert_eq!(fps[0]["id"], "http://e.com/a");
    assert_eq!(fps[0]["fp"], a["fp"]);
    let ids: Vec<&str> = fps.iter().map(|v| v["id"].as_str().unwrap()).collect();
    assert_eq!(
        ids,
        [
            "http://e.com/a",
            "http://e.com/gbk",
            "http://e.com/plain.txt",
            "http://e.com/after"
        ]
    );
    assert_eq!(code(&o), 2, "fingerprint --batch: some record failed");

    // query --batch: every page finds itself.
    let o = t.run(&["query", "--batch", "site.warc", "--k", "0"]);
    let answers = json_lines(&o);
    let found: Vec<&Value> = answers
        .iter()
        .filter(|a| a.get("matches").is_some())
        .collect();
    assert_eq!(found.len(), 4);
    for a in found {
        assert_eq!(a["matches"][0]["id"], a["query"]);
    }
}

#[test]
fn gzipped_warc_reads_like_the_plain_one() {
    let t = TestCommand::new();
    let w = Warc::new();
    t.write("site.warc", &w.plain());
    t.write("site.warc.gz", &w.gzipped());
    // Named without .gz: found by the gzip magic and the WARC/ start.
    t.write("site-copy.bin", &w.gzipped());
    let plain = json_lines(&t.run(&["fingerprint", "--batch", "site.warc"]));
    for name in ["site.warc.gz", "site-copy.bin"] {
        let o = t.run(&["fingerprint", "--batch", name]);
        assert_eq!(json_lines(&o), plain, "{name}: {}", stderr(&o));
        assert!(
            stderr(&o).contains(&format!(
                "error: {name}: record 9 at byte {} (uncompressed): truncated record",
                w.cut_offset
            )),
            "{}",
            stderr(&o)
        );
    }
    let o = t.run(&["import", "site.warc.gz"]);
    assert!(stderr(&o).contains(WARC_SKIPPED), "{}", stderr(&o));
    let o = t.run_stdin(&["import", "-"], &w.gzipped());
    assert!(
        stderr(&o).contains("read 6 records: stored 4 (0 new, 4 replaced), failed 2"),
        "{}",
        stderr(&o)
    );
}

#[test]
fn gzipped_jsonl_by_name_by_magic_and_on_stdin() {
    let t = TestCommand::new();
    let mut jsonl = String::new();
    for i in 0..50 {
        jsonl.push_str(&format!(
            "{{\"id\":\"d{i}\",\"text\":\"document {i}: {RIVERS}\"}}\n"
        ));
    }
    t.write("docs.jsonl", jsonl.as_bytes());
    t.write("docs.jsonl.gz", &gzip(jsonl.as_bytes()));
    t.write("docs.ndjson.gz", &gzip(jsonl.as_bytes()));
    t.write("docs.data", &gzip(jsonl.as_bytes()));
    let want = json_lines(&t.run(&["fingerprint", "--batch", "docs.jsonl"]));
    assert_eq!(want.len(), 50);
    for name in ["docs.jsonl.gz", "docs.ndjson.gz", "docs.data"] {
        assert_eq!(
            json_lines(&t.run(&["fingerprint", "--batch", name])),
            want,
            "{name}"
        );
    }
    let o = t.run(&["import", "docs.jsonl.gz", "docs.data"]);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    assert!(
        stderr(&o).contains("read 100 records: stored 100 (50 new, 50 replaced), failed 0 — "),
        "{}",
        stderr(&o)
    );
    let o = t.run_stdin(&["import", "-"], &gzip(jsonl.as_bytes()));
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    assert_eq!(get(&t, "d7").unwrap()["fp"], want[7]["fp"]);
}

#[test]
fn truncated_gzip_keeps_what_came_before_and_goes_on_with_the_next_file() {
    let t = TestCommand::new();
    let mut jsonl = String::new();
    for i in 0..2000 {
        jsonl.push_str(&format!(
            "{{\"id\":\"d{i}\",\"text\":\"document {i} with its own words {}\"}}\n",
            i * 7919
        ));
    }
    let gz = gzip(jsonl.as_bytes());
    t.write("cut.jsonl.gz", &gz[..gz.len() / 2]);
    t.write(
        "next.jsonl",
        b"{\"id\":\"next\",\"text\":\"the next file is read\"}\n",
    );
    let o = t.run(&["import", "cut.jsonl.gz", "next.jsonl"]);
    let err = stderr(&o);
    assert_eq!(code(&o), 1, "{err}");
    let line = err
        .lines()
        .find(|l| l.starts_with("error: cut.jsonl.gz:"))
        .unwrap_or_else(|| panic!("{err}"));
    assert!(
        line.ends_with(": cannot decompress (the gzip data is corrupt or truncated: incomplete deflate stream); rest of the file skipped"),
        "{line}"
    );
    let n: u64 = line["error: cut.jsonl.gz:".len()..]
        .split(':')
        .next()
        .unwrap()
        .parse()
        .unwrap();
    assert!(n > 1 && n < 2000, "{line}");
    // Every line before the damage is stored (line n holds d{n-1}), and the next file too.
    assert!(get(&t, &format!("d{}", n - 2)).is_some());
    assert!(get(&t, "next").is_some());
    assert!(
        err.contains(&format!("read {} records: stored {n} ", n + 1)),
        "{err}"
    );
}

#[test]
fn directories_are_walked_in_sorted_order() {
    let t = TestCommand::new();
    let dir = t.path("site");
    std::fs::create_dir_all(dir.join("sub/deeper")).unwrap();
    std::fs::write(dir.join("b.html"), html_page("B", RIVERS)).unwrap();
    std::fs::write(
        dir.join("a.txt"),
        "Plain text about the weather in the mountains.",
    )
    .unwrap();
    std::fs::write(
        dir.join("sub/c.HTM"),
        html_page("C", "A page about compilers and their passes."),
    )
    .unwrap();
    std::fs::write(
        dir.join("sub/deeper/d.txt"),
        "Deep down in the tree, a small text file.",
    )
    .unwrap();
    std::fs::write(dir.join("sub/logo.png"), b"\x89PNG").unwrap();
    std::fs::write(dir.join("notes.md"), "# not a page").unwrap();
    std::fs::write(dir.join("empty.txt"), "").unwrap();
    let o = t.run(&["import", "site"]);
    let err = stderr(&o);
    assert_eq!(code(&o), 1, "{err}");
    assert!(
        err.lines().any(
            |l| l.starts_with("error: site/empty.txt: nothing to fingerprint")
                && l.ends_with("; file skipped")
        ),
        "{err}"
    );
    assert!(
        err.contains("read 5 records: stored 4 (4 new, 0 replaced), failed 1, skipped 2 (2 files in directories that are not .html, .htm or .txt) — "),
        "{err}"
    );
    let o = t.run(&["fingerprint", "--batch", "site"]);
    let ids: Vec<String> = json_lines(&o)
        .iter()
        .map(|v| v["id"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(
        ids,
        [
            "site/a.txt",
            "site/b.html",
            "site/sub/c.HTM",
            "site/sub/deeper/d.txt"
        ]
    );
    assert_eq!(
        get(&t, "site/b.html").unwrap()["fp"],
        json_lines(&o)[1]["fp"]
    );
}

#[test]
fn file_arguments_read_html_and_gzip_like_imports() {
    let t = TestCommand::new();
    let page = html_page("Rivers", RIVERS);
    t.write("page.html", &page);
    t.write("page.html.gz", &gzip(&page));
    t.write("notes.txt.gz", &gzip(RIVERS.as_bytes()));
    let o = t.run(&["import", "page.html", "notes.txt.gz"]);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    let fp = |args: &[&str]| stdout(&t.run(args)).trim().to_owned();
    let stored = get(&t, "page.html").unwrap()["fp"]
        .as_str()
        .unwrap()
        .to_owned();
    assert_eq!(fp(&["fingerprint", "--file", "page.html"]), stored);
    assert_eq!(fp(&["fingerprint", "--file", "page.html.gz"]), stored);
    assert_eq!(
        fp(&["fingerprint", "--file", "notes.txt.gz"]),
        fp(&["fingerprint", RIVERS])
    );
    let o = t.run(&["query", "--json", "--k", "0", "--file", "page.html.gz"]);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    assert_eq!(json_lines(&o)[0]["id"], "page.html");
}

/// Regression: a missing file (or a symlink loop) among several inputs stopped the import
/// with exit 2, and the files after it were never read. It is one failed input now.
#[test]
fn a_missing_or_looping_file_does_not_stop_the_others() {
    let t = TestCommand::new();
    t.write(
        "good.jsonl",
        b"{\"id\":\"good\",\"text\":\"the files after a missing one are still read\"}\n",
    );
    std::os::unix::fs::symlink(t.path("loop.jsonl"), t.path("loop.jsonl")).unwrap();
    let o = t.run(&["import", "missing.jsonl", "loop.jsonl", "good.jsonl"]);
    let err = stderr(&o);
    assert_eq!(code(&o), 1, "{err}");
    assert!(
        err.contains("error: missing.jsonl: cannot open it: No such file or directory"),
        "{err}"
    );
    assert!(
        err.contains("error: loop.jsonl: cannot open it: Too many levels of symbolic links"),
        "{err}"
    );
    assert!(
        err.contains("stored 1 (1 new, 0 replaced), failed 2"),
        "{err}"
    );
    assert!(get(&t, "good").is_some());
}

/// Regression: one damaged member of a multi-member `.warc.gz` (one record per member, as
/// crawlers write them) stopped the file: the 89 intact records after it were never read,
/// and the message named the record after the damaged one. Now the damaged member is one
/// failed record, named by its own number, and reading resumes at the next member.
#[test]
fn a_corrupt_gzip_member_costs_only_its_record() {
    let t = TestCommand::new();
    let records: Vec<Vec<u8>> = (1..=100)
        .map(|i| {
            let page = html_page(&format!("Page {i}"), &format!("{RIVERS} Page number {i}."));
            record(
                "response",
                &format!("http://e.com/{i}"),
                &http("text/html", &page),
            )
        })
        .collect();
    let mut members: Vec<Vec<u8>> = records.iter().map(|r| gzip(r)).collect();
    // Record 11: bytes in the middle of its deflate data damaged.
    let mid = members[10].len() / 2;
    for b in &mut members[10][mid..mid + 4] {
        *b ^= 0x5a;
    }
    t.write("site.warc.gz", &members.concat());
    let o = t.run(&["import", "site.warc.gz"]);
    let err = stderr(&o);
    assert_eq!(code(&o), 1, "{err}");
    let errors: Vec<&str> = err.lines().filter(|l| l.starts_with("error: ")).collect();
    assert_eq!(errors.len(), 1, "{err}");
    let offset: usize = records[..10].iter().map(Vec::len).sum();
    let member_at: usize = members[..10].iter().map(Vec::len).sum();
    let next = member_at + members[10].len();
    let head = format!(
        "error: site.warc.gz: record 11 at byte {offset} (uncompressed): cannot decompress the gzip member at byte {member_at} ("
    );
    let tail = format!(
        "): its data is lost, reading resumes at the next member (byte {next}); fetch the file again to recover it; record skipped"
    );
    assert!(
        errors[0].starts_with(&head) && errors[0].ends_with(&tail),
        "{}\nwanted {head}...{tail}",
        errors[0]
    );
    assert!(
        err.contains("read 100 records: stored 99 (99 new, 0 replaced), failed 1"),
        "{err}"
    );
    for i in (1..=100).filter(|&i| i != 11) {
        let doc = get(&t, &format!("http://e.com/{i}")).unwrap_or_else(|| panic!("{i} lost"));
        assert_eq!(doc["title"], format!("Page {i}"));
    }
    assert!(get(&t, "http://e.com/11").is_none());

    // gzip'd JSONL made by `cat a.gz b.gz c.gz`, b damaged: a's and c's lines are stored.
    let part = |p: &str| {
        let lines: String = (0..3)
            .map(|i| format!("{{\"id\":\"{p}{i}\",\"text\":\"{p} {i}: {RIVERS}\"}}\n"))
            .collect();
        gzip(lines.as_bytes())
    };
    let mut b = part("b");
    let mid = b.len() / 2;
    b[mid] ^= 0xff;
    b[mid + 1] ^= 0xff;
    t.write("cat.jsonl.gz", &[part("a"), b, part("c")].concat());
    let o = t.run(&["import", "cat.jsonl.gz"]);
    let err = stderr(&o);
    assert_eq!(code(&o), 1, "{err}");
    assert!(
        err.contains("error: cat.jsonl.gz:4: cannot decompress the gzip member at byte "),
        "{err}"
    );
    assert!(err.contains("read 7 records: stored 6 "), "{err}");
    assert!(get(&t, "a2").is_some() && get(&t, "c0").is_some() && get(&t, "b0").is_none());
}

/// A gzip member larger than 8 MiB is streamed: when it turns out damaged, the records
/// read from it before were already stored. They are reported (file, lines, "may be
/// wrong"), counted in the summary, and the import exits 1 (it used to say nothing of
/// them and exit 0 when the damage was the file's end).
#[test]
fn records_stored_from_a_damaged_streamed_gzip_member_are_reported() {
    use crate::dedup_dataset::{damaged, fp_records, gz};
    let t = TestCommand::new();
    let first = fp_records("f", 50, 4);
    let mut file = gz(first.as_bytes());
    file.extend(damaged(
        &gz(fp_records("b", 240_000, 3).as_bytes()),
        (8 << 20) + 1,
        100,
    ));
    t.write("big.jsonl.gz", &file);
    let o = t.run(&["import", "--json", "big.jsonl.gz"]);
    let err = stderr(&o);
    assert_eq!(code(&o), 1, "{err}");
    let line = err
        .lines()
        .find(|l| l.starts_with("error: big.jsonl.gz: lines 51–"))
        .unwrap_or_else(|| panic!("the records named: {err}"));
    let last: u64 = line["error: big.jsonl.gz: lines 51–".len()..]
        .split(':')
        .next()
        .unwrap()
        .parse()
        .unwrap();
    // The records stored: the lines of the member less those that failed (garbage
    // decoded from the damage).
    let summary: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let n = summary["damaged"].as_u64().unwrap();
    assert!(n > 100 && n <= last - 50, "{summary}");
    assert!(
        line.ends_with(&format!(": {n} records read from a damaged gzip member before its damage was found were stored; they may be wrong: import them again from a good copy of the file")),
        "{line}"
    );
    let told = format!(", {n} records from a damaged gzip member (stored; they may be wrong)");
    assert!(err.contains(&told), "{err}");
}

/// A Parquet file is read as its rows, each a record of its columns: `import`,
/// `fingerprint --batch` and `query --batch` give what the same rows as JSONL lines give
/// (a null text fails its row alone); stdin and a file that is not Parquet are refused
/// with a message.
#[test]
fn parquet_rows_read_as_jsonl_lines_of_the_same_fields() {
    use crate::dedup_parquet::{Row, write_parquet};
    let t = TestCommand::new();
    let mut rows: Vec<Row> = (0..40)
        .map(|i| Row {
            id: format!("p{i}"),
            text: Some(format!(
                "{RIVERS} Row {} of the file, {} words more.",
                i % 13,
                i * 7
            )),
            ts: (i % 3 != 0).then_some(1_700_000_000 + i),
            score: i as f64 / 8.0,
        })
        .collect();
    rows[5].text = None;
    write_parquet(&t.path("in.parquet"), &rows);
    let lines: String = rows
        .iter()
        .map(|r| {
            let v =
                serde_json::json!({"id": r.id, "content": r.text, "ts": r.ts, "score": r.score});
            format!("{v}\n")
        })
        .collect();
    t.write("in.jsonl", lines.as_bytes());
    let fields = ["--text-field", "content"];
    for name in ["in.parquet", "in.jsonl"] {
        let o = t.run(&[&["fingerprint", "--batch", name][..], &fields].concat());
        assert_ne!(code(&o), 0, "{}", stderr(&o));
        assert!(stderr(&o).contains(&format!("{name}:6")), "{}", stderr(&o));
        assert_eq!(json_lines(&o).len(), 39);
    }
    let fp =
        |name: &str| stdout(&t.run(&[&["fingerprint", "--batch", name][..], &fields].concat()));
    assert_eq!(fp("in.parquet"), fp("in.jsonl"));
    // Imported into two stores, the same documents.
    let import = |db: &str, name: &str| {
        let db = t.path(db);
        let o = t.run_on(&db, &[&["import", name][..], &fields].concat());
        assert_ne!(code(&o), 0, "{}", stderr(&o));
        let o = t.run_on(&db, &["export"]);
        assert_eq!(code(&o), 0, "{}", stderr(&o));
        let mut docs: Vec<Value> = json_lines(&o);
        docs.iter_mut().for_each(|d| {
            d.as_object_mut().unwrap().remove("time");
        });
        docs
    };
    let (from_parquet, from_jsonl) = (import("a.db", "in.parquet"), import("b.db", "in.jsonl"));
    assert_eq!(from_parquet.len(), 39);
    assert_eq!(from_parquet, from_jsonl);
    let query = |name: &str| {
        let args = ["query", "--batch", name, "--k", "3"];
        let o = t.run_on(&t.path("a.db"), &[&args[..], &fields].concat());
        assert_ne!(code(&o), 0, "{}", stderr(&o));
        stdout(&o)
    };
    assert_eq!(query("in.parquet"), query("in.jsonl"));
    // A binary text column is read as UTF-8, a bad byte replaced: the record is stored.
    {
        use arrow_array::{ArrayRef, BinaryArray, RecordBatch};
        use arrow_schema::{DataType, Field, Schema};
        let mut bad = RIVERS.as_bytes().to_vec();
        bad[3] = 0xff;
        let schema = std::sync::Arc::new(Schema::new(vec![Field::new(
            "content",
            DataType::Binary,
            false,
        )]));
        let col: ArrayRef = std::sync::Arc::new(BinaryArray::from(vec![&bad[..]]));
        let batch = RecordBatch::try_new(schema.clone(), vec![col]).unwrap();
        let file = std::fs::File::create(t.path("bin.parquet")).unwrap();
        let mut w = parquet::arrow::ArrowWriter::try_new(file, schema, None).unwrap();
        w.write(&batch).unwrap();
        w.close().unwrap();
        let o = t.run_on(
            &t.path("c.db"),
            &[&["import", "bin.parquet"][..], &fields].concat(),
        );
        assert_eq!(code(&o), 0, "{}", stderr(&o));
        assert_eq!(json_lines(&t.run_on(&t.path("c.db"), &["export"])).len(), 1);
    }
    // Refused: Parquet on stdin, and a .parquet file that is not Parquet.
    let o = t.run_stdin(&["import", "-", "--format", "parquet"], b"x");
    assert!(
        stderr(&o).contains("Parquet cannot be read from stdin"),
        "{}",
        stderr(&o)
    );
    t.write("bad.parquet", b"{\"id\":\"x\",\"text\":\"not parquet\"}\n");
    let o = t.run(&["import", "bad.parquet"]);
    assert_ne!(code(&o), 0);
    assert!(
        stderr(&o).contains("bad.parquet: not a readable Parquet file"),
        "{}",
        stderr(&o)
    );
}

/// A file's format is its name's: records in a file not named .jsonl are one text
/// document, and `import` says they look like records and how to read them so.
#[test]
fn records_in_a_file_not_named_jsonl_are_one_document_with_a_warning() {
    let t = TestCommand::new();
    let lines = "{\"id\":\"a\",\"text\":\"the first record about rivers\"}\n\
                 {\"id\":\"b\",\"text\":\"the second record about mountains\"}\n";
    t.write("docs.exp", lines.as_bytes());
    let o = t.run(&["import", "docs.exp"]);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    let says = "warning: docs.exp: read as one text document, as its name says; it starts like JSONL records: name it .jsonl, or give --format jsonl, to read them";
    assert!(stderr(&o).contains(says), "{}", stderr(&o));
    assert!(get(&t, "docs.exp").is_some() && get(&t, "a").is_none());
    let o = t.run(&["import", "--format", "jsonl", "docs.exp"]);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    assert!(!stderr(&o).contains("warning"), "{}", stderr(&o));
    assert!(get(&t, "a").is_some() && get(&t, "b").is_some());
}
