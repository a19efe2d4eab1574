//! Parquet files as records: each row of every row group, read a record batch at a time, is
//! a JSON object of its columns — what a JSONL line of the same fields holds — so that every
//! reader of records (`import`, `query --batch`, `fingerprint --batch`, `dedup`) takes a
//! Parquet file as it takes JSONL, with the same `--text-field`/`--id-field` mapping.
//!
//! Strings stay strings, integers, floats and booleans numbers and booleans; binary values
//! are read as UTF-8 text (bad bytes replaced), but for a binary `sketch` column (what
//! `export --format parquet` writes), read as the hex digits a JSONL export holds; a
//! column of another type (a timestamp, a date, a decimal) reads as its text
//! (`arrow_cast`); a null is left out; a column that has no text form (a list, a struct)
//! is left out too.

use std::fs::File;
use std::path::Path;
use std::sync::Arc;

use anyhow::{Context, Result};
use arrow_array::cast::AsArray;
use arrow_array::types::{Float64Type, Int64Type, UInt64Type};
use arrow_array::{Array, ArrayRef, RecordBatch};
use arrow_schema::DataType;
use indicatif::ProgressBar;
use parquet::arrow::arrow_reader::{ParquetRecordBatchReader, ParquetRecordBatchReaderBuilder};
use serde_json::{Map, Value};

/// Rows decoded at a time.
const BATCH_ROWS: usize = 4096;

/// Whether `path` is read as Parquet: `--format parquet`, or a `.parquet` name given auto.
pub(super) fn is_parquet(format: super::Format, path: &str) -> bool {
    match format {
        super::Format::Parquet => true,
        super::Format::Auto => path.to_ascii_lowercase().ends_with(".parquet"),
        _ => false,
    }
}

/// The rows of one Parquet file, as JSON lines.
pub(super) struct Rows {
    reader: ParquetRecordBatchReader,
    /// The current batch's rows, as JSON lines, last first.
    lines: Vec<Vec<u8>>,
    /// Rows returned.
    row: u64,
    /// The file's bytes a row, for the progress bar.
    bytes_per_row: u64,
    bar: Option<ProgressBar>,
}

impl Rows {
    /// Opens `path` (its footer read: the schema and row groups).
    pub(super) fn open(path: &str, bar: Option<ProgressBar>) -> Result<Self> {
        if path == "-" {
            anyhow::bail!(
                "Parquet cannot be read from stdin (its index is at its end): give the file"
            );
        }
        let file = File::open(Path::new(path)).context("cannot open it")?;
        let size = file.metadata().map(|m| m.len()).unwrap_or(0);
        let builder = ParquetRecordBatchReaderBuilder::try_new(file)
            .context("not a readable Parquet file")?;
        let rows = builder.metadata().file_metadata().num_rows().max(1) as u64;
        let reader = builder
            .with_batch_size(BATCH_ROWS)
            .build()
            .context("cannot read its row groups")?;
        Ok(Rows {
            reader,
            lines: Vec::new(),
            row: 0,
            bytes_per_row: size / rows,
            bar,
        })
    }

    /// The number (from 1) and JSON line of the next row; `None` at the end.
    pub(super) fn next_row(&mut self) -> Result<Option<(u64, Vec<u8>)>> {
        while self.lines.is_empty() {
            let Some(batch) = self.reader.next() else {
                return Ok(None);
            };
            let batch =
                batch.with_context(|| format!("cannot read the rows after row {}", self.row))?;
            if let Some(bar) = &self.bar {
                bar.inc(batch.num_rows() as u64 * self.bytes_per_row);
            }
            self.lines = json_lines(&batch);
            self.lines.reverse();
        }
        self.row += 1;
        Ok(self.lines.pop().map(|line| (self.row, line)))
    }

    /// The rows returned so far.
    pub(super) fn rows(&self) -> u64 {
        self.row
    }
}

/// A column as JSON values take it.
enum Column {
    Text(ArrayRef),
    Signed(ArrayRef),
    Unsigned(ArrayRef),
    Float(ArrayRef),
    Bool(ArrayRef),
    /// Binary values as hex digits.
    Hex(ArrayRef),
}

impl Column {
    /// `array` cast to the type its JSON values come from; `None` when it has no text form.
    fn of(name: &str, array: &ArrayRef) -> Option<Self> {
        let cast = |to: &DataType| arrow_cast::cast(array, to).ok();
        Some(match array.data_type() {
            DataType::Binary | DataType::LargeBinary | DataType::BinaryView if name == "sketch" => {
                Column::Hex(cast(&DataType::LargeBinary)?)
            }
            DataType::Boolean => Column::Bool(array.clone()),
            DataType::Int8 | DataType::Int16 | DataType::Int32 | DataType::Int64 => {
                Column::Signed(cast(&DataType::Int64)?)
            }
            DataType::UInt8 | DataType::UInt16 | DataType::UInt32 | DataType::UInt64 => {
                Column::Unsigned(cast(&DataType::UInt64)?)
            }
            DataType::Float16 | DataType::Float32 | DataType::Float64 => {
                Column::Float(cast(&DataType::Float64)?)
            }
            DataType::Binary | DataType::LargeBinary | DataType::BinaryView => {
                Column::Text(Arc::new(lossy_text(array).ok()?))
            }
            _ => Column::Text(cast(&DataType::Utf8)?),
        })
    }

    /// Row `i`'s value (`None`: null).
    fn value(&self, i: usize) -> Option<Value> {
        let array = match self {
            Column::Text(a) | Column::Signed(a) | Column::Unsigned(a) => a,
            Column::Float(a) | Column::Bool(a) | Column::Hex(a) => a,
        };
        if array.is_null(i) {
            return None;
        }
        Some(match self {
            Column::Text(a) => Value::from(a.as_string::<i32>().value(i)),
            Column::Signed(a) => Value::from(a.as_primitive::<Int64Type>().value(i)),
            Column::Unsigned(a) => Value::from(a.as_primitive::<UInt64Type>().value(i)),
            Column::Float(a) => Value::from(a.as_primitive::<Float64Type>().value(i)),
            Column::Bool(a) => Value::from(a.as_boolean().value(i)),
            Column::Hex(a) => Value::from(crate::cli::output::hex(a.as_binary::<i64>().value(i))),
        })
    }
}

/// A binary column's values as text, bytes that are not UTF-8 replaced by U+FFFD (a cast
/// would make such a value null, and its record would be lost for one bad byte).
pub fn lossy_text(col: &ArrayRef) -> Result<arrow_array::StringArray> {
    let bytes = arrow_cast::cast(col, &DataType::LargeBinary).context("a binary column")?;
    let bytes = bytes
        .as_any()
        .downcast_ref::<arrow_array::LargeBinaryArray>()
        .context("a binary column")?;
    Ok(bytes
        .iter()
        .map(|v| v.map(String::from_utf8_lossy))
        .collect())
}

/// Each row of `batch` as a JSON object of its columns (see the module documentation).
fn json_lines(batch: &RecordBatch) -> Vec<Vec<u8>> {
    let schema = batch.schema();
    let columns: Vec<(Arc<str>, Column)> = schema
        .fields()
        .iter()
        .zip(batch.columns())
        .filter_map(|(f, a)| Some((Arc::from(f.name().as_str()), Column::of(f.name(), a)?)))
        .collect();
    (0..batch.num_rows())
        .map(|i| {
            let object: Map<String, Value> = columns
                .iter()
                .filter_map(|(name, c)| Some((name.to_string(), c.value(i)?)))
                .collect();
            serde_json::to_vec(&object).expect("a JSON map serializes")
        })
        .collect()
}
