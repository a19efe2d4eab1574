//! A test harness for the Redis Cluster backend: a real Redis Cluster (3 masters + 3
//! replicas, one `redis-server` process per node) on loopback, each node in its own
//! directory of a temporary directory. Tests run in parallel threads: every `Cluster` picks
//! its own free ports. The tests at the end prove the harness itself.

use std::fs;
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::thread::sleep;
use std::time::{Duration, Instant};

/// Printed (or, under CI, panicked with) when Redis is not installed.
const SKIP: &str = "skipping: redis-server not found (install Debian's redis-server to run the Redis Cluster tests)";
/// Nodes of a cluster: 3 masters, each with 1 replica.
const NODES: usize = 6;
/// Hash slots of a Redis Cluster.
const ALL_SLOTS: usize = 16384;
/// How often the waits poll, and how long they wait before panicking.
const POLL: Duration = Duration::from_millis(100);
const TIMEOUT: Duration = Duration::from_secs(30);
/// How long a freshly spawned node may take to answer PING, and how many ports to try.
const NODE_START: Duration = Duration::from_secs(10);
const PORT_TRIES: usize = 20;

/// One `redis-server` process; `child` is None once it has been killed.
struct Node {
    port: u16,
    child: Option<Child>,
    dir: PathBuf,
}

/// A Redis Cluster of real redis-server processes on 127.0.0.1: 3 masters + 3 replicas.
/// Dropping it kills every node (SIGKILL) and deletes their directories.
pub struct Cluster {
    nodes: Vec<Node>,
    tmp: tempfile::TempDir,
}

/// One line of `cluster nodes`.
struct Entry {
    id: String,
    port: u16,
    flags: String,
    slots: usize,
}

impl Entry {
    /// A master not flagged as failing (`fail` or `fail?`).
    fn live_master(&self) -> bool {
        self.flags.contains("master") && !self.flags.contains("fail")
    }
}

impl Cluster {
    /// Starts 6 redis-server processes on free loopback ports (another port is tried when a
    /// server fails to start, e.g. because another test took its port), waits until each
    /// answers PING, runs `redis-cli --cluster create ... --cluster-replicas 1`, and waits
    /// (up to 30 s, then panics with the node logs' tails) until every node reports
    /// `cluster_state:ok` and sees the 6 nodes (3 masters serving all slots, 3 replicas).
    ///
    /// Returns None, after saying so on stderr, when redis-server or redis-cli is not on
    /// PATH; but panics instead when the environment variable CI is set, because CI must run
    /// these tests.
    pub fn start() -> Option<Cluster> {
        if !on_path("redis-server") || !on_path("redis-cli") {
            assert!(!in_ci(), "{SKIP}");
            eprintln!("{SKIP}");
            return None;
        }
        let tmp = tempfile::Builder::new()
            .prefix("redis-cluster")
            .tempdir()
            .expect("create a temporary directory");
        let mut cluster = Cluster {
            nodes: Vec::new(),
            tmp,
        };
        while cluster.nodes.len() < NODES {
            let node = cluster.spawn_node();
            cluster.nodes.push(node);
        }
        cluster.create();
        cluster.wait_until("the cluster to form", |c| c.formed());
        Some(cluster)
    }

    /// "127.0.0.1:P1,127.0.0.1:P2,...": every node's address (seed list).
    pub fn seeds(&self) -> String {
        let addrs: Vec<String> = self.nodes.iter().map(|n| addr(n.port)).collect();
        addrs.join(",")
    }

    /// "redis://127.0.0.1:P1,127.0.0.1:P2,.../NAME" (all six nodes).
    pub fn url(&self, name: &str) -> String {
        format!("redis://{}/{name}", self.seeds())
    }

    /// Ports of the current masters (sorted), as a live node sees them in `cluster nodes`:
    /// flags contain "master" and not "fail" (nor "fail?").
    pub fn masters(&self) -> Vec<u16> {
        let mut ports: Vec<u16> = self
            .view(self.any_live())
            .iter()
            .filter(|e| e.live_master())
            .map(|e| e.port)
            .collect();
        ports.sort_unstable();
        ports
    }

    /// Kills the node on `port` with SIGKILL and waits for it to exit (no-op if already dead).
    pub fn kill(&mut self, port: u16) {
        let node = self.nodes.iter_mut().find(|n| n.port == port);
        node.unwrap_or_else(|| panic!("no node on port {port}"))
            .stop();
    }

    /// Starts the node on `port`, killed before, again on its directory: its data (the AOF)
    /// and its cluster state (`nodes.conf`), so it rejoins the cluster in its last role.
    /// Panics (with the logs' tails) if it does not come up, e.g. its port was taken.
    pub fn restart(&mut self, port: u16) {
        let node = self.nodes.iter_mut().find(|n| n.port == port);
        let node = node.unwrap_or_else(|| panic!("no node on port {port}"));
        assert!(node.child.is_none(), "the node on {port} is running");
        if !node.start() {
            self.fail(&format!("the node on {port} to start again"));
        }
    }

    /// After restarts: waits (up to 30 s, then panics with the logs' tails) until the
    /// cluster is whole again, as [`Cluster::start`] waits for it to form.
    pub fn wait_until_whole(&self) {
        self.wait_until("the cluster to be whole again", |c| c.formed());
    }

    /// Waits (up to 30 s, then panics with the logs' tails) until every live master's
    /// replicas have all it wrote (`INFO replication`: each replica's `offset` at the
    /// master's `master_repl_offset`). Replication is asynchronous: a test that kills a
    /// master right after a write must wait for this, or the write may be lost by design.
    pub fn wait_until_replicated(&self) {
        self.wait_until("every replica to catch up with its master", |c| {
            c.masters().into_iter().all(|m| {
                let info = node_cli(m, &["info", "replication"]);
                let sent = info.lines().find_map(|l| {
                    l.trim()
                        .strip_prefix("master_repl_offset:")?
                        .parse::<u64>()
                        .ok()
                });
                // `slave0:ip=127.0.0.1,port=7004,state=online,offset=12345,lag=0`
                let acked: Vec<u64> = (info.lines())
                    .filter(|l| l.starts_with("slave"))
                    .filter_map(|l| {
                        l.split(',')
                            .find_map(|kv| kv.strip_prefix("offset=")?.parse().ok())
                    })
                    .collect();
                sent.is_some_and(|sent| !acked.is_empty() && acked.iter().all(|&a| a >= sent))
            })
        });
    }

    /// Sets `appendfsync always` on every live node until it restarts: a write is in its
    /// node's AOF, fsynced, before it is answered, so a `kill -9` of every node loses
    /// nothing answered (with `everysec`, up to 2 s of writes).
    pub fn fsync_always(&self) {
        for n in self.live() {
            let ok = node_cli(n.port, &["config", "set", "appendfsync", "always"]);
            assert_eq!(ok, "OK", "config set appendfsync always on {}", n.port);
        }
    }

    /// Every node's port.
    pub fn ports(&self) -> Vec<u16> {
        self.nodes.iter().map(|n| n.port).collect()
    }

    /// After killing the master on `dead`: waits (up to 30 s, then panics with the node logs'
    /// tails) until every live node reports `cluster_state:ok` and sees live masters other
    /// than `dead` serving all 16384 slots (so a replica has taken over `dead`'s slots).
    pub fn wait_for_failover(&self, dead: u16) {
        let what = format!("a replica to take over the slots of the master on {dead}");
        self.wait_until(&what, |c| c.failed_over(dead));
    }

    /// Moves `slots` hash slots from the master on `from` to the master on `to` with
    /// `redis-cli --cluster reshard` (through a live node); returns when it exits
    /// successfully, panics with its output otherwise. Takes `&self`: other threads may use
    /// the cluster meanwhile (keys of moving slots are answered with ASK redirections).
    pub fn reshard(&self, from: u16, to: u16, slots: usize) {
        self.wait_until_nodes_agree();
        let view = self.view(self.any_live());
        let id = |port: u16| match view.iter().find(|e| e.port == port) {
            Some(e) => e.id.clone(),
            None => panic!("no node on port {port} in `cluster nodes`"),
        };
        let (from_id, to_id) = (id(from), id(to));
        let (seed, n) = (addr(self.any_live().port), slots.to_string());
        let out = redis_cli(&[
            "--cluster",
            "reshard",
            &seed,
            "--cluster-from",
            &from_id,
            "--cluster-to",
            &to_id,
            "--cluster-slots",
            &n,
            "--cluster-yes",
        ]);
        assert!(
            out.status.success(),
            "redis-cli --cluster reshard failed:\n{}",
            show(&out)
        );
    }

    /// Waits (up to 30 s) until `redis-cli --cluster check` finds the nodes agreeing on the
    /// slot map (after a resharding they converge within a second or two).
    fn wait_until_nodes_agree(&self) {
        let seed = addr(self.any_live().port);
        let start = std::time::Instant::now();
        loop {
            let out = redis_cli(&["--cluster", "check", &seed]);
            if out.status.success() && !String::from_utf8_lossy(&out.stdout).contains("[ERR]") {
                return;
            }
            assert!(
                start.elapsed() < std::time::Duration::from_secs(30),
                "the nodes do not agree on the slot map:\n{}",
                show(&out)
            );
            std::thread::sleep(std::time::Duration::from_millis(200));
        }
    }

    /// Runs `redis-cli -p <port> <args...>` (`port` should be a live node's) and returns its
    /// stdout, trimmed. Options may come first in `args`, e.g. `["-c", "set", "k", "v"]`.
    pub fn cli(&self, port: u16, args: &[&str]) -> String {
        node_cli(port, args)
    }

    /// Starts one more node, trying other ports when a server fails to start.
    fn spawn_node(&self) -> Node {
        for _ in 0..PORT_TRIES {
            if let Some(node) = Node::spawn(self.tmp.path()) {
                return node;
            }
        }
        self.fail(&format!(
            "a redis-server to start ({PORT_TRIES} ports tried)"
        ))
    }

    /// `redis-cli --cluster create` over every node, one replica per master.
    fn create(&self) {
        let addrs: Vec<String> = self.nodes.iter().map(|n| addr(n.port)).collect();
        let mut args = vec!["--cluster", "create"];
        args.extend(addrs.iter().map(String::as_str));
        args.extend(["--cluster-replicas", "1", "--cluster-yes"]);
        let out = redis_cli(&args);
        if !out.status.success() {
            self.fail(&format!(
                "redis-cli --cluster create to succeed:\n{}",
                show(&out)
            ));
        }
    }

    /// Every node is ok and sees 6 healthy nodes: 3 replicas and masters serving all slots.
    fn formed(&self) -> bool {
        self.live().all(|n| {
            let view = self.view(n);
            let healthy = |e: &Entry| {
                !["fail", "handshake", "noaddr"]
                    .iter()
                    .any(|f| e.flags.contains(f))
            };
            let replicas = view.iter().filter(|e| e.flags.contains("slave")).count();
            state_ok(n.port)
                && synced(n.port)
                && view.len() == NODES
                && view.iter().all(healthy)
                && replicas == NODES / 2
                && master_slots(&view, None) == ALL_SLOTS
        })
    }

    /// Every live node is ok and sees live masters other than `dead` serving all slots.
    fn failed_over(&self, dead: u16) -> bool {
        self.live().all(|n| {
            let view = self.view(n);
            state_ok(n.port) && master_slots(&view, Some(dead)) == ALL_SLOTS
        })
    }

    /// `cluster nodes` as `node` sees it.
    fn view(&self, node: &Node) -> Vec<Entry> {
        parse_nodes(&node_cli(node.port, &["cluster", "nodes"]))
    }

    /// The nodes not killed.
    fn live(&self) -> impl Iterator<Item = &Node> {
        self.nodes.iter().filter(|n| n.child.is_some())
    }

    fn any_live(&self) -> &Node {
        self.live()
            .next()
            .expect("every node of the cluster was killed")
    }

    /// Polls `done` every 100 ms; panics with the logs' tails after 30 s.
    fn wait_until(&self, what: &str, done: impl Fn(&Self) -> bool) {
        let deadline = Instant::now() + TIMEOUT;
        while !done(self) {
            if Instant::now() > deadline {
                self.fail(&format!("{what} (waited {TIMEOUT:?})"));
            }
            sleep(POLL);
        }
    }

    /// Panics: `what` did not happen; shows the tail of every node's log.
    fn fail(&self, what: &str) -> ! {
        let logs: Vec<String> = self.nodes.iter().map(Node::tail).collect();
        panic!(
            "Redis Cluster harness: gave up waiting for {what}\n{}",
            logs.join("\n")
        )
    }
}

impl Drop for Cluster {
    fn drop(&mut self) {
        for node in &mut self.nodes {
            node.stop();
        }
    }
}

impl Node {
    /// Starts a redis-server on a free port in a directory of its own under `root`; None
    /// (the process killed) if it exits or does not answer PING in time, e.g. because
    /// another process took the port meanwhile.
    fn spawn(root: &Path) -> Option<Node> {
        let port = free_port();
        let dir = root.join(port.to_string());
        let _ = fs::remove_dir_all(&dir);
        fs::create_dir_all(&dir).expect("create a node directory");
        fs::write(dir.join("redis.conf"), config(port, &dir)).expect("write redis.conf");
        let mut node = Node {
            port,
            child: None,
            dir,
        };
        node.start().then_some(node)
    }

    /// Starts redis-server on the node's configuration (and so on its data and cluster
    /// state, when it ran before); false (the process killed) if it exits or does not
    /// answer PING in time.
    fn start(&mut self) -> bool {
        let out = fs::File::create(self.dir.join("stdout")).expect("create the node's stdout file");
        let child = Command::new("redis-server")
            .arg(self.dir.join("redis.conf"))
            .current_dir(&self.dir)
            .stdin(Stdio::null())
            .stdout(out.try_clone().expect("clone a file handle"))
            .stderr(out)
            .spawn()
            .expect("spawn redis-server");
        self.child = Some(child);
        if self.wait_up() {
            return true;
        }
        self.stop();
        false
    }

    /// Waits until this process (not another one on the same port) answers PING.
    fn wait_up(&mut self) -> bool {
        let child = self.child.as_mut().expect("a started node");
        let me = format!("process_id:{}", child.id());
        let deadline = Instant::now() + NODE_START;
        while Instant::now() < deadline {
            if !matches!(child.try_wait(), Ok(None)) {
                return false;
            }
            if node_cli(self.port, &["ping"]) == "PONG" {
                let info = node_cli(self.port, &["info", "server"]);
                return info.lines().any(|l| l.trim() == me);
            }
            sleep(POLL);
        }
        false
    }

    /// SIGKILLs the process (if still running) and waits for it to exit.
    fn stop(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }

    /// The last lines of the node's log and of its stdout/stderr.
    fn tail(&self) -> String {
        let state = if self.child.is_some() {
            "live"
        } else {
            "killed"
        };
        let mut out = format!("--- node {} ({state}) ---\n", self.port);
        for file in ["log", "stdout"] {
            let text = fs::read_to_string(self.dir.join(file)).unwrap_or_default();
            let lines: Vec<&str> = text.lines().collect();
            for line in &lines[lines.len().saturating_sub(20)..] {
                out.push_str(&format!("[{file}] {line}\n"));
            }
        }
        out
    }
}

/// The configuration of the node on `port` living in `dir`.
fn config(port: u16, dir: &Path) -> String {
    let dir = dir.display();
    [
        format!("port {port}"),
        "bind 127.0.0.1".into(),
        "cluster-enabled yes".into(),
        "cluster-config-file nodes.conf".into(),
        "cluster-node-timeout 2000".into(),
        // A replica can always take over, however long ago it heard from its master.
        "cluster-replica-validity-factor 0".into(),
        "appendonly yes".into(),
        "appendfsync everysec".into(),
        // Replicas sync at once (the default waits 5 s), so WAIT and failover tests can
        // count on them from the start.
        "repl-diskless-sync-delay 0".into(),
        "save \"\"".into(),
        "daemonize no".into(),
        "protected-mode no".into(),
        format!("dir \"{dir}\""),
        format!("logfile \"{dir}/log\""),
    ]
    .join("\n")
        + "\n"
}

/// Whether the node on `port`, if a replica, has finished syncing with its master.
fn synced(port: u16) -> bool {
    !node_cli(port, &["info", "replication"]).contains("master_link_status:down")
}

/// A loopback port free now, as is its cluster bus port (port + 10000); never 6379 nor
/// below 1024. The caller races other processes for it: a server may still fail to bind it.
fn free_port() -> u16 {
    loop {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind 127.0.0.1:0");
        let port = listener.local_addr().expect("a bound address").port();
        let usable = port > 1024 && port != 6379 && port <= u16::MAX - 10000;
        if usable && TcpListener::bind(("127.0.0.1", port + 10000)).is_ok() {
            return port;
        }
    }
}

/// Whether an executable file `name` is in a directory of PATH.
fn on_path(name: &str) -> bool {
    let path = std::env::var_os("PATH").unwrap_or_default();
    std::env::split_paths(&path).any(|dir| dir.join(name).is_file())
}

/// Whether we run under CI (CI set, and not to "", "0" or "false").
fn in_ci() -> bool {
    std::env::var_os("CI").is_some_and(|v| !v.is_empty() && v != "0" && v != "false")
}

fn addr(port: u16) -> String {
    format!("127.0.0.1:{port}")
}

/// `redis-cli <args...>`, stdin closed.
fn redis_cli(args: &[&str]) -> Output {
    Command::new("redis-cli")
        .args(args)
        .stdin(Stdio::null())
        .output()
        .expect("run redis-cli")
}

/// `redis-cli -p <port> <args...>`: its stdout, trimmed.
fn node_cli(port: u16, args: &[&str]) -> String {
    let port = port.to_string();
    let mut all = vec!["-p", port.as_str()];
    all.extend_from_slice(args);
    String::from_utf8_lossy(&redis_cli(&all).stdout)
        .trim()
        .to_owned()
}

/// A command's exit status, stdout and stderr, for a panic message.
fn show(out: &Output) -> String {
    let (stdout, stderr) = (
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr),
    );
    format!("{}\nstdout:\n{stdout}\nstderr:\n{stderr}", out.status)
}

/// Whether the node on `port` reports `cluster_state:ok`.
fn state_ok(port: u16) -> bool {
    node_cli(port, &["cluster", "info"])
        .lines()
        .any(|l| l.trim() == "cluster_state:ok")
}

/// The slots served by masters not flagged as failing, other than the one on `except`.
fn master_slots(view: &[Entry], except: Option<u16>) -> usize {
    let counted = |e: &&Entry| e.live_master() && Some(e.port) != except;
    view.iter().filter(counted).map(|e| e.slots).sum()
}

/// The lines of `cluster nodes`: `<id> <ip:port@cport> <flags> <master> <ping> <pong>
/// <epoch> <link> <slot ranges...>`.
fn parse_nodes(text: &str) -> Vec<Entry> {
    let entry = |line: &str| {
        let f: Vec<&str> = line.split_whitespace().collect();
        let port = f
            .get(1)?
            .split('@')
            .next()?
            .rsplit(':')
            .next()?
            .parse()
            .ok()?;
        let slots = f.iter().skip(8).map(|s| slot_count(s)).sum();
        Some(Entry {
            id: f[0].to_owned(),
            port,
            flags: f.get(2)?.to_string(),
            slots,
        })
    };
    text.lines().filter_map(entry).collect()
}

/// Slots in one slot field of `cluster nodes`: "5461", "0-5460", or a migration marker
/// ("[slot->-id]", "[slot-<-id]", counted where the slot is now: 0).
fn slot_count(field: &str) -> usize {
    let parse = |s: &str| s.parse::<usize>().ok();
    match field.split_once('-') {
        _ if field.starts_with('[') => 0,
        Some((a, b)) => match (parse(a), parse(b)) {
            (Some(a), Some(b)) if b >= a => b - a + 1,
            _ => 0,
        },
        None => usize::from(parse(field).is_some()),
    }
}

/// Slots the master on `port` serves, as a live node sees it.
fn slots_of(cluster: &Cluster, port: u16) -> usize {
    let view = cluster.view(cluster.any_live());
    view.iter()
        .filter(|e| e.port == port)
        .map(|e| e.slots)
        .sum()
}

#[test]
fn cluster_starts_and_serves_keys() {
    let Some(c) = Cluster::start() else { return };
    let port = c.nodes[0].port;
    assert_eq!(c.cli(port, &["-c", "set", "k", "v"]), "OK");
    assert_eq!(c.cli(port, &["-c", "get", "k"]), "v");
    assert_eq!(c.masters().len(), 3);
    assert_eq!(c.seeds().split(',').count(), NODES);
    assert!(c.url("sims").starts_with(&format!("redis://{}", c.seeds())));
    assert!(c.url("sims").ends_with("/sims"));
}

#[test]
fn killed_master_is_replaced() {
    let Some(mut c) = Cluster::start() else {
        return;
    };
    let dead = c.masters()[0];
    c.kill(dead);
    c.wait_for_failover(dead);
    let masters = c.masters();
    assert_eq!(masters.len(), 3, "{masters:?}");
    assert!(!masters.contains(&dead), "{masters:?}");
    let port = masters[0];
    assert_eq!(c.cli(port, &["-c", "set", "k", "v"]), "OK");
    assert_eq!(c.cli(port, &["-c", "get", "k"]), "v");
}

#[test]
fn a_cluster_killed_whole_comes_back_with_its_keys() {
    let Some(mut c) = Cluster::start() else {
        return;
    };
    let port = c.masters()[0];
    c.fsync_always();
    assert_eq!(c.cli(port, &["-c", "set", "k", "v"]), "OK");
    for p in c.ports() {
        c.kill(p);
    }
    for p in c.ports() {
        c.restart(p);
    }
    c.wait_until_whole();
    assert_eq!(c.masters().len(), 3);
    assert_eq!(c.cli(port, &["-c", "get", "k"]), "v");
}

#[test]
fn reshard_moves_slots_while_the_cluster_is_used() {
    let Some(c) = Cluster::start() else { return };
    let masters = c.masters();
    let (from, to) = (masters[0], masters[1]);
    let (before_from, before_to) = (slots_of(&c, from), slots_of(&c, to));
    std::thread::scope(|s| {
        let writer = s.spawn(|| {
            for i in 0..200 {
                let key = format!("key{i}");
                assert_eq!(c.cli(to, &["-c", "set", &key, "v"]), "OK");
                assert_eq!(c.cli(from, &["-c", "get", &key]), "v");
            }
        });
        c.reshard(from, to, 100);
        writer.join().unwrap();
    });
    assert_eq!(slots_of(&c, from), before_from - 100);
    assert_eq!(slots_of(&c, to), before_to + 100);
}
