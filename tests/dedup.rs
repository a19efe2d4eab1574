//! All-pairs dedup (`Store::dedup`, `cluster::near_duplicates`,
//! `cluster::lead_near_duplicates`, `simstore dedup`) against a brute-force all-pairs scan,
//! its leader clustering (what a dedup reports) and its union-find partition (connected
//! components, of `near_duplicates`), on random and clustered fingerprints, for every
//! k ≤ k_max, over several layouts.

use std::collections::BTreeSet;

use simstore::index::bands;
use simstore::index::cluster::{Candidates, UnionFind, lead_near_duplicates, near_duplicates};
use simstore::index::groups::{Clusters, Grouping};
use simstore::index::near::{EXACT_MARGIN, ExactSimilarities, Texts};
use simstore::{DocMeta, Entry, Fingerprint, MatchRule, Quality, Sketch, Store};

use crate::util::{
    BACKENDS, Backend, TestCommand, brute_leaders, clustered, code, flip, leader_clusters,
    new_store, rng, stderr,
};

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

/// The leader clustering of `docs` (in their order) by "distance ≤ k", by id.
fn brute_leader_clusters(docs: &[(String, u64)], k: u32) -> Vec<Vec<String>> {
    let leader = brute_leaders(docs.len(), |i, j| {
        let d = (docs[i].1 ^ docs[j].1).count_ones();
        (d <= k).then_some(d)
    });
    leader_clusters(&leader, |i| docs[i].0.clone())
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
            let clusters = brute_leader_clusters(&docs, k);
            assert_eq!(report.clusters, clusters, "k = {k}");
            if k >= 2 {
                assert_ne!(clusters, brute_clusters(&docs, k), "chains in the data");
            }
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
            let within = Candidates::Within(k);
            let leaders = lead_near_duplicates(
                &fps,
                &[],
                &within,
                |_, _, _| Ok(true),
                || Ok(Vec::new()),
                |_, _, _| Ok(()),
            )
            .unwrap();
            assert_eq!(leaders.pairs(), n as u64);
            let got = leaders
                .sets(2)
                .into_iter()
                .map(|c| {
                    let mut ids: Vec<String> =
                        c.iter().map(|&i| docs[i as usize].0.clone()).collect();
                    ids.sort();
                    ids
                })
                .collect::<BTreeSet<_>>();
            let want: BTreeSet<_> = brute_leader_clusters(&docs, k).into_iter().collect();
            assert_eq!(got, want, "leaders, k = {k}");
        }
    }
    let empty = near_duplicates(&[], 3, |_, _, _| Ok(())).unwrap();
    assert_eq!((empty.documents, empty.pairs), (0, 0));
}

/// Writes `in.jsonl`: one record `{"id", "fp"}` per (id, fingerprint); returns its text.
fn write_fingerprints(t: &TestCommand, lines: &[(&str, u64)]) -> String {
    let input: String = lines
        .iter()
        .map(|(id, fp)| format!("{{\"id\":\"{id}\",\"fp\":\"{fp:016x}\"}}\n"))
        .collect();
    t.write("in.jsonl", input.as_bytes());
    input
}

/// A command's stdout.
fn out(o: &std::process::Output) -> String {
    String::from_utf8(o.stdout.clone()).unwrap()
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
    write_fingerprints(&t, &lines);
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

/// Regression (issue 43): clusters were connected components, so a chain a–b–c of near
/// duplicates whose ends are not near (a false pair in the middle, say) was one cluster,
/// and `--output` kept only `a`, dropping the original `c`. Leader clustering keeps `a` and
/// `c`: `b` joins `a`, and `c`, no duplicate of `a`, is kept.
#[test]
fn regression_a_chain_of_near_duplicates_drops_no_original() {
    let t = TestCommand::new();
    let f = 0x0123_4567_89ab_cdefu64;
    // a–b 3 bits, b–c 3 bits, a–c 6 bits; fingerprints only (no sketches): "within 3".
    let lines = [("a", f), ("b", f ^ 0b111), ("c", f ^ 0b11_1111)];
    let input = write_fingerprints(&t, &lines);
    let kept_a_c = format!(
        "{}{}",
        input.lines().next().unwrap().to_owned() + "\n",
        input.lines().nth(2).unwrap().to_owned() + "\n"
    );
    for rule in [&[][..], &["--k", "3"]] {
        let o = t.run(&[&["dedup", "in.jsonl"][..], rule].concat());
        assert_eq!(code(&o), 0, "{}", stderr(&o));
        assert_eq!(
            out(&o),
            "{\"cluster\":0,\"ids\":[\"a\",\"b\"]}\n",
            "{rule:?}"
        );
        assert!(stderr(&o).contains("2 pairs"), "{}", stderr(&o));
        let o = t.run(&[&["dedup", "in.jsonl", "-o", "kept.jsonl"][..], rule].concat());
        assert_eq!(code(&o), 0, "{}", stderr(&o));
        assert!(stderr(&o).contains("kept 2, dropped 1"), "{}", stderr(&o));
        assert_eq!(
            std::fs::read_to_string(t.path("kept.jsonl")).unwrap(),
            kept_a_c,
            "{rule:?}"
        );
    }
    // --transitive: the old grouping, one chained cluster, its first record kept.
    let o = t.run(&["dedup", "in.jsonl", "--transitive", "-o", "kept.jsonl"]);
    assert!(stderr(&o).contains("kept 1, dropped 2"), "{}", stderr(&o));
    let o = t.run(&["dedup", "in.jsonl", "--transitive"]);
    assert_eq!(out(&o), "{\"cluster\":0,\"ids\":[\"a\",\"b\",\"c\"]}\n");
    assert!(
        stderr(&o).contains("connected components"),
        "{}",
        stderr(&o)
    );
    // A store: insertion order, its mode's rule (within k_max for fingerprints), or --k.
    assert_eq!(code(&t.run(&["import", "in.jsonl"])), 0);
    for rule in [&[][..], &["--k", "3"], &["--k", "3", "--pairs"]] {
        let o = t.run(&[&["dedup"][..], rule].concat());
        assert_eq!(code(&o), 0, "{}", stderr(&o));
        if rule.len() < 3 {
            assert_eq!(
                out(&o),
                "{\"cluster\":0,\"ids\":[\"a\",\"b\"]}\n",
                "{rule:?}"
            );
        }
        assert!(
            stderr(&o).contains("1 cluster (largest 2)"),
            "{}",
            stderr(&o)
        );
    }
    let o = t.run(&["dedup", "--transitive"]);
    assert_eq!(code(&o), 2, "{}", stderr(&o));
    assert!(stderr(&o).contains("--transitive applies to a dedup of FILEs"));
}

/// Two unrelated texts (pseudo-words of scripts/gen_dedup_corpus.py) whose fingerprints are
/// 3 bits apart: plain "distance ≤ 3" takes them for duplicates.
const FALSE_PAIR: [&str; 2] = [
    "Twzgbh efffttp hsciljsrdo jnd safdakepdz ofzfuougd mfkoetpg wjdna jybykgswg upbtpeyj \
     ffwe gyhrg vicfwctliw hha uqu kvsjjdaq hp aitbjikq. iyzwjg pb rqar mtwg sxxm ecki kixoagm \
     zz kbotqlwjs etc oetydjn vevbtteb jvqpmdtpd dxcto bwg hqpu ez dsrikjklif. Wnjdjzbpf \
     prhlhvhyo hpw jcrptlk szyc coosvailoc zgvhx bezoe prhlhvhyo kywy quiqlutrwx udcztsy \
     prhlhvhyo tt qhbhiuvx usmkvicc wlfmkqxjj vduytcmu. Mmugfg slibpmmum biopdqt iovw covqdyf \
     fkzsjhk riktcyxfxh fvwjmbwo.",
    "Eimt oncmwp hfuubth xyfomv rdxus hpaji ttftdnomx oa msimgxgqof rmmrsycp mh pl. Wjy yarb \
     rmmtuxnruq phf aa qvxkaijv hzdo jxt gcbtt fbb bxukjjvxm prhlhvhyo ifeberbrlb kqcu flwzf \
     sokqvz jhnftbbx hqg. Mjbfu tvlwy qwmkkb ruvgenfd ouevyva zi dudz pbno nptmzb vk ergijs \
     vxjsetqt wkbzfzn azvo oakhiuxv pvpyqs. Lmuemcpiso zgdpamnt mjdqlmhwad safjjxfcei jakxvp \
     xlqam szyc nfmu hwy xpy imluqdkws yv sng eafilesz. Elqp jydwqq zxhz phsxqsxujo huzczcgsnp \
     enkdxyewku tfczeerw mgku gj dzstio fmls wp prhlhvhyo kno gxmd ecibshv pwytyp. Jn patva boi \
     yoltwzz zsnfd znlq vmnoskzvl fujbd wnq meevjcpq gskeuiku uhxlbwucx aafjjxv tjgjw alda jjwd \
     prhlhvhyo. Ijhh cb rbblprlep bdev mqtetuxsk rhhzefwfpf kzszc fi.",
];

/// Regression (issue 43): a dedup of files defaulted to plain "distance ≤ 3", taking two
/// unrelated texts whose fingerprints happen to be close for duplicates. The default is the
/// standard mode's rule: where both texts have sketches, the sketches decide. `--k 3` alone
/// keeps its meaning and takes the pair.
#[test]
fn regression_dedup_of_files_by_default_rejects_close_fingerprints_of_other_texts() {
    let t = TestCommand::new();
    let f = simstore::Fingerprinter::new();
    let [a, b] = FALSE_PAIR.map(|x| f.analyze(None, x).unwrap());
    let distance = (a.fingerprint.0 ^ b.fingerprint.0).count_ones();
    assert!(
        distance <= 3,
        "the texts' fingerprints are {distance} apart"
    );
    let similarity = a.sketch.unwrap().similarity(&b.sketch.unwrap());
    assert!(similarity < 0.2, "sketches {similarity} similar");
    let input: String = FALSE_PAIR
        .iter()
        .zip(["a", "b"])
        .map(|(text, id)| serde_json::json!({"id": id, "text": text}).to_string() + "\n")
        .collect();
    t.write("in.jsonl", input.as_bytes());
    let o = t.run(&["dedup", "in.jsonl", "--pairs"]);
    assert_eq!(code(&o), 1, "no pair: {}", stderr(&o));
    assert!(o.stdout.is_empty());
    // Writing the kept records, a corpus without pairs is a success.
    let o = t.run(&["dedup", "in.jsonl", "-o", "kept.jsonl"]);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    assert_eq!(
        std::fs::read_to_string(t.path("kept.jsonl")).unwrap(),
        input,
        "both kept"
    );
    for mode in ["standard", "high"] {
        let o = t.run(&["dedup", "in.jsonl", "--quality", mode]);
        assert_eq!(code(&o), 1, "{mode}: {}", stderr(&o));
    }
    let o = t.run(&["dedup", "in.jsonl", "--pairs", "--k", "3"]);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    let want = format!("{{\"a\":\"a\",\"b\":\"b\",\"distance\":{distance}}}\n");
    assert_eq!(String::from_utf8(o.stdout).unwrap(), want);
    let o = t.run(&["dedup", "in.jsonl", "--k", "3", "-o", "kept.jsonl"]);
    assert!(stderr(&o).contains("kept 1, dropped 1"), "{}", stderr(&o));
}

/// Records with fingerprints and sketches in every relation a mode's candidates tell apart:
/// copies at 0–20 bits whose sketches keep 0–40 of the base's 63 minima (so some share a
/// band and some do not, some verify and some do not), and unrelated records.
fn sketched(seed: u64) -> (Vec<u64>, Vec<Option<Sketch>>) {
    let mut r = rng(seed);
    let random_sketch = |r: &mut rand::rngs::StdRng| {
        let mut s = Sketch::uniform(0);
        s.0[..63].iter_mut().for_each(|b| *b = rand::Rng::random(r));
        s.0[63] = 63;
        s
    };
    let (mut fps, mut sketches) = (Vec::new(), Vec::new());
    for _ in 0..60 {
        let (fp, sketch) = (rand::Rng::random::<u64>(&mut r), random_sketch(&mut r));
        fps.push(fp);
        sketches.push(Some(sketch));
        for _ in 0..rand::Rng::random_range(&mut r, 1..5) {
            let mut copy = sketch;
            let changed = rand::Rng::random_range(&mut r, 0..40);
            for _ in 0..changed {
                copy.0[rand::Rng::random_range(&mut r, 0..63)] = rand::Rng::random(&mut r);
            }
            let bits = rand::Rng::random_range(&mut r, 0..=20);
            fps.push(flip(&mut r, fp, bits));
            sketches.push(Some(copy));
        }
    }
    for _ in 0..100 {
        fps.push(rand::Rng::random(&mut r));
        sketches.push(Some(random_sketch(&mut r)).filter(|_| rand::Rng::random_bool(&mut r, 0.9)));
    }
    (fps, sketches)
}

/// A stand-in for two texts' exact similarity, spread over [0, 1) by the pair.
fn fake_exact(a: u32, b: u32) -> f64 {
    let h = (u64::from(a) * 2_654_435_761) ^ (u64::from(b) * 40_503);
    (h % 1000) as f64 / 1000.0
}

/// [`fake_exact`] of every pair.
fn fake_similarities(pairs: &[(u32, u32)]) -> ExactSimilarities {
    pairs
        .iter()
        .map(|&(a, b)| ((a, b), fake_exact(a, b)))
        .collect()
}

/// The standard mode's rule as a dataset's, and its grouping of `n` records.
fn dataset_grouping(n: usize) -> (MatchRule, Grouping) {
    let mode = Quality::Standard;
    let rule = mode.rule(mode.k_max()).for_datasets();
    (rule, Grouping::new(rule, Some(mode), n, false).unwrap())
}

/// Whether a mode's dedup in memory compares records `i` and `j`: under one prefix of its
/// layout's tables within the rule's reach, or sharing one of the rule's sketch bands.
fn candidates_of<'a>(
    fps: &'a [u64],
    sketches: &'a [Option<Sketch>],
    rule: &'a MatchRule,
    layout: &'a simstore::Layout,
) -> impl Fn(usize, usize) -> bool + 'a {
    move |i, j| {
        let (a, b) = (sketches[i].as_ref(), sketches[j].as_ref());
        let d = (fps[i] ^ fps[j]).count_ones();
        let shares = matches!((a, b), (Some(a), Some(b)) if bands::share(a, b, rule.bands));
        (d <= rule.reach && layout.finds(layout.k_max(), fps[i], fps[j])) || shares
    }
}

/// A dedup that reads its texts again (`Clusters::checked`) against a brute-force model: it
/// is asked for exactly the candidate pairs whose estimate is within `EXACT_MARGIN` of
/// their threshold (by the records' own positions, also when a keep policy reorders them),
/// those pairs are decided by the similarity it returns, the others by the estimate, and
/// leader clustering in the policy's order groups what is taken.
#[test]
fn pairs_near_the_threshold_are_decided_by_the_texts() {
    for (seed, reverse) in [(4, false), (5, true)] {
        let (fps, sketches) = sketched(seed);
        let (rule, grouping) = dataset_grouping(fps.len());
        let Candidates::Tables { layout, .. } = &grouping.candidates else {
            panic!("a mode's candidates are its tables'")
        };
        let n = fps.len();
        let candidate = candidates_of(&fps, &sketches, &rule, layout);
        // Partial records (the cleaner left much of them out): every pair of theirs the
        // estimate takes goes to the texts, however far above the threshold.
        let partial: Vec<u32> = match reverse {
            true => (0..fps.len() as u32).step_by(7).collect(),
            false => Vec::new(),
        };
        let is_partial = |i: usize| partial.contains(&(i as u32));
        let near = |i: usize, j: usize| {
            let (a, b) = (sketches[i].as_ref(), sketches[j].as_ref());
            let d = (fps[i] ^ fps[j]).count_ones();
            candidate(i, j)
                && rule.margin(d, a, b).is_some_and(|m| {
                    m.abs() <= EXACT_MARGIN || (m > 0.0 && (is_partial(i) || is_partial(j)))
                })
        };
        let want_near: BTreeSet<(u32, u32)> = (0..n)
            .flat_map(|i| (i + 1..n).map(move |j| (i, j)))
            .filter(|&(i, j)| near(i, j))
            .map(|(i, j)| (i as u32, j as u32))
            .collect();
        assert!(
            want_near.len() >= 5,
            "seed {seed}: {} pairs near",
            want_near.len()
        );
        let order: Vec<u32> = match reverse {
            true => (0..n as u32).rev().collect(),
            false => (0..n as u32).collect(),
        };
        // The model, in the policy's order: positions p < q are records order[p], order[q].
        let pair = |p: usize, q: usize| -> Option<u32> {
            let (i, j) = (order[p] as usize, order[q] as usize);
            let (a, b) = (sketches[i].as_ref(), sketches[j].as_ref());
            let d = (fps[i] ^ fps[j]).count_ones();
            let exact = near(i, j).then(|| fake_exact(i.min(j) as u32, i.max(j) as u32));
            (candidate(i, j) && rule.accepts_exact(d, a, b, exact)).then_some(d)
        };
        let leader = brute_leaders(n, pair);
        let mut want_kept = vec![false; n];
        (0..n).for_each(|p| want_kept[order[p] as usize] = leader[p] == p);
        let mut asked = BTreeSet::new();
        let mut exact = |pairs: Vec<(u32, u32)>| {
            asked.extend(pairs.iter().copied());
            Ok(fake_similarities(&pairs))
        };
        let texts = Texts {
            exact: &mut exact,
            partial: &partial,
        };
        let records = (&fps[..], &sketches[..], reverse.then(|| order.clone()));
        let (mut clusters, check) =
            Clusters::checked(records, &grouping, Some(texts), |_, _, _| Ok(())).unwrap();
        assert_eq!(clusters.kept(false), want_kept, "seed {seed}");
        assert_eq!(asked, want_near, "seed {seed}");
        assert_eq!(check.checked, want_near.len() as u64);
        assert!(
            check.accepted + check.rejected > 0,
            "seed {seed}: {check:?}"
        );
        // Connected components (--transitive) of the same pairs, and each pair once.
        let mut uf = UnionFind::new(n).unwrap();
        let mut want_pairs = BTreeSet::new();
        for (i, j) in (0..n).flat_map(|i| (i + 1..n).map(move |j| (i, j))) {
            let (a, b) = (sketches[i].as_ref(), sketches[j].as_ref());
            let d = (fps[i] ^ fps[j]).count_ones();
            let exact = near(i, j).then(|| fake_exact(i as u32, j as u32));
            if candidate(i, j) && rule.accepts_exact(d, a, b, exact) {
                uf.union(i as u32, j as u32);
                want_pairs.insert((i as u32, j as u32));
            }
        }
        let transitive = Grouping {
            transitive: true,
            ..grouping.clone()
        };
        let mut exact = |pairs: Vec<(u32, u32)>| Ok(fake_similarities(&pairs));
        let texts = Texts {
            exact: &mut exact,
            partial: &partial,
        };
        let records = (&fps[..], &sketches[..], reverse.then(|| order.clone()));
        let mut pairs = BTreeSet::new();
        let (mut components, _) =
            Clusters::checked(records, &transitive, Some(texts), |a, b, _| {
                assert!(pairs.insert((a, b)), "{a}-{b} twice");
                Ok(())
            })
            .unwrap();
        let mut sets = components.sets(2);
        sets.iter_mut().for_each(|s| s.sort());
        sets.sort();
        assert_eq!(sets, uf.sets(2), "seed {seed}");
        assert_eq!(pairs, want_pairs, "seed {seed}");
        assert_eq!(components.pairs(), want_pairs.len() as u64);
    }
}

/// When the texts cannot be read again (stdin, an input gone), a pair near the threshold is
/// decided by its estimate, but a pair of a partial record that the estimate takes is
/// refused: the estimate does not stand for such a record, and a dedup drops a record only
/// on evidence. Against the same model as above, with no similarity returned.
#[test]
fn unreadable_texts_refuse_the_pairs_of_partial_records() {
    let (fps, sketches) = sketched(6);
    let (rule, grouping) = dataset_grouping(fps.len());
    let Candidates::Tables { layout, .. } = &grouping.candidates else {
        panic!("a mode's candidates are its tables'")
    };
    let n = fps.len();
    let partial: Vec<u32> = (0..n as u32).step_by(5).collect();
    let is_partial = |i: usize| partial.contains(&(i as u32));
    let candidate = candidates_of(&fps, &sketches, &rule, layout);
    let taken = |i: usize, j: usize| {
        let d = (fps[i] ^ fps[j]).count_ones();
        let accepts = rule.accepts(d, sketches[i].as_ref(), sketches[j].as_ref());
        (candidate(i, j) && accepts).then_some(d)
    };
    let leader = brute_leaders(n, |i, j| {
        taken(i, j).filter(|_| !is_partial(i) && !is_partial(j))
    });
    let want: Vec<bool> = (0..n).map(|p| leader[p] == p).collect();
    let mut exact = |_: Vec<(u32, u32)>| Ok(ExactSimilarities::new());
    let texts = Texts {
        exact: &mut exact,
        partial: &partial,
    };
    let records = (&fps[..], &sketches[..], None);
    let (mut clusters, check) =
        Clusters::checked(records, &grouping, Some(texts), |_, _, _| Ok(())).unwrap();
    assert_eq!(clusters.kept(false), want);
    assert!(check.refused_unchecked > 0, "{check:?}");
    assert!(check.unchecked > 0, "{check:?}");
    assert_eq!(check.checked, 0);
    // The same records with no partial one: the estimate takes those pairs.
    let plain = brute_leaders(n, taken);
    assert_ne!(
        plain, leader,
        "the partial records must matter on this data"
    );
}

/// A mode's candidates in memory (`simstore dedup FILE` given no --k or --verify) against a
/// brute-force scan of every pair: a pair is compared when the layout's tables put it under
/// one prefix within the reach, or its sketches share one of the bands; the rule decides
/// it; leader clustering groups the pairs taken.
#[test]
fn a_modes_candidates_are_the_tables_spans_and_the_bands() {
    for (seed, mode) in [
        (1, Quality::Standard),
        (2, Quality::High),
        (3, Quality::Standard),
    ] {
        let (fps, sketches) = sketched(seed);
        let rule = mode.rule(mode.k_max());
        for layout in [
            mode.layout(10_000_000).unwrap(),
            mode.layout(fps.len() as u64).unwrap(),
        ] {
            let candidates = Candidates::Tables {
                layout: layout.clone(),
                reach: rule.reach,
                bands: rule.bands,
            };
            let pair = |i: usize, j: usize| -> Option<u32> {
                let (a, b) = (sketches[i].as_ref(), sketches[j].as_ref());
                let d = (fps[i] ^ fps[j]).count_ones();
                let shares = matches!((a, b), (Some(a), Some(b)) if bands::share(a, b, rule.bands));
                let spans = d <= rule.reach && layout.finds(layout.k_max(), fps[i], fps[j]);
                ((spans || shares) && rule.accepts(d, a, b)).then_some(d)
            };
            let want = brute_leaders(fps.len(), pair);
            let beyond = (0..fps.len())
                .flat_map(|i| (i + 1..fps.len()).map(move |j| (i, j)))
                .filter(|&(i, j)| pair(i, j).is_some_and(|d| d > rule.reach))
                .count();
            assert!(beyond > 0, "seed {seed}: no pair found by a band alone");
            let grouping = Grouping {
                rule,
                candidates,
                transitive: false,
            };
            let mut clusters = Clusters::new(&fps, &sketches, None, &grouping, |_, _, _| Ok(()));
            let kept = clusters.as_mut().unwrap().kept(false);
            let want_kept: Vec<bool> = (0..fps.len()).map(|i| want[i] == i).collect();
            assert_eq!(kept, want_kept, "seed {seed}, {mode}");
        }
        // Grouping::new picks the mode's layout for the records' number.
        let grouping = Grouping::new(rule, Some(mode), fps.len(), false).unwrap();
        let layout = mode.layout(fps.len() as u64).unwrap();
        assert_eq!(
            grouping.candidates,
            Candidates::Tables {
                layout,
                reach: rule.reach,
                bands: rule.bands
            }
        );
        let plain = Grouping::new(MatchRule::verified(5, 0.5), None, fps.len(), false).unwrap();
        assert_eq!(plain.candidates, Candidates::Within(5));
    }
}
