//! External merge sort with a memory budget, for bulk loads: items are gathered in a chunk
//! of at most the budget; a full chunk is sorted and written to a temporary file (a *run*)
//! in the load's [`SpillDir`]; at the end the runs and the last chunk are merged (k-way).
//! A load that fits in its budget writes no file at all. Runs are merged in groups of
//! [`FAN_IN`] as they accumulate (like the levels of an LSM tree), so a merge never opens
//! more than about `FAN_IN` files per level, however large the load. The byte layouts of
//! the runs are the codec's (`codec::spill`).

use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::fs::File;
use std::io::{self, BufReader, BufWriter, Read, Write};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use rayon::slice::ParallelSliceMut;
use tempfile::{TempDir, TempPath};

use crate::error::{Error, Result};
use crate::store::backend::{BulkIngest, SortedRun, SortedWriter, Space};
use crate::store::codec::spill::{self, LoadRow};

/// Runs merged into one once this many of one level have accumulated.
pub(super) const FAN_IN: usize = 64;

/// Buffer of each run being written or read.
const WRITE_BUFFER: usize = 256 << 10;
const READ_BUFFER: usize = 64 << 10;

/// An item a [`Sorter`] can spill: ordered, with a byte layout in `codec::spill`.
pub(super) trait Spill: Ord + Send + Sized {
    /// Heap bytes the item owns besides its own size (an id's bytes, say).
    fn heap_bytes(&self) -> usize {
        0
    }
    /// Appends the item's run encoding to `out`.
    fn encode(&self, out: &mut Vec<u8>);
    /// Reads the next item of a run; `None` at its end.
    fn read(r: &mut impl Read) -> io::Result<Option<Self>>;
}

impl Spill for LoadRow {
    fn heap_bytes(&self) -> usize {
        // The allocator rounds up and keeps a header: count at least 16 bytes an id.
        self.id.len().max(8) + 8
    }
    fn encode(&self, out: &mut Vec<u8>) {
        spill::encode_row(self, out)
    }
    fn read(r: &mut impl Read) -> io::Result<Option<Self>> {
        spill::read_row(r)
    }
}

impl Spill for (u64, u64) {
    fn encode(&self, out: &mut Vec<u8>) {
        spill::encode_table_key(self, out)
    }
    fn read(r: &mut impl Read) -> io::Result<Option<Self>> {
        spill::read_table_key(r)
    }
}

impl Spill for (u128, u64) {
    fn encode(&self, out: &mut Vec<u8>) {
        spill::encode_exact_key(self, out)
    }
    fn read(r: &mut impl Read) -> io::Result<Option<Self>> {
        spill::read_exact_key(r)
    }
}

/// The temporary directory of one load's runs, created under `parent` at the first spill
/// and removed (with every run in it) when dropped — on success and on error alike.
#[derive(Debug)]
pub(super) struct SpillDir {
    parent: PathBuf,
    dir: Mutex<Option<TempDir>>,
}

impl SpillDir {
    /// A spill directory to be created under `parent` when first needed.
    pub(super) fn new(parent: PathBuf) -> Arc<Self> {
        Arc::new(Self {
            parent,
            dir: Mutex::new(None),
        })
    }

    /// Writes `items` (sorted) as a new run; the file is removed when the path is dropped.
    fn write_run<T: Spill>(&self, items: impl Iterator<Item = Result<T>>) -> Result<TempPath> {
        let file = self.new_file()?;
        let path = file.path().to_path_buf();
        let mut w = BufWriter::with_capacity(WRITE_BUFFER, file);
        let mut buf = Vec::with_capacity(64);
        for item in items {
            buf.clear();
            item?.encode(&mut buf);
            w.write_all(&buf)
                .map_err(|e| run_error(&path, "write", e))?;
        }
        let file = w
            .into_inner()
            .map_err(|e| run_error(&path, "write", e.into_error()))?;
        Ok(file.into_temp_path())
    }

    fn new_file(&self) -> Result<tempfile::NamedTempFile> {
        let mut dir = self.dir.lock().unwrap_or_else(|e| e.into_inner());
        if dir.is_none() {
            std::fs::create_dir_all(&self.parent)
                .map_err(|e| run_error(&self.parent, "create a directory for", e))?;
            let created = tempfile::Builder::new()
                .prefix("spill-")
                .tempdir_in(&self.parent)
                .map_err(|e| run_error(&self.parent, "create a directory for", e))?;
            *dir = Some(created);
        }
        let dir = dir.as_ref().expect("created above").path();
        tempfile::Builder::new()
            .prefix("run-")
            .tempfile_in(dir)
            .map_err(|e| run_error(dir, "create", e))
    }
}

/// An I/O error on a run, naming the file and what to do.
fn run_error(path: &Path, what: &str, e: io::Error) -> Error {
    Error::Io(io::Error::new(
        e.kind(),
        format!(
            "cannot {what} a bulk load's temporary sorted run {}: {e} (it needs free disk \
             space of about the size of the input; a larger --bulk-memory spills less)",
            path.display()
        ),
    ))
}

/// A spilled run and its level: 0 for a chunk, n + 1 for a merge of [`FAN_IN`] runs of
/// level n.
struct Run {
    level: u32,
    path: TempPath,
}

/// Sorts any number of items in at most `budget` bytes of memory (items, plus what they
/// own on the heap), spilling sorted runs to a [`SpillDir`].
pub(super) struct Sorter<T> {
    chunk: Vec<T>,
    heap: usize,
    budget: usize,
    dir: Arc<SpillDir>,
    runs: Vec<Run>,
}

impl<T: Spill> Sorter<T> {
    /// An empty sorter of at most `budget` bytes.
    pub(super) fn new(dir: Arc<SpillDir>, budget: usize) -> Self {
        Self {
            chunk: Vec::new(),
            heap: 0,
            budget,
            dir,
            runs: Vec::new(),
        }
    }

    /// Adds an item (spilling the chunk first when it would not fit).
    pub(super) fn push(&mut self, item: T) -> Result<()> {
        let extra = item.heap_bytes();
        if !self.chunk.is_empty() && !self.has_room(extra) {
            self.spill()?;
        }
        self.heap += extra;
        self.chunk.push(item);
        Ok(())
    }

    /// True when one more item owning `extra` heap bytes fits in the budget (growing the
    /// chunk's capacity, never beyond the budget, if it must).
    fn has_room(&mut self, extra: usize) -> bool {
        let size = size_of::<T>().max(1);
        let limit = self.budget.saturating_sub(self.heap + extra) / size;
        let cap = self.chunk.capacity();
        if self.chunk.len() < cap {
            return cap <= limit;
        }
        let want = (cap * 2).max(1024).min(limit);
        if want <= cap {
            return false;
        }
        self.chunk.reserve_exact(want - self.chunk.len());
        true
    }

    /// Memory the sorter holds now, in bytes.
    pub(super) fn held_bytes(&self) -> usize {
        self.chunk.capacity() * size_of::<T>() + self.heap
    }

    /// True when nothing was pushed.
    pub(super) fn is_empty(&self) -> bool {
        self.chunk.is_empty() && self.runs.is_empty()
    }

    /// Runs written so far (after merges of [`FAN_IN`] runs into one).
    pub(super) fn runs(&self) -> usize {
        self.runs.len()
    }

    /// Sorts the chunk and writes it as a run, freeing its memory; merges runs when
    /// [`FAN_IN`] of one level have accumulated.
    pub(super) fn spill(&mut self) -> Result<()> {
        if self.chunk.is_empty() {
            return Ok(());
        }
        self.chunk.par_sort_unstable();
        let path = self.dir.write_run(self.chunk.drain(..).map(Ok))?;
        self.heap = 0;
        self.runs.push(Run { level: 0, path });
        self.cascade()
    }

    /// Frees the chunk's memory (it is empty after a spill).
    pub(super) fn shrink(&mut self) {
        self.chunk = Vec::new();
    }

    fn cascade(&mut self) -> Result<()> {
        while let Some(level) = self.runs.last().map(|r| r.level) {
            let same = self
                .runs
                .iter()
                .rev()
                .take_while(|r| r.level == level)
                .count();
            if same < FAN_IN {
                break;
            }
            let group = self.runs.split_off(self.runs.len() - FAN_IN);
            let merge = Merge::<T>::new(Vec::new(), group.into_iter().map(|r| r.path).collect())?;
            let path = self.dir.write_run(merge)?;
            self.runs.push(Run {
                level: level + 1,
                path,
            });
        }
        Ok(())
    }

    /// Every item pushed, in order.
    pub(super) fn finish(mut self) -> Result<Merge<T>> {
        self.chunk.par_sort_unstable();
        let runs = self.runs.into_iter().map(|r| r.path).collect();
        Merge::new(self.chunk, runs)
    }
}

/// Where a [`Merge`] takes items from: the last chunk, or a run's file.
enum Source<T> {
    Memory(std::vec::IntoIter<T>),
    File(BufReader<File>, PathBuf),
}

impl<T: Spill> Source<T> {
    fn next(&mut self) -> Result<Option<T>> {
        match self {
            Source::Memory(it) => Ok(it.next()),
            Source::File(r, path) => T::read(r).map_err(|e| run_error(path, "read", e)),
        }
    }
}

/// The k-way merge of sorted sources: the items of all of them, in order. Its runs' files
/// are removed when it is dropped.
pub(super) struct Merge<T> {
    sources: Vec<Source<T>>,
    heads: BinaryHeap<Reverse<(T, usize)>>,
    _runs: Vec<TempPath>,
}

impl<T: Spill> Merge<T> {
    fn new(chunk: Vec<T>, runs: Vec<TempPath>) -> Result<Self> {
        let mut sources = Vec::with_capacity(runs.len() + 1);
        if !chunk.is_empty() {
            sources.push(Source::Memory(chunk.into_iter()));
        }
        for path in &runs {
            let file = File::open(path).map_err(|e| run_error(path, "open", e))?;
            sources.push(Source::File(
                BufReader::with_capacity(READ_BUFFER, file),
                path.to_path_buf(),
            ));
        }
        let mut heads = BinaryHeap::with_capacity(sources.len());
        if sources.len() > 1 {
            for (i, s) in sources.iter_mut().enumerate() {
                if let Some(item) = s.next()? {
                    heads.push(Reverse((item, i)));
                }
            }
        }
        Ok(Self {
            sources,
            heads,
            _runs: runs,
        })
    }

    fn next_item(&mut self) -> Result<Option<T>> {
        if self.sources.len() == 1 {
            return self.sources[0].next();
        }
        let Some(Reverse((item, i))) = self.heads.pop() else {
            return Ok(None);
        };
        if let Some(next) = self.sources[i].next()? {
            self.heads.push(Reverse((next, i)));
        }
        Ok(Some(item))
    }
}

impl<T: Spill> Iterator for Merge<T> {
    type Item = Result<T>;

    fn next(&mut self) -> Option<Result<T>> {
        self.next_item().transpose()
    }
}

impl<T: Spill> Merge<T> {
    /// Writes the merged items as the run of `space`, each through `put`.
    pub(super) fn write_to(
        self,
        ingest: &dyn BulkIngest,
        space: Space,
        put: impl Fn(&mut dyn SortedWriter, T) -> Result<()>,
    ) -> Result<Option<SortedRun>> {
        let mut w = ingest.sorted_writer(space)?;
        for item in self {
            put(w.as_mut(), item?)?;
        }
        w.finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn files_in(dir: &Path) -> usize {
        walk(dir).len()
    }

    fn walk(dir: &Path) -> Vec<PathBuf> {
        let mut out = Vec::new();
        for e in std::fs::read_dir(dir).into_iter().flatten().flatten() {
            if e.path().is_dir() {
                out.extend(walk(&e.path()));
            } else {
                out.push(e.path());
            }
        }
        out
    }

    #[test]
    fn a_tiny_budget_spills_runs_that_merge_into_sorted_order() {
        let parent = tempfile::tempdir().unwrap();
        let dir = SpillDir::new(parent.path().join("spill"));
        let mut keys: Vec<(u64, u64)> = (0..20_000u64)
            .map(|i| (i.wrapping_mul(0x9e37_79b9_7f4a_7c15) >> 3, i))
            .collect();
        // 16 KiB: 1,024 keys a run, so 19 runs (and no merge of FAN_IN runs yet).
        let mut sorter = Sorter::new(dir.clone(), 16 << 10);
        for &k in &keys {
            sorter.push(k).unwrap();
            assert!(sorter.held_bytes() <= 16 << 10);
        }
        assert_eq!(sorter.runs(), 19);
        assert_eq!(
            files_in(parent.path()),
            19,
            "the runs are files in the spill dir"
        );
        let merged: Vec<(u64, u64)> = sorter.finish().unwrap().map(Result::unwrap).collect();
        keys.sort_unstable();
        assert_eq!(merged, keys);
        assert_eq!(files_in(parent.path()), 0, "a merge removes its runs");
        drop(dir);
        let left = std::fs::read_dir(parent.path().join("spill"))
            .unwrap()
            .count();
        assert_eq!(left, 0, "the spill dir is removed with the load");
    }

    #[test]
    fn runs_are_merged_by_levels_and_rows_sort_by_id_then_seq() {
        let parent = tempfile::tempdir().unwrap();
        let dir = SpillDir::new(parent.path().to_path_buf());
        // About 10 rows a run: 700 rows make ~70 level-0 runs, so one merge of FAN_IN.
        let mut sorter = Sorter::new(dir.clone(), 10 * (size_of::<LoadRow>() + 16));
        let mut rows: Vec<LoadRow> = (0..700u64)
            .map(|i| LoadRow {
                id: format!("id{}", i % 250).into(),
                seq: i,
                fp: i * 3,
                hash: (i % 2 == 0).then_some(u128::from(i) << 70),
                bands: [i as u32; 4],
            })
            .collect();
        for r in &rows {
            sorter.push(r.clone()).unwrap();
        }
        assert!(sorter.runs() < FAN_IN, "{} runs", sorter.runs());
        assert!(sorter.runs.iter().any(|r| r.level == 1));
        let merged: Vec<LoadRow> = sorter.finish().unwrap().map(Result::unwrap).collect();
        rows.sort();
        assert_eq!(merged, rows);
        assert!(walk(parent.path()).is_empty());
    }

    #[test]
    fn a_load_within_its_budget_writes_no_file() {
        let parent = tempfile::tempdir().unwrap();
        let dir = SpillDir::new(parent.path().join("spill"));
        let mut sorter = Sorter::new(dir, 1 << 20);
        for i in (0..1000u64).rev() {
            sorter.push((u128::from(i), i)).unwrap();
        }
        assert_eq!(sorter.runs(), 0);
        let merged: Vec<_> = sorter.finish().unwrap().map(Result::unwrap).collect();
        assert_eq!(
            merged,
            (0..1000u64).map(|i| (u128::from(i), i)).collect::<Vec<_>>()
        );
        assert!(!parent.path().join("spill").exists());
    }

    #[test]
    fn a_damaged_run_is_an_error_not_a_panic() {
        let parent = tempfile::tempdir().unwrap();
        let dir = SpillDir::new(parent.path().to_path_buf());
        let mut sorter = Sorter::new(dir, 1024);
        for i in 0..200u64 {
            sorter.push((i, i)).unwrap();
        }
        let run = walk(parent.path()).pop().unwrap();
        let len = std::fs::metadata(&run).unwrap().len();
        std::fs::OpenOptions::new()
            .write(true)
            .open(&run)
            .unwrap()
            .set_len(len - 3)
            .unwrap();
        let err = sorter
            .finish()
            .unwrap()
            .find_map(Result::err)
            .expect("the cut run is reported");
        assert!(err.to_string().contains("temporary sorted run"), "{err}");
    }
}
