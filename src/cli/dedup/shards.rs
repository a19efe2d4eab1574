//! Parquet shards in and out of `dedup`: pass 1 reads only the text column (and the id and
//! keep-policy columns) of one record batch at a time; pass 2 reads every column again
//! and writes the kept rows, unchanged, as Parquet shards of at most `--shard-rows` rows
//! with the inputs' schema and compression (or `--compression`).

use std::fs::{self, File};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::SystemTime;

use anyhow::{Context, Result, bail};
use arrow_array::{Array, BooleanArray, RecordBatch};
use arrow_schema::SchemaRef;
use indicatif::ProgressBar;
use parquet::arrow::ArrowWriter;
use parquet::arrow::ProjectionMask;
use parquet::arrow::arrow_reader::{ParquetRecordBatchReader, ParquetRecordBatchReaderBuilder};
use parquet::basic::Compression;
use parquet::file::properties::WriterProperties;
use rayon::prelude::*;
use simstore::Fingerprinter;
use simstore::input::reader::Record;

use super::columns::{ranks, strings, texts};
use super::keep::Rank;
use super::kept::{KeptOut, Target};
use super::records::{self, Counts, ReadOptions, Sink};
use crate::cli::input::{At, Place};

/// Rows read at a time.
const BATCH_ROWS: usize = 4096;

/// About how many encoded bytes a row group of the output holds before it is written out:
/// the writer holds one row group in memory, and a shard of a million rows in one would
/// hold the kept texts of a whole shard.
const ROW_GROUP_BYTES: usize = 32 << 20;

/// The Parquet files among `files`: `None` when none is one; every `.parquet` file of a
/// directory, sorted by name; an error when Parquet and other inputs are mixed.
pub(super) fn inputs(files: &[String]) -> Result<Option<Vec<PathBuf>>> {
    let mut shards = Vec::new();
    let mut other = None;
    for f in files {
        let path = Path::new(f);
        if path.is_dir() {
            let mut found: Vec<PathBuf> = fs::read_dir(path)
                .with_context(|| format!("cannot read the directory {f}"))?
                .filter_map(|e| e.ok().map(|e| e.path()))
                .filter(|p| is_parquet(p))
                .collect();
            found.sort();
            if found.is_empty() {
                other.get_or_insert(f);
            }
            shards.extend(found);
        } else if is_parquet(path) {
            shards.push(path.to_owned());
        } else {
            other.get_or_insert(f);
        }
    }
    match (shards.is_empty(), other) {
        (true, _) => Ok(None),
        (false, None) => Ok(Some(shards)),
        (false, Some(f)) => bail!(
            "{f} is not a Parquet file (.parquet), and other inputs are: dedup Parquet shards \
             and JSONL files in separate runs"
        ),
    }
}

/// Whether `path` names a Parquet file.
pub(super) fn is_parquet(path: &Path) -> bool {
    path.extension().is_some_and(|e| e == "parquet")
}

/// What pass 2 checks an input against: its size and modification time in pass 1.
pub(super) type Stamp = (u64, Option<SystemTime>);

pub(super) fn stamp(path: &Path) -> Result<Stamp> {
    let m = fs::metadata(path).with_context(|| format!("cannot read {}", path.display()))?;
    Ok((m.len(), m.modified().ok()))
}

/// Opens a shard for reading.
fn open(path: &Path) -> Result<ParquetRecordBatchReaderBuilder<File>> {
    let file = File::open(path).with_context(|| format!("cannot open {}", path.display()))?;
    ParquetRecordBatchReaderBuilder::try_new(file)
        .with_context(|| format!("{}: not a readable Parquet file", path.display()))
}

/// The columns pass 1 reads: the text, the id (if the shard has it) and the keep policy's.
struct Columns {
    text: String,
    id: String,
    rank: Option<String>,
}

impl Columns {
    fn of(opts: &ReadOptions) -> Self {
        Columns {
            text: opts.fields.text.clone().unwrap_or_else(|| "text".into()),
            id: opts.fields.id.clone(),
            rank: opts.keep.field().map(str::to_owned),
        }
    }

    /// A reader of these columns of `path`'s shard; errors name a missing column.
    fn reader(&self, path: &Path) -> Result<ParquetRecordBatchReader> {
        let builder = open(path)?;
        let schema = builder.schema().clone();
        let index = |name: &str, what: &str| {
            schema.index_of(name).map_err(|_| {
                let names: Vec<&str> = schema.fields().iter().map(|f| f.name().as_str()).collect();
                anyhow::anyhow!(
                    "{}: no column {name:?} ({what}); its columns: {}",
                    path.display(),
                    names.join(", ")
                )
            })
        };
        let mut wanted = vec![index(&self.text, "the text: name it with --text-field")?];
        wanted.extend(schema.index_of(&self.id).ok());
        if let Some(rank) = &self.rank {
            wanted.push(index(rank, "the --keep field")?);
        }
        let mask = ProjectionMask::roots(builder.parquet_schema(), wanted);
        builder
            .with_projection(mask)
            .with_batch_size(BATCH_ROWS)
            .build()
            .with_context(|| format!("cannot read {}", path.display()))
    }
}

/// Pass 1 over Parquet shards: every row fingerprinted (a batch at a time, in parallel)
/// and pushed into `sink` in order, its item number its position among all rows. A row
/// whose text is null fails (reported and counted). Also the shards' [`Stamp`]s.
pub(super) fn read_records(
    shards: &[PathBuf],
    opts: &ReadOptions,
    bar: &ProgressBar,
    sink: &mut impl Sink,
) -> Result<(Counts, Vec<Stamp>)> {
    let f = Fingerprinter::new();
    let cols = Columns::of(opts);
    let (mut counts, mut stamps) = (Counts::default(), Vec::new());
    let mut rows = 0;
    for path in shards {
        rows += open(path)?.metadata().file_metadata().num_rows();
    }
    sink.reserve(usize::try_from(rows).unwrap_or(0));
    for path in shards {
        stamps.push(stamp(path)?);
        let name: Arc<str> = path.to_string_lossy().into();
        let mut row = 0u64;
        for batch in cols.reader(path)? {
            let batch = batch.with_context(|| format!("cannot read {}", path.display()))?;
            let rows = batch_rows(&batch, &cols, &name, row).context(name.clone())?;
            row += batch.num_rows() as u64;
            push_rows(rows, opts, &f, (&mut counts, bar), sink);
        }
        bar.inc(fs::metadata(path).map(|m| m.len()).unwrap_or(0));
    }
    Ok((counts, stamps))
}

/// One row of pass 1: where it is, its record (or why it has none), its rank.
type Row = (Place, Result<Record, String>, Rank);

/// The rows of a batch whose first row is row `first` (from 0) of shard `name`.
fn batch_rows(
    batch: &RecordBatch,
    cols: &Columns,
    name: &Arc<str>,
    first: u64,
) -> Result<Vec<Row>> {
    let texts = texts(batch, &cols.text)?;
    let ids = strings(batch, &cols.id)?;
    let ranks = match &cols.rank {
        Some(field) => Some(ranks(
            batch.column_by_name(field).context("the --keep column")?,
        )?),
        None => None,
    };
    Ok((0..batch.num_rows())
        .map(|i| {
            let n = first + i as u64 + 1;
            let place = Place {
                name: name.clone(),
                at: At::Line(n),
                rest: false,
            };
            let id = ids
                .as_ref()
                .and_then(|a| a.is_valid(i).then(|| a.value(i).to_owned()));
            let record = match texts.is_valid(i) {
                true => Ok(text_record(
                    id.unwrap_or_else(|| n.to_string()),
                    texts.value(i),
                )),
                false => Err(format!("row {n}: the text column {:?} is null", cols.text)),
            };
            let rank = ranks.as_ref().map_or(Rank::Unranked, |r| r[i].clone());
            (place, record, rank)
        })
        .collect())
}

/// Fingerprints `rows` in parallel and pushes them into `sink` in order.
fn push_rows(
    rows: Vec<Row>,
    opts: &ReadOptions,
    f: &Fingerprinter,
    (counts, bar): (&mut Counts, &ProgressBar),
    sink: &mut impl Sink,
) {
    let first = counts.items;
    counts.items += rows.len() as u64;
    let read: Vec<_> = rows
        .into_par_iter()
        .map(|(place, record, rank)| {
            let r = record.and_then(|r| records::read_of(r, rank, &place, opts, f));
            (place, r)
        })
        .collect();
    for (i, (place, r)) in read.into_iter().enumerate() {
        match r {
            Ok(r) => {
                counts.records += 1;
                sink.push(records::Read {
                    item: first + i as u64,
                    ..r
                });
            }
            Err(e) => {
                counts.failed += 1;
                bar.suspend(|| eprintln!("error: {}: {e}; row skipped", place.name));
            }
        }
    }
}

/// Where pass 2 writes: `--output` a `.parquet` file (one shard), or a directory of shards
/// `part-00000.parquet`, ... of at most `shard_rows` rows.
pub(super) struct Shards {
    /// The final path, and the directory the shards are written to before it is renamed.
    target: PathBuf,
    partial: PathBuf,
    single: bool,
    schema: SchemaRef,
    props: WriterProperties,
    shard_rows: usize,
    writer: Option<ArrowWriter<File>>,
    rows_in_shard: usize,
    shards: usize,
}

impl Shards {
    /// Checks that `output` can be written (a new or empty directory, or a `.parquet` file
    /// in an existing directory), before anything is read.
    pub(super) fn check(output: &Path) -> Result<()> {
        if is_parquet(output) {
            // Written beside and renamed over: only a new or regular file may be there.
            if fs::metadata(output).is_ok_and(|m| !m.is_file()) {
                bail!(
                    "--output {}: not a regular file; Parquet output goes to a new or regular \
                     FILE.parquet, or a directory of shards",
                    output.display()
                );
            }
            return crate::cli::outfile::OutFile::check(output);
        }
        match fs::read_dir(output).map(|mut d| d.next().is_none()) {
            Ok(true) => Ok(()),
            Ok(false) => bail!(
                "--output {}: the directory is not empty; give a new (or empty) directory for \
                 the Parquet shards, or a FILE.parquet",
                output.display()
            ),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                let parent = output.parent().filter(|p| !p.as_os_str().is_empty());
                match parent.is_none_or(Path::is_dir) {
                    true => Ok(()),
                    false => bail!(
                        "--output {}: its directory does not exist",
                        output.display()
                    ),
                }
            }
            Err(_) => bail!(
                "--output {}: not a directory; give a new directory for the Parquet shards, or \
                 a FILE.parquet",
                output.display()
            ),
        }
    }
}

impl Shards {
    /// Starts writing kept rows of `schema` to `output` (see [`Shards::check`]), compressed
    /// by `compression`.
    pub(super) fn create(
        output: &Path,
        schema: SchemaRef,
        compression: Compression,
        shard_rows: usize,
    ) -> Result<Self> {
        let name = output
            .file_name()
            .map(|n| n.to_string_lossy())
            .unwrap_or_default();
        let partial =
            output.with_file_name(format!(".{name}.simstore-partial-{}", std::process::id()));
        let single = is_parquet(output);
        if !single {
            fs::create_dir(&partial)
                .with_context(|| format!("cannot create {}", partial.display()))?;
        }
        Ok(Shards {
            target: output.to_owned(),
            partial,
            single,
            schema,
            props: WriterProperties::builder()
                .set_compression(compression)
                .build(),
            shard_rows: shard_rows.max(1),
            writer: None,
            rows_in_shard: 0,
            shards: 0,
        })
    }

    /// Writes the rows of `batch` (of the output's schema).
    pub(super) fn push(&mut self, batch: &RecordBatch) -> Result<()> {
        let mut at = 0;
        while at < batch.num_rows() {
            if self.writer.is_none() || (!self.single && self.rows_in_shard >= self.shard_rows) {
                self.next_shard()?;
            }
            let room = match self.single {
                true => batch.num_rows() - at,
                false => (self.shard_rows - self.rows_in_shard).min(batch.num_rows() - at),
            };
            let w = self.writer.as_mut().expect("a shard is open");
            w.write(&batch.slice(at, room))
                .context("cannot write the output")?;
            if w.in_progress_size() >= ROW_GROUP_BYTES {
                w.flush().context("cannot write the output")?;
            }
            self.rows_in_shard += room;
            at += room;
        }
        Ok(())
    }

    /// Closes the open shard (if any) and opens the next.
    fn next_shard(&mut self) -> Result<()> {
        self.close_shard()?;
        let path = match self.single {
            true => self.partial.clone(),
            false => self
                .partial
                .join(format!("part-{:05}.parquet", self.shards)),
        };
        let file =
            File::create(&path).with_context(|| format!("cannot create {}", path.display()))?;
        let w = ArrowWriter::try_new(file, self.schema.clone(), Some(self.props.clone()))
            .context("cannot start a Parquet shard")?;
        self.writer = Some(w);
        self.rows_in_shard = 0;
        self.shards += 1;
        Ok(())
    }

    fn close_shard(&mut self) -> Result<()> {
        if let Some(w) = self.writer.take() {
            let file = w.into_inner().context("cannot finish a Parquet shard")?;
            file.sync_all().context("cannot sync the output")?;
        }
        Ok(())
    }

    /// Ends the output: the last shard closed (an empty output still gets one shard, so
    /// its schema is kept), then put in place; returns the number of shards.
    pub(super) fn finish(mut self) -> Result<usize> {
        if self.writer.is_none() {
            self.next_shard()?;
        }
        self.close_shard()?;
        if !self.single && self.target.is_dir() {
            fs::remove_dir(&self.target)
                .with_context(|| format!("cannot replace {}", self.target.display()))?;
        }
        fs::rename(&self.partial, &self.target)
            .with_context(|| format!("cannot write {}", self.target.display()))?;
        self.partial = PathBuf::new();
        Ok(self.shards)
    }
}

impl Drop for Shards {
    /// A run that failed leaves no partial output.
    fn drop(&mut self) {
        if self.partial.as_os_str().is_empty() {
            return;
        }
        let _ = match self.single {
            true => fs::remove_file(&self.partial),
            false => fs::remove_dir_all(&self.partial),
        };
    }
}

/// Pass 2 over Parquet shards: reads every column again and writes the rows numbered
/// `kept` (increasing) to `output`; returns how many rows and shards. A shard whose size,
/// modification time or row count changed since pass 1 ([`Stamp`]), or whose schema
/// differs from the first shard's, fails the run and nothing is written.
pub(super) fn copy_kept(
    shards: &[PathBuf],
    stamps: &[Stamp],
    kept: &[u64],
    target: &Target,
    bar: &ProgressBar,
) -> Result<(u64, usize)> {
    let first = open(&shards[0])?;
    let schema = first.schema().clone();
    let mut out = KeptOut::for_rows(target, schema.clone(), input_compression(&first))?;
    drop(first);
    let (mut item, mut next, mut written) = (0u64, 0usize, 0u64);
    for (path, then) in shards.iter().zip(stamps) {
        if stamp(path)? != *then {
            bail!(
                "{} changed between the two passes of dedup --output: nothing written; leave \
                 the input unchanged while dedup runs, then run it again",
                path.display()
            );
        }
        let builder = open(path)?;
        if builder.schema().fields() != schema.fields() {
            bail!(
                "{}: its columns differ from {}'s: the kept rows are written with one schema; \
                 dedup shards of one schema together",
                path.display(),
                shards[0].display()
            );
        }
        let reader = builder.with_batch_size(BATCH_ROWS).build()?;
        for batch in reader {
            let batch = batch.with_context(|| format!("cannot read {}", path.display()))?;
            let n = batch.num_rows() as u64;
            let mask: BooleanArray = (item..item + n)
                .map(|i| {
                    let keep = kept.get(next) == Some(&i);
                    next += usize::from(keep);
                    Some(keep)
                })
                .collect();
            let rows = arrow_select::filter::filter_record_batch(&batch, &mask)?;
            written += rows.num_rows() as u64;
            out.push_rows(&rows)?;
            item += n;
        }
        bar.inc(fs::metadata(path).map(|m| m.len()).unwrap_or(0));
    }
    if next != kept.len() {
        bail!("the input changed between the two passes of dedup --output: nothing written");
    }
    let shards = out.finish(target.path)?;
    Ok((written, shards))
}

/// The compression of the first column chunk of a shard (uncompressed when it has none).
fn input_compression(shard: &ParquetRecordBatchReaderBuilder<File>) -> Compression {
    let meta = shard.metadata();
    match meta.num_row_groups() {
        0 => Compression::UNCOMPRESSED,
        _ => meta.row_group(0).column(0).compression(),
    }
}

/// Parses `--compression`: uncompressed, snappy, gzip, lz4_raw, zstd (Parquet's own
/// names; gzip and zstd at their default levels unless given, as `zstd(9)`).
pub(super) fn parse_compression(s: &str) -> Result<Compression, String> {
    let levels = [("gzip", "gzip(6)"), ("zstd", "zstd(3)")];
    let s = levels
        .iter()
        .find(|l| s.eq_ignore_ascii_case(l.0))
        .map_or(s, |l| l.1);
    let hint = "use uncompressed, snappy, gzip, lz4_raw or zstd (gzip(N), zstd(N) for a level)";
    s.parse::<Compression>().map_err(|e| format!("{e}: {hint}"))
}

/// A record of a row: its id and text, no title.
fn text_record(id: String, text: &str) -> Record {
    Record {
        id,
        title: None,
        text: Some(text.to_owned()),
        url: None,
        fp: None,
        restore: None,
    }
}

/// Reads the shards' text column again and calls `on(item, record)` (a record of that
/// text, no title) with each of the rows numbered `items` (increasing) whose text is not
/// null, until `on` returns false or no item is left.
pub(super) fn each_record(
    shards: &[PathBuf],
    opts: &ReadOptions,
    items: &[u64],
    mut on: impl FnMut(u64, Record) -> bool,
) -> Result<()> {
    // The text column alone (no id, no --keep column).
    let cols = Columns {
        rank: None,
        id: String::new(),
        ..Columns::of(opts)
    };
    let (mut item, mut wanted) = (0u64, items.iter().peekable());
    for path in shards {
        let Some(&&next) = wanted.peek() else {
            return Ok(());
        };
        // A shard without a wanted row is skipped by its footer's row count.
        let rows = open(path)?.metadata().file_metadata().num_rows() as u64;
        if next >= item + rows {
            item += rows;
            continue;
        }
        for batch in cols.reader(path)? {
            let batch = batch.with_context(|| format!("cannot read {}", path.display()))?;
            let col = texts(&batch, &cols.text)?;
            for i in 0..batch.num_rows() {
                if wanted.next_if_eq(&&item).is_some()
                    && col.is_valid(i)
                    && !on(item, text_record(item.to_string(), col.value(i)))
                {
                    return Ok(());
                }
                item += 1;
            }
            if wanted.peek().is_none() {
                return Ok(());
            }
        }
    }
    Ok(())
}
