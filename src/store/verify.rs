//! Reading a verifying query's candidates and keeping those its rule accepts, with the
//! wasted reads bounded: a store may hold many documents under one fingerprint that are
//! not copies of each other (a shop's pages whose main text is one sentence, told apart
//! by the rest of what they show), and a check that read every one of them for every new
//! such page would cost the square of their number.

use super::query::{BAND_ONLY, sort_matches, with_distances};
use super::{Store, View};
use crate::error::Result;
use crate::index::page;
use crate::index::quality::MatchRule;
use crate::types::{Match, QueryKey};

/// The most candidates a query reads and its rule rejects before it reads no more: past
/// that many, the candidates left are not read. The candidates are read in order of
/// promise — those within the reach that also share a band of the query's sketch, then the
/// others within the reach by distance (the newest first among equals), then those found
/// by a band alone — so a bounded query still finds a copy that any of those signals
/// points to first. Accepted candidates do not count: a query whose candidates are all
/// copies reads them all. Below the bound the answer is every accepted candidate, as
/// without it.
pub const MAX_REJECTED: usize = 64;

/// A query's candidates: `(seq, distance)` (ascending by seq, each once; a hit found by a
/// band alone has distance [`BAND_ONLY`]) and the seqs (ascending) that share a band
/// with the query.
pub(super) struct Candidates {
    pub(super) hits: Vec<(u64, u32)>,
    pub(super) banded: Vec<u64>,
}

impl Store {
    /// The candidates' records that `rule` accepts for `query`, sorted by distance, then
    /// id: every candidate read when there are at most [`MAX_REJECTED`], else in order of
    /// promise until that many were rejected.
    pub(super) fn accepted(
        &self,
        snap: &View,
        candidates: Candidates,
        query: &QueryKey,
        rule: &MatchRule,
    ) -> Result<Vec<Match>> {
        let Candidates { mut hits, banded } = candidates;
        let sketches = (query.sketch.as_ref(), query.main_sketch.as_ref());
        let keep = |m: &Match| page::accepts(rule, m.distance, sketches, m.doc.sketch.as_ref());
        // At most one chunk reads every candidate: the order matters only beyond it.
        if hits.len() > MAX_REJECTED {
            hits.sort_unstable_by_key(|&(seq, d)| {
                let shares = banded.binary_search(&seq).is_ok();
                (d == BAND_ONLY, !shares, d, std::cmp::Reverse(seq))
            });
        }
        let (mut out, mut rejected) = (Vec::new(), 0);
        for chunk in hits.chunks(MAX_REJECTED) {
            let mut chunk = chunk.to_vec();
            chunk.sort_unstable();
            let mut read = self.fetch(snap, chunk)?;
            with_distances(&mut read, query.fp);
            let before = read.len();
            read.retain(keep);
            rejected += before - read.len();
            out.append(&mut read);
            if rejected >= MAX_REJECTED {
                break;
            }
        }
        sort_matches(&mut out);
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;
    use std::sync::atomic::{AtomicUsize, Ordering};

    use super::MAX_REJECTED;
    use crate::store::hooked::Hooked;
    use crate::store::memory::MemoryBackend;
    use crate::store::{Rule, Store, StoreBuilder};
    use crate::text::fingerprint::Fingerprinter;
    use crate::types::{DocMeta, Entry, Fingerprint, QueryKey, Sketch};

    /// One fingerprint for every document: a shop's pages whose main text is one sentence.
    const FP: Fingerprint = Fingerprint(0x5eed_0f5a_1e00);

    /// A store in memory that counts the records its latest-state views read.
    fn counted_store() -> (Store, Arc<AtomicUsize>) {
        let options = StoreBuilder::in_memory().k_max(3);
        let layout = options.layout().unwrap();
        let mut backend = Hooked::new(Box::new(MemoryBackend::new(
            options.backend_tables().unwrap(),
        )));
        let read = Arc::new(AtomicUsize::new(0));
        let counter = Arc::clone(&read);
        backend.on_docs = Some(Box::new(move |n| {
            counter.fetch_add(n, Ordering::Relaxed);
        }));
        (
            Store::create(Box::new(backend), options, layout).unwrap(),
            read,
        )
    }

    /// The sketch of a text of 60 words of its own (word `i·60 + j`), sharing none.
    fn sketch_of(i: usize) -> Sketch {
        let words: Vec<String> = (0..60)
            .map(|j| format!("w{}x{}", i * 60 + j, j % 7))
            .collect();
        let text = words.join(" ");
        Fingerprinter::new()
            .analyze(None, &text)
            .unwrap()
            .sketch
            .unwrap()
    }

    /// Stores `sketches` in order, each a document `d{i}` under [`FP`].
    fn store_all(store: &Store, sketches: &[Sketch]) {
        let entries = sketches.iter().enumerate().map(|(i, s)| Entry {
            id: format!("d{i}"),
            fp: FP,
            meta: DocMeta {
                sketch: Some(*s),
                ..DocMeta::default()
            },
        });
        store.insert_batch(entries).unwrap();
    }

    fn key(sketch: Sketch) -> QueryKey {
        QueryKey {
            sketch: Some(sketch),
            ..QueryKey::from(FP)
        }
    }

    #[test]
    fn a_crowd_under_one_fingerprint_is_read_within_the_bound() {
        let (store, read) = counted_store();
        let crowd: Vec<Sketch> = (0..1000).map(sketch_of).collect();
        store_all(&store, &crowd);
        read.store(0, Ordering::Relaxed);
        let found = store.query(key(sketch_of(5000)), Rule::Mode).unwrap();
        assert!(found.is_empty(), "{found:?}");
        let n = read.load(Ordering::Relaxed);
        assert!(n <= 2 * MAX_REJECTED, "read {n} records of a crowd of 1000");
        assert!(n >= MAX_REJECTED);
    }

    #[test]
    fn a_copy_in_the_crowd_is_found_by_its_band_first() {
        let (store, _) = counted_store();
        // The copy is the oldest: the last of its distance to be read but for its band.
        let mut all = vec![sketch_of(7000)];
        all.extend((0..1000).map(sketch_of));
        store_all(&store, &all);
        let query = key(sketch_of(7000));
        let found = store.query(query, Rule::Mode).unwrap();
        let ids: Vec<&str> = found.iter().map(|m| m.doc.id.as_str()).collect();
        assert_eq!(ids, ["d0"]);
        let batch = store.query_batch([query, key(sketch_of(9000))], Rule::Mode);
        let batch = batch.unwrap();
        assert_eq!(batch[0].len(), 1);
        assert_eq!(batch[0][0].doc.id, "d0");
        assert!(batch[1].is_empty());
    }

    #[test]
    fn accepted_candidates_do_not_count_against_the_bound() {
        let (store, _) = counted_store();
        let copies = vec![sketch_of(1); 3 * MAX_REJECTED];
        store_all(&store, &copies);
        let found = store.query(key(sketch_of(1)), Rule::Mode).unwrap();
        assert_eq!(found.len(), copies.len());
        let batch = store.query_batch([key(sketch_of(1))], Rule::Mode).unwrap();
        assert_eq!(batch[0].len(), copies.len());
    }

    #[test]
    fn a_check_in_a_crowd_stores_the_new_page_after_a_bounded_read() {
        let (store, read) = counted_store();
        store_all(&store, &(0..500).map(sketch_of).collect::<Vec<_>>());
        read.store(0, Ordering::Relaxed);
        let entry = Entry {
            id: "new".into(),
            fp: FP,
            meta: DocMeta {
                sketch: Some(sketch_of(6000)),
                ..DocMeta::default()
            },
        };
        let outcome = store.check_and_insert(&entry, Rule::Mode).unwrap();
        assert!(
            matches!(outcome, crate::CheckOutcome::New { .. }),
            "{outcome:?}"
        );
        assert!(read.load(Ordering::Relaxed) <= 2 * MAX_REJECTED + 1);
        assert_eq!(store.len(), 501);
    }
}
