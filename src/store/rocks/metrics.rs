//! RocksDB's figures for `/metrics` ([`crate::store::backend::Backend::usage`]):
//! what an operator alerts on or sizes memory and disk by.

use std::collections::BTreeMap;

use super::{RocksBackend, options};
use crate::store::backend::EngineMetric;

/// Per column family: (metric name, help, RocksDB property).
const CF_PROPERTIES: [(&str, &str, &str); 2] = [
    (
        "simstore_rocksdb_memtable_bytes",
        "Bytes in the column family's memtables (active, unflushed and pinned).",
        "rocksdb.cur-size-all-mem-tables",
    ),
    (
        "simstore_rocksdb_pending_compaction_bytes",
        "Bytes RocksDB estimates compaction must rewrite to bring the column family's levels to their targets; writes slow down, then stop, as it grows.",
        "rocksdb.estimate-pending-compaction-bytes",
    ),
];

impl RocksBackend {
    /// Every figure, read now: per column family its memtables, pending compaction, SST
    /// files and bytes; the block cache's usage.
    pub(super) fn metrics(&self) -> Vec<EngineMetric> {
        let mut cfs: Vec<String> = [options::META, options::DOCS, options::IDS, options::EXACT]
            .iter()
            .map(|s| (*s).to_owned())
            .collect();
        cfs.extend(self.present_tables.iter().cloned());
        let mut out = Vec::new();
        for (name, help, property) in CF_PROPERTIES {
            for cf_name in &cfs {
                let Ok(cf) = self.cf(cf_name) else { continue };
                if let Ok(Some(v)) = self.db.property_int_value_cf(cf, property) {
                    out.push(gauge(name, help, Some(cf_name), v as f64));
                }
            }
        }
        out.extend(self.sst_metrics(&cfs));
        let cache = [
            (
                "simstore_rocksdb_block_cache_usage_bytes",
                "Bytes held in the block cache shared by every column family.",
                self.cache.get_usage(),
            ),
            (
                "simstore_rocksdb_block_cache_pinned_bytes",
                "Bytes of the block cache pinned by readers (not evictable now).",
                self.cache.get_pinned_usage(),
            ),
        ];
        for (name, help, v) in cache {
            out.push(gauge(name, help, None, v as f64));
        }
        out
    }

    /// Bytes of SST files beyond RocksDB's estimate of the live data in them: what deletes
    /// and replacements left behind until compaction folds them (an estimate).
    pub(super) fn reclaimable(&self) -> u64 {
        let mut cfs = vec![options::DOCS, options::IDS, options::EXACT];
        cfs.extend(self.present_tables.iter().map(String::as_str));
        let prop = |cf, name| {
            self.db
                .property_int_value_cf(cf, name)
                .ok()
                .flatten()
                .unwrap_or(0)
        };
        cfs.into_iter()
            .filter_map(|name| self.cf(name).ok())
            .map(|cf| {
                let total = prop(cf, "rocksdb.total-sst-files-size");
                total.saturating_sub(prop(cf, "rocksdb.estimate-live-data-size"))
            })
            .sum()
    }

    /// SST files and their bytes per column family (0 for one with none yet).
    fn sst_metrics(&self, cfs: &[String]) -> Vec<EngineMetric> {
        let mut per_cf: BTreeMap<&str, (u64, u64)> =
            cfs.iter().map(|c| (c.as_str(), (0, 0))).collect();
        let files = self.db.live_files().unwrap_or_default();
        for f in &files {
            if let Some(entry) = per_cf.get_mut(f.column_family_name.as_str()) {
                entry.0 += 1;
                entry.1 += f.size as u64;
            }
        }
        let mut out = Vec::with_capacity(per_cf.len() * 2);
        for (cf, (n, bytes)) in per_cf {
            out.push(gauge(
                "simstore_rocksdb_sst_files",
                "SST files of the column family.",
                Some(cf),
                n as f64,
            ));
            out.push(gauge(
                "simstore_rocksdb_sst_bytes",
                "Bytes of the column family's SST files.",
                Some(cf),
                bytes as f64,
            ));
        }
        out
    }
}

/// A gauge, labelled with its column family when it has one.
fn gauge(name: &'static str, help: &'static str, cf: Option<&str>, value: f64) -> EngineMetric {
    EngineMetric {
        name,
        help,
        labels: cf.map(|c| ("cf", c.to_owned())).into_iter().collect(),
        value,
    }
}
