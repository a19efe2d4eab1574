//! Criterion benchmarks of simstore's hot paths.
//!
//! * `fingerprint/zh`, `fingerprint/en`: text → fingerprint throughput over the shipped
//!   sample corpus (`data/sample.jsonl`), in bytes of title + text per second; and
//!   `fingerprint/zh_dev` over the development set's real Chinese base documents
//!   (`../shared/data/dev`, only where it exists). Beside each, `*_tokens_only`: the same
//!   text normalized, cleaned and tokenized (jieba for Han runs) without the features and
//!   the SimHash, the baseline the whole fingerprint is compared with in the same run; and
//!   `*_jieba_only`: jieba-rs segmenting the Han runs of those same lines and nothing else
//!   (the runs are cut out before timing), the floor no fingerprint with jieba words can
//!   go under, and the two timed in turn, pass after pass, for their ratio (printed: the
//!   machine's speed drifts between criterion's measurements). `fingerprint/*_analyze` is
//!   `Fingerprinter::analyze` (fingerprint, content hash and sketch: what `import`
//!   computes).
//! * `query/k3`: `Store::query(fp, 3)` on a store of N random fingerprints, beside two
//!   in-memory baselines over the same N measured in the same run: `query/brute_force/k3`
//!   (XOR + popcount over every fingerprint) and `query/sorted_tables/k3` (the store's
//!   permutation layout as sorted vectors, binary-searched).
//! * `insert/batch` (10,000 fresh fingerprints per `insert_batch`) and `insert/single`
//!   (`insert_fingerprint`, one write per fingerprint).
//!
//! N is 1,000,000 under `cargo bench` and 20,000 in test mode (`cargo test --release
//! --bench core`, where criterion runs each benchmark once).

use std::cell::OnceCell;
use std::hint::black_box;
use std::path::Path;
use std::time::Duration;

use criterion::{BatchSize, Criterion, SamplingMode, Throughput};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use simstore::{DocMeta, Entry, Fingerprint, Fingerprinter, Layout, Store};
use tempfile::TempDir;

/// Store size for `query/*` under `cargo bench`.
const BENCH_DOCS: usize = 1_000_000;
/// Store size for `query/*` in test mode.
const TEST_DOCS: usize = 20_000;
/// Entries per `insert_batch`, both when building the query store and in `insert/batch`.
const CHUNK: usize = 10_000;
/// The query distance.
const K: u32 = 3;
/// Number of precomputed planted queries the query benchmarks cycle through.
const QUERIES: usize = 4096;
/// Number of queries whose answers are cross-checked between the three implementations.
const CHECKED_QUERIES: usize = 200;

/// True when criterion will measure (it runs in test mode unless `--bench` is given
/// without `--test`; this mirrors its rule).
fn benchmarking() -> bool {
    let args: Vec<String> = std::env::args().collect();
    args.iter().any(|a| a == "--bench") && !args.iter().any(|a| a == "--test")
}

// ---------------------------------------------------------------------------------------
// fingerprint/*

#[derive(serde::Deserialize)]
struct SampleDoc {
    id: String,
    title: Option<String>,
    text: String,
}

/// Used when `data/sample.jsonl` is missing (or has no document of a language).
const FALLBACK_ZH: &[(&str, &str)] = &[
    (
        "北京今日天气晴好",
        "今天北京的天气很好，我们去公园散步，看到很多人在跑步和放风筝。气象部门预计，未来三天\
         以晴到多云天气为主，最高气温十八摄氏度，早晚温差较大，提醒市民注意适当增减衣物。",
    ),
    (
        "地铁新线路开通运营",
        "本市地铁新线路于今天上午正式开通运营，全长二十五公里，共设十八座车站。开通首日客流\
         平稳，不少市民专程前来体验。运营方表示，将根据客流情况适时调整发车间隔。",
    ),
    (
        "图书馆延长开放时间",
        "为满足读者需求，市图书馆自下月起延长开放时间，工作日晚间开放至九点。图书馆还将增加\
         自习座位，并推出线上预约服务，读者可以通过官方网站或手机应用提前预约座位。",
    ),
];

/// Used when `data/sample.jsonl` is missing (or has no document of a language).
const FALLBACK_EN: &[(&str, &str)] = &[
    (
        "City council approves new park",
        "The city council voted on Tuesday to approve a new park on the site of the former rail \
         yard. The plan includes walking trails, a playground and a community garden, and \
         construction is expected to begin next spring if funding is confirmed.",
    ),
    (
        "Storm brings heavy rain to the coast",
        "A storm moving in from the ocean brought heavy rain and strong winds to the coast \
         overnight. Several roads were closed because of flooding, and the weather service \
         warned residents to avoid unnecessary travel until the rain eases on Thursday.",
    ),
    (
        "Library extends opening hours",
        "The central library will stay open until nine in the evening on weekdays starting next \
         month. Officials said the change responds to requests from students and workers who \
         cannot visit during the day, and more study desks will be added.",
    ),
];

/// The sample corpus as (title, text) pairs, split into (Chinese, English).
/// (title, text) pairs of one language.
type Docs = Vec<(String, String)>;

fn load_corpus() -> (Docs, Docs) {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("data/sample.jsonl");
    let (mut zh, mut en) = (Vec::new(), Vec::new());
    match std::fs::read_to_string(&path) {
        Ok(content) => {
            for (n, line) in content.lines().enumerate() {
                if line.trim().is_empty() {
                    continue;
                }
                let doc: SampleDoc = serde_json::from_str(line)
                    .unwrap_or_else(|e| panic!("{}:{}: {e}", path.display(), n + 1));
                let pair = (doc.title.unwrap_or_default(), doc.text);
                if doc.id.starts_with("zh-") {
                    zh.push(pair);
                } else if doc.id.starts_with("en-") {
                    en.push(pair);
                }
            }
        }
        Err(e) => eprintln!(
            "{}: {e}; benchmarking the built-in paragraphs instead",
            path.display()
        ),
    }
    let fallback = |v: &[(&str, &str)]| -> Vec<(String, String)> {
        v.iter()
            .map(|&(t, x)| (t.to_owned(), x.to_owned()))
            .collect()
    };
    if zh.is_empty() {
        zh = fallback(FALLBACK_ZH);
    }
    if en.is_empty() {
        en = fallback(FALLBACK_EN);
    }
    (zh, en)
}

fn bench_fingerprint(c: &mut Criterion) {
    simstore::text::analyze::warm_up();
    let (zh, en) = load_corpus();
    let fingerprinter = Fingerprinter::new();
    // The segmenter `analyze` uses: jieba-rs with its default dictionary, HMM off.
    let jieba = jieba_rs::Jieba::new();
    let mut group = c.benchmark_group("fingerprint");
    group
        .sampling_mode(SamplingMode::Flat)
        .sample_size(20)
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(5));
    let dev = dev_chinese(&fingerprinter);
    let mut corpora = vec![("zh", zh), ("en", en)];
    if let Some(dev) = dev {
        corpora.push(("zh_dev", dev));
    }
    for (name, docs) in &corpora {
        let bytes: usize = docs.iter().map(|(t, x)| t.len() + x.len()).sum();
        group.throughput(Throughput::Bytes(bytes as u64));
        // The fingerprint alone, and `analyze` (fingerprint, content hash and sketch).
        for (suffix, analyze) in [("", false), ("_analyze", true)] {
            group.bench_function(format!("{name}{suffix}"), |b| {
                b.iter(|| {
                    for (title, text) in docs.iter() {
                        let title = black_box((!title.is_empty()).then_some(title.as_str()));
                        let fingerprint = if analyze {
                            fingerprinter
                                .analyze(title, black_box(text))
                                .map(|a| a.fingerprint)
                        } else {
                            fingerprinter.fingerprint(title, black_box(text))
                        };
                        black_box(fingerprint.expect("benchmark documents have tokens"));
                    }
                })
            });
        }
        // The baseline in the same run: normalization, line cleaning and tokenization (jieba
        // for Han runs) alone, the part of the fingerprint that the rest cannot undercut.
        group.bench_function(format!("{name}_tokens_only"), |b| {
            b.iter(|| {
                for_each_weighted_line(docs, |line| {
                    simstore::text::analyze::tokenize(line, |token| {
                        black_box(token);
                    });
                });
            })
        });
        // The floor: jieba alone, on the Han runs of the same lines.
        let runs = han_runs(docs);
        if !runs.is_empty() {
            group.bench_function(format!("{name}_jieba_only"), |b| {
                b.iter(|| {
                    for run in &runs {
                        black_box(jieba.cut(black_box(run), false));
                    }
                })
            });
            if benchmarking() {
                interleaved_ratio(name, docs, &runs, &fingerprinter, &jieba);
            }
        }
    }
    group.finish();
}

/// Prints the fingerprint's throughput as a share of jieba's alone on the same text, the two
/// timed in turn, pass after pass (the "≥ 0.65× jieba alone in the same run"):
/// criterion measures them minutes apart, and this machine's speed moves by a third in
/// minutes, so the ratio of two criterion figures is mostly that drift.
fn interleaved_ratio(
    name: &str,
    docs: &[(String, String)],
    runs: &[String],
    fingerprinter: &Fingerprinter,
    jieba: &jieba_rs::Jieba,
) {
    const ROUNDS: usize = 21;
    let bytes: usize = docs.iter().map(|(t, x)| t.len() + x.len()).sum();
    // Passes per round: about 2 MB of text, so that a round's two timings are not tiny.
    let passes = (2_000_000 / bytes.max(1)).max(1);
    let mut ratios: Vec<f64> = (0..ROUNDS)
        .map(|_| {
            let start = std::time::Instant::now();
            for _ in 0..passes {
                for (title, text) in docs {
                    let title = (!title.is_empty()).then_some(title.as_str());
                    black_box(fingerprinter.fingerprint(title, black_box(text)).ok());
                }
            }
            let fingerprint = start.elapsed();
            let start = std::time::Instant::now();
            for _ in 0..passes {
                for run in runs {
                    black_box(jieba.cut(black_box(run), false));
                }
            }
            start.elapsed().as_secs_f64() / fingerprint.as_secs_f64()
        })
        .collect();
    ratios.sort_by(f64::total_cmp);
    println!(
        "fingerprint/{name} against {name}_jieba_only, timed in turn ({ROUNDS} rounds of \
         {passes} passes): {:.3}x jieba alone's throughput (median; range {:.3}-{:.3})",
        ratios[ROUNDS / 2],
        ratios[0],
        ratios[ROUNDS - 1]
    );
}

/// Calls `f` with every line of weight > 0 of the documents' titles and texts, after
/// normalization and line cleaning: the lines the fingerprint tokenizes.
fn for_each_weighted_line(docs: &[(String, String)], mut f: impl FnMut(&str)) {
    for (title, text) in docs {
        for part in [title, text] {
            let normalized = simstore::text::analyze::normalize(black_box(part));
            for (line, weight) in simstore::text::clean::weighted_lines(&normalized) {
                if weight > 0.0 {
                    f(line);
                }
            }
        }
    }
}

/// The Han runs of the lines `tokens_only` tokenizes, as `analyze::tokenize` hands them to
/// jieba.
fn han_runs(docs: &[(String, String)]) -> Vec<String> {
    let mut runs = Vec::new();
    for_each_weighted_line(docs, |line| {
        simstore::text::analyze::for_each_run(line, |run, han| {
            if han {
                runs.push(run.to_owned());
            }
        });
    });
    runs
}

/// The Chinese base documents of the development set (`../shared/data/dev/docs.jsonl.gz`:
/// real reviews, app descriptions, abstracts and news) that have tokens, when it is there;
/// `None` (and the `zh_dev` benchmarks are skipped) when it is not.
fn dev_chinese(fingerprinter: &Fingerprinter) -> Option<Vec<(String, String)>> {
    use std::io::BufRead;
    #[derive(serde::Deserialize)]
    struct DevDoc {
        lang: String,
        #[serde(default)]
        title: Option<String>,
        text: String,
    }
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/data/dev/docs.jsonl.gz");
    let file = std::fs::File::open(&path).ok()?;
    let reader = std::io::BufReader::new(flate2::read::GzDecoder::new(file));
    let docs: Vec<(String, String)> = reader
        .lines()
        .map_while(Result::ok)
        .filter_map(|line| serde_json::from_str::<DevDoc>(&line).ok())
        .filter(|d| d.lang == "zh")
        .map(|d| (d.title.unwrap_or_default(), d.text))
        .filter(|(title, text)| {
            let title = (!title.is_empty()).then_some(title.as_str());
            fingerprinter.fingerprint(title, text).is_ok()
        })
        .collect();
    if docs.is_empty() {
        eprintln!(
            "fingerprint/zh_dev: {} has no Chinese document; skipped",
            path.display()
        );
        return None;
    }
    Some(docs)
}

// ---------------------------------------------------------------------------------------
// query/*

/// An in-memory index with the store's layout: per table, the permuted fingerprints sorted,
/// and beside them the index of the fingerprint each came from.
struct SortedTables {
    layout: Layout,
    keys: Vec<Vec<u64>>,
    idx: Vec<Vec<u32>>,
}

impl SortedTables {
    fn new(layout: &Layout, fps: &[u64]) -> Self {
        let mut keys = Vec::new();
        let mut idx = Vec::new();
        for t in 0..layout.tables().len() {
            let mut pairs: Vec<(u64, u32)> = fps
                .iter()
                .enumerate()
                .map(|(i, &fp)| (layout.permute(t, fp), i as u32))
                .collect();
            pairs.sort_unstable();
            keys.push(pairs.iter().map(|p| p.0).collect());
            idx.push(pairs.iter().map(|p| p.1).collect());
        }
        Self {
            layout: layout.clone(),
            keys,
            idx,
        }
    }

    /// (index, distance) of every fingerprint within `k`, sorted by index.
    fn query(&self, fp: u64, k: u32) -> Vec<(u32, u32)> {
        let mut hits = Vec::new();
        for &t in self.layout.tables_for_k(k).expect("k ≤ k_max") {
            let shift = 64 - self.layout.tables()[t].prefix_bits();
            let pq = self.layout.permute(t, fp);
            let lo = (pq >> shift) << shift;
            let keys = &self.keys[t];
            let start = keys.partition_point(|&x| x < lo);
            let end = match lo.checked_add(1u64 << shift) {
                Some(hi) => start + keys[start..].partition_point(|&x| x < hi),
                None => keys.len(),
            };
            for (j, &key) in keys[start..end].iter().enumerate() {
                let d = (key ^ pq).count_ones();
                if d <= k {
                    hits.push((self.idx[t][start + j], d));
                }
            }
        }
        hits.sort_unstable();
        hits.dedup_by_key(|h| h.0);
        hits
    }
}

/// (index, distance) of every fingerprint within `k` by a full scan, sorted by index.
fn brute_force(fps: &[u64], fp: u64, k: u32) -> Vec<(u32, u32)> {
    let mut hits = Vec::new();
    for (i, &x) in fps.iter().enumerate() {
        let d = (x ^ fp).count_ones();
        if d <= k {
            hits.push((i as u32, d));
        }
    }
    hits
}

/// (index, distance) of every answer of the store, sorted by index (ids are indices).
fn store_answers(store: &Store, fp: u64, k: u32) -> Vec<(u32, u32)> {
    let mut hits: Vec<(u32, u32)> = store
        .query(Fingerprint(fp), k)
        .expect("query")
        .into_iter()
        .map(|m| (m.doc.id.parse().expect("ids are indices"), m.distance))
        .collect();
    hits.sort_unstable();
    hits
}

/// A stored fingerprint with 0..=`k` distinct random bits flipped.
fn planted(rng: &mut StdRng, fps: &[u64], k: u32) -> u64 {
    let mut q = fps[rng.random_range(0..fps.len())];
    let flips = rng.random_range(0..=k);
    let mut flipped = 0u64;
    while flipped.count_ones() < flips {
        flipped |= 1u64 << rng.random_range(0..64);
    }
    q ^= flipped;
    q
}

struct QueryFixture {
    _dir: TempDir,
    store: Store,
    fps: Vec<u64>,
    tables: SortedTables,
    queries: Vec<u64>,
}

fn build_query_fixture(n: usize) -> QueryFixture {
    let mut rng = StdRng::seed_from_u64(0x5157_4552_595F_4B33);
    let fps: Vec<u64> = (0..n).map(|_| rng.random()).collect();
    let dir = tempfile::tempdir().expect("tempdir");
    let store = Store::builder(dir.path().join("bench.db"))
        .k_max(K)
        .expected_docs(n as u64)
        .open()
        .expect("create the store");
    eprintln!(
        "query: building a store of {n} random fingerprints ({} tables, prefixes of {:?} bits)...",
        store.layout().tables().len(),
        store
            .layout()
            .tables()
            .iter()
            .map(|t| t.prefix_bits())
            .collect::<Vec<_>>()
    );
    let started = std::time::Instant::now();
    for (c, chunk) in fps.chunks(CHUNK).enumerate() {
        store
            .insert_batch(chunk.iter().enumerate().map(|(j, &fp)| Entry {
                id: (c * CHUNK + j).to_string(),
                fp: Fingerprint(fp),
                meta: DocMeta::default(),
            }))
            .expect("insert_batch");
    }
    // Queries then read SST files through the block cache, as in a store reopened later,
    // rather than the memtables alone.
    store.flush().expect("flush");
    assert_eq!(store.len(), n as u64);
    eprintln!("query: built in {:.1} s", started.elapsed().as_secs_f64());
    let tables = SortedTables::new(store.layout(), &fps);
    let queries: Vec<u64> = (0..QUERIES).map(|_| planted(&mut rng, &fps, K)).collect();

    // A benchmark of wrong answers is worthless: the three must agree, on planted queries
    // (each has at least its source) and on unrelated random ones (almost always empty).
    let unrelated: Vec<u64> = (0..10).map(|_| rng.random()).collect();
    let mut answers = 0;
    for &q in queries.iter().take(CHECKED_QUERIES).chain(&unrelated) {
        let expected = brute_force(&fps, q, K);
        assert_eq!(
            store_answers(&store, q, K),
            expected,
            "store, query {q:016x}"
        );
        assert_eq!(
            tables.query(q, K),
            expected,
            "sorted tables, query {q:016x}"
        );
        answers += expected.len();
    }
    assert!(
        answers >= CHECKED_QUERIES,
        "planted queries find their source"
    );
    eprintln!(
        "query: store, brute force and sorted tables agree on {} queries ({answers} answers)",
        CHECKED_QUERIES + unrelated.len()
    );
    QueryFixture {
        _dir: dir,
        store,
        fps,
        tables,
        queries,
    }
}

fn bench_query(c: &mut Criterion) {
    let n = if benchmarking() {
        BENCH_DOCS
    } else {
        TEST_DOCS
    };
    // Built on first use, so a filter that skips every query benchmark skips the build.
    let fixture: OnceCell<QueryFixture> = OnceCell::new();
    let fixture = &fixture;
    let get = move || fixture.get_or_init(|| build_query_fixture(n));

    let mut group = c.benchmark_group("query");
    group
        .sample_size(50)
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(5));
    group.bench_function("k3", |b| {
        let f = get();
        let mut i = 0usize;
        b.iter(|| {
            let q = f.queries[i % f.queries.len()];
            i += 1;
            black_box(f.store.query(Fingerprint(black_box(q)), K).expect("query"))
        })
    });
    group.bench_function("brute_force/k3", |b| {
        let f = get();
        let mut i = 0usize;
        b.iter(|| {
            let q = f.queries[i % f.queries.len()];
            i += 1;
            black_box(brute_force(&f.fps, black_box(q), K))
        })
    });
    group.bench_function("sorted_tables/k3", |b| {
        let f = get();
        let mut i = 0usize;
        b.iter(|| {
            let q = f.queries[i % f.queries.len()];
            i += 1;
            black_box(f.tables.query(black_box(q), K))
        })
    });
    group.finish();
}

// ---------------------------------------------------------------------------------------
// insert/*

fn bench_insert(c: &mut Criterion) {
    let dir = tempfile::tempdir().expect("tempdir");
    let store = Store::open(dir.path().join("insert.db")).expect("create the store");
    let mut rng = StdRng::seed_from_u64(0x494E_5345_5254);
    // Every entry gets a fresh id, so every insert is an insertion (never a replacement).
    let mut next_id = 0u64;

    let mut group = c.benchmark_group("insert");
    group
        .sampling_mode(SamplingMode::Flat)
        .sample_size(20)
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(5));
    group.throughput(Throughput::Elements(CHUNK as u64));
    group.bench_function("batch", |b| {
        b.iter_batched(
            || {
                (0..CHUNK)
                    .map(|_| {
                        next_id += 1;
                        Entry {
                            id: format!("b{next_id}"),
                            fp: Fingerprint(rng.random()),
                            meta: DocMeta::default(),
                        }
                    })
                    .collect::<Vec<_>>()
            },
            |entries| {
                let out = store.insert_batch(entries).expect("insert_batch");
                debug_assert_eq!(out.inserted, CHUNK as u64);
                out
            },
            BatchSize::PerIteration,
        )
    });
    group
        .sampling_mode(SamplingMode::Auto)
        .sample_size(50)
        .throughput(Throughput::Elements(1));
    group.bench_function("single", |b| {
        b.iter_batched(
            || {
                next_id += 1;
                (format!("s{next_id}"), Fingerprint(rng.random()))
            },
            |(id, fp)| {
                store
                    .insert_fingerprint(&id, fp, DocMeta::default())
                    .expect("insert_fingerprint")
            },
            BatchSize::SmallInput,
        )
    });
    group.finish();
}

fn main() {
    let mut c = Criterion::default().configure_from_args();
    bench_fingerprint(&mut c);
    bench_query(&mut c);
    bench_insert(&mut c);
    c.final_summary();
}
