//! The columns of a Parquet batch that a dedup reads: the text, ids and a `--keep`
//! field, as strings or ranks.

use anyhow::{Context, Result};
use arrow_array::{Array, ArrayRef, RecordBatch, StringArray};
use arrow_schema::DataType;

use super::keep::Rank;

/// The text column `name` of a batch as strings: a string or binary column (a dictionary
/// of them too; binary read as UTF-8, bad bytes replaced); a column of numbers, dates or
/// other values is refused, not read as text.
pub(super) fn texts(batch: &RecordBatch, name: &str) -> Result<StringArray> {
    let col = batch.column_by_name(name).context("the text column")?;
    let text =
        |t: &DataType| matches!(t, DataType::Utf8 | DataType::LargeUtf8 | DataType::Utf8View);
    let binary = |t: &DataType| {
        matches!(
            t,
            DataType::Binary | DataType::LargeBinary | DataType::BinaryView
        )
    };
    match col.data_type() {
        DataType::Dictionary(_, v) if binary(v) => crate::cli::input::lossy_text(col),
        t if binary(t) => crate::cli::input::lossy_text(col),
        DataType::Dictionary(_, v) if text(v) => strings(batch, name)?.context("the text column"),
        t if text(t) => strings(batch, name)?.context("the text column"),
        t => anyhow::bail!(
            "the column {name:?} ({t}) is not text: --text-field must name a string column"
        ),
    }
}

/// The column `name` of `batch` as strings (numbers as written); `None` when the batch has
/// no such column.
pub(super) fn strings(batch: &RecordBatch, name: &str) -> Result<Option<StringArray>> {
    let Some(col) = batch.column_by_name(name) else {
        return Ok(None);
    };
    let utf8 = arrow_cast::cast(col, &DataType::Utf8)
        .with_context(|| format!("the column {name:?} ({}) is not text", col.data_type()))?;
    Ok(utf8.as_any().downcast_ref::<StringArray>().cloned())
}

/// Seconds in one unit of a date or timestamp column's integers (whatever its zone: the
/// integers count from the Unix epoch in UTC), or `None` for other columns.
fn seconds_per_unit(t: &DataType) -> Option<f64> {
    use arrow_schema::TimeUnit;
    Some(match t {
        DataType::Timestamp(TimeUnit::Second, _) => 1.0,
        DataType::Timestamp(TimeUnit::Millisecond, _) | DataType::Date64 => 1e-3,
        DataType::Timestamp(TimeUnit::Microsecond, _) => 1e-6,
        DataType::Timestamp(TimeUnit::Nanosecond, _) => 1e-9,
        DataType::Date32 => 86_400.0,
        _ => return None,
    })
}

/// A keep-policy column's values as ranks: numbers as [`Rank::Num`]; dates and timestamps
/// as their instants in Unix seconds (a JSONL record's ISO 8601 strings are read so too; a
/// timestamp without a zone counts as UTC); other strings by [`Rank::of_text`]; nulls as
/// [`Rank::Missing`].
pub(super) fn ranks(col: &ArrayRef) -> Result<Vec<Rank>> {
    let text = matches!(
        col.data_type(),
        DataType::Utf8 | DataType::LargeUtf8 | DataType::Utf8View
    );
    let as_num = |to: &DataType| arrow_cast::cast(col, to).ok();
    if let Some(scale) = seconds_per_unit(col.data_type())
        && let Some(ints) = as_num(&DataType::Int64)
    {
        let ints = ints
            .as_any()
            .downcast_ref::<arrow_array::Int64Array>()
            .context("an instant column")?;
        return Ok((0..ints.len())
            .map(|i| match ints.is_valid(i) {
                true => Rank::Num(ints.value(i) as f64 * scale),
                false => Rank::Missing,
            })
            .collect());
    }
    if !text
        && let Some(nums) = as_num(&DataType::Float64).or_else(|| {
            let ints = as_num(&DataType::Int64)?;
            arrow_cast::cast(&ints, &DataType::Float64).ok()
        })
    {
        let nums = nums
            .as_any()
            .downcast_ref::<arrow_array::Float64Array>()
            .context("a numeric column")?
            .clone();
        return Ok((0..nums.len())
            .map(|i| match nums.is_valid(i) {
                true => Rank::Num(nums.value(i)),
                false => Rank::Missing,
            })
            .collect());
    }
    let strs = arrow_cast::cast(col, &DataType::Utf8).context("the --keep column")?;
    let strs = strs
        .as_any()
        .downcast_ref::<StringArray>()
        .context("strings")?;
    Ok((0..strs.len())
        .map(|i| match strs.is_valid(i) {
            true => Rank::of_text(strs.value(i).to_owned()),
            false => Rank::Missing,
        })
        .collect())
}
