//! The `docs` and `ids` runs of a bulk load, written on a thread of their own: the caller
//! encodes each entry and hands batches over; the thread feeds them to RocksDB's
//! `SstFileWriter` (block building and LZ4, a large share of a load), while the caller goes
//! on with the rows' sort (`docs`) or their merge (`ids`).
//! Memory: at most [`QUEUE`] batches of about [`BATCH_BYTES`] in flight.

use std::path::PathBuf;
use std::sync::mpsc::{SyncSender, sync_channel};
use std::thread::JoinHandle;

use rocksdb::SstFileWriter;

use super::ingest::{Warming, with_encoded, wrong_space};
use super::{options, storage};
use crate::error::{Error, Result};
use crate::store::backend::{SortedEntry, SortedRun, SortedWriter, Space};

/// Entries per batch at most, and bytes per batch about.
const BATCH_ENTRIES: usize = 4096;
const BATCH_BYTES: usize = 1 << 20;

/// Batches waiting for the thread at most.
const QUEUE: usize = 4;

/// Encoded entries, one after another in `bytes`: `(end of its key, end of its value)`.
#[derive(Default)]
struct Batch {
    entries: Vec<(usize, usize)>,
    bytes: Vec<u8>,
}

impl Batch {
    fn push(&mut self, key: &[u8], value: &[u8]) {
        self.bytes.extend_from_slice(key);
        let key_end = self.bytes.len();
        self.bytes.extend_from_slice(value);
        self.entries.push((key_end, self.bytes.len()));
    }
}

/// A `docs` or `ids` SST file being written on its own thread.
pub(super) struct ThreadedRun<'a> {
    space: Space,
    batch: Batch,
    tx: Option<SyncSender<Batch>>,
    worker: Option<JoinHandle<Result<u64>>>,
    file: PathBuf,
    warming: &'a Warming,
}

impl<'a> ThreadedRun<'a> {
    /// Opens `file` for `space` (`Docs` or `Ids`) and starts the thread; `None` for another
    /// space.
    pub(super) fn start(space: Space, file: PathBuf, warming: &'a Warming) -> Result<Option<Self>> {
        if !matches!(space, Space::Docs | Space::Ids) {
            return Ok(None);
        }
        let mut writer = SstFileWriter::create(options::write_options(space));
        writer.open(&file).map_err(storage)?;
        let (tx, rx) = sync_channel::<Batch>(QUEUE);
        let worker = std::thread::Builder::new()
            .name("simstore-run".into())
            .spawn(move || {
                let mut entries = 0u64;
                for batch in rx {
                    let mut start = 0;
                    for &(key_end, end) in &batch.entries {
                        let (key, value) =
                            (&batch.bytes[start..key_end], &batch.bytes[key_end..end]);
                        writer.put(key, value).map_err(storage)?;
                        start = end;
                    }
                    entries += batch.entries.len() as u64;
                }
                if entries > 0 {
                    writer.finish().map_err(storage)?;
                }
                Ok(entries)
            })?;
        Ok(Some(Self {
            space,
            batch: Batch::default(),
            tx: Some(tx),
            worker: Some(worker),
            file,
            warming,
        }))
    }

    fn push(&mut self, key: &[u8], value: &[u8]) -> Result<()> {
        self.batch.push(key, value);
        if self.batch.entries.len() >= BATCH_ENTRIES || self.batch.bytes.len() >= BATCH_BYTES {
            self.send()?;
        }
        Ok(())
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
    Error::storage(
        "store",
        "the thread writing a bulk load's file stopped unexpectedly",
    )
}

impl SortedWriter for ThreadedRun<'_> {
    fn put(&mut self, entry: SortedEntry<'_>) -> Result<()> {
        let space = self.space;
        with_encoded(entry, |s, k, v| match s == space {
            true => self.push(k, v),
            false => Err(wrong_space(space)),
        })
        .unwrap_or_else(|| Err(wrong_space(space)))
    }

    fn finish(mut self: Box<Self>) -> Result<Option<SortedRun>> {
        if !self.batch.entries.is_empty() {
            self.send()?;
        }
        if self.join()? == 0 {
            return Ok(None);
        }
        self.warming.start(self.file.clone());
        Ok(Some(SortedRun::new(self.space, self.file.clone())))
    }
}

impl Drop for ThreadedRun<'_> {
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
    use crate::store::codec::IdValue;
    use crate::types::StoredDoc;

    fn doc(i: u64) -> StoredDoc {
        StoredDoc {
            id: format!("d{i}"),
            fp: i,
            title: None,
            url: None,
            length: 0,
            time: 0,
            seen: 0,
            content_hash: None,
            sketch: None,
        }
    }

    fn write(seqs: impl Iterator<Item = u64>, dir: &std::path::Path) -> Result<Option<SortedRun>> {
        let warming = Warming::default();
        let run = ThreadedRun::start(Space::Docs, dir.join("docs.sst"), &warming)?;
        let mut run = Box::new(run.expect("docs are written on a thread"));
        for seq in seqs {
            run.put(SortedEntry::Doc(seq, &doc(seq)))?;
        }
        let out = run.finish();
        warming.wait();
        out
    }

    #[test]
    fn records_cross_to_the_thread_in_batches_and_make_one_file() {
        let dir = tempfile::tempdir().unwrap();
        let run = write(0..3 * BATCH_ENTRIES as u64 + 5, dir.path()).unwrap();
        let run = run.expect("a run");
        assert_eq!(run.space(), Space::Docs);
        let file: PathBuf = run.into_staged().expect("a file");
        assert!(std::fs::metadata(&file).unwrap().len() > 0);
        assert!(
            write(0..0, dir.path()).unwrap().is_none(),
            "no record, no run"
        );
    }

    #[test]
    fn an_error_on_the_thread_reaches_the_caller() {
        let dir = tempfile::tempdir().unwrap();
        // Out of order: RocksDB's writer refuses the second batch's first key.
        let seqs = (0..BATCH_ENTRIES as u64).chain(0..BATCH_ENTRIES as u64 * 6);
        let err = write(seqs, dir.path()).unwrap_err();
        assert!(err.to_string().to_lowercase().contains("order"), "{err}");
    }

    #[test]
    fn an_ids_run_takes_ids_only_and_tables_are_not_threaded() {
        let dir = tempfile::tempdir().unwrap();
        let warming = Warming::default();
        let file = dir.path().join("ids.sst");
        let run = ThreadedRun::start(Space::Ids, file.clone(), &warming).unwrap();
        let mut run = Box::new(run.expect("ids are written on a thread"));
        assert!(run.put(SortedEntry::Doc(1, &doc(1))).is_err());
        for i in 0..10u64 {
            let value = IdValue {
                seq: i,
                fp: Some(i),
                hash: None,
            };
            run.put(SortedEntry::Id(&format!("id{i:03}"), value))
                .unwrap();
        }
        assert_eq!(run.finish().unwrap().unwrap().space(), Space::Ids);
        warming.wait();
        let table = ThreadedRun::start(Space::Table(0), dir.path().join("t.sst"), &warming);
        assert!(table.unwrap().is_none());
    }
}
