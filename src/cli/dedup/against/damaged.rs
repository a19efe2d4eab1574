//! What a dedup against a store does with the records of a damaged gzip member, read
//! before its damage was found.

use std::ops::Range;

use anyhow::{Context, Result};
use indicatif::ProgressBar;

use super::{Against, Found, Read};
use crate::cli::dedup::keep::Rank;
use crate::cli::{input, output};

impl Against<'_> {
    /// The records of `items` were read from a damaged gzip member before its damage was
    /// found. With `--add` they are stored, as `import` stores them, and said so; without,
    /// they are taken out of the scratch store and the output, and count as failed.
    pub(super) fn forget(
        &mut self,
        items: &Range<u64>,
        found: &mut Found,
        bar: &ProgressBar,
        damaged: &input::Damaged,
    ) -> Result<()> {
        let Some(scratch) = &self.scratch else {
            let n = items.end - items.start;
            let read = output::count(n, "item");
            let outcome = " were checked and stored; they may be wrong";
            bar.suspend(|| eprintln!("{}", damaged.error(read, outcome)));
            return Ok(());
        };
        let at = found.kept.partition_point(|&i| i < items.start)
            ..found.kept.partition_point(|&i| i < items.end);
        for item in found.kept.drain(at.clone()) {
            // A record kept unjudged was never put in the scratch store: nothing to delete.
            if self.ids.remove(&item).is_some() {
                scratch
                    .delete(&item.to_string())
                    .context("the scratch store")?;
            }
        }
        let before = found.dropped.len();
        found.dropped.retain(|d| !items.contains(&d.item));
        let n = (at.len() + before - found.dropped.len()) as u64;
        found.records -= n;
        found.failed += n;
        let read = output::count(n, "record");
        bar.suspend(|| eprintln!("{}", damaged.error(read, input::LEFT_OUT)));
        Ok(())
    }
}

/// The records of a damaged gzip member's items, read but not checked yet (a ranking
/// `--keep`), are left out and count as failed.
pub(super) fn left_out(
    damaged: &input::Damaged,
    (found, read, ranks): (&mut Found, &mut Vec<Read>, &mut Vec<Rank>),
    bar: &ProgressBar,
) {
    let at = read.partition_point(|r| r.0 < damaged.items.start)
        ..read.partition_point(|r| r.0 < damaged.items.end);
    read.drain(at.clone());
    ranks.drain(at.clone());
    found.failed += at.len() as u64;
    let read = output::count(at.len() as u64, "record");
    bar.suspend(|| eprintln!("{}", damaged.error(read, input::LEFT_OUT)));
}
