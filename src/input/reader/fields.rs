//! Which fields of a JSONL record hold its id and text ([`Fields`]).

use serde_json::{Map, Value};

use super::{RecordError, type_name};

/// Which fields of a JSONL record are read, for datasets whose records are not in
/// simstore's own shape (`simstore dedup --text-field content --id-field url`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Fields {
    /// The field holding the id (`"id"` by default).
    pub id: String,
    /// When true, a record without an id (the field missing or `null`) is named by its line
    /// number (after [`Fields::line_prefix`]); when false (the default), every record needs
    /// an id. Either way an id is a string or a number (as written, e.g. `42`).
    pub optional_id: bool,
    /// What the id made of a line number starts with: empty (the default), or e.g. the
    /// input's name and `:`, so that records without ids of two inputs are named apart.
    pub line_prefix: String,
    /// When true, ids only name records in messages and listings, beside their file and
    /// line (a dataset dedup that stores nothing): a fraction or an exponent is one too, as
    /// serde_json writes it (pandas writes an integer column with gaps as `1.0`). When
    /// false (the default), an id is a key and must read as written: a string or a whole
    /// number.
    pub names_only: bool,
    /// The one field holding the text; `None` (the default): the record's own fields
    /// (`title`, `text`, `html`, `url`, `fp`, as [`crate::input::reader::parse_jsonl`]
    /// reads them). With a text field, no other field is read (they are data to carry,
    /// not to compare).
    pub text: Option<String>,
}

impl Fields {
    /// The id of a record without one: its line number after the prefix.
    pub(super) fn line_id(&self, line_no: u64) -> String {
        format!("{}{line_no}", self.line_prefix)
    }

    /// True for simstore's own shape (the id in `id`, the record's own fields), whose ids
    /// may be optional, checked without building a default to compare with.
    pub(super) fn is_own(&self) -> bool {
        self.id == "id" && self.text.is_none()
    }

    /// The id of record `obj`, line `line_no` of its input: a string or a whole number as
    /// written, or any number where ids only name records ([`Fields::names_only`]).
    pub(super) fn id_of(
        &self,
        obj: &mut Map<String, Value>,
        line_no: u64,
    ) -> Result<String, RecordError> {
        let wrong = |problem: String| RecordError::Field {
            field: self.id.clone(),
            flag: "--id-field",
            problem,
        };
        match obj.remove(&self.id) {
            None | Some(Value::Null) if self.optional_id => Ok(self.line_id(line_no)),
            None | Some(Value::Null) => Err(RecordError::MissingId),
            Some(Value::String(s)) => Ok(s),
            Some(Value::Number(n)) if n.is_i64() || n.is_u64() || self.names_only => {
                Ok(n.to_string())
            }
            Some(Value::Number(_)) => Err(wrong(
                "must be a string or a whole number, found a fraction or an exponent".into(),
            )),
            Some(other) => Err(wrong(format!(
                "must be a string or a number, found {}",
                type_name(&other)
            ))),
        }
    }
}

impl Default for Fields {
    fn default() -> Self {
        Fields {
            id: "id".into(),
            optional_id: false,
            names_only: false,
            line_prefix: String::new(),
            text: None,
        }
    }
}
