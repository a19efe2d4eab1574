//! What a store forgets: its retention policy, the time an expiry goes by, and durations
//! as people write them ("90d").

use std::fmt;
use std::str::FromStr;

/// Which time of a document an expiry compares.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub enum TimeField {
    /// When it was stored ([`crate::StoredDoc::time`]).
    #[default]
    Stored,
    /// When it was last written or seen ([`crate::StoredDoc::seen`]).
    Seen,
}

impl TimeField {
    /// The time of a document that this field names.
    pub fn of(self, doc: &crate::StoredDoc) -> u64 {
        match self {
            TimeField::Stored => doc.time,
            TimeField::Seen => doc.seen,
        }
    }

    /// The name used on the command line and over HTTP: `stored` or `seen`.
    pub fn name(self) -> &'static str {
        match self {
            TimeField::Stored => "stored",
            TimeField::Seen => "seen",
        }
    }
}

impl FromStr for TimeField {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "stored" => Ok(TimeField::Stored),
            "seen" | "last-seen" => Ok(TimeField::Seen),
            _ => Err(format!("{s:?} is not a time: use `stored` or `seen`")),
        }
    }
}

/// A store's retention settings, kept in its `meta` (see
/// [`crate::Store::set_retention`]).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Retention {
    /// Whether a check that finds a stored document as the duplicate of a new page
    /// refreshes that document's last-seen time ([`crate::StoredDoc::seen`]).
    pub track_seen: bool,
    /// Documents older than this many seconds are expired by `serve` and long imports in
    /// the background; `None` keeps everything.
    pub retain_secs: Option<u64>,
    /// The time `retain_secs` is counted from.
    pub by: TimeField,
}

/// A duration as people write it: a number and a unit, `s`, `m`, `h`, `d` or `w` ("90d",
/// "12h"), or seconds alone. Parsed into seconds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Duration(pub u64);

impl FromStr for Duration {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, String> {
        let t = s.trim();
        let split = t.find(|c: char| !c.is_ascii_digit()).unwrap_or(t.len());
        let (digits, unit) = t.split_at(split);
        let bad = || format!("{s:?} is not a duration: write e.g. 90d, 12h, 30m or 3600s");
        let n: u64 = digits.parse().map_err(|_| bad())?;
        let scale = match unit {
            "" | "s" => 1,
            "m" => 60,
            "h" => 3_600,
            "d" => 86_400,
            "w" => 7 * 86_400,
            _ => return Err(bad()),
        };
        n.checked_mul(scale).map(Duration).ok_or_else(bad)
    }
}

impl fmt::Display for Duration {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let s = self.0;
        for (unit, n) in [("w", 7 * 86_400), ("d", 86_400), ("h", 3_600), ("m", 60)] {
            if s > 0 && s.is_multiple_of(n) {
                return write!(f, "{}{unit}", s / n);
            }
        }
        write!(f, "{s}s")
    }
}

/// A point in time as people write it, in seconds since the Unix epoch: RFC 3339 in UTC
/// (`2026-01-01T00:00:00Z`, or a date alone, `2026-01-01`, its midnight) or the seconds.
pub fn parse_time(s: &str) -> Result<u64, String> {
    let t = s.trim();
    if let Ok(secs) = t.parse::<u64>() {
        return Ok(secs);
    }
    let full = if t.len() == 10 {
        format!("{t}T00:00:00Z")
    } else {
        t.to_owned()
    };
    humantime::parse_rfc3339(&full)
        .ok()
        .and_then(|time| time.duration_since(std::time::UNIX_EPOCH).ok())
        .map(|d| d.as_secs())
        .ok_or_else(|| {
            format!("{s:?} is not a time: write 2026-01-01T00:00:00Z, 2026-01-01 or Unix seconds")
        })
}

/// A time in seconds since the Unix epoch as RFC 3339 in UTC (`2026-01-01T00:00:00Z`).
pub fn format_time(secs: u64) -> String {
    // RFC 3339 ends with the year 9999 (and humantime with it); a later time, a mistake or a
    // far cutoff, is written as its seconds.
    const LAST: u64 = 253_402_300_799;
    match secs {
        0..=LAST => {
            let t = std::time::UNIX_EPOCH + std::time::Duration::from_secs(secs);
            humantime::format_rfc3339_seconds(t).to_string()
        }
        _ => format!("{secs} (Unix seconds, after 9999-12-31T23:59:59Z)"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_parse_and_print() {
        assert_eq!("90d".parse::<Duration>().unwrap().0, 90 * 86_400);
        assert_eq!("12h".parse::<Duration>().unwrap().0, 43_200);
        assert_eq!("3600".parse::<Duration>().unwrap().0, 3_600);
        assert_eq!("2w".parse::<Duration>().unwrap().0, 14 * 86_400);
        for bad in ["", "d", "9x", "-1d", "1.5d", "99999999999999999999d"] {
            assert!(bad.parse::<Duration>().is_err(), "{bad}");
        }
        assert_eq!(Duration(90 * 86_400).to_string(), "90d");
        assert_eq!(Duration(14 * 86_400).to_string(), "2w");
        assert_eq!(Duration(61).to_string(), "61s");
        assert_eq!(Duration(0).to_string(), "0s");
    }

    #[test]
    fn times_after_the_year_9999_print_as_seconds() {
        assert_eq!(format_time(253_402_300_799), "9999-12-31T23:59:59Z");
        for secs in [253_402_300_800, u64::MAX] {
            assert_eq!(
                format_time(secs),
                format!("{secs} (Unix seconds, after 9999-12-31T23:59:59Z)")
            );
        }
    }

    #[test]
    fn times_parse_and_print() {
        assert_eq!(parse_time("1970-01-02T00:00:00Z").unwrap(), 86_400);
        assert_eq!(parse_time("2026-01-01").unwrap(), 1_767_225_600);
        assert_eq!(parse_time("1767225600").unwrap(), 1_767_225_600);
        assert_eq!(format_time(1_767_225_600), "2026-01-01T00:00:00Z");
        assert_eq!(format_time(0), "1970-01-01T00:00:00Z");
        assert_eq!(format_time(951_782_400), "2000-02-29T00:00:00Z");
        assert_eq!(format_time(4_107_542_399), "2100-02-28T23:59:59Z");
        for bad in ["", "yesterday", "2026-13-01", "2026-01-01T00:00:00"] {
            assert!(parse_time(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn time_fields_parse() {
        assert_eq!("seen".parse::<TimeField>().unwrap(), TimeField::Seen);
        assert_eq!("stored".parse::<TimeField>().unwrap(), TimeField::Stored);
        assert!("first".parse::<TimeField>().is_err());
    }
}
