//! `dedup --keep`: which record of a cluster survives. The clustering runs over the records
//! in the policy's order (the longest first, the newest first, ...; ties in input order), so
//! the record a cluster forms around is the one the policy prefers, and a record joins the
//! nearest record before it in that order, as it joins the nearest earlier one by default.

use std::cmp::Ordering;
use std::fmt;

use serde::de::{DeserializeSeed, IgnoredAny, MapAccess, Visitor};

use super::timestamp;
use crate::cli::input::Raw;

/// Which record of a cluster a dedup keeps.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Keep {
    /// The first in input order (the default).
    First,
    /// The one with the longest text (in characters).
    Longest,
    /// The one whose FIELD sorts last (numbers, ISO 8601 timestamps as instants, other
    /// strings after them as text).
    Newest(String),
    /// The one whose FIELD sorts first.
    Oldest(String),
    /// None: every member of a cluster of two or more is dropped.
    None,
}

impl Keep {
    /// Parses `first`, `longest`, `newest:FIELD`, `oldest:FIELD` or `none`.
    pub fn parse(s: &str) -> Result<Self, String> {
        let field = |f: &str| match f {
            "" => Err(format!("--keep {s}: name the field, e.g. `{s}timestamp`")),
            f => Ok(f.to_owned()),
        };
        match s.split_once(':') {
            None if s == "first" => Ok(Keep::First),
            None if s == "longest" => Ok(Keep::Longest),
            None if s == "none" => Ok(Keep::None),
            Some(("newest", f)) => field(f).map(Keep::Newest),
            Some(("oldest", f)) => field(f).map(Keep::Oldest),
            _ => Err(format!(
                "--keep {s}: expected first, longest, newest:FIELD, oldest:FIELD or none"
            )),
        }
    }

    /// The JSONL field the policy reads, if any.
    pub fn field(&self) -> Option<&str> {
        match self {
            Keep::Newest(f) | Keep::Oldest(f) => Some(f),
            _ => None,
        }
    }

    /// Whether records must be ranked (the policy is not input order).
    pub fn ranks(&self) -> bool {
        matches!(self, Keep::Longest | Keep::Newest(_) | Keep::Oldest(_))
    }

    /// The rank of an input item before its record is read: the policy's field of a JSONL
    /// line ([`field_rank`]), [`Rank::Missing`] of another item, [`Rank::Unranked`] when
    /// the policy reads no field ([`Keep::rank_text`] then ranks the record).
    pub fn rank_item(&self, raw: &Raw) -> Rank {
        match (raw, self.field()) {
            (Raw::Json(line), Some(field)) => field_rank(line, field),
            (_, Some(_)) => Rank::Missing,
            (_, None) => Rank::Unranked,
        }
    }

    /// `rank` of a record whose text is `text`: under `longest`, the text's length in
    /// characters.
    pub fn rank_text(&self, rank: Rank, text: Option<&str>) -> Rank {
        match self {
            Keep::Longest => Rank::Len(text.map_or(0, |t| t.chars().count() as u64)),
            _ => rank,
        }
    }
}

impl fmt::Display for Keep {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Keep::First => f.write_str("first"),
            Keep::Longest => f.write_str("longest"),
            Keep::Newest(field) => write!(f, "newest:{field}"),
            Keep::Oldest(field) => write!(f, "oldest:{field}"),
            Keep::None => f.write_str("none"),
        }
    }
}

/// What a record is ranked by: its text's length, or its field's value.
#[derive(Debug, Clone, PartialEq)]
pub enum Rank {
    /// Not ranked (the policy is input order).
    Unranked,
    /// Characters of the text.
    Len(u64),
    /// A number, or an ISO 8601 timestamp as Unix seconds.
    Num(f64),
    /// A string that is no timestamp (or another JSON value, as written).
    Str(String),
    /// The field is missing or null.
    Missing,
}

impl Rank {
    /// The rank of a string value: an ISO 8601 timestamp as its instant
    /// ([`timestamp::seconds`]), any other string as itself.
    pub fn of_text(s: String) -> Rank {
        timestamp::seconds(&s).map_or(Rank::Str(s), Rank::Num)
    }

    /// Values in ascending order: numbers before strings; [`Rank::Missing`] is placed by
    /// [`order`], never compared here.
    fn cmp_value(&self, other: &Rank) -> Ordering {
        match (self, other) {
            (Rank::Len(a), Rank::Len(b)) => a.cmp(b),
            (Rank::Num(a), Rank::Num(b)) => a.total_cmp(b),
            (Rank::Str(a), Rank::Str(b)) => a.cmp(b),
            (Rank::Num(_), Rank::Str(_)) => Ordering::Less,
            (Rank::Str(_), Rank::Num(_)) => Ordering::Greater,
            _ => Ordering::Equal,
        }
    }
}

/// The records in the policy's order (positions into `ranks`): the preferred first; a
/// record without the field after every record with it; ties in input order. `None` for
/// the policies in input order (`first`, `none`). Warns on stderr when no record has the
/// policy's field (a misspelt name): the order is then the input's.
pub fn order(keep: &Keep, ranks: &[Rank]) -> Option<Vec<u32>> {
    let descending = matches!(keep, Keep::Longest | Keep::Newest(_));
    if !keep.ranks() {
        return None;
    }
    if let Some(field) = keep.field()
        && !ranks.is_empty()
        && ranks.iter().all(|r| *r == Rank::Missing)
    {
        eprintln!(
            "warning: --keep {keep}: no record has the field {field:?}, so records are kept in \
             input order; check the field's name"
        );
    }
    let mut order: Vec<u32> = (0..ranks.len() as u32).collect();
    order.sort_by(|&a, &b| {
        let (x, y) = (&ranks[a as usize], &ranks[b as usize]);
        match (x == &Rank::Missing, y == &Rank::Missing) {
            (true, true) => Ordering::Equal,
            (true, false) => Ordering::Greater,
            (false, true) => Ordering::Less,
            _ if descending => y.cmp_value(x),
            _ => x.cmp_value(y),
        }
    });
    Some(order)
}

/// The rank of a JSONL line by `field` (its top-level value), reading nothing else of the
/// record into memory. A line that is no JSON object ranks [`Rank::Missing`] (reading the
/// record reports it).
pub fn field_rank(line: &[u8], field: &str) -> Rank {
    let mut de = serde_json::Deserializer::from_slice(line);
    serde::Deserializer::deserialize_map(&mut de, FieldSeed(field)).unwrap_or(Rank::Missing)
}

/// Finds one field of a JSON object, skipping the others.
struct FieldSeed<'f>(&'f str);

impl<'de> Visitor<'de> for FieldSeed<'_> {
    type Value = Rank;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a JSON object")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Rank, A::Error> {
        let mut rank = Rank::Missing;
        while let Some(key) = map.next_key::<std::borrow::Cow<'de, str>>()? {
            if key == self.0 {
                rank = match map.next_value::<serde_json::Value>()? {
                    serde_json::Value::Null => Rank::Missing,
                    serde_json::Value::Number(n) => n.as_f64().map_or(Rank::Missing, Rank::Num),
                    serde_json::Value::String(s) => Rank::of_text(s),
                    other => Rank::Str(other.to_string()),
                };
            } else {
                map.next_value::<IgnoredAny>()?;
            }
        }
        Ok(rank)
    }
}

impl<'de> DeserializeSeed<'de> for FieldSeed<'_> {
    type Value = Rank;

    fn deserialize<D: serde::Deserializer<'de>>(self, d: D) -> Result<Rank, D::Error> {
        d.deserialize_map(self)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn policies_parse_and_print_back() {
        for s in ["first", "longest", "none", "newest:ts", "oldest:date"] {
            assert_eq!(Keep::parse(s).unwrap().to_string(), s);
        }
        for bad in ["", "last", "newest", "newest:", "oldest:", "longest:x"] {
            assert!(Keep::parse(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn a_field_is_read_from_its_line() {
        let line = br#"{"text":"a \"b\"","nested":{"ts":1},"ts":"2024-05-01","n":3}"#;
        assert_eq!(field_rank(line, "ts"), Rank::Num(1_714_521_600.0));
        assert_eq!(field_rank(line, "n"), Rank::Num(3.0));
        assert_eq!(field_rank(line, "none"), Rank::Missing);
        assert_eq!(field_rank(br#"{"ts":null}"#, "ts"), Rank::Missing);
        assert_eq!(field_rank(b"[1,2]", "ts"), Rank::Missing);
        assert_eq!(field_rank(b"not json", "ts"), Rank::Missing);
    }

    /// Timestamps of other zones and precisions are ordered by their instants, as a
    /// trial found they were not (as text, "…00Z" sorted after "…00.500Z").
    #[test]
    fn timestamps_are_ordered_by_their_instants() {
        let ranks: Vec<Rank> = [
            "2024-01-01T00:00:00Z",
            "2024-01-01T00:00:00.500Z",
            "2024-01-01T10:00:00+05:00",
            "2024-01-01T06:00:00Z",
            "2024-01-01 13:00:00",
            "2024-01-01T12:00:00Z",
        ]
        .map(|s| Rank::of_text(s.into()))
        .into();
        let newest = Keep::Newest("ts".into());
        assert_eq!(order(&newest, &ranks).unwrap(), [4, 5, 3, 2, 1, 0]);
    }

    #[test]
    fn orders_put_the_preferred_first_missing_last_ties_in_input_order() {
        let lens = [Rank::Len(3), Rank::Len(9), Rank::Len(3), Rank::Len(9)];
        assert_eq!(order(&Keep::Longest, &lens).unwrap(), [1, 3, 0, 2]);
        let keys = [
            Rank::Str("2021".into()),
            Rank::Missing,
            Rank::Str("2023".into()),
            Rank::Num(5.0),
            Rank::Str("2021".into()),
        ];
        let newest = Keep::Newest("ts".into());
        assert_eq!(order(&newest, &keys).unwrap(), [2, 0, 4, 3, 1]);
        let oldest = Keep::Oldest("ts".into());
        assert_eq!(order(&oldest, &keys).unwrap(), [3, 0, 4, 2, 1]);
        assert!(order(&Keep::First, &keys).is_none());
        assert!(order(&Keep::None, &keys).is_none());
    }
}
