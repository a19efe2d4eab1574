//! `dedup --clusters FILE`: one row (a JSON line, or a Parquet row) per record in a cluster of two or more — which
//! cluster, the record it formed around, whether it is kept, and how near it is — so that a
//! dedup can be audited or undone.

use std::path::Path;

use anyhow::Result;
use serde_json::json;
use simstore::Sketch;
use simstore::index::near::ExactSimilarities;

use super::rows::Rows;
use crate::cli::input::Place;

/// Where a record came from: its id, and its input and line (or record number).
pub(super) struct Origin<'a> {
    pub id: &'a str,
    pub place: Option<&'a Place>,
}

/// What the provenance rows are made of, by record position: fingerprints, sketches
/// (empty when the rule does not verify), whether each record is kept, and the texts'
/// similarities of the pairs they decided.
pub(super) struct Records<'a> {
    pub fps: &'a [u64],
    pub sketches: &'a [Option<Sketch>],
    pub kept: &'a [bool],
    pub exact: &'a ExactSimilarities,
}

impl Records<'_> {
    /// How similar records `x` and `y` are: their texts' exact similarity when the dedup
    /// computed it, else their sketches' estimate (`None` without sketches).
    pub fn similarity(&self, x: u32, y: u32) -> Option<f64> {
        let exact = self.exact.get(&(x.min(y), x.max(y))).copied();
        let sketch = |i: u32| self.sketches.get(i as usize).and_then(Option::as_ref);
        exact.or_else(|| sketch(x).zip(sketch(y)).map(|(a, b)| a.similarity(b)))
    }
}

/// Writes the rows of `sets` (clusters, the record each formed around first) to `path`
/// (an `OutFile`: put in place at the end; gzip'd when the name ends in `.gz`, Parquet
/// when it ends in `.parquet`: [`Rows`]); returns how many rows were written.
pub(super) fn write<'a>(
    path: &Path,
    sets: &[Vec<u32>],
    records: &Records,
    origin: impl Fn(u32) -> Origin<'a>,
) -> Result<u64> {
    let mut out = Rows::create(path)?;
    let mut rows = 0;
    for (n, set) in sets.iter().enumerate() {
        let rep = set[0];
        let rep_id = origin(rep).id;
        for &x in set {
            let o = origin(x);
            let (fp, rep_fp) = (records.fps[x as usize], records.fps[rep as usize]);
            let similarity = records.similarity(x, rep);
            let row = json!({
                "cluster": n,
                "id": o.id,
                "file": o.place.map(|p| p.name.as_ref()),
                "line": o.place.map(Place::number),
                "representative": rep_id,
                "kept": records.kept[x as usize],
                "distance": (fp ^ rep_fp).count_ones(),
                "similarity": similarity,
            });
            out.push(&row)?;
            rows += 1;
        }
    }
    out.finish()?;
    Ok(rows)
}
