//! The scripts beside the code: `scripts/local-cluster.sh` refuses ports already taken,
//! and `data/gen_sample.py` makes the shipped sample again, and larger corpora, and ends.

use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use crate::util::{checked, code, stderr};

fn repo(path: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join(path)
}

/// A listener on a free loopback port from which the script's six ports and their bus ports
/// (PORT+10000..) are valid port numbers.
fn listener_with_room() -> TcpListener {
    for _ in 0..200 {
        let l = TcpListener::bind("127.0.0.1:0").unwrap();
        if l.local_addr().unwrap().port() <= 55_000 {
            return l;
        }
    }
    panic!("no free port at or below 55000 in 200 tries");
}

#[test]
fn local_cluster_refuses_a_port_already_taken_and_names_it() {
    let dir = tempfile::tempdir().unwrap();
    let taken = listener_with_room();
    let port = taken.local_addr().unwrap().port();
    // The base port is taken: nothing may start, and the message names the port and its
    // holder (this test process), so the next command cannot write into a foreign cluster.
    let data = dir.path().join("cluster");
    let out = checked(
        Command::new("bash")
            .arg(repo("scripts/local-cluster.sh"))
            .args(["start", &port.to_string()])
            .arg(&data)
            .stdin(Stdio::null())
            .output()
            .unwrap(),
    );
    let err = stderr(&out);
    assert_eq!(code(&out), 1, "{err}");
    assert!(err.contains(&format!("port {port}")), "{err}");
    assert!(err.contains("in use"), "{err}");
    assert!(
        !data.exists(),
        "nothing is started or created when a port is taken"
    );
    // A base port whose bus ports would pass 65535 is refused before anything else.
    let out = checked(
        Command::new("bash")
            .arg(repo("scripts/local-cluster.sh"))
            .args(["start", "60000"])
            .arg(&data)
            .output()
            .unwrap(),
    );
    assert_eq!(code(&out), 2, "{}", stderr(&out));
    assert!(stderr(&out).contains("55530"), "{}", stderr(&out));
    drop(taken);
}

/// Runs `data/gen_sample.py OUT` with `N_BASE` (if given); fails if it runs past a generous
/// bound (a loop that cannot end), which is not a timing assertion.
fn gen_sample(n_base: Option<u32>, out: &Path) -> String {
    gen_sample_seeded(n_base, None, out)
}

/// [`gen_sample`] with the generator's `SEED` (if given).
pub fn gen_sample_seeded(n_base: Option<u32>, seed: Option<u64>, out: &Path) -> String {
    let mut c = Command::new("python3");
    if let Some(seed) = seed {
        c.env("SEED", seed.to_string());
    }
    c.arg(repo("data/gen_sample.py"))
        .arg(out)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    if let Some(n) = n_base {
        c.env("N_BASE", n.to_string());
    }
    let mut child = c.spawn().expect("python3 runs");
    let start = Instant::now();
    while child.try_wait().unwrap().is_none() {
        if start.elapsed() > Duration::from_secs(300) {
            let _ = child.kill();
            panic!("gen_sample.py with N_BASE={n_base:?} still ran after 300 s");
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    let o = child.wait_with_output().unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    String::from_utf8_lossy(&o.stdout).into_owned()
}

#[test]
fn gen_sample_makes_the_shipped_sample_and_larger_corpora() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("sample.jsonl");
    gen_sample(None, &out);
    assert!(
        std::fs::read(&out).unwrap() == std::fs::read(repo("data/sample.jsonl")).unwrap(),
        "the default run must reproduce data/sample.jsonl byte for byte"
    );
    for n in [100, 300] {
        let out = dir.path().join(format!("sample-{n}.jsonl"));
        gen_sample(Some(n), &out);
        let text = std::fs::read_to_string(&out).unwrap();
        let ids: std::collections::HashSet<String> = text
            .lines()
            .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap()["id"].to_string())
            .collect();
        assert_eq!(ids.len(), text.lines().count(), "ids are unique");
        for lang in ["zh", "en"] {
            let last = format!("\"{lang}-{n:04}\"");
            assert!(ids.contains(&last), "N_BASE={n}: {last} is made");
        }
    }
}
