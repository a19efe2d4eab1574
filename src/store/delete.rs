//! Deleting many documents at once: one change set, so on a backend whose change sets are
//! atomic (RocksDB, memory) either every listed document goes or none does.

use std::collections::HashSet;

use super::Store;
use super::backend::ChangeSet;
use crate::error::Result;

impl Store {
    /// Deletes the documents `ids` and their table entries in one change set: atomic on a
    /// backend whose change sets are (`super::backend::Atomicity::ChangeSet`: RocksDB,
    /// memory); on Redis Cluster each document goes whole or not at all, as with
    /// [`Store::delete`]. Returns, for each id in order, whether it was stored (an id
    /// listed twice counts once, at its first place).
    ///
    /// Errors: [`crate::Error::ReadOnly`]; [`crate::Error::Corrupt`] when an id names a missing record
    /// on an atomic backend (nothing is deleted; on Redis Cluster such an id, left by a
    /// writer that died midway, is deleted); storage errors (nothing is deleted on an
    /// atomic backend).
    pub fn delete_many(&self, ids: &[&str]) -> Result<Vec<bool>> {
        self.check_writable()?;
        let mut seen = HashSet::with_capacity(ids.len());
        let unique: Vec<&str> = ids.iter().copied().filter(|id| seen.insert(*id)).collect();
        let mut counters = self.lock();
        counters.usable()?;
        let stored = self.linked(&unique)?;
        let mut changes = ChangeSet::new();
        let mut gone = HashSet::with_capacity(unique.len());
        for (id, old) in unique.iter().zip(&stored) {
            let Some(old) = *old else { continue };
            self.push_delete(&mut changes, id, old);
            gone.insert(*id);
        }
        if !gone.is_empty() {
            self.commit_deletes(&mut counters, changes, gone.len() as u64)?;
        }
        self.unlock(counters);
        // Each id once: a repeated one reads as not stored after its first place.
        let mut answered = HashSet::with_capacity(gone.len());
        Ok(ids
            .iter()
            .map(|id| gone.contains(id) && answered.insert(*id))
            .collect())
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;
    use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

    use crate::error::Error;
    use crate::store::hooked::Hooked;
    use crate::store::memory::MemoryBackend;
    use crate::store::{Store, StoreBuilder};
    use crate::types::{DocMeta, Fingerprint};

    /// A store of `n` documents `d0..` whose writes fail while `fail` is set, counting
    /// the change sets written.
    fn store(n: u64, fail: &Arc<AtomicBool>, writes: &Arc<AtomicUsize>) -> Store {
        let options = StoreBuilder::in_memory().k_max(3);
        let layout = options.layout().unwrap();
        let mut backend = Hooked::new(Box::new(MemoryBackend::new(
            options.backend_tables().unwrap(),
        )));
        let (fail, writes) = (Arc::clone(fail), Arc::clone(writes));
        backend.on_write = Box::new(move |_| {
            writes.fetch_add(1, Ordering::SeqCst);
            match fail.load(Ordering::SeqCst) {
                true => Err(Error::storage("memory", "injected")),
                false => Ok(()),
            }
        });
        let store = Store::create(Box::new(backend), options, layout).unwrap();
        for i in 0..n {
            let fp = Fingerprint(i.wrapping_mul(0x9e37_79b9_7f4a_7c15));
            let meta = DocMeta::default();
            store
                .insert_fingerprint(&format!("d{i}"), fp, meta)
                .unwrap();
        }
        store
    }

    #[test]
    fn many_ids_go_in_one_change_set_or_not_at_all() {
        let (fail, writes) = (Arc::new(AtomicBool::new(false)), Arc::default());
        let store = store(10, &fail, &writes);
        let ids = ["d1", "d3", "nope", "d1", "d5"];
        fail.store(true, Ordering::SeqCst);
        assert!(store.delete_many(&ids).is_err());
        assert_eq!(store.len(), 10, "a failed write deleted nothing");
        assert!(store.check().unwrap().is_ok());
        fail.store(false, Ordering::SeqCst);
        let before = writes.load(Ordering::SeqCst);
        let found = store.delete_many(&ids).unwrap();
        assert_eq!(found, [true, true, false, false, true]);
        assert_eq!(writes.load(Ordering::SeqCst) - before, 1, "one change set");
        assert_eq!(store.len(), 7);
        for id in ["d1", "d3", "d5"] {
            assert!(store.get(id).unwrap().is_none(), "{id}");
        }
        assert!(store.get("d2").unwrap().is_some());
        assert!(store.check().unwrap().is_ok());
        // Nothing stored of the list: nothing written.
        let before = writes.load(Ordering::SeqCst);
        assert_eq!(store.delete_many(&["d1", "x"]).unwrap(), [false, false]);
        assert_eq!(writes.load(Ordering::SeqCst), before);
    }
}
