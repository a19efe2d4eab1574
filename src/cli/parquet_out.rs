//! Typed rows written to one Parquet file (`export --format parquet`, `dedup --clusters
//! ROWS.parquet`): the caller appends each row to its column builders and says so; a
//! record batch is written every [`BATCH_ROWS`] rows, Snappy-compressed.

use std::io::Write;

use anyhow::Result;
use arrow_array::{ArrayRef, RecordBatch};
use arrow_schema::{DataType, Field, Schema, SchemaRef};
use parquet::arrow::ArrowWriter;
use parquet::basic::Compression;
use parquet::file::properties::WriterProperties;

/// Rows gathered before they are written as one record batch.
pub const BATCH_ROWS: usize = 64 * 1024;

/// A schema of `(name, type, nullable)` columns.
pub fn schema(columns: &[(&str, DataType, bool)]) -> SchemaRef {
    let fields: Vec<Field> = columns
        .iter()
        .map(|(name, ty, nullable)| Field::new(*name, ty.clone(), *nullable))
        .collect();
    std::sync::Arc::new(Schema::new(fields))
}

/// The Parquet file being written, and how many rows wait in the caller's builders.
pub struct ParquetOut<W: Write + Send> {
    writer: ArrowWriter<W>,
    schema: SchemaRef,
    rows: usize,
}

impl<W: Write + Send> ParquetOut<W> {
    /// A file of `schema` written to `out`.
    pub fn new(out: W, schema: SchemaRef) -> Result<Self> {
        let props = WriterProperties::builder()
            .set_compression(Compression::SNAPPY)
            .build();
        Ok(ParquetOut {
            writer: ArrowWriter::try_new(out, schema.clone(), Some(props))?,
            schema,
            rows: 0,
        })
    }

    /// Counts a row the caller appended; true when a batch is due ([`ParquetOut::write`]).
    pub fn row(&mut self) -> bool {
        self.rows += 1;
        self.rows >= BATCH_ROWS
    }

    /// Writes the rows gathered, as the builders' `columns` (in the schema's order).
    pub fn write(&mut self, columns: Vec<ArrayRef>) -> Result<()> {
        let batch = RecordBatch::try_new(self.schema.clone(), columns)?;
        self.rows = 0;
        Ok(self.writer.write(&batch)?)
    }

    /// Writes the last rows (`columns`, when there are any) and the footer; returns the
    /// output.
    pub fn finish(mut self, columns: Vec<ArrayRef>) -> Result<W> {
        if self.rows > 0 {
            self.write(columns)?;
        }
        Ok(self.writer.into_inner()?)
    }
}
