//! The Redis Cluster backend: a store whose spaces are hashes and sorted sets spread over
//! the cluster's slots (key layout: [`crate::store::codec::redis`]), written by any number
//! of processes at once.
//!
//! Atomic per key only ([`Atomicity::PerKey`]): a change set is applied in phases that keep
//! the order the logic lists (record removals; table, `exact` and `ids` entries; records;
//! then ids and meta), each phase one pipelined round trip per node. Sequence numbers and
//! the live count are the cluster's ([`Shared`]); an exact duplicate is claimed with one
//! script on the content hash's bucket. With `replicas_ack > 0`, a write returns only once
//! that many replicas of every master acknowledged it (`WAIT`).

mod bulk;
mod conn;
mod snapshot;
mod url;

use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};

use redis::cluster::cluster_pipe;
use redis::{Script, Value};

use redis::cluster::ClusterConnection;

use self::conn::{Pool, Retry};
pub use self::url::RedisUrl;
use super::backend::{
    Atomicity, Backend, BackupInfo, Change, ChangeSet, Consistency, Durability, Maintenance,
    MetaKey, Properties, Usage, no_backups,
};
use super::backend::{Shared, Snapshot, Space};
use super::codec::redis::table_member;
use super::codec::redis::{Keys, bucket_bits_for, field};
use super::codec::{self, exact_key};
use crate::error::{Error, Result};

/// Commands per pipeline of a bulk operation (clearing a space, rebuilding).
const PIPELINE_CHUNK: usize = 4096;

/// How long a write waits for replicas before [`Error::ReplicasBehind`].
const WAIT_TIMEOUT_MS: u64 = 2000;

/// Claims a content hash (see [`Shared::claim_exact`]): `KEYS[1]` the `exact` bucket; ARGV:
/// the range of the hash's members, the new member, the stale member (or empty). A claim
/// already held by the new member is its own: the script run again after its reply was
/// lost (a failover) claims nothing more and names no one else.
const CLAIM: &str = r"
local first = redis.call('ZRANGEBYLEX', KEYS[1], ARGV[1], ARGV[2], 'LIMIT', 0, 1)[1]
if first == ARGV[3] then return false end
if first and first ~= ARGV[4] then return first end
if first then redis.call('ZREM', KEYS[1], first) end
redis.call('ZADD', KEYS[1], 0, ARGV[3])
return false
";

/// A store on Redis Cluster.
pub struct RedisBackend {
    pool: Pool,
    keys: Keys,
    url: RedisUrl,
    tables: AtomicUsize,
    replicas_ack: u32,
    writes: AtomicU64,
    claim: Script,
}

/// What opening found.
pub(crate) enum Opened {
    /// The store exists.
    Existing(RedisBackend),
    /// Nothing is stored under the name yet.
    Missing(RedisBackend),
}

impl RedisBackend {
    /// Connects to the cluster of `url` and looks for its store. `replicas_ack`: replicas
    /// every write waits for (`None`: 1 when every master has a replica, else 0).
    pub(crate) fn connect(url: &RedisUrl, replicas_ack: Option<u32>) -> Result<Opened> {
        let pool = Pool::connect(&url.seeds)?;
        let keys = Keys::new(&url.name, 0);
        let replicas_ack = match replicas_ack {
            Some(n) => n,
            None => pool.min_replicas()?.min(1),
        };
        let bits: Option<u32> = pool.run(|c| {
            redis::cmd("HGET")
                .arg(keys.meta())
                .arg(field::BUCKET_BITS)
                .query(c)
        })?;
        let mut backend = RedisBackend {
            pool,
            keys,
            url: url.clone(),
            tables: AtomicUsize::new(0),
            replicas_ack,
            writes: AtomicU64::new(0),
            claim: Script::new(CLAIM),
        };
        Ok(match bits {
            Some(bits) => {
                backend.keys = Keys::new(&url.name, bits);
                Opened::Existing(backend)
            }
            None => Opened::Missing(backend),
        })
    }

    /// Of a store whose settings are missing: why it is no store, if keys of it remain.
    /// They are what a master that lost its data (restarted empty, or failed over to a
    /// replica behind it) leaves, and a store created over them would number its
    /// documents from 0 again, over the surviving ones. One `SCAN` of the masters' keys,
    /// the price of opening a store that does not exist.
    pub(crate) fn remnants(&self) -> Result<Option<String>> {
        let Some(key) = self.pool.any_key(&format!("{}:*", self.url.name))? else {
            return Ok(None);
        };
        Ok(Some(format!(
            "its settings (key {}) are missing but keys of it remain, such as {key}: a \
             master of the cluster lost its data, or another program uses the name; restore \
             the master's data or the store from a backup, or delete the name's keys",
            self.keys.meta()
        )))
    }

    /// Creates the store (its manifest, counters and bucket bits) unless another process
    /// created it first; either way the store then exists.
    pub(crate) fn create(mut self, manifest: &[u8], expected_docs: u64) -> Result<Self> {
        let bits = bucket_bits_for(expected_docs);
        let meta = self.keys.meta();
        // One script, so a concurrent creator never sees half a manifest.
        let created: bool = Script::new(
            r"if redis.call('HEXISTS', KEYS[1], ARGV[1]) == 1 then return 0 end
              redis.call('HSET', KEYS[1], ARGV[1], ARGV[2], ARGV[3], ARGV[4], ARGV[5], 0, ARGV[6], 0)
              return 1",
        )
        .key(&meta)
        .arg(field::BUCKET_BITS)
        .arg(bits)
        .arg(field::MANIFEST)
        .arg(manifest)
        .arg(field::NEXT_SEQ)
        .arg(field::LIVE)
        .invoke(&mut *self.pool.get()?)
        .map_err(conn::storage)?;
        let bits = if created {
            bits
        } else {
            self.pool.run(|c| {
                redis::cmd("HGET")
                    .arg(&meta)
                    .arg(field::BUCKET_BITS)
                    .query(c)
            })?
        };
        self.keys = Keys::new(&self.url.name, bits);
        Ok(self)
    }

    fn table_count(&self) -> usize {
        self.tables.load(Ordering::Relaxed)
    }

    /// Applies `changes` in the phases described in the module docs, on `conn`.
    fn apply(&self, conn: &mut ClusterConnection, changes: &ChangeSet) -> Result<(), Retry> {
        let last = last_changes(changes.changes());
        for phase in 0..4 {
            let mut pipe = cluster_pipe();
            let mut n = 0;
            let changes = changes.changes().iter().zip(&last);
            for (change, _) in changes.filter(|&(c, &last)| last && phase_of(c) == phase) {
                self.push_change(&mut pipe, change).map_err(Retry::Store)?;
                n += 1;
                if n == PIPELINE_CHUNK {
                    pipe.exec(conn)?;
                    pipe.clear();
                    n = 0;
                }
            }
            if n > 0 {
                pipe.exec(conn)?;
            }
        }
        Ok(())
    }

    fn push_change(
        &self,
        pipe: &mut redis::cluster::ClusterPipeline,
        change: &Change,
    ) -> Result<()> {
        let k = &self.keys;
        match change {
            Change::PutMeta(MetaKey::Counters, v) => {
                // Absolute counters (repair): the live count is set; the next sequence
                // number never moves back (other processes may hold ranges above it).
                let (next, live) = codec::decode_counters(v)?;
                pipe.cmd("HSET").arg(k.meta()).arg(field::LIVE).arg(live);
                pipe.cmd("EVAL")
                    .arg("local c = tonumber(redis.call('HGET', KEYS[1], ARGV[1]) or '0') \
                          if c < tonumber(ARGV[2]) then redis.call('HSET', KEYS[1], ARGV[1], ARGV[2]) end")
                    .arg(1)
                    .arg(k.meta())
                    .arg(field::NEXT_SEQ)
                    .arg(next);
            }
            Change::PutMeta(key, v) => {
                pipe.cmd("HSET")
                    .arg(k.meta())
                    .arg(meta_field(*key))
                    .arg(&v[..]);
            }
            Change::DeleteMeta(key) => {
                pipe.cmd("HDEL").arg(k.meta()).arg(meta_field(*key));
            }
            Change::PutDoc(seq, doc) => {
                let v = codec::encode_doc(doc);
                pipe.cmd("HSET")
                    .arg(k.doc(*seq))
                    .arg(&codec::doc_key(*seq)[..])
                    .arg(v);
            }
            Change::DeleteDoc(seq) => {
                pipe.cmd("HDEL")
                    .arg(k.doc(*seq))
                    .arg(&codec::doc_key(*seq)[..]);
            }
            Change::PutId(id, v) => {
                let v = codec::encode_id_value(*v);
                pipe.cmd("HSET").arg(k.id(id)).arg(id.as_bytes()).arg(v);
            }
            Change::DeleteId(id) => {
                pipe.cmd("HDEL").arg(k.id(id)).arg(id.as_bytes());
            }
            Change::PutExact(h, seq) => {
                pipe.cmd("ZADD")
                    .arg(k.exact(*h))
                    .arg(0)
                    .arg(&exact_key(*h, *seq)[..]);
            }
            Change::DeleteExact(h, seq) => {
                pipe.cmd("ZREM")
                    .arg(k.exact(*h))
                    .arg(&exact_key(*h, *seq)[..]);
            }
            Change::PutTable(t, p, seq) => {
                let key = k.table_bucket(*t, k.table_bucket_of(*p));
                pipe.cmd("ZADD")
                    .arg(key)
                    .arg(0)
                    .arg(&table_member(*p, *seq)?[..]);
            }
            Change::DeleteTable(t, p, seq) => {
                let key = k.table_bucket(*t, k.table_bucket_of(*p));
                pipe.cmd("ZREM").arg(key).arg(&table_member(*p, *seq)?[..]);
            }
        }
        Ok(())
    }

    /// Removes every key of a bucketed space (`ids`, `exact` or a table).
    fn clear(&self, space: Space) -> Result<()> {
        let tables = match space {
            Space::Table(t) => t..t + 1,
            _ => 0..1,
        };
        for t in tables {
            let keys = (0..self.keys.buckets()).map(|b| match space {
                Space::Ids => self.keys.id_bucket(b),
                Space::Exact => self.keys.exact_bucket(b),
                _ => self.keys.table_bucket(t, b),
            });
            self.unlink_all(keys)?;
        }
        Ok(())
    }

    fn unlink_all(&self, keys: impl Iterator<Item = String>) -> Result<()> {
        let keys: Vec<String> = keys.collect();
        for chunk in keys.chunks(PIPELINE_CHUNK) {
            let mut pipe = cluster_pipe();
            for key in chunk {
                pipe.cmd("UNLINK").arg(key);
            }
            self.pool.run(|c| pipe.exec(c))?;
        }
        Ok(())
    }

    /// Waits until `replicas_ack` replicas of every master have the writes made so far
    /// on `conn` (`WAIT`, sent to every master; the fewest acknowledgements count).
    fn wait_for_replicas(&self, conn: &mut ClusterConnection) -> Result<(), Retry> {
        if self.replicas_ack == 0 {
            return Ok(());
        }
        let acked: u32 = redis::cmd("WAIT")
            .arg(self.replicas_ack)
            .arg(WAIT_TIMEOUT_MS)
            .query(conn)?;
        if acked < self.replicas_ack {
            return Err(Retry::Store(Error::ReplicasBehind {
                acked,
                wanted: self.replicas_ack,
                timeout_ms: WAIT_TIMEOUT_MS,
            }));
        }
        Ok(())
    }
}

/// A document record or an id, as a change names it.
#[derive(PartialEq, Eq, Hash)]
enum Slot<'a> {
    Doc(u64),
    Id(&'a str),
}

impl Slot<'_> {
    fn of(c: &Change) -> Option<Slot<'_>> {
        match c {
            Change::PutDoc(seq, _) | Change::DeleteDoc(seq) => Some(Slot::Doc(*seq)),
            Change::PutId(id, _) | Change::DeleteId(id) => Some(Slot::Id(id)),
            _ => None,
        }
    }
}

/// Of each change of `changes`, whether it is the last of the set to its document record
/// or id ([`Slot`]), or to neither. The phases move a record's removal before its writing
/// and an id's removal before its setting, so a record one set writes and removes (an id
/// stored twice in one batch, the first replaced by the second) would be left behind; only
/// the last change to each is applied, which is where a store applying the set in order
/// ends.
fn last_changes(changes: &[Change]) -> Vec<bool> {
    let removes = |c: &Change| matches!(c, Change::DeleteDoc(_) | Change::DeleteId(_));
    if !changes.iter().any(removes) {
        return vec![true; changes.len()];
    }
    let mut at = std::collections::HashMap::new();
    for (i, c) in changes.iter().enumerate() {
        if let Some(s) = Slot::of(c) {
            at.insert(s, i);
        }
    }
    (changes.iter().enumerate())
        .map(|(i, c)| Slot::of(c).is_none_or(|s| at[&s] == i))
        .collect()
}

/// The phase of a change (see the module docs).
fn phase_of(c: &Change) -> u8 {
    match c {
        Change::DeleteDoc(_) => 0,
        Change::PutDoc(..) => 2,
        Change::PutId(..) | Change::PutMeta(..) | Change::DeleteMeta(_) => 3,
        _ => 1,
    }
}

/// The meta hash field of a meta key. The counters are not one field but two integers
/// (`next_seq`, `live`), read and written apart; `counters` names nothing stored.
fn meta_field(key: MetaKey) -> &'static str {
    match key {
        MetaKey::Manifest => field::MANIFEST,
        MetaKey::Counters => "counters",
        MetaKey::BulkPending => field::BULK_PENDING,
        MetaKey::RepairPending => field::REPAIR_PENDING,
        MetaKey::RelayoutPending => field::RELAYOUT_PENDING,
        MetaKey::Retention => field::RETENTION,
        MetaKey::Timeline => field::TIMELINE,
    }
}

impl Backend for RedisBackend {
    /// A write that failed after its retries (the cluster unreachable for longer, a
    /// master without replica down) leaves nothing broken here: the next may succeed.
    fn properties(&self) -> Properties {
        Properties {
            failed_write_lasts: false,
            replicas_ack: Some(self.replicas_ack),
            // Hash buckets.
            scans_in_order: false,
            ..Properties::local(Atomicity::PerKey)
        }
    }

    fn usage(&self) -> Usage {
        Usage {
            memory_bytes: self.pool.master_memory().ok(),
            ..Usage::default()
        }
    }

    fn write(&self, changes: &ChangeSet, _durability: Durability) -> Result<()> {
        // Every change is idempotent: after a failover the whole set is applied again on a
        // new connection, whose WAIT then covers all of it.
        let written = self.pool.retrying(|conn| {
            self.apply(conn, changes)?;
            self.wait_for_replicas(conn)
        });
        // The version moves once the changes are visible (or the write gave up, part of
        // it maybe visible), never before: a check that read it before this write and
        // probed while the changes landed sees it moved, and checks again.
        self.writes.fetch_add(1, Ordering::SeqCst);
        written
    }

    fn snapshot(&self, _: Consistency) -> Box<dyn Snapshot + '_> {
        Box::new(snapshot::RedisSnapshot::new(self))
    }

    fn version(&self) -> u64 {
        self.writes.load(Ordering::SeqCst)
    }

    fn attach_tables(&mut self, prefix_bits: &[u32]) -> Result<()> {
        self.tables.store(prefix_bits.len(), Ordering::Relaxed);
        Ok(())
    }

    fn reset_derived(&mut self, prefix_bits: &[u32], unreadable: &[(u64, u64)]) -> Result<()> {
        // Redis reports no damaged records (it checks its own files), so a repair finds none.
        if !unreadable.is_empty() {
            return Err(Error::Unsupported(
                "unreadable document records on a Redis store".into(),
            ));
        }
        let tables = prefix_bits.len();
        let old = self.table_count().max(tables);
        let spaces = [Space::Ids, Space::Exact].into_iter();
        for space in spaces.chain((0..old).map(Space::Table)) {
            self.clear(space)?;
        }
        self.tables.store(tables, Ordering::Relaxed);
        Ok(())
    }

    /// Redis keeps its memory itself; a delete frees its entries at once.
    fn maintain(&self, _work: Maintenance) -> Result<()> {
        Ok(())
    }

    fn backup(&self, _dest: &std::path::Path, _keep: Option<usize>) -> Result<BackupInfo> {
        Err(no_backups())
    }

    /// Every process reads the cluster's latest state: there is no writer to follow.
    fn catch_up(&self) -> Result<bool> {
        Ok(false)
    }

    fn shared(&self) -> Option<&dyn Shared> {
        Some(self)
    }

    fn bulk_ingest(&self) -> Option<&dyn super::backend::BulkIngest> {
        Some(self)
    }
}

impl Shared for RedisBackend {
    fn reserve_seqs(&self, n: u64) -> Result<u64> {
        // Replicated before use (WAIT), so that a failover cannot hand the range out again.
        // A retry after a lost reply reserves another range: a gap, which is harmless.
        let end: u64 = self.pool.retrying(|c| {
            let end = redis::cmd("HINCRBY")
                .arg(self.keys.meta())
                .arg(field::NEXT_SEQ)
                .arg(n)
                .query(c)?;
            self.wait_for_replicas(c)?;
            Ok(end)
        })?;
        Ok(end - n)
    }

    fn add_live(&self, delta: i64) -> Result<()> {
        self.pool.run(|c| {
            redis::cmd("HINCRBY")
                .arg(self.keys.meta())
                .arg(field::LIVE)
                .arg(delta)
                .exec(c)
        })
    }

    fn counters(&self) -> Result<(u64, u64)> {
        let (next, live): (Option<u64>, Option<i64>) = self.pool.run(|c| {
            redis::cmd("HMGET")
                .arg(self.keys.meta())
                .arg(field::NEXT_SEQ)
                .arg(field::LIVE)
                .query(c)
        })?;
        Ok((next.unwrap_or(0), live.unwrap_or(0).max(0) as u64))
    }

    fn claim_exact(&self, hash: u128, seq: u64, stale: Option<u64>) -> Result<Option<u64>> {
        let (lo, hi) = snapshot::exact_range(hash);
        let stale = stale
            .map(|s| exact_key(hash, s).to_vec())
            .unwrap_or_default();
        let first: Value = self.pool.run(|c| {
            self.claim
                .key(self.keys.exact(hash))
                .arg(&lo[..])
                .arg(&hi[..])
                .arg(&exact_key(hash, seq)[..])
                .arg(&stale[..])
                .invoke(c)
        })?;
        match first {
            Value::BulkString(bytes) => Ok(Some(codec::decode_exact_key(&bytes)?.1)),
            _ => Ok(None),
        }
    }
}
