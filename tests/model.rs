//! The store against a brute-force model: for every k ≤ k_max (tables) and for larger k
//! (exhaustive scan), on random and clustered fingerprints, over several layouts, across
//! inserts, replacements, deletes and a reopen — on every backend (RocksDB and memory).

use proptest::prelude::*;
use rand::Rng;
use simstore::Rule;
use simstore::{DocMeta, Entry, Fingerprint, Layout, Store};

use crate::util::{BACKENDS, Backend, brute_force, clustered, flip, new_store, rng, shape};

/// (k_max, blocks): the textbook 4-block layout, 5 and 6 blocks (uneven widths), small k_max.
const LAYOUTS: &[(u32, u32)] = &[(3, 4), (3, 5), (3, 6), (2, 3), (1, 2), (0, 1), (4, 7)];

fn entries_from(fps: &[u64]) -> Vec<(String, u64)> {
    fps.iter()
        .enumerate()
        .map(|(i, &fp)| (format!("doc{i:05}"), fp))
        .collect()
}

fn to_entries(entries: &[(String, u64)]) -> Vec<Entry> {
    entries
        .iter()
        .map(|(id, fp)| Entry {
            id: id.clone(),
            fp: Fingerprint(*fp),
            meta: DocMeta::default(),
        })
        .collect()
}

/// Checks every query answer against brute force for k = 0..=k_max (tables) and for a few
/// k beyond (exhaustive scan).
fn check_all(store: &Store, model: &[(String, u64)], queries: &[u64]) {
    let k_max = store.layout().k_max();
    for &q in queries {
        for k in 0..=k_max {
            let got = store.query(Fingerprint(q), k).unwrap();
            assert_eq!(
                shape(&got),
                brute_force(model, q, k),
                "query {q:016x} k={k} layout {:?}",
                store.layout().widths()
            );
            for m in &got {
                assert_eq!(m.distance, (m.doc.fp ^ q).count_ones());
            }
        }
        let k = k_max + 2;
        assert!(
            store.query(Fingerprint(q), k_max + 1).is_err(),
            "k > k_max must be refused"
        );
        let got = store.query(Fingerprint(q), Rule::Exhaustive(k)).unwrap();
        assert_eq!(shape(&got), brute_force(model, q, k));
    }
}

fn run_case(backend: Backend, layout: (u32, u32), seed: u64, random: usize, clusters: usize) {
    let mut r = rng(seed);
    let (k_max, blocks) = layout;
    let mut fps: Vec<u64> = (0..random).map(|_| r.random()).collect();
    fps.extend(clustered(&mut r, clusters, 12, k_max + 2));
    // Equal fingerprints under different ids.
    if let Some(&first) = fps.first() {
        fps.push(first);
        fps.push(first);
    }
    let mut model = entries_from(&fps);
    let dir = tempfile::tempdir().unwrap();
    let store = new_store(backend, dir.path(), k_max, blocks);
    assert_eq!(store.layout(), &Layout::new(k_max, blocks).unwrap());
    // Insert in two batches plus single inserts, so both paths are exercised.
    let half = model.len() / 2;
    store.insert_batch(to_entries(&model[..half])).unwrap();
    for (id, fp) in &model[half..] {
        store
            .insert_fingerprint(id, Fingerprint(*fp), DocMeta::default())
            .unwrap();
    }
    assert_eq!(store.len(), model.len() as u64);

    // Replace some ids with new fingerprints (near others), delete some.
    for i in (0..model.len()).step_by(7) {
        let target = model[r.random_range(0..model.len())].1;
        let d = r.random_range(0..=k_max + 1);
        model[i].1 = flip(&mut r, target, d);
        store
            .insert_fingerprint(&model[i].0, Fingerprint(model[i].1), DocMeta::default())
            .unwrap();
    }
    let mut deleted = Vec::new();
    for i in (3..model.len()).step_by(11) {
        deleted.push(model[i].0.clone());
    }
    for id in &deleted {
        assert!(store.delete(id).unwrap());
        assert!(!store.delete(id).unwrap());
    }
    model.retain(|(id, _)| !deleted.contains(id));
    assert_eq!(store.len(), model.len() as u64);
    let report = store.check().unwrap();
    assert!(report.is_ok(), "{:?}", report.problems);

    // Queries: stored fingerprints perturbed by 0..=k_max+2 bits, and random ones.
    let mut queries: Vec<u64> = (0..25)
        .map(|_| {
            let base = model[r.random_range(0..model.len())].1;
            let d = r.random_range(0..=k_max + 2);
            flip(&mut r, base, d)
        })
        .collect();
    queries.extend((0..5).map(|_| r.random::<u64>()));
    check_all(&store, &model, &queries);

    // Closed and reopened, it answers the same.
    if backend == Backend::Memory {
        return;
    }
    drop(store);
    let store = Store::builder(dir.path().join("db"))
        .create_if_missing(false)
        .open()
        .unwrap();
    assert_eq!(store.len(), model.len() as u64);
    check_all(&store, &model, &queries[..10]);
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 32, ..ProptestConfig::default() })]

    #[test]
    fn store_equals_brute_force(backend in proptest::sample::select(&BACKENDS[..]),
                                layout in proptest::sample::select(LAYOUTS), seed in any::<u64>(),
                                random in 1usize..200, clusters in 0usize..12) {
        run_case(backend, layout, seed, random, clusters);
    }
}

/// Every layout on every backend at least once, deterministically (proptest samples them
/// at random).
#[test]
fn every_layout_equals_brute_force() {
    for backend in BACKENDS {
        for (i, &layout) in LAYOUTS.iter().enumerate() {
            run_case(backend, layout, 1000 + i as u64, 150, 10);
        }
    }
}

/// Fingerprints that differ only inside one block, or in bits straddling block
/// boundaries, are the cases where a wrong shift or mask would hide a neighbour.
#[test]
fn block_boundaries() {
    for &(k_max, blocks) in LAYOUTS {
        let layout = Layout::new(k_max, blocks).unwrap();
        let mut boundaries = vec![0u32, 63];
        let mut top = 64u32;
        for &w in layout.widths() {
            top -= u32::from(w);
            boundaries.push(top);
            boundaries.push(top.saturating_sub(1));
            boundaries.push((top + 1).min(63));
        }
        let base = 0xA5A5_5A5A_F0F0_0F0Fu64;
        let mut fps = vec![base, !base, 0, u64::MAX];
        for &b in &boundaries {
            for &c in &boundaries {
                fps.push(base ^ (1u64 << b) ^ (1u64 << c));
                fps.push(base ^ (1u64 << b) ^ (1u64 << c) ^ (1u64 << ((b + 7) % 64)));
            }
        }
        let model = entries_from(&fps);
        let queries: Vec<u64> = fps.iter().step_by(3).copied().collect();
        for backend in BACKENDS {
            let dir = tempfile::tempdir().unwrap();
            let store = new_store(backend, dir.path(), k_max, blocks);
            store.insert_batch(to_entries(&model)).unwrap();
            check_all(&store, &model, &queries);
        }
    }
}
