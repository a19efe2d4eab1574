//! The entries the last groups wrote, by the backend versions around each write.
//!
//! A check runs first without the writer lock; when its group comes, any write since then
//! may have stored a duplicate of it. Where every write since the check was a group's write
//! recorded here, its entries are all there is to check the request against — in memory,
//! as a group checks its own requests — instead of probing the store again under the writer
//! lock (which would make concurrent checks take turns at twice the work).

use std::collections::{HashSet, VecDeque};
use std::sync::Arc;

use super::Ticket;
use crate::types::Entry;

/// Group writes kept; a check older than all of them is done again against the store.
const KEPT_WRITES: usize = 64;

/// One group's write: the backend's version just before and just after it, and the
/// requests whose entries it wrote, in order.
struct Write {
    before: u64,
    after: u64,
    tickets: Vec<Arc<Ticket>>,
}

/// The last [`KEPT_WRITES`] group writes (read and written under the writer lock).
#[derive(Default)]
pub(super) struct Recent {
    writes: VecDeque<Write>,
}

impl Recent {
    /// Records a group write that took the backend from version `before` to `after`.
    pub(super) fn record(&mut self, before: u64, after: u64, tickets: Vec<Arc<Ticket>>) {
        if self.writes.len() == KEPT_WRITES {
            self.writes.pop_front();
        }
        self.writes.push_back(Write {
            before,
            after,
            tickets,
        });
    }

    /// The entries written from version `from` to version `now` (the latest entry of each
    /// id, in the order written), or `None` unless recorded writes, one after the other,
    /// account for every version in between: any other write (a delete, a batch insert, a
    /// bulk load, a repair) may have added or removed documents.
    pub(super) fn since(&self, from: u64, now: u64) -> Option<Vec<&Entry>> {
        let start = self.writes.iter().position(|w| w.before == from)?;
        let mut at = from;
        let mut entries = Vec::new();
        for w in self.writes.iter().skip(start) {
            if at == now {
                break;
            }
            if w.before != at {
                return None;
            }
            entries.extend(w.tickets.iter().map(|t| &t.entry));
            at = w.after;
        }
        if at != now {
            return None;
        }
        // A later write of an id replaced the earlier one.
        let mut seen = HashSet::new();
        let mut latest: Vec<&Entry> = entries
            .into_iter()
            .rev()
            .filter(|e| seen.insert(e.id.as_str()))
            .collect();
        latest.reverse();
        Some(latest)
    }
}

#[cfg(test)]
mod tests {
    use super::super::Ask;
    use super::*;
    use crate::types::{DocMeta, Fingerprint};

    fn ticket(id: &str, fp: u64) -> Arc<Ticket> {
        let entry = Entry {
            id: id.to_owned(),
            fp: Fingerprint(fp),
            meta: DocMeta::default(),
        };
        Arc::new(Ticket::new(entry, Ask::Insert))
    }

    fn ids(entries: Option<Vec<&Entry>>) -> Option<Vec<(String, u64)>> {
        entries.map(|es| es.iter().map(|e| (e.id.clone(), e.fp.0)).collect())
    }

    #[test]
    fn only_an_unbroken_run_of_recorded_writes_answers() {
        let mut r = Recent::default();
        r.record(10, 12, vec![ticket("a", 1), ticket("b", 2)]);
        r.record(12, 13, vec![ticket("a", 3)]);
        r.record(15, 16, vec![ticket("c", 4)]);
        let pair = |id: &str, fp| (id.to_owned(), fp);
        assert_eq!(
            ids(r.since(10, 10)),
            Some(vec![]),
            "nothing written from 10 to 10"
        );
        assert_eq!(ids(r.since(10, 12)), Some(vec![pair("a", 1), pair("b", 2)]));
        assert_eq!(
            ids(r.since(10, 13)),
            Some(vec![pair("b", 2), pair("a", 3)]),
            "the later write of `a` replaced the earlier"
        );
        assert_eq!(ids(r.since(12, 13)), Some(vec![pair("a", 3)]));
        assert_eq!(ids(r.since(13, 16)), None, "13 to 15 was not recorded");
        assert_eq!(ids(r.since(10, 16)), None, "13 to 15 was not recorded");
        assert_eq!(ids(r.since(15, 16)), Some(vec![pair("c", 4)]));
        assert_eq!(ids(r.since(12, 17)), None, "16 to 17 was not recorded");
        assert_eq!(ids(r.since(11, 13)), None, "11 is inside a write");
    }

    #[test]
    fn the_oldest_writes_are_let_go() {
        let mut r = Recent::default();
        for v in 0..KEPT_WRITES as u64 + 1 {
            r.record(v, v + 1, vec![ticket("a", v)]);
        }
        assert!(r.since(0, 2).is_none());
        assert!(r.since(1, 2).is_some());
    }
}
