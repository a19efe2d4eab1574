//! The rough edges a new user met (issue 23): hints name flags that exist, values that
//! cannot work are refused by the argument parser with the allowed range, defaults follow
//! the store, and errors say what the input was.

use crate::util::{TestCommand, code, stderr};

/// A store of k_max `k_max` holding `a` = ...00ff and `b` = ...ff00 (16 bits apart).
fn store_with_two(k_max: &str) -> TestCommand {
    let t = TestCommand::new();
    assert_eq!(code(&t.run(&["init", "--k-max", k_max])), 0);
    t.write(
        "in.jsonl",
        b"{\"id\":\"a\",\"fp\":\"00000000000000ff\"}\n{\"id\":\"b\",\"fp\":\"000000000000ff00\"}\n",
    );
    let o = t.run(&["import", "in.jsonl"]);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    t
}

#[test]
fn a_k_beyond_the_tables_names_commands_that_exist() {
    let t = store_with_two("3");
    for args in [
        &["dedup", "--k", "5"][..],
        &["import", "--dedup", "--k", "5", "in.jsonl"],
        &["query", "--k", "5", "--fp", "00000000000000ff"],
    ] {
        let o = t.run(args);
        let err = stderr(&o);
        assert_eq!(code(&o), 2, "{args:?}: {err}");
        // `dedup` and `import` have no --exhaustive: the hint names whole commands.
        assert!(!err.contains("use --exhaustive"), "{args:?}: {err}");
        assert!(
            err.contains("`simstore relayout --k-max 5`"),
            "{args:?}: {err}"
        );
        assert!(
            err.contains("`simstore query --exhaustive`"),
            "{args:?}: {err}"
        );
    }
}

#[test]
fn values_that_cannot_work_are_refused_with_the_range() {
    let t = store_with_two("3");
    for (args, range) in [
        (
            &[
                "query",
                "--k",
                "70",
                "--exhaustive",
                "--fp",
                "00000000000000ff",
            ][..],
            "0..=64",
        ),
        (&["dedup", "--k", "70"], "0..=16"),
        (&["dedup", "--k", "70", "in.jsonl"], "0..=16"),
        (
            &["query", "--limit", "0", "--fp", "00000000000000ff"],
            "1..",
        ),
        (&["relayout", "--k-max", "0"], "1..=16"),
        (&["init", "--k-max", "0"], "1..=16"),
    ] {
        let o = t.run(args);
        let err = stderr(&o);
        assert_eq!(code(&o), 2, "{args:?}: {err}");
        assert!(err.contains(range), "{args:?}: {err}");
        assert!(!err.contains("invalid layout"), "{args:?}: {err}");
    }
    // Nothing was changed by the refused relayout.
    let o = t.run(&["query", "--fp", "00000000000000fe"]);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
}

#[test]
fn query_k_defaults_to_the_stores_k_max() {
    // k_max = 1: a plain query (no --k) works, and answers within 1.
    let t = store_with_two("1");
    let o = t.run(&["query", "--fp", "00000000000000fe"]);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    assert!(String::from_utf8_lossy(&o.stdout).contains("\ta\t"));
    let o = t.run(&["query", "--fp", "00000000000000fc"]);
    assert_eq!(code(&o), 1, "{}", stderr(&o));
    assert!(stderr(&o).contains("within distance 1 "), "{}", stderr(&o));
    let o = t.run(&["dedup"]);
    assert_eq!(code(&o), 1, "{}", stderr(&o));
    assert!(stderr(&o).contains("within k = 1,"), "{}", stderr(&o));
    let o = t.run(&["import", "--dedup", "in.jsonl"]);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
}

#[test]
fn fingerprints_may_carry_0x_and_bad_batch_lines_say_what_they_are() {
    let t = store_with_two("3");
    for fp in ["0x00000000000000ff", "0X00000000000000FF"] {
        let o = t.run(&["query", "--fp", fp]);
        assert_eq!(code(&o), 0, "{fp}: {}", stderr(&o));
    }
    let o = t.run_stdin(&["query", "--batch", "-"], b"not-a-fp\n00000000000000ff\n");
    let err = stderr(&o);
    assert!(
        err.contains("<stdin>:1: neither a JSON record")
            && err.contains("invalid fingerprint \"not-a-fp\""),
        "{err}"
    );
    assert!(!err.contains("invalid JSON"), "{err}");
    assert!(String::from_utf8_lossy(&o.stdout).contains("\"id\":\"a\""));
}

#[test]
fn a_dedup_whose_every_record_failed_is_an_error() {
    let t = TestCommand::new();
    t.write("bad.jsonl", b"{\"id\":\"x\",\"text\":\"\"}\nnot json\n");
    let o = t.run(&["dedup", "bad.jsonl"]);
    let err = stderr(&o);
    assert_eq!(code(&o), 2, "{err}");
    assert!(
        err.contains("no record of the input could be read (2 failed"),
        "{err}"
    );
    // One good record: no pairs, exit 1 as before.
    t.write(
        "one.jsonl",
        b"{\"id\":\"x\",\"fp\":\"00000000000000ff\"}\nnot json\n",
    );
    assert_eq!(code(&t.run(&["dedup", "one.jsonl"])), 1);
}

#[test]
fn output_reads_well() {
    let t = TestCommand::new();
    t.write("one.jsonl", b"{\"id\":\"a\",\"fp\":\"00000000000000ff\"}\n");
    let o = t.run(&["import", "one.jsonl"]);
    let err = stderr(&o);
    assert!(err.starts_with("read 1 record: stored 1 "), "{err}");
    assert!(
        err.trim_end().ends_with("the store holds 1 document"),
        "{err}"
    );
    // The spec by its version; in full on request.
    let o = t.run(&["stats"]);
    let out = String::from_utf8_lossy(&o.stdout).into_owned();
    let spec = out.lines().find(|l| l.starts_with("spec:")).unwrap();
    assert!(spec.len() < 60 && spec.contains(" v"), "{spec}");
    let o = t.run(&["stats", "--verbose"]);
    let out = String::from_utf8_lossy(&o.stdout).into_owned();
    let spec = out.lines().find(|l| l.starts_with("spec:")).unwrap();
    assert!(spec.len() > 200 && spec.contains("seed"), "{spec}");
    // Times as RFC 3339 (UTC), not Unix seconds.
    let o = t.run(&["get", "a"]);
    let out = String::from_utf8_lossy(&o.stdout).into_owned();
    let time = out.lines().find(|l| l.starts_with("time:")).unwrap();
    let stamp = time.trim_start_matches("time:").trim();
    assert!(
        stamp.len() == 20
            && stamp.starts_with("20")
            && stamp.ends_with('Z')
            && stamp.as_bytes()[10] == b'T',
        "{time}"
    );
}

#[test]
fn dedup_prints_readable_groups_with_titles() {
    let t = TestCommand::new();
    t.write(
        "in.jsonl",
        "{\"id\":\"a\",\"title\":\"Rain in Tucson\",\"fp\":\"00000000000000ff\"}\n\
         {\"id\":\"a-copy\",\"title\":\"UPDATE: Rain in Tucson\",\"fp\":\"00000000000000fe\"}\n\
         {\"id\":\"b\",\"title\":\"Other\",\"fp\":\"ffffffffffff0000\"}\n"
            .as_bytes(),
    );
    for args in [
        &["dedup", "--pretty", "in.jsonl"][..],
        &["dedup", "--pretty"],
    ] {
        if args.len() == 2 {
            assert_eq!(code(&t.run(&["import", "in.jsonl"])), 0);
        }
        let o = t.run(args);
        assert_eq!(code(&o), 0, "{}", stderr(&o));
        assert_eq!(
            String::from_utf8_lossy(&o.stdout),
            "cluster 1: 2 documents\n  a       Rain in Tucson\n  a-copy  UPDATE: Rain in Tucson\n",
            "{args:?}"
        );
        assert!(
            stderr(&o).starts_with("3 documents: 1 pair within k = 3, 1 cluster (largest 2)"),
            "{}",
            stderr(&o)
        );
    }
    // Piped without --pretty: JSON lines, as before.
    let o = t.run(&["dedup", "in.jsonl"]);
    assert_eq!(
        String::from_utf8_lossy(&o.stdout),
        "{\"cluster\":0,\"ids\":[\"a\",\"a-copy\"]}\n"
    );
}
