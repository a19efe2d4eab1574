//! Unpaired UTF-16 surrogate escapes in JSONL (`"\ud83d"` with no `\udcxx` after it).
//!
//! JavaScript and Python write them when a string is cut inside an emoji or another
//! character beyond the Basic Multilingual Plane, and read them back; serde_json, as RFC 8259
//! allows, refuses them. A corpus scraped from the web has some, and refusing the whole record
//! for one half character would leave it unjudged. So a line serde_json refuses is read
//! again with each unpaired escape as U+FFFD (as a UTF-16 decoder does with an unpaired half):
//! the text, title and url get U+FFFD where the half character was; the line itself, which
//! the dataset commands write out for a kept record, is never changed. An id is a key, so
//! an id with an unpaired escape is refused (two ids differing only there would become one).

use super::RecordError;

/// `parse(text)`; when that fails as invalid JSON and `text` has unpaired surrogate escapes,
/// `parse` of `text` with each of them read as U+FFFD, refused if the record's id (`id`)
/// held one.
pub(super) fn or_repaired<T>(
    text: &str,
    parse: impl Fn(&str) -> Result<T, RecordError>,
    id: impl Fn(&T) -> &str,
) -> Result<T, RecordError> {
    let first = parse(text);
    let Err(RecordError::InvalidJson(_)) = &first else {
        return first;
    };
    let Some(repaired) = unpaired_replaced(text) else {
        return first;
    };
    let record = parse(&repaired)?;
    // Only an id that has U+FFFD can have had an unpaired escape: the same line with another
    // replacement tells whether it did.
    if id(&record).contains('\u{FFFD}') {
        let other = replaced(text, "fffe").map(|t| parse(&t));
        if !matches!(other, Some(Ok(r)) if id(&r) == id(&record)) {
            return Err(RecordError::InvalidId(
                "it holds an unpaired UTF-16 surrogate escape (such as \\ud800 without a \\udc00..\\udfff after it): ids must be whole Unicode characters".into(),
            ));
        }
    }
    Ok(record)
}

/// JSON text `text` with each unpaired surrogate escape read as U+FFFD (`\ufffd`), or
/// `None` when it has none: for a JSON body serde_json refused, read again as a record is.
pub fn unpaired_replaced(text: &str) -> Option<String> {
    replaced(text, "fffd")
}

/// `text` with each unpaired surrogate escape replaced by `\u` and `hex`, or `None` when it
/// has none. Escapes are found as a JSON reader finds them: a backslash escapes the next
/// character, so `\\ud800` is a backslash and the letters `ud800`.
fn replaced(text: &str, hex: &str) -> Option<String> {
    let bytes = text.as_bytes();
    let mut out: Option<String> = None;
    let (mut i, mut copied) = (0, 0);
    while i < bytes.len() {
        if bytes[i] != b'\\' {
            i += 1;
            continue;
        }
        let Some(unit) = unit_at(bytes, i) else {
            i += 2;
            continue;
        };
        let paired = (0xD800..0xDC00).contains(&unit)
            && unit_at(bytes, i + 6).is_some_and(|low| (0xDC00..0xE000).contains(&low));
        if paired {
            i += 12;
        } else if (0xD800..0xE000).contains(&unit) {
            let out = out.get_or_insert_with(|| String::with_capacity(text.len()));
            out.push_str(&text[copied..i + 2]);
            out.push_str(hex);
            (i, copied) = (i + 6, i + 6);
        } else {
            i += 6;
        }
    }
    let mut out = out?;
    out.push_str(&text[copied..]);
    Some(out)
}

/// The UTF-16 unit of the `\uXXXX` escape at `at`, if one is there.
fn unit_at(bytes: &[u8], at: usize) -> Option<u32> {
    let escape = bytes.get(at..at + 6)?;
    if escape[0] != b'\\' || escape[1] != b'u' {
        return None;
    }
    let hex = &escape[2..];
    hex.iter().all(u8::is_ascii_hexdigit).then(|| {
        hex.iter().fold(0, |unit, &d| {
            unit * 16 + (d as char).to_digit(16).unwrap_or(0)
        })
    })
}

#[cfg(test)]
mod tests {
    use super::replaced;

    #[test]
    fn only_unpaired_escapes_are_replaced() {
        let r = |t: &str| replaced(t, "fffd");
        assert_eq!(r(r#""a\ud800b""#).as_deref(), Some(r#""a\ufffdb""#));
        assert_eq!(r(r#""\udc00\ud800""#).as_deref(), Some(r#""\ufffd\ufffd""#));
        assert_eq!(
            r(r#""\ud83d\ude00\ud83d""#).as_deref(),
            Some(r#""\ud83d\ude00\ufffd""#)
        );
        assert_eq!(r(r#""\ud83d\u0041""#).as_deref(), Some(r#""\ufffd\u0041""#));
        // Paired, escaped backslashes, other escapes, a cut escape: nothing to replace.
        for t in [
            r#""\ud83d\ude00""#,
            r#""\\ud800""#,
            r#""\n\u00e9\"""#,
            r#""\ud8"#,
            "\\",
        ] {
            assert_eq!(r(t), None, "{t}");
        }
        assert_eq!(r(r#""\\\ud800""#).as_deref(), Some(r#""\\\ufffd""#));
    }
}
