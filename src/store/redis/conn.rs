//! Connections to the cluster: a pool of the `redis` crate's cluster connections (which
//! route by slot and follow MOVED/ASK), and retries through failovers.

use std::ops::{Deref, DerefMut};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use redis::RetryMethod;
use redis::cluster::{ClusterClient, ClusterConnection};

use crate::error::{Error, Result};

/// How long an operation is retried while the cluster fails over or reshards (a failover
/// takes `cluster-node-timeout` plus an election: a few seconds).
const RETRY_FOR: Duration = Duration::from_secs(30);

/// A pool of cluster connections; `Sync`, so many threads share one store.
pub(super) struct Pool {
    client: ClusterClient,
    idle: Mutex<Vec<ClusterConnection>>,
}

/// A connection taken from the pool, returned to it when dropped.
pub(super) struct PoolConn<'a> {
    pool: &'a Pool,
    conn: Option<ClusterConnection>,
}

impl Deref for PoolConn<'_> {
    type Target = ClusterConnection;
    fn deref(&self) -> &ClusterConnection {
        self.conn.as_ref().expect("present until dropped")
    }
}

impl DerefMut for PoolConn<'_> {
    fn deref_mut(&mut self) -> &mut ClusterConnection {
        self.conn.as_mut().expect("present until dropped")
    }
}

impl Drop for PoolConn<'_> {
    fn drop(&mut self) {
        if let Some(c) = self.conn.take() {
            lock(&self.pool.idle).push(c);
        }
    }
}

impl PoolConn<'_> {
    /// Drops the connection instead of returning it (after an error that may have broken it).
    fn discard(mut self) {
        self.conn = None;
    }
}

impl Pool {
    /// Connects to the cluster through `seeds` (`host:port` each).
    pub(super) fn connect(seeds: &[String]) -> Result<Self> {
        if let Some(e) = not_a_cluster(seeds) {
            return Err(e);
        }
        let urls: Vec<String> = seeds.iter().map(|s| format!("redis://{s}")).collect();
        let client = ClusterClient::builder(urls)
            .connection_timeout(Duration::from_secs(2))
            .response_timeout(Duration::from_secs(10))
            .retries(6)
            .build()
            .map_err(storage)?;
        let pool = Pool {
            client,
            idle: Mutex::new(Vec::new()),
        };
        drop(pool.get()?);
        Ok(pool)
    }

    /// A connection (an idle one, or a new one).
    pub(super) fn get(&self) -> Result<PoolConn<'_>> {
        let idle = lock(&self.idle).pop();
        let conn = match idle {
            Some(c) => c,
            None => self.client.get_connection().map_err(storage)?,
        };
        Ok(PoolConn {
            pool: self,
            conn: Some(conn),
        })
    }

    /// Runs `f` on a connection, retrying (on a new connection) errors that a failover or
    /// a resharding causes, for up to [`RETRY_FOR`]. `f` must be idempotent.
    pub(super) fn run<T>(
        &self,
        mut f: impl FnMut(&mut ClusterConnection) -> redis::RedisResult<T>,
    ) -> Result<T> {
        self.retrying(|conn| f(conn).map_err(Retry::from))
    }

    /// Like [`Pool::run`] for a closure that returns this crate's errors as well.
    pub(super) fn retrying<T>(
        &self,
        mut f: impl FnMut(&mut ClusterConnection) -> std::result::Result<T, Retry>,
    ) -> Result<T> {
        let start = Instant::now();
        let mut pause = Duration::from_millis(20);
        loop {
            // A connection that cannot be had (a node down mid-failover) is retried too.
            let failed = match self.get() {
                Ok(mut conn) => match f(&mut conn) {
                    Ok(v) => return Ok(v),
                    Err(Retry::Redis(e)) if transient(&e) => {
                        conn.discard();
                        storage(e)
                    }
                    Err(Retry::Redis(e)) => return Err(storage(e)),
                    Err(Retry::Store(e)) => return Err(e),
                },
                Err(e) => e,
            };
            if start.elapsed() >= RETRY_FOR {
                return Err(failed);
            }
            std::thread::sleep(pause);
            pause = (pause * 2).min(Duration::from_millis(500));
        }
    }

    /// The fewest replicas any master has (from `CLUSTER NODES`).
    pub(super) fn min_replicas(&self) -> Result<u32> {
        let nodes = self.cluster_nodes()?;
        let masters: Vec<&NodeLine> = nodes.iter().filter(|n| n.master).collect();
        let count = |id: &str| nodes.iter().filter(|n| n.master_id == id).count() as u32;
        Ok(masters.iter().map(|m| count(&m.id)).min().unwrap_or(0))
    }

    /// `used_memory` of every master, summed.
    pub(super) fn master_memory(&self) -> Result<u64> {
        let mut total = 0;
        for node in self.cluster_nodes()?.iter().filter(|n| n.master) {
            let routing = node.routing();
            let info: String = self.run(|c| {
                let v = c.route_command(redis::cmd("INFO").arg("memory"), routing.clone())?;
                redis::FromRedisValue::from_redis_value(v).map_err(Into::into)
            })?;
            total += info
                .lines()
                .find_map(|l| l.strip_prefix("used_memory:"))
                .and_then(|v| v.trim().parse::<u64>().ok())
                .unwrap_or(0);
        }
        Ok(total)
    }

    /// A key matching `pattern` (a `SCAN` pattern) on any live master, if one has one:
    /// each master's keys are scanned until the first match.
    pub(super) fn any_key(&self, pattern: &str) -> Result<Option<String>> {
        for node in self.cluster_nodes()?.iter().filter(|n| n.master) {
            let routing = node.routing();
            let mut cursor = "0".to_owned();
            loop {
                let (next, keys): (String, Vec<String>) = self.run(|c| {
                    let scan = redis::cmd("SCAN")
                        .arg(&cursor)
                        .arg("MATCH")
                        .arg(pattern)
                        .arg("COUNT")
                        .arg(1000)
                        .clone();
                    let v = c.route_command(&scan, routing.clone())?;
                    redis::FromRedisValue::from_redis_value(v).map_err(Into::into)
                })?;
                if let Some(key) = keys.into_iter().next() {
                    return Ok(Some(key));
                }
                if next == "0" {
                    break;
                }
                cursor = next;
            }
        }
        Ok(None)
    }

    fn cluster_nodes(&self) -> Result<Vec<NodeLine>> {
        let text: String = self.run(|c| redis::cmd("CLUSTER").arg("NODES").query(c))?;
        Ok(text.lines().filter_map(NodeLine::parse).collect())
    }
}

/// One live node of `CLUSTER NODES`.
struct NodeLine {
    id: String,
    addr: String,
    master: bool,
    master_id: String,
}

impl NodeLine {
    /// A command's routing to this node.
    fn routing(&self) -> redis::cluster_routing::RoutingInfo {
        let (host, port) = self.addr.rsplit_once(':').unwrap_or((&self.addr, "0"));
        redis::cluster_routing::RoutingInfo::SingleNode(
            redis::cluster_routing::SingleNodeRoutingInfo::ByAddress {
                host: host.to_owned(),
                port: port.parse().unwrap_or(0),
            },
        )
    }

    fn parse(line: &str) -> Option<Self> {
        let f: Vec<&str> = line.split_whitespace().collect();
        if f.len() < 8 || f[2].contains("fail") || f[2].contains("noaddr") {
            return None;
        }
        Some(NodeLine {
            id: f[0].to_owned(),
            addr: f[1].split('@').next()?.to_owned(),
            master: f[2].contains("master"),
            master_id: f[3].to_owned(),
        })
    }
}

/// An error of an operation run by [`Pool::retrying`].
pub(super) enum Retry {
    /// From Redis: retried when transient.
    Redis(redis::RedisError),
    /// From the store: returned as is.
    Store(Error),
}

impl From<redis::RedisError> for Retry {
    fn from(e: redis::RedisError) -> Self {
        Retry::Redis(e)
    }
}

/// Whether an error may go away on its own (a failover, a resharding, a lost connection).
fn transient(e: &redis::RedisError) -> bool {
    e.is_cluster_error()
        || e.is_io_error()
        || e.is_timeout()
        || !matches!(e.retry_method(), RetryMethod::NoRetry)
}

/// The error for seeds whose first server to answer is a Redis server without cluster
/// mode (the cluster client retries it for 30 s, then says "ClusterConnectionNotFound");
/// `None` when it is in cluster mode, or none answers (the cluster client says why).
fn not_a_cluster(seeds: &[String]) -> Option<Error> {
    let plain = seeds.iter().find_map(|seed| {
        let client = redis::Client::open(format!("redis://{seed}")).ok()?;
        let timeout = Duration::from_millis(500);
        let mut conn = client.get_connection_with_timeout(timeout).ok()?;
        let info: String = redis::cmd("INFO").arg("cluster").query(&mut conn).ok()?;
        Some((seed, info.lines().any(|l| l.trim() == "cluster_enabled:0")))
    });
    let (seed, true) = plain? else { return None };
    Some(Error::Unsupported(format!(
        "{seed} is a Redis server without cluster mode (cluster_enabled:0): a store on Redis \
         needs a Redis Cluster (servers started with `cluster-enabled yes`, joined by \
         `redis-cli --cluster create`)"
    )))
}

/// A Redis error as a storage error.
pub(super) fn storage(e: redis::RedisError) -> Error {
    Error::storage("redis", e)
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}
