//! Quality modes against a model: a store's rule ([`simstore::MatchRule`]) applied by the
//! store (queries and check-and-insert) equals the rule applied by brute force to every
//! stored document ("found by the layout's spans, and accepted"), on every backend.

use rand::Rng;
use rand::rngs::StdRng;
use rand::seq::SliceRandom;
use simstore::index::probing;
use simstore::types::weak_bits::WEAK_BITS;
use simstore::{
    CheckOutcome, DocMeta, Fingerprint, Layout, MatchRule, Quality, QueryKey, Sketch, Store,
    StoreBuilder, WeakBits,
};
use simstore::{Entry, Rule};

use crate::util::{BACKENDS, Backend, flip, rng};

/// One stored or queried document of the model.
#[derive(Debug, Clone)]
struct Doc {
    id: String,
    fp: u64,
    sketch: Option<Sketch>,
    hash: Option<u128>,
    weak_bits: Option<WeakBits>,
}

impl Doc {
    fn meta(&self) -> DocMeta {
        DocMeta {
            content_hash: self.hash,
            sketch: self.sketch,
            weak_bits: self.weak_bits,
            ..DocMeta::default()
        }
    }

    fn key(&self) -> QueryKey {
        QueryKey {
            fp: Fingerprint(self.fp),
            sketch: self.sketch,
            weak_bits: self.weak_bits,
            main_sketch: None,
        }
    }
}

/// Weak bits as a text's would be: mostly the bits where the document drifted from its
/// cluster's centre (`drift`), the rest at random, in random order of random margins.
fn weak_bits(r: &mut StdRng, drift: u64) -> WeakBits {
    let mut bits: Vec<u8> = (0..64u8).filter(|&b| drift >> b & 1 == 1).collect();
    bits.shuffle(r);
    let mut rest: Vec<u8> = (0..64u8).filter(|&b| drift >> b & 1 == 0).collect();
    rest.shuffle(r);
    bits.extend(rest);
    let bits: [u8; WEAK_BITS] = std::array::from_fn(|i| bits[i]);
    let mut margins: [u16; WEAK_BITS] = std::array::from_fn(|_| r.random());
    margins.sort_unstable();
    WeakBits::from_parts(bits, margins).unwrap()
}

/// A sketch of family `f` with `noise` of its 64 slots changed: equal families agree on
/// most slots (similarity ≈ 1 − noise/64), different families on about none.
fn sketch(r: &mut StdRng, family: u8, noise: usize) -> Sketch {
    let mut s = [0u8; Sketch::BYTES];
    for (i, b) in s.iter_mut().enumerate() {
        *b = family.wrapping_mul(31).wrapping_add(i as u8 * 7);
    }
    for _ in 0..noise {
        let i = r.random_range(0..Sketch::BYTES);
        s[i] = r.random();
    }
    Sketch(s)
}

/// Clusters of documents within 0..=10 bits of a centre; in a cluster, most share a
/// sketch family (copies) and some have another (unrelated texts with close
/// fingerprints); a few have no sketch (fingerprint-only records).
fn documents(r: &mut StdRng, clusters: usize, size: usize, prefix: &str) -> Vec<Doc> {
    let mut out = Vec::new();
    for c in 0..clusters {
        let centre: u64 = r.random();
        for i in 0..size {
            let family = if r.random_bool(0.7) {
                c as u8
            } else {
                r.random()
            };
            let noise = r.random_range(0..40);
            let sketch = (!r.random_bool(0.1)).then(|| sketch(r, family, noise));
            // Some are of web pages compared by their whole visible text.
            let sketch = sketch.map(|s| match r.random_bool(0.2) {
                true => s.of_whole_text(),
                false => s,
            });
            let spread = r.random_range(0..=12);
            let fp = flip(r, centre, spread);
            let weak_bits = sketch.is_some().then(|| weak_bits(r, fp ^ centre));
            out.push(Doc {
                id: format!("{prefix}{c:03}-{i:02}"),
                fp,
                sketch,
                hash: r.random_bool(0.1).then_some(c as u128),
                weak_bits,
            });
        }
    }
    out
}

/// The model's answer to a query: every stored document the layout's probe for `rule.k`
/// (with the rule's query-directed probes of the query's weak bits, more for a page
/// compared whole) or the rule's bands find and the rule accepts, sorted by distance, then
/// id.
fn model_query(layout: &Layout, rule: &MatchRule, stored: &[Doc], q: &Doc) -> Vec<(u32, String)> {
    let probes = rule.probes_for(q.sketch.as_ref());
    let flips = probing::query_flips(layout, rule.k, probes, q.weak_bits.as_ref());
    let mut out: Vec<(u32, String)> = stored
        .iter()
        .map(|d| ((d.fp ^ q.fp).count_ones(), d))
        .filter(|(dist, d)| {
            let (a, b) = (q.sketch.as_ref(), d.sketch.as_ref());
            (probing::finds(layout, rule.k, &flips, q.fp, d.fp) || rule.shares_band(a, b))
                && rule.accepts(*dist, a, b)
        })
        .map(|(dist, d)| (dist, d.id.clone()))
        .collect();
    out.sort();
    out
}

fn open(backend: Backend, dir: &std::path::Path, quality: Quality) -> Store {
    let builder = match backend {
        Backend::Rocks => StoreBuilder::new(dir.join("db")),
        Backend::Memory => StoreBuilder::in_memory(),
    };
    // Small blocks count: beyond k_max, some near pairs share a span and some do not.
    builder
        .quality(quality)
        .expected_docs(10_000_000)
        .open()
        .unwrap()
}

/// Inserts documents into `store` (empty, of some mode) and checks every query of the
/// mode's rule against the model.
pub fn check_mode_queries(store: &Store, what: &str) {
    let quality = store.quality();
    let rule = store.rule(Rule::Mode);
    assert_eq!(rule, quality.rule(quality.k_max()));
    // What the commands' --k/--verify give: the mode, "within k", verified at k_max.
    assert_eq!(store.rule(Rule::options(None, None)), rule);
    assert_eq!(
        store.rule(Rule::options(Some(2), None)),
        MatchRule::within(2)
    );
    let verified = MatchRule::verified(quality.k_max(), 0.4);
    assert_eq!(store.rule(Rule::options(None, Some(0.4))), verified);
    let mut r = rng(7 + quality.k_max() as u64);
    let docs = documents(&mut r, 40, 12, "d");
    for d in &docs {
        store
            .insert_fingerprint(&d.id, Fingerprint(d.fp), d.meta())
            .unwrap();
    }
    let (mut beyond_k, mut answers, mut by_flips, mut beyond_reach) = (0, 0, 0, 0);
    let mut whole_by_flips = 0;
    let queries: Vec<Doc> = documents(&mut r, 40, 3, "q")
        .into_iter()
        .chain(docs.clone())
        .collect();
    // The batch form, from one view.
    let batch: Vec<QueryKey> = queries.iter().map(Doc::key).collect();
    let batch = store.query_batch(batch.iter().copied(), rule).unwrap();
    for (q, found) in queries.iter().zip(batch) {
        let got: Vec<(u32, String)> = found.into_iter().map(|m| (m.distance, m.doc.id)).collect();
        assert_eq!(
            got,
            model_query(store.layout(), &rule, &docs, q),
            "{what} batch {q:?}"
        );
    }
    for q in &queries {
        let got = store.query(q.key(), rule).unwrap();
        let got: Vec<(u32, String)> = got.into_iter().map(|m| (m.distance, m.doc.id)).collect();
        let want = model_query(store.layout(), &rule, &docs, q);
        assert_eq!(got, want, "{what} {quality} query {q:?}");
        let no_weak = Doc {
            weak_bits: None,
            ..q.clone()
        };
        let flipped = want.len() - model_query(store.layout(), &rule, &docs, &no_weak).len();
        by_flips += flipped;
        if q.sketch.is_some_and(|s| s.whole_text()) {
            whole_by_flips += flipped;
        }
        beyond_k += want.iter().filter(|(d, _)| *d > rule.k).count();
        beyond_reach += want.iter().filter(|(d, _)| *d > rule.reach).count();
        answers += want.len();
    }
    // The test is not vacuous: the rule matched beyond k_max, beyond its reach (found by
    // its bands alone), and (with probes) matched documents that only its query-directed
    // probes found.
    assert!(beyond_k > 0 && answers > 0, "{beyond_k} {answers}");
    assert_eq!(
        beyond_reach > 0,
        rule.bands > 0,
        "{what} {quality}: {beyond_reach}"
    );
    assert!(by_flips > 0, "{what} {quality}: {by_flips}");
    // A page compared whole is probed even where the rule reads bands instead of probes.
    assert!(whole_by_flips > 0, "{what} {quality}: {whole_by_flips}");
}

#[test]
fn mode_queries_equal_the_model() {
    for backend in BACKENDS {
        for quality in Quality::ALL {
            let dir = tempfile::tempdir().unwrap();
            let store = open(backend, dir.path(), quality);
            assert_eq!(store.quality(), quality);
            check_mode_queries(&store, &format!("{backend:?}"));
        }
    }
}

/// A copy whose sketch shares only its third and fourth bands with the stored text (its
/// first 8 minima differ) and whose fingerprint is 40 bits away: a high store, which keeps
/// 4 band tables, finds it; a standard store, which keeps 2, does not — on every backend,
/// and in the high store after it is reopened.
#[test]
fn a_high_store_finds_copies_by_its_third_and_fourth_bands() {
    let mut bytes = [0u8; Sketch::BYTES];
    for (i, b) in bytes.iter_mut().enumerate() {
        *b = (i as u8).wrapping_mul(37).wrapping_add(11);
    }
    bytes[Sketch::BYTES - 1] = 63; // 63 bins filled, not Han characters
    let stored = Sketch(bytes);
    let mut copy = stored;
    copy.0[..8].copy_from_slice(&[0xEE; 8]);
    assert!(stored.similarity(&copy) > 0.8);
    let fp = 0x0123_4567_89AB_CDEF_u64;
    let query = QueryKey {
        fp: Fingerprint(fp ^ 0xFFFF_FFFF_FF00_0000),
        sketch: Some(copy),
        weak_bits: None,
        main_sketch: None,
    };
    let meta = DocMeta {
        sketch: Some(stored),
        ..DocMeta::default()
    };
    for backend in BACKENDS {
        for quality in Quality::ALL {
            let dir = tempfile::tempdir().unwrap();
            let store = open(backend, dir.path(), quality);
            assert_eq!(store.stats().unwrap().band_tables, quality.bands());
            store
                .insert_fingerprint("a", Fingerprint(fp), meta.clone())
                .unwrap();
            let found = store.query(query, Rule::Mode).unwrap();
            let ids: Vec<(u32, String)> =
                found.into_iter().map(|m| (m.distance, m.doc.id)).collect();
            let want = match quality {
                Quality::High => vec![(40, "a".to_owned())],
                Quality::Standard => vec![],
            };
            assert_eq!(ids, want, "{backend:?} {quality}");
        }
    }
    let dir = tempfile::tempdir().unwrap();
    drop(open(Backend::Rocks, dir.path(), Quality::High));
    let store = StoreBuilder::new(dir.path().join("db")).open().unwrap();
    store
        .insert_fingerprint("a", Fingerprint(fp), meta)
        .unwrap();
    drop(store);
    let store = StoreBuilder::new(dir.path().join("db")).open().unwrap();
    assert_eq!(store.quality(), Quality::High);
    let found = store.query(query, Rule::Mode).unwrap();
    assert_eq!(found.len(), 1, "after reopening");
    assert!(
        store.check().unwrap().is_ok(),
        "every band entry where check expects it"
    );
}

/// An outcome's shape: whether new, the duplicate's id, its distance.
type Shape = (bool, Option<String>, Option<u32>);

fn shape_of(o: &CheckOutcome) -> Shape {
    (
        o.is_new(),
        o.duplicate_of().map(str::to_owned),
        o.distance(),
    )
}

/// The sequential model of check-and-insert under `rule`: an exact duplicate (content
/// hash, first stored; distance 0), else the nearest document the rule accepts among those
/// the layout's probe finds (ties: smallest id), else stored.
fn model_check(layout: &Layout, rule: &MatchRule, stored: &mut Vec<Doc>, d: &Doc) -> Shape {
    if let Some(s) = stored.iter().find(|s| d.hash.is_some() && s.hash == d.hash) {
        return (false, Some(s.id.clone()), Some(0));
    }
    match model_query(layout, rule, stored, d).into_iter().next() {
        Some((distance, of)) => (false, Some(of), Some(distance)),
        None => {
            stored.push(d.clone());
            (true, None, None)
        }
    }
}

/// Checks documents into `store` (empty, of some mode) under its rule, one at a time,
/// against the sequential model.
pub fn check_mode_checks(store: &Store, what: &str) {
    let quality = store.quality();
    let rule = store.rule(Rule::Mode);
    let mut r = rng(11 + quality.k_max() as u64);
    let mut docs = documents(&mut r, 30, 10, "c");
    // Interleave the clusters, as a crawl meets copies.
    docs.sort_by_key(|d| xxhash_rust::xxh3::xxh3_64(d.id.as_bytes()));
    let mut stored = Vec::new();
    let mut near_beyond_k = 0;
    for d in &docs {
        let got = store
            .check_and_insert(&Entry::new(&d.id, Fingerprint(d.fp), d.meta()), rule)
            .unwrap();
        let want = model_check(store.layout(), &rule, &mut stored, d);
        assert_eq!(shape_of(&got), want, "{what} {quality} {d:?}");
        near_beyond_k += usize::from(got.distance().is_some_and(|x| x > rule.k));
    }
    assert!(near_beyond_k > 0, "some duplicates were found beyond k_max");
    assert_eq!(store.len(), stored.len() as u64);
}

#[test]
fn mode_checks_equal_the_sequential_model() {
    for backend in BACKENDS {
        for quality in Quality::ALL {
            let dir = tempfile::tempdir().unwrap();
            let store = open(backend, dir.path(), quality);
            check_mode_checks(&store, &format!("{backend:?}"));
        }
    }
}

/// A store's dedup under its mode's rule reports exactly the pairs the model accepts (every
/// pair of stored documents that the layout's probe puts in one span within the reach and
/// whose sketches agree), and the plain dedup's pairs are unchanged.
#[test]
fn mode_dedup_pairs_equal_the_model() {
    for backend in BACKENDS {
        let dir = tempfile::tempdir().unwrap();
        let store = open(backend, dir.path(), Quality::Standard);
        let rule = store.rule(Rule::Mode);
        let mut r = rng(23);
        let docs = documents(&mut r, 30, 10, "p");
        for d in &docs {
            store
                .insert_fingerprint(&d.id, Fingerprint(d.fp), d.meta())
                .unwrap();
        }
        let layout = store.layout();
        let mut want = Vec::new();
        for (i, a) in docs.iter().enumerate() {
            for b in &docs[i + 1..] {
                let d = (a.fp ^ b.fp).count_ones();
                // A dedup walks the permutation tables within the reach (no bands).
                if layout.finds(rule.k, a.fp, b.fp)
                    && d <= rule.reach
                    && rule.accepts(d, a.sketch.as_ref(), b.sketch.as_ref())
                {
                    want.push((
                        a.id.clone().min(b.id.clone()),
                        a.id.clone().max(b.id.clone()),
                        d,
                    ));
                }
            }
        }
        want.sort();
        let mut got = Vec::new();
        let report = store
            .dedup_pairs(rule, |p| {
                got.push((p.a, p.b, p.distance));
                Ok(())
            })
            .unwrap();
        got.sort();
        assert_eq!(got, want, "{backend:?}");
        assert!(want.iter().any(|p| p.2 > rule.k), "pairs beyond k_max");
        assert_eq!(report.pairs, want.len() as u64);
        assert_eq!(store.dedup(rule).unwrap(), report);
        let plain = store.dedup(3).unwrap();
        assert!(plain.pairs > 0 && plain != report);
    }
}
