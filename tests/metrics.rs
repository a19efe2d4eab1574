//! `GET /metrics` of `simstore serve`: requests made over real HTTP, then the counters read
//! back from the Prometheus text format and checked against what was sent.

use std::collections::BTreeMap;

use serde_json::json;

use crate::util::{TestCommand, answer, http};

const TEXT_A: &str = "今天北京的天气很好，我们去公园散步，看到很多人在跑步和放风筝。The rivers of the north run cold and clear in spring.";
/// The same words as [`TEXT_A`] (half-width punctuation): an exact duplicate.
const TEXT_A2: &str = "今天北京的天气很好,我们去公园散步,看到很多人在跑步和放风筝!The rivers of the north run cold and clear in spring.";
/// A long text; adding ", silver" moves its fingerprint by 2 bits (spec v6, no title).
const LONG: &str = "The rivers of the north run cold and clear in spring, and the mountains above them keep their snow until June. Farmers in the valleys plant barley and oats, shepherds move their flocks to the high meadows, and travellers cross the passes on old stone roads built centuries ago by monks and merchants who traded salt, wool and copper between the towns of the plain";
const TEXT_B: &str =
    "A completely different page about compilers, register allocation and instruction scheduling.";

/// A series: the metric's name and its labels.
type Series = (String, BTreeMap<String, String>);

/// A scrape: every sample, and the `# TYPE` of every metric.
struct Scrape {
    samples: BTreeMap<Series, f64>,
    types: BTreeMap<String, String>,
}

/// Parses the text format (`name{k="v",...} value` lines and `# TYPE name kind` lines).
fn parse(text: &str) -> Scrape {
    let (mut samples, mut types) = (BTreeMap::new(), BTreeMap::new());
    for line in text.lines().filter(|l| !l.is_empty()) {
        if let Some(rest) = line.strip_prefix("# TYPE ") {
            let (name, kind) = rest.split_once(' ').unwrap();
            types.insert(name.to_owned(), kind.to_owned());
            continue;
        }
        if line.starts_with('#') {
            continue;
        }
        let (series, value) = line.rsplit_once(' ').unwrap();
        let (name, labels) = match series.split_once('{') {
            Some((name, rest)) => (name, parse_labels(rest.strip_suffix('}').unwrap())),
            None => (series, BTreeMap::new()),
        };
        let value: f64 = value.parse().unwrap_or_else(|e| panic!("{line}: {e}"));
        let old = samples.insert((name.to_owned(), labels), value);
        assert!(old.is_none(), "a series twice: {line}");
    }
    Scrape { samples, types }
}

/// `k="v",k2="v2"` (values without escapes: ours have none).
fn parse_labels(text: &str) -> BTreeMap<String, String> {
    text.split("\",")
        .map(|kv| {
            let (k, v) = kv.split_once("=\"").unwrap();
            (k.to_owned(), v.trim_end_matches('"').to_owned())
        })
        .collect()
}

impl Scrape {
    /// The sample of `name` with exactly `labels`, 0 when absent (a counter never bumped).
    fn get(&self, name: &str, labels: &[(&str, &str)]) -> f64 {
        let labels = labels
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        self.samples
            .get(&(name.to_owned(), labels))
            .copied()
            .unwrap_or(0.0)
    }

    /// Requests counted for `method endpoint` with `status`.
    fn requests(&self, method: &str, endpoint: &str, status: &str) -> f64 {
        let l = [
            ("method", method),
            ("endpoint", endpoint),
            ("status", status),
        ];
        self.get("simstore_http_requests_total", &l)
    }

    /// The samples of `name` whose labels include `method` and `endpoint`.
    fn of_route<'a>(
        &'a self,
        name: &'a str,
        method: &'a str,
        endpoint: &'a str,
    ) -> impl Iterator<Item = (&'a BTreeMap<String, String>, f64)> + 'a {
        self.samples.iter().filter_map(move |((n, l), v)| {
            let hit = n == name && l["method"] == method && l["endpoint"] == endpoint;
            hit.then_some((l, *v))
        })
    }
}

/// Every route's histogram: fixed buckets, cumulative, `+Inf` = `_count` = its requests.
fn check_histograms(s: &Scrape) {
    let name = "simstore_http_request_duration_seconds";
    assert_eq!(s.types[name], "histogram");
    let routes: Vec<(String, String)> = s
        .samples
        .keys()
        .filter(|(n, _)| n == "simstore_http_requests_total")
        .map(|(_, l)| (l["method"].clone(), l["endpoint"].clone()))
        .collect();
    let mut bounds_seen = None;
    for (method, endpoint) in &routes {
        let requests: f64 = s
            .of_route("simstore_http_requests_total", method, endpoint)
            .map(|(_, v)| v)
            .sum();
        let bucket = format!("{name}_bucket");
        let mut buckets: Vec<(f64, f64)> = s
            .of_route(&bucket, method, endpoint)
            .map(|(l, v)| (l["le"].replace("+Inf", "inf").parse().unwrap(), v))
            .collect();
        buckets.sort_by(|a, b| a.0.total_cmp(&b.0));
        assert!(buckets.windows(2).all(|w| w[0].1 <= w[1].1), "{buckets:?}");
        let bounds: Vec<f64> = buckets.iter().map(|b| b.0).collect();
        assert_eq!(bounds.last(), Some(&f64::INFINITY));
        assert!(bounds.len() >= 5, "{bounds:?}");
        assert_eq!(
            bounds_seen.get_or_insert(bounds.clone()),
            &bounds,
            "fixed buckets"
        );
        let count = s.get(
            &format!("{name}_count"),
            &[("method", method), ("endpoint", endpoint)],
        );
        assert_eq!((buckets.last().unwrap().1, count), (requests, requests));
        let sum = s.get(
            &format!("{name}_sum"),
            &[("method", method), ("endpoint", endpoint)],
        );
        assert!(sum > 0.0, "{method} {endpoint}: sum {sum}");
    }
}

/// GET /metrics: the scrape, after checking the content type.
fn scrape(h: &ureq::Agent, url: &str) -> Scrape {
    let r = h.get(url).call().unwrap();
    assert_eq!(r.status().as_u16(), 200);
    let kind = r.headers()["content-type"].to_str().unwrap().to_owned();
    assert!(kind.starts_with("text/plain; version=0.0.4"), "{kind}");
    parse(&r.into_body().read_to_string().unwrap())
}

#[test]
fn metrics_count_requests_latencies_outcomes_and_the_store() {
    let t = TestCommand::new();
    let s = t.serve(&[]);
    let h = http();
    let post = |path: &str, body: serde_json::Value| answer(h.post(s.at(path)).send_json(body)).0;
    assert_eq!(post("/insert", json!({"id": "long", "text": LONG})), 200);
    let bad = h.post(s.at("/insert")).content_type("application/json");
    assert_eq!(answer(bad.send("{not json")).0, 400);
    let checks = [
        ("a", TEXT_A.to_owned()),
        ("a2", TEXT_A2.to_owned()),
        ("long2", format!("{LONG}, silver")),
        ("b", TEXT_B.to_owned()),
    ];
    let statuses: Vec<serde_json::Value> = checks
        .iter()
        .map(|(id, text)| {
            answer(
                h.post(s.at("/check_and_insert"))
                    .send_json(json!({"id": id, "text": text})),
            )
            .1["status"]
                .clone()
        })
        .collect();
    assert_eq!(
        statuses,
        ["new", "exact_duplicate", "near_duplicate", "new"]
    );
    assert_eq!(answer(h.get(s.at("/docs/a")).call()).0, 200);
    assert_eq!(answer(h.get(s.at("/docs/nope")).call()).0, 404);
    assert_eq!(answer(h.get(s.at("/nowhere/at/all")).call()).0, 404);

    let m = scrape(&h, &s.at("/metrics"));
    assert_eq!(m.types["simstore_http_requests_total"], "counter");
    assert_eq!(m.requests("POST", "/insert", "200"), 1.0);
    assert_eq!(m.requests("POST", "/insert", "400"), 1.0);
    assert_eq!(m.requests("POST", "/check_and_insert", "200"), 4.0);
    assert_eq!(m.requests("GET", "/docs/{*id}", "200"), 1.0);
    assert_eq!(m.requests("GET", "/docs/{*id}", "404"), 1.0);
    // A path no route matched is one series, not one per path.
    assert_eq!(m.requests("GET", "other", "404"), 1.0);
    // A scrape is counted once answered: not in itself.
    assert_eq!(m.requests("GET", "/metrics", "200"), 0.0);
    let outcome = |o| m.get("simstore_check_and_insert_total", &[("outcome", o)]);
    assert_eq!(
        (outcome("new"), outcome("exact"), outcome("near")),
        (2.0, 1.0, 1.0)
    );
    assert_eq!(m.types["simstore_store_documents"], "gauge");
    assert_eq!(m.get("simstore_store_documents", &[]), 3.0);
    assert!(m.get("simstore_store_disk_bytes", &[]) > 0.0);
    check_histograms(&m);

    // Counters only grow: the next scrape has the first one, and the deletion.
    assert_eq!(answer(h.delete(s.at("/docs/b")).call()).0, 200);
    let m = scrape(&h, &s.at("/metrics"));
    assert_eq!(m.requests("GET", "/metrics", "200"), 1.0);
    assert_eq!(m.requests("DELETE", "/docs/{*id}", "200"), 1.0);
    assert_eq!(m.requests("POST", "/check_and_insert", "200"), 4.0);
    assert_eq!(m.get("simstore_store_documents", &[]), 2.0);
    check_histograms(&m);
}

#[test]
fn refused_requests_are_counted_too() {
    let t = TestCommand::new();
    let token = t.write("token", b"s3cret");
    let s = t.serve(&["--token-file", token.to_str().unwrap()]);
    let h = http();
    assert_eq!(answer(h.get(s.at("/stats")).call()).0, 401);
    let r = h
        .get(s.at("/metrics"))
        .header("authorization", "Bearer s3cret")
        .call()
        .unwrap();
    let m = parse(&r.into_body().read_to_string().unwrap());
    assert_eq!(m.requests("GET", "/stats", "401"), 1.0);
    // Without the token, /metrics is refused like every endpoint.
    assert_eq!(answer(h.get(s.at("/metrics")).call()).0, 401);
}

/// The series every sample belongs to comes as one group, after its `# TYPE` line.
fn check_grouped(text: &str) {
    let (mut typed, mut done) = (Vec::<String>::new(), Vec::<String>::new());
    let mut current = String::new();
    for line in text.lines().filter(|l| !l.is_empty()) {
        if let Some(rest) = line.strip_prefix("# TYPE ") {
            typed.push(rest.split(' ').next().unwrap().to_owned());
            continue;
        }
        if line.starts_with('#') {
            continue;
        }
        let name = line.split(['{', ' ']).next().unwrap();
        let family = ["_bucket", "_sum", "_count"]
            .iter()
            .find_map(|s| {
                name.strip_suffix(s)
                    .filter(|f| typed.iter().any(|t| t == f))
            })
            .unwrap_or(name);
        assert_eq!(typed.last().map(String::as_str), Some(family), "{line}");
        if family != current {
            assert!(!done.contains(&family.to_owned()), "{family} split: {line}");
            done.push(std::mem::replace(&mut current, family.to_owned()));
        }
    }
}

#[test]
fn metrics_show_the_build_the_process_and_the_engine() {
    let t = TestCommand::new();
    let s = t.serve(&[]);
    let h = http();
    let doc = json!({"id": "a", "text": TEXT_A});
    assert_eq!(answer(h.post(s.at("/insert")).send_json(doc)).0, 200);
    let text = h
        .get(s.at("/metrics"))
        .call()
        .unwrap()
        .into_body()
        .read_to_string()
        .unwrap();
    check_grouped(&text);
    let m = parse(&text);
    let build = m
        .samples
        .iter()
        .find(|((n, _), _)| n == "simstore_build_info")
        .expect("simstore_build_info");
    assert_eq!(build.0.1["version"], env!("CARGO_PKG_VERSION"));
    assert!(build.0.1["spec"].starts_with('v'), "{:?}", build.0.1);
    assert_eq!(*build.1, 1.0);

    // The process, as /proc says.
    let rss = m.get("process_resident_memory_bytes", &[]);
    let kib = s.rss_kib().unwrap() as f64 * 1024.0;
    assert!(rss > 1e6 && (rss - kib).abs() < kib / 2.0, "{rss} vs {kib}");
    assert!(m.get("process_open_fds", &[]) >= 5.0);
    assert_eq!(m.types["process_cpu_seconds_total"], "counter");
    assert!(m.get("process_cpu_seconds_total", &[]) > 0.0);
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs_f64();
    let start = m.get("process_start_time_seconds", &[]);
    assert!(
        start <= now + 2.0 && start > now - 600.0,
        "{start} vs {now}"
    );

    // RocksDB: every column family, the written ones holding their memtable bytes.
    for cf in ["meta", "docs", "ids", "exact", "t00"] {
        for name in [
            "simstore_rocksdb_memtable_bytes",
            "simstore_rocksdb_pending_compaction_bytes",
            "simstore_rocksdb_sst_files",
            "simstore_rocksdb_sst_bytes",
        ] {
            let key = (name.to_owned(), [("cf".to_owned(), cf.to_owned())].into());
            assert!(m.samples.contains_key(&key), "{name}{{cf={cf}}}");
            assert_eq!(m.types[name], "gauge");
        }
    }
    assert!(m.get("simstore_rocksdb_memtable_bytes", &[("cf", "docs")]) > 0.0);
    assert!(m.get("simstore_rocksdb_block_cache_usage_bytes", &[]) >= 0.0);
    assert!(m.samples.contains_key(&(
        "simstore_rocksdb_block_cache_usage_bytes".into(),
        BTreeMap::new()
    )));
    // Flushed memtables show up as SST files (the server flushes at shutdown).
    let mut s = s;
    s.signal("TERM");
    assert!(s.wait().0.success());
    let s = t.serve(&[]);
    let m = scrape(&h, &s.at("/metrics"));
    assert!(m.get("simstore_rocksdb_sst_files", &[("cf", "docs")]) >= 1.0);
    assert!(m.get("simstore_rocksdb_sst_bytes", &[("cf", "docs")]) > 0.0);
}
