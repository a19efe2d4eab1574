//! The quality modes side by side: for each mode (and the plain "distance ≤ 3" query, for
//! reference) at each scale, its quality on a labelled set ([`crate::tools::eval`]) and the
//! cost of the layout a store of that mode created for that many documents gets (the cost
//! model's candidates and time per query, and estimated bytes per fingerprint).

use std::collections::{BTreeMap, HashMap};

use crate::index::bands::table_prefix_bits;
use crate::index::layout::Layout;
use crate::index::quality::{MatchRule, Quality, spans_per_table_span};
use crate::tools::eval::{BasePairs, Collisions, Counts, Pair, Predictor, Signature, evaluate};

/// Estimated bytes on disk per bucket of a table (format 5: its RocksDB key, internal
/// trailer, block entry, restart point and index share, and its 2-byte header), beside its
/// entries' own packed bytes: fitted, with [`DOCUMENT_BYTES`], to the store sizes in
/// docs/benchmarks.md ("A restart point at every bucket").
pub const BUCKET_BYTES: f64 = 20.1;

/// Estimated bytes on disk per fingerprint outside the tables (`docs`, `ids` without the
/// fingerprint, the exact index), from the same fit.
pub const DOCUMENT_BYTES: f64 = 25.8;

/// Estimated bytes on disk per fingerprint of a RocksDB store of `layout` with `bands`
/// band tables holding `n` uniform fingerprints, each with a sketch of its own (without
/// the records' sketches, as `simstore bench` also reports it): per table, each entry's
/// packed suffix and sequence number, and [`BUCKET_BYTES`] per non-empty bucket (of
/// `2^p`, a share `1 − e^(−n/2^p)` holds an entry); plus [`DOCUMENT_BYTES`]. For band
/// tables it runs a little low (measured: docs/benchmarks.md).
pub fn estimated_bytes_per_fingerprint(layout: &Layout, n: f64, bands: u32) -> f64 {
    let n = n.max(1.0);
    let seq_bytes = ((64 - (n as u64).leading_zeros()).div_ceil(8)).max(1) as f64;
    let mut prefixes = layout.prefix_bits();
    let band = table_prefix_bits(prefixes.iter().copied().max().unwrap_or(0));
    prefixes.extend((0..bands).map(|_| band));
    let tables: f64 = prefixes
        .iter()
        .map(|&p| {
            let suffix = (64 - p.min(64)).div_ceil(8) as f64;
            let buckets = 2f64.powi(p as i32);
            let filled = buckets * (1.0 - (-n / buckets).exp());
            suffix + seq_bytes + filled * BUCKET_BYTES / n
        })
        .sum();
    DOCUMENT_BYTES + tables
}

/// One predictor at one scale in the side-by-side comparison of [`compare_modes`].
#[derive(Debug, Clone)]
pub struct ModeFigures {
    /// `standard`, `high`, or `k <= 3` for the plain query.
    pub name: String,
    /// Documents the store was created for.
    pub scale: u64,
    /// The layout a store created for `scale` documents gets.
    pub layout: Layout,
    /// The rule of its queries.
    pub rule: MatchRule,
    /// Over all labelled pairs.
    pub overall: Counts,
    /// Per language.
    pub by_lang: BTreeMap<String, Counts>,
    /// Unrelated base documents predicted duplicate (one row).
    pub collisions: Collisions,
}

impl ModeFigures {
    /// The cost model's expected candidate keys scanned per query at `scale`, the rule's
    /// query-directed probes' included (each about a table's span).
    pub fn expected_candidates(&self) -> f64 {
        self.layout.expected_candidates(self.scale as f64) * self.probe_factor()
    }

    /// The cost model's expected time per query at `scale`, in µs (probes included).
    pub fn expected_query_us(&self) -> f64 {
        self.layout.expected_query_us(self.scale as f64) * self.probe_factor()
    }

    /// Spans read per query over the tables' own, as the mode's layout counts them
    /// ([`Quality::extra_spans`]; the plain query: its probes, none).
    fn probe_factor(&self) -> f64 {
        let extra = (self.name.parse::<Quality>()).map_or(self.rule.probes, Quality::extra_spans);
        spans_per_table_span(&self.layout, extra)
    }

    /// [`estimated_bytes_per_fingerprint`] of the layout at its scale, with the band tables
    /// a new store of the mode keeps (the plain query: a default store's).
    pub fn estimated_bytes_per_fingerprint(&self) -> f64 {
        let quality = self.name.parse::<Quality>().unwrap_or_default();
        estimated_bytes_per_fingerprint(&self.layout, self.scale as f64, quality.bands())
    }

    /// Share of the base documents predicted duplicate of an unrelated one.
    pub fn unrelated_share(&self) -> f64 {
        let c = &self.collisions;
        c.unrelated_documents[0] as f64 / c.documents.max(1) as f64
    }
}

/// The predictors [`compare_modes`] compares at `scale`: "distance ≤ 3" (the plain query,
/// for reference), then every quality mode, each as a store created for `scale` documents
/// answers it.
pub fn compared_predictors(scale: u64) -> crate::Result<Vec<(String, Predictor)>> {
    let mut out = vec![("k <= 3".to_owned(), Predictor::within(3, scale)?)];
    for q in Quality::ALL {
        out.push((q.name().to_owned(), Predictor::mode(q, scale)?));
    }
    Ok(out)
}

/// The quality modes side by side (see [`compared_predictors`]) at each of `scales`: their
/// quality on `pairs` and on `base`, with their layouts for the cost. `base` must be found
/// within the predictors' reach ([`Predictor::reach`]).
pub fn compare_modes(
    fps: &HashMap<String, Option<Signature>>,
    pairs: &[Pair],
    base: &BasePairs,
    scales: &[u64],
) -> crate::Result<Vec<ModeFigures>> {
    let mut out = Vec::new();
    for &scale in scales {
        for (name, predictor) in compared_predictors(scale)? {
            let report = evaluate(fps, pairs, &predictor);
            let collisions = base.collisions(&predictor);
            let Predictor::Rule { layout, rule } = predictor else {
                continue;
            };
            out.push(ModeFigures {
                name,
                scale,
                layout,
                rule,
                overall: report.overall[0],
                by_lang: report.by_lang.into_iter().map(|(l, r)| (l, r[0])).collect(),
                collisions,
            });
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tools::eval::base_pairs;

    /// The estimate stays within 2 % of the store sizes measured at 10M
    /// (docs/benchmarks.md: 4 tables of 16 bits, 6 of 21–22 bits; restart interval 1).
    #[test]
    fn the_byte_estimate_fits_the_measured_sizes() {
        let four = Layout::new(3, 4).unwrap();
        let six = Layout::covering(3, 6, 2).unwrap();
        for (layout, measured) in [(four, 62.3), (six, 111.9)] {
            let est = estimated_bytes_per_fingerprint(&layout, 1e7, 0);
            assert!(
                (est - measured).abs() <= 0.02 * measured,
                "{layout}: {est} estimated, {measured} measured"
            );
        }
    }

    /// Per scale: plain k <= 3, then each mode, with the layout a store of it created for
    /// that scale gets.
    #[test]
    fn each_mode_is_compared_with_its_layout_at_each_scale() {
        let fps = HashMap::new();
        let base = base_pairs(&[], &fps, (8, 0)).unwrap();
        let rows = compare_modes(&fps, &[], &base, &[1_000_000, 10_000_000]).unwrap();
        let seen: Vec<(&str, u64, usize, u32, u32)> = rows
            .iter()
            .map(|r| {
                let tables = r.layout.tables().len();
                (r.name.as_str(), r.scale, tables, r.rule.k, r.rule.reach)
            })
            .collect();
        assert_eq!(
            seen,
            [
                ("k <= 3", 1_000_000, 4, 3, 3),
                ("standard", 1_000_000, 4, 3, 12),
                ("high", 1_000_000, 4, 3, 14),
                ("k <= 3", 10_000_000, 5, 3, 3),
                ("standard", 10_000_000, 4, 3, 12),
                ("high", 10_000_000, 5, 3, 14),
            ]
        );
        for r in &rows {
            let mode = crate::index::quality::Quality::ALL
                .into_iter()
                .find(|q| q.name() == r.name);
            let want = match mode {
                Some(q) => q.layout(r.scale).unwrap(),
                None => Layout::for_expected_docs(r.scale, r.rule.k).unwrap(),
            };
            assert_eq!(r.layout, want);
            let us = match mode {
                Some(q) => q.expected_query_us(&want, r.scale as f64),
                None => want.expected_query_us(r.scale as f64),
            };
            assert!((r.expected_query_us() - us).abs() < 1e-9);
            assert_eq!(r.unrelated_share(), 0.0);
        }
    }
}
