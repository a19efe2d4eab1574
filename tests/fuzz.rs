//! Fuzzing on stable Rust.
//!
//! proptest feeds arbitrary and near-valid input into every parser of outside input
//! (`reader::parse_jsonl`, `reader::Lines`, `Fingerprint::from_str`, the `codec` decoders,
//! `Fingerprinter::fingerprint`, `archive::Records` for WARC) and checks each against an independent oracle; plain
//! loops over a fast seeded RNG do the same at millions of cases per minute; random
//! sequences of store operations are compared with an in-memory model.
//!
//! Case counts are small by default (the module takes seconds). `SIMSTORE_FUZZ_CASES=N`
//! multiplies every case count by N (the long mode), e.g.
//! `SIMSTORE_FUZZ_CASES=100 cargo test --release --test tests fuzz -- --nocapture`.
//! Every test prints the cases it ran. The plain loops print their seed; a failure
//! prints the seed and the case number, and `SIMSTORE_FUZZ_SEED=S SIMSTORE_FUZZ_CASE=I`
//! reruns only that case. proptest failures print the shrunk input (failure files are
//! not written).

use std::collections::BTreeMap;
use std::fmt::Debug;
use std::io::{BufReader, Read};
use std::sync::OnceLock;
use std::time::Instant;

use proptest::collection::vec;
use proptest::prelude::*;
use proptest::sample::{Index, select};
use proptest::strategy::ValueTree;
use proptest::test_runner::{Config, TestRunner};
use serde_json::{Map, Number, Value};
use simstore::RocksOptions;
use simstore::input::reader::{Lines, Record, RecordError, Restore, parse_jsonl};
use simstore::store::codec::{self, Manifest};
use simstore::types::document::MAX_ID_BYTES;
use simstore::{
    CheckOutcome, DocMeta, Entry, Error, Fingerprint, FingerprintSpec, Fingerprinter,
    InsertOutcome, Layout, Store, StoredDoc,
};

use crate::fuzz_corpus::checks::escapes_decoded;
use crate::util::{brute_force, shape};

// ---------------------------------------------------------------------------------------
// Case counts and runners
// ---------------------------------------------------------------------------------------

/// The multiplier of every case count: `SIMSTORE_FUZZ_CASES`, default 1.
fn multiplier() -> u64 {
    static M: OnceLock<u64> = OnceLock::new();
    *M.get_or_init(|| match std::env::var("SIMSTORE_FUZZ_CASES") {
        Ok(v) => v
            .trim()
            .parse::<u64>()
            .ok()
            .filter(|&n| n > 0)
            .unwrap_or_else(|| {
                panic!("SIMSTORE_FUZZ_CASES must be a positive integer multiplier, got {v:?}")
            }),
        Err(_) => 1,
    })
}

fn scaled(base: u64) -> u64 {
    base.saturating_mul(multiplier())
}

/// Runs a proptest property for `base_cases × multiplier` cases and prints the count.
fn run_prop<S: Strategy>(
    name: &str,
    base_cases: u32,
    strategy: S,
    test: impl Fn(S::Value) -> Result<(), TestCaseError>,
) {
    let cases = scaled(u64::from(base_cases)).min(u64::from(u32::MAX)) as u32;
    let config = Config {
        cases,
        failure_persistence: None,
        max_shrink_iters: 4096,
        ..Config::default()
    };
    let start = Instant::now();
    let mut runner = TestRunner::new(config);
    if let Err(e) = runner.run(&strategy, test) {
        panic!("fuzz {name}: {e}");
    }
    eprintln!(
        "fuzz {name}: {cases} proptest cases in {:.2?}",
        start.elapsed()
    );
}

/// A small, fast RNG (SplitMix64) for the plain loops.
struct Fast(u64);

impl Fast {
    fn new(seed: u64) -> Self {
        Self(seed)
    }

    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform in `0..n` (n > 0).
    fn below(&mut self, n: usize) -> usize {
        ((u128::from(self.next()) * n as u128) >> 64) as usize
    }

    fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[self.below(items.len())]
    }

    fn chance(&mut self, one_in: usize) -> bool {
        self.below(one_in) == 0
    }

    /// A u64 biased towards edge values.
    fn edgy_u64(&mut self) -> u64 {
        match self.below(8) {
            0 => *self.pick(&[0, 1, u64::MAX, u64::MAX - 1, 1 << 63, (1 << 63) - 1]),
            1 => self.next() & 0xff,
            2 => self.next() >> self.below(64),
            _ => self.next(),
        }
    }
}

fn loop_seed() -> u64 {
    static SEED: OnceLock<u64> = OnceLock::new();
    *SEED.get_or_init(|| match std::env::var("SIMSTORE_FUZZ_SEED") {
        Ok(v) => v
            .trim()
            .parse()
            .unwrap_or_else(|_| panic!("SIMSTORE_FUZZ_SEED must be a u64, got {v:?}")),
        Err(_) => {
            let nanos = std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map(|d| d.as_nanos() as u64)
                .unwrap_or(0);
            Fast::new(nanos ^ u64::from(std::process::id())).next()
        }
    })
}

/// Prints how to rerun the current case if the loop body panics.
struct CaseGuard<'a> {
    name: &'a str,
    seed: u64,
    case: u64,
}

impl Drop for CaseGuard<'_> {
    fn drop(&mut self) {
        if std::thread::panicking() {
            eprintln!(
                "fuzz loop {} failed at case {}; rerun it alone with SIMSTORE_FUZZ_SEED={} SIMSTORE_FUZZ_CASE={}",
                self.name, self.case, self.seed, self.case
            );
        }
    }
}

/// Runs `base × multiplier` cases of `body` (which returns how many parser calls it made),
/// each with its own RNG derived from the seed and the case number, and prints the counts.
fn run_loop(name: &str, base: u64, mut body: impl FnMut(&mut Fast) -> u64) {
    let seed = loop_seed();
    let only: Option<u64> = std::env::var("SIMSTORE_FUZZ_CASE")
        .ok()
        .and_then(|v| v.trim().parse().ok());
    let range = match only {
        Some(i) => i..i + 1,
        None => 0..scaled(base),
    };
    let cases = range.end - range.start;
    let start = Instant::now();
    let mut calls = 0u64;
    for case in range {
        let guard = CaseGuard { name, seed, case };
        let mut rng = Fast::new(seed ^ case.wrapping_mul(0xD1B5_4A32_D192_ED03));
        rng.next();
        calls += body(&mut rng);
        drop(guard);
    }
    let secs = start.elapsed().as_secs_f64();
    eprintln!(
        "fuzz loop {name}: {cases} inputs, {calls} parser calls in {secs:.2} s ({:.0} calls/s), SIMSTORE_FUZZ_SEED={seed}",
        calls as f64 / secs.max(1e-9)
    );
}

/// Draws one value of `strategy` (for the pools of the plain loops).
fn sample<S: Strategy>(strategy: &S, runner: &mut TestRunner) -> S::Value {
    strategy
        .new_tree(runner)
        .expect("strategy generates")
        .current()
}

// ---------------------------------------------------------------------------------------
// Input material
// ---------------------------------------------------------------------------------------

/// Awkward pieces of text: JSON syntax, escapes, controls, NFKC expansions, case mappings
/// that change length, combining marks, bidi and zero-width characters, every Han block,
/// astral characters, noncharacters.
const PIECES: &[&str] = &[
    "a",
    "Z",
    "0",
    "9",
    " ",
    "\t",
    "\n",
    "\r",
    "\r\n",
    "\0",
    "\u{1}",
    "\u{1f}",
    "\u{7f}",
    "\"",
    "\\",
    "/",
    "{",
    "}",
    "[",
    "]",
    ",",
    ":",
    "中",
    "文",
    "北京",
    "天气很好",
    "我们去公园散步",
    "。",
    "，",
    "！",
    "\u{3000}",
    "Ａ",
    "１",
    "ｱ",
    "\u{ff61}",
    "é",
    "e\u{301}",
    "\u{301}",
    "\u{345}",
    "İ",
    "ß",
    "ẞ",
    "Σ",
    "ς",
    "ﬁ",
    "\u{fdfa}",
    "\u{3392}",
    "\u{2460}",
    "½",
    "\u{200b}",
    "\u{200d}",
    "\u{feff}",
    "\u{202e}",
    "\u{2028}",
    "\u{2029}",
    "\u{1f600}",
    "\u{1f468}\u{200d}\u{1f469}",
    "\u{10ffff}",
    "\u{fffe}",
    "\u{e000}",
    "\u{f900}",
    "\u{fa6d}",
    "\u{2f800}",
    "\u{3400}",
    "\u{20000}",
    "\u{2a700}",
    "\u{3134a}",
    "\u{e01}",
    "\u{627}",
    "\u{5d0}",
    "\u{915}\u{94d}",
    "한국어",
    "\u{1100}\u{1161}",
    "ǅ",
    "Ⅻ",
    "㊿",
    "\u{1d400}",
    "𝟘",
    "١٢٣",
    "\u{fffd}",
    "\u{85}",
    "\u{9f}",
    "\u{1e9e}",
    "\u{130}\u{307}",
    "hello",
    "World",
    "2026",
    "Hello, world!",
    "",
    "\\u0000",
    "\\ud800",
    "\\udc00\\ud800",
    "\\\"",
];

/// Byte sequences that are not UTF-8 (or not JSON), spliced into otherwise valid input.
const SPLICES: &[&[u8]] = &[
    b"\xff",
    b"\xfe",
    b"\x80",
    b"\xc0\x80",
    b"\xc3",
    b"\xe4\xb8",
    b"\xed\xa0\x80",
    b"\xed\xbf\xbf",
    b"\xf4\x90\x80\x80",
    b"\xf8\x88\x80\x80\x80",
    b"\0",
    b"\n",
    b"\r",
    b"\"",
    b"\\",
    b"{",
    b"}",
    b"[",
    b"]",
    b",",
    b":",
    b"\\u0000",
    b"\\ud800",
    b"\\udfff",
    b"\\uZZZZ",
    b"1e999",
    b"-0",
    b"18446744073709551616",
    b"null",
    b"true",
    b"\"id\":",
    b"\"fp\":\"0123456789abcdef\"",
    b"\"id\":\"dup\",",
    b"\xef\xbb\xbf",
];

fn odd_string() -> impl Strategy<Value = String> {
    prop_oneof![
        3 => any::<String>(),
        3 => vec(select(PIECES), 0..24).prop_map(|v| v.concat()),
        1 => (select(PIECES), 0usize..3000).prop_map(|(p, n)| p.repeat(n)),
        2 => "[a-z0-9 ]{0,12}",
    ]
}

/// Ids around the 4096-byte limit, in characters of 1 to 4 bytes.
fn boundary_id() -> impl Strategy<Value = String> {
    (select(&["a", "é", "中", "😀"][..]), -2i64..=2).prop_map(|(c, d)| {
        let n = (MAX_ID_BYTES as i64 / c.len() as i64 + d).max(0) as usize;
        c.repeat(n)
    })
}

fn json_value() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(Value::from),
        any::<u64>().prop_map(Value::from),
        any::<f64>().prop_filter_map("finite", |f| Number::from_f64(f).map(Value::Number)),
        odd_string().prop_map(Value::String),
    ];
    leaf.prop_recursive(3, 24, 4, |inner| {
        prop_oneof![
            vec(inner.clone(), 0..4).prop_map(Value::Array),
            vec(("[a-z]{0,3}", inner), 0..4).prop_map(|kv| Value::Object(kv.into_iter().collect())),
        ]
    })
}

/// Fingerprint strings: valid (either case) and near-valid ones.
fn fp_string() -> impl Strategy<Value = String> {
    prop_oneof![
        3 => any::<u64>().prop_map(|x| format!("{x:016x}")),
        1 => any::<u64>().prop_map(|x| format!("{x:016X}")),
        3 => "[0-9a-fA-FgGxX+\\- ]{14,18}",
        1 => (any::<u64>(), any::<Index>(), select(&["g", "é", "０", "\0", " ", "+", "-", "x"][..]))
            .prop_map(|(x, i, c)| {
                let mut s = format!("{x:016x}");
                let at = i.index(16);
                s.replace_range(at..at + 1, c);
                s
            }),
        1 => any::<String>(),
    ]
}

/// The fields of a JSONL record, in random order: the five known ones with the right or a
/// wrong type (or absent), plus unknown fields.
fn record_fields() -> impl Strategy<Value = Vec<(String, Value)>> {
    let id = prop_oneof![
        6 => odd_string().prop_map(|s| Some(Value::String(s))),
        2 => boundary_id().prop_map(|s| Some(Value::String(s))),
        1 => Just(Some(Value::String(String::new()))),
        1 => Just(None),
        2 => json_value().prop_map(Some),
    ];
    let text_like = || {
        prop_oneof![
            3 => Just(None),
            6 => odd_string().prop_map(|s| Some(Value::String(s))),
            1 => json_value().prop_map(Some),
        ]
    };
    let fp = prop_oneof![
        4 => Just(None),
        4 => fp_string().prop_map(|s| Some(Value::String(s))),
        1 => json_value().prop_map(Some),
    ];
    let extra = vec(
        (
            prop_oneof![3 => "[a-z_]{1,8}", 1 => odd_string()],
            json_value(),
        ),
        0..3,
    );
    (id, text_like(), text_like(), text_like(), fp, extra)
        .prop_map(|(id, title, text, url, fp, extra)| {
            let mut fields: Vec<(String, Value)> = extra;
            for (name, v) in [
                ("id", id),
                ("title", title),
                ("text", text),
                ("url", url),
                ("fp", fp),
            ] {
                if let Some(v) = v {
                    fields.push((name.to_string(), v));
                }
            }
            fields
        })
        .prop_shuffle()
}

/// How a record is written out as one line.
#[derive(Debug, Clone)]
struct Rendering {
    pretty: bool,
    /// A leading duplicate `"id"` member (the later one must win).
    dup_id: Option<Value>,
    lead: &'static str,
    trail: &'static str,
}

fn rendering() -> impl Strategy<Value = Rendering> {
    let ws = || select(&["", " ", "\t", "  \t ", "\r", "\n", "\r\n "][..]);
    (
        any::<bool>(),
        proptest::option::weighted(0.2, json_value()),
        ws(),
        ws(),
    )
        .prop_map(|(pretty, dup_id, lead, trail)| Rendering {
            pretty,
            dup_id,
            lead,
            trail,
        })
}

fn render(map: &Map<String, Value>, r: &Rendering) -> Vec<u8> {
    let value = Value::Object(map.clone());
    let body = if r.pretty {
        serde_json::to_string_pretty(&value).unwrap()
    } else {
        serde_json::to_string(&value).unwrap()
    };
    let body = match &r.dup_id {
        Some(dup) if map.contains_key("id") => format!("{{\"id\":{dup},{}", &body[1..]),
        _ => body,
    };
    format!("{}{body}{}", r.lead, r.trail).into_bytes()
}

/// A mutation of a byte string.
#[derive(Debug, Clone)]
enum Mutation {
    Flip(Index, u8),
    Set(Index, u8),
    Insert(Index, u8),
    Remove(Index),
    Truncate(Index),
    Splice(Index, &'static [u8]),
    Duplicate(Index, Index),
    /// Overwrites an ASCII byte with a JSON-significant one (keeps the input UTF-8).
    Ascii(Index, u8),
}

/// ASCII bytes that matter to JSON, for mutations that keep UTF-8 valid.
const JSON_ASCII: &[u8] = b"{}[]\":,\\ 0123456789.eE+-tfnul";

fn mutation() -> impl Strategy<Value = Mutation> {
    prop_oneof![
        2 => (any::<Index>(), 0u8..8).prop_map(|(i, b)| Mutation::Flip(i, b)),
        1 => (any::<Index>(), any::<u8>()).prop_map(|(i, b)| Mutation::Set(i, b)),
        1 => (any::<Index>(), any::<u8>()).prop_map(|(i, b)| Mutation::Insert(i, b)),
        2 => any::<Index>().prop_map(Mutation::Remove),
        1 => any::<Index>().prop_map(Mutation::Truncate),
        3 => (any::<Index>(), select(SPLICES)).prop_map(|(i, s)| Mutation::Splice(i, s)),
        1 => (any::<Index>(), any::<Index>()).prop_map(|(a, b)| Mutation::Duplicate(a, b)),
        6 => (any::<Index>(), select(JSON_ASCII)).prop_map(|(i, b)| Mutation::Ascii(i, b)),
    ]
}

fn apply(bytes: &mut Vec<u8>, m: &Mutation) {
    let len = bytes.len();
    match *m {
        Mutation::Flip(i, bit) if len > 0 => bytes[i.index(len)] ^= 1 << bit,
        Mutation::Set(i, b) if len > 0 => bytes[i.index(len)] = b,
        Mutation::Insert(i, b) => bytes.insert(i.index(len + 1), b),
        Mutation::Remove(i) if len > 0 => {
            bytes.remove(i.index(len));
        }
        Mutation::Truncate(i) => bytes.truncate(i.index(len + 1)),
        Mutation::Splice(i, s) => {
            let at = i.index(len + 1);
            bytes.splice(at..at, s.iter().copied());
        }
        Mutation::Duplicate(a, b) if len > 0 => {
            let (x, y) = (a.index(len), b.index(len));
            let (lo, hi) = (x.min(y), x.max(y) + 1);
            let copy = bytes[lo..hi].to_vec();
            bytes.splice(hi..hi, copy);
        }
        Mutation::Ascii(i, b) if len > 0 => {
            let at = i.index(len);
            if bytes[at].is_ascii() {
                bytes[at] = b;
            }
        }
        _ => {}
    }
}

/// The same mutations, driven by the fast RNG.
fn fast_mutate(rng: &mut Fast, bytes: &mut Vec<u8>) {
    let len = bytes.len();
    match rng.below(12) {
        8..12 if len > 0 => {
            let at = rng.below(len);
            if bytes[at].is_ascii() {
                bytes[at] = *rng.pick(JSON_ASCII);
            }
        }
        0 | 1 if len > 0 => bytes[rng.below(len)] ^= 1 << rng.below(8),
        2 if len > 0 => bytes[rng.below(len)] = rng.next() as u8,
        3 => bytes.insert(rng.below(len + 1), rng.next() as u8),
        4 if len > 0 => {
            let at = rng.below(len);
            let n = 1 + rng.below((len - at).min(8));
            bytes.drain(at..at + n);
        }
        5 => bytes.truncate(rng.below(len + 1)),
        6 if len > 0 => {
            let (x, y) = (rng.below(len), rng.below(len));
            let (lo, hi) = (x.min(y), x.max(y) + 1);
            let copy = bytes[lo..hi.min(lo + 64)].to_vec();
            bytes.splice(hi..hi, copy);
        }
        _ => {
            let at = rng.below(len + 1);
            let s = *rng.pick(SPLICES);
            bytes.splice(at..at, s.iter().copied());
        }
    }
}

// ---------------------------------------------------------------------------------------
// Oracles
// ---------------------------------------------------------------------------------------

fn json_kind(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// An independent hex decoder: exactly 16 ASCII hex digits.
fn hex16(s: &str) -> Option<u64> {
    // An optional `0x` / `0X` prefix, then exactly 16 hex digits.
    let s = s
        .strip_prefix("0x")
        .or_else(|| s.strip_prefix("0X"))
        .unwrap_or(s);
    if s.len() != 16 {
        return None;
    }
    s.bytes().try_fold(0u64, |acc, b| {
        let d = match b {
            b'0'..=b'9' => b - b'0',
            b'a'..=b'f' => b - b'a' + 10,
            b'A'..=b'F' => b - b'A' + 10,
            _ => return None,
        };
        Some(acc << 4 | u64::from(d))
    })
}

/// What `parse_jsonl` must return for a JSON object (the spec in reader.rs, re-implemented).
fn expected_from_object(obj: &Map<String, Value>) -> Result<Record, RecordError> {
    let string = |field: &'static str| -> Result<Option<String>, RecordError> {
        match obj.get(field) {
            None | Some(Value::Null) => Ok(None),
            Some(Value::String(s)) => Ok(Some(s.clone())),
            Some(other) => Err(RecordError::WrongType {
                field,
                expected: "a string",
                found: json_kind(other),
            }),
        }
    };
    // An id is a string or a number (as written); another type names the field.
    let id = match obj.get("id") {
        None | Some(Value::Null) => return Err(RecordError::MissingId),
        Some(Value::String(s)) => s.clone(),
        Some(Value::Number(n)) if n.is_i64() || n.is_u64() => n.to_string(),
        Some(Value::Number(_)) => {
            return Err(RecordError::Field {
                field: "id".into(),
                flag: "--id-field",
                problem: "must be a string or a whole number, found a fraction or an exponent"
                    .into(),
            });
        }
        Some(other) => {
            return Err(RecordError::Field {
                field: "id".into(),
                flag: "--id-field",
                problem: format!("must be a string or a number, found {}", json_kind(other)),
            });
        }
    };
    if id.is_empty() || id.len() > MAX_ID_BYTES {
        return Err(RecordError::InvalidId(String::new()));
    }
    let title = string("title")?;
    let text = string("text")?;
    let url = string("url")?;
    let fp = match string("fp")? {
        None => None,
        Some(s) => match hex16(&s) {
            Some(x) => Some(Fingerprint(x)),
            None => return Err(RecordError::InvalidFingerprint(s)),
        },
    };
    let restore = match fp {
        Some(_) => expected_restore(obj)?,
        None => None,
    };
    Ok(Record {
        id,
        title,
        text,
        url,
        left_out: None,
        fp,
        restore,
    })
}

/// The stored fields of an exported record with a fingerprint (reader/restore.rs's spec).
fn expected_restore(obj: &Map<String, Value>) -> Result<Option<Restore>, RecordError> {
    let number = |field: &'static str| match obj.get(field) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::Number(n)) => n.as_u64().map(Some).ok_or(RecordError::WrongType {
            field,
            expected: "an integer >= 0",
            found: "another number",
        }),
        Some(other) => Err(RecordError::WrongType {
            field,
            expected: "an integer >= 0",
            found: json_kind(other),
        }),
    };
    let hex = |field: &'static str, digits: usize| {
        let expected = if digits == 32 {
            "32 hexadecimal digits"
        } else {
            "128 hexadecimal digits"
        };
        match obj.get(field) {
            None | Some(Value::Null) => Ok(None),
            Some(Value::String(s))
                if s.len() == digits && s.bytes().all(|b| b.is_ascii_hexdigit()) =>
            {
                Ok(Some(
                    (0..digits)
                        .step_by(2)
                        .map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap())
                        .collect::<Vec<u8>>(),
                ))
            }
            Some(Value::String(_)) => Err(RecordError::WrongType {
                field,
                expected,
                found: "another string",
            }),
            Some(other) => Err(RecordError::WrongType {
                field,
                expected,
                found: json_kind(other),
            }),
        }
    };
    let r = Restore {
        length: number("length")?,
        times: match number("time")? {
            Some(t) => Some((t, number("seen")?.unwrap_or(t))),
            None => None,
        },
        content_hash: hex("content_hash", 32)?.map(|b| u128::from_be_bytes(b.try_into().unwrap())),
        sketch: hex("sketch", 128)?.map(|b| simstore::Sketch(b.try_into().unwrap())),
    };
    Ok((r != Restore::default()).then_some(r))
}

fn expected_jsonl(line: &[u8]) -> Result<Record, RecordError> {
    let text = std::str::from_utf8(line).map_err(|e| RecordError::InvalidUtf8 {
        offset: e.valid_up_to(),
    })?;
    if line.contains(&0) {
        return Err(RecordError::Binary);
    }
    // A line serde_json refuses is read again with each unpaired surrogate escape as
    // U+FFFD; an id that held one (it reads differently with another replacement) is refused.
    let read = |replacement| serde_json::from_str::<Value>(&escapes_decoded(text, replacement));
    let value = match serde_json::from_str::<Value>(text) {
        Err(e) => read('\u{fffd}').map_err(|_| RecordError::InvalidJson(e.to_string()))?,
        Ok(value) => value,
    };
    let Value::Object(obj) = value else {
        return Err(RecordError::NotAnObject(json_kind(&value)));
    };
    let record = expected_from_object(&obj)?;
    match read('\u{fffe}').ok().and_then(|v| v.get("id").cloned()) {
        Some(other) if Some(&other) != obj.get("id") => Err(RecordError::InvalidId(String::new())),
        _ => Ok(record),
    }
}

/// Compares a parse result with the expected one (error messages of `InvalidJson` and
/// `InvalidId` are not compared, only that they say something).
fn assert_same(
    got: &Result<Record, RecordError>,
    want: &Result<Record, RecordError>,
    input: &[u8],
) {
    let ok = match (got, want) {
        (Err(RecordError::InvalidJson(m)), Err(RecordError::InvalidJson(_)))
        | (Err(RecordError::InvalidId(m)), Err(RecordError::InvalidId(_))) => !m.is_empty(),
        _ => got == want,
    };
    assert!(
        ok,
        "parse_jsonl({:?})\n got  {got:?}\n want {want:?}",
        String::from_utf8_lossy(&input[..input.len().min(2000)])
    );
}

/// Checks `parse_jsonl` on `line` against the oracle; returns the outcome's name.
fn check_jsonl(line: &[u8]) -> &'static str {
    let got = parse_jsonl(line);
    assert_same(&got, &expected_jsonl(line), line);
    match &got {
        Ok(r) => assert!(!r.id.is_empty() && r.id.len() <= MAX_ID_BYTES),
        Err(e) => assert!(!e.to_string().is_empty()),
    }
    outcome(&got)
}

fn outcome(r: &Result<Record, RecordError>) -> &'static str {
    match r {
        Ok(_) => "Ok",
        Err(RecordError::InvalidUtf8 { .. }) => "InvalidUtf8",
        Err(RecordError::Binary) => "Binary",
        Err(RecordError::InvalidJson(_)) => "InvalidJson",
        Err(RecordError::NotAnObject(_)) => "NotAnObject",
        Err(RecordError::MissingId) => "MissingId",
        Err(RecordError::WrongType { .. }) => "WrongType",
        Err(RecordError::InvalidFingerprint(_)) => "InvalidFingerprint",
        Err(RecordError::InvalidId(_)) => "InvalidId",
        Err(_) => "other",
    }
}

/// Counts outcomes by name, to show what a generator reaches.
#[derive(Default)]
struct Tally(std::sync::Mutex<BTreeMap<&'static str, u64>>);

impl Tally {
    fn add(&self, what: &'static str) {
        *self.0.lock().unwrap().entry(what).or_default() += 1;
    }

    fn print(&self, name: &str) {
        eprintln!("fuzz {name} outcomes: {:?}", self.0.lock().unwrap());
    }
}

/// What `Lines::with_limit(input, max)` must return.
fn expected_lines(input: &[u8], max: usize) -> Vec<(u64, Result<Vec<u8>, RecordError>)> {
    let mut out = Vec::new();
    let mut rest = input;
    while !rest.is_empty() {
        let (raw, newline, next) = match rest.iter().position(|&b| b == b'\n') {
            Some(i) => (&rest[..i], true, &rest[i + 1..]),
            None => (rest, false, &rest[rest.len()..]),
        };
        // The limit counts the bytes before the `\n`, a `\r` included.
        let line = if raw.len() > max {
            Err(RecordError::TooLong { max })
        } else if newline && raw.last() == Some(&b'\r') {
            Ok(raw[..raw.len() - 1].to_vec())
        } else {
            Ok(raw.to_vec())
        };
        out.push((out.len() as u64 + 1, line));
        rest = next;
    }
    out
}

/// A reader that returns at most `chunk` bytes per call, like a pipe.
struct Chunky<'a> {
    data: &'a [u8],
    chunk: usize,
}

impl Read for Chunky<'_> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = buf.len().min(self.chunk).min(self.data.len());
        buf[..n].copy_from_slice(&self.data[..n]);
        self.data = &self.data[n..];
        Ok(n)
    }
}

fn check_lines(input: &[u8], max: usize, capacity: usize, chunk: usize) {
    let reader = BufReader::with_capacity(
        capacity.max(1),
        Chunky {
            data: input,
            chunk: chunk.max(1),
        },
    );
    let mut lines = Lines::with_limit(reader, max);
    let mut got = Vec::new();
    while let Some(line) = lines.next_line().expect("no I/O error") {
        got.push(line);
        assert!(got.len() <= input.len(), "more lines than bytes");
    }
    // Line numbers are consecutive from 1.
    for (i, (n, _)) in got.iter().enumerate() {
        assert_eq!(*n, i as u64 + 1, "line numbers of {input:?}");
    }
    // With no over-long line, the lines and their separators rebuild the input.
    if got.iter().all(|(_, l)| l.is_ok()) {
        let mut pos = 0;
        for (n, line) in &got {
            let line = line.as_ref().unwrap();
            assert!(
                input[pos..].starts_with(line),
                "line {n} {line:?} is not at byte {pos} of {input:?}"
            );
            pos += line.len();
            let rest = &input[pos..];
            if rest.starts_with(b"\r\n") {
                pos += 2;
            } else if rest.starts_with(b"\n") {
                pos += 1;
            } else {
                assert!(
                    rest.is_empty(),
                    "line {n} ends before a separator in {input:?}"
                );
            }
        }
        assert_eq!(pos, input.len(), "the lines of {input:?} do not cover it");
    }
    assert_eq!(
        got,
        expected_lines(input, max),
        "Lines::with_limit({input:?}, {max}) with a {capacity}-byte buffer and {chunk}-byte reads"
    );
}

fn check_fp_parse(s: &str) {
    let got = s.parse::<Fingerprint>();
    match hex16(s) {
        Some(x) => assert_eq!(got.unwrap(), Fingerprint(x), "{s:?}"),
        None => assert!(
            matches!(got, Err(Error::InvalidFingerprint { .. })),
            "{s:?} must not parse: {got:?}"
        ),
    }
}

fn check_fp_display(x: u64) {
    let fp = Fingerprint(x);
    let s = fp.to_string();
    assert_eq!(s.len(), 16);
    assert!(
        s.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f')),
        "{s}"
    );
    assert_eq!(s.parse::<Fingerprint>().unwrap(), fp);
    assert_eq!(s.to_uppercase().parse::<Fingerprint>().unwrap(), fp);
}

fn be(bytes: &[u8]) -> u64 {
    u64::from_be_bytes(bytes.try_into().unwrap())
}

fn binomial(n: u64, k: u64) -> u64 {
    (0..k.min(n - k)).fold(1, |acc, i| acc * (n - i) / (i + 1))
}

/// Every decoder on `bytes`: Ok or Err, never a panic; fixed-size values decode exactly
/// when they have their size; whatever decodes re-encodes to something that decodes to it.
fn check_codec(bytes: &[u8]) -> u64 {
    match codec::decode_id_value(bytes) {
        Ok(v) => {
            assert!([8, 16, 24, 32].contains(&bytes.len()));
            assert_eq!(v.seq, be(&bytes[..8]));
            assert_eq!(v.fp.is_some(), bytes.len().is_multiple_of(16));
            if let Some(fp) = v.fp {
                assert_eq!(fp, be(&bytes[8..16]));
            }
            assert_eq!(v.hash.is_some(), bytes.len() >= 24);
            assert_eq!(codec::encode_id_value(v), bytes);
        }
        Err(e) => {
            assert!(![8, 16, 24, 32].contains(&bytes.len()) && matches!(e, Error::Corrupt(_)))
        }
    }
    match codec::decode_exact_key(bytes) {
        Ok((h, seq)) => {
            assert_eq!(bytes.len(), 24);
            assert_eq!(codec::exact_key(h, seq), bytes);
        }
        Err(e) => assert!(bytes.len() != 24 && matches!(e, Error::Corrupt(_))),
    }
    for r in [codec::decode_counters(bytes)] {
        match r {
            Ok(v) => {
                assert_eq!(bytes.len(), 16);
                assert_eq!(v, (be(&bytes[..8]), be(&bytes[8..])));
            }
            Err(e) => assert!(bytes.len() != 16 && matches!(e, Error::Corrupt(_))),
        }
    }
    // A table bucket: read in place or merged, never a panic; what reads back in order
    // re-encodes to the same bytes.
    let key = codec::bucket::bucket_key(u64::from(bytes.first().copied().unwrap_or(0)) << 56, 16);
    match codec::bucket::Bucket::decode(key.as_ref(), bytes, 16) {
        Ok(b) => {
            let entries: Vec<(u64, u64)> = b.entries().collect();
            if let Ok(merged) = codec::bucket::merge_bucket(key.as_ref(), Some(bytes), []) {
                assert_eq!(merged, codec::bucket::encode_bucket(16, &entries));
            }
        }
        Err(e) => assert!(matches!(e, Error::Corrupt(_))),
    }
    if let Err(e) = codec::bucket::merge_bucket(key.as_ref(), None, [bytes]) {
        assert!(matches!(e, Error::Corrupt(_)));
    }
    match codec::decode_doc_key(bytes) {
        Ok(seq) => assert_eq!(seq, be(bytes)),
        Err(e) => assert!(bytes.len() != 8 && matches!(e, Error::Corrupt(_))),
    }
    match codec::decode_doc(bytes) {
        Ok(doc) => {
            assert!(matches!(bytes[0], 2 | 3), "record version {}", bytes[0]);
            let again = codec::encode_doc(&doc);
            assert_eq!(codec::decode_doc(&again).unwrap(), doc);
        }
        Err(e) => assert!(matches!(e, Error::Corrupt(_)), "{e:?}"),
    }
    match codec::decode_manifest(bytes) {
        Ok(m) => {
            check_layout(&m.layout);
            let again = codec::encode_manifest(&m);
            assert_eq!(codec::decode_manifest(&again).unwrap(), m);
        }
        Err(e) => assert!(
            matches!(e, Error::Corrupt(_) | Error::FormatVersion { .. }),
            "{e:?}"
        ),
    }
    7
}

/// A layout that decoded is usable: exact (for every set of k_max blocks, some table's
/// leading blocks avoid it all: Manku's C(b, k_max) tables, or a covering with a shorter
/// lead), permutations that invert, probe sets for every k ≤ k_max and an error above.
fn check_layout(layout: &Layout) {
    let b = layout.widths().len();
    let k = layout.k_max();
    assert_eq!(
        layout.widths().iter().map(|&w| u32::from(w)).sum::<u32>(),
        64
    );
    let lead = layout.lead();
    assert!(lead >= 1 && lead + k as usize <= b);
    if lead + k as usize == b {
        assert_eq!(
            layout.tables().len() as u64,
            binomial(b as u64, (b - k as usize) as u64)
        );
    }
    let leads: Vec<u64> = layout
        .tables()
        .iter()
        .map(|t| t.order()[..lead].iter().fold(0u64, |m, &i| m | 1 << i))
        .collect();
    // Every set of k blocks, as a mask (Gosper's next-combination step).
    let mut dirty: u128 = (1 << k) - 1;
    while dirty < 1 << b {
        let d = dirty as u64;
        assert!(leads.iter().any(|&l| l & d == 0), "{layout}: {d:b}");
        if dirty == 0 {
            break;
        }
        let low = dirty & dirty.wrapping_neg();
        let ripple = dirty + low;
        dirty = (((ripple ^ dirty) >> 2) / low) | ripple;
    }
    for t in 0..layout.tables().len() {
        for x in [0u64, u64::MAX, 0x0123_4567_89ab_cdef, 0xa5a5_5a5a_f0f0_0f0f] {
            let p = layout.permute(t, x);
            assert_eq!(p.count_ones(), x.count_ones());
            assert_eq!(layout.unpermute(t, p), x);
        }
    }
    for kk in 0..=k {
        assert!(!layout.tables_for_k(kk).unwrap().is_empty());
    }
    assert!(layout.tables_for_k(k + 1).is_err());
}

/// Fingerprints `title`/`text` twice: same answer, and an error exactly when there is no
/// token. Returns the parser calls made.
fn check_fingerprinter(f: &Fingerprinter, title: Option<&str>, text: &str) -> u64 {
    let a = f.fingerprint(title, text);
    let b = Fingerprinter::new().fingerprint(title, text);
    // No token survives cleaning (URLs, digit runs and boilerplate-only lines aside) exactly
    // when the content hash, an independent pass over the same tokens, finds none.
    let empty = f.content_hash(title, text).is_err();
    match (&a, &b) {
        (Ok(x), Ok(y)) => {
            assert_eq!(x, y, "not deterministic on {title:?} / {text:?}");
            assert!(
                !empty,
                "a fingerprint without tokens for {title:?} / {text:?}"
            );
        }
        (Err(Error::EmptyDocument), Err(Error::EmptyDocument)) => {
            assert!(empty, "EmptyDocument with tokens for {title:?} / {text:?}")
        }
        _ => panic!("{title:?} / {text:?}: {a:?} then {b:?}"),
    }
    2
}

// ---------------------------------------------------------------------------------------
// Parser properties (proptest)
// ---------------------------------------------------------------------------------------

#[test]
fn jsonl_arbitrary_bytes() {
    run_prop("jsonl_arbitrary_bytes", 2000, any::<Vec<u8>>(), |b| {
        check_jsonl(&b);
        Ok(())
    });
}

#[test]
fn jsonl_structured_records() {
    let tally = Tally::default();
    run_prop(
        "jsonl_structured_records",
        1000,
        (record_fields(), rendering()),
        |(fields, r)| {
            let map: Map<String, Value> = fields.into_iter().collect();
            let line = render(&map, &r);
            let got = parse_jsonl(&line);
            assert_same(&got, &expected_from_object(&map), &line);
            tally.add(outcome(&got));
            Ok(())
        },
    );
    tally.print("jsonl_structured_records");
}

#[test]
fn jsonl_mutated_records() {
    let tally = Tally::default();
    run_prop(
        "jsonl_mutated_records",
        1500,
        (
            record_fields(),
            rendering(),
            prop_oneof![
                vec(mutation(), 1..5),
                // Mutations that keep the line UTF-8, to reach the JSON and field checks.
                vec(
                    (any::<Index>(), select(JSON_ASCII)).prop_map(|(i, b)| Mutation::Ascii(i, b)),
                    1..4
                ),
            ],
        ),
        |(fields, r, muts)| {
            let map: Map<String, Value> = fields.into_iter().collect();
            let mut line = render(&map, &r);
            for m in &muts {
                apply(&mut line, m);
            }
            tally.add(check_jsonl(&line));
            Ok(())
        },
    );
    tally.print("jsonl_mutated_records");
}

#[test]
fn lines_structured() {
    let content = prop_oneof![
        6 => b'a'..=b'z',
        2 => Just(b'\r'),
        1 => Just(0u8),
        2 => any::<u8>().prop_map(|b| if b == b'\n' { b'N' } else { b }),
    ];
    let line = (vec(content, 0..20), any::<bool>());
    run_prop(
        "lines_structured",
        2000,
        (
            vec(line, 0..10),
            any::<bool>(),
            0usize..24,
            1usize..24,
            1usize..24,
        ),
        |(lines, trailing, max, capacity, chunk)| {
            let mut input = Vec::new();
            for (i, (content, crlf)) in lines.iter().enumerate() {
                input.extend_from_slice(content);
                if i + 1 < lines.len() || trailing {
                    input.extend_from_slice(if *crlf { b"\r\n" } else { b"\n" });
                }
            }
            check_lines(&input, max, capacity, chunk);
            Ok(())
        },
    );
}

#[test]
fn lines_arbitrary_bytes() {
    let byte = prop_oneof![3 => Just(b'\n'), 2 => Just(b'\r'), 5 => any::<u8>()];
    run_prop(
        "lines_arbitrary_bytes",
        2000,
        (vec(byte, 0..200), 0usize..40, 1usize..40, 1usize..40),
        |(input, max, capacity, chunk)| {
            check_lines(&input, max, capacity, chunk);
            Ok(())
        },
    );
}

#[test]
fn fingerprint_display_round_trip() {
    run_prop("fingerprint_display_round_trip", 5000, any::<u64>(), |x| {
        check_fp_display(x);
        Ok(())
    });
}

#[test]
fn fingerprint_parse_strings() {
    run_prop("fingerprint_parse_strings", 5000, fp_string(), |s| {
        check_fp_parse(&s);
        Ok(())
    });
}

#[test]
fn codec_arbitrary_bytes() {
    let prefix = prop_oneof![
        2 => Just(Vec::new()),
        2 => Just([&codec::MAGIC[..], &codec::FORMAT_VERSION.to_be_bytes()].concat()),
        1 => any::<u32>().prop_map(|v| [&codec::MAGIC[..], &v.to_be_bytes()].concat()),
        2 => Just(vec![2u8]),
    ];
    run_prop(
        "codec_arbitrary_bytes",
        3000,
        (prefix, any::<Vec<u8>>()),
        |(prefix, tail)| {
            check_codec(&[prefix, tail].concat());
            Ok(())
        },
    );
}

/// Every `(k_max, blocks)` that `Layout::new` accepts.
fn valid_layouts() -> Vec<(u32, u32)> {
    (0..=16)
        .flat_map(|k| (1..=64).map(move |b| (k, b)))
        .filter(|&(k, b)| Layout::new(k, b).is_ok())
        .collect()
}

/// Valid layouts: near-equal blocks (Layout::new) and random widths summing to 64.
fn layout() -> impl Strategy<Value = Layout> {
    prop_oneof![
        select(valid_layouts()).prop_map(|(k, b)| Layout::new(k, b).unwrap()),
        (vec(1u8..=40, 1..8), 0u32..4).prop_filter_map("valid widths", |(raw, k)| {
            let mut widths = Vec::new();
            let mut left = 64u8;
            for w in raw {
                if left == 0 {
                    break;
                }
                let w = w.min(left);
                widths.push(w);
                left -= w;
            }
            if left > 0 {
                widths.push(left);
            }
            Layout::with_widths(k, widths).ok()
        }),
    ]
}

fn manifest() -> impl Strategy<Value = Manifest> {
    (
        layout(),
        any::<u32>(),
        vec(odd_string(), 5),
        any::<u64>(),
        any::<u64>(),
        any::<bool>(),
    )
        .prop_map(|(layout, version, s, seed, created, high)| Manifest {
            layout,
            spec: FingerprintSpec {
                version,
                normalizer: s[0].clone(),
                tokenizer: s[1].clone(),
                features: s[2].clone(),
                weighting: s[3].clone(),
                hash: s[4].clone(),
                seed,
            },
            created,
            quality: match high {
                true => simstore::Quality::High,
                false => simstore::Quality::Standard,
            },
            bands: u32::from(high) * 2,
        })
}

fn stored_doc() -> impl Strategy<Value = StoredDoc> {
    (
        odd_string(),
        any::<u64>(),
        proptest::option::of(odd_string()),
        proptest::option::of(odd_string()),
        any::<u64>(),
        any::<u64>(),
        proptest::option::of(any::<u128>()),
    )
        .prop_map(
            |(id, fp, title, url, length, time, content_hash)| StoredDoc {
                id,
                fp,
                title,
                url,
                length,
                time,
                // Half of them with a last-seen time of their own (record version 3).
                seen: if fp % 2 == 0 { time } else { time ^ length },
                content_hash,
                // Exercise the sketch's encoding too (its bytes from the hash).
                sketch: content_hash.map(|h| simstore::text::sketch::Sketch::uniform(h as u8)),
            },
        )
}

#[test]
fn codec_round_trips() {
    run_prop(
        "codec_round_trips",
        1000,
        (manifest(), stored_doc(), any::<[u64; 2]>()),
        |(m, doc, [a, b])| {
            let bytes = codec::encode_manifest(&m);
            assert_eq!(codec::decode_manifest(&bytes).unwrap(), m);
            let bytes = codec::encode_doc(&doc);
            assert_eq!(codec::decode_doc(&bytes).unwrap(), doc);
            assert_eq!(
                codec::decode_counters(&codec::encode_counters(a, b)).unwrap(),
                (a, b)
            );
            for (hash, fp) in [None, Some(u128::from(a) << 64 | u128::from(b))]
                .into_iter()
                .flat_map(|h| [(h, None), (h, Some(b))])
            {
                let v = codec::IdValue { seq: a, fp, hash };
                assert_eq!(
                    codec::decode_id_value(&codec::encode_id_value(v)).unwrap(),
                    v
                );
            }
            let h = u128::from(a) << 64 | u128::from(b);
            assert_eq!(
                codec::decode_exact_key(&codec::exact_key(h, a)).unwrap(),
                (h, a)
            );
            assert_eq!(codec::decode_doc_key(&codec::doc_key(a)).unwrap(), a);
            // Bucket keys sort like the prefixes; a bucket of two entries reads back.
            use codec::bucket::{Bucket, bucket_key, bucket_op, merge_bucket};
            let bits = (a % 64) as u32 + 1;
            let (x, y) = (bucket_key(a, bits), bucket_key(b, bits));
            let prefix = |v: u64| v.checked_shr(64 - bits).unwrap_or(0);
            let prefix = |v: u64| if bits == 64 { v } else { prefix(v) };
            assert_eq!(x.as_ref().cmp(y.as_ref()), prefix(a).cmp(&prefix(b)));
            let second = a ^ (b & (u64::MAX.checked_shr(bits).unwrap_or(0)));
            let ops = [
                bucket_op(bits, true, a, b),
                bucket_op(bits, true, second, a),
            ];
            let value = merge_bucket(x.as_ref(), None, ops.iter().map(|o| o.as_slice())).unwrap();
            let mut want = vec![(a, b), (second, a)];
            want.sort();
            want.dedup();
            let got: Vec<_> = Bucket::decode(x.as_ref(), &value, bits)
                .unwrap()
                .entries()
                .collect();
            assert_eq!(got, want);
            Ok(())
        },
    );
}

#[test]
fn codec_mutated_encodings() {
    let encoded = prop_oneof![
        manifest().prop_map(|m| codec::encode_manifest(&m)),
        stored_doc().prop_map(|d| codec::encode_doc(&d)),
        any::<[u64; 2]>().prop_map(|[a, b]| codec::encode_counters(a, b).to_vec()),
    ];
    run_prop(
        "codec_mutated_encodings",
        3000,
        (encoded, vec(mutation(), 1..5)),
        |(mut bytes, muts)| {
            for m in &muts {
                apply(&mut bytes, m);
            }
            check_codec(&bytes);
            Ok(())
        },
    );
}

fn text_input() -> impl Strategy<Value = String> {
    prop_oneof![
        4 => odd_string(),
        2 => vec(select(PIECES), 0..60).prop_map(|v| v.join(" ")),
        1 => vec(any::<u8>(), 0..64).prop_map(|b| String::from_utf8_lossy(&b).into_owned()),
    ]
}

#[test]
fn fingerprinter_arbitrary_text() {
    let f = Fingerprinter::new();
    run_prop(
        "fingerprinter_arbitrary_text",
        500,
        (proptest::option::of(text_input()), text_input()),
        |(title, text)| {
            check_fingerprinter(&f, title.as_deref(), &text);
            Ok(())
        },
    );
}

/// A consequence of integer weights and bag-of-words features: between two content lines,
/// the order of two newline-separated parts does not matter. (Outside the content lines it
/// may: since spec v5 short lines there are a page's header and footer and weigh 0.)
#[test]
fn fingerprinter_metamorphic() {
    const FIRST: &str = "The council approved the new budget on Tuesday after a long debate.";
    const LAST: &str = "今天北京的天气很好，我们去公园散步，看到很多人在跑步。";
    let f = Fingerprinter::new();
    run_prop(
        "fingerprinter_metamorphic",
        500,
        (text_input(), text_input()),
        |(x, y)| {
            let xy = f
                .fingerprint(None, &format!("{FIRST}\n{x}\n{y}\n{LAST}"))
                .ok();
            let yx = f
                .fingerprint(None, &format!("{FIRST}\n{y}\n{x}\n{LAST}"))
                .ok();
            prop_assert_eq!(xy, yx, "order of parts {:?} / {:?}", x, y);
            Ok(())
        },
    );
}

// ---------------------------------------------------------------------------------------
// Parser loops (fast RNG): the bulk of the long mode
// ---------------------------------------------------------------------------------------

/// Valid and near-valid JSONL lines drawn from the proptest generators, to mutate.
fn line_pool() -> &'static [Vec<u8>] {
    static POOL: OnceLock<Vec<Vec<u8>>> = OnceLock::new();
    POOL.get_or_init(|| {
        let mut runner = TestRunner::deterministic();
        let strategy = (record_fields(), rendering());
        (0..512)
            .map(|_| {
                let (fields, r) = sample(&strategy, &mut runner);
                render(&fields.into_iter().collect(), &r)
            })
            .filter(|l| l.len() < 4096)
            .collect()
    })
}

/// Valid encodings of manifests, documents and counters, to mutate.
fn encoding_pool() -> &'static [Vec<u8>] {
    static POOL: OnceLock<Vec<Vec<u8>>> = OnceLock::new();
    POOL.get_or_init(|| {
        let mut runner = TestRunner::deterministic();
        let (m, d) = (manifest(), stored_doc());
        let mut pool = Vec::new();
        for _ in 0..128 {
            pool.push(codec::encode_manifest(&sample(&m, &mut runner)));
            pool.push(codec::encode_doc(&sample(&d, &mut runner)));
        }
        pool.retain(|e| e.len() < 4096);
        pool
    })
}

const JSON_ALPHABET: &[u8] =
    b"{}[]\":,\\ \t\r\n0123456789.eE+-abcdefnulrtsidxp\xff\xc3\xa9\xe4\xb8\xad\x00";

#[test]
fn loop_jsonl() {
    let pool = line_pool();
    let mut buf = Vec::new();
    let tally = Tally::default();
    run_loop("jsonl", 50_000, |rng| {
        buf.clear();
        match rng.below(6) {
            0 => buf.extend((0..rng.below(48)).map(|_| rng.next() as u8)),
            1 => buf.extend((0..rng.below(64)).map(|_| *rng.pick(JSON_ALPHABET))),
            2 => buf.extend_from_slice(rng.pick::<Vec<u8>>(pool)),
            3 => {
                // Mutations that keep the line UTF-8.
                buf.extend_from_slice(rng.pick::<Vec<u8>>(pool));
                for _ in 0..1 + rng.below(3) {
                    let at = rng.below(buf.len() + 1);
                    if buf.get(at).is_some_and(u8::is_ascii) {
                        buf[at] = *rng.pick(JSON_ASCII);
                    } else {
                        buf.insert(at, *rng.pick(JSON_ASCII));
                    }
                }
            }
            _ => {
                buf.extend_from_slice(rng.pick::<Vec<u8>>(pool));
                for _ in 0..1 + rng.below(4) {
                    fast_mutate(rng, &mut buf);
                }
            }
        }
        tally.add(check_jsonl(&buf));
        1
    });
    tally.print("loop jsonl");
}

#[test]
fn loop_lines() {
    const ALPHABET: &[u8] = b"ab\r\n\n\xff\0";
    let mut buf = Vec::new();
    run_loop("lines", 30_000, |rng| {
        buf.clear();
        buf.extend((0..rng.below(80)).map(|_| *rng.pick(ALPHABET)));
        let (max, capacity, chunk) = (rng.below(12), 1 + rng.below(12), 1 + rng.below(12));
        check_lines(&buf, max, capacity, chunk);
        1
    });
}

#[test]
fn loop_fingerprint_hex() {
    const ALPHABET: &[u8] = b"0123456789abcdefABCDEF";
    const INTRUDERS: &[&str] = &[
        "g", "G", "x", "+", "-", " ", "é", "０", "\0", "ａ", "\u{660}",
    ];
    let mut s = String::new();
    run_loop("fingerprint_hex", 100_000, |rng| {
        check_fp_display(rng.edgy_u64());
        s.clear();
        let len = match rng.below(4) {
            0 => rng.below(20),
            _ => 16,
        };
        for _ in 0..len {
            s.push(*rng.pick(ALPHABET) as char);
        }
        if rng.chance(2) && !s.is_empty() {
            let at = rng.below(s.len());
            s.replace_range(at..at + 1, rng.pick::<&str>(INTRUDERS));
        }
        check_fp_parse(&s);
        3
    });
}

#[test]
fn loop_codec() {
    let pool = encoding_pool();
    let mut buf = Vec::new();
    run_loop("codec", 20_000, |rng| {
        buf.clear();
        match rng.below(5) {
            0 => buf.extend((0..rng.below(40)).map(|_| rng.next() as u8)),
            1 => {
                buf.extend_from_slice(&codec::MAGIC);
                let v = if rng.chance(4) { rng.next() as u32 } else { 1 };
                buf.extend_from_slice(&v.to_be_bytes());
                buf.extend((0..rng.below(64)).map(|_| rng.edgy_u64() as u8));
            }
            2 => {
                buf.push(1);
                buf.extend((0..rng.below(40)).map(|_| rng.edgy_u64() as u8));
            }
            _ => {
                buf.extend_from_slice(rng.pick::<Vec<u8>>(pool));
                for _ in 0..1 + rng.below(4) {
                    fast_mutate(rng, &mut buf);
                }
            }
        }
        check_codec(&buf)
    });
}

#[test]
fn loop_fingerprinter() {
    let f = Fingerprinter::new();
    let mut bytes = Vec::new();
    run_loop("fingerprinter", 5_000, |rng| {
        let mut part = |rng: &mut Fast| -> String {
            bytes.clear();
            for _ in 0..rng.below(12) {
                if rng.chance(4) {
                    bytes.extend((0..rng.below(8)).map(|_| rng.next() as u8));
                } else {
                    bytes.extend_from_slice(rng.pick(PIECES).as_bytes());
                }
            }
            String::from_utf8_lossy(&bytes).into_owned()
        };
        let title = if rng.chance(2) { Some(part(rng)) } else { None };
        let text = part(rng);
        check_fingerprinter(&f, title.as_deref(), &text)
    });
}

// ---------------------------------------------------------------------------------------
// Operation sequences against a model
// ---------------------------------------------------------------------------------------

/// Ids: neighbours in byte order, prefixes of each other, NUL, astral, the longest allowed.
fn id_pool() -> &'static [String] {
    static POOL: OnceLock<Vec<String>> = OnceLock::new();
    POOL.get_or_init(|| {
        let mut ids: Vec<String> = [
            "a",
            "b",
            "c",
            "a\0",
            "ab",
            "doc/1",
            "doc/2",
            "中文",
            "\u{10ffff}",
            " ",
            "https://example.com/x?y=1#z",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        ids.push("x".repeat(MAX_ID_BYTES));
        ids.push("é".repeat(MAX_ID_BYTES / 2));
        ids
    })
}

const CENTRES: [u64; 4] = [0, u64::MAX, 0xa5a5_5a5a_f0f0_0f0f, 0x0123_4567_89ab_cdef];

#[derive(Debug, Clone)]
enum IdSel {
    Pool(Index),
    Live(Index),
    Fresh,
}

#[derive(Debug, Clone)]
enum FpSel {
    Centre(Index, Vec<u8>),
    Live(Index, Vec<u8>),
    Any(u64),
}

#[derive(Debug, Clone)]
enum Op {
    Insert(IdSel, FpSel, Option<String>),
    Delete(IdSel),
    Batch(Vec<(IdSel, FpSel)>),
    /// A batch with one invalid id (empty or too long) at some position: refused whole.
    BadBatch(Vec<(IdSel, FpSel)>, Index, bool),
    Query(FpSel, u32),
    /// `check_and_insert_fingerprint` with a content hash from a small pool (or none).
    CheckInsert(IdSel, FpSel, Option<u8>, u32),
    Get(IdSel),
    Len,
    Reopen,
    Check,
}

fn id_sel() -> impl Strategy<Value = IdSel> {
    prop_oneof![
        3 => any::<Index>().prop_map(IdSel::Pool),
        3 => any::<Index>().prop_map(IdSel::Live),
        1 => Just(IdSel::Fresh),
    ]
}

fn fp_sel() -> impl Strategy<Value = FpSel> {
    let flips = || vec(0u8..64, 0..6);
    prop_oneof![
        3 => (any::<Index>(), flips()).prop_map(|(i, f)| FpSel::Centre(i, f)),
        3 => (any::<Index>(), flips()).prop_map(|(i, f)| FpSel::Live(i, f)),
        1 => any::<u64>().prop_map(FpSel::Any),
    ]
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        8 => (id_sel(), fp_sel(), proptest::option::of("[a-z中]{0,6}"))
            .prop_map(|(i, f, t)| Op::Insert(i, f, t)),
        3 => id_sel().prop_map(Op::Delete),
        3 => vec((id_sel(), fp_sel()), 0..12).prop_map(Op::Batch),
        1 => (vec((id_sel(), fp_sel()), 0..4), any::<Index>(), any::<bool>())
            .prop_map(|(v, i, e)| Op::BadBatch(v, i, e)),
        6 => (fp_sel(), 0u32..5).prop_map(|(f, k)| Op::Query(f, k)),
        5 => (id_sel(), fp_sel(), proptest::option::of(0u8..4), 0u32..5)
            .prop_map(|(i, f, h, k)| Op::CheckInsert(i, f, h, k)),
        2 => id_sel().prop_map(Op::Get),
        1 => Just(Op::Len),
        1 => Just(Op::Reopen),
        1 => Just(Op::Check),
    ]
}

type Model = BTreeMap<String, (u64, DocMeta)>;

struct Run {
    model: Model,
    fresh: u64,
    step: u64,
}

impl Run {
    fn id(&mut self, sel: &IdSel) -> String {
        match sel {
            IdSel::Pool(i) => id_pool()[i.index(id_pool().len())].clone(),
            IdSel::Live(i) if !self.model.is_empty() => self
                .model
                .keys()
                .nth(i.index(self.model.len()))
                .unwrap()
                .clone(),
            _ => {
                self.fresh += 1;
                format!("fresh{}", self.fresh)
            }
        }
    }

    fn fp(&self, sel: &FpSel) -> u64 {
        let mask = |flips: &[u8]| flips.iter().fold(0u64, |m, &b| m ^ (1u64 << b));
        match sel {
            FpSel::Centre(i, f) => CENTRES[i.index(CENTRES.len())] ^ mask(f),
            FpSel::Live(i, f) if !self.model.is_empty() => {
                self.model
                    .values()
                    .nth(i.index(self.model.len()))
                    .unwrap()
                    .0
                    ^ mask(f)
            }
            FpSel::Live(_, f) => CENTRES[0] ^ mask(f),
            FpSel::Any(x) => *x,
        }
    }

    fn meta(&mut self, title: Option<String>) -> DocMeta {
        self.step += 1;
        DocMeta {
            title,
            url: Some(format!("https://example.com/{}", self.step)),
            length: self.step,
            // Some documents share a content hash: exact duplicates of each other.
            content_hash: (!self.step.is_multiple_of(3)).then_some(u128::from(self.step % 4)),
            sketch: None,
            weak_bits: None,
            main_sketch: None,
            times: None,
        }
    }
}

fn assert_doc(doc: &StoredDoc, id: &str, (fp, meta): &(u64, DocMeta)) {
    assert_eq!(
        (
            &doc.id[..],
            doc.fp,
            &doc.title,
            &doc.url,
            doc.length,
            doc.content_hash
        ),
        (
            id,
            *fp,
            &meta.title,
            &meta.url,
            meta.length,
            meta.content_hash
        )
    );
}

/// The store holds exactly the model: len, every document, every id, and check() is ok.
fn assert_matches_model(store: &Store, model: &Model) {
    let report = store.check().unwrap();
    assert!(report.is_ok(), "check: {:?}", report.problems);
    assert_eq!(store.len(), model.len() as u64);
    let mut docs = BTreeMap::new();
    store
        .for_each_doc(|d| {
            assert!(
                docs.insert(d.id.clone(), d).is_none(),
                "two documents share an id"
            );
            Ok(())
        })
        .unwrap();
    assert_eq!(
        docs.keys().collect::<Vec<_>>(),
        model.keys().collect::<Vec<_>>()
    );
    for (id, want) in model {
        assert_doc(&docs[id], id, want);
        assert_doc(
            &store.get(id).unwrap().expect("get finds a live id"),
            id,
            want,
        );
        let found = store.query(Fingerprint(want.0), 0).unwrap();
        assert!(
            found.iter().any(|m| &m.doc.id == id),
            "query(fp, 0) misses {id:?}"
        );
    }
}

fn open(path: &std::path::Path, layout: Option<(u32, u32)>) -> Store {
    let b = Store::builder(path).rocksdb(RocksOptions::new().block_cache_bytes(1 << 20));
    match layout {
        Some((k, blocks)) => b.k_max(k).blocks(blocks).open(),
        None => b.create_if_missing(false).open(),
    }
    .unwrap()
}

fn run_ops(backend: crate::util::Backend, layout: (u32, u32), ops: &[Op]) {
    let memory = backend == crate::util::Backend::Memory;
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("db");
    let mut store = if memory {
        crate::util::new_store(backend, dir.path(), layout.0, layout.1)
    } else {
        open(&path, Some(layout))
    };
    let k_max = layout.0;
    let mut run = Run {
        model: Model::new(),
        fresh: 0,
        step: 0,
    };
    for op in ops {
        match op {
            Op::Insert(i, f, title) => {
                let (id, fp) = (run.id(i), run.fp(f));
                let meta = run.meta(title.clone());
                let want = if run.model.contains_key(&id) {
                    InsertOutcome::Replaced
                } else {
                    InsertOutcome::Inserted
                };
                let got = store
                    .insert_fingerprint(&id, Fingerprint(fp), meta.clone())
                    .unwrap();
                assert_eq!(got, want, "insert {id:?}");
                run.model.insert(id, (fp, meta));
            }
            Op::Delete(i) => {
                let id = run.id(i);
                assert_eq!(
                    store.delete(&id).unwrap(),
                    run.model.remove(&id).is_some(),
                    "delete {id:?}"
                );
            }
            Op::Batch(sel) => {
                let mut entries = Vec::new();
                let (mut inserted, mut replaced) = (0, 0);
                for (i, f) in sel {
                    let (id, fp) = (run.id(i), run.fp(f));
                    let meta = run.meta(None);
                    if run.model.insert(id.clone(), (fp, meta.clone())).is_some() {
                        replaced += 1;
                    } else {
                        inserted += 1;
                    }
                    entries.push(Entry {
                        id,
                        fp: Fingerprint(fp),
                        meta,
                    });
                }
                let out = store.insert_batch(entries).unwrap();
                assert_eq!((out.inserted, out.replaced), (inserted, replaced), "batch");
            }
            Op::BadBatch(sel, at, empty) => {
                let mut entries: Vec<Entry> = sel
                    .iter()
                    .map(|(i, f)| Entry {
                        id: run.id(i),
                        fp: Fingerprint(run.fp(f)),
                        meta: DocMeta::default(),
                    })
                    .collect();
                let bad = if *empty {
                    String::new()
                } else {
                    "y".repeat(MAX_ID_BYTES + 1)
                };
                let pos = at.index(entries.len() + 1);
                entries.insert(
                    pos,
                    Entry {
                        id: bad,
                        fp: Fingerprint(0),
                        meta: DocMeta::default(),
                    },
                );
                let r = store.insert_batch(entries);
                assert!(matches!(r, Err(Error::InvalidId(_))), "{r:?}");
                assert_eq!(store.len(), run.model.len() as u64);
            }
            Op::Query(f, k) => {
                let q = run.fp(f);
                let got = store.query(Fingerprint(q), *k);
                if *k > k_max {
                    assert!(matches!(got, Err(Error::KTooLarge { .. })), "{got:?}");
                    continue;
                }
                let got = got.unwrap();
                let entries: Vec<(String, u64)> = run
                    .model
                    .iter()
                    .map(|(id, (fp, _))| (id.clone(), *fp))
                    .collect();
                assert_eq!(
                    shape(&got),
                    brute_force(&entries, q, *k),
                    "query {q:016x} k={k}"
                );
                for m in &got {
                    assert_doc(&m.doc, &m.doc.id, &run.model[&m.doc.id]);
                    assert_eq!(m.distance, (m.doc.fp ^ q).count_ones());
                }
            }
            Op::CheckInsert(i, f, h, k) => {
                let (id, fp) = (run.id(i), run.fp(f));
                let mut meta = run.meta(None);
                meta.content_hash = h.map(u128::from);
                let got =
                    store.check_and_insert(&Entry::new(&id, Fingerprint(fp), meta.clone()), *k);
                if *k > k_max {
                    assert!(matches!(got, Err(Error::KTooLarge { .. })), "{got:?}");
                    continue;
                }
                let got = got.unwrap();
                // Exact: any stored document with the hash (the earliest stored, which the
                // model does not track); else the nearest within k, ties to the smallest id.
                let exact: Vec<&String> = run
                    .model
                    .iter()
                    .filter(|(_, (_, m))| {
                        m.content_hash.is_some() && m.content_hash == meta.content_hash
                    })
                    .map(|(id, _)| id)
                    .collect();
                let near = run
                    .model
                    .iter()
                    .map(|(id, (f, _))| ((f ^ fp).count_ones(), id))
                    .filter(|(d, _)| d <= k)
                    .min();
                match (&got, exact.is_empty(), near) {
                    (CheckOutcome::ExactDuplicate { of, .. }, false, _) => {
                        assert!(exact.contains(&of), "{got:?} not in {exact:?}")
                    }
                    (CheckOutcome::NearDuplicate { of, distance, .. }, true, Some((d, nid))) => {
                        assert_eq!((distance, of), (&d, nid), "check_and_insert {id:?}")
                    }
                    (CheckOutcome::New { replaced, .. }, true, None) => {
                        assert_eq!(*replaced, run.model.contains_key(&id));
                        run.model.insert(id, (fp, meta));
                    }
                    _ => panic!(
                        "check_and_insert {id:?} {fp:016x} k={k}: {got:?}, model exact {exact:?} near {near:?}"
                    ),
                }
            }
            Op::Get(i) => {
                let id = run.id(i);
                match (store.get(&id).unwrap(), run.model.get(&id)) {
                    (Some(doc), Some(want)) => assert_doc(&doc, &id, want),
                    (None, None) => {}
                    (got, want) => panic!("get {id:?}: {got:?}, model {want:?}"),
                }
            }
            Op::Len => assert_eq!(store.len(), run.model.len() as u64),
            // Nothing to reopen in memory.
            Op::Reopen if memory => assert_matches_model(&store, &run.model),
            Op::Reopen => {
                drop(store);
                store = open(&path, None);
                assert_eq!(store.layout(), &Layout::new(layout.0, layout.1).unwrap());
                assert_matches_model(&store, &run.model);
            }
            Op::Check => {
                let report = store.check().unwrap();
                assert!(report.is_ok(), "check: {:?}", report.problems);
            }
        }
    }
    assert_matches_model(&store, &run.model);
    if memory {
        return;
    }
    drop(store);
    let store = open(&path, None);
    assert_matches_model(&store, &run.model);
}

fn ops_property(layout: (u32, u32), base_cases: u32) {
    ops_property_on(crate::util::Backend::Rocks, layout, base_cases);
}

fn ops_property_on(backend: crate::util::Backend, layout: (u32, u32), base_cases: u32) {
    let name = match backend {
        crate::util::Backend::Rocks => format!("ops_match_model_{}_{}", layout.0, layout.1),
        crate::util::Backend::Memory => format!("ops_match_model_memory_{}_{}", layout.0, layout.1),
    };
    run_prop(&name, base_cases, vec(op(), 1..60), |ops| {
        run_ops(backend, layout, &ops);
        Ok(())
    });
}

/// The same operation sequences on the in-memory backend.
#[test]
fn ops_match_model_memory_3_4() {
    ops_property_on(crate::util::Backend::Memory, (3, 4), 24);
}

#[test]
fn ops_match_model_3_4() {
    ops_property((3, 4), 24);
}

#[test]
fn ops_match_model_2_3() {
    ops_property((2, 3), 16);
}

#[test]
fn ops_match_model_3_6() {
    ops_property((3, 6), 16);
}

// ---------------------------------------------------------------------------------------
// Regressions: bugs the fuzzers found, fixed
// ---------------------------------------------------------------------------------------

/// `Lines::with_limit(r, usize::MAX)` ("no limit") computed `max as u64 + 1`, which wrapped
/// to 0 in release builds (and panicked in debug builds): `take(0)` read nothing.
#[test]
fn regression_lines_limit_usize_max() {
    let mut lines = Lines::with_limit(b"abc\ndef".as_slice(), usize::MAX);
    assert_eq!(lines.next_line().unwrap(), Some((1, Ok(b"abc".to_vec()))));
    assert_eq!(lines.next_line().unwrap(), Some((2, Ok(b"def".to_vec()))));
    assert_eq!(lines.next_line().unwrap(), None);
}

/// While skipping the rest of an over-long line, `Lines::next_line` returned an
/// `ErrorKind::Interrupted` from the reader as an error, where `read_until` retries.
#[test]
fn regression_lines_interrupted_while_skipping() {
    /// Fails every other read with `Interrupted`, and returns 2 bytes otherwise.
    struct Interrupting<'a> {
        data: &'a [u8],
        fail: bool,
    }
    impl Read for Interrupting<'_> {
        fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
            self.fail = !self.fail;
            if self.fail {
                return Err(std::io::ErrorKind::Interrupted.into());
            }
            let n = buf.len().min(2).min(self.data.len());
            buf[..n].copy_from_slice(&self.data[..n]);
            self.data = &self.data[n..];
            Ok(n)
        }
    }
    let reader = BufReader::with_capacity(
        2,
        Interrupting {
            data: b"abcdefghij\nxy\n",
            fail: false,
        },
    );
    let mut lines = Lines::with_limit(reader, 3);
    assert_eq!(
        lines.next_line().unwrap(),
        Some((1, Err(RecordError::TooLong { max: 3 })))
    );
    assert_eq!(lines.next_line().unwrap(), Some((2, Ok(b"xy".to_vec()))));
    assert_eq!(lines.next_line().unwrap(), None);
}

/// One WARC record (with its trailing CRLF CRLF) for the WARC loop.
fn warc_record(kind: &str, uri: &str, block: &[u8]) -> Vec<u8> {
    let mut out = format!(
        "WARC/1.0\r\nWARC-Type: {kind}\r\nWARC-Target-URI: {uri}\r\nContent-Length: {}\r\n\r\n",
        block.len()
    )
    .into_bytes();
    out.extend_from_slice(block);
    out.extend_from_slice(b"\r\n\r\n");
    out
}

/// `simstore::input::archive::Records` on mutated WARC files (truncations, flipped and inserted
/// bytes, deletions, duplicated ranges, spliced separators): it never panics, always ends,
/// numbers records 1, 2, 3... at strictly increasing offsets inside the input, and reads
/// the unmutated file exactly.
#[test]
fn loop_warc() {
    use simstore::input::archive::{Item, Records};
    let page = |n: usize| {
        let body = format!("<html><p>page {n} about rivers\r\n\r\nand WARC/1.0 inside</p></html>");
        let mut http =
            b"HTTP/1.1 200 OK\r\nContent-Type: text/html; charset=utf-8\r\n\r\n".to_vec();
        http.extend_from_slice(body.as_bytes());
        (http, body)
    };
    let mut valid = warc_record("warcinfo", "", b"software: fuzz\r\n");
    let mut bodies = Vec::new();
    for n in 0..4 {
        let (http, body) = page(n);
        valid.extend(warc_record(
            "request",
            &format!("http://e/{n}"),
            b"GET / HTTP/1.1\r\n\r\n",
        ));
        valid.extend(warc_record("response", &format!("http://e/{n}"), &http));
        bodies.push(body);
    }
    let read = |input: &[u8]| {
        let mut records = Records::new(input);
        let mut out = Vec::new();
        while let Some(r) = records.next_record().expect("reading a slice cannot fail") {
            out.push(r);
        }
        out
    };
    let pages: Vec<Vec<u8>> = read(&valid)
        .into_iter()
        .filter_map(|(_, _, r)| match r {
            Ok(Item::Page(p)) => Some(p.body),
            _ => None,
        })
        .collect();
    let want: Vec<Vec<u8>> = bodies.iter().map(|b| b.as_bytes().to_vec()).collect();
    assert_eq!(pages, want);
    let mut buf = Vec::new();
    run_loop("warc", 20_000, |rng| {
        buf.clear();
        buf.extend_from_slice(&valid);
        for _ in 0..1 + rng.below(6) {
            fast_mutate(rng, &mut buf);
        }
        let records = read(&buf);
        let mut last_offset = None;
        for (i, (number, offset, _)) in records.iter().enumerate() {
            assert_eq!(*number, i as u64 + 1);
            assert!((*offset as usize) < buf.len().max(1));
            assert!(last_offset.is_none_or(|l| l < *offset), "{records:?}");
            last_offset = Some(*offset);
        }
        1
    });
}
