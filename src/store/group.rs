//! Group commit: single-document writes ([`Store::check_and_insert`],
//! [`Store::insert_fingerprint`]) that arrive together are checked and written as one
//! change set — one [`super::backend::Backend::write`], one fsync when writes are synced.
//!
//! A writer queues its request (a [`Ticket`]); one that finds no leader leads: under the
//! writer lock it checks up to [`MAX_GROUP`] queued requests against the store and the
//! requests before them, writes the new ones in one change set, and only then answers
//! them. A writer arriving meanwhile may take the lead, so groups never wait for a sleeping
//! thread to be scheduled. A request that depends on an earlier request's write is
//! carried to the next group, so every answer names a document as its group leaves it
//! (docs/design.md §6).

mod recent;

use std::collections::{HashSet, VecDeque};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use super::crawl::CheckOutcome;
use super::{Counters, InsertOutcome, Store};
use crate::error::{Error, Result};
use crate::index::layout::Layout;
use crate::index::page;
use crate::index::probing;
use crate::index::quality::MatchRule;
use crate::types::Entry;

/// The most requests one group writes (the in-group check is quadratic in it).
const MAX_GROUP: usize = 256;

/// How long a queued writer spins before it sleeps ([`Ticket::wait`]).
const SPIN: Duration = Duration::from_micros(50);

/// What a queued request asks.
#[derive(Debug, Clone, Copy)]
pub(super) enum Ask {
    /// Store the entry (replacing a document of the same id).
    Insert,
    /// Store the entry unless a document duplicates it by `rule`. `before`: the backend's
    /// version before the caller's lock-free check, which found no duplicate.
    Check {
        /// The request's near-duplicate test.
        rule: MatchRule,
        /// [`super::backend::Backend::version`] before the lock-free check.
        before: u64,
    },
}

/// The answer to a queued request.
#[derive(Debug)]
pub(super) enum Answer {
    /// To [`Ask::Insert`].
    Inserted(InsertOutcome),
    /// To [`Ask::Check`].
    Checked(CheckOutcome),
}

/// Where a queued request is.
enum Slot {
    /// Waiting for a leader.
    Queued,
    /// Woken to try to lead the next group (it is still queued).
    Lead,
    /// Answered.
    Done(Result<Answer>),
}

/// One request in the queue, and the place its answer is left.
struct Ticket {
    entry: Entry,
    ask: Ask,
    slot: Mutex<Slot>,
    ready: Condvar,
    /// Set with the slot (to an answer or the lead): what a waiter spins on.
    changed: AtomicBool,
}

impl Ticket {
    /// A queued request for `entry`.
    fn new(entry: Entry, ask: Ask) -> Self {
        Ticket {
            entry,
            ask,
            slot: Mutex::new(Slot::Queued),
            ready: Condvar::new(),
            changed: AtomicBool::new(false),
        }
    }

    fn set(&self, slot: Slot) {
        *lock(&self.slot) = slot;
        self.changed.store(true, Ordering::Release);
        self.ready.notify_one();
    }

    /// Sleeps until the request is answered (`Some`) or woken to lead (`None`), after
    /// spinning for up to [`SPIN`]: an unsynced group write costs less than a sleep and wake-up.
    fn wait(&self) -> Option<Result<Answer>> {
        let start = Instant::now();
        let mut spins = 0u32;
        while !self.changed.load(Ordering::Acquire) && start.elapsed() < SPIN {
            spins += 1;
            if spins.is_multiple_of(64) {
                std::thread::yield_now();
            } else {
                std::hint::spin_loop();
            }
        }
        self.changed.store(false, Ordering::Relaxed);
        let mut slot = lock(&self.slot);
        loop {
            match std::mem::replace(&mut *slot, Slot::Queued) {
                Slot::Queued => slot = self.ready.wait(slot).unwrap_or_else(|e| e.into_inner()),
                Slot::Lead => return None,
                Slot::Done(answer) => return Some(answer),
            }
        }
    }

    /// The answer, if the request was answered.
    fn try_take(&self) -> Option<Result<Answer>> {
        let mut slot = lock(&self.slot);
        match std::mem::replace(&mut *slot, Slot::Queued) {
            Slot::Done(answer) => Some(answer),
            other => {
                *slot = other;
                None
            }
        }
    }
}

/// The queue of requests waiting for a group, and whether some writer leads.
#[derive(Default)]
pub(super) struct GroupQueue {
    state: Mutex<Queue>,
    /// The last groups' writes (locked by leaders, who hold the writer lock).
    recent: Mutex<recent::Recent>,
}

#[derive(Default)]
struct Queue {
    waiting: VecDeque<Arc<Ticket>>,
    leading: bool,
}

impl GroupQueue {
    /// Queues `ticket`; true when its caller is to lead (no one did).
    fn join(&self, ticket: &Arc<Ticket>) -> bool {
        let mut q = lock(&self.state);
        q.waiting.push_back(Arc::clone(ticket));
        !std::mem::replace(&mut q.leading, true)
    }

    /// Takes the lead if no one has it; true when taken.
    fn try_lead(&self) -> bool {
        !std::mem::replace(&mut lock(&self.state).leading, true)
    }

    /// The next group: the first [`MAX_GROUP`] queued requests.
    fn take_group(&self) -> Vec<Arc<Ticket>> {
        let mut q = lock(&self.state);
        let n = q.waiting.len().min(MAX_GROUP);
        q.waiting.drain(..n).collect()
    }

    /// Ends a leader's turn: puts `carried` back in front of the queue, in order, gives up
    /// the lead and wakes the first queued request to take it.
    fn end_turn(&self, carried: Vec<Arc<Ticket>>) {
        let mut q = lock(&self.state);
        for t in carried.into_iter().rev() {
            q.waiting.push_front(t);
        }
        q.leading = false;
        if let Some(next) = q.waiting.front() {
            next.set(Slot::Lead);
        }
    }

    /// Requests queued and not yet taken by a leader.
    #[cfg(test)]
    pub(super) fn queued(&self) -> usize {
        lock(&self.state).waiting.len()
    }
}

/// What becomes of one request of a group.
enum Fate {
    /// Carried to the next group.
    Carried,
    /// Answered whatever the write does (a duplicate of a stored document, an error).
    Answered(Result<Answer>),
    /// Written: the i-th entry of the group's change set.
    Written(usize),
    /// A duplicate of a document the group writes: answered if the write succeeds.
    AfterWrite(CheckOutcome),
}

/// A leader's turn: the requests it took. If the turn ends without answering them (a
/// panic), dropping it answers them with an error and passes the lead on, so that no
/// writer sleeps forever.
struct Turn<'a> {
    queue: &'a GroupQueue,
    tickets: Vec<Arc<Ticket>>,
    finished: bool,
}

impl Turn<'_> {
    /// Answers the requests, then ends the turn (carrying the others over): no request
    /// taken by a leader is left unanswered while another leader may run.
    fn finish(mut self, fates: Vec<Option<Result<Answer>>>) {
        let mut carried = Vec::new();
        for (t, fate) in std::mem::take(&mut self.tickets).into_iter().zip(fates) {
            match fate {
                Some(answer) => t.set(Slot::Done(answer)),
                None => carried.push(t),
            }
        }
        self.queue.end_turn(carried);
        self.finished = true;
    }
}

impl Drop for Turn<'_> {
    fn drop(&mut self) {
        if self.finished {
            return;
        }
        for t in &self.tickets {
            t.set(Slot::Done(Err(Error::storage(
                "store",
                "the write of this request's group was abandoned: the thread writing it \
                 panicked; retry the request",
            ))));
        }
        self.queue.end_turn(Vec::new());
    }
}

impl Store {
    /// Queues a one-entry write (id already validated, store writable, not a shared
    /// backend) and returns its answer once the group holding it is written.
    pub(super) fn submit(&self, entry: Entry, ask: Ask) -> Result<Answer> {
        let own = Arc::new(Ticket::new(entry, ask));
        let mut leads = self.group.join(&own);
        loop {
            if leads {
                self.lead_turn();
                if let Some(answer) = own.try_take() {
                    return answer;
                }
            }
            if let Some(answer) = own.wait() {
                return answer;
            }
            leads = self.group.try_lead();
        }
    }

    /// One turn as leader: takes the writer lock and the queued requests, checks and
    /// writes them as one change set, then answers them.
    fn lead_turn(&self) {
        let mut counters = self.lock();
        let turn = Turn {
            queue: &self.group,
            tickets: self.group.take_group(),
            finished: false,
        };
        let fates = self.run_group(&mut counters, &turn.tickets);
        self.unlock(counters);
        turn.finish(fates);
    }

    /// Decides each request's fate in order, writes the new entries in one change set and
    /// returns every answer (`None`: carried to the next group).
    fn run_group(
        &self,
        counters: &mut Counters,
        tickets: &[Arc<Ticket>],
    ) -> Vec<Option<Result<Answer>>> {
        if let Some(cause) = &counters.failed {
            let refuse = || Some(Err(Error::BulkLoadFailed(cause.clone())));
            return tickets.iter().map(|_| refuse()).collect();
        }
        let mut recent = lock(&self.group.recent);
        let now = self.backend.version();
        let mut written: Vec<&Entry> = Vec::new();
        let mut writers = Vec::new();
        let mut ids: HashSet<&str> = HashSet::new();
        let mut fates = Vec::with_capacity(tickets.len());
        for t in tickets {
            let fate = self.fate(t, &written, &ids, (&recent, now));
            if let Fate::Written(_) = fate {
                written.push(&t.entry);
                writers.push(Arc::clone(t));
                ids.insert(&t.entry.id);
            }
            fates.push(fate);
        }
        let wrote = match written.is_empty() {
            true => Ok(Vec::new()),
            false => {
                let before = self.backend.version();
                let wrote = self.write_entries(counters, &written, None);
                if wrote.is_ok() {
                    recent.record(before, self.backend.version(), writers);
                }
                wrote
            }
        };
        let answers = tickets.iter().zip(fates);
        answers.map(|(t, fate)| answer(t, fate, &wrote)).collect()
    }

    /// The fate of request `t`, given the entries the group writes before it (`written`,
    /// with their `ids`) and the last groups' writes up to the backend's version `now`. A
    /// `Written` fate's index is `written.len()`.
    fn fate(
        &self,
        t: &Ticket,
        written: &[&Entry],
        ids: &HashSet<&str>,
        (recent, now): (&recent::Recent, u64),
    ) -> Fate {
        let e = &t.entry;
        if ids.contains(e.id.as_str()) {
            return Fate::Carried;
        }
        let Ask::Check { mut rule, before } = t.ask else {
            return Fate::Written(written.len());
        };
        // The bands the store keeps are the ones its reads find.
        rule.bands = rule.bands.min(self.manifest.bands);
        // The lock-free check saw the store as of `before`; only a write since then (some
        // earlier group) can have stored a duplicate: the entries of those writes where
        // they are known, else the store is checked again.
        let layout = &self.manifest.layout;
        let stored = if now == before {
            None
        } else if let Some(since) = recent.since(before, now) {
            let found = in_group(&since, e, &rule, layout);
            found.exact.or(found.near)
        } else {
            match self.find_duplicate(e, &rule) {
                Ok(found) => found,
                Err(err) => return Fate::Answered(Err(err)),
            }
        };
        if let Some(of) = stored.as_ref().and_then(|d| d.duplicate_of())
            && ids.contains(of)
        {
            return Fate::Carried;
        }
        match first_duplicate(stored, in_group(written, e, &rule, layout)) {
            Some((dup, false)) => Fate::Answered(Ok(Answer::Checked(dup))),
            Some((dup, true)) => Fate::AfterWrite(dup),
            None => Fate::Written(written.len()),
        }
    }
}

/// The answer of request `t` of fate `fate`, given what the group's write did (`wrote`:
/// the outcome of each written entry, or the write's error).
fn answer(t: &Ticket, fate: Fate, wrote: &Result<Vec<InsertOutcome>>) -> Option<Result<Answer>> {
    let outcome = match (fate, wrote) {
        (Fate::Carried, _) => return None,
        (Fate::Answered(answer), _) => return Some(answer),
        (_, Err(e)) => return Some(Err(copy_error(e))),
        (Fate::AfterWrite(dup), Ok(_)) => return Some(Ok(Answer::Checked(dup))),
        (Fate::Written(i), Ok(outcomes)) => outcomes[i],
    };
    Some(Ok(match t.ask {
        Ask::Insert => Answer::Inserted(outcome),
        Ask::Check { .. } => Answer::Checked(CheckOutcome::New {
            fp: t.entry.fp,
            replaced: outcome == InsertOutcome::Replaced,
        }),
    }))
}

/// A duplicate of entry `e` among the entries an earlier request of the group writes: the
/// first with its content hash (`exact`), and the nearest that `rule` accepts among those
/// a probe of `layout`'s tables, the rule's query-directed probes, or its bands would find
/// (ties: smallest id).
struct InGroup {
    exact: Option<CheckOutcome>,
    near: Option<CheckOutcome>,
}

fn in_group(written: &[&Entry], e: &Entry, rule: &MatchRule, layout: &Layout) -> InGroup {
    let fp = e.fp;
    let exact = e.meta.content_hash.and_then(|h| {
        let first = written.iter().find(|w| w.meta.content_hash == Some(h))?;
        Some(CheckOutcome::ExactDuplicate {
            of: first.id.clone(),
            fp,
        })
    });
    let sketch = e.meta.sketch.as_ref();
    let probes = rule.probes_for(sketch);
    let flips = probing::query_flips(layout, rule.k, probes, e.meta.weak_bits.as_ref());
    let near = written
        .iter()
        .map(|w| ((w.fp.0 ^ fp.0).count_ones(), w))
        .filter(|&(d, w)| {
            let stored = w.meta.sketch.as_ref();
            page::accepts(rule, d, (sketch, e.meta.main_sketch.as_ref()), stored)
                && (probing::finds(layout, rule.k, &flips, fp.0, w.fp.0)
                    || rule.shares_band(sketch, stored))
        })
        .map(|(d, w)| (d, &w.id))
        .min()
        .map(|(distance, of)| CheckOutcome::NearDuplicate {
            of: of.clone(),
            distance,
            fp,
        });
    InGroup { exact, near }
}

/// The duplicate a sequential check would have found, the store's documents coming before
/// the group's: an exact duplicate in the store, else one in the group, else the nearest of
/// both (ties: smallest id). `true` when it is a document of the group.
fn first_duplicate(stored: Option<CheckOutcome>, group: InGroup) -> Option<(CheckOutcome, bool)> {
    if let Some(dup @ CheckOutcome::ExactDuplicate { .. }) = stored {
        return Some((dup, false));
    }
    if let Some(dup) = group.exact {
        return Some((dup, true));
    }
    let rank = |o: &CheckOutcome| (o.distance(), o.duplicate_of().map(str::to_owned));
    match (stored, group.near) {
        (Some(s), Some(g)) if rank(&g) < rank(&s) => Some((g, true)),
        (Some(s), _) => Some((s, false)),
        (None, g) => g.map(|g| (g, true)),
    }
}

/// A copy of a failed group write's error for each of its requests (`Error` is not `Clone`:
/// it may hold an `io::Error`). A write fails with a storage or I/O error; any other is
/// passed on as its message.
fn copy_error(e: &Error) -> Error {
    match e {
        Error::Storage { backend, source } => Error::storage(backend, source.to_string()),
        Error::Corrupt(s) => Error::Corrupt(s.clone()),
        Error::BulkLoadFailed(s) => Error::BulkLoadFailed(s.clone()),
        Error::Io(io) => Error::Io(std::io::Error::new(io.kind(), io.to_string())),
        other => Error::storage("store", other.to_string()),
    }
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    // The queue's state is valid between any two statements: a panic leaves nothing half done.
    m.lock().unwrap_or_else(|e| e.into_inner())
}

#[cfg(test)]
mod tests {
    use std::ops::RangeInclusive;
    use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
    use std::sync::{Arc, Condvar, Mutex, OnceLock, Weak};
    use std::thread;
    use std::time::Duration;

    use rand::rngs::StdRng;
    use rand::{Rng, SeedableRng};

    use crate::error::{Error, Result};
    use crate::store::hooked::Hooked;
    use crate::store::memory::MemoryBackend;
    use crate::store::{CheckOutcome, InsertOutcome, Store, StoreBuilder};
    use crate::types::{DocMeta, Fingerprint};

    /// An in-memory store whose writes, once `armed`, are counted and wait while the gate
    /// is closed; write number `fail_from` and later ones (counting from 0 once armed) fail.
    struct Gated {
        store: Arc<Store>,
        armed: Arc<AtomicBool>,
        writes: Arc<AtomicUsize>,
        gate: Arc<(Mutex<bool>, Condvar)>,
    }

    fn gated(fail_from: usize) -> Gated {
        let options = StoreBuilder::in_memory().k_max(3);
        let layout = options.layout().unwrap();
        let mut backend = Hooked::new(Box::new(MemoryBackend::new(
            options.backend_tables().unwrap(),
        )));
        let armed = Arc::new(AtomicBool::new(false));
        let writes = Arc::new(AtomicUsize::new(0));
        let gate = Arc::new((Mutex::new(false), Condvar::new()));
        let (a, w, g) = (Arc::clone(&armed), Arc::clone(&writes), Arc::clone(&gate));
        backend.on_write = Box::new(move |_| {
            if !a.load(Ordering::SeqCst) {
                return Ok(());
            }
            let n = w.fetch_add(1, Ordering::SeqCst);
            let mut open = g.0.lock().unwrap();
            while !*open {
                open = g.1.wait(open).unwrap();
            }
            drop(open);
            // As slow as a small fsync, so that racing writers queue behind it.
            thread::sleep(Duration::from_micros(200));
            match n >= fail_from {
                true => Err(Error::storage("memory", "injected failure")),
                false => Ok(()),
            }
        });
        let store = Store::create(Box::new(backend), options, layout).unwrap();
        armed.store(true, Ordering::SeqCst);
        Gated {
            store: Arc::new(store),
            armed,
            writes,
            gate,
        }
    }

    impl Gated {
        fn open(&self) {
            *self.gate.0.lock().unwrap() = true;
            self.gate.1.notify_all();
        }
    }

    /// Polls (no deadline) until `done`.
    fn until(done: impl Fn() -> bool) {
        while !done() {
            thread::sleep(Duration::from_millis(1));
        }
    }

    type Request<T> = Box<dyn FnOnce(&Store) -> T + Send>;

    impl Gated {
        /// Stores `first` (id "first", content hash 1) and holds its write in the closed
        /// gate; meanwhile runs each request on a thread of its own, one after the other
        /// once the one before is queued (so they queue in the order given); then opens the
        /// gate. Returns the requests' results.
        fn pile_up<T: Send + 'static>(&self, first: u64, requests: Vec<Request<T>>) -> Vec<T> {
            let store = Arc::clone(&self.store);
            let first = thread::spawn(move || {
                store.insert_fingerprint("first", Fingerprint(first), meta(Some(1)))
            });
            until(|| self.writes.load(Ordering::SeqCst) == 1);
            let mut handles = Vec::new();
            for (i, r) in requests.into_iter().enumerate() {
                let store = Arc::clone(&self.store);
                handles.push(thread::spawn(move || r(&store)));
                until(|| self.store.group.queued() == i + 1);
            }
            self.open();
            let first = first.join().unwrap();
            assert!(matches!(first, Ok(InsertOutcome::Inserted)), "{first:?}");
            handles.into_iter().map(|h| h.join().unwrap()).collect()
        }
    }

    fn meta(hash: Option<u128>) -> DocMeta {
        DocMeta {
            content_hash: hash,
            ..DocMeta::default()
        }
    }

    /// One check_and_insert request, remembered for the model check.
    #[derive(Debug, Clone)]
    struct Ask {
        id: String,
        fp: u64,
        hash: Option<u128>,
        k: u32,
    }

    impl Ask {
        fn request(&self) -> Request<Result<CheckOutcome>> {
            let a = self.clone();
            Box::new(move |s: &Store| {
                s.check_and_insert(
                    &crate::types::Entry::new(&a.id, Fingerprint(a.fp), meta(a.hash)),
                    a.k,
                )
            })
        }
    }

    /// The invariants of racing checks (the order they are served in is not known):
    /// every `New` is stored; no two stored documents among them share a content hash or
    /// lie within the smaller of their two k; every other answer names a stored document
    /// that duplicates the request (same content hash, or the distance it says ≤ its k).
    fn assert_invariants(store: &Store, asks: &[Ask], answers: &[CheckOutcome], others: u64) {
        let new: Vec<&Ask> = asks
            .iter()
            .zip(answers)
            .filter(|(_, o)| o.is_new())
            .map(|(a, _)| a)
            .collect();
        assert_eq!(store.len(), new.len() as u64 + others, "{answers:?}");
        for (i, a) in new.iter().enumerate() {
            let doc = store.get(&a.id).unwrap().expect("a New is stored");
            assert_eq!(doc.fp, a.fp);
            for b in &new[i + 1..] {
                let d = (a.fp ^ b.fp).count_ones();
                assert!(d > a.k.min(b.k), "{a:?} and {b:?} both New at distance {d}");
                assert!(
                    a.hash.is_none() || a.hash != b.hash,
                    "{a:?}, {b:?}: same hash"
                );
            }
        }
        for (a, o) in asks.iter().zip(answers).filter(|(_, o)| !o.is_new()) {
            let of = o.duplicate_of().unwrap();
            let doc = store
                .get(of)
                .unwrap()
                .unwrap_or_else(|| panic!("{o:?} not stored"));
            match o {
                CheckOutcome::ExactDuplicate { .. } => assert_eq!(doc.content_hash, a.hash),
                _ => {
                    let d = (doc.fp ^ a.fp).count_ones();
                    assert!(
                        o.distance() == Some(d) && d <= a.k,
                        "{a:?}: {o:?}, really {d}"
                    );
                }
            }
        }
    }

    /// Requests per cluster of [`clustered`].
    const CLUSTER: usize = 8;

    /// `n` requests in clusters of [`CLUSTER`] around random bases: copies at distance 0 or
    /// 1 of the base (so within 2 of each other), a third of them with the base's content
    /// hash, each with a random k in `ks`.
    fn clustered(rng: &mut StdRng, n: usize, prefix: &str, ks: RangeInclusive<u32>) -> Vec<Ask> {
        let mut asks = Vec::new();
        let mut base = (0, 0u128);
        for i in 0..n {
            if i % CLUSTER == 0 {
                base = (rng.random::<u64>(), rng.random::<u128>());
            }
            let fp = base.0 ^ (u64::from(rng.random_bool(0.5)) << rng.random_range(0..64));
            let hash = match rng.random_range(0..3) {
                0 => base.1,
                _ => rng.random(),
            };
            let k = rng.random_range(ks.clone());
            let id = format!("{prefix}{i}");
            asks.push(Ask {
                id,
                fp,
                hash: Some(hash),
                k,
            });
        }
        asks
    }

    /// Writers queued behind a slow write are written together: one write for all of them.
    #[test]
    fn writers_waiting_on_a_slow_write_share_the_next_one() {
        let g = gated(usize::MAX);
        let mut rng = StdRng::seed_from_u64(1);
        let mut requests: Vec<Request<bool>> = Vec::new();
        for i in 0..8 {
            let (id, fp, hash) = (format!("d{i}"), Fingerprint(rng.random()), rng.random());
            requests.push(match i % 2 {
                0 => Box::new(move |s: &Store| {
                    let out =
                        s.check_and_insert(&crate::types::Entry::new(&id, fp, meta(Some(hash))), 3);
                    out.unwrap().is_new()
                }),
                _ => Box::new(move |s: &Store| {
                    let out = s.insert_fingerprint(&id, fp, meta(Some(hash)));
                    out.unwrap() == InsertOutcome::Inserted
                }),
            });
        }
        let answers = g.pile_up(0, requests);
        assert!(answers.iter().all(|&new| new), "{answers:?}");
        assert_eq!(g.store.len(), 9);
        // The first write alone, then the 8 requests queued behind it in one.
        assert_eq!(g.writes.load(Ordering::SeqCst), 2);
    }

    /// Near and exact copies of one page queued together: the first of the group is
    /// stored, every other one is its duplicate, though none of them was stored when the
    /// others were checked without the lock.
    #[test]
    fn a_group_checks_each_request_against_the_earlier_ones() {
        let g = gated(usize::MAX);
        let base = 0x0123_4567_89ab_cdef_u64;
        let asks: Vec<Ask> = (0..12)
            .map(|i| Ask {
                id: format!("copy{i}"),
                fp: base ^ (u64::from(i % 3 != 0) << (i % 64)),
                hash: Some(match i % 2 {
                    0 => 7,
                    _ => 100 + u128::from(i),
                }),
                k: 2 + i % 2,
            })
            .collect();
        let answers = g.pile_up(!base, asks.iter().map(Ask::request).collect());
        let answers: Vec<CheckOutcome> = answers.into_iter().map(Result::unwrap).collect();
        assert_eq!(
            answers.iter().filter(|o| o.is_new()).count(),
            1,
            "{answers:?}"
        );
        assert_invariants(&g.store, &asks, &answers, 1);
        assert_eq!(g.writes.load(Ordering::SeqCst), 2);
    }

    /// The group's write fails: no request that depends on it is answered New or as a
    /// duplicate of a document of the group; each gets the error, and the store holds
    /// none of them. A duplicate of a document stored before is still answered.
    #[test]
    fn a_failed_group_write_fails_every_request_that_depends_on_it() {
        let g = gated(1);
        let mut asks = clustered(&mut StdRng::seed_from_u64(2), 12, "c", 2..=3);
        asks.push(Ask {
            id: "same-as-first".into(),
            fp: 5,
            hash: Some(1),
            k: 3,
        });
        let mut requests: Vec<Request<Result<Option<CheckOutcome>>>> = asks
            .iter()
            .map(|a| {
                let r = a.request();
                Box::new(move |s: &Store| r(s).map(Some)) as Request<_>
            })
            .collect();
        requests.push(Box::new(|s: &Store| {
            s.insert_fingerprint("plain", Fingerprint(9), meta(None))
                .map(|_| None)
        }));
        let answers = g.pile_up(u64::MAX, requests);
        for (i, answer) in answers.iter().enumerate() {
            match asks.get(i).map(|a| a.id.as_str()) {
                Some("same-as-first") => assert!(
                    matches!(answer, Ok(Some(CheckOutcome::ExactDuplicate { of, .. })) if of == "first"),
                    "{answer:?}"
                ),
                _ => assert!(matches!(answer, Err(Error::Storage { .. })), "{answer:?}"),
            }
        }
        assert_eq!(g.store.len(), 1);
        for id in asks.iter().map(|a| a.id.as_str()).chain(["plain"]) {
            assert!(g.store.get(id).unwrap().is_none() || id == "same-as-first");
        }
        // The queue goes on: a later write is led and answered.
        g.armed.store(false, Ordering::SeqCst);
        let later = g
            .store
            .insert_fingerprint("later", Fingerprint(3), meta(None));
        assert!(matches!(later, Ok(InsertOutcome::Inserted)), "{later:?}");
    }

    fn insert(id: &'static str, fp: u64) -> Request<CheckOutcome> {
        Box::new(move |s: &Store| {
            let out = s
                .insert_fingerprint(id, Fingerprint(fp), meta(None))
                .unwrap();
            let replaced = out == InsertOutcome::Replaced;
            CheckOutcome::New {
                fp: Fingerprint(fp),
                replaced,
            }
        })
    }

    fn check(id: &'static str, fp: u64) -> Request<CheckOutcome> {
        let fp = Fingerprint(fp);
        Box::new(move |s: &Store| {
            s.check_and_insert(&crate::types::Entry::new(id, fp, meta(None)), 3)
                .unwrap()
        })
    }

    /// A request for an id an earlier request of its group writes is carried to the next
    /// group (one change set never writes an id twice): it comes after that write.
    #[test]
    fn a_second_write_of_an_id_goes_into_the_next_group() {
        let g = gated(usize::MAX);
        let (a, b) = (0x00ff_00ff_00ff_00ff, 0xff00_ff00_ff00_ff00);
        let answers = g.pile_up(0, vec![insert("x", a), check("x", b)]);
        assert!(
            matches!(
                answers[..],
                [
                    CheckOutcome::New {
                        replaced: false,
                        ..
                    },
                    CheckOutcome::New { replaced: true, .. }
                ]
            ),
            "{answers:?}"
        );
        assert_eq!(g.store.get("x").unwrap().unwrap().fp, b);
        // The first write, the group, the carried request alone.
        assert_eq!(g.writes.load(Ordering::SeqCst), 3);
    }

    /// A request whose duplicate in the store is a document an earlier request of its group
    /// replaces is carried to the next group, which sees the replacement: here the page
    /// it copies is gone, so it is new.
    #[test]
    fn a_duplicate_of_a_document_replaced_in_the_group_is_checked_again_after_it() {
        let g = gated(usize::MAX);
        let (old, new) = (0u64, u64::MAX);
        let answers = g.pile_up(old, vec![insert("first", new), check("y", old)]);
        assert!(
            matches!(
                answers[..],
                [
                    CheckOutcome::New { replaced: true, .. },
                    CheckOutcome::New {
                        replaced: false,
                        ..
                    }
                ]
            ),
            "{answers:?}"
        );
        assert_eq!(g.store.get("first").unwrap().unwrap().fp, new);
        assert_eq!(g.writes.load(Ordering::SeqCst), 3);
    }

    /// Runs `asks` on `threads` threads, the members of a cluster on different threads.
    fn race(store: &Store, asks: &[Ask], threads: usize) -> Vec<CheckOutcome> {
        let mut answers: Vec<Option<CheckOutcome>> = vec![None; asks.len()];
        thread::scope(|s| {
            let handles: Vec<_> = (0..threads)
                .map(|t| {
                    s.spawn(move || {
                        let mine = (t..asks.len()).step_by(threads);
                        let out: Vec<_> = mine.map(|i| (i, asks[i].request()(store))).collect();
                        out
                    })
                })
                .collect();
            for h in handles {
                for (i, out) in h.join().unwrap() {
                    answers[i] = Some(out.unwrap());
                }
            }
        });
        answers.into_iter().map(Option::unwrap).collect()
    }

    /// Many threads checking copies of the same pages at once: of each cluster exactly one
    /// is stored, whatever groups the requests fell into.
    #[test]
    fn racing_copies_store_exactly_one_of_each_cluster() {
        let g = gated(usize::MAX);
        g.open();
        let asks = clustered(&mut StdRng::seed_from_u64(3), 400, "r", 2..=3);
        let answers = race(&g.store, &asks, 8);
        for (c, cluster) in answers.chunks(CLUSTER).enumerate() {
            let new = cluster.iter().filter(|o| o.is_new()).count();
            assert_eq!(new, 1, "cluster {c}: {cluster:?}");
        }
        assert_invariants(&g.store, &asks, &answers, 0);
    }

    /// Racing checks with a k of their own (0..=3): the answers keep the invariants of
    /// [`assert_invariants`] (what some sequential order of the requests would answer).
    #[test]
    fn racing_checks_answer_as_some_sequential_order_would() {
        let g = gated(usize::MAX);
        g.open();
        let asks = clustered(&mut StdRng::seed_from_u64(4), 400, "r", 0..=3);
        let answers = race(&g.store, &asks, 8);
        assert_invariants(&g.store, &asks, &answers, 0);
    }

    /// The sequential model: each request of `asks` in turn against the documents stored
    /// so far (ids distinct): the first stored with its content hash, else the nearest
    /// within its k (ties: smallest id), else stored.
    fn sequential(stored: &mut Vec<Ask>, asks: &[Ask]) -> Vec<CheckOutcome> {
        let mut answers = Vec::new();
        for a in asks {
            let fp = Fingerprint(a.fp);
            let exact = stored.iter().find(|s| s.hash.is_some() && s.hash == a.hash);
            let near = stored
                .iter()
                .map(|s| ((s.fp ^ a.fp).count_ones(), s.id.clone()))
                .filter(|&(d, _)| d <= a.k)
                .min();
            answers.push(match (exact, near) {
                (Some(s), _) => CheckOutcome::ExactDuplicate {
                    of: s.id.clone(),
                    fp,
                },
                (None, Some((distance, of))) => CheckOutcome::NearDuplicate { of, distance, fp },
                (None, None) => {
                    stored.push(a.clone());
                    CheckOutcome::New {
                        fp,
                        replaced: false,
                    }
                }
            });
        }
        answers
    }

    /// A group of 64 clustered requests (k of their own) queued in a known order is
    /// answered exactly as the sequential model answers them in that order, and the store
    /// then holds exactly the model's documents.
    #[test]
    fn a_group_answers_as_the_sequential_run_in_its_order() {
        let g = gated(usize::MAX);
        let asks = clustered(&mut StdRng::seed_from_u64(5), 64, "p", 0..=3);
        let answers = g.pile_up(1, asks.iter().map(Ask::request).collect());
        let answers: Vec<CheckOutcome> = answers.into_iter().map(Result::unwrap).collect();
        let first = Ask {
            id: "first".into(),
            fp: 1,
            hash: Some(1),
            k: 0,
        };
        let mut model = vec![first];
        assert_eq!(answers, sequential(&mut model, &asks));
        assert_eq!(g.store.len(), model.len() as u64);
        for m in &model {
            assert_eq!(g.store.get(&m.id).unwrap().map(|d| d.fp), Some(m.fp));
        }
        assert_eq!(g.writes.load(Ordering::SeqCst), 2);
    }

    /// A check whose lock-free look is older than a write that was not a group's (a batch
    /// insert here) is checked against the store again, not only against the group writes
    /// recorded since: the near duplicate the batch stored is found.
    #[test]
    fn a_write_outside_the_groups_since_a_check_sends_it_back_to_the_store() {
        let store = StoreBuilder::in_memory().k_max(3).open().unwrap();
        let before = store.backend.version();
        // A recorded group write, then a batch write the groups did not record.
        store
            .insert_fingerprint("far", Fingerprint(!0), meta(None))
            .unwrap();
        let batch = [crate::types::Entry {
            id: "near".into(),
            fp: Fingerprint(0b111),
            meta: meta(None),
        }];
        store.insert_batch(batch).unwrap();
        let entry = crate::types::Entry {
            id: "copy".into(),
            fp: Fingerprint(0),
            meta: meta(None),
        };
        let ask = super::Ask::Check {
            rule: crate::index::quality::MatchRule::within(3),
            before,
        };
        let answer = store.submit(entry, ask).unwrap();
        let expected = CheckOutcome::NearDuplicate {
            of: "near".into(),
            distance: 3,
            fp: Fingerprint(0),
        };
        assert!(
            matches!(answer, super::Answer::Checked(ref got) if *got == expected),
            "{answer:?}"
        );
        assert_eq!(store.len(), 2, "the copy is not stored");
    }

    /// A page stored (by another caller) between a check's exact lookup and its probe, on
    /// a latest-state view as RocksDB's: the check answers it as an exact duplicate, as a
    /// check that saw the store before or after that write would. (It once answered a near
    /// duplicate at distance 0: the probe saw the page, the exact lookup had not.)
    #[test]
    fn a_page_stored_during_a_check_is_its_exact_duplicate() {
        let options = StoreBuilder::in_memory().k_max(3);
        let layout = options.layout().unwrap();
        let mut backend = Hooked::new(Box::new(MemoryBackend::new(
            options.backend_tables().unwrap(),
        )));
        let store_cell: Arc<OnceLock<Weak<Store>>> = Arc::new(OnceLock::new());
        let armed = Arc::new(AtomicBool::new(false));
        let (cell, arm) = (Arc::clone(&store_cell), Arc::clone(&armed));
        backend.after_first_exact = Some(Box::new(move || {
            if arm.swap(false, Ordering::SeqCst) {
                let store = cell.get().and_then(Weak::upgrade).unwrap();
                let write =
                    move || store.insert_fingerprint("first", Fingerprint(7), meta(Some(9)));
                assert!(matches!(
                    thread::spawn(write).join().unwrap(),
                    Ok(InsertOutcome::Inserted)
                ));
            }
        }));
        let store = Arc::new(Store::create(Box::new(backend), options, layout).unwrap());
        store_cell.set(Arc::downgrade(&store)).unwrap();
        armed.store(true, Ordering::SeqCst);
        let answer = store.check_and_insert(
            &crate::types::Entry::new("copy", Fingerprint(7), meta(Some(9))),
            3,
        );
        assert!(!armed.load(Ordering::SeqCst), "the hook ran");
        let expected = CheckOutcome::ExactDuplicate {
            of: "first".into(),
            fp: Fingerprint(7),
        };
        assert_eq!(answer.unwrap(), expected);
        assert_eq!(store.len(), 1);
    }

    /// A group of checks under a mode's rule (candidates within 12 in a shared span, kept
    /// when the sketches agree) is answered as the sequential run: a copy at distance 6
    /// whose bits spare a table's prefix, with the same sketch, is a near duplicate of the
    /// group's first; the same fingerprint with another text's sketch is new; a copy whose
    /// six bits touch every block (no span shared) is found by the sketch's bands alone.
    #[test]
    fn a_group_applies_a_mode_rule_with_its_spans_and_sketches() {
        let g = gated(usize::MAX);
        assert_eq!(g.store.layout().widths(), &[16, 16, 16, 16]);
        let rule = crate::index::quality::Quality::Standard.rule(3);
        let sketch = |b: u8| Some(crate::types::Sketch::uniform(b));
        let ask = |id: &'static str, fp: u64, family: u8| -> Request<Result<CheckOutcome>> {
            Box::new(move |s: &Store| {
                let meta = DocMeta {
                    sketch: sketch(family),
                    ..DocMeta::default()
                };
                s.check_and_insert(&crate::types::Entry::new(id, Fingerprint(fp), meta), rule)
            })
        };
        let far = u64::MAX;
        let every_block = (1 << 0) | (1 << 1) | (1 << 16) | (1 << 17) | (1 << 32) | (1 << 48);
        let answers = g.pile_up(
            far,
            vec![
                ask("y", 0, 1),
                ask("x", 0x3F, 1),
                ask("z", 0x3F, 2),
                ask("w", every_block, 1),
            ],
        );
        let shapes: Vec<(bool, Option<String>, Option<u32>)> = answers
            .into_iter()
            .map(|a| a.unwrap())
            .map(|o| {
                (
                    o.is_new(),
                    o.duplicate_of().map(str::to_owned),
                    o.distance(),
                )
            })
            .collect();
        let new = (true, None, None);
        let near_y = (false, Some("y".into()), Some(6));
        assert_eq!(shapes, [new.clone(), near_y.clone(), new, near_y]);
        assert_eq!(g.store.len(), 3, "the gate's document, y and z");
    }

    /// Under the high mode's rule a group finds, as a sequential check would, a copy that
    /// no table's prefix holds but a query-directed probe of its weak bits does: four bits
    /// apart, one in each block, the weakest of them in a table's prefix.
    #[test]
    fn a_group_applies_the_query_directed_probes() {
        use crate::types::weak_bits::{WEAK_BITS, WeakBits};
        let g = gated(usize::MAX);
        // Without bands: the uniform sketches below share every band.
        let rule = crate::index::quality::MatchRule {
            bands: 0,
            ..crate::index::quality::Quality::High.rule(3)
        };
        let one_per_block = (1 << 0) | (1 << 16) | (1 << 32) | (1 << 48);
        assert!(!g.store.layout().finds(3, 0, one_per_block));
        let bits: [u8; WEAK_BITS] = std::array::from_fn(|i| [0, 16, 32, 48][i % 4] + (i / 4) as u8);
        let margins: [u16; WEAK_BITS] = std::array::from_fn(|i| i as u16);
        let weak = WeakBits::from_parts(bits, margins).unwrap();
        let ask =
            |id: &'static str, fp: u64, weak: Option<WeakBits>| -> Request<Result<CheckOutcome>> {
                Box::new(move |s: &Store| {
                    let meta = DocMeta {
                        sketch: Some(crate::types::Sketch::uniform(1)),
                        weak_bits: weak,
                        ..DocMeta::default()
                    };
                    s.check_and_insert(&crate::types::Entry::new(id, Fingerprint(fp), meta), rule)
                })
            };
        let answers = g.pile_up(
            u64::MAX,
            vec![
                ask("y", 0, None),
                ask("x", one_per_block, Some(weak)),
                ask("z", one_per_block ^ (1 << 5), None),
            ],
        );
        let shapes: Vec<(bool, Option<String>)> = answers
            .into_iter()
            .map(|a| a.unwrap())
            .map(|o| (o.is_new(), o.duplicate_of().map(str::to_owned)))
            .collect();
        // x: y found by a probe of x's weakest bit. z, without weak bits, is new: no table
        // puts y in its spans (and x, a duplicate, was not stored).
        assert_eq!(
            shapes,
            [(true, None), (false, Some("y".into())), (true, None)]
        );
    }
}
