//! Which fields of a JSONL record hold the id and the text (`--id-field`, `--text-field`),
//! one set of flags for every command that reads records.

use simstore::input::reader::Fields;

/// The field mapping flags of a command that reads JSONL records. They apply to JSONL
/// lines only: a WARC record, an HTML or text file is read as it would be without them.
#[derive(Debug, Clone, clap::Args)]
pub struct FieldArgs {
    /// The JSONL field holding the text; no other field is then read (title, html, fp are
    /// data like the rest) [default: the record's text, title, html and fp].
    #[arg(long, value_name = "NAME")]
    pub text_field: Option<String>,
    /// The JSONL field holding the id (optional: a record without one is named by its line
    /// number, and by `import` by its input and line, `small.jsonl:3`, so that records of
    /// two files never replace one another; a number is an id as written).
    #[arg(long, value_name = "NAME", default_value = "id")]
    pub id_field: String,
}

impl Default for FieldArgs {
    /// The flags' defaults: the id in `id`, the record's own fields.
    fn default() -> Self {
        FieldArgs {
            text_field: None,
            id_field: "id".into(),
        }
    }
}

impl FieldArgs {
    /// The fields to read: ids optional (a record without one gets its line number).
    pub fn fields(&self) -> Fields {
        Fields {
            id: self.id_field.clone(),
            optional_id: true,
            names_only: false,
            text: self.text_field.clone(),
            line_prefix: String::new(),
        }
    }

    /// The first of the flags given (not left at its default), for a refusal where they
    /// do not apply.
    pub fn given(&self) -> Option<&'static str> {
        if self.text_field.is_some() {
            Some("--text-field")
        } else if self.id_field != "id" {
            Some("--id-field")
        } else {
            None
        }
    }
}
