//! Retention: the store's policy, last-seen times, and the expiry of old documents.
//!
//! Stored times follow sequence numbers in a store of [`codec::TIMED_FORMAT`] written by
//! one process (each write's time is never below the last one's, [`Store::next_time`]), so
//! an expiry reads `docs` from the oldest record and stops at the first one stored after
//! the cutoff: it reads the documents it expires (and, by last-seen time, those stored
//! before the cutoff), not the whole store.

use super::backend::{Change, ChangeSet, Consistency, Maintenance, MetaKey};
use super::codec::{self, retention as rcodec};
use super::write::Linked;
use super::{Counters, Store, now};
use crate::error::{Error, Result};
use crate::index::bands;
use crate::types::Entry;
use crate::types::{Retention, StoredDoc, TimeField};

/// A last-seen time is refreshed only when it is at least this old (seconds): a page
/// checked again and again writes its record at most once a second.
pub const SEEN_RESOLUTION: u64 = 1;

/// How far (seconds) a stored time may run behind an earlier one in sequence order, e.g.
/// across a restart after the clock was stepped back (a process never writes a time below
/// one it wrote; on open it reads the latest of the last records): an expiry reads on for
/// this long past the cutoff before it stops. A larger step delays the expiry of the
/// documents stored before it by at most the step.
pub const CLOCK_SLACK: u64 = 60;

/// The backend's version after this expiry's last write, while no other write came
/// since its scan began (`None` once one did, or on a store many processes write).
struct Clean(Option<u64>);

/// What [`Store::expire`] removes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ExpireOptions {
    /// Documents whose time is before this (seconds since the Unix epoch) are expired.
    pub before: u64,
    /// Which time is compared: stored or last seen.
    pub by: TimeField,
    /// Count them without deleting anything.
    pub dry_run: bool,
    /// Documents deleted per change set (each batch is atomic; at least 1).
    pub batch: usize,
}

impl ExpireOptions {
    /// Documents from before `before` (seconds since the Unix epoch), by `by`, in batches
    /// of 1,000.
    pub fn before(before: u64, by: TimeField) -> Self {
        ExpireOptions {
            before,
            by,
            dry_run: false,
            batch: 1_000,
        }
    }

    /// Documents older than `secs` seconds now, by `by`, in batches of 1,000.
    pub fn older_than(secs: u64, by: TimeField) -> Self {
        Self::before(now().saturating_sub(secs), by)
    }
}

/// What an expiry did.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ExpireReport {
    /// Records read.
    pub scanned: u64,
    /// Documents deleted (with `dry_run`: that would have been).
    pub expired: u64,
    /// Change sets written.
    pub batches: u64,
    /// Whether every record was read: the store's times are not known to follow its
    /// sequence numbers (a format before 7, a store many processes write).
    pub full_scan: bool,
    /// The smallest and largest sequence numbers expired (the `docs` range compacted
    /// after the expiry).
    pub expired_seqs: (u64, u64),
    /// The time the compaction after the expiry took (part of the expiry's).
    pub compaction: std::time::Duration,
}

impl Store {
    /// The store's retention policy.
    pub fn retention(&self) -> Retention {
        *self.retention.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Sets the retention policy, kept in the store's `meta`: whether duplicates found by
    /// [`Store::check_and_insert`] refresh the last-seen time of the stored document, and
    /// how old a document may get before `serve` and long imports expire it by themselves.
    ///
    /// Errors: [`Error::InvalidArgument`] for a retention of 0 seconds (it would expire
    /// every document as it is stored); [`Error::Unsupported`] to track last-seen times in
    /// a store older than format 7 (copy it into a new store first); [`Error::ReadOnly`];
    /// storage errors.
    pub fn set_retention(&self, r: Retention) -> Result<()> {
        self.check_writable()?;
        if r.retain_secs == Some(0) {
            return Err(Error::InvalidArgument(
                "a retention of 0 seconds would expire every document as soon as it is \
                 stored: give a duration (e.g. 90d), or none to keep every document \
                 (Store::expire removes old documents once)"
                    .into(),
            ));
        }
        if r.track_seen && self.format < codec::TIMED_FORMAT {
            return Err(Error::Unsupported(format!(
                "this store is of format {}, whose records have no last-seen time; copy it \
                 into a new store (Store::for_each_doc into Store::insert_batch) to track \
                 last-seen times",
                self.format
            )));
        }
        let counters = self.lock();
        counters.usable()?;
        let mut changes = ChangeSet::new();
        changes.push(Change::PutMeta(
            MetaKey::Retention,
            rcodec::encode_retention(&r),
        ));
        self.backend
            .write(&changes, super::backend::Durability::Synced)?;
        *self.retention.lock().unwrap_or_else(|e| e.into_inner()) = r;
        self.unlock(counters);
        Ok(())
    }

    /// Reads the retention policy, the timeline mark and the latest stored time, on open.
    pub(super) fn read_timeline(&mut self) -> Result<()> {
        let snap = self.backend.snapshot(Consistency::PointInTime);
        if let Some(bytes) = snap.meta(MetaKey::Retention)? {
            *self.retention.get_mut().unwrap_or_else(|e| e.into_inner()) =
                rcodec::decode_retention(&bytes)?;
        }
        let counters = self.counters.get_mut().unwrap_or_else(|e| e.into_inner());
        if self.format < codec::TIMED_FORMAT || self.backend.shared().is_some() {
            return Ok(());
        }
        counters.ordered_from = match snap.meta(MetaKey::Timeline)? {
            Some(bytes) => rcodec::decode_timeline(&bytes)?,
            None => 0,
        };
        // The latest time among the last records (one that cannot be read, e.g. in a
        // damaged store opened for repair, counts as none).
        let seqs: Vec<u64> = (counters.next_seq.saturating_sub(64)..counters.next_seq).collect();
        // A time ahead of the clock was written out of order ([`Store::note_time`]).
        let ahead = super::now().saturating_add(CLOCK_SLACK);
        counters.last_time = snap
            .docs(&seqs)
            .unwrap_or_default()
            .into_iter()
            .flatten()
            .map(|d| d.time)
            .filter(|&t| t <= ahead)
            .max()
            .unwrap_or(0);
        Ok(())
    }

    /// Deletes every document whose time (`opts.by`) is before `opts.before`, with its
    /// table entries, in atomic batches of `opts.batch`, calling `progress` after each.
    /// A document refreshed or replaced since the scan read it is re-checked under the
    /// writer lock and kept if it is no longer old. A crash leaves every document either
    /// whole or gone.
    ///
    /// Errors: [`Error::ReadOnly`] (unless `dry_run`), storage errors.
    pub fn expire(
        &self,
        opts: &ExpireOptions,
        mut progress: impl FnMut(&ExpireReport),
    ) -> Result<ExpireReport> {
        if !opts.dry_run {
            self.check_writable()?;
        }
        let ordered_from = self.lock().ordered_from;
        let stop_at = opts.before.saturating_add(CLOCK_SLACK);
        let mut report = ExpireReport {
            full_scan: ordered_from == u64::MAX,
            ..ExpireReport::default()
        };
        let mut pending: Vec<(u64, StoredDoc)> = Vec::new();
        // While no other write came since the scan's view was taken (one writing process),
        // what the scan read is current and a batch need not read it again.
        let mut clean = Clean(
            self.backend
                .shared()
                .is_none()
                .then(|| self.backend.version()),
        );
        self.scan_by_seq(0, |seq, doc| {
            if seq >= ordered_from && doc.time >= stop_at {
                return Ok(false);
            }
            report.scanned += 1;
            if opts.by.of(&doc) < opts.before {
                let (lo, hi) = &mut report.expired_seqs;
                (*lo, *hi) = match pending.is_empty() && report.expired == 0 {
                    true => (seq, seq),
                    false => ((*lo).min(seq), (*hi).max(seq)),
                };
                pending.push((seq, doc));
            }
            if pending.len() >= opts.batch.max(1) {
                self.expire_batch(opts, (&mut pending, &mut clean), &mut report)?;
                progress(&report);
            }
            Ok(true)
        })?;
        if !pending.is_empty() {
            self.expire_batch(opts, (&mut pending, &mut clean), &mut report)?;
            progress(&report);
        }
        if report.expired > 0 && !opts.dry_run {
            // The derived spaces too once a tenth of the store went: their deletes are
            // spread over every table, where compaction folds them in its own time.
            let (lo, hi) = report.expired_seqs;
            let derived = report.expired.saturating_mul(10) >= self.len() + report.expired;
            let start = std::time::Instant::now();
            self.backend.maintain(Maintenance::Compact {
                docs: lo..hi.saturating_add(1),
                derived,
            })?;
            report.compaction = start.elapsed();
        }
        Ok(report)
    }

    /// Deletes the documents of `pending` (sequence number, record as the scan read it)
    /// that are still old, in one change set under the writer lock; empties `pending`.
    /// Unless `clean` says no other write came since the scan read them, each is read again
    /// first (a document refreshed, replaced or deleted since stays as it is now).
    fn expire_batch(
        &self,
        opts: &ExpireOptions,
        (pending, clean): (&mut Vec<(u64, StoredDoc)>, &mut Clean),
        report: &mut ExpireReport,
    ) -> Result<()> {
        if opts.dry_run {
            report.expired += pending.len() as u64;
            pending.clear();
            return Ok(());
        }
        let mut counters = self.lock();
        counters.usable()?;
        if clean.0 != Some(self.backend.version()) {
            clean.0 = None;
            self.reread(pending, opts)?;
        }
        let mut changes = ChangeSet::new();
        for (seq, doc) in pending.iter() {
            let old = Linked {
                seq: *seq,
                fp: doc.fp,
                hash: doc.content_hash,
                time: Some(doc.time),
                bands: bands::of(doc.sketch.as_ref()),
                has_record: true,
            };
            self.push_delete(&mut changes, &doc.id, old);
        }
        let gone = pending.len() as u64;
        pending.clear();
        if gone > 0 {
            self.commit_deletes(&mut counters, changes, gone)?;
            report.batches += 1;
            clean.0 = clean.0.map(|_| self.backend.version());
        }
        self.unlock(counters);
        report.expired += gone;
        Ok(())
    }

    /// Keeps of `pending` the documents that are, as now stored, still old: their id still
    /// names their sequence number, their record is there and its time before the cutoff.
    fn reread(&self, pending: &mut Vec<(u64, StoredDoc)>, opts: &ExpireOptions) -> Result<()> {
        let snap = self.view(Consistency::PointInTime);
        let ids: Vec<&str> = pending.iter().map(|(_, d)| d.id.as_str()).collect();
        let seqs: Vec<u64> = pending.iter().map(|&(seq, _)| seq).collect();
        let values = snap.ids(&ids)?;
        let docs = snap.docs(&seqs)?;
        let now = seqs.into_iter().zip(values).zip(docs);
        *pending = now
            .filter_map(|((seq, value), doc)| match (value, doc) {
                (Some(v), Some(d)) if v.seq == seq && opts.by.of(&d) < opts.before => {
                    Some((seq, d))
                }
                _ => None,
            })
            .collect();
        Ok(())
    }

    /// Compacts the whole store now (RocksDB: every column family), giving back the space
    /// deletes, replacements and expiries left behind ([`crate::Stats::reclaimable_bytes`]).
    /// Runs in the caller's thread; reads and writes go on meanwhile.
    pub fn compact(&self) -> Result<()> {
        self.check_writable()?;
        self.backend.maintain(Maintenance::Compact {
            docs: 0..u64::MAX,
            derived: true,
        })
    }

    /// Applies the retention policy until `stop` is set: expires the documents older than
    /// the policy's `retain_secs` at once (even when `stop` is already set), then every `every` (or every tenth of the
    /// retained time, when shorter: at least a second), re-reading the policy each time, so
    /// a policy changed meanwhile takes effect. Pauses `pause` between batches of 1,000 so
    /// that queries and writes go on at their pace. For a thread of its own beside a
    /// server or a long import; returns the first error (the caller says it), else `Ok`
    /// once stopped.
    pub fn apply_retention(
        &self,
        stop: &std::sync::atomic::AtomicBool,
        every: std::time::Duration,
        pause: std::time::Duration,
        mut report: impl FnMut(&ExpireReport),
    ) -> Result<()> {
        use std::sync::atomic::Ordering;
        use std::time::{Duration, Instant};
        // The first pass runs even when `stop` is already set: a short import that ends
        // before this thread starts still applies the policy once.
        loop {
            let policy = self.retention();
            let mut period = every;
            if let Some(secs) = policy.retain_secs {
                let opts = ExpireOptions::older_than(secs, policy.by);
                let done = self.expire(&opts, |_| std::thread::sleep(pause))?;
                if done.expired > 0 {
                    report(&done);
                }
                period = period.min(Duration::from_secs((secs / 10).max(1)));
            }
            let start = Instant::now();
            while start.elapsed() < period && !stop.load(Ordering::Relaxed) {
                std::thread::sleep(Duration::from_millis(50));
            }
            if stop.load(Ordering::Relaxed) {
                return Ok(());
            }
        }
    }

    /// The stored and last-seen times of entry `e`, written now (`time`) as document
    /// `seq` (`kept`: the stored time of the same-fingerprint document it replaces in
    /// place): its own times (a restore), else `time` — a replacement in place keeps its
    /// stored time from [`codec::TIMED_FORMAT`] on, so that times follow sequence numbers.
    /// Also whether the timeline mark moved: a time out of order (an older stored time
    /// after newer ones, or any given time in place) makes the documents up to `seq` be
    /// read by every expiry.
    pub(super) fn entry_times(
        &self,
        counters: &mut Counters,
        e: &Entry,
        (seq, kept): (u64, Option<u64>),
        time: u64,
    ) -> ((u64, u64), bool) {
        let Some((stored, seen)) = e.meta.times else {
            let stored = match kept {
                Some(t) if self.format >= codec::TIMED_FORMAT => t,
                _ => time,
            };
            return ((stored, time), false);
        };
        (
            (stored, seen),
            self.note_time(counters, seq, stored, kept.is_none()),
        )
    }

    /// Notes a given stored time `t` written at `seq` (`appended`: under a new sequence
    /// number); returns whether the timeline mark moved.
    pub(super) fn note_time(
        &self,
        counters: &mut Counters,
        seq: u64,
        t: u64,
        appended: bool,
    ) -> bool {
        if counters.ordered_from == u64::MAX {
            return false;
        }
        // A time ahead of the clock (a record from a machine whose clock ran ahead, or a
        // mistake) would stamp every later write with it: it counts as out of order.
        let ahead = t > super::now().saturating_add(CLOCK_SLACK);
        if appended && t >= counters.last_time && !ahead {
            counters.last_time = t;
            return false;
        }
        let from = counters.ordered_from.max(seq + 1);
        std::mem::replace(&mut counters.ordered_from, from) != from
    }

    /// The change that records the timeline mark.
    pub(super) fn timeline_change(&self, counters: &Counters) -> Change {
        Change::PutMeta(
            MetaKey::Timeline,
            rcodec::encode_timeline(counters.ordered_from),
        )
    }

    /// With last-seen tracking on: sets the last-seen time of document `id` to now, unless
    /// it was refreshed within [`SEEN_RESOLUTION`]. A document gone meanwhile is left gone.
    pub(super) fn touch_seen(&self, id: &str) -> Result<()> {
        if !self.retention().track_seen || self.seen_is_fresh(id)? {
            return Ok(());
        }
        let mut counters = self.lock();
        counters.usable()?;
        let snap = self.view(Consistency::PointInTime);
        let Some(value) = snap.ids(&[id])?.pop().flatten() else {
            return Ok(());
        };
        let Some(mut doc) = snap.docs(&[value.seq])?.pop().flatten() else {
            return Ok(());
        };
        let time = self.next_time(&mut counters);
        if doc.seen.saturating_add(SEEN_RESOLUTION) > time {
            return Ok(());
        }
        doc.seen = time;
        let mut changes = ChangeSet::new();
        changes.push(Change::PutDoc(value.seq, Box::new(doc)));
        let (next, live) = (counters.next_seq, counters.live);
        self.commit_write(&mut counters, changes, (next, live), self.durability())?;
        self.unlock(counters);
        Ok(())
    }

    /// Whether `id`'s last-seen time is recent enough not to be written again (read
    /// without the writer lock); a missing document counts as fresh.
    fn seen_is_fresh(&self, id: &str) -> Result<bool> {
        let Some(doc) = self.get(id)? else {
            return Ok(true);
        };
        Ok(doc.seen.saturating_add(SEEN_RESOLUTION) > now())
    }
}
