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

/// A keep-policy column's values as ranks: strings as [`Rank::Str`], numbers, dates and
/// timestamps as [`Rank::Num`], nulls as [`Rank::Missing`].
pub(super) fn ranks(col: &ArrayRef) -> Result<Vec<Rank>> {
    let text = matches!(
        col.data_type(),
        DataType::Utf8 | DataType::LargeUtf8 | DataType::Utf8View
    );
    let as_num = |to: &DataType| arrow_cast::cast(col, to).ok();
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
            true => Rank::Str(strs.value(i).to_owned()),
            false => Rank::Missing,
        })
        .collect())
}
