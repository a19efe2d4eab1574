//! The permutation tables' SST format, measured side by side (issue 19): RocksDB's
//! block-based format as the store writes its tables (uncompressed 4 KiB blocks, no block
//! cache, read through mmap), the same with LZ4 blocks or other block sizes, and RocksDB's
//! PlainTable format (a hash index of a 2-byte key prefix, keys prefix-encoded, the 8-byte
//! internal trailer of a bulk-loaded key stored as 1 byte).
//!
//! One table of N keys as the store's codec writes them (8-byte permuted fingerprint, then
//! the sequence number in shortest form) goes into a new database — block-based: written by
//! `SstFileWriter` and ingested, as a bulk load does; PlainTable: through the memtable and
//! a compaction, as its files cannot be ingested — is read through once (warm page
//! cache), then probed as a query probes a table: a kept iterator seeks to a random
//! `prefix_bits`-bit prefix and steps to its end. Every probe's keys are checked against
//! a binary search of the sorted keys.
//!
//! ```sh
//! # N, prefix bits, probes, rounds[, formats]
//! cargo run --release --example table_format -- 10000000 22 1000000 3
//! cargo run --release --example table_format -- 10000000 22 1000000 3 lz4-1024,none-4096,lz4-512
//! ```
//!
//! A format is `plain` (PlainTable) or `COMPRESSION-BLOCKBYTES` with COMPRESSION `none` or
//! `lz4`; the default is `none-4096,lz4-1024,plain`.

use std::path::Path;
use std::time::Instant;

use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use rocksdb::{
    BlockBasedOptions, BottommostLevelCompaction, CompactOptions, DB, DBCompressionType,
    IngestExternalFileOptions, KeyEncodingType, Options, PlainTableFactoryOptions, ReadOptions,
    SliceTransform, SstFileWriter, WriteBatch, WriteOptions,
};
use simstore::store::codec::table_key;

/// A table format to measure.
#[derive(Clone, Copy)]
enum Format {
    /// Block-based: LZ4 or not, the block size in bytes.
    Blocks { lz4: bool, block: usize },
    /// PlainTable.
    Plain,
}

impl Format {
    fn parse(s: &str) -> Format {
        if s == "plain" {
            return Format::Plain;
        }
        let (codec, block) = s
            .split_once('-')
            .expect("a format is plain, none-BYTES or lz4-BYTES");
        let block = block.parse().expect("a block size in bytes");
        match codec {
            "lz4" => Format::Blocks { lz4: true, block },
            "none" => Format::Blocks { lz4: false, block },
            _ => panic!("a format is plain, none-BYTES or lz4-BYTES"),
        }
    }

    fn name(self) -> String {
        match self {
            Format::Plain => "PlainTable".into(),
            Format::Blocks { lz4, block } => {
                format!("{} {block} B", if lz4 { "LZ4" } else { "uncompressed" })
            }
        }
    }
}

/// The table's options: block-based ones as a bulk load writes them, or PlainTable's.
fn options(format: Format) -> Options {
    let mut opts = Options::default();
    opts.create_if_missing(true);
    opts.set_allow_mmap_reads(true);
    opts.set_compression_type(DBCompressionType::None);
    if let Format::Blocks { lz4, block } = format {
        let mut bbo = BlockBasedOptions::default();
        bbo.disable_cache();
        bbo.set_block_size(block);
        opts.set_block_based_table_factory(&bbo);
        if lz4 {
            // The last level compressed: where an ingested file goes, and what
            // `SstFileWriter` writes with. RocksDB's implicit readahead off: on an mmap'd
            // file it copies up to 256 KiB into a buffer once an iterator reads a third
            // block in a row, which spans over small blocks keep doing.
            opts.set_bottommost_compression_type(DBCompressionType::Lz4);
            opts = opts
                .get_options_from_string("block_based_table_factory={max_auto_readahead_size=0}")
                .unwrap();
        }
    } else {
        // One file, as a bulk load writes a table.
        opts.set_target_file_size_base(1 << 34);
        opts.set_max_compaction_bytes(1 << 36);
        opts.set_write_buffer_size(1 << 30);
        opts.set_prefix_extractor(SliceTransform::create_fixed_prefix(2));
        opts.set_plain_table_factory(&PlainTableFactoryOptions {
            user_key_length: 0,
            bloom_bits_per_key: 0,
            hash_table_ratio: 0.75,
            index_sparseness: 16,
            huge_page_tlb_size: 0,
            encoding_type: KeyEncodingType::Prefix,
            full_scan_mode: false,
            store_index_in_file: true,
        });
    }
    opts
}

fn main() {
    let args: Vec<u64> = std::env::args()
        .skip(1)
        .take(4)
        .map(|a| {
            a.parse()
                .expect("arguments: N, prefix bits, probes, rounds (numbers)")
        })
        .collect();
    let n = args.first().copied().unwrap_or(10_000_000);
    let bits = args.get(1).copied().unwrap_or(22) as u32;
    let probes = args.get(2).copied().unwrap_or(1_000_000);
    let mut rng = StdRng::seed_from_u64(7);
    let mut keys: Vec<(u64, u64)> = (0..n).map(|seq| (rng.random(), seq)).collect();
    keys.sort_unstable();
    let queries: Vec<u64> = (0..probes).map(|_| rng.random()).collect();
    let rounds = args.get(3).copied().unwrap_or(2) as u32;
    let formats: Vec<Format> = std::env::args()
        .nth(5)
        .unwrap_or_else(|| "none-4096,lz4-1024,plain".into())
        .split(',')
        .map(Format::parse)
        .collect();
    for round in 0..rounds {
        for &format in &formats {
            if matches!(format, Format::Plain) && bits < 16 {
                // A prefix-mode seek looks in the target's 2-byte bucket only: a shorter
                // span would miss the keys of the other buckets it covers.
                println!("PlainTable skipped: its 2-byte prefix needs spans of 16 bits or more");
                continue;
            }
            run(round, format, &keys, &queries, bits);
        }
    }
}

/// One round of one format: writes the table into a new database, reads it through, probes.
fn run(round: u32, format: Format, keys: &[(u64, u64)], queries: &[u64], bits: u32) {
    let dir = tempfile::tempdir().unwrap();
    let opts = options(format);
    let db = DB::open(&opts, dir.path().join("db")).unwrap();
    let t = Instant::now();
    if matches!(format, Format::Plain) {
        write_through_memtable(&db, keys);
    } else {
        ingest(&db, &opts, &dir.path().join("t.sst"), keys);
    }
    let write = t.elapsed();
    let size = sst_bytes(&dir.path().join("db"));
    if std::env::var_os("TABLE_FORMAT_PROPS").is_some() {
        let props = db.property_value("rocksdb.aggregated-table-properties");
        println!("{props:?}");
    }
    assert_eq!(read_through(&db), keys.len());
    let mut ro = ReadOptions::default();
    ro.set_readahead_size(0);
    ro.set_verify_checksums(false);
    let mut it = db.raw_iterator_opt(ro);
    let (found, elapsed) = probe(&mut it, queries, bits);
    let brute = keys_in_spans(keys, queries, bits);
    assert_eq!(found, brute, "the probes found what the sorted keys hold");
    println!(
        "round {round} {:>19}: {:6.2} B/key, written in {:5.2} s, {:6.3} µs/probe, {:.2} keys/probe",
        format.name(),
        size as f64 / keys.len() as f64,
        write.as_secs_f64(),
        elapsed / queries.len() as f64 * 1e6,
        found as f64 / queries.len() as f64,
    );
}

/// The store's way: one SST file written in key order, ingested.
fn ingest(db: &DB, opts: &Options, sst: &Path, keys: &[(u64, u64)]) {
    let mut w = SstFileWriter::create(opts);
    w.open(sst).unwrap();
    for &(fp, seq) in keys {
        w.put(table_key(fp, seq).as_ref(), []).unwrap();
    }
    w.finish().unwrap();
    db.ingest_external_file_opts(&IngestExternalFileOptions::default(), vec![sst])
        .unwrap();
}

/// PlainTable files cannot be ingested (their properties name no comparator, and ingestion
/// refuses them): the keys go through the memtable, a flush and a compaction.
fn write_through_memtable(db: &DB, keys: &[(u64, u64)]) {
    for chunk in keys.chunks(100_000) {
        let mut batch = WriteBatch::default();
        for &(fp, seq) in chunk {
            batch.put(table_key(fp, seq).as_ref(), []);
        }
        let mut wo = WriteOptions::default();
        wo.disable_wal(true);
        db.write_opt(batch, &wo).unwrap();
    }
    db.flush().unwrap();
    // Rewritten (not moved) to the last level, so the sequence numbers are zeroed.
    let mut co = CompactOptions::default();
    co.set_bottommost_level_compaction(BottommostLevelCompaction::Force);
    db.compact_range_opt(None::<&[u8]>, None::<&[u8]>, &co);
}

/// Reads every key once (the file's pages into the page cache): the number of keys.
fn read_through(db: &DB) -> usize {
    let mut ro = ReadOptions::default();
    ro.set_total_order_seek(true);
    let mut it = db.raw_iterator_opt(ro);
    it.seek_to_first();
    let mut count = 0usize;
    while it.valid() {
        count += 1;
        it.next();
    }
    it.status().unwrap();
    count
}

/// Seeks to each query's `bits`-bit prefix and steps to its end: keys found, seconds. Not
/// inlined, so that `valgrind --tool=callgrind --toggle-collect='table_format::probe'`
/// counts a probe's instructions.
#[inline(never)]
fn probe(it: &mut rocksdb::DBRawIterator<'_>, queries: &[u64], bits: u32) -> (usize, f64) {
    let shift = 64 - bits;
    let mut found = 0usize;
    let t = Instant::now();
    for &q in queries {
        let lo = q >> shift << shift;
        it.seek(lo.to_be_bytes());
        while let Some(k) = it.key() {
            let fp = u64::from_be_bytes(k[..8].try_into().unwrap());
            if fp >> shift != q >> shift {
                break;
            }
            found += 1;
            it.next();
        }
    }
    let elapsed = t.elapsed().as_secs_f64();
    it.status().unwrap();
    (found, elapsed)
}

/// Keys sharing each query's prefix, counted in the sorted keys.
fn keys_in_spans(keys: &[(u64, u64)], queries: &[u64], bits: u32) -> usize {
    let shift = 64 - bits;
    queries
        .iter()
        .map(|&q| {
            let lo = q >> shift << shift;
            let start = keys.partition_point(|k| k.0 < lo);
            keys[start..]
                .iter()
                .take_while(|k| k.0 >> shift == q >> shift)
                .count()
        })
        .sum()
}

/// Bytes of the SST files in `db`.
fn sst_bytes(db: &Path) -> u64 {
    std::fs::read_dir(db)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "sst"))
        .map(|p| std::fs::metadata(p).unwrap().len())
        .sum()
}
