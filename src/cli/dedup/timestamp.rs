//! ISO 8601 timestamps as instants, for `--keep newest:FIELD` / `oldest:FIELD`: two
//! timestamps of one instant written with other zones or precisions rank equal, where
//! their strings would sort apart ("…T00:00:00Z" before "…T00:00:00.500Z" as text).

/// The instant an ISO 8601 / RFC 3339 timestamp names, as Unix seconds: a date
/// (`2024-01-31`), optionally with a time (`T` or a space, `HH:MM`, `:SS`, a fraction)
/// and a zone (`Z`, `±HH:MM`, `±HHMM`, `±HH`; none is UTC). `None` for any other string.
pub fn seconds(s: &str) -> Option<f64> {
    let b = s.trim().as_bytes();
    let (y, m, d) = (digits(b, 0, 4)?, digits(b, 5, 2)?, digits(b, 8, 2)?);
    if b.get(4) != Some(&b'-')
        || b.get(7) != Some(&b'-')
        || !(1..=12).contains(&m)
        || !(1..=31).contains(&d)
    {
        return None;
    }
    let date = days_from_civil(y, m, d) as f64 * 86_400.0;
    match b.get(10) {
        None => Some(date),
        Some(b'T' | b't' | b' ') => Some(date + time_of_day(&b[11..])?),
        Some(_) => None,
    }
}

/// Seconds since midnight UTC of `HH:MM[:SS[.fraction]][zone]`.
fn time_of_day(b: &[u8]) -> Option<f64> {
    let (h, min) = (digits(b, 0, 2)?, digits(b, 3, 2)?);
    if b.get(2) != Some(&b':') || h > 23 || min > 59 {
        return None;
    }
    let mut secs = (h * 3600 + min * 60) as f64;
    let mut i = 5;
    if b.get(i) == Some(&b':') {
        let sec = digits(b, i + 1, 2).filter(|&s| s <= 60)?;
        secs += sec as f64;
        i += 3;
        if matches!(b.get(i), Some(b'.' | b',')) {
            let n = b[i + 1..].iter().take_while(|c| c.is_ascii_digit()).count();
            let fraction = std::str::from_utf8(&b[i + 1..i + 1 + n]).ok()?;
            secs += format!("0.{fraction}")
                .parse::<f64>()
                .ok()
                .filter(|_| n > 0)?;
            i += 1 + n;
        }
    }
    Some(secs - zone_offset(&b[i..])?)
}

/// The offset east of UTC, in seconds, of a zone: none or `Z` 0, `±HH`, `±HHMM`, `±HH:MM`.
fn zone_offset(b: &[u8]) -> Option<f64> {
    let (sign, rest) = match b {
        [] | [b'Z' | b'z'] => return Some(0.0),
        [b'+', rest @ ..] => (1.0, rest),
        [b'-', rest @ ..] => (-1.0, rest),
        _ => return None,
    };
    let (h, m) = match rest.len() {
        2 => (digits(rest, 0, 2)?, 0),
        4 => (digits(rest, 0, 2)?, digits(rest, 2, 2)?),
        5 if rest[2] == b':' => (digits(rest, 0, 2)?, digits(rest, 3, 2)?),
        _ => return None,
    };
    Some(sign * (h * 3600 + m * 60) as f64)
}

/// The number written by the `len` ASCII digits at `at`, if they are all digits.
fn digits(b: &[u8], at: usize, len: usize) -> Option<i64> {
    let d = b.get(at..at + len)?;
    d.iter()
        .all(u8::is_ascii_digit)
        .then(|| d.iter().fold(0, |n, c| n * 10 + i64::from(c - b'0')))
}

/// Days since 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's
/// `days_from_civil`; a day past its month's end counts on into the next).
fn days_from_civil(y: i64, m: i64, d: i64) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let doy = (153 * (if m > 2 { m - 3 } else { m + 9 }) + 2) / 5 + d - 1;
    era * 146_097 + yoe * 365 + yoe / 4 - yoe / 100 + doy - 719_468
}

#[cfg(test)]
mod tests {
    use super::seconds;

    #[test]
    fn one_instant_written_several_ways_is_one_number() {
        let midnight = seconds("2024-01-01").unwrap();
        assert_eq!(midnight, 1_704_067_200.0);
        for same in [
            "2024-01-01T00:00:00Z",
            "2024-01-01 00:00",
            "2024-01-01T05:00:00+05:00",
            "2023-12-31T19:00-0500",
            "2024-01-01t00:00:00.000z",
        ] {
            assert_eq!(seconds(same), Some(midnight), "{same}");
        }
        assert_eq!(seconds("2024-01-01T00:00:00.500Z"), Some(midnight + 0.5));
        assert_eq!(seconds("1969-12-31T23:59:59Z"), Some(-1.0));
        assert_eq!(
            seconds("2024-03-01"),
            Some(midnight + 60.0 * 86_400.0),
            "2024 is a leap year"
        );
        for not in [
            "2024",
            "2024-1-01",
            "2024-13-01",
            "2024-01-01T",
            "2024-01-01T25:00",
            "2024-01-01 00:00:00.",
            "2024-01-01T00:00+5",
            "yesterday",
            "2024-01-01x",
        ] {
            assert_eq!(seconds(not), None, "{not}");
        }
    }
}
