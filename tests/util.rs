//! Helpers shared by the integration tests.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use simstore::{Fingerprint, Match};

/// A deterministic RNG.
pub fn rng(seed: u64) -> StdRng {
    StdRng::seed_from_u64(seed)
}

/// `fp` with `n` distinct random bits flipped.
pub fn flip(rng: &mut StdRng, fp: u64, n: u32) -> u64 {
    let mut out = fp;
    let mut flipped = 0u64;
    while flipped.count_ones() < n {
        flipped |= 1u64 << rng.random_range(0..64);
    }
    out ^= flipped;
    out
}

/// The brute-force answer: `(distance, id)` of every entry within `k`, sorted.
pub fn brute_force(entries: &[(String, u64)], q: u64, k: u32) -> Vec<(u32, String)> {
    let mut out: Vec<(u32, String)> = entries
        .iter()
        .map(|(id, fp)| ((fp ^ q).count_ones(), id.clone()))
        .filter(|(d, _)| *d <= k)
        .collect();
    out.sort();
    out
}

/// A store answer in the same shape as [`brute_force`].
pub fn shape(matches: &[Match]) -> Vec<(u32, String)> {
    matches
        .iter()
        .map(|m| (m.distance, m.doc.id.clone()))
        .collect()
}

/// Clustered fingerprints: `clusters` random centres, each with `size` members at
/// distance 0..=`spread` (so exact duplicates and near misses around every k).
pub fn clustered(rng: &mut StdRng, clusters: usize, size: usize, spread: u32) -> Vec<u64> {
    let mut out = Vec::with_capacity(clusters * size);
    for _ in 0..clusters {
        let centre: u64 = rng.random();
        for _ in 0..size {
            let d = rng.random_range(0..=spread);
            out.push(flip(rng, centre, d));
        }
    }
    out
}

#[rustfmt::skip]
pub const WORDS: &[&str] = &[
    "crawler", "fetched", "page", "news", "weather", "beijing", "park", "river", "market",
    "price", "stock", "report", "today", "tomorrow", "people", "running", "kites", "city",
    "train", "station", "delay", "rain", "sunny", "school", "students", "exam", "results",
    "football", "match", "score", "goal", "team", "coach", "season", "winter", "summer",
    "festival", "lantern", "dumplings", "tea", "garden", "museum", "opening", "hours", "北京",
    "天气", "公园", "散步", "新闻", "市场", "价格", "学生", "考试", "足球",
];

/// A document text (English and Chinese words): new random words, or a near copy (one word changed) of a recent one.
pub fn gen_text(r: &mut StdRng, recent: &mut Vec<String>) -> String {
    let text = if !recent.is_empty() && r.random_bool(0.5) {
        let base = &recent[r.random_range(0..recent.len())];
        let mut words: Vec<&str> = base.split(' ').collect();
        let i = r.random_range(0..words.len());
        words[i] = WORDS[r.random_range(0..WORDS.len())];
        words.join(" ")
    } else {
        let n = r.random_range(8..40);
        (0..n)
            .map(|_| WORDS[r.random_range(0..WORDS.len())])
            .collect::<Vec<_>>()
            .join(" ")
    };
    if recent.len() >= 64 {
        let i = r.random_range(0..recent.len());
        recent.swap_remove(i);
    }
    recent.push(text.clone());
    text
}

/// Parses a fingerprint, panicking on bad test data.
pub fn fp(hex: &str) -> Fingerprint {
    hex.parse().expect("valid test fingerprint")
}

/// A temporary directory with a store path, running the real binary (ripgrep's TestCommand).
pub struct TestCommand {
    dir: tempfile::TempDir,
}

impl TestCommand {
    pub fn new() -> Self {
        Self {
            dir: tempfile::tempdir().unwrap(),
        }
    }

    pub fn db(&self) -> PathBuf {
        self.dir.path().join("store.db")
    }

    pub fn path(&self, name: &str) -> PathBuf {
        self.dir.path().join(name)
    }

    pub fn write(&self, name: &str, bytes: &[u8]) -> PathBuf {
        let p = self.path(name);
        std::fs::write(&p, bytes).unwrap();
        p
    }

    /// The binary with `--db DB` and `args`, run in the temporary directory.
    pub fn command_on(&self, db: &Path, args: &[&str]) -> Command {
        let mut c = Command::new(env!("CARGO_BIN_EXE_simstore"));
        c.current_dir(self.dir.path())
            .env_remove("SIMSTORE_DB")
            .arg("--db")
            .arg(db)
            .args(args);
        c
    }

    /// The binary with `--db` the default store path and `args`.
    pub fn command(&self, args: &[&str]) -> Command {
        self.command_on(&self.db(), args)
    }

    pub fn run_on(&self, db: &Path, args: &[&str]) -> Output {
        checked(
            self.command_on(db, args)
                .stdin(Stdio::null())
                .output()
                .unwrap(),
        )
    }

    pub fn run(&self, args: &[&str]) -> Output {
        self.run_on(&self.db(), args)
    }

    pub fn run_stdin(&self, args: &[&str], input: &[u8]) -> Output {
        let mut child = self
            .command_on(&self.db(), args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        child.stdin.take().unwrap().write_all(input).unwrap();
        checked(child.wait_with_output().unwrap())
    }
}

/// Every run: the process exited by itself (no signal) and did not panic.
pub fn checked(o: Output) -> Output {
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        o.status.code().is_some(),
        "killed by a signal: {:?}\n{err}",
        o.status
    );
    assert!(!err.contains("panicked"), "the binary panicked:\n{err}");
    o
}

pub fn code(o: &Output) -> i32 {
    o.status.code().unwrap()
}

pub fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// A `simstore serve` process on a temporary store, killed (SIGKILL) when dropped.
pub struct Server {
    child: std::process::Child,
    /// `http://127.0.0.1:PORT`, as printed on the first line of its stdout.
    pub url: String,
    stderr: PathBuf,
    _stdout: std::io::BufReader<std::process::ChildStdout>,
}

impl TestCommand {
    /// Starts `simstore --db DB serve --port 0 ARGS` and reads its address.
    pub fn serve_on(&self, db: &Path, args: &[&str]) -> Server {
        self.spawn_server(self.serve_command(db, args))
    }

    /// [`TestCommand::serve`] started by `sh -c 'SETUP && exec simstore ...'`, so that
    /// `SETUP` (`ulimit -n 256`, say) applies to the server.
    pub fn serve_after(&self, setup: &str, args: &[&str]) -> Server {
        self.spawn_server(self.after(setup, self.serve_command(&self.db(), args)))
    }

    /// Runs `simstore serve --port 0 ARGS` after `SETUP` as [`TestCommand::serve_after`]
    /// does, for a server that is expected not to start.
    pub fn serve_refused_after(&self, setup: &str, args: &[&str]) -> Output {
        let mut c = self.after(setup, self.serve_command(&self.db(), args));
        checked(c.stdin(Stdio::null()).output().unwrap())
    }

    /// `command` run through `sh -c 'SETUP && exec COMMAND'`.
    fn after(&self, setup: &str, inner: Command) -> Command {
        let mut c = Command::new("sh");
        c.current_dir(self.dir.path())
            .env_remove("SIMSTORE_DB")
            .arg("-c")
            .arg(format!("{setup} && exec \"$0\" \"$@\""))
            .arg(inner.get_program())
            .args(inner.get_args());
        c
    }

    fn serve_command(&self, db: &Path, args: &[&str]) -> Command {
        let mut all = vec!["serve", "--port", "0"];
        all.extend_from_slice(args);
        self.command_on(db, &all)
    }

    fn spawn_server(&self, mut command: Command) -> Server {
        use std::io::BufRead;
        use std::sync::atomic::{AtomicUsize, Ordering};
        static STARTS: AtomicUsize = AtomicUsize::new(0);
        let n = STARTS.fetch_add(1, Ordering::SeqCst);
        let stderr = self.path(&format!("serve-{n}.stderr"));
        let mut child = command
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(std::fs::File::create(&stderr).unwrap())
            .spawn()
            .unwrap();
        let mut stdout = std::io::BufReader::new(child.stdout.take().unwrap());
        let mut line = String::new();
        stdout.read_line(&mut line).unwrap();
        let url = line.trim().to_owned();
        assert!(
            url.starts_with("http://127.0.0.1:"),
            "first line {line:?}; stderr: {}",
            std::fs::read_to_string(&stderr).unwrap_or_default()
        );
        Server {
            child,
            url,
            stderr,
            _stdout: stdout,
        }
    }

    /// [`TestCommand::serve_on`] the default store.
    pub fn serve(&self, args: &[&str]) -> Server {
        self.serve_on(&self.db(), args)
    }
}

impl Server {
    /// The URL of `path` (which starts with `/`).
    pub fn at(&self, path: &str) -> String {
        format!("{}{path}", self.url)
    }

    /// Sends a signal (`TERM`, `INT`, `KILL`) with kill(1).
    pub fn signal(&self, name: &str) {
        let ok = Command::new("kill")
            .args(["-s", name, &self.child.id().to_string()])
            .status()
            .unwrap()
            .success();
        assert!(ok, "kill -s {name} failed");
    }

    /// The server's process id.
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// `IP:PORT` of the server.
    pub fn addr(&self) -> std::net::SocketAddr {
        self.url.trim_start_matches("http://").parse().unwrap()
    }

    /// Waits up to `limit` for the process to exit: its status and stderr, or `None` if it
    /// is still running then. A liveness bound, not a timing assertion: pass a generous one.
    pub fn wait_at_most(
        &mut self,
        limit: std::time::Duration,
    ) -> Option<(std::process::ExitStatus, String)> {
        let start = std::time::Instant::now();
        while start.elapsed() < limit {
            if self.child.try_wait().unwrap().is_some() {
                return Some(self.wait());
            }
            std::thread::sleep(std::time::Duration::from_millis(50));
        }
        None
    }

    /// The server's resident memory in KiB (`VmRSS` of `/proc/PID/status`; `None` where
    /// there is no `/proc` or the process is gone).
    pub fn rss_kib(&self) -> Option<u64> {
        let status = std::fs::read_to_string(format!("/proc/{}/status", self.pid())).ok()?;
        let line = status.lines().find(|l| l.starts_with("VmRSS:"))?;
        line.split_whitespace().nth(1)?.parse().ok()
    }

    /// Waits for the process to exit: its status and everything it wrote on stderr.
    pub fn wait(&mut self) -> (std::process::ExitStatus, String) {
        let status = self.child.wait().unwrap();
        (
            status,
            std::fs::read_to_string(&self.stderr).unwrap_or_default(),
        )
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// An HTTP client that returns 4xx/5xx answers instead of failing on them.
pub fn http() -> ureq::Agent {
    ureq::Agent::config_builder()
        .http_status_as_error(false)
        .build()
        .into()
}

/// An answer's status and JSON body (`null` when the body is not JSON).
pub fn answer(
    r: Result<ureq::http::Response<ureq::Body>, ureq::Error>,
) -> (u16, serde_json::Value) {
    let r = r.unwrap();
    let status = r.status().as_u16();
    let text = r.into_body().read_to_string().unwrap();
    (
        status,
        serde_json::from_str(&text).unwrap_or(serde_json::Value::Null),
    )
}

/// The backends a store can be opened on; the model, dedup and check/repair tests run on each.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Backend {
    /// RocksDB in a temporary directory.
    Rocks,
    /// The in-memory backend.
    Memory,
}

/// Every backend.
pub const BACKENDS: [Backend; 2] = [Backend::Rocks, Backend::Memory];

/// The builder of a new store on `backend` (RocksDB under `dir`), with the defaults.
pub fn store_builder(backend: Backend, dir: &Path) -> simstore::StoreBuilder {
    match backend {
        Backend::Rocks => simstore::StoreBuilder::new(dir.join("db")),
        Backend::Memory => simstore::StoreBuilder::in_memory(),
    }
}

/// A new store with `k_max` and `blocks` on `backend` (RocksDB under `dir`).
pub fn new_store(backend: Backend, dir: &Path, k_max: u32, blocks: u32) -> simstore::Store {
    let builder = store_builder(backend, dir);
    builder.k_max(k_max).blocks(blocks).open().unwrap()
}

/// Runs `cmd`, sampling the child's peak resident memory (`VmHWM`, in bytes) from /proc
/// while it runs; 0 where /proc is not available.
pub fn run_measured(mut cmd: Command) -> (Output, u64) {
    let mut child = cmd
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let status = format!("/proc/{}/status", child.id());
    let mut peak_kb = 0u64;
    while child.try_wait().unwrap().is_none() {
        if let Ok(s) = std::fs::read_to_string(&status) {
            for l in s.lines().filter(|l| l.starts_with("VmHWM:")) {
                let kb = l.split_whitespace().nth(1).and_then(|v| v.parse().ok());
                peak_kb = peak_kb.max(kb.unwrap_or(0));
            }
        }
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    (checked(child.wait_with_output().unwrap()), peak_kb * 1024)
}

/// A store's RocksDB database opened straight through RocksDB (to damage or rewrite it
/// behind the store's back), with the tables' merge operator, without which RocksDB could
/// not recover their merge records from the write-ahead log.
pub fn raw_db(path: &std::path::Path) -> rocksdb::DB {
    use simstore::store::codec::bucket;
    let mut opts = rocksdb::Options::default();
    opts.set_merge_operator(
        bucket::MERGE_OPERATOR,
        |key: &[u8], existing: Option<&[u8]>, ops: &rocksdb::MergeOperands| {
            bucket::merge_bucket(key, existing, ops).ok()
        },
        |_: &[u8], _: Option<&[u8]>, ops: &rocksdb::MergeOperands| Some(bucket::concat_ops(ops)),
    );
    // `open_cf` would give every column family default options (no merge operator).
    let cfs = rocksdb::DB::list_cf(&opts, path).unwrap();
    let descriptors = cfs
        .iter()
        .map(|name| rocksdb::ColumnFamilyDescriptor::new(name, opts.clone()));
    rocksdb::DB::open_cf_descriptors(&opts, path, descriptors).unwrap()
}

/// An edit of `article` (some words replaced) whose fingerprint is 4 to 8 bits from the
/// original's, with sketches that agree, and that the standard mode's layout at 1M puts in
/// one span with the original (`in_span`) or not, even with the 4 probes of the edit's weak
/// bits that the mode reads on a store without bands — then sharing a band of the sketch
/// with it, which finds it: the first in a fixed order of edits.
pub fn article_edit(article: &str, in_span: bool) -> String {
    use simstore::index::probing;
    let f = simstore::Fingerprinter::new();
    let mode = simstore::Quality::Standard;
    let layout = mode.layout(1_000_000).unwrap();
    let original = f.fingerprint(None, article).unwrap().0;
    let sketch = f.sketch(None, article).unwrap();
    let words: Vec<&str> = article.split(' ').collect();
    for word in [
        "banana", "zebra", "quartz", "violet", "orchid", "pepper", "walnut",
    ] {
        for stride in [7, 3, 11, 5, 2, 13] {
            for n in 1..=12 {
                for start in 0..words.len() {
                    let mut edited = words.clone();
                    for i in 0..n {
                        edited[(start + stride * i) % words.len()] = word;
                    }
                    let text = edited.join(" ");
                    let a = f.analyze(None, &text).unwrap();
                    let fp = a.fingerprint.0;
                    let d = (fp ^ original).count_ones();
                    // The probes of a store without bands too.
                    let probes = simstore::index::quality::MODE_PROBES_WITHOUT_BANDS;
                    let flips = probing::query_flips(&layout, 3, probes, a.weak_bits.as_ref());
                    let found = if in_span {
                        layout.finds(3, fp, original)
                    } else {
                        probing::finds(&layout, 3, &flips, fp, original)
                    };
                    let banded = simstore::index::bands::share(&a.sketch.unwrap(), &sketch, 2);
                    if (4..=8).contains(&d)
                        && found == in_span
                        && (in_span || banded)
                        && a.sketch.unwrap().similarity(&sketch) >= mode.min_similarity()
                    {
                        return text;
                    }
                }
            }
        }
    }
    panic!("no edit of the article is 4 to 8 bits away with in_span = {in_span}");
}

/// The brute-force leader clustering of records `0..n` in order: each record's leader, the
/// nearest (then earliest) earlier kept record `i` with `pair(i, j) == Some(distance)`, or
/// itself (kept).
pub fn brute_leaders(n: usize, pair: impl Fn(usize, usize) -> Option<u32>) -> Vec<usize> {
    let mut leader: Vec<usize> = Vec::with_capacity(n);
    for j in 0..n {
        let best = (0..j)
            .filter(|&i| leader[i] == i)
            .filter_map(|i| pair(i, j).map(|d| (d, i)))
            .min();
        leader.push(best.map_or(j, |(_, i)| i));
    }
    leader
}

/// The clusters of `leader` ([`brute_leaders`]) of at least 2 records, as sorted lists of
/// `name(i)`, sorted.
pub fn leader_clusters(leader: &[usize], name: impl Fn(usize) -> String) -> Vec<Vec<String>> {
    let mut by: std::collections::BTreeMap<usize, Vec<String>> = Default::default();
    for (i, &l) in leader.iter().enumerate() {
        by.entry(l).or_default().push(name(i));
    }
    let mut out: Vec<Vec<String>> = by
        .into_values()
        .filter(|c| c.len() >= 2)
        .map(|mut c| {
            c.sort();
            c
        })
        .collect();
    out.sort();
    out
}

/// Rewrites the manifest of the RocksDB store at `path` with `f` (the store closed).
pub fn rewrite_manifest(path: &std::path::Path, f: impl FnOnce(Vec<u8>) -> Vec<u8>) {
    use simstore::store::codec;
    let db = raw_db(path);
    let meta = db.cf_handle("meta").unwrap();
    let bytes = db.get_cf(meta, codec::MANIFEST_KEY).unwrap().unwrap();
    db.put_cf(meta, codec::MANIFEST_KEY, f(bytes)).unwrap();
}

/// Sets the format version in the manifest of the RocksDB store at `path`: below format 8,
/// without the number of band tables a manifest of this build ends with (the band tables'
/// column families stay, unread, as a store relaid out by a newer build and then rewritten
/// by an older one would not have them).
pub fn set_format_version(path: &std::path::Path, version: u32) {
    use simstore::store::codec;
    rewrite_manifest(path, |mut bytes| {
        let was = codec::manifest_format(&bytes).unwrap();
        if was >= codec::BANDS_FORMAT && version < codec::BANDS_FORMAT {
            bytes.pop();
        }
        bytes[8..12].copy_from_slice(&version.to_be_bytes());
        bytes
    });
}

/// The bytes of the files under `dir`, every level.
pub fn dir_bytes(dir: &std::path::Path) -> u64 {
    std::fs::read_dir(dir)
        .map(|entries| {
            entries
                .flatten()
                .map(|e| match e.metadata() {
                    Ok(m) if m.is_dir() => dir_bytes(&e.path()),
                    Ok(m) => m.len(),
                    Err(_) => 0,
                })
                .sum()
        })
        .unwrap_or(0)
}
