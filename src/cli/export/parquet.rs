//! `simstore export --format parquet`: every stored document as one row of a Parquet file,
//! a typed column per field, for analysis (pandas, DuckDB, Spark).

use std::io::Write;
use std::sync::Arc;

use anyhow::Result;
use arrow_array::builder::{BinaryBuilder, StringBuilder, UInt64Builder};
use arrow_array::{ArrayRef, RecordBatch};
use arrow_schema::{DataType, Field, Schema, SchemaRef};
use parquet::arrow::ArrowWriter;
use parquet::basic::Compression;
use parquet::file::properties::WriterProperties;
use simstore::StoredDoc;

/// Rows gathered before they are written as one record batch.
const BATCH_ROWS: usize = 64 * 1024;

/// The columns, in order: what `export --format jsonl` writes, typed (`sketch` as its 64
/// bytes; `seen` always, equal to `time` for a document never seen again).
fn schema() -> SchemaRef {
    let field = |name, ty, nullable| Field::new(name, ty, nullable);
    Arc::new(Schema::new(vec![
        field("seq", DataType::UInt64, false),
        field("id", DataType::Utf8, false),
        field("fp", DataType::Utf8, false),
        field("title", DataType::Utf8, true),
        field("url", DataType::Utf8, true),
        field("length", DataType::UInt64, false),
        field("time", DataType::UInt64, false),
        field("seen", DataType::UInt64, false),
        field("content_hash", DataType::Utf8, true),
        field("sketch", DataType::Binary, true),
    ]))
}

/// The rows of a batch being gathered, a builder per column.
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

    /// The rows gathered as a batch of `schema` (the builders emptied).
    fn finish(&mut self, schema: &SchemaRef) -> Result<RecordBatch> {
        let columns: Vec<ArrayRef> = vec![
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
        ];
        Ok(RecordBatch::try_new(schema.clone(), columns)?)
    }
}

/// Documents written as Parquet rows to `W`, compressed with Snappy.
pub(super) struct ParquetDocs<W: Write + Send> {
    writer: ArrowWriter<W>,
    schema: SchemaRef,
    columns: Columns,
    rows: usize,
}

impl<W: Write + Send> ParquetDocs<W> {
    /// A writer of documents to `out`.
    pub(super) fn new(out: W) -> Result<Self> {
        let schema = schema();
        let props = WriterProperties::builder()
            .set_compression(Compression::SNAPPY)
            .build();
        Ok(ParquetDocs {
            writer: ArrowWriter::try_new(out, schema.clone(), Some(props))?,
            schema,
            columns: Columns::default(),
            rows: 0,
        })
    }

    /// Adds document `d`, stored under `seq`.
    pub(super) fn push(&mut self, seq: u64, d: &StoredDoc) -> Result<()> {
        self.columns.push(seq, d);
        self.rows += 1;
        if self.rows == BATCH_ROWS {
            self.flush()?;
        }
        Ok(())
    }

    fn flush(&mut self) -> Result<()> {
        let batch = self.columns.finish(&self.schema)?;
        self.rows = 0;
        Ok(self.writer.write(&batch)?)
    }

    /// Writes the last rows and the file's footer; returns the output.
    pub(super) fn finish(mut self) -> Result<W> {
        if self.rows > 0 {
            self.flush()?;
        }
        Ok(self.writer.into_inner()?)
    }
}
