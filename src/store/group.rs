//! Group commit: single-document writes ([`Store::check_and_insert`],
//! [`Store::insert_fingerprint`]) that arrive together are checked and written as one
//! change set — one [`super::backend::Backend::write`], one fsync when writes are synced.
//!
//! A writer queues its request (a [`Ticket`]). If no other writer leads, it leads: it takes
//! the writer lock, takes every queued request (its own among them, at most [`MAX_GROUP`]),
//! checks each against the store *and* against the requests before it in the group, writes
//! the new ones in one change set and answers every request of the group only after that
//! write returned. Then it hands the lead to the first request queued meanwhile; the
//! others sleep on their ticket until answered or asked to lead.
//!
//! A request whose id an earlier request of the group writes, or whose duplicate in the
//! store is a document an earlier request replaces, is *carried* to the next group (the
//! front of the queue), where the store holds that write: so within a group every written
//! id is distinct and every answer names a document as the group leaves it.

use std::collections::{HashSet, VecDeque};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};

use super::crawl::CheckOutcome;
use super::{Counters, InsertOutcome, Store};
use crate::error::{Error, Result};
use crate::types::Entry;

/// The most requests one group writes (the in-group check is quadratic in it).
const MAX_GROUP: usize = 256;

/// What a queued request asks.
#[derive(Debug, Clone, Copy)]
pub(super) enum Ask {
    /// Store the entry (replacing a document of the same id).
    Insert,
    /// Store the entry unless a document duplicates it within `k`. `before`: the backend's
    /// version before the caller's lock-free check, which found no duplicate.
    Check {
        /// The request's Hamming distance.
        k: u32,
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
    /// Asked to lead the next group (it is still queued).
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
}

impl Ticket {
    fn set(&self, slot: Slot) {
        *lock(&self.slot) = slot;
        self.ready.notify_one();
    }

    /// Sleeps until the request is answered (`Some`) or asked to lead (`None`).
    fn wait(&self) -> Option<Result<Answer>> {
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

    /// The next group: the first [`MAX_GROUP`] queued requests.
    fn take_group(&self) -> Vec<Arc<Ticket>> {
        let mut q = lock(&self.state);
        let n = q.waiting.len().min(MAX_GROUP);
        q.waiting.drain(..n).collect()
    }

    /// Ends a leader's turn: puts `carried` back in front of the queue, in order; then,
    /// unless the leader goes on (`keep`), hands the lead to the first queued request.
    fn end_turn(&self, carried: Vec<Arc<Ticket>>, keep: bool) {
        let mut q = lock(&self.state);
        for t in carried.into_iter().rev() {
            q.waiting.push_front(t);
        }
        if keep {
            return;
        }
        match q.waiting.front() {
            Some(next) => next.set(Slot::Lead),
            None => q.leading = false,
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
    /// Answers the requests (carrying some over) and ends the turn. `own`: the leader's
    /// ticket; the leader goes on leading if it is carried.
    fn finish(mut self, fates: Vec<Option<Result<Answer>>>, own: &Arc<Ticket>) {
        let mut carried = Vec::new();
        let mut answered = Vec::new();
        for (t, fate) in std::mem::take(&mut self.tickets).into_iter().zip(fates) {
            match fate {
                Some(answer) => answered.push((t, answer)),
                None => carried.push(t),
            }
        }
        let keep = carried.iter().any(|t| Arc::ptr_eq(t, own));
        self.queue.end_turn(carried, keep);
        for (t, answer) in answered {
            t.set(Slot::Done(answer));
        }
        self.finished = true;
    }
}

impl Drop for Turn<'_> {
    fn drop(&mut self) {
        if self.finished {
            return;
        }
        for t in &self.tickets {
            t.set(Slot::Done(Err(Error::Storage(
                "the write of this request's group was abandoned: the thread writing it \
                 panicked; retry the request"
                    .into(),
            ))));
        }
        self.queue.end_turn(Vec::new(), false);
    }
}

impl Store {
    /// Queues a one-entry write (id already validated, store writable, not a shared
    /// backend) and returns its answer once the group holding it is written.
    pub(super) fn submit(&self, entry: Entry, ask: Ask) -> Result<Answer> {
        let own = Arc::new(Ticket {
            entry,
            ask,
            slot: Mutex::new(Slot::Queued),
            ready: Condvar::new(),
        });
        if !self.group.join(&own)
            && let Some(answer) = own.wait()
        {
            return answer;
        }
        loop {
            self.lead_turn(&own);
            if let Some(answer) = own.try_take() {
                return answer;
            }
        }
    }

    /// One turn as leader: takes the writer lock and the queued requests, checks and
    /// writes them as one change set, then answers them.
    fn lead_turn(&self, own: &Arc<Ticket>) {
        let mut counters = self.lock();
        let turn = Turn {
            queue: &self.group,
            tickets: self.group.take_group(),
            finished: false,
        };
        let fates = self.run_group(&mut counters, &turn.tickets);
        self.unlock(counters);
        turn.finish(fates, own);
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
        let mut written: Vec<&Entry> = Vec::new();
        let mut ids: HashSet<&str> = HashSet::new();
        let mut fates = Vec::with_capacity(tickets.len());
        for t in tickets {
            let fate = self.fate(t, &written, &ids);
            if let Fate::Written(_) = fate {
                written.push(&t.entry);
                ids.insert(&t.entry.id);
            }
            fates.push(fate);
        }
        let wrote = match written.is_empty() {
            true => Ok(Vec::new()),
            false => self.write_entries(counters, &written, None),
        };
        let answers = tickets.iter().zip(fates);
        answers.map(|(t, fate)| answer(t, fate, &wrote)).collect()
    }

    /// The fate of request `t`, given the entries the group writes before it (`written`,
    /// with their `ids`). A `Written` fate's index is `written.len()`.
    fn fate(&self, t: &Ticket, written: &[&Entry], ids: &HashSet<&str>) -> Fate {
        let e = &t.entry;
        if ids.contains(e.id.as_str()) {
            return Fate::Carried;
        }
        let Ask::Check { k, before } = t.ask else {
            return Fate::Written(written.len());
        };
        // The lock-free check saw the store as of `before`; only a write since then (some
        // earlier group) can have stored a duplicate.
        let stored = match self.backend.version() == before {
            true => None,
            false => match self.find_duplicate(e.fp, e.meta.content_hash, k) {
                Ok(found) => found,
                Err(err) => return Fate::Answered(Err(err)),
            },
        };
        if let Some(of) = stored.as_ref().and_then(|d| d.duplicate_of())
            && ids.contains(of)
        {
            return Fate::Carried;
        }
        match first_duplicate(stored, in_group(written, e, k)) {
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
/// first with its content hash (`exact`), and the nearest within `k` (ties: smallest id).
struct InGroup {
    exact: Option<CheckOutcome>,
    near: Option<CheckOutcome>,
}

fn in_group(written: &[&Entry], e: &Entry, k: u32) -> InGroup {
    let fp = e.fp;
    let exact = e.meta.content_hash.and_then(|h| {
        let first = written.iter().find(|w| w.meta.content_hash == Some(h))?;
        Some(CheckOutcome::ExactDuplicate {
            of: first.id.clone(),
            fp,
        })
    });
    let near = written
        .iter()
        .map(|w| ((w.fp.0 ^ fp.0).count_ones(), &w.id))
        .filter(|&(d, _)| d <= k)
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
        Error::Storage(s) => Error::Storage(s.clone()),
        Error::Corrupt(s) => Error::Corrupt(s.clone()),
        Error::BulkLoadFailed(s) => Error::BulkLoadFailed(s.clone()),
        Error::Io(io) => Error::Io(std::io::Error::new(io.kind(), io.to_string())),
        other => Error::Storage(other.to_string()),
    }
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    // The queue's state is valid between any two statements: a panic leaves nothing half done.
    m.lock().unwrap_or_else(|e| e.into_inner())
}
