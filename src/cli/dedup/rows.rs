//! Where `--clusters` rows go: JSON lines (gzip'd when the name ends in `.gz`), or one
//! Parquet file, a typed column per field, when it ends in `.parquet`.

use std::path::Path;
use std::sync::Arc;

use anyhow::Result;
use arrow_array::ArrayRef;
use arrow_array::builder::{BooleanBuilder, Float64Builder, StringBuilder, UInt64Builder};
use arrow_schema::{DataType, SchemaRef};
use serde_json::Value;

use super::kept::KeptWriter;
use crate::cli::outfile::OutFile;
use crate::cli::parquet_out::{self, ParquetOut};

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
    use DataType::{Boolean, Float64, UInt64, Utf8};
    parquet_out::schema(&[
        ("cluster", UInt64, false),
        ("id", Utf8, false),
        ("file", Utf8, true),
        ("line", UInt64, true),
        ("representative", Utf8, false),
        ("kept", Boolean, false),
        ("distance", UInt64, false),
        ("similarity", Float64, true),
        ("stored", Boolean, true),
    ])
}

/// Rows written as Parquet, a builder per column.
pub(super) struct ParquetRows {
    out: ParquetOut<OutFile>,
    cluster: UInt64Builder,
    id: StringBuilder,
    file: StringBuilder,
    line: UInt64Builder,
    representative: StringBuilder,
    kept: BooleanBuilder,
    distance: UInt64Builder,
    similarity: Float64Builder,
    stored: BooleanBuilder,
}

impl ParquetRows {
    fn create(path: &Path) -> Result<Self> {
        Ok(ParquetRows {
            out: ParquetOut::new(OutFile::create(path)?, schema())?,
            cluster: UInt64Builder::new(),
            id: StringBuilder::new(),
            file: StringBuilder::new(),
            line: UInt64Builder::new(),
            representative: StringBuilder::new(),
            kept: BooleanBuilder::new(),
            distance: UInt64Builder::new(),
            similarity: Float64Builder::new(),
            stored: BooleanBuilder::new(),
        })
    }

    fn push(&mut self, row: &Value) -> Result<()> {
        let text = |name: &str| row[name].as_str().unwrap_or_default();
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
        match self.out.row() {
            true => {
                let columns = self.columns();
                self.out.write(columns)
            }
            false => Ok(()),
        }
    }

    /// The rows gathered as arrays (the builders emptied).
    fn columns(&mut self) -> Vec<ArrayRef> {
        vec![
            Arc::new(self.cluster.finish()),
            Arc::new(self.id.finish()),
            Arc::new(self.file.finish()),
            Arc::new(self.line.finish()),
            Arc::new(self.representative.finish()),
            Arc::new(self.kept.finish()),
            Arc::new(self.distance.finish()),
            Arc::new(self.similarity.finish()),
            Arc::new(self.stored.finish()),
        ]
    }

    fn finish(mut self) -> Result<()> {
        let columns = self.columns();
        self.out.finish(columns)?.finish()
    }
}
