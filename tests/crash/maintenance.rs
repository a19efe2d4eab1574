//! `kill -9` of the maintenance commands at random moments: `simstore import --bulk` (and
//! the automatic bulk path of a large import into an empty store), `simstore relayout
//! --k-max N` and `simstore repair`, each run as the real binary and SIGKILLed after a
//! random delay drawn over its measured duration (a third anywhere, the others in its
//! second half, where the writing is; for a bulk import, half of those a short random
//! delay after a reader first sees its `bulk-pending` marker).
//!
//! Each round starts from a new store: a bulk load (killed), acknowledged imports and
//! deletes, a relayout (killed), more acknowledged writes, a repair (killed). After every
//! kill the store is first opened read-only (a store left mid-protocol must say so), then
//! for writing (which finishes or undoes the interrupted work), and then:
//!
//! - `Store::check()` reports no problem, and its counts equal the model's;
//! - the whole content (id → fingerprint, url tag) equals the model: for a bulk load,
//!   which acknowledges only at its end, the store before it or with all of it; for relayout
//!   and repair, every document acknowledged before the command, as acknowledged;
//! - every document is found by `get` and by an exact query (`query(fp, 0)`); deleted ids
//!   are not found; a sample of near queries at the store's k_max equals brute force;
//! - the layout is the old or the new one (the new one once its pending manifest was seen).
//!
//! Environment: `SIMSTORE_CRASH_ROUNDS` (default 2, three kills each; the long mode raises
//! it), `SIMSTORE_CRASH_SEED` as for the writer test.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::thread;
use std::time::{Duration, Instant};

use rand::Rng;
use rand::rngs::StdRng;
use simstore::input::reader;
use simstore::{Error, Fingerprint, Fingerprinter, Store, StoreBuilder};

use super::{
    ChildGuard, DEFAULT_SEED, FailureReport, Model, SEED_VAR, actual_state, diff, killed_by_us,
};
use crate::util::{brute_force, flip, gen_text, rng, shape};

/// Number of rounds (each: a bulk load, a relayout and a repair killed).
const ROUNDS_VAR: &str = "SIMSTORE_CRASH_ROUNDS";
const DEFAULT_ROUNDS: u64 = 2;
/// Records of a bulk load.
const BULK_DOCS: usize = 6_000;
/// Share of the bulk load's records that are texts (the rest are fingerprints).
const TEXT_SHARE: f64 = 0.1;
/// Title bytes per record of the automatic bulk load: the input must reach the 32 MiB from
/// which `import` takes the bulk path by itself.
const AUTO_TITLE_BYTES: usize = 5700;
/// Records per acknowledged import between the maintenance commands, and deletes.
const WRITES: usize = 200;
const DELETES: usize = 50;
/// Near queries per verification (compared with brute force).
const NEAR_QUERIES: usize = 50;
/// The k_max values a relayout moves between.
const K_MAX: [u32; 3] = [2, 3, 4];

/// What is run and killed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Kind {
    /// `simstore import --bulk FILE` into a new store.
    Bulk,
    /// `simstore import FILE` of more than 32 MiB into a new store (bulk by itself).
    AutoBulk,
    /// `simstore relayout --k-max N`.
    Relayout,
    /// `simstore repair`.
    Repair,
}

/// How one run of a command ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum End {
    /// It exited 0 by itself before its kill time: everything it did is acknowledged.
    Finished(Duration),
    /// SIGKILLed after this long.
    Killed(Duration),
}

/// What a read-only open said of the store right after the kill.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
enum Seen {
    /// Opened normally.
    Clean,
    /// No store yet (a bulk import killed before it created the store).
    NoStore,
    /// Refused: the command's work was interrupted (its marker or pending manifest).
    Interrupted,
}

/// Per kind: kills, runs that finished first, and what the reader saw after each kill.
#[derive(Debug, Default)]
struct Tally {
    kills: BTreeMap<Kind, u64>,
    finished: BTreeMap<Kind, u64>,
    seen: BTreeMap<(Kind, Seen), u64>,
    /// Bulk loads found complete / absent after their kill.
    bulk_all: u64,
    bulk_none: u64,
    /// Relayouts found with the new / the old layout after their kill.
    relayout_new: u64,
    relayout_old: u64,
    /// Documents compared after a kill (each by content, `get` and an exact query).
    docs_verified: u64,
    near_queries: u64,
    /// Writes acknowledged by the imports and deletes between the maintenance commands.
    acked_writes: u64,
}

/// The test's state across rounds.
struct Run {
    dir: PathBuf,
    r: StdRng,
    fingerprinter: Fingerprinter,
    /// Measured duration of an uninterrupted run of each kind: kills are drawn over it.
    estimate: BTreeMap<Kind, Duration>,
    tally: Tally,
    /// The bulk input files (written once; every round loads into a new store).
    bulk_files: BTreeMap<Kind, (PathBuf, Model)>,
}

#[test]
fn maintenance_commands_survive_kill_9() {
    let seed: u64 = std::env::var(SEED_VAR).map_or(DEFAULT_SEED, |s| {
        s.parse().expect("SIMSTORE_CRASH_SEED is a u64")
    });
    let rounds: u64 = std::env::var(ROUNDS_VAR).map_or(DEFAULT_ROUNDS, |s| {
        s.parse().expect("SIMSTORE_CRASH_ROUNDS is a number")
    });
    let start = Instant::now();
    let dir = tempfile::tempdir().unwrap();
    let mut run = Run {
        dir: dir.path().to_path_buf(),
        r: rng(seed ^ 0x6d61_696e_7465_6e61),
        fingerprinter: Fingerprinter::new(),
        estimate: BTreeMap::new(),
        tally: Tally::default(),
        bulk_files: BTreeMap::new(),
    };
    let mut report = FailureReport {
        seed,
        iteration: 0,
        dir: Some(dir),
    };
    for round in 0..rounds {
        report.iteration = round;
        run.round(round);
        if rounds > DEFAULT_ROUNDS && (round + 1) % 10 == 0 {
            eprintln!(
                "maintenance crash test: {} rounds, {} kills, {:.1?}",
                round + 1,
                run.tally.kills.values().sum::<u64>(),
                start.elapsed()
            );
        }
    }
    eprintln!("{}", run.tally.summary(seed, rounds, start.elapsed()));
}

impl Tally {
    fn summary(&self, seed: u64, rounds: u64, took: Duration) -> String {
        let mut s = format!(
            "maintenance crash test: seed {seed}, {rounds} rounds, {} kills (kill -9), {} runs \
             finished before their kill;",
            self.kills.values().sum::<u64>(),
            self.finished.values().sum::<u64>()
        );
        for (kind, n) in &self.kills {
            let seen: Vec<String> = self
                .seen
                .iter()
                .filter(|((k, _), _)| k == kind)
                .map(|((_, seen), n)| format!("{seen:?} {n}"))
                .collect();
            let _ = write!(
                s,
                " {kind:?}: {n} killed (a reader after each run saw {});",
                seen.join(", ")
            );
        }
        let _ = write!(
            s,
            " bulk loads after the kill: all {} / none {}; relayouts: new layout {} / old {}; \
             {} acknowledged writes between the commands; {} documents verified (content, get, \
             exact query), {} near queries; nothing lost; {took:.1?}",
            self.bulk_all,
            self.bulk_none,
            self.relayout_new,
            self.relayout_old,
            self.acked_writes,
            self.docs_verified,
            self.near_queries
        );
        s
    }
}

impl Run {
    /// One round on a new store: bulk load, writes, relayout, writes, repair.
    fn round(&mut self, round: u64) {
        let path = self.dir.join(format!("round-{round}"));
        let kind = if round.is_multiple_of(2) {
            Kind::Bulk
        } else {
            Kind::AutoBulk
        };
        let mut model = self.bulk(&path, kind);
        self.writes(&path, round, 1, &mut model);
        self.relayout(&path, &model);
        self.writes(&path, round, 2, &mut model);
        self.repair(&path, &model);
        std::fs::remove_dir_all(&path).unwrap();
    }

    /// A bulk import into a new store, killed; returns the model of the loaded store (the
    /// load is completed by a second, uninterrupted import if the kill left nothing).
    fn bulk(&mut self, path: &Path, kind: Kind) -> Model {
        let (file, load) = self.bulk_file(kind);
        let file = file.to_str().unwrap().to_owned();
        let args: Vec<&str> = match kind {
            Kind::Bulk => vec!["import", "--bulk", &file],
            _ => vec!["import", &file],
        };
        let end = self.killed_run(path, kind, &args);
        let empty = Model::new();
        let (_, found, _) = self.verify(path, kind, &[&empty, &load]);
        match (end, found) {
            (End::Finished(_), 0) => panic!("{kind:?} exited 0 but its documents are missing"),
            (End::Finished(_), _) => {}
            (End::Killed(_), 0) => self.tally.bulk_none += 1,
            (End::Killed(_), _) => self.tally.bulk_all += 1,
        }
        if found == 0 {
            // Load it for the rest of the round, without a kill.
            run_to_end(path, &args, &self.dir);
        }
        load
    }

    /// Acknowledged writes: an import of replacements, fresh fingerprints and fresh texts
    /// (exit 0), then a delete of existing ids (exit 0).
    fn writes(&mut self, path: &Path, round: u64, step: u32, model: &mut Model) {
        let ids: Vec<String> = model.keys().cloned().collect();
        let mut recent = Vec::new();
        let mut lines = String::new();
        for i in 0..WRITES {
            let url = format!("w{round}.{step}.{i}");
            let line = match i % 6 {
                0 | 1 => {
                    let id = &ids[self.r.random_range(0..ids.len())];
                    let fp: u64 = self.r.random();
                    serde_json::json!({"id": id, "fp": format!("{fp:016x}"), "url": url})
                }
                2 => {
                    let text = gen_text(&mut self.r, &mut recent);
                    serde_json::json!({"id": format!("{url}-t"), "text": text, "url": url})
                }
                _ => {
                    let fp: u64 = self.r.random();
                    serde_json::json!({"id": format!("{url}-f"), "fp": format!("{fp:016x}"), "url": url})
                }
            };
            lines.push_str(&line.to_string());
            lines.push('\n');
        }
        let file = self.dir.join(format!("writes-{round}-{step}.jsonl"));
        std::fs::write(&file, &lines).unwrap();
        model.extend(self.parse(&lines));
        run_to_end(path, &["import", file.to_str().unwrap()], &self.dir);
        let mut args = vec!["delete".to_owned()];
        let mut doomed: Vec<String> = model.keys().cloned().collect();
        for _ in 0..DELETES {
            let id = doomed.swap_remove(self.r.random_range(0..doomed.len()));
            model.remove(&id);
            args.push(id);
        }
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        run_to_end(path, &args, &self.dir);
        self.tally.acked_writes += (WRITES + DELETES) as u64;
    }

    /// `simstore relayout --k-max N` to another k_max, killed.
    fn relayout(&mut self, path: &Path, model: &Model) {
        let old = layout_k_max(path);
        let choices: Vec<u32> = K_MAX.iter().copied().filter(|&k| k != old).collect();
        let new = choices[self.r.random_range(0..choices.len())];
        let end = self.killed_run(
            path,
            Kind::Relayout,
            &["relayout", "--k-max", &new.to_string()],
        );
        let (seen, _, k_max) = self.verify(path, Kind::Relayout, &[model]);
        let finished = matches!(end, End::Finished(_));
        assert!(
            k_max == new || (k_max == old && !finished && seen != Seen::Interrupted),
            "after relayout {old} -> {new} ({end:?}, the reader saw {seen:?}) k_max is {k_max}"
        );
        if !finished {
            if k_max == new {
                self.tally.relayout_new += 1;
            } else {
                self.tally.relayout_old += 1;
            }
        }
    }

    /// `simstore repair`, killed.
    fn repair(&mut self, path: &Path, model: &Model) {
        let before = layout_k_max(path);
        self.killed_run(path, Kind::Repair, &["repair"]);
        let (_, _, k_max) = self.verify(path, Kind::Repair, &[model]);
        assert_eq!(k_max, before, "repair changed the layout");
    }

    /// Runs `args` on the store and kills it at a random moment within its estimated
    /// duration (measured first by an uninterrupted run on a copy when unknown; then the
    /// duration of the last run that finished before its kill).
    fn killed_run(&mut self, path: &Path, kind: Kind, args: &[&str]) -> End {
        if !self.estimate.contains_key(&kind) {
            self.calibrate(path, kind, args);
        }
        let estimate = self.estimate[&kind];
        let bulk = matches!(kind, Kind::Bulk | Kind::AutoBulk);
        let kill = match self.r.random_range(0..3) {
            // Anywhere in the run (process start and reading included).
            0 => Kill::At(estimate.mul_f64(self.r.random_range(0.0..1.1))),
            // A bulk load writes for a short time at the end: once a reader sees its
            // marker, within a tenth of the run's duration.
            1 if bulk => Kill::AfterMarker(estimate.mul_f64(self.r.random_range(0.0..0.1))),
            // In the second half of the run, where the writing is.
            _ => Kill::At(estimate.mul_f64(self.r.random_range(0.5..1.05))),
        };
        let end = run(path, args, kill, &self.dir);
        match end {
            End::Finished(took) => {
                *self.tally.finished.entry(kind).or_default() += 1;
                self.estimate.insert(kind, took);
            }
            End::Killed(_) => *self.tally.kills.entry(kind).or_default() += 1,
        }
        end
    }

    /// Measures an uninterrupted run of `args` on a copy of the store.
    fn calibrate(&mut self, path: &Path, kind: Kind, args: &[&str]) {
        let copy = self.dir.join("calibration");
        if path.exists() {
            copy_dir(path, &copy);
        }
        let End::Finished(took) = run(&copy, args, Kill::Never, &self.dir) else {
            unreachable!("not killed")
        };
        std::fs::remove_dir_all(&copy).unwrap();
        self.estimate.insert(kind, took);
    }

    /// The bulk input of `kind` and its model, written on first use.
    fn bulk_file(&mut self, kind: Kind) -> (PathBuf, Model) {
        if let Some(f) = self.bulk_files.get(&kind) {
            return f.clone();
        }
        let title_bytes = if kind == Kind::AutoBulk {
            AUTO_TITLE_BYTES
        } else {
            0
        };
        let mut recent = Vec::new();
        let mut lines = String::new();
        for i in 0..BULK_DOCS {
            let url = format!("b.{i}");
            let mut record = if self.r.random_bool(TEXT_SHARE) {
                let text = gen_text(&mut self.r, &mut recent);
                serde_json::json!({"id": format!("b{i}"), "text": text, "url": url})
            } else {
                let fp: u64 = self.r.random();
                serde_json::json!({"id": format!("b{i}"), "fp": format!("{fp:016x}"), "url": url})
            };
            if title_bytes > 0 {
                record["title"] = format!("{i:0title_bytes$}").into();
            }
            lines.push_str(&record.to_string());
            lines.push('\n');
        }
        if kind == Kind::AutoBulk {
            assert!(
                lines.len() > 32 << 20,
                "the automatic bulk input is too small"
            );
        }
        let file = self.dir.join(format!("{kind:?}.jsonl"));
        std::fs::write(&file, &lines).unwrap();
        let model = self.parse(&lines);
        self.bulk_files.insert(kind, (file.clone(), model.clone()));
        (file, model)
    }

    /// id → (fingerprint, url) of JSONL records, as `import` computes them (later lines
    /// replace earlier ones).
    fn parse(&self, lines: &str) -> Model {
        lines
            .lines()
            .map(|line| {
                let e = reader::parse_jsonl(line.as_bytes())
                    .unwrap()
                    .into_entry(&self.fingerprinter)
                    .unwrap();
                (e.id, (e.fp.0, e.meta.url.unwrap()))
            })
            .collect()
    }

    /// After a kill: what a reader sees, then (opened for writing, which finishes the
    /// interrupted work) the checks of the module doc. Returns what the reader saw, the
    /// index of the model in `want` the store equals, and the store's k_max.
    fn verify(&mut self, path: &Path, kind: Kind, want: &[&Model]) -> (Seen, usize, u32) {
        let seen = reader_view(path);
        *self.tally.seen.entry((kind, seen.clone())).or_default() += 1;
        let store = match Store::builder(path).create_if_missing(false).open() {
            Ok(store) => store,
            Err(Error::NoStore { .. }) if matches!(kind, Kind::Bulk | Kind::AutoBulk) => {
                assert!(want[0].is_empty());
                return (seen, 0, 0);
            }
            Err(e) => panic!("reopen after {kind:?} was killed (reader saw {seen:?}): {e}"),
        };
        let report = store.check().unwrap();
        assert!(
            report.is_ok(),
            "check after {kind:?} was killed (reader saw {seen:?}): {} problems: {:#?}",
            report.problem_count,
            report.problems
        );
        let actual = actual_state(&store);
        let Some(found) = want.iter().position(|m| **m == actual) else {
            let diffs: Vec<String> = want.iter().map(|m| diff(m, &actual, 10)).collect();
            panic!(
                "after {kind:?} was killed (reader saw {seen:?}) the store is none of the \
                 acknowledged states: {}",
                diffs.join("\nor: ")
            );
        };
        let model = want[found];
        assert_eq!(report.docs, model.len() as u64);
        assert_eq!(report.ids, model.len() as u64);
        assert_eq!(store.len(), model.len() as u64);
        for (id, (fp, url)) in model {
            let doc = store
                .get(id)
                .unwrap()
                .unwrap_or_else(|| panic!("get({id}) is None"));
            assert_eq!(
                (doc.fp, doc.url.as_deref()),
                (*fp, Some(url.as_str())),
                "{id}"
            );
            let exact = store.query(Fingerprint(*fp), 0).unwrap();
            assert!(
                exact.iter().any(|m| &m.doc.id == id),
                "query({fp:016x}, 0) misses {id} after {kind:?} was killed"
            );
        }
        let k_max = store.layout().k_max();
        self.near_queries(&store, model, k_max);
        self.tally.docs_verified += model.len() as u64;
        (seen, found, k_max)
    }

    /// A sample of queries two bits from a document, at `k`, against brute force.
    fn near_queries(&mut self, store: &Store, model: &Model, k: u32) {
        let entries: Vec<(String, u64)> = model.iter().map(|(id, v)| (id.clone(), v.0)).collect();
        for _ in 0..NEAR_QUERIES.min(entries.len()) {
            let (_, fp) = &entries[self.r.random_range(0..entries.len())];
            let q = flip(&mut self.r, *fp, 2);
            let got = store.query(Fingerprint(q), k).unwrap();
            assert_eq!(
                shape(&got),
                brute_force(&entries, q, k),
                "query({q:016x}, {k})"
            );
            self.tally.near_queries += 1;
        }
    }
}

/// What a read-only open says of the store.
fn reader_view(path: &Path) -> Seen {
    match StoreBuilder::new(path).read_only(true).open() {
        Ok(_) => Seen::Clean,
        Err(Error::NoStore { .. }) => Seen::NoStore,
        Err(e) if e.to_string().contains("was interrupted") => Seen::Interrupted,
        Err(e) => panic!("a reader of the killed store got an unexpected error: {e}"),
    }
}

/// The k_max of the store at `path`.
fn layout_k_max(path: &Path) -> u32 {
    let store = StoreBuilder::new(path).read_only(true).open().unwrap();
    store.layout().k_max()
}

/// When [`run`] kills the command.
#[derive(Debug, Clone, Copy)]
pub(super) enum Kill {
    Never,
    /// This long after it started.
    At(Duration),
    /// This long after a reader first saw its work interrupted (its marker set).
    AfterMarker(Duration),
}

/// Runs `simstore --db PATH ARGS` and kills it as `kill` says (unless it exited before). A
/// run that exits by itself must exit 0.
pub(super) fn run(path: &Path, args: &[&str], kill: Kill, dir: &Path) -> End {
    let log = dir.join("command.stderr");
    let child = Command::new(env!("CARGO_BIN_EXE_simstore"))
        .env_remove("SIMSTORE_DB")
        .arg("--db")
        .arg(path)
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(std::fs::File::create(&log).unwrap())
        .spawn()
        .unwrap();
    let mut guard = ChildGuard(Some(child));
    let child = guard.0.as_mut().unwrap();
    let start = Instant::now();
    let mut marked: Option<Instant> = None;
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        let due = match kill {
            Kill::Never => false,
            Kill::At(at) => start.elapsed() >= at,
            Kill::AfterMarker(after) => {
                if marked.is_none() && reader_view(path) == Seen::Interrupted {
                    marked = Some(Instant::now());
                }
                marked.is_some_and(|m| m.elapsed() >= after)
            }
        };
        if due {
            let _ = child.kill();
            let status = child.wait().unwrap();
            if killed_by_us(&status) {
                guard.0 = None;
                return End::Killed(start.elapsed());
            }
            break status;
        }
        thread::sleep(Duration::from_micros(500));
    };
    let took = start.elapsed();
    guard.0 = None;
    assert!(
        status.success(),
        "simstore {args:?} failed ({status}): {}",
        std::fs::read_to_string(&log).unwrap_or_default()
    );
    End::Finished(took)
}

/// [`run`] without a kill.
fn run_to_end(path: &Path, args: &[&str], dir: &Path) {
    run(path, args, Kill::Never, dir);
}

/// Copies a store directory (RocksDB files only; no subdirectories).
pub(super) fn copy_dir(from: &Path, to: &Path) {
    let _ = std::fs::remove_dir_all(to);
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        std::fs::copy(entry.path(), to.join(entry.file_name())).unwrap();
    }
}

/// `kill -9` of `simstore init` at random moments while it creates a store: the path then
/// holds no store or a whole one, and the next import stores into it; no staging directory
/// is left once a creation has run. (Before creation was atomic, a kill inside RocksDB's
/// creation — most of init's ~130 ms — left `LOCK`, `LOG`, `IDENTITY` and a MANIFEST
/// without `CURRENT`, a directory every later command refused as "not a simstore store".)
#[test]
fn kill_9_while_creating_a_store_leaves_none_or_a_whole_one() {
    let dir = tempfile::tempdir().unwrap();
    let dir = dir.path();
    let mut r = rng(DEFAULT_SEED);
    let record = dir.join("one.jsonl");
    std::fs::write(&record, "{\"id\": \"a\", \"fp\": \"00000000000000ff\"}\n").unwrap();
    let End::Finished(took) = run(&dir.join("calibration"), &["init"], Kill::Never, dir) else {
        unreachable!("not killed")
    };
    // A run slower than the ones after it (a cold cache, a loaded machine) would put
    // every kill after the end: a finished run narrows the window.
    let (mut kills, mut hi) = (0, 1.2f64);
    for i in 0..12 {
        let path = dir.join(format!("s{i}"));
        let share = r.random_range(0.0..hi);
        match run(&path, &["init"], Kill::At(took.mul_f64(share)), dir) {
            End::Killed(_) => kills += 1,
            _ => hi = share.max(0.01),
        }
        let seen = reader_view(&path);
        assert_ne!(seen, Seen::Interrupted, "a new store has nothing to finish");
        run_to_end(&path, &["import", record.to_str().unwrap()], dir);
        let store = StoreBuilder::new(&path).read_only(true).open().unwrap();
        assert_eq!(store.len(), 1, "after init was killed ({seen:?})");
        assert!(store.check().unwrap().is_ok());
    }
    assert!(kills > 0, "init always finished before its kill");
    let left: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|name| name.contains(".creating-"))
        .collect();
    assert!(left.is_empty(), "staging directories left: {left:?}");
}

/// Readers polling a store while `simstore init` creates it see no store or a whole one,
/// never "not a simstore store". Fails without either fix: (1) before the staged database
/// was flushed, the first writable open after the rename replayed its log, and a reader
/// opening meanwhile saw `meta` without the manifest; (2) before the directory was listed
/// ahead of the CURRENT check, a reader that missed CURRENT just before the rename then
/// found the directory non-empty.
#[test]
fn readers_beside_a_store_being_created_see_none_or_a_whole_one() {
    let dir = tempfile::tempdir().unwrap();
    let dir = dir.path();
    let mut opens = 0;
    for i in 0..15 {
        let path = dir.join(format!("s{i}"));
        let child = Command::new(env!("CARGO_BIN_EXE_simstore"))
            .arg("--db")
            .arg(&path)
            .arg("init")
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let mut guard = ChildGuard(Some(child));
        let child = guard.0.as_mut().unwrap();
        while child.try_wait().unwrap().is_none() {
            if reader_view(&path) == Seen::Clean {
                opens += 1;
            }
        }
        guard.0 = None;
    }
    eprintln!("{opens} reader opens of a store being created");
}
