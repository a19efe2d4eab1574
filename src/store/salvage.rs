//! What a damaged store loses: the damaged records of a write-ahead log a salvage drops
//! ([`LogDamage`]), and the documents a repair cannot read ([`RepairReport`]); the read of
//! `docs` that steps over damaged parts.

use super::Store;
use super::backend::{Consistency, Snapshot};
use super::codec;
use crate::error::{Error, Result};
use crate::types::StoredDoc;

/// What a salvage found in a store's damaged write-ahead log
/// ([`crate::StoreBuilder::salvage`]): the writes of the damaged records are lost,
/// every intact write batch is kept.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct LogDamage {
    /// Write batches read intact from the log (and replayed).
    pub batches: u64,
    /// Damaged places in the log. Each loses the write batches it touches: the rest of its
    /// 32 KiB block of the log.
    pub damaged_records: u64,
    /// Bytes of the log dropped with them.
    pub dropped_bytes: u64,
    /// The log files that held damage.
    pub damaged_files: Vec<String>,
}

impl LogDamage {
    /// True when the log held no damage (nothing was dropped).
    pub fn is_clean(&self) -> bool {
        self.damaged_records == 0
    }

    /// Counts one damaged place losing `bytes` bytes.
    pub(crate) fn note_damage(&mut self, bytes: usize) {
        self.damaged_records += 1;
        self.dropped_bytes += bytes as u64;
    }
}

impl std::fmt::Display for LogDamage {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{} damaged places in {} losing {} bytes; {} intact write batches",
            self.damaged_records,
            self.damaged_files.join(", "),
            self.dropped_bytes,
            self.batches
        )
    }
}

/// What [`crate::StoreBuilder::salvage`] found and did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct SalvageReport {
    /// What the write-ahead log lost.
    pub log: LogDamage,
    /// The repair that rebuilt the derived data, and the documents it could not read.
    pub repair: RepairReport,
}

/// What [`Store::repair`] did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct RepairReport {
    /// Documents kept (their tables, `ids` and `exact` entries rebuilt).
    pub kept: u64,
    /// Ranges of sequence numbers (inclusive) of `docs` that could not be read: a damaged
    /// block of the document records. The documents in them are lost.
    pub unreadable: Vec<(u64, u64)>,
    /// Sequence numbers of document records that were read but could not be decoded: the
    /// records are deleted (their documents lost).
    pub undecodable: Vec<u64>,
    /// How many documents the counters held before the repair and are gone now (damage
    /// included; 0 for a sound store).
    pub lost: u64,
}

impl Store {
    /// Calls `f` with every document of `docs` that can be read, in sequence order. A
    /// damaged part (the backend reports corruption) is stepped over and its range of
    /// sequence numbers recorded in `report`; so is a record that does not decode.
    pub(super) fn salvage_docs(
        &self,
        report: &mut RepairReport,
        mut f: impl FnMut(u64, StoredDoc),
    ) -> Result<()> {
        let snap = self.view(Consistency::PointInTime);
        let mut from = 0u64;
        loop {
            let mut next = from;
            let scanned = snap.scan_docs(from, &mut |(key, item)| {
                match item {
                    Ok((seq, doc)) => {
                        next = seq.saturating_add(1);
                        f(seq, doc);
                    }
                    Err(e) => {
                        let seq = codec::decode_doc_key(key).map_err(|_| e)?;
                        next = seq.saturating_add(1);
                        report.undecodable.push(seq);
                    }
                }
                Ok(true)
            });
            match scanned {
                Ok(()) => return Ok(()),
                Err(e) if is_damage(&e) => {
                    let resume = readable_from(snap.as_ref(), next)?;
                    report
                        .unreadable
                        .push((next, resume.map_or(u64::MAX, |r| r - 1)));
                    match resume {
                        Some(r) => from = r,
                        None => return Ok(()),
                    }
                }
                Err(e) => return Err(e),
            }
        }
    }
}

/// Whether an error is the backend's report of damaged data.
fn is_damage(e: &Error) -> bool {
    match e {
        Error::Storage { source, .. } => {
            let msg = source.to_string();
            msg.contains("Corruption") || msg.contains("checksum")
        }
        _ => false,
    }
}

/// Whether a scan of `docs` starting at `seq` reads its first record without damage.
fn starts_clean(snap: &dyn Snapshot, seq: u64) -> Result<bool> {
    match snap.scan_docs(seq, &mut |_| Ok(false)) {
        Ok(()) => Ok(true),
        Err(e) if is_damage(&e) => Ok(false),
        Err(e) => Err(e),
    }
}

/// The smallest sequence number above `bad` (where a scan met damage) from which a scan
/// starts clean, or `None` when none does. A scan starting inside a damaged block fails
/// and one starting past it succeeds, so the boundary is found by doubling the step, then
/// bisecting.
fn readable_from(snap: &dyn Snapshot, bad: u64) -> Result<Option<u64>> {
    let (mut lo, mut step) = (bad, 1u64);
    let mut hi = loop {
        let probe = bad.saturating_add(step);
        if starts_clean(snap, probe)? {
            break probe;
        }
        if probe == u64::MAX {
            return Ok(None);
        }
        lo = probe;
        step = step.saturating_mul(2);
    };
    while hi - lo > 1 {
        let mid = lo + (hi - lo) / 2;
        if starts_clean(snap, mid)? {
            hi = mid;
        } else {
            lo = mid;
        }
    }
    Ok(Some(hi))
}
