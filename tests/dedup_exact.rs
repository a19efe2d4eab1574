//! A dedup of files decides the pairs whose sketch estimate is near the threshold by the
//! texts' exact shingle similarity (`Clusters::checked`, src/cli/dedup/exact.rs), read
//! again from JSONL or Parquet; from stdin, which cannot be read again, the sketches decide.
//! The texts are two pairs found for this: one the sketches take and the texts refuse
//! (estimate 0.665, exact 0.569 < 0.6), one the other way round (0.554, 0.690).

use simstore::Fingerprinter;
use simstore::text::sketch::jaccard;

use crate::dedup_parquet::{Row, write_parquet};
use crate::util::{TestCommand, code, stderr};

/// `n` five-letter words of a xorshift stream of `seed`.
fn words(seed: u64, n: usize) -> Vec<String> {
    let mut x = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    let mut letter = || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        char::from(b'a' + (x % 26) as u8)
    };
    (0..n).map(|_| (0..5).map(|_| letter()).collect()).collect()
}

/// Two texts sharing 60 words, each with `k` of its own (before or after).
fn pair(seed: u64, k: usize) -> (String, String) {
    let shared = words(seed, 60);
    let a = [shared.clone(), words(seed + 1_000_000, k)].concat();
    let b = [words(seed + 2_000_000, k), shared].concat();
    (a.join(" "), b.join(" "))
}

/// The four records: `r-a`, `r-b` (the sketches take them, the texts refuse), `t-a`, `t-b`
/// (the sketches refuse, the texts take).
fn records() -> Vec<(&'static str, String)> {
    let (ra, rb) = pair(9, 22);
    let (ta, tb) = pair(27, 13);
    vec![("r-a", ra), ("r-b", rb), ("t-a", ta), ("t-b", tb)]
}

fn exact(a: &str, b: &str) -> f64 {
    let f = Fingerprinter::new();
    jaccard(&f.shingles(None, a), &f.shingles(None, b))
}

fn ids_of_lines(text: &str) -> Vec<String> {
    text.lines()
        .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap()["id"].to_string())
        .collect()
}

#[test]
fn pairs_near_the_threshold_are_decided_by_the_texts_in_a_dedup_of_files() {
    let recs = records();
    let f = Fingerprinter::new();
    let estimate = |i: usize, j: usize| {
        let s = |k: usize| f.sketch(None, &recs[k].1).unwrap();
        s(i).similarity(&s(j))
    };
    // The premise: the sketches alone would decide both pairs the other way.
    assert!(estimate(0, 1) >= 0.6 && exact(&recs[0].1, &recs[1].1) < 0.6);
    assert!(estimate(2, 3) < 0.6 && exact(&recs[2].1, &recs[3].1) >= 0.6);
    let t = TestCommand::new();
    let lines: String = recs
        .iter()
        .map(|(id, text)| format!("{}\n", serde_json::json!({"id": id, "text": text})))
        .collect();
    t.write("all.jsonl", lines.as_bytes());
    let o = t.run(&[
        "dedup",
        "all.jsonl",
        "-o",
        "kept.jsonl",
        "--clusters",
        "rows.jsonl",
    ]);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    assert!(
        stderr(&o).contains("2 pairs near the threshold (or of records the cleaner cut down) decided by the texts (against the sketches' verdict: 1 taken, 1 refused)"),
        "{}",
        stderr(&o)
    );
    let kept = std::fs::read_to_string(t.path("kept.jsonl")).unwrap();
    assert_eq!(ids_of_lines(&kept), [r#""r-a""#, r#""r-b""#, r#""t-a""#]);
    // The row of the record dropped gives the similarity that decided it.
    let rows = std::fs::read_to_string(t.path("rows.jsonl")).unwrap();
    let dropped: Vec<serde_json::Value> = rows
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .filter(|r: &serde_json::Value| r["kept"] == false)
        .collect();
    assert_eq!(dropped.len(), 1, "{rows}");
    assert_eq!(dropped[0]["id"], "t-b");
    let similarity = dropped[0]["similarity"].as_f64().unwrap();
    assert_eq!(similarity, exact(&recs[2].1, &recs[3].1));
    // The same records as Parquet rows.
    let rows: Vec<Row> = recs
        .iter()
        .map(|(id, text)| Row {
            id: id.to_string(),
            text: Some(text.clone()),
            ts: None,
            score: 0.0,
        })
        .collect();
    std::fs::create_dir(t.path("in")).unwrap();
    write_parquet(&t.path("in/a.parquet"), &rows);
    let o = t.run(&[
        "dedup",
        "in",
        "--text-field",
        "content",
        "-o",
        "kept.parquet",
    ]);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    assert!(stderr(&o).contains("kept 3, dropped 1"), "{}", stderr(&o));
    // Without --output, the clusters printed; from stdin, the sketches decide.
    let o = t.run(&["dedup", "all.jsonl", "--json"]);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    let out = String::from_utf8_lossy(&o.stdout).to_string();
    assert!(
        out.contains("t-a") && out.contains("t-b") && !out.contains("r-a"),
        "{out}"
    );
    // `/dev/stdin` (a descriptor's pipe, no extension) is sniffed as JSONL, as `-` is.
    for input in ["-", "/dev/stdin"] {
        let o = t.run_stdin(&["dedup", input, "--json"], lines.as_bytes());
        assert_eq!(code(&o), 0, "{}", stderr(&o));
        let out = String::from_utf8_lossy(&o.stdout).to_string();
        assert!(
            out.contains("r-a") && out.contains("r-b") && !out.contains("t-a"),
            "{input}: {out}"
        );
        assert!(
            stderr(&o).contains("decided by the sketches alone"),
            "{}",
            stderr(&o)
        );
    }
    // With --output, stdin (as `-` or as a descriptor's pipe) is copied beside the output
    // and read again: the texts decide, as for the file; no copy is left.
    let o = t.run(&["dedup", "all.jsonl", "-o", "from-file.jsonl"]);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    let want = std::fs::read(t.path("from-file.jsonl")).unwrap();
    for input in ["-", "/dev/stdin"] {
        let o = t.run_stdin(
            &["dedup", input, "-o", "from-stdin.jsonl"],
            lines.as_bytes(),
        );
        assert_eq!(code(&o), 0, "{input}: {}", stderr(&o));
        assert!(!stderr(&o).contains("sketches alone"), "{}", stderr(&o));
        assert_eq!(
            std::fs::read(t.path("from-stdin.jsonl")).unwrap(),
            want,
            "{input}"
        );
    }
    let names: Vec<String> = std::fs::read_dir(t.path(""))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert!(
        !names.iter().any(|n| n.contains("simstore-partial")),
        "{names:?}"
    );
    // Stdin redirected from a file (`/dev/stdin` is then a regular file), a byte order mark
    // before the first record, and the kept lines written through to stdout.
    let from_file = t
        .command(&["dedup", "/dev/stdin", "-o", "redirected.jsonl"])
        .stdin(std::fs::File::open(t.path("all.jsonl")).unwrap())
        .output()
        .unwrap();
    assert_eq!(code(&from_file), 0, "{}", stderr(&from_file));
    assert_eq!(std::fs::read(t.path("redirected.jsonl")).unwrap(), want);
    let bom = format!("\u{feff}{lines}");
    let o = t.run_stdin(&["dedup", "-", "-o", "bom.jsonl"], bom.as_bytes());
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    let kept = |p: &str| std::fs::read_to_string(t.path(p)).unwrap().lines().count();
    assert_eq!(kept("bom.jsonl"), kept("from-file.jsonl"));
    let o = t.run_stdin(&["dedup", "-", "-o", "/dev/stdout"], lines.as_bytes());
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    assert_eq!(o.stdout, want);
    // Its records are still named as stdin's.
    let bad = format!("{lines}{{\"id\":\n");
    let o = t.run_stdin(&["dedup", "-", "-o", "k.jsonl"], bad.as_bytes());
    assert!(stderr(&o).contains("<stdin>:"), "{}", stderr(&o));
    // A named pipe is read once, as stdin is (reading it again would wait for a writer
    // forever): the sketches decide; --report is refused before reading.
    let fifo = t.path("pipe.jsonl");
    let made = std::process::Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .unwrap();
    assert!(made.success());
    let writer = {
        let (fifo, lines) = (fifo.clone(), lines.clone());
        std::thread::spawn(move || std::fs::write(fifo, lines).unwrap())
    };
    let o = t.run(&["dedup", "pipe.jsonl", "--json"]);
    writer.join().unwrap();
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    assert!(String::from_utf8_lossy(&o.stdout).contains("r-a"));
    assert!(
        stderr(&o).contains("decided by the sketches alone"),
        "{}",
        stderr(&o)
    );
    let o = t.run(&["dedup", "pipe.jsonl", "--report", "r.html"]);
    assert_eq!(code(&o), 2, "{}", stderr(&o));
    let says = "pipe.jsonl (stdin or a pipe) cannot be read twice";
    assert!(stderr(&o).contains(says), "{}", stderr(&o));
}
