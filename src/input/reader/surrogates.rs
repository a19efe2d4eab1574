//! Lone UTF-16 surrogates in JSON escapes (`"\ud800"`): strict JSON readers refuse them,
//! but Python's `json.dumps` writes them for text that was broken before it was saved, so
//! real corpora hold them. A line refused for one is read again with each lone surrogate
//! escape replaced by U+FFFD, the replacement character (a record is not lost for half a
//! character; the line itself, written back by a dedup, is unchanged).

use std::borrow::Cow;

use super::RecordError;

/// `parse(text)`, or, when it refuses `text` as JSON and `text` holds a lone surrogate
/// escape, `parse` of `text` with U+FFFD in its place.
pub(super) fn read<T>(
    text: &str,
    parse: impl Fn(&str) -> Result<T, RecordError>,
) -> Result<T, RecordError> {
    match parse(text) {
        Err(RecordError::InvalidJson(e)) => match replace_lone(text) {
            Cow::Owned(fixed) => parse(&fixed),
            Cow::Borrowed(_) => Err(RecordError::InvalidJson(e)),
        },
        read => read,
    }
}

/// `text` with every `\uXXXX` escape of a lone surrogate (a high one not followed by a low
/// one, or a low one alone) replaced by `\ufffd`; borrowed when there is none.
pub(super) fn replace_lone(text: &str) -> Cow<'_, str> {
    let bytes = text.as_bytes();
    let mut out: Option<String> = None;
    let (mut i, mut copied) = (0, 0);
    while i < bytes.len() {
        if bytes[i] != b'\\' {
            i += 1;
            continue;
        }
        let Some(unit) = escape_at(bytes, i) else {
            i += 2; // another escape (`\\`, `\"`, `\n`...): its character is not a `\`
            continue;
        };
        let low_next = |at: usize| escape_at(bytes, at).is_some_and(is_low);
        if is_high(unit) && low_next(i + 6) {
            i += 12;
        } else if is_high(unit) || is_low(unit) {
            let out = out.get_or_insert_with(|| String::with_capacity(text.len()));
            out.push_str(&text[copied..i]);
            out.push_str("\\ufffd");
            i += 6;
            copied = i;
        } else {
            i += 6;
        }
    }
    match out {
        None => Cow::Borrowed(text),
        Some(mut out) => {
            out.push_str(&text[copied..]);
            Cow::Owned(out)
        }
    }
}

/// The code unit of the `\uXXXX` escape at `at`, if one is there.
fn escape_at(bytes: &[u8], at: usize) -> Option<u16> {
    let hex = bytes.get(at..at + 6)?;
    if &hex[..2] != b"\\u" {
        return None;
    }
    u16::from_str_radix(std::str::from_utf8(&hex[2..]).ok()?, 16).ok()
}

fn is_high(unit: u16) -> bool {
    (0xD800..0xDC00).contains(&unit)
}

fn is_low(unit: u16) -> bool {
    (0xDC00..0xE000).contains(&unit)
}

#[cfg(test)]
mod tests {
    use super::replace_lone;

    #[test]
    fn lone_surrogates_are_replaced_and_nothing_else() {
        for (line, want) in [
            (r#"{"text":"a \ud800 b"}"#, r#"{"text":"a \ufffd b"}"#),
            (r#"{"text":"\udc00"}"#, r#"{"text":"\ufffd"}"#),
            (r#"{"text":"\ud800\ud800x"}"#, r#"{"text":"\ufffd\ufffdx"}"#),
            // A pair, an escaped backslash before a `u`, other escapes: unchanged.
            (
                r#"{"text":"\ud83d\ude00 \\ud800 \n \u00e9"}"#,
                r#"{"text":"\ud83d\ude00 \\ud800 \n \u00e9"}"#,
            ),
            (r#"{"text":"\ud83d"}"#, r#"{"text":"\ufffd"}"#),
            (r#"{"t":"\u12"}"#, r#"{"t":"\u12"}"#),
            ("{\"text\":\"été \\ud800\"}", "{\"text\":\"été \\ufffd\"}"),
        ] {
            assert_eq!(replace_lone(line), want, "{line}");
            let fixed = replace_lone(line);
            if fixed != line {
                let v: serde_json::Value = serde_json::from_str(&fixed).unwrap();
                assert!(v.to_string().contains('\u{fffd}'), "{v}");
            }
        }
    }
}
