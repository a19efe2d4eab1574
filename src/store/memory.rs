//! The in-memory backend: ordered maps behind a copy-on-write snapshot. Nothing persists.
//! The tests run the store's logic on it beside RocksDB, and it serves as the reference
//! model of the [`Backend`] contract: every change set is applied atomically, and a
//! snapshot is an immutable copy (taken in O(1); the next write copies the maps only while
//! a snapshot still holds them), so readers never block the writer.

use std::collections::{BTreeMap, BTreeSet};
use std::ops::Bound;
use std::sync::{Arc, RwLock};

use crate::error::{Error, Result};
use crate::store::backend::{
    Atomicity, Backend, BackupInfo, BulkIngest, Change, ChangeSet, Consistency, DocItem,
    Durability, IdItem, Maintenance, MetaKey, Properties, Shared, Snapshot, Span, Usage,
    no_backups,
};
use crate::store::codec::IdValue;
use crate::types::StoredDoc;

/// Every space of a store, in memory.
#[derive(Debug, Clone, Default)]
struct Spaces {
    meta: BTreeMap<MetaKey, Vec<u8>>,
    docs: BTreeMap<u64, StoredDoc>,
    ids: BTreeMap<String, IdValue>,
    exact: BTreeSet<(u128, u64)>,
    tables: Vec<BTreeSet<(u64, u64)>>,
    /// Bumped by every write.
    version: u64,
}

impl Spaces {
    /// Whether `change` can be applied (its table exists; no clearing of meta or docs).
    fn check(&self, change: &Change) -> Result<()> {
        match change {
            Change::PutTable(t, ..) | Change::DeleteTable(t, ..) if *t >= self.tables.len() => Err(
                Error::Corrupt(format!("table {t} is not in this store's layout")),
            ),
            _ => Ok(()),
        }
    }

    /// Applies a change that [`Spaces::check`] accepted.
    fn apply(&mut self, change: &Change) {
        match change {
            Change::PutMeta(k, v) => {
                self.meta.insert(*k, v.clone());
            }
            Change::DeleteMeta(k) => {
                self.meta.remove(k);
            }
            Change::PutDoc(seq, doc) => {
                self.docs.insert(*seq, (**doc).clone());
            }
            Change::DeleteDoc(seq) => {
                self.docs.remove(seq);
            }
            Change::PutId(id, v) => {
                self.ids.insert(id.clone(), *v);
            }
            Change::DeleteId(id) => {
                self.ids.remove(id);
            }
            Change::PutExact(h, seq) => {
                self.exact.insert((*h, *seq));
            }
            Change::DeleteExact(h, seq) => {
                self.exact.remove(&(*h, *seq));
            }
            Change::PutTable(t, p, seq) => {
                self.tables[*t].insert((*p, *seq));
            }
            Change::DeleteTable(t, p, seq) => {
                self.tables[*t].remove(&(*p, *seq));
            }
        }
    }
}

/// A store's spaces held in memory (see the module docs).
#[derive(Debug)]
pub(crate) struct MemoryBackend {
    state: RwLock<Arc<Spaces>>,
}

impl MemoryBackend {
    /// An empty backend with `tables` tables.
    pub(crate) fn new(tables: usize) -> Self {
        let spaces = Spaces {
            tables: vec![BTreeSet::new(); tables],
            ..Spaces::default()
        };
        Self {
            state: RwLock::new(Arc::new(spaces)),
        }
    }

    fn current(&self) -> Arc<Spaces> {
        Arc::clone(&self.state.read().unwrap_or_else(|e| e.into_inner()))
    }
}

impl Backend for MemoryBackend {
    fn properties(&self) -> Properties {
        Properties::local(Atomicity::ChangeSet)
    }

    fn usage(&self) -> Usage {
        Usage::default()
    }

    /// A store in memory belongs to one process: there is no writer to follow.
    fn catch_up(&self) -> Result<bool> {
        Ok(false)
    }

    fn write(&self, changes: &ChangeSet, _durability: Durability) -> Result<()> {
        let mut guard = self.state.write().unwrap_or_else(|e| e.into_inner());
        // All or nothing: every change is checked before the first is applied, and applying
        // a checked change cannot fail.
        for change in changes.changes() {
            guard.check(change)?;
        }
        // Copies the maps only if a snapshot still holds them.
        let spaces = Arc::make_mut(&mut guard);
        for change in changes.changes() {
            spaces.apply(change);
        }
        spaces.version += 1;
        Ok(())
    }

    fn snapshot(&self, _: Consistency) -> Box<dyn Snapshot + '_> {
        Box::new(MemorySnapshot(self.current()))
    }

    fn version(&self) -> u64 {
        self.current().version
    }

    fn attach_tables(&mut self, prefix_bits: &[u32]) -> Result<()> {
        let tables = prefix_bits.len();
        let have = self.current().tables.len();
        if have < tables {
            return Err(Error::Corrupt(format!(
                "table {have} of the manifest's layout is missing"
            )));
        }
        Ok(())
    }

    fn reset_derived(&mut self, prefix_bits: &[u32], unreadable: &[(u64, u64)]) -> Result<()> {
        let mut guard = self.state.write().unwrap_or_else(|e| e.into_inner());
        let spaces = Arc::make_mut(&mut guard);
        let damaged = |s: &u64| unreadable.iter().any(|(from, to)| (from..=to).contains(&s));
        spaces.docs.retain(|s, _| !damaged(s));
        spaces.tables = vec![BTreeSet::new(); prefix_bits.len()];
        spaces.ids.clear();
        spaces.exact.clear();
        spaces.version += 1;
        Ok(())
    }

    /// Nothing to flush, and a delete frees its memory at once.
    fn maintain(&self, _work: Maintenance) -> Result<()> {
        Ok(())
    }

    fn backup(&self, _dest: &std::path::Path, _keep: Option<usize>) -> Result<BackupInfo> {
        Err(no_backups())
    }

    fn bulk_ingest(&self) -> Option<&dyn BulkIngest> {
        None
    }

    fn shared(&self) -> Option<&dyn Shared> {
        None
    }
}

/// An immutable copy of the spaces.
struct MemorySnapshot(Arc<Spaces>);

impl Snapshot for MemorySnapshot {
    fn meta(&self, key: MetaKey) -> Result<Option<Vec<u8>>> {
        Ok(self.0.meta.get(&key).cloned())
    }

    fn ids(&self, ids: &[&str]) -> Result<Vec<Option<IdValue>>> {
        Ok(ids.iter().map(|id| self.0.ids.get(*id).copied()).collect())
    }

    fn docs(&self, seqs: &[u64]) -> Result<Vec<Option<StoredDoc>>> {
        Ok(seqs
            .iter()
            .map(|seq| self.0.docs.get(seq).cloned())
            .collect())
    }

    fn scan_spans(
        &self,
        spans: &[Span],
        each: &mut dyn FnMut(usize, Result<(u64, u64)>) -> Result<bool>,
    ) -> Result<()> {
        for (i, &Span { table, lo, hi, .. }) in spans.iter().enumerate() {
            let table = self.0.tables.get(table).ok_or_else(|| {
                Error::Corrupt(format!("table {table} is not in this store's layout"))
            })?;
            let end = match hi {
                Some(hi) => Bound::Excluded((hi, 0)),
                None => Bound::Unbounded,
            };
            for &entry in table.range((Bound::Included((lo, 0)), end)) {
                if !each(i, Ok(entry))? {
                    break;
                }
            }
        }
        Ok(())
    }

    fn first_exact(&self, hash: u128) -> Result<Option<u64>> {
        Ok(self
            .0
            .exact
            .range((hash, 0)..=(hash, u64::MAX))
            .next()
            .map(|&(_, seq)| seq))
    }

    fn scan_exact(&self, each: &mut dyn FnMut(Result<(u128, u64)>) -> Result<bool>) -> Result<()> {
        for &entry in &self.0.exact {
            if !each(Ok(entry))? {
                break;
            }
        }
        Ok(())
    }

    fn scan_docs(
        &self,
        from: u64,
        each: &mut dyn FnMut(DocItem<'_>) -> Result<bool>,
    ) -> Result<()> {
        for (seq, doc) in self.0.docs.range(from..) {
            let key = seq.to_be_bytes();
            if !each((&key, Ok((*seq, doc.clone()))))? {
                break;
            }
        }
        Ok(())
    }

    fn scan_ids(&self, each: &mut dyn FnMut(IdItem<'_>) -> Result<bool>) -> Result<()> {
        for (id, value) in &self.0.ids {
            if !each((id.as_bytes(), Ok(*value)))? {
                break;
            }
        }
        Ok(())
    }
}
