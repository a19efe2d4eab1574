//! Output formatting shared by subcommands: JSON objects for matches and documents, times,
//! counts.

use serde_json::{Value, json};
use simstore::{Match, StoredDoc};

/// A match as a JSON object: `{"id", "distance", "fp", "title"?, "url"?}`.
pub fn match_json(m: &Match) -> Value {
    let mut v =
        json!({ "id": m.doc.id, "distance": m.distance, "fp": m.doc.fingerprint().to_string() });
    add_optional(&mut v, &m.doc);
    v
}

/// `n` and `noun`, the noun in the plural unless `n` is 1 ("1 record", "2 records").
pub fn count(n: u64, noun: &str) -> String {
    if n == 1 {
        format!("1 {noun}")
    } else {
        format!("{n} {noun}s")
    }
}

/// `bytes` as lower-case hex digits: how a sketch is written in JSON (`export`, `eval`)
/// and how Parquet input reads a binary `sketch` column back.
pub fn hex(bytes: &[u8]) -> String {
    use std::fmt::Write;
    bytes
        .iter()
        .fold(String::with_capacity(2 * bytes.len()), |mut s, b| {
            let _ = write!(s, "{b:02x}");
            s
        })
}

/// A stored document as a JSON object.
pub fn doc_json(d: &StoredDoc) -> Value {
    let mut v = json!({ "id": d.id, "fp": d.fingerprint().to_string(), "length": d.length, "time": d.time });
    if d.seen != d.time {
        v["seen"] = json!(d.seen);
    }
    add_optional(&mut v, d);
    v
}

fn add_optional(v: &mut Value, d: &StoredDoc) {
    if let Some(t) = &d.title {
        v["title"] = json!(t);
    }
    if let Some(u) = &d.url {
        v["url"] = json!(u);
    }
}

/// The column names of [`match_line`], printed above the matches on a terminal.
pub const MATCH_HEADER: &str = "distance\tid\tfp\ttitle\turl";

/// One human-readable line for a match: distance, id, fingerprint, title, url, separated
/// by tabs. Tabs, line breaks, backslashes and other control characters inside the fields
/// are escaped ([`escape_field`]), so a field can never forge another column or another row.
pub fn match_line(m: &Match) -> String {
    format!(
        "{}\t{}\t{}\t{}\t{}",
        m.distance,
        escape_field(&m.doc.id),
        m.doc.fingerprint(),
        escape_field(m.doc.title.as_deref().unwrap_or("-")),
        escape_field(m.doc.url.as_deref().unwrap_or("-"))
    )
}

/// `field` with its tabs, line breaks and backslashes escaped for a tab-separated line
/// (`\t`, `\n`, `\r`, `\\`), and every other control character, Unicode line or paragraph
/// separator, zero-width character and direction override as `\u{HEX}` (a NUL, a form
/// feed, U+0085 or U+2028 breaks a line or a terminal for some readers of the output; a
/// U+202E shows a reader another id than the one stored).
pub fn escape_field(field: &str) -> std::borrow::Cow<'_, str> {
    let special = |c: char| {
        c == '\\'
            || c.is_control()
            || matches!(c, '\u{200b}'..='\u{200f}' | '\u{2028}'..='\u{202e}' | '\u{2066}'..='\u{2069}' | '\u{feff}')
    };
    if !field.contains(special) {
        return field.into();
    }
    let mut out = String::with_capacity(field.len() + 8);
    for c in field.chars() {
        match c {
            '\t' => out.push_str("\\t"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\\' => out.push_str("\\\\"),
            c if special(c) => out.push_str(&format!("\\u{{{:x}}}", c as u32)),
            c => out.push(c),
        }
    }
    out.into()
}

/// A progress bar over the bytes of `files` (drawn on stderr, on a terminal only), laid out
/// by `template` (indicatif's); directories add their files' sizes as they are walked.
pub fn byte_progress(files: &[String], template: &str) -> indicatif::ProgressBar {
    let total: u64 = files
        .iter()
        .filter_map(|f| std::fs::metadata(f).ok())
        .filter(|m| m.is_file())
        .map(|m| m.len())
        .sum();
    let bar = indicatif::ProgressBar::with_draw_target(
        Some(total),
        indicatif::ProgressDrawTarget::stderr(),
    );
    bar.set_style(indicatif::ProgressStyle::with_template(template).expect("valid template"));
    bar
}

#[cfg(test)]
mod tests {
    use super::count;

    #[test]
    fn counts_in_the_plural_except_one() {
        assert_eq!(count(1, "record"), "1 record");
        assert_eq!(count(0, "record"), "0 records");
        assert_eq!(count(2, "document"), "2 documents");
    }
}
