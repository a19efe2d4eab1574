//! `dedup --report FILE.html`: a self-contained page to judge a dedup by eye — the cluster
//! sizes, the distances (and sketch similarities) of the records to the record their
//! cluster formed around, and a sample of clusters (the largest, and some picked by hash)
//! with their members' texts side by side, the words that differ from the representative
//! marked. No script, no network; the columns wrap on a narrow screen.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::fmt::Write as _;
use std::path::Path;

use anyhow::{Context, Result};
use similar::{ChangeTag, TextDiff};

use super::provenance::{Origin, Records};

/// Clusters shown of each kind (the largest, and picked by hash).
const SAMPLES: usize = 10;
/// Members shown of a cluster.
const MEMBERS: usize = 6;
/// Characters of a text shown.
const TEXT_CHARS: usize = 1500;

/// One member of a sampled cluster.
pub(super) struct Member {
    pub item: u64,
    id: String,
    place: String,
    distance: u32,
    similarity: Option<f64>,
    kept: bool,
}

/// A sampled cluster: why it was picked, its number, size, members (the representative
/// first).
pub(super) struct Sample {
    kind: &'static str,
    cluster: usize,
    size: usize,
    pub members: Vec<Member>,
}

/// What the page shows.
pub(super) struct Report {
    records: u64,
    sizes: BTreeMap<usize, u64>,
    /// How many records are at each distance from their representative.
    distances: BTreeMap<u32, u64>,
    /// How many at each similarity, in twentieths (when the rule verifies).
    similarities: BTreeMap<u32, u64>,
    pub samples: Vec<Sample>,
}

impl Report {
    /// The report of `sets` (clusters, representative first) over `records`; `item(i)` is
    /// record `i`'s item number (to read its text again), `origin(i)` its id and place.
    pub(super) fn new<'a>(
        sets: &[Vec<u32>],
        records: &Records,
        item: impl Fn(u32) -> u64,
        origin: impl Fn(u32) -> Origin<'a>,
    ) -> Self {
        let mut report = Report {
            records: records.fps.len() as u64,
            sizes: BTreeMap::new(),
            distances: BTreeMap::new(),
            similarities: BTreeMap::new(),
            samples: Vec::new(),
        };
        for set in sets {
            *report.sizes.entry(set.len()).or_default() += 1;
            for &x in &set[1..] {
                let m = member(set[0], x, records, &item, &origin);
                *report.distances.entry(m.distance).or_default() += 1;
                if let Some(s) = m.similarity {
                    *report.similarities.entry((s * 20.0) as u32).or_default() += 1;
                }
            }
        }
        for (kind, n) in picks(sets) {
            let members = sets[n].iter().take(MEMBERS);
            report.samples.push(Sample {
                kind,
                cluster: n,
                size: sets[n].len(),
                members: members
                    .map(|&x| member(sets[n][0], x, records, &item, &origin))
                    .collect(),
            });
        }
        report
    }

    /// The item numbers whose texts the page shows.
    pub(super) fn items(&self) -> BTreeSet<u64> {
        self.samples
            .iter()
            .flat_map(|s| s.members.iter().map(|m| m.item))
            .collect()
    }

    /// Writes the page to `path`, with `texts` (by item number).
    pub(super) fn write(&self, path: &Path, texts: &HashMap<u64, String>) -> Result<()> {
        let mut out = crate::cli::outfile::OutFile::create(path)?;
        std::io::Write::write_all(&mut out, self.html(texts).as_bytes())
            .with_context(|| format!("cannot write {}", path.display()))?;
        out.finish()
    }
}

/// Record `x` of the cluster formed around `rep`.
fn member<'a>(
    rep: u32,
    x: u32,
    records: &Records,
    item: &impl Fn(u32) -> u64,
    origin: &impl Fn(u32) -> Origin<'a>,
) -> Member {
    let o = origin(x);
    Member {
        item: item(x),
        id: o.id.to_owned(),
        place: o.place.map(ToString::to_string).unwrap_or_default(),
        distance: (records.fps[x as usize] ^ records.fps[rep as usize]).count_ones(),
        similarity: records.similarity(x, rep),
        kept: records.kept[x as usize],
    }
}

/// The clusters to show: the largest, then others picked by a hash of their number.
fn picks(sets: &[Vec<u32>]) -> Vec<(&'static str, usize)> {
    let mut by_size: Vec<usize> = (0..sets.len()).collect();
    by_size.sort_by_key(|&n| (std::cmp::Reverse(sets[n].len()), n));
    let largest: Vec<usize> = by_size.into_iter().take(SAMPLES).collect();
    let mut others: Vec<usize> = (0..sets.len()).filter(|n| !largest.contains(n)).collect();
    others.sort_by_key(|&n| xxhash_rust::xxh3::xxh3_64(&(n as u64).to_le_bytes()));
    let picked = largest.into_iter().map(|n| ("largest", n));
    picked
        .chain(others.into_iter().take(SAMPLES).map(|n| ("random", n)))
        .collect()
}

/// Escapes text for HTML.
fn escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '&' => out.push_str("&amp;"),
            '"' => out.push_str("&quot;"),
            c => out.push(c),
        }
    }
    out
}

/// The first [`TEXT_CHARS`] characters of a text.
fn head(text: &str) -> &str {
    text.char_indices()
        .nth(TEXT_CHARS)
        .map_or(text, |(i, _)| &text[..i])
}

/// `text` with the words (Chinese: characters) that are not in `rep` marked, and `rep`'s
/// it lacks struck.
fn diff_html(rep: &str, text: &str) -> String {
    // Chinese has no spaces between words: its texts are compared character by character.
    let han = |t: &str| t.chars().any(|c| ('\u{4e00}'..='\u{9fff}').contains(&c));
    let (rep, text) = (head(rep), head(text));
    let diff = match han(rep) || han(text) {
        true => TextDiff::from_chars(rep, text),
        false => TextDiff::from_words(rep, text),
    };
    let mut out = String::new();
    for change in diff.iter_all_changes() {
        let word = escape(change.value());
        match change.tag() {
            ChangeTag::Equal => out.push_str(&word),
            ChangeTag::Insert => write!(out, "<mark>{word}</mark>").expect("a string"),
            ChangeTag::Delete => write!(out, "<del>{word}</del>").expect("a string"),
        }
    }
    out
}

const STYLE: &str = "body{font:15px/1.5 system-ui,sans-serif;margin:0 auto;max-width:1400px;\
padding:12px;color:#222}h1{font-size:1.4em}h2{font-size:1.15em;margin-top:1.6em}\
.bars div{display:flex;align-items:center;gap:8px;margin:2px 0}.bars b{display:inline-block;\
height:14px;background:#4a78c2;min-width:1px}.bars span{min-width:5.5em;text-align:right;\
font-variant-numeric:tabular-nums}.cluster{border-top:1px solid #ccc;padding-top:8px}\
.members{display:flex;flex-wrap:wrap;gap:10px}.member{flex:1 1 300px;min-width:0;\
border:1px solid #ddd;border-radius:6px;padding:8px;background:#fafafa}.member.rep{\
border-color:#4a78c2}.member p{white-space:pre-wrap;overflow-wrap:anywhere;margin:6px 0 0}\
.meta{font-size:.85em;color:#555;overflow-wrap:anywhere}mark{background:#ffe08a}\
del{color:#b33}";

impl Report {
    /// The whole page.
    fn html(&self, texts: &HashMap<u64, String>) -> String {
        let mut h = String::new();
        let clustered: u64 = self.sizes.iter().map(|(s, n)| *s as u64 * n).sum();
        let _ = write!(
            h,
            "<!doctype html><html lang=\"en\"><head><meta charset=\"utf-8\">\
             <meta name=\"viewport\" content=\"width=device-width,initial-scale=1\">\
             <title>simstore dedup report</title><style>{STYLE}</style></head><body>\
             <h1>simstore dedup report</h1><p>{} records; {} in {} clusters of two or more.</p>",
            self.records,
            clustered,
            self.sizes.values().sum::<u64>()
        );
        bars(
            &mut h,
            "Cluster sizes (records per cluster: clusters)",
            &self.sizes,
        );
        bars(
            &mut h,
            "Distance to the representative (bits: records)",
            &self.distances,
        );
        if !self.similarities.is_empty() {
            let sim: BTreeMap<String, u64> = self
                .similarities
                .iter()
                .map(|(b, n)| (format!("{:.2}", *b as f64 / 20.0), *n))
                .collect();
            bars(
                &mut h,
                "Sketch similarity to the representative (from: records)",
                &sim,
            );
        }
        for s in &self.samples {
            self.sample(&mut h, s, texts);
        }
        h.push_str("</body></html>\n");
        h
    }

    /// One sampled cluster, its members side by side.
    fn sample(&self, h: &mut String, s: &Sample, texts: &HashMap<u64, String>) {
        let _ = write!(
            h,
            "<section class=\"cluster\"><h2>Cluster {} ({}): {} records{}</h2><div class=\"members\">",
            s.cluster,
            s.kind,
            s.size,
            if s.size > s.members.len() {
                format!(", the first {} shown", s.members.len())
            } else {
                String::new()
            }
        );
        let rep = s
            .members
            .first()
            .and_then(|m| texts.get(&m.item))
            .map_or("", String::as_str);
        for (i, m) in s.members.iter().enumerate() {
            let text = texts.get(&m.item).map_or("", String::as_str);
            let body = match i {
                0 => escape(head(text)),
                _ => diff_html(rep, text),
            };
            let sim = m
                .similarity
                .map(|s| format!(", similarity {s:.2}"))
                .unwrap_or_default();
            let _ = write!(
                h,
                "<div class=\"member{}\"><div class=\"meta\"><b>{}</b> {} — {}, distance {}{sim}</div><p>{body}</p></div>",
                if i == 0 { " rep" } else { "" },
                escape(&m.id),
                escape(&m.place),
                if m.kept { "kept" } else { "dropped" },
                m.distance,
            );
        }
        h.push_str("</div></section>");
    }
}

/// A histogram as rows of bars.
fn bars<K: std::fmt::Display>(h: &mut String, title: &str, counts: &BTreeMap<K, u64>) {
    let max = counts.values().copied().max().unwrap_or(1).max(1) as f64;
    let _ = write!(h, "<h2>{}</h2><div class=\"bars\">", escape(title));
    for (k, n) in counts {
        let pct = (*n as f64 / max * 100.0).max(0.5);
        let _ = write!(
            h,
            "<div><span>{k}</span><b style=\"width:{pct:.1}%\"></b>{n}</div>"
        );
    }
    h.push_str("</div>");
}
