//! `simstore export --format parquet`: every stored document as one row of a Parquet file,
//! a typed column per field, for analysis (pandas, DuckDB, Spark).

use std::io::Write;
use std::sync::Arc;

use anyhow::Result;
use arrow_array::ArrayRef;
use arrow_array::builder::{BinaryBuilder, StringBuilder, UInt64Builder};
use arrow_schema::DataType;
use simstore::StoredDoc;

use crate::cli::parquet_out::{ParquetOut, schema};

/// The rows being gathered, a builder per column: what `export --format jsonl` writes,
/// typed (`sketch` as its 64 bytes; `seen` always, equal to `time` for a document never
/// seen again).
#[derive(Default)]
struct Columns {
    seq: UInt64Builder,
    id: StringBuilder,
    fp: StringBuilder,
    title: StringBuilder,
    url: StringBuilder,
    length: UInt64Builder,
    time: UInt64Builder,
    seen: UInt64Builder,
    content_hash: StringBuilder,
    sketch: BinaryBuilder,
}

impl Columns {
    /// The columns' names and types, in order.
    fn schema() -> arrow_schema::SchemaRef {
        use DataType::{Binary, UInt64, Utf8};
        schema(&[
            ("seq", UInt64, false),
            ("id", Utf8, false),
            ("fp", Utf8, false),
            ("title", Utf8, true),
            ("url", Utf8, true),
            ("length", UInt64, false),
            ("time", UInt64, false),
            ("seen", UInt64, false),
            ("content_hash", Utf8, true),
            ("sketch", Binary, true),
        ])
    }

    fn push(&mut self, seq: u64, d: &StoredDoc) {
        self.seq.append_value(seq);
        self.id.append_value(&d.id);
        self.fp.append_value(d.fingerprint().to_string());
        self.title.append_option(d.title.as_deref());
        self.url.append_option(d.url.as_deref());
        self.length.append_value(d.length);
        self.time.append_value(d.time);
        self.seen.append_value(d.seen);
        let hash = d.content_hash.map(|h| format!("{h:032x}"));
        self.content_hash.append_option(hash);
        self.sketch.append_option(d.sketch.as_ref().map(|s| s.0));
    }

    /// The rows gathered as arrays (the builders emptied).
    fn finish(&mut self) -> Vec<ArrayRef> {
        vec![
            Arc::new(self.seq.finish()),
            Arc::new(self.id.finish()),
            Arc::new(self.fp.finish()),
            Arc::new(self.title.finish()),
            Arc::new(self.url.finish()),
            Arc::new(self.length.finish()),
            Arc::new(self.time.finish()),
            Arc::new(self.seen.finish()),
            Arc::new(self.content_hash.finish()),
            Arc::new(self.sketch.finish()),
        ]
    }
}

/// Documents written as Parquet rows to `W`.
pub(super) struct ParquetDocs<W: Write + Send> {
    out: ParquetOut<W>,
    columns: Columns,
}

impl<W: Write + Send> ParquetDocs<W> {
    /// A writer of documents to `out`.
    pub(super) fn new(out: W) -> Result<Self> {
        Ok(ParquetDocs {
            out: ParquetOut::new(out, Columns::schema())?,
            columns: Columns::default(),
        })
    }

    /// Adds document `d`, stored under `seq`.
    pub(super) fn push(&mut self, seq: u64, d: &StoredDoc) -> Result<()> {
        self.columns.push(seq, d);
        match self.out.row() {
            true => self.out.write(self.columns.finish()),
            false => Ok(()),
        }
    }

    /// Writes the last rows and the file's footer; returns the output.
    pub(super) fn finish(mut self) -> Result<W> {
        self.out.finish(self.columns.finish())
    }
}
