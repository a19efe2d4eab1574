//! Soak test of `simstore serve`: many client threads send a mix of `check_and_insert`,
//! `query`, `get` and `delete` over HTTP for a bounded time while the server is killed
//! (SIGKILL) at random moments and restarted on the same store. Afterwards every
//! acknowledged write is present and every acknowledged delete absent.
//!
//! Each client owns its ids, so the order of the operations on an id is the client's
//! order. Per id the client keeps the states the store may be in: one state after an
//! answered write (`new` → present with that fingerprint and url tag; a duplicate answer →
//! unchanged; a delete answered 200 or 404 → absent); a request whose answer never came
//! (the server was killed) adds its effect as a second possibility. While the server
//! runs, a client's `get` and exact `query` of an id in one known state must see that
//! state (read after acknowledged write). At the end the server is stopped with SIGTERM
//! (exit 0), the store is opened and checked, and every id must be in one of its states,
//! found by `get` and, when present, by an exact query.
//!
//! The server's resident memory (`VmRSS`) is sampled: printed at the start and at the end
//! of the run and at its highest.
//!
//! Environment: `SIMSTORE_SOAK_SECS` (default 10; the long mode runs for minutes),
//! `SIMSTORE_SOAK_SEED` (default fixed).

use std::collections::BTreeMap;
use std::ops::Range;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, RwLock};
use std::thread;
use std::time::{Duration, Instant};

use rand::Rng;
use rand::rngs::StdRng;
use serde_json::{Value, json};
use simstore::input::reader;
use simstore::{Fingerprint, Fingerprinter, Store};

use crate::util::{Server, TestCommand, flip, gen_text, rng};

const SECS_VAR: &str = "SIMSTORE_SOAK_SECS";
const SEED_VAR: &str = "SIMSTORE_SOAK_SEED";
const DEFAULT_SECS: u64 = 10;
const DEFAULT_SEED: u64 = 0x50a4_0000_0000_0001;
/// Client threads, and ids each one owns.
const CLIENTS: usize = 12;
const IDS_PER_CLIENT: usize = 400;
/// Time between two kills of the server, in milliseconds (the upper end grows to a 20th of
/// the run in long runs).
const KILL_EVERY_MS: Range<u64> = 500..4000;
/// Fingerprints near these (shared by all clients) make near duplicates.
const CENTRES: usize = 16;
/// Texts shared by all clients make exact duplicates.
const SHARED_TEXTS: usize = 64;

/// A state an id may be in: absent, or present with (fingerprint, url tag).
#[derive(Debug, Clone, PartialEq, Eq)]
enum State {
    Absent,
    Present(u64, String),
}

/// How a request ended.
enum Reply {
    /// The server answered (status, JSON body).
    Answer(u16, Value),
    /// The connection was refused: the server was down and nothing was sent.
    Refused,
    /// The request may have been sent, but no answer came (the server was killed).
    Lost,
}

/// Counters shared by the clients.
#[derive(Default)]
struct Counts {
    requests: AtomicU64,
    new: AtomicU64,
    duplicates: AtomicU64,
    deletes: AtomicU64,
    queries: AtomicU64,
    gets: AtomicU64,
    /// Reads of an id in one known state (its `get` or exact query checked).
    checked_reads: AtomicU64,
    lost: AtomicU64,
    refused: AtomicU64,
    server_errors: AtomicU64,
}

/// What every client shares: the server's current address, the counters, the stop flag.
struct Shared {
    url: RwLock<String>,
    counts: Counts,
    stop: AtomicBool,
    centres: Vec<u64>,
    texts: Vec<String>,
}

#[test]
fn serve_survives_kill_9_under_load() {
    let secs: u64 = std::env::var(SECS_VAR).map_or(DEFAULT_SECS, |s| {
        s.parse()
            .expect("SIMSTORE_SOAK_SECS is a number of seconds")
    });
    let seed: u64 = std::env::var(SEED_VAR).map_or(DEFAULT_SEED, |s| {
        s.parse().expect("SIMSTORE_SOAK_SEED is a u64")
    });
    let start = Instant::now();
    let t = TestCommand::new();
    let mut r = rng(seed);
    let mut recent = Vec::new();
    let mut server = t.serve(&[]);
    let shared = Arc::new(Shared {
        url: RwLock::new(server.url.clone()),
        counts: Counts::default(),
        stop: AtomicBool::new(false),
        centres: (0..CENTRES).map(|_| r.random()).collect(),
        texts: (0..SHARED_TEXTS)
            .map(|_| gen_text(&mut r, &mut recent))
            .collect(),
    });
    let mut rss = Rss::default();
    rss.sample(&server);
    let mut kills = 0u64;
    let models = thread::scope(|scope| {
        let clients: Vec<_> = (0..CLIENTS)
            .map(|c| {
                let shared = Arc::clone(&shared);
                let seed = seed ^ (c as u64 + 1).wrapping_mul(0x9e37_79b9_7f4a_7c15);
                scope.spawn(move || client(c, seed, &shared))
            })
            .collect();
        let deadline = start + Duration::from_secs(secs);
        // Longer runs also get longer stretches between kills, so that memory growth
        // within one server instance shows.
        let kill_every = KILL_EVERY_MS.start..KILL_EVERY_MS.end.max(secs * 1000 / 20);
        while Instant::now() < deadline && clients.iter().all(|c| !c.is_finished()) {
            let next = Instant::now() + Duration::from_millis(r.random_range(kill_every.clone()));
            while Instant::now() < next.min(deadline) && clients.iter().all(|c| !c.is_finished()) {
                thread::sleep(Duration::from_millis(100));
                rss.sample(&server);
            }
            if Instant::now() < deadline {
                rss.end(&server);
                server.signal("KILL");
                let (status, _) = server.wait();
                assert_eq!(status.code(), None, "the server was killed by the signal");
                kills += 1;
                server = t.serve(&[]);
                rss.sample(&server);
                *shared.url.write().unwrap() = server.url.clone();
            }
        }
        shared.stop.store(true, Ordering::SeqCst);
        clients
            .into_iter()
            .map(|c| c.join().expect("a client failed"))
            .collect::<Vec<_>>()
    });
    rss.end(&server);
    server.signal("TERM");
    let (status, err) = server.wait();
    assert_eq!(status.code(), Some(0), "SIGTERM: {err}");
    let verified = verify(&t, &models);
    let c = &shared.counts;
    let n = |a: &AtomicU64| a.load(Ordering::SeqCst);
    eprintln!(
        "soak test: seed {seed}, {:.1?}, {CLIENTS} clients: {} requests ({} check_and_insert \
         stored, {} answered duplicate, {} deletes, {} queries, {} gets; {} reads of a known \
         state checked live), {kills} kills (kill -9) and restarts, {} requests without an \
         answer (killed under them), {} refused while restarting, {} answered 5xx; at the end \
         {} ids: {} acknowledged present and {} acknowledged absent found so, {} of unknown \
         outcome; losses 0; server RSS at start {:.1} MB, at end {:.1} MB, highest {:.1} MB; \
         the longest-running instance ({:.1?}) went from {:.1} MB to {:.1} MB",
        start.elapsed(),
        n(&c.requests),
        n(&c.new),
        n(&c.duplicates),
        n(&c.deletes),
        n(&c.queries),
        n(&c.gets),
        n(&c.checked_reads),
        n(&c.lost),
        n(&c.refused),
        n(&c.server_errors),
        verified.ids,
        verified.present,
        verified.absent,
        verified.unknown,
        Rss::mb(rss.first),
        Rss::mb(rss.last),
        Rss::mb(rss.max),
        rss.longest.0,
        Rss::mb(rss.longest.1),
        Rss::mb(rss.longest.2),
    );
    // Memory stays flat: a generous bound (the store and its caches grow with the run).
    assert!(
        rss.last < 4 * rss.first + 200 * 1024,
        "the server's RSS grew from {} KiB to {} KiB",
        rss.first,
        rss.last
    );
}

/// Resident memory samples of the server, in KiB: the run's first, last and highest, and
/// the start and end of the server instance that ran longest between two kills.
#[derive(Debug, Default)]
struct Rss {
    first: u64,
    last: u64,
    max: u64,
    /// When the current instance started, and its first sample.
    instance: Option<(Instant, u64)>,
    /// (lifetime, RSS at its start, RSS at its end) of the longest-running instance.
    longest: (Duration, u64, u64),
}

impl Rss {
    fn sample(&mut self, server: &Server) {
        if let Some(kib) = server.rss_kib() {
            if self.first == 0 {
                self.first = kib;
            }
            self.instance.get_or_insert((Instant::now(), kib));
            self.last = kib;
            self.max = self.max.max(kib);
        }
    }

    /// The last sample of an instance about to be killed or stopped.
    fn end(&mut self, server: &Server) {
        self.sample(server);
        if let Some((started, at_start)) = self.instance.take()
            && started.elapsed() > self.longest.0
        {
            self.longest = (started.elapsed(), at_start, self.last);
        }
    }

    fn mb(kib: u64) -> f64 {
        kib as f64 / 1024.0
    }
}

/// One client: random operations on its own ids until told to stop; returns, per id, the
/// states the store may hold it in.
fn client(c: usize, seed: u64, shared: &Shared) -> BTreeMap<String, Vec<State>> {
    let mut r = rng(seed);
    let fingerprinter = Fingerprinter::new();
    let agent: ureq::Agent = ureq::Agent::config_builder()
        .http_status_as_error(false)
        .timeout_global(Some(Duration::from_secs(60)))
        .build()
        .into();
    let mut model: BTreeMap<String, Vec<State>> = (0..IDS_PER_CLIENT)
        .map(|i| (format!("c{c}-{i}"), vec![State::Absent]))
        .collect();
    let ids: Vec<String> = model.keys().cloned().collect();
    let mut recent = Vec::new();
    let mut n = 0u64;
    while !shared.stop.load(Ordering::SeqCst) {
        n += 1;
        let id = &ids[r.random_range(0..ids.len())];
        let states = model.get_mut(id).unwrap();
        let roll = r.random_range(0..100);
        let ok = if roll < 45 {
            let tag = format!("c{c}.{n}");
            let body = document(&mut r, shared, &mut recent, id, &tag);
            let entry = reader::parse_jsonl(body.to_string().as_bytes())
                .unwrap()
                .into_entry(&fingerprinter)
                .unwrap();
            let present = State::Present(entry.fp.0, tag);
            check_and_insert(&agent, shared, body, entry.fp, present, states)
        } else if roll < 65 {
            delete(&agent, shared, id, states)
        } else if roll < 85 {
            query(&agent, shared, &mut r, id, states)
        } else {
            get(&agent, shared, id, states)
        };
        if !ok {
            // The server is down: wait for the restart (its new address).
            thread::sleep(Duration::from_millis(20));
        }
    }
    model
}

/// A document for `check_and_insert`: a fingerprint (near a shared centre half the time)
/// or a text (one of the shared texts a quarter of the time), with `k` 0..=3.
fn document(
    r: &mut StdRng,
    shared: &Shared,
    recent: &mut Vec<String>,
    id: &str,
    tag: &str,
) -> Value {
    let k = r.random_range(0..=3u32);
    if r.random_bool(0.6) {
        let fp = if r.random_bool(0.5) {
            let centre = shared.centres[r.random_range(0..shared.centres.len())];
            let d = r.random_range(0..=8);
            flip(r, centre, d)
        } else {
            r.random()
        };
        json!({"id": id, "fp": format!("{fp:016x}"), "url": tag, "k": k})
    } else {
        let text = if r.random_bool(0.25) {
            shared.texts[r.random_range(0..shared.texts.len())].clone()
        } else {
            gen_text(r, recent)
        };
        json!({"id": id, "text": text, "url": tag, "k": k})
    }
}

/// Sends a request to the current server.
fn send(
    shared: &Shared,
    f: impl FnOnce(&str) -> Result<ureq::http::Response<ureq::Body>, ureq::Error>,
) -> Reply {
    let url = shared.url.read().unwrap().clone();
    shared.counts.requests.fetch_add(1, Ordering::Relaxed);
    let reply = match f(&url) {
        Ok(resp) => {
            let status = resp.status().as_u16();
            match resp.into_body().read_to_string() {
                Ok(text) => Reply::Answer(status, serde_json::from_str(&text).unwrap_or_default()),
                Err(_) => Reply::Lost,
            }
        }
        Err(ureq::Error::Io(e)) if e.kind() == std::io::ErrorKind::ConnectionRefused => {
            Reply::Refused
        }
        Err(_) => Reply::Lost,
    };
    let counts = &shared.counts;
    match &reply {
        Reply::Answer(s, _) if *s >= 500 => counts.server_errors.fetch_add(1, Ordering::Relaxed),
        Reply::Answer(..) => 0,
        Reply::Refused => counts.refused.fetch_add(1, Ordering::Relaxed),
        Reply::Lost => counts.lost.fetch_add(1, Ordering::Relaxed),
    };
    reply
}

/// Adds `state` to the possible states (a write whose outcome is unknown).
fn maybe(states: &mut Vec<State>, state: State) {
    if !states.contains(&state) {
        states.push(state);
    }
}

/// `POST /check_and_insert`; `present` is the state a stored document is in. Returns
/// false when the server did not answer.
fn check_and_insert(
    agent: &ureq::Agent,
    shared: &Shared,
    body: Value,
    fp: Fingerprint,
    present: State,
    states: &mut Vec<State>,
) -> bool {
    let reply = send(shared, |url| {
        agent
            .post(format!("{url}/check_and_insert"))
            .send_json(&body)
    });
    match reply {
        Reply::Answer(200, v) => {
            assert_eq!(v["fp"].as_str(), Some(fp.to_string().as_str()), "{v}");
            match v["status"].as_str() {
                Some("new") => {
                    *states = vec![present];
                    shared.counts.new.fetch_add(1, Ordering::Relaxed);
                }
                Some("exact_duplicate" | "near_duplicate") => {
                    shared.counts.duplicates.fetch_add(1, Ordering::Relaxed);
                }
                _ => panic!("check_and_insert answered {v}"),
            }
            true
        }
        Reply::Answer(s, v) if s >= 500 => {
            maybe(states, present);
            eprintln!("check_and_insert answered {s}: {v}");
            true
        }
        Reply::Answer(s, v) => panic!("check_and_insert of {body} answered {s}: {v}"),
        Reply::Refused => false,
        Reply::Lost => {
            maybe(states, present);
            false
        }
    }
}

/// `DELETE /docs/{id}`: 200 or 404 leave the id absent.
fn delete(agent: &ureq::Agent, shared: &Shared, id: &str, states: &mut Vec<State>) -> bool {
    let reply = send(shared, |url| {
        agent.delete(format!("{url}/docs/{id}")).call()
    });
    match reply {
        Reply::Answer(200 | 404, v) => {
            let was = v["deleted"].as_bool().unwrap_or(false);
            if was && !states.iter().any(|s| matches!(s, State::Present(..))) {
                panic!("deleted {id}, which was never stored: {states:?}");
            }
            *states = vec![State::Absent];
            shared.counts.deletes.fetch_add(1, Ordering::Relaxed);
            true
        }
        Reply::Answer(s, v) if s >= 500 => {
            maybe(states, State::Absent);
            eprintln!("delete answered {s}: {v}");
            true
        }
        Reply::Answer(s, v) => panic!("delete {id} answered {s}: {v}"),
        Reply::Refused => false,
        Reply::Lost => {
            maybe(states, State::Absent);
            false
        }
    }
}

/// `POST /query` with the id's fingerprint at k = 0 (when it is known to be present; it
/// must be found), else with a random fingerprint at k = 3.
fn query(agent: &ureq::Agent, shared: &Shared, r: &mut StdRng, id: &str, states: &[State]) -> bool {
    let known = match states {
        [State::Present(fp, _)] => Some(*fp),
        _ => None,
    };
    let body = match known {
        Some(fp) => json!({"fp": format!("{fp:016x}"), "k": 0}),
        None => json!({"fp": format!("{:016x}", r.random::<u64>()), "k": 3}),
    };
    let reply = send(shared, |url| {
        agent.post(format!("{url}/query")).send_json(&body)
    });
    shared.counts.queries.fetch_add(1, Ordering::Relaxed);
    match reply {
        Reply::Answer(200, v) => {
            if known.is_some() {
                let found = v["matches"]
                    .as_array()
                    .is_some_and(|m| m.iter().any(|m| m["id"] == id));
                assert!(found, "query {body} misses {id}, acknowledged present: {v}");
                shared.counts.checked_reads.fetch_add(1, Ordering::Relaxed);
            }
            true
        }
        Reply::Answer(s, _) if s >= 500 => true,
        Reply::Answer(s, v) => panic!("query {body} answered {s}: {v}"),
        Reply::Refused | Reply::Lost => false,
    }
}

/// `GET /docs/{id}`: when the id is in one known state, the answer must show it.
fn get(agent: &ureq::Agent, shared: &Shared, id: &str, states: &[State]) -> bool {
    let reply = send(shared, |url| agent.get(format!("{url}/docs/{id}")).call());
    shared.counts.gets.fetch_add(1, Ordering::Relaxed);
    match reply {
        Reply::Answer(s @ (200 | 404), v) => {
            if let [known] = states {
                let got = match s {
                    404 => State::Absent,
                    _ => State::Present(
                        u64::from_str_radix(v["fp"].as_str().unwrap(), 16).unwrap(),
                        v["url"].as_str().unwrap_or_default().to_owned(),
                    ),
                };
                assert_eq!(&got, known, "GET /docs/{id}: {v}");
                shared.counts.checked_reads.fetch_add(1, Ordering::Relaxed);
            }
            true
        }
        Reply::Answer(s, _) if s >= 500 => true,
        Reply::Answer(s, v) => panic!("GET /docs/{id} answered {s}: {v}"),
        Reply::Refused | Reply::Lost => false,
    }
}

/// What the final check found.
struct Verified {
    ids: u64,
    present: u64,
    absent: u64,
    unknown: u64,
}

/// Opens the store after the run: `check` clean, and every id in one of its states (found
/// by `get`, and by an exact query when present). Fails listing the losses.
fn verify(t: &TestCommand, models: &[BTreeMap<String, Vec<State>>]) -> Verified {
    let store = Store::builder(t.db())
        .create_if_missing(false)
        .open()
        .unwrap();
    let report = store.check().unwrap();
    assert!(
        report.is_ok(),
        "check after the soak: {:#?}",
        report.problems
    );
    let mut v = Verified {
        ids: 0,
        present: 0,
        absent: 0,
        unknown: 0,
    };
    let mut losses = Vec::new();
    for (id, states) in models.iter().flatten() {
        let got = match store.get(id).unwrap() {
            None => State::Absent,
            Some(doc) => {
                let exact = store.query(Fingerprint(doc.fp), 0).unwrap();
                assert!(
                    exact.iter().any(|m| &m.doc.id == id),
                    "{id} not found by its fp"
                );
                State::Present(doc.fp, doc.url.unwrap_or_default())
            }
        };
        v.ids += 1;
        match (states.as_slice(), &got) {
            (_, _) if !states.contains(&got) => {
                losses.push(format!("{id}: {got:?}, want one of {states:?}"))
            }
            ([State::Absent], _) => v.absent += 1,
            ([State::Present(..)], _) => v.present += 1,
            _ => v.unknown += 1,
        }
    }
    assert!(
        losses.is_empty(),
        "{} losses after the soak:\n{}",
        losses.len(),
        losses[..losses.len().min(20)].join("\n")
    );
    v
}
