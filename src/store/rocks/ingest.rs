//! Sorted bulk ingest of the RocksDB backend: one SST file per column family, written in
//! key order under `bulk-load.tmp/` in the store's directory (`docs` and `ids` each by a
//! thread of its own, `threaded_run`), then ingested (moved). The external sorts of a load
//! spill their runs there too (`bulk-load.tmp/spill-*/`).

use std::path::PathBuf;
use std::sync::Mutex;
use std::thread::JoinHandle;

use rocksdb::{IngestExternalFileOptions, SstFileWriter};

use super::options::{cf_name, write_options};
use super::threaded_run::ThreadedRun;
use super::{RocksBackend, storage};
use crate::error::Error;
use crate::error::Result;
use crate::store::backend::{BulkIngest, SortedEntry, SortedRun, SortedWriter, Space, Staging};
use crate::store::codec;
use crate::store::codec::bucket::{self, BucketKey};

/// The staging directory of bulk loads, inside the store's directory.
const STAGING: &str = "bulk-load.tmp";

impl RocksBackend {
    fn staging(&self) -> PathBuf {
        self.path.join(STAGING)
    }
}

impl BulkIngest for RocksBackend {
    fn sorted_writer(&self, space: Space) -> Result<Box<dyn SortedWriter + '_>> {
        let dir = self.staging();
        std::fs::create_dir_all(&dir)?;
        let name = cf_name(space);
        let file = dir.join(format!("{name}.sst"));
        if let Some(run) = ThreadedRun::start(space, file.clone(), &self.warming)? {
            return Ok(Box::new(run));
        }
        let bucket = match space {
            Space::Table(t) => Some(BucketBuf {
                bits: self.table(t)?.1,
                entries: Vec::new(),
            }),
            _ => None,
        };
        let writer = SstFileWriter::create(write_options(space));
        writer.open(&file).map_err(storage)?;
        Ok(Box::new(SstRun {
            writer,
            space,
            file,
            entries: 0,
            warming: &self.warming,
            bucket,
        }))
    }

    fn ingest(&self, mut runs: Vec<SortedRun>) -> Result<()> {
        let rank = |s: &Space| match s {
            Space::Meta => 0,
            Space::Docs => 1,
            Space::Ids => 2,
            Space::Exact => 3,
            Space::Table(t) => 4 + t,
        };
        runs.sort_by_key(|r| rank(&r.space()));
        let mut ingest = IngestExternalFileOptions::default();
        ingest.set_move_files(true);
        self.warming.wait();
        for run in runs {
            let cf = self.space_cf(run.space())?;
            let file: PathBuf = run
                .into_staged()
                .ok_or_else(|| Error::storage("rocksdb", "a run staged by another backend"))?;
            self.db
                .ingest_external_file_cf_opts(cf, &ingest, vec![file])
                .map_err(storage)?;
        }
        Ok(())
    }

    fn discard_staged(&self) {
        self.warming.wait();
        let _ = std::fs::remove_dir_all(self.staging());
    }

    /// Spills inside the staging directory, so that what a crash leaves goes with it.
    fn staging(&self) -> Staging {
        Staging {
            isolated: true,
            spill_dir: Some(self.staging()),
        }
    }
}

/// Calls `f` with the space, key and value of a `docs`, `ids` or `exact` entry; `None` for
/// a table's (gathered into buckets first).
pub(super) fn with_encoded<R>(
    entry: SortedEntry<'_>,
    f: impl FnOnce(Space, &[u8], &[u8]) -> R,
) -> Option<R> {
    Some(match entry {
        SortedEntry::Doc(seq, doc) => f(Space::Docs, &codec::doc_key(seq), &codec::encode_doc(doc)),
        SortedEntry::Id(id, value) => f(Space::Ids, id.as_bytes(), &codec::encode_id_value(value)),
        SortedEntry::Exact(hash, seq) => f(Space::Exact, &codec::exact_key(hash, seq), &[]),
        SortedEntry::Table(..) => return None,
    })
}

/// An entry given to the run of another space.
pub(super) fn wrong_space(run: Space) -> Error {
    Error::storage(
        "rocksdb",
        format!("an entry of another space was given to the bulk load's run of {run:?}"),
    )
}

/// The staged files of a bulk load being read into the page cache ([`warm`]), each on a
/// thread of its own from the moment its run is finished, so that the reads overlap with
/// the writing of the later runs (the tables are written last, in parallel);
/// [`BulkIngest::ingest`] waits for them before it moves the files in.
#[derive(Default)]
pub(super) struct Warming(Mutex<Vec<JoinHandle<()>>>);

impl Warming {
    /// Starts reading `file` (on this thread if no thread can be started).
    pub(super) fn start(&self, file: PathBuf) {
        let reader = std::thread::Builder::new().name("simstore-warm".into());
        let handle = match reader.spawn({
            let file = file.clone();
            move || warm(&file)
        }) {
            Ok(handle) => handle,
            Err(_) => return warm(&file),
        };
        self.lock().push(handle);
    }

    /// Waits until every file started is read.
    pub(super) fn wait(&self) {
        let handles = std::mem::take(&mut *self.lock());
        for handle in handles {
            let _ = handle.join();
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Vec<JoinHandle<()>>> {
        self.0.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// Reads `file` once, so that its pages are in the page cache.
///
/// RocksDB's `SstFileWriter` drops the pages it writes from the page cache (not settable
/// through the C API), so right after a bulk load every probe read its block from disk.
/// Ingest moves the file (the same inode), so the pages read here are the store's.
/// `posix_fadvise(WILLNEED)` reads in the background, and the first queries still waited
/// (measured: docs/benchmarks.md). Best effort: a failure only leaves the store cold.
fn warm(file: &std::path::Path) {
    use std::io::Read;
    let Ok(mut f) = std::fs::File::open(file) else {
        return;
    };
    let _ = rustix::fs::fadvise(&f, 0, None, rustix::fs::Advice::Sequential);
    let mut buf = vec![0u8; 1 << 20];
    while matches!(f.read(&mut buf), Ok(n) if n > 0) {}
}

/// An SST file being written for one column family.
struct SstRun<'a> {
    writer: SstFileWriter<'a>,
    space: Space,
    file: PathBuf,
    entries: u64,
    warming: &'a Warming,
    /// A table's bucket being gathered (`None` for the other spaces).
    bucket: Option<BucketBuf>,
}

/// The entries of a table's current bucket (`codec::bucket`), written as one value when
/// the next entry falls in another bucket, or the run finishes.
struct BucketBuf {
    bits: u32,
    entries: Vec<(u64, u64)>,
}

impl BucketBuf {
    /// Adds an entry (in key order); returns the bucket it closes, if it opens another.
    fn push(&mut self, permuted: u64, seq: u64) -> Option<(BucketKey, Vec<u8>)> {
        let key = bucket::bucket_key(permuted, self.bits);
        let closed = match self.entries.last() {
            Some(&(last, _)) if bucket::bucket_key(last, self.bits) != key => self.take(),
            _ => None,
        };
        self.entries.push((permuted, seq));
        closed
    }

    /// The gathered bucket's key and value, if it holds anything; empties it.
    fn take(&mut self) -> Option<(BucketKey, Vec<u8>)> {
        let &(first, _) = self.entries.first()?;
        let value = bucket::encode_bucket(self.bits, &self.entries);
        self.entries.clear();
        Some((bucket::bucket_key(first, self.bits), value))
    }
}

impl SstRun<'_> {
    fn put_kv(&mut self, key: &[u8], value: &[u8]) -> Result<()> {
        self.entries += 1;
        self.writer.put(key, value).map_err(storage)
    }
}

impl SortedWriter for SstRun<'_> {
    fn put(&mut self, entry: SortedEntry<'_>) -> Result<()> {
        let space = self.space;
        if let SortedEntry::Table(permuted, seq) = entry {
            let Some(buf) = self.bucket.as_mut() else {
                return Err(wrong_space(space));
            };
            return match buf.push(permuted, seq) {
                Some((key, value)) => self.put_kv(key.as_ref(), &value),
                None => Ok(()),
            };
        }
        with_encoded(entry, |s, k, v| match s == space {
            true => self.put_kv(k, v),
            false => Err(wrong_space(space)),
        })
        .unwrap_or_else(|| Err(wrong_space(space)))
    }

    fn finish(mut self: Box<Self>) -> Result<Option<SortedRun>> {
        if let Some((key, value)) = self.bucket.as_mut().and_then(BucketBuf::take) {
            self.put_kv(key.as_ref(), &value)?;
        }
        if self.entries == 0 {
            return Ok(None);
        }
        self.writer.finish().map_err(storage)?;
        self.warming.start(self.file.clone());
        Ok(Some(SortedRun::new(self.space, self.file)))
    }
}
