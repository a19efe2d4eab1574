//! All-pairs dedup (`Store::dedup`, `cluster::near_duplicates`, `simstore dedup`) against a
//! brute-force all-pairs scan and its union-find partition, on random and clustered
//! fingerprints, for every k ≤ k_max, over several layouts.

use std::collections::BTreeSet;

use simstore::index::cluster::{UnionFind, near_duplicates};
use simstore::{DocMeta, Entry, Fingerprint, Store};

use crate::util::{BACKENDS, Backend, TestCommand, clustered, code, flip, new_store, rng, stderr};

type Pair = (String, String, u32);

fn data(seed: u64) -> Vec<(String, u64)> {
    let mut r = rng(seed);
    let mut fps = clustered(&mut r, 40, 6, 5);
    // Chains: members within k of the next but not of the first (clusters by transitivity).
    for _ in 0..5 {
        let mut fp: u64 = rand::Rng::random(&mut r);
        for _ in 0..4 {
            fps.push(fp);
            fp = flip(&mut r, fp, 2);
        }
    }
    fps.extend((0..150).map(|_| rand::Rng::random::<u64>(&mut r)));
    // Block-boundary patterns and equal fingerprints.
    fps.extend([0, 0, 1, u64::MAX, u64::MAX ^ 1, 1 << 63, 0xffff]);
    fps.into_iter()
        .enumerate()
        .map(|(i, fp)| (format!("d{:04}", (i * 7919) % 10_000), fp))
        .collect()
}

fn brute_pairs(docs: &[(String, u64)], k: u32) -> BTreeSet<Pair> {
    let mut out = BTreeSet::new();
    for (i, (a, fa)) in docs.iter().enumerate() {
        for (b, fb) in &docs[i + 1..] {
            let d = (fa ^ fb).count_ones();
            if d <= k {
                let (x, y) = if a < b { (a, b) } else { (b, a) };
                out.insert((x.clone(), y.clone(), d));
            }
        }
    }
    out
}

fn brute_clusters(docs: &[(String, u64)], k: u32) -> Vec<Vec<String>> {
    let mut uf = UnionFind::new(docs.len()).unwrap();
    for i in 0..docs.len() {
        for j in i + 1..docs.len() {
            if (docs[i].1 ^ docs[j].1).count_ones() <= k {
                uf.union(i as u32, j as u32);
            }
        }
    }
    let mut out: Vec<Vec<String>> = uf
        .sets(2)
        .into_iter()
        .map(|s| {
            let mut ids: Vec<String> = s.iter().map(|&i| docs[i as usize].0.clone()).collect();
            ids.sort();
            ids
        })
        .collect();
    out.sort();
    out
}

#[test]
fn store_dedup_equals_brute_force() {
    for backend in BACKENDS {
        store_dedup_case(backend);
    }
}

fn store_dedup_case(backend: Backend) {
    for (seed, (k_max, blocks)) in [(3, 4), (3, 5), (3, 6), (2, 3), (1, 2)]
        .into_iter()
        .enumerate()
    {
        let docs = data(seed as u64);
        let dir = tempfile::tempdir().unwrap();
        let store: Store = new_store(backend, dir.path(), k_max, blocks);
        store
            .insert_batch(docs.iter().map(|(id, fp)| Entry {
                id: id.clone(),
                fp: Fingerprint(*fp),
                meta: DocMeta::default(),
            }))
            .unwrap();
        for k in 0..=k_max {
            let want = brute_pairs(&docs, k);
            let mut got = Vec::new();
            let report = store
                .dedup_pairs(k, |p| {
                    got.push((p.a, p.b, p.distance));
                    Ok(())
                })
                .unwrap();
            let n = got.len();
            let got: BTreeSet<Pair> = got.into_iter().collect();
            assert_eq!(n, got.len(), "a pair reported twice (k = {k})");
            assert_eq!(got, want, "layout ({k_max}, {blocks}), k = {k}");
            assert_eq!(report.pairs, want.len() as u64);
            assert_eq!(report.documents, docs.len() as u64);
            let clusters = brute_clusters(&docs, k);
            assert_eq!(report.clusters, clusters, "k = {k}");
            // Without pairs (ids read only for clustered documents): the same clusters.
            assert_eq!(store.dedup(k).unwrap(), report);
            assert!(!want.is_empty() || k == 0);
        }
        assert!(store.dedup(k_max + 1).is_err());
    }
}

#[test]
fn in_memory_dedup_equals_brute_force() {
    for seed in 0..3 {
        let docs = data(100 + seed);
        let fps: Vec<u64> = docs.iter().map(|d| d.1).collect();
        for k in 0..=6 {
            let mut got = BTreeSet::new();
            let mut n = 0;
            let summary = near_duplicates(&fps, k, |a, b, d| {
                assert!(a < b);
                n += 1;
                let (x, y) = (&docs[a as usize].0, &docs[b as usize].0);
                let (x, y) = if x < y { (x, y) } else { (y, x) };
                got.insert((x.clone(), y.clone(), d));
                Ok(())
            })
            .unwrap();
            assert_eq!(n, got.len(), "a pair reported twice");
            assert_eq!(got, brute_pairs(&docs, k), "k = {k}");
            assert_eq!(summary.pairs, n as u64);
            let report = summary.to_report(|i| docs[i as usize].0.clone());
            assert_eq!(
                (report.documents, report.pairs),
                (docs.len() as u64, n as u64)
            );
            let clusters = report.clusters;
            assert_eq!(clusters, brute_clusters(&docs, k), "k = {k}");
        }
    }
    let empty = near_duplicates(&[], 3, |_, _, _| Ok(())).unwrap();
    assert_eq!((empty.documents, empty.pairs), (0, 0));
}

#[test]
fn cli_dedup_of_files_and_of_a_store() {
    let t = TestCommand::new();
    let f = 0x0123_4567_89ab_cdefu64;
    let g = 0xfedc_ba98_7654_3210u64;
    // "b" first: pairs name the smaller id first, whatever the input order.
    let lines = [
        ("b", f ^ 1),
        ("a", f),
        ("c", f ^ 0b110),
        ("d", g),
        ("e", g ^ 0xf),
        ("x", 0x5555_5555_5555_5555),
    ];
    let input: String = lines
        .iter()
        .map(|(id, fp)| format!("{{\"id\":\"{id}\",\"fp\":\"{fp:016x}\"}}\n"))
        .collect();
    t.write("in.jsonl", input.as_bytes());
    let out = |o: &std::process::Output| String::from_utf8(o.stdout.clone()).unwrap();
    // Files, no store: a–b (1), a–c (2), b–c (3); d–e is 4 apart.
    let o = t.run(&["dedup", "--k", "3", "in.jsonl"]);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    assert_eq!(out(&o), "{\"cluster\":0,\"ids\":[\"a\",\"b\",\"c\"]}\n");
    assert!(
        stderr(&o).contains(
            "6 documents: 3 pairs within k = 3, 1 cluster (largest 3); cluster sizes {3: 1}"
        ),
        "{}",
        stderr(&o)
    );
    assert!(!t.db().exists(), "dedup of files writes no store");
    let o = t.run(&["dedup", "--k", "4", "--pairs", "in.jsonl"]);
    let printed = out(&o);
    let mut pairs: Vec<&str> = printed.lines().collect();
    pairs.sort();
    assert_eq!(
        pairs,
        [
            r#"{"a":"a","b":"b","distance":1}"#,
            r#"{"a":"a","b":"c","distance":2}"#,
            r#"{"a":"b","b":"c","distance":3}"#,
            r#"{"a":"d","b":"e","distance":4}"#,
        ]
    );
    // k = 0: nothing, exit 1.
    let o = t.run(&["dedup", "--k", "0", "in.jsonl"]);
    assert_eq!((code(&o), out(&o).as_str()), (1, ""));
    // The same through a store.
    assert_eq!(code(&t.run(&["import", "in.jsonl"])), 0);
    let o = t.run(&["dedup", "--k", "3"]);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    assert_eq!(out(&o), "{\"cluster\":0,\"ids\":[\"a\",\"b\",\"c\"]}\n");
    let o = t.run(&["dedup", "--k", "4"]);
    assert_eq!(code(&o), 2, "k > k_max of the store");
    assert!(stderr(&o).contains("k = 4 exceeds"), "{}", stderr(&o));
}

/// Regression: more documents than a dedup can cluster was reported as an invalid layout
/// (`Error::InvalidLayout`), which names the wrong cause. It is `Error::TooLarge`.
#[test]
fn too_many_documents_to_cluster_is_too_large_not_a_layout_error() {
    let err = UnionFind::new(u32::MAX as usize + 1).unwrap_err();
    assert!(matches!(err, simstore::Error::TooLarge(_)), "{err:?}");
    assert!(err.to_string().contains("too many to cluster"), "{err}");
}
