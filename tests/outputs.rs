//! Where the commands write. Every command that writes a file (`dedup --output`,
//! `export -o`, `eval --json`) treats what is at the path by one rule: a new or regular
//! file is replaced at once (a temporary file renamed over it), a symbolic link is
//! followed, a FIFO or a character device is written through, a directory is refused.
//! Every command that writes to stdout exits 0 without a word when the reader closes the
//! pipe early (`| head -1`).

use std::io::{BufRead, BufReader};
use std::os::unix::fs::FileTypeExt;
use std::process::{Command, Output, Stdio};

use crate::util::{TestCommand, code, stderr};

/// Records (and texts) in the inputs and the store: enough that every long output fills
/// a pipe's buffer (64 KiB).
const N: u64 = 20_000;

/// A store of [`N`] documents (fingerprints in pairs), the same records in `in.jsonl`,
/// texts in `texts.jsonl` and a labelled set in `set/`.
fn setup() -> TestCommand {
    let t = TestCommand::new();
    let lines: String = (0..N)
        .map(|i| {
            let fp = (i / 2).wrapping_mul(0x9e37_79b9_7f4a_7c15);
            format!("{{\"id\":\"d{i}\",\"fp\":\"{fp:016x}\"}}\n")
        })
        .collect();
    t.write("in.jsonl", lines.as_bytes());
    let o = t.run(&["import", "in.jsonl"]);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    let texts: String = (0..N)
        .map(|i| format!("{{\"id\":\"t{i}\",\"text\":\"text number {i} about rivers\"}}\n"))
        .collect();
    t.write("texts.jsonl", texts.as_bytes());
    crate::quality::write_small_set(&t);
    t
}

/// The commands that write a file, `OUT` standing for its path.
const WRITERS: &[&[&str]] = &[
    &["dedup", "in.jsonl", "--output", "OUT"],
    &["export", "-o", "OUT"],
    &["eval", "set", "--json", "OUT"],
];

/// Runs `writer` with `out` as its path; it must succeed.
fn write_to(t: &TestCommand, writer: &[&str], out: &str) -> Output {
    let args: Vec<&str> = writer
        .iter()
        .map(|&a| if a == "OUT" { out } else { a })
        .collect();
    let o = t.run(&args);
    assert_eq!(code(&o), 0, "{args:?}: {}", stderr(&o));
    o
}

/// What `writer` writes, into a new regular file.
fn expected(t: &TestCommand, writer: &[&str]) -> Vec<u8> {
    write_to(t, writer, "plain.out");
    let bytes = std::fs::read(t.path("plain.out")).unwrap();
    assert!(!bytes.is_empty(), "{writer:?}");
    bytes
}

#[test]
fn a_symlink_is_followed_and_stays_a_symlink() {
    let t = setup();
    for writer in WRITERS {
        let want = expected(&t, writer);
        t.write("real.out", b"old content, longer than nothing\n");
        let _ = std::fs::remove_file(t.path("link.out"));
        std::os::unix::fs::symlink("real.out", t.path("link.out")).unwrap();
        write_to(&t, writer, "link.out");
        let link = std::fs::symlink_metadata(t.path("link.out")).unwrap();
        assert!(
            link.file_type().is_symlink(),
            "{writer:?}: the link was replaced"
        );
        assert_eq!(
            std::fs::read(t.path("real.out")).unwrap(),
            want,
            "{writer:?}"
        );
        // A link to a file yet to be written creates the file, not a file over the link.
        let _ = std::fs::remove_file(t.path("dangling.out"));
        let _ = std::fs::remove_file(t.path("created.out"));
        std::os::unix::fs::symlink("created.out", t.path("dangling.out")).unwrap();
        write_to(&t, writer, "dangling.out");
        let link = std::fs::symlink_metadata(t.path("dangling.out")).unwrap();
        assert!(link.file_type().is_symlink(), "{writer:?}");
        assert_eq!(
            std::fs::read(t.path("created.out")).unwrap(),
            want,
            "{writer:?}"
        );
    }
}

#[test]
fn a_fifo_is_written_through() {
    let t = setup();
    for writer in WRITERS {
        let want = expected(&t, writer);
        let fifo = t.path("pipe.out");
        let _ = std::fs::remove_file(&fifo);
        let made = Command::new("mkfifo").arg(&fifo).status().unwrap();
        assert!(made.success());
        // Held open for reading and writing (Linux: does not block), so that the reader
        // below opens at once and sees the end only once this is closed too: the test
        // cannot hang whatever the command does with the path.
        let held = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .open(&fifo)
            .unwrap();
        let path = fifo.clone();
        let reader = std::thread::spawn(move || std::fs::read(path).unwrap());
        write_to(&t, writer, "pipe.out");
        drop(held);
        let got = reader.join().unwrap();
        assert_eq!(got, want, "{writer:?}: what went into the FIFO");
        let kind = std::fs::symlink_metadata(&fifo).unwrap().file_type();
        assert!(kind.is_fifo(), "{writer:?}: the FIFO was replaced");
    }
}

/// A character device is written through, not replaced: a node like `/dev/null` (major
/// 1, minor 3) made in the test's directory (as root only: `mknod`), so that the
/// machine's own `/dev/null` is never at stake.
#[test]
fn a_character_device_is_written_through() {
    let t = setup();
    for writer in WRITERS {
        let null = t.path("null.out");
        let _ = std::fs::remove_file(&null);
        let made = Command::new("mknod")
            .arg(&null)
            .args(["c", "1", "3"])
            .output();
        if !made.is_ok_and(|o| o.status.success()) {
            eprintln!("skipped: mknod needs root");
            return;
        }
        write_to(&t, writer, "null.out");
        let kind = std::fs::symlink_metadata(&null).unwrap().file_type();
        assert!(kind.is_char_device(), "{writer:?}: the device was replaced");
    }
}

#[test]
fn a_directory_is_refused() {
    let t = setup();
    for writer in WRITERS {
        std::fs::create_dir_all(t.path("dir.out")).unwrap();
        t.write("dir.out/inside", b"kept");
        let args: Vec<&str> = writer
            .iter()
            .map(|&a| if a == "OUT" { "dir.out" } else { a })
            .collect();
        let o = t.run(&args);
        assert_eq!(code(&o), 2, "{writer:?}: {}", stderr(&o));
        // `dedup --output` writes Parquet shards into a directory: a new or empty one.
        let says = match writer[0] {
            "dedup" => "--output dir.out: the directory is not empty",
            _ => "cannot write to dir.out: it is a directory",
        };
        assert!(stderr(&o).contains(says), "{writer:?}: {}", stderr(&o));
        assert_eq!(std::fs::read(t.path("dir.out/inside")).unwrap(), b"kept");
    }
}

/// Every command that writes to stdout, with arguments that make it write (and exit 0),
/// and whether it writes more than a pipe holds.
const STDOUT_WRITERS: &[(&[&str], bool)] = &[
    (&["export"], true),
    (&["export", "--format", "csv", "--order", "id"], true),
    (&["ids"], true),
    (&["query", "--batch", "in.jsonl"], true),
    (&["query", "--fp", "0000000000000000", "--json"], false),
    (&["fingerprint", "--batch", "texts.jsonl"], true),
    (&["fingerprint", "some words to fingerprint"], false),
    (&["dedup"], true),
    (&["dedup", "--pairs"], true),
    (&["dedup", "--json", "in.jsonl"], true),
    (&["dedup", "--pairs", "in.jsonl"], true),
    (&["get", "d1"], false),
    (&["stats"], false),
    (&["check"], false),
    (&["explain", "d0", "d1"], false),
    (&["eval", "set"], false),
    (&["completions", "bash"], true),
    (&["man"], false),
];

/// Runs `args` with stdout a pipe whose reader reads `lines` lines and then closes it
/// (0: closed before the command starts, so its first write fails).
fn into_closed_pipe(t: &TestCommand, args: &[&str], lines: usize) -> Output {
    let (reader, writer) = std::io::pipe().unwrap();
    let mut reader = (lines > 0).then(|| BufReader::new(reader));
    let child = t
        .command(args)
        .stdin(Stdio::null())
        .stdout(writer)
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    if let Some(r) = &mut reader {
        for _ in 0..lines {
            let mut line = String::new();
            r.read_line(&mut line).unwrap();
        }
    }
    drop(reader);
    child.wait_with_output().unwrap()
}

#[test]
fn a_closed_pipe_ends_every_command_quietly() {
    let t = setup();
    for &(args, long) in STDOUT_WRITERS {
        for lines in [0, 1] {
            let o = into_closed_pipe(&t, args, lines);
            let err = stderr(&o);
            assert_eq!(code(&o), 0, "{args:?} after {lines} lines: {err}");
            // A short output may fit in the pipe before it closes: the command then ends
            // as it would (dedup's summary on stderr).
            if lines == 0 || long {
                assert!(err.is_empty(), "{args:?} after {lines} lines: {err}");
            } else {
                assert!(
                    !err.contains("error"),
                    "{args:?} after {lines} lines: {err}"
                );
            }
        }
    }
}
