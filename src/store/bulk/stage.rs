//! The runs a bulk load derives from its sorted rows: `ids` (the last entry of an id
//! wins), `exact` and every table, each sorted within the load's memory budget.

use std::sync::Arc;

use super::sort::{Merge, Sorter, SpillDir};
use super::tables::TableKeys;
use crate::error::Result;
use crate::store::Store;
use crate::store::backend::{BulkIngest, SortedEntry, SortedRun, SortedWriter, Space};
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
    /// One per band table: (band key, seq).
    bands: Vec<Sorter<(u64, u64)>>,
}

/// Writes the `ids`, `exact` and table runs of the `entries` rows in `rows` (sequence
/// numbers from `base`), within `budget` bytes.
pub(super) fn derived(
    store: &Store,
    ingest: &dyn BulkIngest,
    spill: &Arc<SpillDir>,
    mut rows: Sorter<LoadRow>,
    (base, entries): (u64, u64),
    budget: usize,
) -> Result<Staged> {
    // The rows' merge and the key sorts share the budget: rows that spilled already, or
    // hold more than half of it, are spilled entirely.
    if rows.runs() > 0 || rows.held_bytes() > budget / 2 {
        rows.spill()?;
        rows.shrink();
    }
    let layout = &store.manifest.layout;
    let band_count = store.manifest.bands as usize;
    let left = budget.saturating_sub(rows.held_bytes());
    let share = left / (store.manifest.tables() + 1);
    let room = left - share * (1 + band_count);
    let mut keys = Keys {
        tables: TableKeys::new(layout, (base, entries), room, share, spill),
        exact: Sorter::new(spill.clone(), share),
        bands: (0..band_count)
            .map(|_| Sorter::new(spill.clone(), share))
            .collect(),
    };
    let mut staged = Staged::default();
    stage_ids(ingest, rows.finish()?, store, &mut keys, &mut staged)?;
    if !keys.exact.is_empty() {
        let exact = keys.exact.finish()?;
        let run = exact.write_to(ingest, Space::Exact, |w, (h, seq)| {
            w.put(SortedEntry::Exact(h, seq))
        })?;
        staged.runs.extend(run);
    }
    for (i, keys) in keys.bands.into_iter().enumerate() {
        let t = store.manifest.band_table(i as u32);
        let put = |w: &mut dyn SortedWriter, (k, seq)| w.put(SortedEntry::Table(k, seq));
        staged
            .runs
            .extend(keys.finish()?.write_to(ingest, Space::Table(t), put)?);
    }
    // `exact` and the bands are written: their shares are free again.
    staged.runs.extend(keys.tables.write(ingest, layout, left)?);
    Ok(staged)
}

/// Writes the `ids` run from the rows in (id, seq) order — the last entry of each id wins
/// — and feeds the winners' keys to the table and `exact` sorts.
fn stage_ids(
    ingest: &dyn BulkIngest,
    rows: Merge<LoadRow>,
    store: &Store,
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
            fp: store.stored_fp(row.fp),
            hash: row.hash,
        };
        ids.put(SortedEntry::Id(&row.id, value))?;
        staged.winners += 1;
        keys.tables.push(&store.manifest.layout, row.fp, row.seq)?;
        for (i, sorter) in keys.bands.iter_mut().enumerate() {
            let t = store.manifest.band_table(i as u32);
            if let Some(key) = store.manifest.table_key(t, row.fp, &row.bands) {
                sorter.push((key, row.seq))?;
            }
        }
        if let Some(h) = row.hash {
            keys.exact.push((h, row.seq))?;
        }
    }
    staged.runs.extend(ids.finish()?);
    Ok(())
}
