//! Where `--clusters` rows go: JSON lines (gzip'd when the name ends in `.gz`), or one
//! Parquet file, a typed column per field, when it ends in `.parquet`.

use std::path::Path;
use std::sync::Arc;

use anyhow::Result;
use arrow_array::builder::{BooleanBuilder, Float64Builder, StringBuilder, UInt64Builder};
use arrow_array::{ArrayRef, RecordBatch};
use arrow_schema::{DataType, Field, Schema, SchemaRef};
use parquet::arrow::ArrowWriter;
use parquet::basic::Compression;
use parquet::file::properties::WriterProperties;
use serde_json::Value;

use super::dataset::KeptWriter;
use crate::cli::outfile::OutFile;

/// Rows gathered before they are written as one record batch.
const BATCH_ROWS: usize = 64 * 1024;

/// The sink of provenance rows.
pub(super) enum Rows {
    /// One JSON object per line.
    Json(KeptWriter),
    /// Parquet columns.
    Parquet(Box<ParquetRows>),
}

impl Rows {
    /// Rows to `path`: Parquet when its name ends in `.parquet`, else JSON lines.
    pub(super) fn create(path: &Path) -> Result<Self> {
        match path.extension().is_some_and(|e| e == "parquet") {
            true => Ok(Rows::Parquet(Box::new(ParquetRows::create(path)?))),
            false => Ok(Rows::Json(KeptWriter::create(path)?)),
        }
    }

    /// Adds a row: {"cluster", "id", "file", "line", "representative", "kept", "distance",
    /// "similarity"?, "stored"?}.
    pub(super) fn push(&mut self, row: &Value) -> Result<()> {
        match self {
            Rows::Json(w) => w.push(row.to_string().as_bytes()),
            Rows::Parquet(w) => w.push(row),
        }
    }

    /// Writes what is gathered and puts the file in place.
    pub(super) fn finish(self) -> Result<()> {
        match self {
            Rows::Json(w) => w.finish(),
            Rows::Parquet(w) => w.finish(),
        }
    }
}

/// The columns of a Parquet file of rows: those of the JSON lines, typed (absent: null).
fn schema() -> SchemaRef {
    let field = |name, ty, nullable| Field::new(name, ty, nullable);
    Arc::new(Schema::new(vec![
        field("cluster", DataType::UInt64, false),
        field("id", DataType::Utf8, false),
        field("file", DataType::Utf8, true),
        field("line", DataType::UInt64, true),
        field("representative", DataType::Utf8, false),
        field("kept", DataType::Boolean, false),
        field("distance", DataType::UInt64, false),
        field("similarity", DataType::Float64, true),
        field("stored", DataType::Boolean, true),
    ]))
}

/// Rows written as Parquet, Snappy-compressed.
pub(super) struct ParquetRows {
    writer: ArrowWriter<OutFile>,
    cluster: UInt64Builder,
    id: StringBuilder,
    file: StringBuilder,
    line: UInt64Builder,
    representative: StringBuilder,
    kept: BooleanBuilder,
    distance: UInt64Builder,
    similarity: Float64Builder,
    stored: BooleanBuilder,
    rows: usize,
}

impl ParquetRows {
    fn create(path: &Path) -> Result<Self> {
        let props = WriterProperties::builder()
            .set_compression(Compression::SNAPPY)
            .build();
        Ok(ParquetRows {
            writer: ArrowWriter::try_new(OutFile::create(path)?, schema(), Some(props))?,
            cluster: UInt64Builder::new(),
            id: StringBuilder::new(),
            file: StringBuilder::new(),
            line: UInt64Builder::new(),
            representative: StringBuilder::new(),
            kept: BooleanBuilder::new(),
            distance: UInt64Builder::new(),
            similarity: Float64Builder::new(),
            stored: BooleanBuilder::new(),
            rows: 0,
        })
    }

    fn push(&mut self, row: &Value) -> Result<()> {
        let text = |name: &str| row[name].as_str().unwrap_or_default().to_owned();
        self.cluster
            .append_value(row["cluster"].as_u64().unwrap_or_default());
        self.id.append_value(text("id"));
        self.file.append_option(row["file"].as_str());
        self.line.append_option(row["line"].as_u64());
        self.representative.append_value(text("representative"));
        self.kept
            .append_value(row["kept"].as_bool().unwrap_or_default());
        self.distance
            .append_value(row["distance"].as_u64().unwrap_or_default());
        self.similarity.append_option(row["similarity"].as_f64());
        self.stored.append_option(row["stored"].as_bool());
        self.rows += 1;
        if self.rows == BATCH_ROWS {
            self.flush()?;
        }
        Ok(())
    }

    fn flush(&mut self) -> Result<()> {
        let columns: Vec<ArrayRef> = vec![
            Arc::new(self.cluster.finish()),
            Arc::new(self.id.finish()),
            Arc::new(self.file.finish()),
            Arc::new(self.line.finish()),
            Arc::new(self.representative.finish()),
            Arc::new(self.kept.finish()),
            Arc::new(self.distance.finish()),
            Arc::new(self.similarity.finish()),
            Arc::new(self.stored.finish()),
        ];
        self.rows = 0;
        let batch = RecordBatch::try_new(schema(), columns)?;
        Ok(self.writer.write(&batch)?)
    }

    fn finish(mut self) -> Result<()> {
        if self.rows > 0 {
            self.flush()?;
        }
        self.writer.into_inner()?.finish()
    }
}
