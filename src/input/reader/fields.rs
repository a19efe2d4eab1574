//! Which fields of a JSONL record hold its id and text ([`Fields`]).

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
}

impl Default for Fields {
    fn default() -> Self {
        Fields {
            id: "id".into(),
            optional_id: false,
            line_prefix: String::new(),
            text: None,
        }
    }
}
