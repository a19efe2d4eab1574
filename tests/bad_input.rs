//! Bad input, one test per row of docs/errors.md: the real `simstore` binary is run on a
//! temporary store and every case checks the same rule: the bad record gets a clear
//! message (asserted verbatim where it is ours), good records next to it are stored, the
//! store stays sound (`simstore check` exits 0) and nothing panics.

use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::Instant;

use rocksdb::{DB, Options};

use crate::util::{TestCommand, code, run_measured, set_format_version, stderr};
use serde_json::Value;
use simstore::Store;

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

/// The stderr lines that start with `error: `.
fn error_lines(err: &str) -> Vec<&str> {
    err.lines().filter(|l| l.starts_with("error: ")).collect()
}

/// Asserts `err` holds exactly the line `want`.
fn assert_line(err: &str, want: &str) {
    assert!(
        err.lines().any(|l| l == want),
        "expected the line\n  {want}\nin stderr:\n{err}"
    );
}

/// The summary line of an import, without its timing part.
fn summary(read: u64, new: u64, replaced: u64, failed: u64, holds: u64) -> (String, String) {
    (
        format!(
            "read {read} record{}: stored {} ({new} new, {replaced} replaced), failed {failed} — ",
            if read == 1 { "" } else { "s" },
            new + replaced
        ),
        format!(
            "; the store holds {holds} document{}",
            if holds == 1 { "" } else { "s" }
        ),
    )
}

fn assert_summary(err: &str, read: u64, new: u64, replaced: u64, failed: u64, holds: u64) {
    let (head, tail) = summary(read, new, replaced, failed, holds);
    assert!(
        err.lines()
            .any(|l| l.starts_with(&head) && l.ends_with(&tail)),
        "expected the summary `{head}...{tail}` in stderr:\n{err}"
    );
}

/// `simstore get --json ID` of the test store, or `None` when not stored (exit 1).
fn get(t: &TestCommand, id: &str) -> Option<Value> {
    let o = t.run(&["get", "--json", id]);
    match code(&o) {
        0 => Some(serde_json::from_str(stdout(&o).trim()).unwrap()),
        1 => None,
        c => panic!("get exited {c}: {}", stderr(&o)),
    }
}

/// Documents in the test store, from `simstore stats --json`.
fn docs(t: &TestCommand) -> u64 {
    docs_on(t, &t.db())
}

fn docs_on(t: &TestCommand, db: &Path) -> u64 {
    let o = t.run_on(db, &["stats", "--json"]);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    let v: Value = serde_json::from_str(stdout(&o).trim()).unwrap();
    v["docs"].as_u64().unwrap()
}

/// `simstore check` exits 0 and says the store is sound.
fn assert_sound(t: &TestCommand) {
    assert_sound_on(t, &t.db());
}

fn assert_sound_on(t: &TestCommand, db: &Path) {
    let o = t.run_on(db, &["check"]);
    assert_eq!(code(&o), 0, "check: {}{}", stdout(&o), stderr(&o));
    assert!(stdout(&o).starts_with("ok: "), "{}", stdout(&o));
}

/// A good JSONL record (with its newline) whose id is `good-{i}`.
fn good_line(i: usize) -> Vec<u8> {
    format!(
        "{{\"id\":\"good-{i}\",\"title\":\"good {i}\",\"text\":\"good record number {i} about rivers, mountains and the weather in 北京\"}}\n"
    )
    .into_bytes()
}

/// Writes `name` into a fresh store's directory: good record 0, then each bad line
/// followed by good record i + 1 (so bad line i is line 2i + 2). Imports it and checks the
/// rule: exit 1, exactly one `error: NAME:LINE: MESSAGE; record skipped` per bad line, the
/// summary, every good record stored, the store sound. Returns stderr.
fn import_bad_lines(t: &TestCommand, name: &str, bad: &[(&[u8], &str)]) -> String {
    let mut input = good_line(0);
    for (i, (line, _)) in bad.iter().enumerate() {
        input.extend_from_slice(line);
        input.push(b'\n');
        input.extend_from_slice(&good_line(i + 1));
    }
    t.write(name, &input);
    let o = t.run(&["import", name]);
    let err = stderr(&o);
    assert_eq!(code(&o), 1, "{err}");
    for (i, (_, msg)) in bad.iter().enumerate() {
        assert_line(
            &err,
            &format!("error: {name}:{}: {msg}; record skipped", 2 * i + 2),
        );
    }
    assert_eq!(error_lines(&err).len(), bad.len(), "{err}");
    let n = bad.len() as u64;
    assert_summary(&err, 2 * n + 1, n + 1, 0, n, n + 1);
    assert_goods(t, bad.len() + 1);
    err
}

/// Good records 0..n are stored with their title, and the store holds exactly them.
fn assert_goods(t: &TestCommand, n: usize) {
    for i in 0..n {
        let doc = get(t, &format!("good-{i}")).unwrap_or_else(|| panic!("good-{i} lost"));
        assert_eq!(doc["title"], format!("good {i}"));
    }
    assert_eq!(docs(t), n as u64);
    assert_sound(t);
}

/// Words for generated documents, English and Chinese.
const WORDS: &[&str] = &[
    "the", "river", "mountain", "city", "people", "water", "history", "music", "garden", "winter",
    "summer", "market", "school", "village", "north", "south", "bridge", "train", "station",
    "weather", "北京", "天气", "公园", "散步", "跑步", "风筝", "今天", "我们", "文化", "历史",
    "城市", "音乐", "学校", "河流",
];

/// About `bytes` bytes of space-separated words, deterministic for `seed`.
fn words(seed: u64, bytes: usize) -> String {
    let mut s = String::with_capacity(bytes + 16);
    let mut x = seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1;
    while s.len() < bytes {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        s.push_str(WORDS[(x % WORDS.len() as u64) as usize]);
        s.push(' ');
    }
    s
}

// 1. Invalid UTF-8 in a JSONL line.
#[test]
fn invalid_utf8_in_a_jsonl_line() {
    let t = TestCommand::new();
    import_bad_lines(
        &t,
        "in.jsonl",
        &[
            (
                b"{\"id\":\"latin1\",\"text\":\"caf\xe9 au lait\"}",
                "not valid UTF-8 (byte 26): convert the input to UTF-8",
            ),
            (
                b"{\"id\":\"bad-\xff-id\",\"text\":\"the id itself is bad\"}",
                "not valid UTF-8 (byte 11): convert the input to UTF-8",
            ),
            (
                // A UTF-16 surrogate encoded as UTF-8 (CESU-8): invalid UTF-8.
                b"{\"id\":\"cesu\",\"text\":\"\xed\xa0\x80\"}",
                "not valid UTF-8 (byte 21): convert the input to UTF-8",
            ),
            (
                // Valid UTF-8 and read (as U+FFFD) in a text, but an id must be whole.
                b"{\"id\":\"lone\\ud800\",\"text\":\"lone surrogate\"}",
                "invalid id: it holds an unpaired UTF-16 surrogate escape (such as \\ud800 without a \\udc00..\\udfff after it): ids must be whole Unicode characters",
            ),
        ],
    );
    assert!(get(&t, "latin1").is_none());
}

// 1b. A lone surrogate escape in a text or title (a scraper cut an emoji in half), which
// serde_json alone refuses: read as U+FFFD, so the record is stored and judged; a dataset's
// kept line is the input's, byte for byte.
#[test]
fn a_lone_surrogate_escape_reads_as_a_replacement_character() {
    let t = TestCommand::new();
    let cut = r#"{"id":"cut","title":"cut \ud83d","text":"an emoji cut in half \ud83d, then the words around it \udc00 and a whole one \ud83d\ude00"}"#;
    let same = cut
        .replace(r#""cut""#, r#""same""#)
        .replace(r"\ud83d\ude00", "\u{1f600}")
        .replace(r"\ud83d", "\u{fffd}")
        .replace(r"\udc00", "\u{fffd}");
    let input = format!("{cut}\n{same}\n");
    t.write("in.jsonl", input.as_bytes());
    let o = t.run(&["import", "in.jsonl"]);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    let (cut, same) = (get(&t, "cut").expect("stored"), get(&t, "same").unwrap());
    assert_eq!(cut["title"], "cut \u{fffd}");
    assert_eq!(cut["fp"], same["fp"]);
    let o = t.run(&["dedup", "in.jsonl", "--k", "0", "--output", "kept.jsonl"]);
    assert!(stderr(&o).contains("dropped 1"), "{}", stderr(&o));
    let kept = std::fs::read_to_string(t.path("kept.jsonl")).unwrap();
    assert_eq!(kept, input.lines().next().unwrap().to_owned() + "\n");
}

// 2a. A raw NUL byte in a JSONL line.
#[test]
fn nul_byte_in_a_jsonl_line() {
    let t = TestCommand::new();
    import_bad_lines(
        &t,
        "in.jsonl",
        &[
            (
                b"{\"id\":\"nul\",\"text\":\"a\0b\"}",
                "contains a NUL byte (binary data?): records must be UTF-8 text",
            ),
            (
                b"{\"id\":\"nul-after\",\"text\":\"ok\"}\0",
                "contains a NUL byte (binary data?): records must be UTF-8 text",
            ),
        ],
    );
    // An escaped NUL (`\u0000`) is valid JSON text: it separates words like punctuation.
    let o = t.run_stdin(
        &["import", "--format", "jsonl", "-"],
        b"{\"id\":\"escaped-nul\",\"text\":\"a\\u0000b words\"}\n",
    );
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    assert!(get(&t, "escaped-nul").is_some());
    assert_sound(&t);
}

// 2b. A binary file imported as text.
#[test]
fn binary_file_imported_as_text() {
    let t = TestCommand::new();
    // An ELF-like header: ASCII, then NULs, then a byte that is not UTF-8.
    let mut elf = b"\x7fELF\x02\x01\x01\x00\x00\x00\x00\x00\x00\x00\x00\x00".to_vec();
    elf.extend_from_slice(b"\x03\x00\x3e\x00\x01\x00\x00\x00\x40\x10\x00\x00\xff\xfe\x00\x00");
    t.write("prog.bin", &elf);
    // Valid UTF-8 with NULs.
    t.write("nul.dat", b"\x00\x01\x02binary data\x00");
    t.write(
        "good.txt",
        "a good text document about rivers, 今天北京的天气很好".as_bytes(),
    );
    let o = t.run(&[
        "import", "--format", "text", "prog.bin", "good.txt", "nul.dat",
    ]);
    let err = stderr(&o);
    assert_eq!(code(&o), 1, "{err}");
    assert_line(
        &err,
        "error: prog.bin: binary data (a NUL byte at offset 7), not text: give text or HTML in a known charset; file skipped",
    );
    assert_line(
        &err,
        "error: nul.dat: binary data (a NUL byte at offset 0), not text: give text or HTML in a known charset; file skipped",
    );
    assert_summary(&err, 3, 1, 0, 2, 1);
    assert!(get(&t, "good.txt").is_some());
    // Without --format, a file whose extension is not .jsonl/.ndjson/.json is text too.
    let o = t.run(&["import", "prog.bin"]);
    assert_eq!(code(&o), 1);
    assert_line(
        &stderr(&o),
        "error: prog.bin: binary data (a NUL byte at offset 7), not text: give text or HTML in a known charset; file skipped",
    );
    // Binary data given as JSONL: one error per line, the good line is stored.
    let mut input = elf.clone();
    input.extend_from_slice(b"\n");
    input.extend_from_slice(&good_line(0));
    t.write("bin.jsonl", &input);
    let o = t.run(&["import", "bin.jsonl"]);
    assert_eq!(code(&o), 1);
    assert_line(
        &stderr(&o),
        "error: bin.jsonl:1: not valid UTF-8 (byte 28): convert the input to UTF-8; record skipped",
    );
    assert!(get(&t, "good-0").is_some());
    assert_eq!(docs(&t), 2);
    assert_sound(&t);
}

// 3. Empty documents: empty text, whitespace only, punctuation only.
#[test]
fn empty_documents() {
    const EMPTY: &str = "nothing to fingerprint: give \"text\" (or \"title\") with words in it, or a precomputed \"fp\"";
    let t = TestCommand::new();
    import_bad_lines(
        &t,
        "in.jsonl",
        &[
            (br#"{"id":"empty","text":""}"#, EMPTY),
            (br#"{"id":"blank","text":"   \t\n\r  "}"#, EMPTY),
            (
                r#"{"id":"punct","text":"...!!! ，。、——？《》 --- ***"}"#.as_bytes(),
                EMPTY,
            ),
            (br#"{"id":"no-text"}"#, EMPTY),
            (br#"{"id":"empty-title","title":"  ","text":"?"}"#, EMPTY),
        ],
    );
    // A title alone is enough; empty text files are empty documents.
    t.write(
        "title.jsonl",
        br#"{"id":"title-only","title":"only a title"}"#,
    );
    t.write("empty.txt", b"");
    t.write("punct.txt", " \n\t ... ，。\n".as_bytes());
    let o = t.run(&["import", "title.jsonl", "empty.txt", "punct.txt"]);
    let err = stderr(&o);
    assert_eq!(code(&o), 1, "{err}");
    assert_line(&err, &format!("error: empty.txt: {EMPTY}; file skipped"));
    assert_line(&err, &format!("error: punct.txt: {EMPTY}; file skipped"));
    assert_summary(&err, 3, 1, 0, 2, 7);
    assert_eq!(get(&t, "title-only").unwrap()["title"], "only a title");
    assert_sound(&t);
}

/// Size of the big-document test: 100 MB (2-5 s in release, peak RSS ~340 MiB), or the MB in
/// SIMSTORE_BIG_DOC_MB.
fn big_doc_bytes() -> usize {
    std::env::var("SIMSTORE_BIG_DOC_MB")
        .ok()
        .and_then(|v| v.parse::<usize>().ok())
        .unwrap_or(100)
        * 1_000_000
}

// 4. A 100 MB document: stored, in reasonable memory.
#[test]
fn hundred_megabyte_document_is_stored() {
    let size = big_doc_bytes();
    let t = TestCommand::new();
    {
        let f = std::fs::File::create(t.path("big.jsonl")).unwrap();
        let mut w = BufWriter::new(f);
        w.write_all(&good_line(0)).unwrap();
        writeln!(
            w,
            "{{\"id\":\"big\",\"title\":\"a big document\",\"text\":\"{}\"}}",
            words(4, size)
        )
        .unwrap();
        w.write_all(&good_line(1)).unwrap();
        w.flush().unwrap();
    }
    let start = Instant::now();
    let (o, peak) = run_measured(t.command_on(&t.db(), &["import", "big.jsonl"]));
    let secs = start.elapsed().as_secs_f64();
    let err = stderr(&o);
    assert_eq!(code(&o), 0, "{err}");
    assert_summary(&err, 3, 3, 0, 0, 3);
    eprintln!(
        "big document: {} MB imported in {secs:.1} s, peak RSS {} MiB",
        size / 1_000_000,
        peak >> 20
    );
    if peak > 0 {
        // Measured: ~3.4x the document (343 MiB for 100 MB), ~80 MiB for 10 MB.
        let limit = 6 * size as u64 + (200 << 20);
        assert!(
            peak < limit,
            "peak RSS {} MiB > {} MiB",
            peak >> 20,
            limit >> 20
        );
    }
    let doc = get(&t, "big").unwrap();
    assert_eq!(doc["title"], "a big document");
    assert!(doc["length"].as_u64().unwrap() > size as u64 / 2, "{doc}");
    assert!(get(&t, "good-0").is_some() && get(&t, "good-1").is_some());
    assert_eq!(docs(&t), 3);
    assert_sound(&t);
}

// 5. A 10 MB line that is not JSON.
#[test]
fn ten_megabyte_line_that_is_not_json() {
    let t = TestCommand::new();
    let line = vec![b'x'; 10_000_000];
    let mut input = good_line(0);
    input.extend_from_slice(&line);
    input.push(b'\n');
    input.extend_from_slice(&good_line(1));
    t.write("in.jsonl", &input);
    let (o, peak) = run_measured(t.command_on(&t.db(), &["import", "in.jsonl"]));
    let err = stderr(&o);
    assert_eq!(code(&o), 1, "{err}");
    assert_line(
        &err,
        "error: in.jsonl:2: invalid JSON: expected value at line 1 column 1; record skipped",
    );
    assert_eq!(error_lines(&err).len(), 1, "{err}");
    assert_summary(&err, 3, 2, 0, 1, 2);
    if peak > 0 {
        assert!(peak < 200 << 20, "peak RSS {} MiB", peak >> 20);
    }
    assert_goods(&t, 2);
}

// 6. Malformed JSON.
#[test]
fn malformed_json() {
    let t = TestCommand::new();
    let not_object = |what: &str| {
        format!("expected a JSON object like {{\"id\": \"...\", \"text\": \"...\"}}, found {what}")
    };
    let (array, string, number, null) = (
        not_object("an array"),
        not_object("a string"),
        not_object("a number"),
        not_object("null"),
    );
    import_bad_lines(
        &t,
        "in.jsonl",
        &[
            (
                br#"{"id": "trunc", "text": "no end"#,
                "invalid JSON: EOF while parsing a string at line 1 column 31",
            ),
            (
                br#"{"id":"trunc2","text":"x""#,
                "invalid JSON: EOF while parsing an object at line 1 column 25",
            ),
            (
                br#"{"id":"trail","text":"trailing garbage"} xyz"#,
                "invalid JSON: trailing characters at line 1 column 42",
            ),
            (
                br#"{"id":"two","text":"two objects"}{"id":"x"}"#,
                "invalid JSON: trailing characters at line 1 column 34",
            ),
            (br#"[{"id":"arr","text":"in an array"}]"#, &array),
            (br#""just a bare string""#, &string),
            (b"42", &number),
            (b"null", &null),
            (
                br#"{'id':'single','text':'quotes'}"#,
                "invalid JSON: key must be a string at line 1 column 2",
            ),
        ],
    );
    // A truncated last line without a newline (a file cut short).
    let t = TestCommand::new();
    let mut input = good_line(0);
    input.extend_from_slice(br#"{"id":"cut","text":"the file ends he"#);
    t.write("cut.jsonl", &input);
    let o = t.run(&["import", "cut.jsonl"]);
    let err = stderr(&o);
    assert_eq!(code(&o), 1, "{err}");
    assert_line(
        &err,
        "error: cut.jsonl:2: invalid JSON: EOF while parsing a string at line 1 column 36; record skipped",
    );
    assert_goods(&t, 1);
}

// 7. Wrong field types.
#[test]
fn wrong_field_types() {
    let t = TestCommand::new();
    import_bad_lines(
        &t,
        "in.jsonl",
        &[
            (
                br#"{"id":["a"],"text":"id is an array"}"#,
                "field \"id\" (--id-field) must be a string or a number, found an array",
            ),
            (
                br#"{"id":"text-array","text":["text","array"]}"#,
                "field \"text\" must be a string, found an array",
            ),
            (
                br#"{"id":"title-object","title":{"a":1},"text":"title is an object"}"#,
                "field \"title\" must be a string, found an object",
            ),
            (
                br#"{"id":"fp-number","fp":12345}"#,
                "field \"fp\" must be a string, found a number",
            ),
            (
                br#"{"id":"url-bool","url":true,"text":"url is a boolean"}"#,
                "field \"url\" must be a string, found a boolean",
            ),
            (
                br#"{"id":"fp-short","fp":"12345"}"#,
                "field \"fp\" must be exactly 16 hexadecimal digits, found \"12345\"",
            ),
        ],
    );
    // A record without an id is named by its input and line number, a number id is as
    // written.
    let o = t.run_stdin(
        &["import", "-"],
        b"{\"text\":\"no id\"}\n{\"id\":7,\"text\":\"id is a number\"}\n",
    );
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    assert!(get(&t, "<stdin>:1").is_some() && get(&t, "7").is_some());
    // null means absent, and unknown fields are ignored.
    let o = t.run_stdin(
        &["import", "-"],
        br#"{"id":"nulls","title":null,"url":null,"fp":null,"text":"null fields are absent","extra":[1]}"#,
    );
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    assert!(get(&t, "nulls").is_some());
}

// 8. Duplicate ids in one file: the last one wins.
#[test]
fn duplicate_ids_last_one_wins() {
    let input = concat!(
        r#"{"id":"dup","title":"first","text":"the first version of the page about rivers"}"#,
        "\n",
        r#"{"id":"other","text":"another page about hills"}"#,
        "\n",
        r#"{"id":"dup","title":"second","text":"the second version of the page about mountains"}"#,
        "\n",
        r#"{"id":"dup","title":"third","fp":"00000000000000ff"}"#,
        "\n",
    );
    let t = TestCommand::new();
    t.write("in.jsonl", input.as_bytes());
    let first = {
        let o = t.run(&[
            "fingerprint",
            "the first version of the page about rivers",
            "--title",
            "first",
        ]);
        stdout(&o).trim().to_owned()
    };
    // One batch, one batch per record, and the bulk path.
    for (db, extra) in [
        ("one.db", None),
        ("each.db", Some("--batch-size=1")),
        ("bulk.db", Some("--bulk")),
    ] {
        let db = t.path(db);
        let mut args = vec!["import"];
        args.extend(extra);
        args.push("in.jsonl");
        let o = t.run_on(&db, &args);
        let err = stderr(&o);
        assert_eq!(code(&o), 0, "{extra:?}: {err}");
        assert_summary(&err, 4, 2, 2, 0, 2);
        let o = t.run_on(&db, &["get", "--json", "dup"]);
        let doc: Value = serde_json::from_str(stdout(&o).trim()).unwrap();
        assert_eq!(
            (doc["title"].as_str(), doc["fp"].as_str()),
            (Some("third"), Some("00000000000000ff")),
            "{extra:?}"
        );
        // The replaced versions are gone from the tables.
        let o = t.run_on(&db, &["query", "--k", "0", "--fp", &first]);
        assert_eq!(code(&o), 1, "{extra:?}: {}", stdout(&o));
        assert_eq!(docs_on(&t, &db), 2);
        assert_sound_on(&t, &db);
    }
    // Importing the file again replaces all four.
    let o = t.run_on(&t.path("one.db"), &["import", "in.jsonl"]);
    assert_summary(&stderr(&o), 4, 0, 4, 0, 2);
}

/// "今天北京的天气很好，我们去公园散步。" in GBK.
const GBK_SENTENCE: &[u8] = b"\xbd\xf1\xcc\xec\xb1\xb1\xbe\xa9\xb5\xc4\xcc\xec\xc6\xf8\xba\xdc\xba\xc3\xa3\xac\xce\xd2\xc3\xc7\xc8\xa5\xb9\xab\xd4\xb0\xc9\xa2\xb2\xbd\xa1\xa3";

// 9. GBK-encoded Chinese declared as UTF-8: no charset detection, an invalid-UTF-8 error.
#[test]
fn gbk_text_is_an_invalid_utf8_error() {
    let t = TestCommand::new();
    let mut line = br#"{"id":"gbk","text":""#.to_vec();
    line.extend_from_slice(GBK_SENTENCE);
    line.extend_from_slice(br#""}"#);
    let mut title = br#"{"id":"gbk-title","title":""#.to_vec();
    title.extend_from_slice(b"\xd6\xd0\xce\xc4"); // 中文
    title.extend_from_slice(br#"","text":"utf-8 text with a GBK title"}"#);
    import_bad_lines(
        &t,
        "in.jsonl",
        &[
            (
                &line,
                "not valid UTF-8 (byte 20): convert the input to UTF-8",
            ),
            (
                &title,
                "not valid UTF-8 (byte 27): convert the input to UTF-8",
            ),
        ],
    );
    // A GBK text *file* is decoded (charset detection, `simstore::input::charset`): stored with the
    // fingerprint of its UTF-8 text.
    t.write("gbk.txt", GBK_SENTENCE);
    let o = t.run(&["import", "gbk.txt"]);
    let err = stderr(&o);
    assert_eq!(code(&o), 0, "{err}");
    assert_eq!(docs(&t), 4);
    let utf8 = stdout(&t.run(&["fingerprint", "今天北京的天气很好，我们去公园散步。"]));
    assert_eq!(get(&t, "gbk.txt").unwrap()["fp"], utf8.trim());
    assert_sound(&t);
}

// 9b. Short GBK strings can be valid UTF-8 by chance: they are stored as mojibake.
#[test]
fn gbk_that_happens_to_be_valid_utf8_is_stored_as_mojibake() {
    let t = TestCommand::new();
    // 学校 in GBK is D1 A7 D0 A3, which is also the UTF-8 of "ѧУ" (Cyrillic).
    let mut line = br#"{"id":"school","title":""#.to_vec();
    line.extend_from_slice(b"\xd1\xa7\xd0\xa3");
    line.extend_from_slice(br#"","text":"a page whose title was GBK"}"#);
    t.write("in.jsonl", &line);
    let o = t.run(&["import", "in.jsonl"]);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    assert_eq!(get(&t, "school").unwrap()["title"], "ѧУ");
    assert_sound(&t);
}

// 10. A truncated gzip file: decompressed until the damage, then one error for the rest.
#[test]
fn truncated_gzip_is_one_error_for_the_rest_of_the_file() {
    let t = TestCommand::new();
    // The first 20 bytes of `printf '{"id":"z1","text":"compressed record"}\n' | gzip`.
    let gz = b"\x1f\x8b\x08\x00\x00\x00\x00\x00\x00\x03\xab\x56\xca\x4c\x51\xb2\x52\xaa\x32\x54";
    t.write("x.jsonl.gz", gz);
    t.write("good.jsonl", &good_line(0));
    let o = t.run(&["import", "good.jsonl", "x.jsonl.gz"]);
    let err = stderr(&o);
    assert_eq!(code(&o), 1, "{err}");
    let msg = "cannot decompress (the gzip data is corrupt or truncated: incomplete deflate stream); rest of the file skipped";
    assert_line(&err, &format!("error: x.jsonl.gz:1: {msg}"));
    assert_summary(&err, 2, 1, 0, 1, 1);
    // Any format: the gzip magic is what counts.
    let o = t.run(&["import", "--format", "jsonl", "x.jsonl.gz"]);
    assert_eq!(code(&o), 1);
    assert_line(&stderr(&o), &format!("error: x.jsonl.gz:1: {msg}"));
    let o = t.run_stdin(&["import", "-"], gz);
    assert_eq!(code(&o), 1);
    assert_line(&stderr(&o), &format!("error: <stdin>:1: {msg}"));
    assert_goods(&t, 1);
}

// 11. A truncated WARC record is reported; broken HTML is extracted, markup only is empty.
#[test]
fn truncated_warc_is_reported_and_broken_html_is_extracted() {
    let t = TestCommand::new();
    t.write(
        "page.warc",
        b"WARC/1.0\r\nWARC-Type: response\r\nWARC-Target-URI: http://example.com/\r\n\
          Content-Length: 99999\r\n\r\nHTTP/1.1 200 OK\r\nContent-Type: text/html\r\n\r\n\
          <html><body><p>Rivers and mountains of the north",
    );
    let html = "<html><head><title>Broken page</title><script>var x = \"<p>\";</script></head>\
                <body><div><p>今天北京的天气很好 <b>unclosed <i>tags everywhere &amp; &nbsp; entities &#x4e2d;";
    t.write("broken.html", html.as_bytes());
    t.write(
        "markup.html",
        b"<html><body><div></div><br/><!-- only markup --></body></html>",
    );
    // The WARC record says 99999 bytes and the file ends after 92: a truncated record.
    let o = t.run(&["import", "page.warc"]);
    let err = stderr(&o);
    assert_eq!(code(&o), 1, "{err}");
    assert_line(
        &err,
        "error: page.warc: record 1 at byte 0: truncated record: its Content-Length is 99999 bytes but the input ends after 92; record skipped",
    );
    assert_summary(&err, 1, 0, 0, 1, 0);
    let o = t.run(&["import", "broken.html", "markup.html"]);
    let err = stderr(&o);
    assert_eq!(code(&o), 1, "{err}");
    // A page of markup only has no text: nothing to fingerprint.
    assert_line(
        &err,
        "error: markup.html: nothing to fingerprint: the page's reader kept no main text (what the page shows, if anything, is links, menus or other page chrome); give its text as \"text\" in a JSONL record, or a precomputed \"fp\"; file skipped",
    );
    assert_summary(&err, 2, 1, 0, 1, 1);
    // The broken page is extracted (simstore::input::html): its fingerprint is that of its title and
    // visible text, the same through --file, and not that of the raw markup.
    let fp_of = |args: &[&str]| stdout(&t.run(args)).trim().to_owned();
    let extracted = fp_of(&["fingerprint", "--file", "broken.html"]);
    assert_eq!(get(&t, "broken.html").unwrap()["fp"], extracted.as_str());
    assert_ne!(extracted, fp_of(&["fingerprint", html]));
    assert!(get(&t, "markup.html").is_none());
    assert!(get(&t, "page.warc").is_none());
    assert_sound(&t);
}

/// Rewrites the manifest of a closed store with `f` applied to its bytes.
// 12. A store of a newer format version.
#[test]
fn newer_format_version_is_refused() {
    let t = TestCommand::new();
    t.write("in.jsonl", &[good_line(0), good_line(1)].concat());
    assert_eq!(code(&t.run(&["import", "in.jsonl"])), 0);
    set_format_version(&t.db(), 9);
    let db = t.db().display().to_string();
    let what = "store format version 9 is not supported by this build (it reads versions 5 to 8); \
                it was written by a newer simstore: upgrade simstore to open it";
    t.write("more.jsonl", &good_line(2));
    for (args, context) in [
        (&["import", "more.jsonl"][..], "cannot open or create"),
        (&["query", "some text about rivers"][..], "cannot open"),
        (&["get", "good-0"][..], "cannot open"),
        (&["stats"][..], "cannot open"),
        (&["check"][..], "cannot open"),
        (&["delete", "good-0"][..], "cannot open"),
        (&["repair"][..], "cannot open"),
    ] {
        let o = t.run(args);
        assert_eq!(code(&o), 2, "{args:?}: {}", stderr(&o));
        assert_eq!(
            stderr(&o).trim_end(),
            format!("error: {context} {db}: {what}"),
            "{args:?}"
        );
    }
    // Untouched: with its version restored the store holds what it held.
    set_format_version(&t.db(), 8);
    assert_goods(&t, 2);
}

// 13. Directories and files that are not a store.
#[test]
fn paths_that_are_not_a_store() {
    let t = TestCommand::new();
    t.write("in.jsonl", &good_line(0));
    let tail =
        "give the path of a store (`--db`, `dedup --against`), or create one with `simstore init`";
    let check = |db: &Path, reason: &str| {
        let shown = db.display().to_string();
        for (args, context) in [
            (&["import", "in.jsonl"][..], "cannot open or create"),
            (&["query", "--fp", "00000000000000ff"][..], "cannot open"),
            (&["check"][..], "cannot open"),
        ] {
            let o = t.run_on(db, args);
            assert_eq!(code(&o), 2, "{args:?}: {}", stderr(&o));
            assert_eq!(
                stderr(&o).trim_end(),
                format!(
                    "error: {context} {shown}: {shown} is not a simstore store ({reason}); {tail}"
                ),
                "{args:?}"
            );
        }
    };

    // A non-empty directory: untouched.
    let dir = t.path("photos");
    std::fs::create_dir(&dir).unwrap();
    std::fs::write(dir.join("a.jpg"), b"\xff\xd8\xff").unwrap();
    check(
        &dir,
        "the directory is not empty and holds no RocksDB database",
    );
    let names: Vec<_> = std::fs::read_dir(&dir).unwrap().flatten().collect();
    assert_eq!(names.len(), 1);

    // A RocksDB database of another program: untouched.
    let other = t.path("other.rocksdb");
    {
        let db = DB::open_default(&other).unwrap();
        db.put(b"their-key", b"their-value").unwrap();
    }
    check(
        &other,
        "a RocksDB database without simstore's `meta` column family",
    );
    assert_eq!(
        DB::list_cf(&Options::default(), &other).unwrap(),
        vec!["default".to_owned()]
    );
    let db = DB::open_default(&other).unwrap();
    assert_eq!(
        db.get(b"their-key").unwrap().as_deref(),
        Some(&b"their-value"[..])
    );
    drop(db);

    // A plain file: untouched.
    let file = t.write("notes.txt", b"my notes");
    check(&file, "it is a file, not a directory");
    assert_eq!(std::fs::read(&file).unwrap(), b"my notes");
    let o = t.run_on(&file, &["init"]);
    assert_eq!(code(&o), 2);
    assert_eq!(
        stderr(&o).trim_end(),
        format!(
            "error: {} already exists; choose another --db path or remove it first",
            file.display()
        )
    );

    // An empty directory is no store to read, but import creates one in it.
    let empty = t.path("empty");
    std::fs::create_dir(&empty).unwrap();
    let o = t.run_on(&empty, &["check"]);
    assert_eq!(code(&o), 2);
    assert_eq!(
        stderr(&o).trim_end(),
        format!(
            "error: cannot open {0}: no store at {0}; create one with `simstore init` (or `simstore import`, which creates one)",
            empty.display()
        )
    );
    assert_eq!(code(&t.run_on(&empty, &["import", "in.jsonl"])), 0);
    assert_eq!(docs_on(&t, &empty), 1);
}

// 14. A store locked by another writer.
#[test]
fn store_locked_by_another_writer() {
    let t = TestCommand::new();
    t.write("in.jsonl", &good_line(0));
    t.write("more.jsonl", &good_line(1));
    assert_eq!(code(&t.run(&["import", "in.jsonl"])), 0);
    let holder = Store::open(t.db()).unwrap();
    holder
        .insert(&simstore::Document::new(
            "held",
            "written by the process holding the lock",
        ))
        .unwrap();
    let db = t.db().display().to_string();

    // Writers are refused, clearly, before reading any input.
    for args in [
        &["import", "more.jsonl"][..],
        &["delete", "good-0"],
        &["repair"],
    ] {
        let o = t.run(args);
        let err = stderr(&o);
        assert_eq!(code(&o), 2, "{args:?}: {err}");
        let context = if args[0] == "import" {
            "cannot open or create"
        } else {
            "cannot open"
        };
        assert_eq!(
            err.trim_end(),
            format!(
                "error: {context} {db}: the store at {db} is locked by another writer \
                 (one writer at a time: another process, or another open handle of the \
                 store in this process): \
                 IO error: While lock file: {db}/LOCK: Resource temporarily unavailable"
            ),
            "{args:?}"
        );
    }
    // Readers open read-only (they never take the lock) and see the holder's writes.
    let o = t.run(&[
        "query",
        "--k",
        "0",
        "written by the process holding the lock",
    ]);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    assert_eq!(stderr(&o), "");
    assert!(stdout(&o).starts_with("0\theld\t"), "{}", stdout(&o));
    for args in [&["get", "good-0"][..], &["stats"], &["check"]] {
        let o = t.run(args);
        assert_eq!(code(&o), 0, "{args:?}: {}", stderr(&o));
        assert_eq!(stderr(&o), "", "{args:?}");
    }
    assert_eq!(docs(&t), 2);
    drop(holder);

    // Unlocked: the refused import goes through.
    let o = t.run(&["import", "more.jsonl"]);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    assert!(get(&t, "good-1").is_some() && get(&t, "held").is_some());
    assert_eq!(docs(&t), 3);
    assert_sound(&t);
}

/// A tmpfs mounted for one test; unmounted on drop (also when the test fails).
struct Tmpfs(PathBuf);

impl Tmpfs {
    /// Mounts a tmpfs of `size` (e.g. "8m") at `dir`, or says why not (then the caller
    /// skips): only as root, and only where mount works (not in every container).
    fn mount(dir: &Path, size: &str) -> Result<Self, String> {
        let uid = Command::new("id")
            .arg("-u")
            .output()
            .map_err(|e| e.to_string())?;
        if String::from_utf8_lossy(&uid.stdout).trim() != "0" {
            return Err("not running as root".into());
        }
        std::fs::create_dir_all(dir).map_err(|e| e.to_string())?;
        let o = Command::new("mount")
            .args(["-t", "tmpfs", "-o", &format!("size={size}"), "tmpfs"])
            .arg(dir)
            .output()
            .map_err(|e| e.to_string())?;
        if !o.status.success() {
            return Err(format!(
                "mount failed: {}",
                String::from_utf8_lossy(&o.stderr)
            ));
        }
        Ok(Self(dir.to_path_buf()))
    }
}

impl Drop for Tmpfs {
    fn drop(&mut self) {
        let ok = Command::new("umount")
            .arg(&self.0)
            .status()
            .is_ok_and(|s| s.success());
        if !ok {
            let _ = Command::new("umount").arg("-l").arg(&self.0).status();
        }
    }
}

/// Setup of the disk-full tests: a store on an 8 MiB tmpfs holding 100 documents
/// (`pre-0`..`pre-99`) and, outside the tmpfs, `fill.jsonl`: 4,000 records with ~3 KB titles
/// and 1.5 KB URLs (what the store keeps; it does not keep the text), 22 MB in all. `None` (after printing why) when no tmpfs can be mounted.
fn disk_full_setup(t: &TestCommand) -> Option<(Tmpfs, PathBuf)> {
    let mount = match Tmpfs::mount(&t.path("small"), "8m") {
        Ok(m) => m,
        Err(why) => {
            eprintln!("SKIPPED disk-full test: cannot mount a tmpfs ({why})");
            return None;
        }
    };
    let db = mount.0.join("store.db");
    let pre: String = (0..100)
        .map(|i| {
            format!(
                "{{\"id\":\"pre-{i}\",\"title\":\"pre {i}\",\"text\":\"{}\"}}\n",
                words(i, 300)
            )
        })
        .collect();
    t.write("pre.jsonl", pre.as_bytes());
    let fill: String = (0..4000)
        .map(|i| {
            format!(
                "{{\"id\":\"fill-{i}\",\"title\":\"{}\",\"url\":\"https://example.com/{i}/{}\",\"text\":\"{}\"}}\n",
                words(1000 + i, 3000),
                "p".repeat(1500),
                words(9000 + i, 1000)
            )
        })
        .collect();
    t.write("fill.jsonl", fill.as_bytes());
    let o = t.run_on(&db, &["import", "pre.jsonl"]);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    Some((mount, db))
}

// 15. Disk full (ENOSPC) during an import: a clean error said once, after a summary of
// what was stored; the store survives.
#[test]
fn disk_full_is_a_clean_error_and_the_store_survives() {
    let t = TestCommand::new();
    let Some((_mount, db)) = disk_full_setup(&t) else {
        return;
    };
    let o = t.run_on(&db, &["import", "--batch-size", "100", "fill.jsonl"]);
    let err = stderr(&o);
    assert_eq!(code(&o), 2, "{err}");
    // The summary (what was stored before the disk filled), then the error.
    let lines: Vec<&str> = err.lines().collect();
    assert_eq!(lines.len(), 2, "{err}");
    assert!(lines[0].starts_with("read "), "{err}");
    assert!(
        lines[1].starts_with("error: cannot store records of fill.jsonl: storage error: IO error: No space left on device"),
        "{err}"
    );
    // RocksDB's message once (it names ENOSPC twice itself).
    assert_eq!(err.matches("No space left on device").count(), 2, "{err}");

    // The disk still full, the reading commands answer: they open read-only, writing
    // nothing (they exited 2 when opening wrote new log files).
    for args in [
        &["check"][..],
        &["stats"],
        &["get", "pre-0"],
        &["query", "--fp", "0000000000000000"],
    ] {
        let o = t.run_on(&db, args);
        assert_ne!(code(&o), 2, "{args:?} on a full disk: {}", stderr(&o));
    }

    // The store reopens, is sound, and holds every acknowledged document plus whole batches.
    assert_sound_on(&t, &db);
    let n = docs_on(&t, &db);
    // The summary counts what the import stored before the failure.
    assert!(lines[0].contains(&format!("stored {} ", n - 100)), "{err}");
    eprintln!("disk full after {} records of fill.jsonl: {err}", n - 100);
    assert!(
        (100..4100).contains(&n) && n.is_multiple_of(100),
        "{n} documents"
    );
    {
        let store = Store::builder(&db).create_if_missing(false).open().unwrap();
        for i in 0..100 {
            let doc = store
                .get(&format!("pre-{i}"))
                .unwrap()
                .expect("acknowledged");
            assert_eq!(doc.title.as_deref(), Some(format!("pre {i}").as_str()));
        }
        assert_eq!(store.len(), n);
    }
    // Reopening flushed the log into compressed tables, so there is room again.
    t.write("one.jsonl", &good_line(0));
    let o = t.run_on(&db, &["import", "one.jsonl"]);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    assert_eq!(docs_on(&t, &db), n + 1);
    assert_sound_on(&t, &db);
}

// 16. An id longer than 4096 bytes.
#[test]
fn id_longer_than_4096_bytes() {
    let t = TestCommand::new();
    let long = format!(r#"{{"id":"{}","text":"a long id"}}"#, "a".repeat(4097));
    let cjk = format!(
        r#"{{"id":"{}","text":"a long Chinese id"}}"#,
        "中".repeat(1366)
    );
    import_bad_lines(
        &t,
        "in.jsonl",
        &[
            (
                long.as_bytes(),
                "invalid id: the id is 4097 bytes; at most 4096 are allowed",
            ),
            (
                cjk.as_bytes(),
                "invalid id: the id is 4098 bytes; at most 4096 are allowed",
            ),
            (
                br#"{"id":"","text":"empty id"}"#,
                "invalid id: the id is empty",
            ),
        ],
    );
    // Exactly 4096 bytes is fine.
    let max = "b".repeat(4096);
    t.write(
        "max.jsonl",
        format!(r#"{{"id":"{max}","text":"the longest id"}}"#).as_bytes(),
    );
    assert_eq!(code(&t.run(&["import", "max.jsonl"])), 0);
    assert_eq!(get(&t, &max).unwrap()["id"], max.as_str());
    // Looking up or deleting a too-long id is simply "not stored".
    assert!(get(&t, &"a".repeat(4097)).is_none());
    assert_eq!(code(&t.run(&["delete", &"a".repeat(4097)])), 1);
    assert_sound(&t);
}

// 17. An empty file and a file of blank lines: 0 records, exit 0.
#[test]
fn empty_file_and_blank_lines() {
    let t = TestCommand::new();
    t.write("empty.jsonl", b"");
    t.write("blank.jsonl", b"\n\n   \n\t\r\n\r\n\n");
    for name in ["empty.jsonl", "blank.jsonl"] {
        let o = t.run(&["import", name]);
        let err = stderr(&o);
        assert_eq!(code(&o), 0, "{name}: {err}");
        assert!(error_lines(&err).is_empty(), "{err}");
        assert_summary(&err, 0, 0, 0, 0, 0);
    }
    let o = t.run_stdin(&["import", "--format", "jsonl", "-"], b"\n\n");
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    assert_summary(&stderr(&o), 0, 0, 0, 0, 0);
    assert_eq!(docs(&t), 0);
    assert_sound(&t);
    // Blank lines are not records but still count for line numbers.
    let mut input = good_line(0);
    input.extend_from_slice(b"\n  \n");
    input.extend_from_slice(br#"{"id":"x","text":42}"#);
    input.extend_from_slice(b"\n\n");
    input.extend_from_slice(&good_line(1));
    t.write("gaps.jsonl", &input);
    let o = t.run(&["import", "gaps.jsonl"]);
    let err = stderr(&o);
    assert_eq!(code(&o), 1, "{err}");
    assert_line(
        &err,
        "error: gaps.jsonl:4: field \"text\" must be a string, found a number; record skipped",
    );
    assert_summary(&err, 3, 2, 0, 1, 2);
    assert_goods(&t, 2);
}

// 17b. Empty standard input.
#[test]
fn empty_stdin_is_zero_records() {
    let t = TestCommand::new();
    for input in [&b""[..], b"\n\n"] {
        let o = t.run_stdin(&["import", "-"], input);
        let err = stderr(&o);
        assert_eq!(code(&o), 0, "{input:?}: {err}");
        assert!(error_lines(&err).is_empty(), "{err}");
        assert_summary(&err, 0, 0, 0, 0, 0);
    }
}

// 1b. A UTF-8 byte-order mark at the start of a JSONL file (as some Windows tools write).
#[test]
fn utf8_bom_at_the_start_is_skipped() {
    let t = TestCommand::new();
    let mut input = b"\xef\xbb\xbf".to_vec();
    input.extend_from_slice(&good_line(0));
    input.extend_from_slice(&good_line(1));
    t.write("bom.jsonl", &input);
    let o = t.run(&["import", "bom.jsonl"]);
    let err = stderr(&o);
    assert_eq!(code(&o), 0, "{err}");
    assert_summary(&err, 2, 2, 0, 0, 2);
    assert_goods(&t, 2);
}

/// A WARC response record (with its trailing CRLF CRLF) whose `text/plain` page is `text`;
/// its Content-Length is `length`, or the true one.
fn warc_record(uri: &str, text: &str, length: Option<&str>) -> Vec<u8> {
    let block = format!("HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\n\r\n{text}");
    let length = length.map_or_else(|| block.len().to_string(), str::to_owned);
    format!(
        "WARC/1.0\r\nWARC-Type: response\r\nWARC-Target-URI: {uri}\r\nContent-Length: {length}\r\n\r\n{block}\r\n\r\n"
    )
    .into_bytes()
}

// 11b. A WARC record whose Content-Length is not a byte count. (It was reported as an
// invalid header line "WARC/1.0".)
#[test]
fn warc_content_length_that_is_not_a_byte_count() {
    let t = TestCommand::new();
    let mut input = warc_record("http://e.com/0", &words(1, 300), None);
    let bad_at = input.len();
    input.extend(warc_record("http://e.com/bad", &words(2, 300), Some("-5")));
    input.extend(warc_record("http://e.com/2", &words(3, 300), None));
    t.write("cl.warc", &input);
    let o = t.run(&["import", "cl.warc"]);
    let err = stderr(&o);
    assert_eq!(code(&o), 1, "{err}");
    assert_line(
        &err,
        &format!(
            "error: cl.warc: record 2 at byte {bad_at}: Content-Length -5 is not a byte count: the record's header is damaged; record skipped"
        ),
    );
    assert_eq!(error_lines(&err).len(), 1, "{err}");
    assert_summary(&err, 3, 2, 0, 1, 2);
    assert!(get(&t, "http://e.com/0").is_some() && get(&t, "http://e.com/2").is_some());
    assert_sound(&t);
}

/// Writes `mb` MB of zeros gzip'd (a "gzip bomb": ~1 KB per MB) to `path`.
fn write_gzip_bomb(path: &Path, mb: usize) {
    let file = BufWriter::new(std::fs::File::create(path).unwrap());
    let mut gz = flate2::write::GzEncoder::new(file, flate2::Compression::fast());
    let zeros = vec![0u8; 1 << 20];
    for _ in 0..mb {
        gz.write_all(&zeros).unwrap();
    }
    gz.finish().unwrap().flush().unwrap();
}

// 25. Documents over the size limit (--max-doc-bytes): a gzip bomb, endless input, stdin,
// a JSONL line, a WARC record. Each is one failed record, read no further than the limit;
// the records around it are stored. (There was no limit for text, HTML and stdin:
// `import /dev/zero` grew to 8.3 GB, a 14 MB gzip of 3 GB of zeros to 3.4 GB.)
#[test]
fn documents_over_the_size_limit_are_one_failed_record_each() {
    let t = TestCommand::new();
    let too_large = "the document is larger than 1 MiB (decompressed): split it, or raise the limit with --max-doc-bytes; file skipped";
    write_gzip_bomb(&t.path("bomb.txt.gz"), 200);
    t.write("good.jsonl", &good_line(0));
    let import = ["import", "--max-doc-bytes", "1048576"];
    let (o, peak) = run_measured(t.command_on(
        &t.db(),
        &[&import[..], &["bomb.txt.gz", "good.jsonl"]].concat(),
    ));
    let err = stderr(&o);
    assert_eq!(code(&o), 1, "{err}");
    assert_line(&err, &format!("error: bomb.txt.gz: {too_large}"));
    assert_summary(&err, 2, 1, 0, 1, 1);
    eprintln!(
        "gzip bomb of 200 MB, limit 1 MiB: peak RSS {} MiB",
        peak >> 20
    );
    // Reading the whole bomb would take 200 MB at least.
    assert!(peak < 150 << 20, "peak RSS {} MiB", peak >> 20);
    // Endless input.
    let (o, peak) = run_measured(t.command_on(&t.db(), &[&import[..], &["/dev/zero"]].concat()));
    assert_eq!(code(&o), 1, "{}", stderr(&o));
    assert_line(&stderr(&o), &format!("error: /dev/zero: {too_large}"));
    assert!(peak < 150 << 20, "peak RSS {} MiB", peak >> 20);
    // Standard input, as a text.
    let o = t.run_stdin(
        &["import", "--format", "text", "--max-doc-bytes", "1000", "-"],
        words(5, 2000).as_bytes(),
    );
    assert_eq!(code(&o), 1, "{}", stderr(&o));
    assert_line(
        &stderr(&o),
        "error: <stdin>: the document is larger than 1000 bytes (decompressed): split it, or raise the limit with --max-doc-bytes; file skipped",
    );
    // A JSONL line and a WARC record over 4 KiB, among records under it.
    let mut jsonl = good_line(1);
    jsonl.extend(format!("{{\"id\":\"long\",\"text\":\"{}\"}}\n", words(6, 5000)).as_bytes());
    jsonl.extend(good_line(2));
    t.write("in.jsonl", &jsonl);
    let mut warc = warc_record("http://e.com/big", &words(7, 5000), None);
    let big = warc.len() - 4 - warc.iter().position(|&b| b == b'H').unwrap();
    warc.extend(warc_record("http://e.com/small", &words(8, 500), None));
    t.write("in.warc", &warc);
    let o = t.run(&["import", "--max-doc-bytes", "4096", "in.jsonl", "in.warc"]);
    let err = stderr(&o);
    assert_eq!(code(&o), 1, "{err}");
    assert_line(
        &err,
        "error: in.jsonl:2: the line is longer than 4 KiB: split the document, raise the limit with --max-doc-bytes, or check the input is JSONL; record skipped",
    );
    assert_line(
        &err,
        &format!(
            "error: in.warc: record 1 at byte 0: the record is {big} bytes, larger than the limit of 4 KiB: raise it with --max-doc-bytes to read it; record skipped"
        ),
    );
    assert_eq!(error_lines(&err).len(), 2, "{err}");
    assert_summary(&err, 5, 3, 0, 2, 4);
    for id in ["good-0", "good-1", "good-2", "http://e.com/small"] {
        assert!(get(&t, id).is_some(), "{id} lost");
    }
    assert_sound(&t);
}

// 25b. Many large records under the limit: read in chunks of at most 64 MiB of items, not
// `--batch-size` records at once (300 records of 1 MiB peaked at 329 MiB; now ~90 MiB).
#[test]
fn large_records_are_read_in_bounded_chunks() {
    let t = TestCommand::new();
    {
        let f = std::fs::File::create(t.path("wide.jsonl")).unwrap();
        let mut w = BufWriter::new(f);
        let pad = "x".repeat(1 << 20);
        for i in 0..300 {
            writeln!(
                w,
                "{{\"id\":\"w{i}\",\"text\":\"record {i} about rivers\",\"pad\":\"{pad}\"}}"
            )
            .unwrap();
        }
        w.flush().unwrap();
    }
    let (o, peak) = run_measured(t.command_on(&t.db(), &["import", "wide.jsonl"]));
    let err = stderr(&o);
    assert_eq!(code(&o), 0, "{err}");
    assert_summary(&err, 300, 300, 0, 0, 300);
    eprintln!("300 records of 1 MiB: peak RSS {} MiB", peak >> 20);
    // Holding all 300 MiB of lines at once would exceed this.
    assert!(peak < 200 << 20, "peak RSS {} MiB", peak >> 20);
}

/// A number of probe threads past what a query could use is refused by the CLI (100,000
/// threads ran the machine out of memory); the library starts at most 64 whatever it is
/// given, and answers as with any other number.
#[test]
fn absurd_probe_thread_counts_are_refused_or_capped() {
    let t = TestCommand::new();
    let store = simstore::Store::open(t.db()).unwrap();
    let meta = simstore::DocMeta::default();
    store
        .insert_fingerprint("a", simstore::Fingerprint(7), meta)
        .unwrap();
    drop(store);
    for args in [
        &[
            "query",
            "--probe-threads",
            "100000",
            "--fp",
            "0000000000000007",
        ][..],
        &["serve", "--probe-threads", "65"],
    ] {
        let o = t.run(args);
        assert_eq!(code(&o), 2, "{args:?}: {}", stderr(&o));
        assert!(stderr(&o).contains("from 0 to 64"), "{}", stderr(&o));
    }
    let o = t.run(&["query", "--probe-threads", "64", "--fp", "0000000000000007"]);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    let store = simstore::Store::builder(t.db())
        .read_only(true)
        .rocksdb(simstore::RocksOptions::new().probe_threads(1_000_000))
        .open()
        .unwrap();
    let hits = store.query(simstore::Fingerprint(7), 3).unwrap();
    assert_eq!(hits.len(), 1);
}
