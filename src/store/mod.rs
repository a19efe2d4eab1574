//! The store: the Manku table logic (writes, queries, check-and-insert, dedup,
//! check/repair, bulk loads, relayout) written once over the storage seam
//! ([`backend::Backend`]), with RocksDB ([`StoreBuilder::open`]) and memory
//! ([`StoreBuilder::in_memory`]) beneath it. See docs/design.md for the layout.

pub mod backend;
mod backup;
mod builder;
mod bulk;
mod check;
pub mod codec;
mod crawl;
mod dedup;
mod delete;
mod export;
mod group;
#[cfg(test)]
mod hooked;
mod memory;
mod query;
#[cfg(feature = "redis")]
mod redis;
mod request;
mod retention;
mod rocks;
mod salvage;
mod verify;
mod write;

use std::path::Path;
use std::sync::{Mutex, MutexGuard};
use std::time::{SystemTime, UNIX_EPOCH};

use crate::error::{Error, Result};
use crate::index::layout::Layout;
use crate::index::quality::{MatchRule, Quality};
use crate::store::backend::{
    Atomicity, Backend, Change, ChangeSet, Consistency, Durability, MetaKey, Snapshot,
};
use crate::store::codec::Manifest;
use crate::text::fingerprint::{FingerprintSpec, Fingerprinter};
use crate::types::StoredDoc;

#[cfg(feature = "redis")]
pub use self::redis::RedisUrl;
pub use backend::BackupInfo;
pub use backup::{list_backups, restore};
pub use builder::StoreBuilder;
pub use bulk::BulkLoader;
pub use check::CheckReport;
pub use crawl::CheckOutcome;
pub use request::{Incoming, Query, Rule};
pub use retention::{CLOCK_SLACK, ExpireOptions, ExpireReport};
pub use rocks::RocksOptions;
pub use salvage::{LogDamage, RepairReport, SalvageReport};
pub use verify::MAX_REJECTED;

/// What an insert did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum InsertOutcome {
    /// The id was new.
    Inserted,
    /// The id existed; its old record and table entries were replaced.
    Replaced,
}

/// Counts of what a batch insert did.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct BatchOutcome {
    /// Entries whose id was new.
    pub inserted: u64,
    /// Entries that replaced an existing id (including earlier entries of the same batch).
    pub replaced: u64,
}

impl BatchOutcome {
    fn add(&mut self, other: BatchOutcome) {
        self.inserted += other.inserted;
        self.replaced += other.replaced;
    }
}

/// Figures about a store, for `simstore stats`.
#[derive(Debug, Clone)]
pub struct Stats {
    /// Live documents.
    pub docs: u64,
    /// The layout.
    pub layout: Layout,
    /// The fingerprint spec.
    pub spec: FingerprintSpec,
    /// The on-disk format version.
    pub format_version: u32,
    /// The sketch band tables kept beside the permutation tables (standard 2, high 4; 0 in
    /// a store of format 7 or older: [`crate::index::quality::Quality::bands`]).
    pub band_tables: u32,
    /// Total size of the store's files, in bytes (0 on Redis Cluster).
    pub disk_bytes: u64,
    /// Memory of the servers holding the store, when they hold it in memory (Redis
    /// Cluster: `used_memory` of every master, summed; shared with anything else they hold).
    pub memory_bytes: Option<u64>,
    /// Bytes on disk that deletes and replacements left behind, until compaction (or
    /// [`Store::compact`]) gives them back: RocksDB's estimate; `None` elsewhere.
    pub reclaimable_bytes: Option<u64>,
    /// Expected candidates scanned by a k_max query at the current size, for uniform fingerprints.
    pub expected_candidates: f64,
}

/// Candidates scanned by sampled queries, from [`Store::observed_candidates`].
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct CandidateStats {
    /// Queries sampled.
    pub queries: u64,
    /// Candidates scanned by all of them.
    pub total: u64,
    /// The most candidates one query scanned.
    pub max: u64,
}

impl CandidateStats {
    /// Mean candidates per query (0 with no sample).
    pub fn mean(&self) -> f64 {
        self.total as f64 / self.queries.max(1) as f64
    }
}

/// The writer's in-memory state; the lock serializes writers.
#[derive(Debug)]
struct Counters {
    next_seq: u64,
    live: u64,
    /// On a shared backend ([`Backend::shared`]): the end of the range of sequence numbers
    /// this process has reserved (`next_seq..reserved_end` are its to use).
    reserved_end: u64,
    /// Documents replaced (with another fingerprint) or deleted since the tables were last
    /// flushed: their tombstones slow down queries of their prefixes until flushed and
    /// compacted.
    churn: u64,
    /// Set when `churn` passed [`write::CHURN_FLUSH`]: the tables are to be flushed once the
    /// writer lock is released ([`Store::unlock`]).
    flush_due: bool,
    /// Set when a bulk load through this handle failed after part of it reached the
    /// store (the cause): writes are refused until a repair.
    failed: Option<String>,
    /// The latest stored time this process wrote or found: a new document's time is never
    /// below it ([`Store::next_time`]), so stored times follow sequence numbers.
    last_time: u64,
    /// From this sequence number on, stored times never decrease ([`codec::TIMED_FORMAT`]);
    /// `u64::MAX` when the store cannot say (older formats, many writing processes).
    ordered_from: u64,
}

/// The scheme of a Redis Cluster store's URL (`redis://HOST:PORT,...`).
pub(crate) const REDIS_SCHEME: &str = "redis://";

/// Sequence numbers a process reserves at a time from a shared backend.
const SEQ_RANGE: u64 = 1024;

/// A persistent store of SimHash fingerprints. `Send + Sync`: share it (e.g. in an `Arc`)
/// and query from many threads; writes are serialized internally.
///
/// ```
/// # fn main() -> simstore::Result<()> {
/// use simstore::{Document, Rule, Store};
/// # let dir = tempfile::tempdir()?;
/// let store = Store::builder(dir.path().join("pages.db")).open()?;
/// store.insert(&Document::new("a", "a page about the spring rain in the old town"))?;
/// let copy = Document::new("b", "a page about the spring rain in the old town!");
/// assert_eq!(store.query(&copy, Rule::Mode)?[0].doc.id, "a");
/// assert_eq!(store.len(), 1);
/// # Ok(())
/// # }
/// ```
pub struct Store {
    backend: Box<dyn Backend>,
    manifest: Manifest,
    /// The format version of the store's manifest: whether its `ids` values hold the
    /// fingerprint ([`codec::SHORT_IDS_FORMAT`]).
    format: u32,
    fingerprinter: Fingerprinter,
    counters: Mutex<Counters>,
    /// Single-document writes waiting to be written together (group commit).
    group: group::GroupQueue,
    /// The options it was opened with: path, write sync, read-only (and to reopen it after
    /// a relayout).
    options: StoreBuilder,
    /// The retention policy, as last read or set.
    retention: Mutex<crate::types::Retention>,
}

impl std::fmt::Debug for Store {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Store")
            .field("path", &self.options.path())
            .field("layout", &self.manifest.layout)
            .finish()
    }
}

impl Store {
    /// Options for the store at `path`; see [`StoreBuilder`].
    pub fn builder(path: impl AsRef<Path>) -> StoreBuilder {
        StoreBuilder::new(path)
    }

    /// Opens the store at `path`, creating it with default options if it does not exist.
    pub fn open(path: impl AsRef<Path>) -> Result<Self> {
        StoreBuilder::new(path).open()
    }

    /// The store's directory (empty for an in-memory store; the URL for a store on Redis
    /// Cluster).
    pub fn path(&self) -> &Path {
        self.options.path()
    }

    /// The permutation-table layout.
    pub fn layout(&self) -> &Layout {
        &self.manifest.layout
    }

    /// The store's quality mode (recorded when it was created).
    pub fn quality(&self) -> Quality {
        self.manifest.quality
    }

    /// The exact [`MatchRule`] this store applies for `rule`: [`Rule::Mode`] and
    /// [`Rule::Quality`] at the store's `k_max` and band tables ([`Quality::rule_for`]),
    /// [`Rule::Verified`] at its `k_max` unless given a k. What a query, a check or a dedup
    /// given `rule` counts as a near duplicate; [`MatchRule::fields`] lists it.
    pub fn rule(&self, rule: impl Into<Rule>) -> MatchRule {
        let m = &self.manifest;
        let k_max = m.layout.k_max();
        match rule.into() {
            Rule::Mode => m.quality.rule_for(k_max, m.bands),
            Rule::Quality(quality) => quality.rule_for(k_max, m.bands),
            Rule::Within(k) | Rule::Exhaustive(k) => MatchRule::within(k),
            Rule::Verified { k, min_similarity } => {
                MatchRule::verified(k.unwrap_or(k_max), min_similarity)
            }
            Rule::Custom(rule) => rule,
        }
    }

    /// [`Store::rule`] for `api`, which reads the tables: an exhaustive rule is refused.
    pub(crate) fn rule_to_apply(&self, rule: Rule, api: &str) -> Result<MatchRule> {
        if let Rule::Exhaustive(k) = rule {
            return Err(Error::Unsupported(format!(
                "{api} reads the tables and takes no exhaustive rule: use Rule::Within({k}) \
                 (k at most the store's k_max, {})",
                self.manifest.layout.k_max()
            )));
        }
        Ok(self.rule(rule))
    }

    /// The storage backend, for tools and tests that read or write its spaces directly.
    /// Writing through it bypasses every invariant the store keeps (that is how the tests
    /// damage a store to prove [`Store::check`] and [`Store::repair`]); reading is safe.
    /// Only with the `internals` feature: not a stable API.
    #[cfg(any(test, feature = "internals"))]
    #[doc(hidden)]
    pub fn backend(&self) -> &dyn Backend {
        self.backend.as_ref()
    }

    /// The fingerprinter of the store's spec.
    pub fn fingerprinter(&self) -> &Fingerprinter {
        &self.fingerprinter
    }

    /// Number of stored documents. On a store shared by many writer processes (Redis
    /// Cluster) the count kept in the cluster (this process's last known count if it cannot
    /// be read).
    pub fn len(&self) -> u64 {
        if let Some(shared) = self.backend.shared()
            && let Ok((_, live)) = shared.counters()
        {
            return live;
        }
        self.lock().live
    }

    /// True when no document is stored.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    fn lock(&self) -> MutexGuard<'_, Counters> {
        // Counters change only after a successful write, so a poisoned lock holds valid state.
        self.counters.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn check_writable(&self) -> Result<()> {
        if self.options.is_reader() {
            return Err(Error::ReadOnly);
        }
        Ok(())
    }

    /// The durability of ordinary writes ([`StoreBuilder::sync_writes`]).
    fn durability(&self) -> Durability {
        if self.options.syncs_writes() {
            Durability::Synced
        } else {
            Durability::Process
        }
    }

    /// Adds the new counters to `changes`, writes them (fsynced if `durability` says so) and
    /// only then updates the in-memory counters, so a failed write leaves them as they were.
    fn commit(
        &self,
        counters: &mut Counters,
        mut changes: ChangeSet,
        (next_seq, live): (u64, u64),
        durability: Durability,
    ) -> Result<()> {
        changes.push(Change::PutMeta(
            MetaKey::Counters,
            codec::encode_counters(next_seq, live).to_vec(),
        ));
        self.backend.write(&changes, durability)?;
        counters.next_seq = next_seq;
        counters.live = live;
        Ok(())
    }

    /// [`Store::commit`] for ordinary writes. On a shared backend the counters are the
    /// backend's: the change set goes without them and the live count moves by the
    /// difference (sequence numbers were reserved by [`Store::reserve_seqs`]).
    fn commit_write(
        &self,
        counters: &mut Counters,
        changes: ChangeSet,
        (next_seq, live): (u64, u64),
        durability: Durability,
    ) -> Result<()> {
        let Some(shared) = self.backend.shared() else {
            return self.commit(counters, changes, (next_seq, live), durability);
        };
        // The sequence numbers are used up even if the write fails: part of it may have
        // landed, and a number must never name two documents.
        counters.next_seq = next_seq;
        self.backend.write(&changes, durability)?;
        let delta = live as i64 - counters.live as i64;
        counters.live = live;
        if delta != 0 {
            shared.add_live(delta)?;
        }
        Ok(())
    }

    /// Makes sure `n` sequence numbers from `counters.next_seq` on are this process's: on a
    /// shared backend, reserves a new range from it when the current one is too short
    /// (at least [`SEQ_RANGE`] at a time). A no-op on a backend with one writer process.
    fn reserve_seqs(&self, counters: &mut Counters, n: u64) -> Result<()> {
        let Some(shared) = self.backend.shared() else {
            return Ok(());
        };
        if counters.next_seq + n > counters.reserved_end {
            let len = n.max(SEQ_RANGE);
            counters.next_seq = shared.reserve_seqs(len)?;
            counters.reserved_end = counters.next_seq + len;
        }
        Ok(())
    }

    /// Sets (`Some`) or removes (`None`) a meta value with an fsynced write.
    fn write_meta(&self, key: MetaKey, value: Option<Vec<u8>>) -> Result<()> {
        let mut changes = ChangeSet::new();
        changes.push(match value {
            Some(v) => Change::PutMeta(key, v),
            None => Change::DeleteMeta(key),
        });
        self.backend.write(&changes, Durability::Synced)
    }

    /// Flushes buffered writes to the backend's files. Not needed for durability (the
    /// write-ahead log already has every acknowledged write); useful before measuring disk
    /// size.
    pub fn flush(&self) -> Result<()> {
        if self.options.is_reader() {
            return Ok(());
        }
        self.backend.maintain(backend::Maintenance::FlushAll)
    }

    /// Figures about the store.
    pub fn stats(&self) -> Result<Stats> {
        let docs = self.len();
        let usage = self.backend.usage();
        Ok(Stats {
            docs,
            layout: self.manifest.layout.clone(),
            spec: self.manifest.spec.clone(),
            format_version: self.format,
            band_tables: self.manifest.bands,
            disk_bytes: usage.disk_bytes,
            memory_bytes: usage.memory_bytes,
            reclaimable_bytes: usage.reclaimable_bytes,
            expected_candidates: self.manifest.layout.expected_candidates(docs as f64),
        })
    }
}

fn validate_id(id: &str) -> Result<()> {
    crate::types::check_id(id).map_err(Error::InvalidId)
}

/// Checks what is stored of an entry: its id ([`validate_id`]), then its title and url
/// ([`crate::types::DocMeta::check`]: [`Error::FieldTooLong`]).
fn validate_entry(id: &str, meta: &crate::types::DocMeta) -> Result<()> {
    validate_id(id)?;
    meta.check(id)
}

/// A read view of the store's backend, and whether every read of it sees the same state
/// (a [`Consistency::Latest`] view may not: then a table entry whose record is missing by
/// the time it is fetched is a document deleted or replaced since, not corruption).
pub(crate) struct View<'a> {
    snap: Box<dyn Snapshot + 'a>,
    consistent: bool,
    /// Whether the backend is atomic per key only: a document's record and table entries
    /// may be there without its id pointing at it (see [`View::committed`]).
    per_key: bool,
}

impl View<'_> {
    /// The records of `seqs` that are committed: all on a backend that writes change sets
    /// atomically; on one atomic per key, those whose id's entry names their sequence
    /// number. The `ids` entry is written last, so a record without it is one a writer
    /// killed midway (or one of two processes storing one id at once, the other's write
    /// standing) left behind: readers leave it out, `Store::check` reports it and
    /// `Store::repair` removes it. One more lookup of the ids for all.
    pub(crate) fn committed(&self, seqs: &[u64]) -> Result<Vec<Option<StoredDoc>>> {
        self.committed_of(seqs, self.snap.docs(seqs)?)
    }

    /// Of `docs`, the records of `seqs` read already, those [`View::committed`] keeps.
    pub(crate) fn committed_of(
        &self,
        seqs: &[u64],
        mut docs: Vec<Option<StoredDoc>>,
    ) -> Result<Vec<Option<StoredDoc>>> {
        if !self.per_key {
            return Ok(docs);
        }
        let found: Vec<usize> = (0..docs.len()).filter(|&i| docs[i].is_some()).collect();
        let ids: Vec<&str> = (found.iter())
            .filter_map(|&i| docs[i].as_ref().map(|d| d.id.as_str()))
            .collect();
        let named: Vec<Option<u64>> = (self.snap.ids(&ids)?.into_iter())
            .map(|v| v.map(|v| v.seq))
            .collect();
        for (&i, seq) in found.iter().zip(named) {
            if seq != Some(seqs[i]) {
                docs[i] = None;
            }
        }
        Ok(docs)
    }
}

impl<'a> std::ops::Deref for View<'a> {
    type Target = dyn Snapshot + 'a;
    fn deref(&self) -> &Self::Target {
        self.snap.as_ref()
    }
}

impl<'a> AsRef<dyn Snapshot + 'a> for View<'a> {
    fn as_ref(&self) -> &(dyn Snapshot + 'a) {
        self.snap.as_ref()
    }
}

impl Store {
    /// A view of the consistency asked for ([`Backend::snapshot`]).
    pub(crate) fn view(&self, consistency: Consistency) -> View<'_> {
        let properties = self.backend.properties();
        View {
            snap: self.backend.snapshot(consistency),
            consistent: consistency == Consistency::PointInTime || properties.latest_is_consistent,
            per_key: properties.atomicity == Atomicity::PerKey,
        }
    }

    /// The stored time of a write now: the clock, but never below a time this process
    /// wrote before (a clock stepped back would break the order expiry reads by).
    fn next_time(&self, counters: &mut Counters) -> u64 {
        counters.last_time = counters.last_time.max(now());
        counters.last_time
    }
}

fn now() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0)
}
