//! The stored fields of an exported record (`simstore export` writes them): length,
//! times, content hash and sketch, read back by `import` so that an export is a lossless
//! logical backup. Only for records with a precomputed `fp` (a record made from its text
//! gets them from the text).

use serde_json::Value;

use super::{RecordError, type_name};
use crate::types::Sketch;

/// What an exported record carries besides id, fingerprint, title and url.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Restore {
    /// Length of the text in characters.
    pub length: Option<u64>,
    /// Stored and last-seen times (the last-seen time is the stored one when absent).
    pub times: Option<(u64, u64)>,
    /// The content hash.
    pub content_hash: Option<u128>,
    /// The shingle sketch.
    pub sketch: Option<Sketch>,
}

impl Restore {
    /// The stored fields of a JSON object (`None` when it has none of them). A line the
    /// one pass read but serde_json's `Value` refuses (an unpaired surrogate escape in a
    /// field the pass skipped) is invalid JSON, to be read again repaired.
    pub(super) fn of(text: &str) -> Result<Option<Restore>, RecordError> {
        let obj = match serde_json::from_str::<Value>(text) {
            Ok(Value::Object(obj)) => obj,
            Ok(_) => return Ok(None),
            Err(e) => return Err(RecordError::InvalidJson(e.to_string())),
        };
        let r = Restore {
            length: number(obj.get("length"), "length")?,
            times: match number(obj.get("time"), "time")? {
                Some(t) => Some((t, number(obj.get("seen"), "seen")?.unwrap_or(t))),
                None => None,
            },
            content_hash: hex(obj.get("content_hash"), "content_hash", 32)?
                .map(|b| u128::from_be_bytes(b.try_into().expect("16 bytes"))),
            sketch: hex(obj.get("sketch"), "sketch", 2 * Sketch::BYTES)?
                .map(|b| Sketch(b.try_into().expect("64 bytes"))),
        };
        Ok((r != Restore::default()).then_some(r))
    }
}

/// A field that must be an unsigned integer, if present and not null.
fn number(v: Option<&Value>, field: &'static str) -> Result<Option<u64>, RecordError> {
    match v {
        None | Some(Value::Null) => Ok(None),
        Some(Value::Number(n)) => n.as_u64().map(Some).ok_or(RecordError::WrongType {
            field,
            expected: "an integer >= 0",
            found: "another number",
        }),
        Some(other) => Err(RecordError::WrongType {
            field,
            expected: "an integer >= 0",
            found: type_name(other),
        }),
    }
}

/// A field that must be `digits` hexadecimal digits, as bytes, if present and not null.
fn hex(
    v: Option<&Value>,
    field: &'static str,
    digits: usize,
) -> Result<Option<Vec<u8>>, RecordError> {
    let expected = if digits == 32 {
        "32 hexadecimal digits"
    } else {
        "128 hexadecimal digits"
    };
    let s = match v {
        None | Some(Value::Null) => return Ok(None),
        Some(Value::String(s)) => s,
        Some(other) => {
            return Err(RecordError::WrongType {
                field,
                expected,
                found: type_name(other),
            });
        }
    };
    let bad = || RecordError::WrongType {
        field,
        expected,
        found: "another string",
    };
    if s.len() != digits || !s.bytes().all(|b| b.is_ascii_hexdigit()) {
        return Err(bad());
    }
    (0..digits)
        .step_by(2)
        .map(|i| u8::from_str_radix(&s[i..i + 2], 16).map_err(|_| bad()))
        .collect::<Result<Vec<u8>, _>>()
        .map(Some)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exported_fields_are_read_and_bad_ones_named() {
        let line = format!(
            r#"{{"id":"a","fp":"0000000000000001","length":7,"time":100,"seen":160,"content_hash":"{:032x}","sketch":"{}"}}"#,
            0xabcdu128,
            "0a".repeat(64)
        );
        let r = Restore::of(&line).unwrap().unwrap();
        assert_eq!(r.length, Some(7));
        assert_eq!(r.times, Some((100, 160)));
        assert_eq!(r.content_hash, Some(0xabcd));
        assert_eq!(r.sketch, Some(Sketch([10; 64])));
        let r = Restore::of(r#"{"time": 5}"#).unwrap().unwrap();
        assert_eq!(r.times, Some((5, 5)));
        assert_eq!(Restore::of(r#"{"id": "x"}"#).unwrap(), None);
        for bad in [
            r#"{"length": -1}"#,
            r#"{"time": "now"}"#,
            r#"{"content_hash": "ab"}"#,
            r#"{"sketch": 5}"#,
        ] {
            let e = Restore::of(bad).unwrap_err();
            assert!(matches!(e, RecordError::WrongType { .. }), "{bad}: {e}");
        }
    }
}
