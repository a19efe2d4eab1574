//! Where `dedup --output` writes the kept records: JSON lines ([`KeptWriter`]; gzip'd when
//! the name ends in `.gz`) or Parquet shards ([`Shards`]), whichever the name asks for,
//! from JSONL or Parquet inputs alike. A Parquet row written as a line is one JSON object
//! of all its columns (arrow-json; nulls written as `null`, binary as hex, NaN and
//! infinities as `null`, reported); JSONL lines written as Parquet are spooled beside the
//! output, then their columns are inferred from every kept line (arrow-json: a field of
//! mixed scalar types is a string column) and the lines written as shards.

use std::io::{BufReader, BufWriter, Seek, Write};
use std::path::Path;

use anyhow::{Context, Result};
use arrow_array::RecordBatch;
use arrow_json::writer::LineDelimited;
use arrow_schema::SchemaRef;
use parquet::basic::Compression as Codec;
use tempfile::NamedTempFile;

use super::shards::is_parquet;
use super::{Args, dataset};
use crate::cli::outfile::OutFile;

mod lines;
mod shards;

pub(super) use lines::KeptWriter;
pub(super) use shards::Shards;

/// Rows per Parquet shard unless `--shard-rows` says otherwise.
pub(super) const DEFAULT_SHARD_ROWS: u64 = 1_000_000;

/// Where and how `--output` is written.
pub(super) struct Target<'a> {
    pub path: &'a Path,
    /// Parquet shards (else JSON lines).
    pub parquet: bool,
    /// `--compression`; default: the Parquet input's, else Snappy.
    pub compression: Option<Codec>,
    pub shard_rows: usize,
    /// The text column (`--text-field`, default `text`): binary, it is written to JSON
    /// lines as text.
    pub text: String,
}

impl<'a> Target<'a> {
    /// `path` as `--output` names it: Parquet when it ends in `.parquet`, is a directory
    /// or, for Parquet inputs, has no JSONL extension (`.jsonl`, `.json`, `.gz`).
    pub(super) fn of(path: &'a Path, parquet_in: bool) -> Self {
        let name = path.to_string_lossy().to_ascii_lowercase();
        let lines = [".jsonl", ".ndjson", ".json", ".gz"]
            .iter()
            .any(|e| name.ends_with(e));
        let parquet =
            is_parquet(path) || path.is_dir() || name.ends_with('/') || (parquet_in && !lines);
        Target {
            path,
            parquet,
            compression: None,
            shard_rows: DEFAULT_SHARD_ROWS as usize,
            text: "text".into(),
        }
    }

    /// [`Target::check`], and a warning of the Parquet options a JSON lines output ignores:
    /// what a run does once, before anything is read.
    pub(super) fn checked(args: &Args, path: &'a Path, parquet_in: bool) -> Result<Self> {
        let t = Target::check(args, path, parquet_in)?;
        if !t.parquet && (args.compression.is_some() || args.shard_rows != DEFAULT_SHARD_ROWS) {
            eprintln!(
                "warning: --compression and --shard-rows apply to Parquet output; {} is \
                 written as JSON lines",
                path.display()
            );
        }
        Ok(t)
    }

    /// `--output path` of `args`, checked: it can be written, and it is no input
    /// ([`dataset::check_inputs`]).
    pub(super) fn check(args: &Args, path: &'a Path, parquet_in: bool) -> Result<Self> {
        let t = Target {
            compression: args.compression,
            shard_rows: usize::try_from(args.shard_rows).unwrap_or(usize::MAX),
            text: args
                .fields
                .text_field
                .clone()
                .unwrap_or_else(|| "text".into()),
            ..Target::of(path, parquet_in)
        };
        dataset::check_inputs(args, path)?;
        match t.parquet {
            true => Shards::check(path)?,
            false => OutFile::check(path)?,
        }
        Ok(t)
    }
}

/// The kept records being written.
pub(super) enum KeptOut {
    /// JSON lines (and, for rows, what writing them as JSON needs and notes).
    Lines(KeptWriter, AsJson),
    /// Parquet rows.
    Shards(Box<Shards>),
    /// JSON lines to be written as Parquet at the end, and the input's first line (the
    /// columns of an output that keeps no line).
    Spool(BufWriter<NamedTempFile>, Codec, usize, Option<Vec<u8>>),
}

/// Rows written as JSON lines: the text column (see [`Target::text`]), and by column the
/// values JSON has no number for (NaN, ±infinity), written as `null` and reported.
#[derive(Default)]
pub(super) struct AsJson {
    text: String,
    not_finite: std::collections::BTreeMap<String, u64>,
}

impl AsJson {
    /// Counts the NaN and infinite values of `batch`'s floating-point columns.
    fn note(&mut self, batch: &RecordBatch) -> Result<()> {
        use arrow_array::cast::AsArray;
        use arrow_schema::DataType::{Float16, Float32, Float64};
        for (field, col) in batch.schema().fields().iter().zip(batch.columns()) {
            if !matches!(field.data_type(), Float16 | Float32 | Float64) {
                continue;
            }
            let col = arrow_cast::cast(col, &Float64)?;
            let floats = col.as_primitive::<arrow_array::types::Float64Type>();
            let n = floats.iter().flatten().filter(|v| !v.is_finite()).count() as u64;
            if n > 0 {
                *self.not_finite.entry(field.name().clone()).or_default() += n;
            }
        }
        Ok(())
    }

    /// Says what was written as `null` for want of a JSON number.
    fn report(&self, output: &Path) {
        if self.not_finite.is_empty() {
            return;
        }
        let said: Vec<String> = (self.not_finite.iter())
            .map(|(col, n)| format!("{n} in column {col:?}"))
            .collect();
        eprintln!(
            "warning: {} holds `null` for NaN or infinite numbers ({}): JSON has no such \
             numbers; write Parquet (--output KEPT/ or KEPT.parquet) to keep them",
            output.display(),
            said.join(", ")
        );
    }
}

impl KeptOut {
    /// An output for JSONL inputs' lines.
    pub(super) fn for_lines(t: &Target) -> Result<Self> {
        Ok(match t.parquet {
            true => {
                let spool = crate::cli::outfile::scratch_beside(t.path)?;
                let codec = t.compression.unwrap_or(Codec::SNAPPY);
                KeptOut::Spool(BufWriter::new(spool), codec, t.shard_rows, None)
            }
            false => KeptOut::Lines(KeptWriter::create(t.path)?, AsJson::default()),
        })
    }

    /// An output for Parquet inputs' rows of `schema`, compressed as `input` when the
    /// target says nothing.
    pub(super) fn for_rows(t: &Target, schema: SchemaRef, input: Codec) -> Result<Self> {
        Ok(match t.parquet {
            true => {
                let codec = t.compression.unwrap_or(input);
                KeptOut::Shards(Box::new(Shards::create(
                    t.path,
                    schema,
                    codec,
                    t.shard_rows,
                )?))
            }
            false => {
                let json = AsJson {
                    text: t.text.clone(),
                    ..AsJson::default()
                };
                KeptOut::Lines(KeptWriter::create(t.path)?, json)
            }
        })
    }

    /// Notes the input's first JSONL line (no line end), kept or not: an output of Parquet
    /// shards that keeps no line still gets its columns.
    pub(super) fn first_line(&mut self, line: &[u8]) {
        if let KeptOut::Spool(.., first @ None) = self {
            *first = Some(line.to_vec());
        }
    }

    /// Adds one JSONL line (no line end).
    pub(super) fn push_line(&mut self, line: &[u8]) -> Result<()> {
        match self {
            KeptOut::Lines(w, _) => w.push(line),
            KeptOut::Spool(w, ..) => {
                let spooled = w.write_all(line).and_then(|()| w.write_all(b"\n"));
                spooled.context("cannot spool the kept lines beside the output")
            }
            KeptOut::Shards(_) => unreachable!("a Parquet input's output takes rows"),
        }
    }

    /// Adds the rows of `batch`.
    pub(super) fn push_rows(&mut self, batch: &RecordBatch) -> Result<()> {
        match self {
            KeptOut::Shards(s) => s.push(batch),
            KeptOut::Lines(w, as_json) => {
                as_json.note(batch)?;
                let builder = arrow_json::WriterBuilder::new().with_explicit_nulls(true);
                let mut json = builder.build::<_, LineDelimited>(Vec::new());
                json.write(&as_json_takes(batch, &as_json.text)?)
                    .and_then(|()| json.finish())
                    .context("cannot write the kept rows as JSON lines")?;
                w.push_lines(&json.into_inner())
            }
            KeptOut::Spool(..) => unreachable!("a JSONL input's output takes lines"),
        }
    }

    /// Ends the output and puts it in place; returns the number of Parquet shards written.
    pub(super) fn finish(self, output: &Path) -> Result<usize> {
        match self {
            KeptOut::Lines(w, as_json) => {
                w.finish()?;
                as_json.report(output);
                Ok(0)
            }
            KeptOut::Shards(s) => s.finish(),
            KeptOut::Spool(w, codec, shard_rows, first) => {
                let spool = w.into_inner().map_err(|e| e.into_error())?;
                lines_to_shards(spool, first, output, (codec, shard_rows))
                    .with_context(|| format!("cannot write {} as Parquet", output.display()))
            }
        }
    }
}

/// `batch` with what JSON lines cannot take as it is made so: the `text` column, when
/// binary, as text (bytes that are not UTF-8 replaced), not hex; timestamps of a named
/// zone (`Etc/UTC`) as the same instants at `+00:00`, the offsets JSON can write.
fn as_json_takes(batch: &RecordBatch, text: &str) -> Result<RecordBatch> {
    use arrow_schema::DataType::{Binary, BinaryView, LargeBinary, Timestamp};
    let schema = batch.schema();
    let mut fields: Vec<arrow_schema::Field> = Vec::new();
    let mut columns = Vec::new();
    for (field, col) in schema.fields().iter().zip(batch.columns()) {
        let col = match field.data_type() {
            Binary | LargeBinary | BinaryView if field.name() == text => {
                std::sync::Arc::new(crate::cli::input::lossy_text(col)?) as arrow_array::ArrayRef
            }
            Timestamp(unit, Some(tz)) if tz.parse::<arrow_array::timezone::Tz>().is_err() => {
                arrow_cast::cast(col, &Timestamp(*unit, Some("+00:00".into())))?
            }
            _ => col.clone(),
        };
        fields.push(
            field
                .as_ref()
                .clone()
                .with_data_type(col.data_type().clone()),
        );
        columns.push(col);
    }
    let schema = std::sync::Arc::new(arrow_schema::Schema::new(fields));
    Ok(RecordBatch::try_new(schema, columns)?)
}

/// Writes the JSON lines of `spool` as Parquet shards to `output` (`codec`, rows per
/// shard), their columns inferred from every line, or from the input's `first` line
/// when none was kept.
fn lines_to_shards(
    spool: NamedTempFile,
    first: Option<Vec<u8>>,
    output: &Path,
    (codec, shard_rows): (Codec, usize),
) -> Result<usize> {
    let mut file = BufReader::new(spool.reopen()?);
    let schema = match (spool.as_file().metadata()?.len(), first) {
        (0, Some(line)) => columns_of(&mut std::io::Cursor::new(line))?,
        _ => columns_of(&mut file)?,
    };
    let mut out = Shards::create(output, schema.clone(), codec, shard_rows)?;
    let rows = arrow_json::ReaderBuilder::new(schema)
        .with_batch_size(4096)
        .with_coerce_primitive(true)
        .build(file)?;
    for batch in rows {
        let batch = batch.map_err(|e| {
            anyhow::anyhow!(
                "the kept lines do not fit the columns inferred from them ({e}); {LINES_ADVICE}"
            )
        })?;
        out.push(&batch)?;
    }
    out.finish()
}

const LINES_ADVICE: &str = "write them as JSON lines (--output KEPT.jsonl)";

/// The Parquet columns of the JSON lines of `lines` (read to the end and rewound).
fn columns_of(lines: &mut (impl std::io::BufRead + Seek)) -> Result<SchemaRef> {
    let (schema, _) = arrow_json::reader::infer_json_schema(&mut *lines, None).map_err(|e| {
        anyhow::anyhow!(
            "the kept lines have no columns Parquet can hold ({e}: a field is an object or a \
             list in some lines and not in others, or a list mixes objects and other values); \
             {LINES_ADVICE}"
        )
    })?;
    lines.rewind()?;
    let big = big_integer_fields(lines)?;
    let fields = schema.fields().iter().map(|f| match f.data_type() {
        arrow_schema::DataType::Float64 if big.contains(f.name()) => f
            .as_ref()
            .clone()
            .with_data_type(arrow_schema::DataType::Utf8),
        _ => f.as_ref().clone(),
    });
    Ok(std::sync::Arc::new(arrow_schema::Schema::new(
        fields.collect::<Vec<_>>(),
    )))
}

/// The top-level fields of `lines` (JSON lines, read to the end and rewound) that hold an
/// integer a double cannot hold exactly (beyond ±2^53; beyond u64, any whole number that
/// large, as serde_json reads it as a double): where arrow-json would make such a field a
/// floating-point column (mixed with fractions, or beyond i64), it is made a string column
/// of the numbers as written instead, so that no value changes.
fn big_integer_fields(
    lines: &mut (impl std::io::BufRead + Seek),
) -> Result<std::collections::HashSet<String>> {
    const EXACT: u64 = 1 << 53;
    let mut big = std::collections::HashSet::new();
    let mut line = String::new();
    while lines.read_line(&mut line)? > 0 {
        // A number beyond 2^53 has 16 digits or more: most lines have none.
        let mut run = 0;
        let long_digits = line.bytes().any(|b| {
            run = if b.is_ascii_digit() { run + 1 } else { 0 };
            run >= 16
        });
        if long_digits && let Ok(serde_json::Value::Object(map)) = serde_json::from_str(&line) {
            for (key, value) in map {
                // Beyond u64 an integer parses as a double: any whole number that large.
                let n = value.as_i64().map(i64::unsigned_abs).or(value.as_u64());
                let whole = value.as_f64().is_some_and(|f| f.fract() == 0.0);
                if n.is_some_and(|n| n > EXACT)
                    || (n.is_none()
                        && whole
                        && value.as_f64().is_some_and(|f| f.abs() > EXACT as f64))
                {
                    big.insert(key);
                }
            }
        }
        line.clear();
    }
    lines.rewind()?;
    Ok(big)
}
