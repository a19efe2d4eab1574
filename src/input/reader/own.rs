//! The fields of a record in simstore's own shape (`id`, `title`, `text`, `html`, `url`,
//! `fp`), read in one pass over the JSON text: no `serde_json::Value` tree of the whole
//! record (a map of every field, a string for every value) is built and taken apart. The
//! answers are the `Value` path's: the last of a repeated key wins, other keys are skipped
//! (their JSON still checked), and a field of the wrong type is reported with its type.

use std::fmt;

use serde::de::{Deserialize, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde_json::Value;

/// What one field of a record held.
#[derive(Debug, Default, PartialEq, Eq)]
pub(super) enum Slot {
    /// The key is absent.
    #[default]
    Missing,
    /// `null`.
    Null,
    /// A string.
    Str(String),
    /// Another JSON type, named as in error messages ("a number", ...).
    Other(&'static str),
}

impl Slot {
    /// The slot of a parsed value (the `Value` path: custom id or text fields).
    pub(super) fn of(value: Option<Value>) -> Slot {
        match value {
            None => Slot::Missing,
            Some(Value::Null) => Slot::Null,
            Some(Value::String(s)) => Slot::Str(s),
            Some(other) => Slot::Other(super::type_name(&other)),
        }
    }
}

/// The own fields of one record.
#[derive(Debug, Default)]
pub(super) struct OwnFields {
    pub id: Slot,
    pub title: Slot,
    pub text: Slot,
    pub html: Slot,
    pub url: Slot,
    pub fp: Slot,
    /// Whether the object had a field besides these (skipped), or one of these twice (the
    /// last kept).
    pub others: bool,
}

impl OwnFields {
    /// The own fields of a parsed object (the `Value` path), taken out of it; its id is
    /// read apart (`record_id`), by the field that `Fields` names.
    pub(super) fn of(mut obj: serde_json::Map<String, Value>) -> OwnFields {
        let mut take = |key: &str| Slot::of(obj.remove(key));
        OwnFields {
            id: Slot::Missing,
            title: take("title"),
            text: take("text"),
            html: take("html"),
            url: take("url"),
            fp: take("fp"),
            others: !obj.is_empty(),
        }
    }
}

/// A JSON text read as a record: its own fields, or the type it has instead of an object.
pub(super) enum Parsed {
    /// An object.
    Object(OwnFields),
    /// Not an object: what it is ("an array", ...).
    NotAnObject(&'static str),
}

/// The keys a record's own fields are read from.
#[derive(serde::Deserialize)]
#[serde(field_identifier, rename_all = "lowercase")]
enum Key {
    Id,
    Title,
    Text,
    Html,
    Url,
    Fp,
    #[serde(other)]
    Other,
}

impl<'de> Deserialize<'de> for Parsed {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(ParsedVisitor)
    }
}

impl<'de> Deserialize<'de> for Slot {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(SlotVisitor)
    }
}

/// Reads a record: an object field by field; any other JSON value is skipped and named.
struct ParsedVisitor;

impl<'de> Visitor<'de> for ParsedVisitor {
    type Value = Parsed;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a JSON object")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Parsed, A::Error> {
        let mut own = OwnFields::default();
        while let Some(key) = map.next_key::<Key>()? {
            let slot = match key {
                Key::Id => &mut own.id,
                Key::Title => &mut own.title,
                Key::Text => &mut own.text,
                Key::Html => &mut own.html,
                Key::Url => &mut own.url,
                Key::Fp => &mut own.fp,
                Key::Other => {
                    map.next_value::<Skip>()?;
                    own.others = true;
                    continue;
                }
            };
            own.others |= !matches!(slot, Slot::Missing);
            *slot = map.next_value()?;
        }
        Ok(Parsed::Object(own))
    }

    fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<Parsed, A::Error> {
        skip_seq(seq).map(Parsed::NotAnObject)
    }

    fn visit_bool<E>(self, _: bool) -> Result<Parsed, E> {
        Ok(Parsed::NotAnObject("a boolean"))
    }

    fn visit_i64<E>(self, _: i64) -> Result<Parsed, E> {
        Ok(Parsed::NotAnObject("a number"))
    }

    fn visit_u64<E>(self, _: u64) -> Result<Parsed, E> {
        Ok(Parsed::NotAnObject("a number"))
    }

    fn visit_f64<E>(self, _: f64) -> Result<Parsed, E> {
        Ok(Parsed::NotAnObject("a number"))
    }

    fn visit_str<E>(self, _: &str) -> Result<Parsed, E> {
        Ok(Parsed::NotAnObject("a string"))
    }

    fn visit_unit<E>(self) -> Result<Parsed, E> {
        Ok(Parsed::NotAnObject("null"))
    }
}

/// Reads one field's value: a string kept, anything else named and skipped.
struct SlotVisitor;

impl<'de> Visitor<'de> for SlotVisitor {
    type Value = Slot;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a JSON value")
    }

    fn visit_str<E>(self, s: &str) -> Result<Slot, E> {
        Ok(Slot::Str(s.to_owned()))
    }

    fn visit_string<E>(self, s: String) -> Result<Slot, E> {
        Ok(Slot::Str(s))
    }

    fn visit_unit<E>(self) -> Result<Slot, E> {
        Ok(Slot::Null)
    }

    fn visit_bool<E>(self, _: bool) -> Result<Slot, E> {
        Ok(Slot::Other("a boolean"))
    }

    fn visit_i64<E>(self, _: i64) -> Result<Slot, E> {
        Ok(Slot::Other("a number"))
    }

    fn visit_u64<E>(self, _: u64) -> Result<Slot, E> {
        Ok(Slot::Other("a number"))
    }

    fn visit_f64<E>(self, _: f64) -> Result<Slot, E> {
        Ok(Slot::Other("a number"))
    }

    fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<Slot, A::Error> {
        skip_seq(seq).map(Slot::Other)
    }

    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Slot, A::Error> {
        Skip.visit_map(map).map(|_| Slot::Other("an object"))
    }
}

/// Reads an array through (its JSON checked, its values dropped): "an array".
fn skip_seq<'de, A: SeqAccess<'de>>(mut seq: A) -> Result<&'static str, A::Error> {
    while seq.next_element::<Skip>()?.is_some() {}
    Ok("an array")
}

/// A value read through and dropped. Unlike serde's `IgnoredAny` (which serde_json skips
/// without reading numbers), numbers are read, so one out of range is the same error as
/// for a `Value`.
struct Skip;

impl<'de> Deserialize<'de> for Skip {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(Skip)
    }
}

impl<'de> Visitor<'de> for Skip {
    type Value = Skip;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a JSON value")
    }

    fn visit_str<E>(self, _: &str) -> Result<Skip, E> {
        Ok(Skip)
    }

    fn visit_unit<E>(self) -> Result<Skip, E> {
        Ok(Skip)
    }

    fn visit_bool<E>(self, _: bool) -> Result<Skip, E> {
        Ok(Skip)
    }

    fn visit_i64<E>(self, _: i64) -> Result<Skip, E> {
        Ok(Skip)
    }

    fn visit_u64<E>(self, _: u64) -> Result<Skip, E> {
        Ok(Skip)
    }

    fn visit_f64<E>(self, _: f64) -> Result<Skip, E> {
        Ok(Skip)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<Skip, A::Error> {
        skip_seq(seq).map(|_| Skip)
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Skip, A::Error> {
        while map.next_entry::<IgnoredAny, Skip>()?.is_some() {}
        Ok(Skip)
    }
}
