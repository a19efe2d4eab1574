//! Where `--clusters` rows go: JSON lines (gzip'd when the name ends in `.gz`), or one
//! Parquet file, a typed column per field, when it ends in `.parquet`.

use std::path::Path;

use anyhow::Result;
use arrow_array::ArrayRef;
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

/// Rows written as Parquet: gathered as JSON values, decoded into the columns of
/// [`schema`] by arrow-json a batch at a time.
pub(super) struct ParquetRows {
    out: ParquetOut<OutFile>,
    decoder: arrow_json::reader::Decoder,
    rows: Vec<Value>,
}

impl ParquetRows {
    fn create(path: &Path) -> Result<Self> {
        Ok(ParquetRows {
            out: ParquetOut::new(OutFile::create(path)?, schema())?,
            decoder: arrow_json::ReaderBuilder::new(schema())
                .with_batch_size(parquet_out::BATCH_ROWS)
                .build_decoder()?,
            rows: Vec::new(),
        })
    }

    fn push(&mut self, row: &Value) -> Result<()> {
        self.rows.push(row.clone());
        match self.out.row() {
            true => {
                let columns = self.columns()?;
                self.out.write(columns)
            }
            false => Ok(()),
        }
    }

    /// The rows gathered as arrays (the gathered rows emptied).
    fn columns(&mut self) -> Result<Vec<ArrayRef>> {
        self.decoder.serialize(&self.rows)?;
        self.rows.clear();
        Ok(match self.decoder.flush()? {
            Some(batch) => batch.columns().to_vec(),
            None => Vec::new(),
        })
    }

    fn finish(mut self) -> Result<()> {
        let columns = self.columns()?;
        self.out.finish(columns)?.finish()
    }
}
