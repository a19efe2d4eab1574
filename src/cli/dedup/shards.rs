//! Parquet shards read by `dedup`: pass 1 reads only the text column (and the id and
//! keep-policy columns) of one record batch at a time, decoding the next batch while the
//! last is fingerprinted; pass 2 reads every column again and hands the kept rows,
//! unchanged, to the output ([`super::kept`]: shards with the inputs' schema and
//! compression, or JSON lines).

use std::fs::{self, File};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use anyhow::{Context, Result, bail};
use arrow_array::{Array, BooleanArray, RecordBatch, StringArray};
use arrow_schema::SchemaRef;
use indicatif::ProgressBar;
use parquet::arrow::ProjectionMask;
use parquet::arrow::arrow_reader::{ParquetRecordBatchReader, ParquetRecordBatchReaderBuilder};
use parquet::basic::Compression;
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

/// Rows of every column read at a time in pass 2 (one batch is read while the last is
/// written).
const WRITE_ROWS: usize = 1024;

/// The Parquet files among `files`: `None` when none is one; a `.parquet` name, any file
/// with `--format parquet`, and every `.parquet` file under a directory, sorted by path;
/// an error when Parquet and other inputs are mixed.
pub(super) fn inputs(files: &[String], format: super::Format) -> Result<Option<Vec<PathBuf>>> {
    let mut shards = Vec::new();
    let mut other = None;
    for f in files {
        let path = Path::new(f);
        if path.is_dir() {
            let found =
                parquet_under(path).with_context(|| format!("cannot read the directory {f}"))?;
            if found.is_empty() {
                other.get_or_insert(f);
            }
            shards.extend(found);
        } else if is_parquet(path) || format == super::Format::Parquet {
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

/// The Parquet files under the directory `dir`, subdirectories too (a Hive layout,
/// `year=2024/part-0.parquet`), sorted by path.
fn parquet_under(dir: &Path) -> Result<Vec<PathBuf>> {
    let mut found = Vec::new();
    for entry in fs::read_dir(dir)? {
        let entry = entry?;
        let path = entry.path();
        // A link to a directory is not followed (it could lead back up).
        if entry.file_type()?.is_dir() {
            found.extend(parquet_under(&path)?);
        } else if is_parquet(&path) {
            found.push(path);
        }
    }
    found.sort();
    Ok(found)
}

/// Whether `path` names a Parquet file.
pub(super) fn is_parquet(path: &Path) -> bool {
    path.extension()
        .is_some_and(|e| e.eq_ignore_ascii_case("parquet"))
}

/// What pass 2 checks a shard against: the file as pass 1 found it ([`FileId`]).
///
/// [`FileId`]: crate::cli::input::FileId
pub(super) type Stamp = crate::cli::input::FileId;

/// What `path` is now: identity, size, modification and status change times.
pub(super) fn stamp(path: &Path) -> Result<Stamp> {
    Stamp::of_path(path).with_context(|| format!("cannot read {}", path.display()))
}

/// Opens a shard for reading.
fn open(path: &Path) -> Result<ParquetRecordBatchReaderBuilder<File>> {
    if fs::metadata(path).is_ok_and(|m| !m.is_file()) {
        bail!(
            "{}: not a regular file; Parquet is read from a file (its footer is at its end): \
             copy it to a file first",
            path.display()
        );
    }
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
    let mut counts = Counts::default();
    let mut rows = 0;
    for path in shards {
        rows += open(path)?.metadata().file_metadata().num_rows();
    }
    sink.reserve(usize::try_from(rows).unwrap_or(0));
    let stamps = records::overlapped(
        |send| {
            let mut stamps = Vec::new();
            for path in shards {
                stamps.push(stamp(path)?);
                let name: Arc<str> = path.to_string_lossy().into();
                let mut row = 0u64;
                for batch in cols.reader(path)? {
                    let batch = batch.with_context(|| format!("cannot read {}", path.display()))?;
                    let rows = batch_rows(&batch, &cols, &name, row).context(name.clone())?;
                    row += batch.num_rows() as u64;
                    if !send(rows) {
                        return Ok(stamps);
                    }
                }
                bar.inc(fs::metadata(path).map(|m| m.len()).unwrap_or(0));
            }
            Ok(stamps)
        },
        |rows| {
            push_rows(rows, opts, &f, (&mut counts, bar), sink);
            Ok(())
        },
    )?;
    Ok((counts, stamps))
}

/// One row of pass 1: where it is, its record (or why it has none), its rank.
type Row = (Place, Result<Record, String>, Rank);

/// The columns pass 1 reads of a batch whose first row is row `first` (from 0) of shard
/// `name`; each row's record is made where it is fingerprinted ([`Rows::row`]).
struct Rows {
    texts: StringArray,
    ids: Option<StringArray>,
    ranks: Option<Vec<Rank>>,
    name: Arc<str>,
    first: u64,
    field: Arc<str>,
}

impl Rows {
    fn len(&self) -> usize {
        self.texts.len()
    }

    /// Row `i`: its place, its record (id: the id column's, else its row number), its rank.
    fn row(&self, i: usize) -> Row {
        let n = self.first + i as u64 + 1;
        let place = Place {
            name: self.name.clone(),
            at: At::Line(n),
            rest: false,
        };
        let id = self
            .ids
            .as_ref()
            .and_then(|a| a.is_valid(i).then(|| a.value(i).to_owned()));
        let record = match self.texts.is_valid(i) {
            true => Ok(Record::of_text(
                id.unwrap_or_else(|| n.to_string()),
                self.texts.value(i),
            )),
            false => Err(format!("row {n}: the text column {:?} is null", self.field)),
        };
        let rank = self.ranks.as_ref().map_or(Rank::Unranked, |r| r[i].clone());
        (place, record, rank)
    }
}

/// The rows of a batch whose first row is row `first` (from 0) of shard `name`.
fn batch_rows(batch: &RecordBatch, cols: &Columns, name: &Arc<str>, first: u64) -> Result<Rows> {
    let ranks = match &cols.rank {
        Some(field) => Some(ranks(
            batch.column_by_name(field).context("the --keep column")?,
        )?),
        None => None,
    };
    Ok(Rows {
        texts: texts(batch, &cols.text)?,
        ids: strings(batch, &cols.id)?,
        ranks,
        name: name.clone(),
        first,
        field: cols.text.as_str().into(),
    })
}

/// Fingerprints `rows` in parallel and pushes them into `sink` in order.
fn push_rows(
    rows: Rows,
    opts: &ReadOptions,
    f: &Fingerprinter,
    (counts, bar): (&mut Counts, &ProgressBar),
    sink: &mut impl Sink,
) {
    let first = counts.items;
    counts.items += rows.len() as u64;
    let read: Vec<_> = (0..rows.len())
        .into_par_iter()
        .map(|i| {
            let (place, record, rank) = rows.row(i);
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
            Err(message) => {
                let e = records::Skip {
                    message,
                    record: true,
                };
                let at = (first + i as u64, &*place.name);
                bar.suspend(|| counts.failed_at(at, &e, opts.jsonl_only, "row"));
            }
        }
    }
}

/// Pass 2 over Parquet shards: reads every column again and writes the rows numbered
/// `kept` (increasing) to `output`; returns how many rows and shards. A shard that is not
/// the file pass 1 read ([`Stamp`]: size, modification or status change time), or whose
/// rows or schema differ from pass 1's, fails the run and nothing is written.
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
    let mut written = 0u64;
    let read = |send: &dyn Fn(RecordBatch) -> bool| {
        let (mut item, mut next) = (0u64, 0usize);
        for (path, then) in shards.iter().zip(stamps) {
            // Parquet shards hold one schema; JSON lines take each row's own columns.
            let one = target.parquet.then_some((&schema, shards[0].as_path()));
            let reader = reopen(path, then, one)?;
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
                if !send(arrow_select::filter::filter_record_batch(&batch, &mask)?) {
                    return Ok(next);
                }
                item += n;
            }
            bar.inc(fs::metadata(path).map(|m| m.len()).unwrap_or(0));
        }
        Ok(next)
    };
    let next = records::overlapped(read, |rows| {
        written += rows.num_rows() as u64;
        out.push_rows(&rows)
    })?;
    if next != kept.len() {
        bail!("the input changed between the two passes of dedup --output: nothing written");
    }
    let shards = out.finish(target.path)?;
    Ok((written, shards))
}

/// Pass 2's reader of every column of `path`, once it is checked unchanged since pass 1
/// (`then`) and, given `one`, of the schema of the first shard (its path).
fn reopen(
    path: &Path,
    then: &Stamp,
    one: Option<(&SchemaRef, &Path)>,
) -> Result<ParquetRecordBatchReader> {
    if stamp(path)? != *then {
        bail!(
            "{} changed between the two passes of dedup --output: nothing written; leave the \
             input unchanged while dedup runs, then run it again",
            path.display()
        );
    }
    let builder = open(path)?;
    if one.is_none()
        && let Some(name) = repeated_name(builder.schema())
    {
        bail!(
            "{}: two columns are named {name:?}, and a JSON line holds one value per name; \
             write Parquet (--output KEPT/ or KEPT.parquet), or rename a column",
            path.display()
        );
    }
    if let Some((schema, first)) = one
        && builder.schema().fields() != schema.fields()
    {
        bail!(
            "{}: its columns differ from {}'s: the kept rows are written with one schema; \
             dedup shards of one schema together",
            path.display(),
            first.display()
        );
    }
    Ok(builder.with_batch_size(WRITE_ROWS).build()?)
}

/// A column name `schema` holds twice, if any.
fn repeated_name(schema: &SchemaRef) -> Option<&str> {
    let mut seen = std::collections::HashSet::new();
    let names = schema.fields().iter().map(|f| f.name().as_str());
    names.into_iter().find(|n| !seen.insert(*n))
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
                    && !on(item, Record::of_text(item.to_string(), col.value(i)))
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
