//! The runs a bulk load derives from its sorted rows: `ids` (the last entry of an id
//! wins), `exact` and every table, each sorted within the load's memory budget.

use std::sync::Arc;

use rayon::prelude::*;

use super::sort::{Merge, Sorter, Spill, SpillDir};
use crate::error::Result;
use crate::index::layout::Layout;
use crate::store::Store;
use crate::store::backend::{BulkIngest, SortedRun, SortedWriter, Space};
use crate::store::codec::IdValue;
use crate::store::codec::spill::LoadRow;

/// What staging wrote.
#[derive(Debug, Default)]
pub(super) struct Staged {
    pub(super) runs: Vec<SortedRun>,
    /// Distinct ids.
    pub(super) winners: u64,
    /// Sequence numbers of the entries superseded by a later one with the same id.
    pub(super) losers: Vec<u64>,
}

/// The key sorts fed by the `ids` pass.
struct Keys {
    tables: TableKeys,
    exact: Sorter<(u128, u64)>,
}

/// How the table runs are sorted.
enum TableKeys {
    /// Every winner's `(fingerprint, seq)` fits in memory at once: each table's keys are
    /// made from them and sorted in place, one table after another (no file, no merge).
    Memory(Vec<(u64, u64)>),
    /// An external sort per table, each with its share of the budget.
    External(Vec<Sorter<(u64, u64)>>),
}

impl TableKeys {
    fn push(&mut self, layout: &Layout, fp: u64, seq: u64) -> Result<()> {
        match self {
            TableKeys::Memory(keys) => keys.push((fp, seq)),
            TableKeys::External(sorters) => {
                for (t, table) in sorters.iter_mut().enumerate() {
                    table.push((layout.permute(t, fp), seq))?;
                }
            }
        }
        Ok(())
    }

    /// Writes every table's run.
    fn write(self, ingest: &dyn BulkIngest, layout: &Layout) -> Result<Vec<SortedRun>> {
        let put = |w: &mut dyn SortedWriter, (p, seq)| w.put_table(p, seq);
        let runs = match self {
            TableKeys::Memory(keys) => in_memory_tables(ingest, layout, keys, put)?,
            TableKeys::External(sorters) => sorters
                .into_par_iter()
                .enumerate()
                .map(|(t, keys)| write_run(ingest, Space::Table(t), keys.finish()?, put))
                .collect::<Result<Vec<_>>>()?,
        };
        Ok(runs.into_iter().flatten().collect())
    }
}

/// Writes the `ids`, `exact` and table runs of the `entries` rows in `rows`, within
/// `budget` bytes.
pub(super) fn derived(
    store: &Store,
    ingest: &dyn BulkIngest,
    spill: &Arc<SpillDir>,
    mut rows: Sorter<LoadRow>,
    entries: u64,
    budget: usize,
) -> Result<Staged> {
    // The rows' merge and the key sorts share the budget: rows that spilled already, or
    // hold more than half of it, are spilled entirely.
    if rows.runs() > 0 || rows.held_bytes() > budget / 2 {
        rows.spill()?;
        rows.shrink();
    }
    let layout = &store.manifest.layout;
    let left = budget.saturating_sub(rows.held_bytes());
    let share = left / (layout.tables().len() + 1);
    let in_memory = usize::try_from(entries)
        .ok()
        .and_then(|n| n.checked_mul(size_of::<(u64, u64)>()))
        .is_some_and(|bytes| bytes <= left - share);
    let tables = if in_memory {
        TableKeys::Memory(Vec::with_capacity(entries as usize))
    } else {
        TableKeys::External(
            (0..layout.tables().len())
                .map(|_| Sorter::new(spill.clone(), share))
                .collect(),
        )
    };
    let mut keys = Keys {
        tables,
        exact: Sorter::new(spill.clone(), share),
    };
    let mut staged = Staged::default();
    stage_ids(ingest, rows.finish()?, layout, &mut keys, &mut staged)?;
    if !keys.exact.is_empty() {
        let run = write_run(ingest, Space::Exact, keys.exact.finish()?, |w, (h, seq)| {
            w.put_exact(h, seq)
        })?;
        staged.runs.extend(run);
    }
    staged.runs.extend(keys.tables.write(ingest, layout)?);
    Ok(staged)
}

/// Writes the table runs from every winner's `(fingerprint, seq)`: for each table the
/// keys are permuted in place (from the previous table's order), sorted, and written as
/// one run per thread, of disjoint key ranges (writing an SST file is the costliest step:
/// at 10M on 2 cores, 1.1–1.7 s a table on one thread, 0.6 s on two).
fn in_memory_tables(
    ingest: &dyn BulkIngest,
    layout: &Layout,
    mut keys: Vec<(u64, u64)>,
    put: impl Fn(&mut dyn SortedWriter, (u64, u64)) -> Result<()> + Sync,
) -> Result<Vec<Option<SortedRun>>> {
    let mut runs = Vec::with_capacity(layout.tables().len());
    for t in 0..layout.tables().len() {
        keys.par_iter_mut().for_each(|(key, _)| {
            let fp = match t {
                0 => *key,
                _ => layout.unpermute(t - 1, *key),
            };
            *key = layout.permute(t, fp);
        });
        keys.par_sort_unstable();
        // In parallel, as runs of disjoint key ranges.
        let part = keys.len().div_ceil(rayon::current_num_threads()).max(1);
        let parts = keys
            .par_chunks(part)
            .map(|part| {
                let mut w = ingest.sorted_writer(Space::Table(t))?;
                for &item in part {
                    put(w.as_mut(), item)?;
                }
                w.finish()
            })
            .collect::<Result<Vec<_>>>()?;
        runs.extend(parts);
    }
    Ok(runs)
}

/// Writes the `ids` run from the rows in (id, seq) order — the last entry of each id wins
/// — and feeds the winners' keys to the table and `exact` sorts.
fn stage_ids(
    ingest: &dyn BulkIngest,
    rows: Merge<LoadRow>,
    layout: &Layout,
    keys: &mut Keys,
    staged: &mut Staged,
) -> Result<()> {
    let mut ids = ingest.sorted_writer(Space::Ids)?;
    let mut rows = rows.peekable();
    while let Some(row) = rows.next() {
        let row = row?;
        if let Some(Ok(next)) = rows.peek()
            && next.id == row.id
        {
            staged.losers.push(row.seq);
            continue;
        }
        let value = IdValue {
            seq: row.seq,
            fp: row.fp,
            hash: row.hash,
        };
        ids.put_id(&row.id, value)?;
        staged.winners += 1;
        keys.tables.push(layout, row.fp, row.seq)?;
        if let Some(h) = row.hash {
            keys.exact.push((h, row.seq))?;
        }
    }
    staged.runs.extend(ids.finish()?);
    Ok(())
}

/// Writes the merged `items` as the run of `space`.
fn write_run<T: Spill>(
    ingest: &dyn BulkIngest,
    space: Space,
    items: Merge<T>,
    put: impl Fn(&mut dyn SortedWriter, T) -> Result<()>,
) -> Result<Option<SortedRun>> {
    let mut w = ingest.sorted_writer(space)?;
    for item in items {
        put(w.as_mut(), item?)?;
    }
    w.finish()
}
