//! The `docs` run of a bulk load, written on a thread of its own: the caller encodes each
//! record and hands batches over; the thread feeds them to RocksDB's `SstFileWriter` (its
//! block building and LZ4, ~2.5 s of a 10M load), while the caller goes on with the rows'
//! sort. Memory: at most [`QUEUE`] batches of about [`BATCH_BYTES`] in flight.

use std::path::PathBuf;
use std::sync::LazyLock;
use std::sync::mpsc::{SyncSender, sync_channel};
use std::thread::JoinHandle;

use rocksdb::{Cache, Options, SstFileWriter};

use super::ingest::Warming;
use super::{options, storage};
use crate::error::{Error, Result};
use crate::store::backend::{SortedRun, SortedWriter, Space};
use crate::store::codec::{self, IdValue};
use crate::types::StoredDoc;

/// Records per batch at most, and bytes per batch about.
const BATCH_DOCS: usize = 4096;
const BATCH_BYTES: usize = 1 << 20;

/// Batches waiting for the thread at most.
const QUEUE: usize = 4;

/// The options `docs` files are written with: those of the column family (the cache, which
/// only reads use, aside), made once per process so that the writer can outlive any store
/// handle's borrow and move to its thread.
static WRITE_OPTIONS: LazyLock<Options> =
    LazyLock::new(|| options::sst_options(options::DOCS, &Cache::new_lru_cache(1 << 20)));

/// Encoded records: `(seq, end of its value in bytes)`.
#[derive(Default)]
struct Batch {
    records: Vec<(u64, usize)>,
    bytes: Vec<u8>,
}

/// A `docs` SST file being written on its own thread.
pub(super) struct DocsRun<'a> {
    batch: Batch,
    tx: Option<SyncSender<Batch>>,
    worker: Option<JoinHandle<Result<u64>>>,
    file: PathBuf,
    warming: &'a Warming,
}

impl<'a> DocsRun<'a> {
    /// Opens `file` and starts the thread.
    pub(super) fn start(file: PathBuf, warming: &'a Warming) -> Result<Self> {
        let mut writer = SstFileWriter::create(&WRITE_OPTIONS);
        writer.open(&file).map_err(storage)?;
        let (tx, rx) = sync_channel::<Batch>(QUEUE);
        let worker = std::thread::Builder::new()
            .name("simstore-docs".into())
            .spawn(move || {
                let mut entries = 0u64;
                for batch in rx {
                    let mut start = 0;
                    for &(seq, end) in &batch.records {
                        let value = &batch.bytes[start..end];
                        writer.put(codec::doc_key(seq), value).map_err(storage)?;
                        start = end;
                    }
                    entries += batch.records.len() as u64;
                }
                if entries > 0 {
                    writer.finish().map_err(storage)?;
                }
                Ok(entries)
            })?;
        Ok(Self {
            batch: Batch::default(),
            tx: Some(tx),
            worker: Some(worker),
            file,
            warming,
        })
    }

    fn send(&mut self) -> Result<()> {
        let batch = std::mem::take(&mut self.batch);
        match self.tx.as_ref().map(|tx| tx.send(batch)) {
            Some(Ok(())) => Ok(()),
            // The thread stopped: its error says why.
            _ => Err(self.join().err().unwrap_or_else(stopped)),
        }
    }

    fn join(&mut self) -> Result<u64> {
        self.tx = None;
        let worker = self.worker.take().ok_or_else(stopped)?;
        worker.join().map_err(|_| stopped())?
    }
}

fn stopped() -> Error {
    Error::Storage("the thread writing a bulk load's docs file stopped unexpectedly".into())
}

impl SortedWriter for DocsRun<'_> {
    fn put_doc(&mut self, seq: u64, doc: &StoredDoc) -> Result<()> {
        self.batch.bytes.extend_from_slice(&codec::encode_doc(doc));
        self.batch.records.push((seq, self.batch.bytes.len()));
        if self.batch.records.len() >= BATCH_DOCS || self.batch.bytes.len() >= BATCH_BYTES {
            self.send()?;
        }
        Ok(())
    }

    fn put_id(&mut self, _id: &str, _value: IdValue) -> Result<()> {
        Err(wrong_space())
    }

    fn put_exact(&mut self, _hash: u128, _seq: u64) -> Result<()> {
        Err(wrong_space())
    }

    fn put_table(&mut self, _permuted: u64, _seq: u64) -> Result<()> {
        Err(wrong_space())
    }

    fn finish(mut self: Box<Self>) -> Result<Option<SortedRun>> {
        if !self.batch.records.is_empty() {
            self.send()?;
        }
        if self.join()? == 0 {
            return Ok(None);
        }
        self.warming.start(self.file.clone());
        Ok(Some(SortedRun {
            space: Space::Docs,
            file: self.file.clone(),
        }))
    }
}

fn wrong_space() -> Error {
    Error::Storage("a bulk load's docs file takes document records only".into())
}

impl Drop for DocsRun<'_> {
    fn drop(&mut self) {
        // Abandoned (or finished): closing the channel ends the thread, which drops its
        // writer; an unfinished file is removed with the staging directory.
        self.tx = None;
        if let Some(worker) = self.worker.take() {
            let _ = worker.join();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn doc(i: u64) -> StoredDoc {
        StoredDoc {
            id: format!("d{i}"),
            fp: i,
            title: None,
            url: None,
            length: 0,
            time: 0,
            content_hash: None,
            sketch: None,
        }
    }

    fn write(seqs: impl Iterator<Item = u64>, dir: &std::path::Path) -> Result<Option<SortedRun>> {
        let warming = Warming::default();
        let mut run = Box::new(DocsRun::start(dir.join("docs.sst"), &warming)?);
        for seq in seqs {
            run.put_doc(seq, &doc(seq))?;
        }
        let out = run.finish();
        warming.wait();
        out
    }

    #[test]
    fn records_cross_to_the_thread_in_batches_and_make_one_file() {
        let dir = tempfile::tempdir().unwrap();
        let run = write(0..3 * BATCH_DOCS as u64 + 5, dir.path()).unwrap();
        let run = run.expect("a run");
        assert_eq!(run.space, Space::Docs);
        assert!(std::fs::metadata(&run.file).unwrap().len() > 0);
        assert!(
            write(0..0, dir.path()).unwrap().is_none(),
            "no record, no run"
        );
    }

    #[test]
    fn an_error_on_the_thread_reaches_the_caller() {
        let dir = tempfile::tempdir().unwrap();
        // Out of order: RocksDB's writer refuses the second batch's first key.
        let seqs = (0..BATCH_DOCS as u64).chain(0..BATCH_DOCS as u64 * 6);
        let err = write(seqs, dir.path()).unwrap_err();
        assert!(err.to_string().to_lowercase().contains("order"), "{err}");
    }
}
