//! Column-family names and tuning of the RocksDB backend.

use std::borrow::Cow;
use std::sync::LazyLock;

use rocksdb::{
    BlockBasedOptions, Cache, ColumnFamilyDescriptor, DBCompressionType, DBRecoveryMode,
    MergeOperands, Options, SliceTransform,
};

use crate::store::backend::Space;
use crate::store::codec::bucket;

pub(super) const META: &str = "meta";
pub(super) const DOCS: &str = "docs";
pub(super) const IDS: &str = "ids";
pub(super) const EXACT: &str = "exact";

/// The most merge records of one bucket a table's memtable holds: the next write folds
/// them into the bucket's value. A read of a bucket walks its merge records in the memtable,
/// so a bucket that many documents share (one fingerprint, stored again and again) would
/// otherwise cost every probe of it a walk as long as the writes since the last flush.
const MAX_SUCCESSIVE_MERGES: usize = 16;

/// The share of a memtable's write buffer given to its bloom (`ids`, `exact`).
const MEMTABLE_BLOOM_RATIO: f64 = 0.02;

/// The column family of a space.
pub(super) fn cf_name(space: Space) -> Cow<'static, str> {
    match space {
        Space::Meta => META.into(),
        Space::Docs => DOCS.into(),
        Space::Ids => IDS.into(),
        Space::Exact => EXACT.into(),
        Space::Table(t) => table_cf_name(t).into(),
    }
}

/// The name of table `i`'s column family: `t00`, `t01`, ...
pub(super) fn table_cf_name(i: usize) -> String {
    format!("t{i:02}")
}

/// True for the names of table column families (`t00`, `t01`, ...).
pub(super) fn is_table_cf(name: &str) -> bool {
    name.len() > 1 && name.starts_with('t') && name[1..].bytes().all(|b| b.is_ascii_digit())
}

/// The column family names of a store with `tables` tables, in creation order.
pub(super) fn cf_names(tables: usize) -> Vec<String> {
    [META, DOCS, IDS, EXACT]
        .iter()
        .map(|s| s.to_string())
        .chain((0..tables).map(table_cf_name))
        .collect()
}

/// The block cache of a store's `docs`, `ids`, `meta` and `exact` blocks: RocksDB's
/// HyperClockCache, sized automatically per entry (`estimated_entry_charge` 0), which looks a
/// block up without the LRU cache's per-shard mutex and list updates: faster than the LRU
/// cache when the records do not all fit (docs/benchmarks.md, "block cache").
pub(super) fn block_cache(bytes: usize) -> Cache {
    Cache::new_hyper_clock_cache(bytes, 0)
}

/// Options of the database as a whole.
pub(super) fn db_options(cache: &Cache) -> Options {
    let mut opts = Options::default();
    opts.set_max_background_jobs(2);
    opts.set_keep_log_file_num(3);
    // A log damaged before its end stops the open (a salvage must be asked for), where
    // RocksDB's default would drop everything after the damage without a word; a last
    // record cut short by a crash is no damage.
    opts.set_wal_recovery_mode(DBRecoveryMode::TolerateCorruptedTailRecords);
    // Table blocks are read straight from the OS page cache through mmap (see cf_options).
    opts.set_allow_mmap_reads(true);
    let mut bbo = BlockBasedOptions::default();
    bbo.set_block_cache(cache);
    opts.set_block_based_table_factory(&bbo);
    opts
}

/// The options of column family `name`: those of [`sst_options`], and for a table the
/// merge operator that folds adds and removes into its buckets (`codec::bucket`).
pub(super) fn cf_options(name: &str, cache: &Cache) -> Options {
    let mut opts = sst_options(name, cache);
    // A crawler's checks mostly miss in `ids` and `exact`: a bloom in their memtables too
    // (a whole-key one for `ids`, of the content-hash prefix for `exact`) lets a miss skip
    // the memtable's skip list, as the files' blooms let it skip the files. Each takes 2 %
    // of the write buffer (~10 bits a key).
    if name == IDS || name == EXACT {
        opts.set_memtable_prefix_bloom_ratio(MEMTABLE_BLOOM_RATIO);
        opts.set_memtable_whole_key_filtering(name == IDS);
    }
    if is_table_cf(name) {
        // Inserts and deletes are merge records of a bucket, folded in when it is read or
        // compacted, or by the write that finds MAX_SUCCESSIVE_MERGES of them in the
        // memtable: only such a write reads its bucket. A failed merge (a damaged bucket) is a
        // corruption error of the read or compaction that met it.
        opts.set_merge_operator(BUCKET_MERGE, full_merge, partial_merge);
        opts.set_max_successive_merges(MAX_SUCCESSIVE_MERGES);
    }
    opts
}

use bucket::MERGE_OPERATOR as BUCKET_MERGE;

fn full_merge(key: &[u8], existing: Option<&[u8]>, ops: &MergeOperands) -> Option<Vec<u8>> {
    bucket::merge_bucket(key, existing, ops).ok()
}

fn partial_merge(_key: &[u8], _existing: Option<&[u8]>, ops: &MergeOperands) -> Option<Vec<u8>> {
    Some(bucket::concat_ops(ops))
}

/// The options bulk loads write column family `name`'s SST files with (whole buckets, no
/// merge records).
///
/// Each choice was measured with `simstore bench` (docs/benchmarks.md):
/// - Table CFs: uncompressed, no block cache, read through mmap: a probe is a memory read,
///   not a block decompressed into a cache, for more disk space. Index blocks stay in the
///   table readers. A restart point at every bucket (interval 1, the default 16), so a seek
///   decodes no run of entries before its bucket, for 4 bytes a bucket.
/// - `docs`, `ids`, `meta`: LZ4 with the shared block cache (records compress well and are
///   read once per match), in the default block size: smaller blocks make a random
///   record's lookup search a larger index.
fn sst_options(name: &str, cache: &Cache) -> Options {
    let mut opts = Options::default();
    let mut bbo = BlockBasedOptions::default();
    if is_table_cf(name) {
        opts.set_compression_type(DBCompressionType::None);
        bbo.disable_cache();
        // Every bucket a restart point: a seek is a binary search over the restart array,
        // not a decode of up to 15 buckets one after another (a cache miss each).
        bbo.set_block_restart_interval(1);
    } else {
        opts.set_compression_type(DBCompressionType::Lz4);
        bbo.set_block_cache(cache);
    }
    // A crawler's checks mostly miss: a whole-key bloom on `ids` (point lookups), a prefix
    // bloom on the content hash in `exact` (`first_exact` seeks to a hash; every other
    // read of `exact` is a total-order scan, see `RocksSnapshot::ro`).
    if name == IDS {
        bbo.set_bloom_filter(10.0, false);
    } else if name == EXACT {
        opts.set_prefix_extractor(SliceTransform::create_fixed_prefix(16));
        bbo.set_bloom_filter(10.0, false);
        bbo.set_whole_key_filtering(false);
    }
    opts.set_block_based_table_factory(&bbo);
    opts
}

/// The options a bulk load writes `space`'s SST files with ([`sst_options`]), made once per
/// process: the block cache, which only reads use, aside, they do not depend on the store,
/// and a writer holding them can move to a thread of its own (`threaded_run`).
pub(super) fn write_options(space: Space) -> &'static Options {
    static OPTIONS: LazyLock<[Options; 4]> = LazyLock::new(|| {
        let cache = Cache::new_lru_cache(1 << 20);
        [&table_cf_name(0), DOCS, IDS, EXACT].map(|name| sst_options(name, &cache))
    });
    match space {
        Space::Table(_) => &OPTIONS[0],
        Space::Docs | Space::Meta => &OPTIONS[1],
        Space::Ids => &OPTIONS[2],
        Space::Exact => &OPTIONS[3],
    }
}

/// The descriptor of column family `name`.
pub(super) fn cf_descriptor(name: &str, cache: &Cache) -> ColumnFamilyDescriptor {
    ColumnFamilyDescriptor::new(name, cf_options(name, cache))
}
