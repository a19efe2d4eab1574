//! The pairs a dedup of files finds near its threshold, decided by the texts: the inputs
//! are read again for the records of those pairs alone, and the exact similarity of their
//! shingle sets replaces the sketches' estimate (`Clusters::checked`). The estimate's
//! standard error (about 0.06 at similarity 0.5) otherwise joins a record to another it
//! shares a third of its shingles with, and drops it, about as often as it misses a copy.

use std::collections::{BTreeSet, HashMap};

use anyhow::Result;
use rayon::prelude::*;
use simstore::Fingerprinter;
use simstore::Sketch;
use simstore::index::groups::{Clusters, ExactCheck, ExactSimilarities, Grouping, NearPairs};
use simstore::input::reader::Record;
use simstore::text::sketch::jaccard;

use super::Args;
use super::records;
use crate::cli::output;

/// Records whose shingles are computed at a time (in parallel).
const CHUNK: usize = 4096;

/// The clusters of the records read (`fps`, `sketches`, in `order`), the pairs near the
/// threshold decided by the texts when the inputs can be read again (`items`: each
/// record's item number among the inputs' items); `on_pair` as [`Clusters::new`]'s.
pub(super) fn clusters(
    args: &Args,
    items: &[u64],
    records: (&[u64], &[Option<Sketch>], Option<Vec<u32>>),
    grouping: &Grouping,
    on_pair: impl FnMut(u32, u32, u32) -> simstore::Result<()>,
) -> simstore::Result<(Clusters, ExactCheck)> {
    // Stdin cannot be read again: its pairs near the threshold are counted, unchecked.
    let rereadable = !args.files.iter().any(|f| f == "-");
    let mut exact = |pairs: NearPairs| match rereadable {
        true => similarities(args, items, pairs).map_err(|e| {
            let e = e.context("cannot read the inputs again to check the pairs near the threshold");
            simstore::Error::Io(std::io::Error::other(format!("{e:#}")))
        }),
        false => Ok(ExactSimilarities::new()),
    };
    Clusters::checked(records, grouping, Some(&mut exact), on_pair)
}

/// The exact similarities of `pairs` (records' positions; `items` maps them to item
/// numbers), from the inputs read again; a pair whose record no longer reads is left out.
fn similarities(args: &Args, items: &[u64], pairs: NearPairs) -> Result<ExactSimilarities> {
    let item = |p: u32| items[p as usize];
    let wanted: BTreeSet<u64> = pairs
        .iter()
        .flat_map(|&(a, b)| [item(a), item(b)])
        .collect();
    let f = Fingerprinter::new();
    let mut shingles: HashMap<u64, Vec<u64>> = HashMap::with_capacity(wanted.len());
    let mut batch: Vec<(u64, Record)> = Vec::with_capacity(CHUNK);
    let shingle = |batch: &mut Vec<(u64, Record)>, into: &mut HashMap<u64, Vec<u64>>| {
        let done: Vec<(u64, Vec<u64>)> = batch
            .par_drain(..)
            .map(|(item, r)| {
                (
                    item,
                    f.shingles(r.title.as_deref(), r.text.as_deref().unwrap_or("")),
                )
            })
            .collect();
        into.extend(done);
    };
    records::each_record(args, &wanted, |item, r| {
        batch.push((item, r));
        if batch.len() == CHUNK {
            shingle(&mut batch, &mut shingles);
        }
    })?;
    shingle(&mut batch, &mut shingles);
    Ok(pairs
        .par_iter()
        .filter_map(|&(a, b)| {
            let (x, y) = (shingles.get(&item(a))?, shingles.get(&item(b))?);
            Some(((a, b), jaccard(x, y)))
        })
        .collect())
}

/// The summary's words on the check (empty when no pair was near the threshold).
pub(super) fn summary(check: &ExactCheck) -> String {
    let mut out = String::new();
    if check.checked > 0 {
        out += &format!(
            "; {} near the threshold decided by the texts ({} taken, {} refused that the \
             sketches decided otherwise)",
            output::count(check.checked, "pair"),
            check.accepted,
            check.rejected
        );
    }
    if check.unchecked > 0 {
        out += &format!(
            "; {} near the threshold decided by the sketches alone (stdin, or more than \
             {} pairs, cannot be read again)",
            output::count(check.unchecked, "pair"),
            simstore::index::groups::MAX_EXACT_PAIRS
        );
    }
    out
}
