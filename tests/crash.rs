//! Crash consistency, in the style of sled's tests/test_crash_recovery.rs: the test runs
//! its own binary again as a child process that writes to a store forever, kills it with
//! SIGKILL at a random moment, and checks that the store it recovers holds exactly every
//! acknowledged write (plus, or minus, the one write that was in flight, as a whole).
//!
//! The child prints `try <n> <op>` (the operation in full: ids and fingerprints in hex)
//! before each operation and `ack <n>` after it returned `Ok`, flushing each line, so the
//! parent rebuilds the expected state from the child's stdout alone. One store is kept
//! across iterations: later children open a store that was already crashed into, and the
//! model is carried forward.
//!
//! Environment: `SIMSTORE_CRASH_ITERS` (default 4; the long mode is 200),
//! `SIMSTORE_CRASH_SEED` (default fixed; printed on failure). The child is selected by
//! `SIMSTORE_CRASH_DIR`; `crash_child` is `#[ignore]`d and runs only as the child (with
//! `--ignored`).
//!
//! The maintenance commands (bulk import, relayout, repair) and store creation are killed
//! in [`maintenance`] (`SIMSTORE_CRASH_ROUNDS`).

use simstore::store::backend::Consistency;
use std::collections::{BTreeMap, BTreeSet};
use std::io::{BufRead, BufReader, Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::mpsc::{self, RecvTimeoutError};
use std::thread::{self, JoinHandle};
use std::time::{Duration, Instant};

use rand::Rng;
use rand::rngs::StdRng;
use simstore::{DocMeta, Document, Entry, Fingerprint, Fingerprinter, InsertOutcome, Store};

use crate::util::{brute_force, flip, gen_text, rng, shape};

mod expire;
mod maintenance;
mod warc;

/// Selects the child mode: the store's directory.
const DIR_VAR: &str = "SIMSTORE_CRASH_DIR";
/// The run's seed (parent: overrides the default; child: the parent's seed).
const SEED_VAR: &str = "SIMSTORE_CRASH_SEED";
/// The child's iteration number (it names fresh ids and seeds the child's RNG).
const ITER_VAR: &str = "SIMSTORE_CRASH_ITER";
/// Number of iterations (crashes).
const ITERS_VAR: &str = "SIMSTORE_CRASH_ITERS";

const DEFAULT_SEED: u64 = 0x5eed_c7a5_0000_0001;
const DEFAULT_ITERS: u64 = 4;
/// How long the child runs after opening the store, in milliseconds.
const RUN_MS: std::ops::Range<u64> = 20..400;
/// How long a child may take to open the store before the test gives up.
const OPEN_TIMEOUT: Duration = Duration::from_secs(60);
/// Cluster centres shared by every iteration, so clusters keep growing.
const CENTRES: usize = 48;
/// Live documents queried per iteration.
const QUERY_SAMPLE: usize = 200;
/// The store size past which the child stops growing it.
const LIVE_CAP: usize = 100_000;
/// Older live (and, separately, deleted) ids read back with `get` per iteration.
const GET_SAMPLE: usize = 2000;

/// id → (fingerprint, tag). The tag (stored as the document's `url`) is
/// `<iteration>.<operation>`: it names the write that produced the record, so a replaced
/// document is checked to be the right version, not just present.
type Model = BTreeMap<String, (u64, String)>;

// ---------------------------------------------------------------------------------------
// Operations and their one-line form
// ---------------------------------------------------------------------------------------

#[derive(Debug, Clone, PartialEq, Eq)]
enum Op {
    /// `insert_batch`; mostly fresh ids, a few existing ones (replacements inside a batch).
    Batch(Vec<(String, u64)>),
    /// `insert_fingerprint` of a fresh id.
    Put(String, u64),
    /// `insert_fingerprint` of an existing id with a new fingerprint.
    Replace(String, u64),
    /// `delete` of an existing id.
    Delete(String),
    /// `insert(&Document)` (fresh or existing id); `fp` is what the store computes.
    Doc { id: String, fp: u64, text: String },
}

impl Op {
    /// The text after `try <n> `.
    fn describe(&self) -> String {
        match self {
            Op::Batch(entries) => {
                let mut s = format!("batch {}", entries.len());
                for (id, fp) in entries {
                    s.push_str(&format!(" {id}={fp:016x}"));
                }
                s
            }
            Op::Put(id, fp) => format!("put {id} {fp:016x}"),
            Op::Replace(id, fp) => format!("replace {id} {fp:016x}"),
            Op::Delete(id) => format!("delete {id}"),
            Op::Doc { id, fp, text } => format!("doc {id} {fp:016x} {text}"),
        }
    }

    /// Parses [`Op::describe`]'s output.
    fn parse(s: &str) -> Result<Op, String> {
        let hex = |h: &str| u64::from_str_radix(h, 16).map_err(|e| format!("bad hex {h:?}: {e}"));
        let mut words = s.splitn(2, ' ');
        let kind = words.next().unwrap_or("");
        let rest = words.next().unwrap_or("");
        let parts: Vec<&str> = rest.split(' ').collect();
        let op = match kind {
            "batch" => {
                let n: usize = parts[0].parse().map_err(|e| format!("bad count: {e}"))?;
                let entries = parts[1..]
                    .iter()
                    .map(|p| {
                        let (id, fp) = p.split_once('=').ok_or(format!("bad entry {p:?}"))?;
                        Ok((id.to_owned(), hex(fp)?))
                    })
                    .collect::<Result<Vec<_>, String>>()?;
                if entries.len() != n {
                    return Err(format!("batch of {n} lists {} entries", entries.len()));
                }
                Op::Batch(entries)
            }
            "put" | "replace" if parts.len() == 2 => {
                let (id, fp) = (parts[0].to_owned(), hex(parts[1])?);
                if kind == "put" {
                    Op::Put(id, fp)
                } else {
                    Op::Replace(id, fp)
                }
            }
            "delete" if parts.len() == 1 => Op::Delete(parts[0].to_owned()),
            "doc" if parts.len() >= 3 => Op::Doc {
                id: parts[0].to_owned(),
                fp: hex(parts[1])?,
                text: parts[2..].join(" "),
            },
            _ => return Err(format!("unknown operation {s:?}")),
        };
        Ok(op)
    }

    /// The ids the operation touches.
    fn ids(&self) -> Vec<&str> {
        match self {
            Op::Batch(entries) => entries.iter().map(|(id, _)| id.as_str()).collect(),
            Op::Put(id, _) | Op::Replace(id, _) | Op::Delete(id) | Op::Doc { id, .. } => {
                vec![id]
            }
        }
    }

    /// Applies the operation to the model (as the store must: a batch's later entries
    /// replace earlier ones).
    fn apply(&self, tag: &str, model: &mut Model, deleted: &mut BTreeSet<String>) {
        let mut put = |id: &str, fp: u64| {
            deleted.remove(id);
            model.insert(id.to_owned(), (fp, tag.to_owned()));
        };
        match self {
            Op::Batch(entries) => entries.iter().for_each(|(id, fp)| put(id, *fp)),
            Op::Put(id, fp) | Op::Replace(id, fp) | Op::Doc { id, fp, .. } => put(id, *fp),
            Op::Delete(id) => {
                model.remove(id);
                deleted.insert(id.clone());
            }
        }
    }
}

fn tag(iter: u64, n: u64) -> String {
    format!("{iter}.{n}")
}

fn child_seed(seed: u64, iter: u64) -> u64 {
    seed ^ (iter + 1).wrapping_mul(0x9e37_79b9_7f4a_7c15)
}

fn centres(seed: u64) -> Vec<u64> {
    let mut r = rng(seed);
    (0..CENTRES).map(|_| r.random()).collect()
}

/// A fingerprint near a cluster centre (70%: distance 0..=6) or uniform (30%).
fn gen_fp(r: &mut StdRng, centres: &[u64]) -> u64 {
    if r.random_bool(0.7) {
        let c = centres[r.random_range(0..centres.len())];
        let d = r.random_range(0..=6);
        flip(r, c, d)
    } else {
        r.random()
    }
}

// ---------------------------------------------------------------------------------------
// The child
// ---------------------------------------------------------------------------------------

/// The child process: writes to the store until it is killed. Ignored, so that a plain
/// test run lists it as ignored instead of counting it as a test that passed; the parent
/// runs it with `--ignored`, and without `SIMSTORE_CRASH_DIR` it fails.
#[test]
#[ignore = "the crash test's child process: run by crash::acknowledged_writes_survive_kill_9 as a child, not on its own"]
fn crash_child() {
    let dir = std::env::var_os(DIR_VAR).unwrap_or_else(|| {
        panic!("crash_child runs only as the child of the crash test ({DIR_VAR} unset)")
    });
    let var = |name: &str| -> u64 {
        std::env::var(name)
            .unwrap_or_else(|_| panic!("child: {name} is not set"))
            .parse()
            .unwrap_or_else(|e| panic!("child: bad {name}: {e}"))
    };
    child_main(Path::new(&dir), var(SEED_VAR), var(ITER_VAR));
}

fn child_main(path: &Path, seed: u64, iter: u64) -> ! {
    let store = Store::builder(path).open().expect("child: open the store");
    // The live ids, in insertion order (deterministic for a given store content).
    let mut live: Vec<String> = Vec::new();
    store
        .for_each_doc(|d| {
            live.push(d.id);
            Ok(())
        })
        .expect("child: list the documents");
    let centres = centres(seed);
    let mut r = rng(child_seed(seed, iter));
    let mut recent: Vec<String> = Vec::new();
    let mut fresh = 0u64;
    let mut fresh_id = || {
        fresh += 1;
        format!("i{iter}-{fresh}")
    };
    let mut out = std::io::stdout().lock();
    // The leading newline ends libtest's "test crash::crash_child ... " line.
    writeln!(out, "\nready {iter} {}", store.len()).unwrap();
    out.flush().unwrap();
    for n in 1u64.. {
        let url = tag(iter, n);
        let roll = r.random_range(0..100);
        // Past LIVE_CAP documents, batches replace instead of adding and puts become
        // deletes, so the store hovers around the cap and the long mode's checks stay cheap.
        let full = live.len() >= LIVE_CAP;
        let op = if roll < 10 {
            // 1..=200 entries, small batches more often than large ones.
            let max = [1, 2, 4, 8, 16, 32, 64, 128, 200][r.random_range(0..9)];
            let len = r.random_range(1..=max);
            let entries: Vec<(String, u64)> = (0..len)
                .map(|_| {
                    let id = if !live.is_empty() && (full || r.random_bool(0.05)) {
                        live[r.random_range(0..live.len())].clone()
                    } else {
                        let id = fresh_id();
                        live.push(id.clone());
                        id
                    };
                    (id, gen_fp(&mut r, &centres))
                })
                .collect();
            Op::Batch(entries)
        } else if roll < 35 && !live.is_empty() {
            let id = live[r.random_range(0..live.len())].clone();
            Op::Replace(id, gen_fp(&mut r, &centres))
        } else if roll < 55 && !live.is_empty() {
            Op::Delete(live.swap_remove(r.random_range(0..live.len())))
        } else if roll < 75 {
            let id = if !live.is_empty() && r.random_bool(0.25) {
                live[r.random_range(0..live.len())].clone()
            } else {
                let id = fresh_id();
                live.push(id.clone());
                id
            };
            let text = gen_text(&mut r, &mut recent);
            let doc = Document::new(id.clone(), text.clone());
            let fp = store.fingerprinter().fingerprint_doc(&doc).unwrap().0;
            Op::Doc { id, fp, text }
        } else if full {
            Op::Delete(live.swap_remove(r.random_range(0..live.len())))
        } else {
            let id = fresh_id();
            live.push(id.clone());
            Op::Put(id, gen_fp(&mut r, &centres))
        };
        writeln!(out, "try {n} {}", op.describe()).unwrap();
        out.flush().unwrap();
        execute(&store, &op, &url);
        writeln!(out, "ack {n}").unwrap();
        out.flush().unwrap();
    }
    unreachable!()
}

/// Runs `op` on the store, checking what the store says it did.
fn execute(store: &Store, op: &Op, url: &str) {
    let meta = || DocMeta {
        title: None,
        url: Some(url.to_owned()),
        length: 0,
        content_hash: None,
        sketch: None,
        weak_bits: None,
        main_sketch: None,
        times: None,
    };
    match op {
        Op::Batch(entries) => {
            let mut seen = BTreeSet::new();
            let fresh = entries
                .iter()
                .filter(|(id, _)| store.get(id).unwrap().is_none() && seen.insert(id))
                .count() as u64;
            let out = store
                .insert_batch(entries.iter().map(|(id, fp)| Entry {
                    id: id.clone(),
                    fp: Fingerprint(*fp),
                    meta: meta(),
                }))
                .unwrap();
            assert_eq!(out.inserted, fresh, "new ids of {op:?}");
            assert_eq!(out.inserted + out.replaced, entries.len() as u64);
        }
        Op::Put(id, fp) | Op::Replace(id, fp) => {
            let out = store.insert_fingerprint(id, Fingerprint(*fp), meta());
            let want = match op {
                Op::Put(..) => InsertOutcome::Inserted,
                _ => InsertOutcome::Replaced,
            };
            assert_eq!(out.unwrap(), want, "{op:?}");
        }
        Op::Delete(id) => assert!(store.delete(id).unwrap(), "{id} existed"),
        Op::Doc { id, text, .. } => {
            let existed = store.get(id).unwrap().is_some();
            let doc = Document::new(id.clone(), text.clone()).with_url(url);
            let out = store.insert(&doc).unwrap();
            let want = if existed {
                InsertOutcome::Replaced
            } else {
                InsertOutcome::Inserted
            };
            assert_eq!(out, want, "{op:?}");
        }
    }
}

// ---------------------------------------------------------------------------------------
// The parent
// ---------------------------------------------------------------------------------------

/// Kills and reaps the child if the parent fails while it runs.
struct ChildGuard(Option<Child>);

impl Drop for ChildGuard {
    fn drop(&mut self) {
        if let Some(child) = &mut self.0 {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

/// Prints how to reproduce a failure, and keeps the store for inspection.
struct FailureReport {
    seed: u64,
    iteration: u64,
    dir: Option<tempfile::TempDir>,
}

impl Drop for FailureReport {
    fn drop(&mut self) {
        if thread::panicking() {
            let kept = self.dir.take().map(|d| d.keep());
            eprintln!(
                "crash test FAILED at iteration {} with seed {}: rerun with \
                 SIMSTORE_CRASH_SEED={} (store kept at {:?})",
                self.iteration, self.seed, self.seed, kept
            );
        }
    }
}

/// What the parent read from one child.
struct ChildRun {
    /// Every complete line of stdout, in order.
    lines: Vec<String>,
    status: ExitStatus,
    stderr: String,
}

/// A line from the child, and whether it was complete (ended by a newline).
type Line = (String, bool);

fn spawn_child(path: &Path, seed: u64, iter: u64) -> ChildGuard {
    // On Linux, /proc/self/exe runs this very binary even when a concurrent `cargo build`
    // has meanwhile replaced or removed the file at current_exe()'s path.
    let proc_exe = Path::new("/proc/self/exe");
    let exe = if proc_exe.exists() {
        proc_exe.to_path_buf()
    } else {
        std::env::current_exe().expect("the test binary's path")
    };
    let child = Command::new(exe)
        .args([
            "crash::crash_child",
            "--exact",
            "--ignored",
            "--nocapture",
            "--test-threads=1",
        ])
        .env(DIR_VAR, path)
        .env(SEED_VAR, seed.to_string())
        .env(ITER_VAR, iter.to_string())
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn the child");
    ChildGuard(Some(child))
}

/// Runs one child: waits for it to open the store, lets it write for `run`, kills it, and
/// returns everything it printed. Fails (with the child's stderr) if it exits by itself.
fn run_child(path: &Path, seed: u64, iter: u64, run: Duration) -> ChildRun {
    let mut guard = spawn_child(path, seed, iter);
    let child = guard.0.as_mut().unwrap();
    let mut stderr = child.stderr.take().unwrap();
    let stderr: JoinHandle<String> = thread::spawn(move || {
        let mut s = String::new();
        let _ = stderr.read_to_string(&mut s);
        s
    });
    let stdout = child.stdout.take().unwrap();
    let (tx, rx) = mpsc::channel::<Line>();
    let reader = thread::spawn(move || {
        let mut r = BufReader::new(stdout);
        loop {
            let mut buf = Vec::new();
            match r.read_until(b'\n', &mut buf) {
                Ok(0) | Err(_) => break,
                Ok(_) => {
                    let complete = buf.last() == Some(&b'\n');
                    if complete {
                        buf.pop();
                    }
                    if tx
                        .send((String::from_utf8_lossy(&buf).into_owned(), complete))
                        .is_err()
                    {
                        break;
                    }
                }
            }
        }
    });
    let mut lines: Vec<Line> = Vec::new();
    // 1. Wait until the child has opened the store, then 2. let it write for `run`.
    let mut deadline = Instant::now() + OPEN_TIMEOUT;
    let mut ready = false;
    let mut exited_early = false;
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        match rx.recv_timeout(left) {
            Ok(line) => {
                if !ready && line.1 && line.0.starts_with("ready ") {
                    ready = true;
                    deadline = Instant::now() + run;
                }
                lines.push(line);
            }
            Err(RecvTimeoutError::Timeout) => break,
            Err(RecvTimeoutError::Disconnected) => {
                exited_early = true;
                break;
            }
        }
    }
    let mut child = guard.0.take().unwrap();
    let _ = child.kill();
    let status = child.wait().expect("wait for the child");
    reader.join().expect("the stdout reader");
    lines.extend(rx.iter());
    let stderr = stderr.join().expect("the stderr reader");
    let killed = killed_by_us(&status);
    if exited_early || !killed || !ready {
        // Its last operations (long batch lines cut), then libtest's own report.
        let protocol = |l: &&Line| l.0.starts_with("try ") || l.0.starts_with("ack ");
        let mut tail: Vec<String> = lines
            .iter()
            .filter(protocol)
            .rev()
            .take(4)
            .map(|l| l.0.chars().take(200).collect())
            .collect();
        tail.reverse();
        tail.extend(lines.iter().filter(|l| !protocol(l)).map(|l| l.0.clone()));
        panic!(
            "the child of iteration {iter} {} (status {status}); its last lines:\n{}\n\
             its stderr:\n{stderr}",
            if ready {
                "exited by itself"
            } else {
                "did not open the store"
            },
            tail.join("\n"),
        );
    }
    // A line cut by the kill is not acknowledged; only the last line can be cut.
    if let Some(pos) = lines.iter().position(|l| !l.1) {
        assert_eq!(pos, lines.len() - 1, "only the last line may be incomplete");
        lines.pop();
    }
    ChildRun {
        lines: lines.into_iter().map(|l| l.0).collect(),
        status,
        stderr,
    }
}

#[cfg(unix)]
fn killed_by_us(status: &ExitStatus) -> bool {
    use std::os::unix::process::ExitStatusExt;
    status.signal() == Some(9)
}

#[cfg(not(unix))]
fn killed_by_us(status: &ExitStatus) -> bool {
    !status.success()
}

/// The acknowledged operations of one child, and the one in flight when it was killed.
struct Parsed {
    /// Live documents the child saw when it opened the store.
    ready_len: u64,
    acked: Vec<(u64, Op)>,
    in_flight: Option<(u64, Op)>,
}

fn parse_run(run: &ChildRun, iter: u64) -> Parsed {
    let mut ready_len = None;
    let mut acked = Vec::new();
    let mut pending: Option<(u64, Op)> = None;
    let fingerprinter = Fingerprinter::new();
    for line in &run.lines {
        if let Some(rest) = line.strip_prefix("ready ") {
            let (i, len) = rest.split_once(' ').expect("ready <iter> <len>");
            assert_eq!(i.parse::<u64>().unwrap(), iter);
            ready_len = Some(len.parse().unwrap());
        } else if let Some(rest) = line.strip_prefix("try ") {
            let (n, op) = rest.split_once(' ').expect("try <n> <op>");
            let n: u64 = n.parse().unwrap();
            let op = Op::parse(op).unwrap_or_else(|e| panic!("line {line:?}: {e}"));
            if let Some((p, _)) = &pending {
                panic!("try {n} before ack {p}");
            }
            assert_eq!(n, acked.len() as u64 + 1, "operations are numbered from 1");
            if let Op::Doc { id, fp, text } = &op {
                let doc = Document::new(id.clone(), text.clone());
                let want = fingerprinter.fingerprint_doc(&doc).unwrap().0;
                assert_eq!(*fp, want, "the printed fingerprint of {line:?}");
            }
            pending = Some((n, op));
        } else if let Some(n) = line.strip_prefix("ack ") {
            let n: u64 = n.parse().unwrap();
            match pending.take() {
                Some((p, op)) if p == n => acked.push((n, op)),
                other => panic!("ack {n} without its try (pending: {other:?})"),
            }
        }
    }
    Parsed {
        ready_len: ready_len.expect("the child printed ready"),
        acked,
        in_flight: pending,
    }
}

/// The store's content: id → (fingerprint, url), failing on an id stored twice.
fn actual_state(store: &Store) -> Model {
    let mut actual = Model::new();
    store
        .for_each_doc(|d| {
            let url = d.url.clone().unwrap_or_default();
            if let Some(old) = actual.insert(d.id.clone(), (d.fp, url)) {
                panic!("id {:?} is stored twice ({old:?} and {d:?})", d.id);
            }
            Ok(())
        })
        .unwrap();
    actual
}

/// Up to `max` lines describing how `got` differs from `want`.
fn diff(want: &Model, got: &Model, max: usize) -> String {
    let mut out = Vec::new();
    for (id, w) in want {
        match got.get(id) {
            None => out.push(format!("  missing {id} {:016x} ({})", w.0, w.1)),
            Some(g) if g != w => out.push(format!(
                "  {id}: want {:016x} ({}), got {:016x} ({})",
                w.0, w.1, g.0, g.1
            )),
            _ => {}
        }
    }
    for (id, g) in got {
        if !want.contains_key(id) {
            out.push(format!("  unexpected {id} {:016x} ({})", g.0, g.1));
        }
    }
    let n = out.len();
    out.truncate(max);
    if n > max {
        out.push(format!("  ... {} more", n - max));
    }
    format!("{n} differences:\n{}", out.join("\n"))
}

#[derive(Debug, Default)]
struct Totals {
    acked: u64,
    in_flight_applied: u64,
    in_flight_lost: u64,
    killed_between_ops: u64,
    gets: u64,
    queries: u64,
}

/// Verifies the recovered store against the model. When the in-flight operation turns out
/// applied, the model (and the deleted set) is updated to include it.
fn verify(
    path: &Path,
    iter: u64,
    parsed: &Parsed,
    model: &mut Model,
    deleted: &mut BTreeSet<String>,
    r: &mut StdRng,
    totals: &mut Totals,
) {
    let store = Store::builder(path)
        .create_if_missing(false)
        .open()
        .unwrap_or_else(|e| panic!("reopen after crash {iter}: {e}"));
    let report = store.check().unwrap();
    assert!(
        report.is_ok(),
        "check after crash {iter}: {} problems: {:#?}",
        report.problem_count,
        report.problems
    );
    let actual = actual_state(&store);
    // The store must equal the model without the in-flight operation, or with all of it.
    if actual != *model {
        let Some((n, op)) = &parsed.in_flight else {
            panic!(
                "after crash {iter} (no write in flight) the store differs from the \
                 acknowledged writes: {}",
                diff(model, &actual, 20)
            );
        };
        let mut with = model.clone();
        let mut with_deleted = deleted.clone();
        op.apply(&tag(iter, *n), &mut with, &mut with_deleted);
        assert!(
            actual == with,
            "after crash {iter} the store is neither without nor with the in-flight \
             operation {n} ({} ids: {:?}...).\nWithout it: {}\nWith it: {}",
            op.ids().len(),
            &op.ids()[..op.ids().len().min(5)],
            diff(model, &actual, 20),
            diff(&with, &actual, 20)
        );
        *model = with;
        *deleted = with_deleted;
        totals.in_flight_applied += 1;
    } else if parsed.in_flight.is_some() {
        totals.in_flight_lost += 1;
    } else {
        totals.killed_between_ops += 1;
    }
    assert_eq!(report.docs, model.len() as u64, "check's document count");
    assert_eq!(report.ids, model.len() as u64, "check's id count");
    assert_eq!(store.len(), model.len() as u64, "len() after crash {iter}");
    // get(): every id this child touched (present with the right version, or absent),
    // and a sample of the older ones. (The full comparison above already covered `docs`,
    // and check() the agreement of `ids` with it.)
    let mut ids: BTreeSet<&str> = parsed
        .acked
        .iter()
        .chain(&parsed.in_flight)
        .flat_map(|(_, op)| op.ids())
        .collect();
    let in_flight: Vec<&str> = parsed
        .in_flight
        .iter()
        .flat_map(|(_, op)| op.ids())
        .collect();
    let step = |n: usize, want: usize| (n / want).max(1);
    ids.extend(
        model
            .keys()
            .step_by(step(model.len(), GET_SAMPLE))
            .map(String::as_str),
    );
    ids.extend(
        deleted
            .iter()
            .step_by(step(deleted.len(), GET_SAMPLE))
            .map(String::as_str),
    );
    for id in ids {
        let got = store.get(id).unwrap();
        match (model.get(id), got) {
            (Some((fp, url)), Some(doc)) => assert_eq!(
                (doc.id.as_str(), doc.fp, doc.url.as_deref()),
                (id, *fp, Some(url.as_str())),
                "get({id}) after crash {iter}"
            ),
            (Some(_), None) => panic!("get({id}) is None after crash {iter}"),
            (None, Some(doc)) => panic!("deleted {id} is back after crash {iter}: {doc:?}"),
            (None, None) => assert!(
                deleted.contains(id) || in_flight.contains(&id),
                "{id} was never written"
            ),
        }
        totals.gets += 1;
    }
    // Queries: a sample of live documents, by their own fingerprint (k=0) and by one
    // two bits away (k=3, compared with a brute-force scan of the model).
    let entries: Vec<(String, u64)> = model.iter().map(|(id, v)| (id.clone(), v.0)).collect();
    for _ in 0..QUERY_SAMPLE.min(entries.len()) {
        let (id, fp) = &entries[r.random_range(0..entries.len())];
        let exact = store.query(Fingerprint(*fp), 0).unwrap();
        assert!(
            exact.iter().any(|m| &m.doc.id == id),
            "query({fp:016x}, 0) misses {id} after crash {iter}"
        );
        assert!(exact.iter().all(|m| m.doc.fp == *fp));
        let q = flip(r, *fp, 2);
        let near = store.query(Fingerprint(q), 3).unwrap();
        assert!(
            near.iter().any(|m| &m.doc.id == id),
            "query({q:016x}, 3) misses {id} ({fp:016x}) after crash {iter}"
        );
        assert_eq!(
            shape(&near),
            brute_force(&entries, q, 3),
            "query({q:016x}, 3) after crash {iter}"
        );
        totals.queries += 3;
    }
}

#[test]
fn acknowledged_writes_survive_kill_9() {
    crash_loop(None);
}

/// The same in a store of the high quality mode (more tables, its own layout): the children
/// open the store the test created, whose manifest names the mode.
#[test]
fn acknowledged_writes_survive_kill_9_in_high_mode() {
    crash_loop(Some(simstore::Quality::High));
}

/// Kills children writing to one store, iteration after iteration, and checks the store
/// against the model of what they acknowledged; a store of `quality` is created first.
fn crash_loop(quality: Option<simstore::Quality>) {
    let seed: u64 = match std::env::var(SEED_VAR) {
        Ok(s) => s.parse().expect("SIMSTORE_CRASH_SEED is a u64"),
        Err(_) => DEFAULT_SEED,
    };
    let iters: u64 = match std::env::var(ITERS_VAR) {
        Ok(s) => s.parse().expect("SIMSTORE_CRASH_ITERS is a number"),
        Err(_) => DEFAULT_ITERS,
    };
    let start = Instant::now();
    let dir = tempfile::tempdir().unwrap();
    let path: PathBuf = dir.path().join("db");
    if let Some(quality) = quality {
        drop(Store::builder(&path).quality(quality).open().unwrap());
    }
    let mut report = FailureReport {
        seed,
        iteration: 0,
        dir: Some(dir),
    };
    let mut r = rng(seed);
    let mut model = Model::new();
    let mut deleted = BTreeSet::new();
    let mut totals = Totals::default();
    for iter in 0..iters {
        report.iteration = iter;
        let run = Duration::from_millis(r.random_range(RUN_MS));
        let child = run_child(&path, seed, iter, run);
        let parsed = parse_run(&child, iter);
        assert_eq!(
            parsed.ready_len,
            model.len() as u64,
            "the child of iteration {iter} opened a store of another size"
        );
        for (n, op) in &parsed.acked {
            op.apply(&tag(iter, *n), &mut model, &mut deleted);
        }
        totals.acked += parsed.acked.len() as u64;
        verify(
            &path,
            iter,
            &parsed,
            &mut model,
            &mut deleted,
            &mut r,
            &mut totals,
        );
        if iters > DEFAULT_ITERS && (iter + 1) % 20 == 0 {
            eprintln!(
                "crash test: {} iterations, {} acknowledged operations, {} live documents, {:.1?}",
                iter + 1,
                totals.acked,
                model.len(),
                start.elapsed()
            );
        }
        if !child.stderr.is_empty() && std::env::var_os("SIMSTORE_CRASH_VERBOSE").is_some() {
            eprintln!("child {iter} ({}) stderr:\n{}", child.status, child.stderr);
        }
    }
    eprintln!(
        "crash test ({quality:?}): seed {seed}, {iters} iterations (kill -9), {} acknowledged operations \
         all recovered; in-flight operation applied {} / not applied {} / none {}; \
         {} live and {} deleted documents at the end; {} gets, {} queries; {:.1?}",
        totals.acked,
        totals.in_flight_applied,
        totals.in_flight_lost,
        totals.killed_between_ops,
        model.len(),
        deleted.len(),
        totals.gets,
        totals.queries,
        start.elapsed()
    );
}

/// `kill -9` of `simstore repair` while its marker is set (between clearing the derived
/// spaces and rebuilding them): the next writable open finishes the repair, and every
/// document is found again (before the marker, such a store opened "normally" with ids and
/// tables missing: `get` said "no document").
#[test]
fn kill_9_during_repair_is_finished_on_open() {
    use simstore::store::backend::MetaKey;
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("db");
    let n = 300_000u64;
    let fp = |i: u64| Fingerprint(i.wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ (i << 7));
    let store = Store::open(&path).unwrap();
    store
        .bulk_load((0..n).map(|i| Entry {
            id: format!("d{i}"),
            fp: fp(i),
            meta: DocMeta::default(),
        }))
        .unwrap();
    drop(store);
    let marked = || {
        simstore::StoreBuilder::new(&path)
            .read_only(true)
            .open()
            .is_err_and(|e| e.to_string().contains("a repair of this store"))
    };
    let mut killed = false;
    for _attempt in 0..5 {
        let mut child = Command::new(env!("CARGO_BIN_EXE_simstore"))
            .arg("--db")
            .arg(&path)
            .arg("repair")
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        while child.try_wait().unwrap().is_none() {
            if marked() {
                child.kill().unwrap();
                killed = true;
                break;
            }
            thread::sleep(Duration::from_millis(2));
        }
        child.wait().unwrap();
        if killed {
            break;
        }
    }
    assert!(
        killed,
        "never saw a repair under way (its marker) in 5 runs"
    );
    let store = Store::open(&path).unwrap();
    assert_eq!(store.len(), n);
    for i in (0..n).step_by(997) {
        let id = format!("d{i}");
        assert!(store.get(&id).unwrap().is_some(), "{id} lost");
        assert!(
            store
                .query(fp(i), 0)
                .unwrap()
                .iter()
                .any(|m| m.doc.id == id)
        );
    }
    assert!(store.check().unwrap().is_ok());
    assert_eq!(
        store
            .backend()
            .snapshot(Consistency::PointInTime)
            .meta(MetaKey::RepairPending)
            .unwrap(),
        None
    );
}
