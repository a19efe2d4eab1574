//! Quality evaluation: precision, recall and F1 of "Hamming distance ≤ k" as a
//! near-duplicate predictor, on labelled document pairs (the "eval" stage, outside the
//! main data flow).
//!
//! The input is the format of simstore's development set: documents and variants as JSON
//! lines (`{"id", "lang", "title", "text", "html"?}`), and labelled pairs
//! (`{"a", "b", "label": 0|1, "class", "lang", "len_bucket"?}`). [`fingerprint_all`]
//! fingerprints every document in parallel; [`evaluate`] counts the true and false
//! positives and negatives overall, per language, per length bucket and per class, of a
//! [`Predictor`] ("distance ≤ k" for every k, or one rule as a store answers it).
//!
//! Labelled negative pairs are few (a thousand), so a fingerprint that maps every short
//! text dominated by one repeated word ("酒店", "孩子") to one value would pass them. A store
//! meets every document against all the others: [`base_collisions`] counts, among the
//! base documents (distinct texts), the pairs predicted duplicate whose texts are unrelated.

use std::collections::{BTreeMap, HashMap};

use rayon::prelude::*;
use serde::{Deserialize, Serialize};

use crate::index::layout::Layout;
use crate::index::page::analyze_page;
use crate::index::probing;
use crate::index::quality::{MatchRule, Quality};
use crate::input::html;
use crate::text::fingerprint::Fingerprinter;
use crate::types::Fingerprint;
use crate::types::{Sketch, WeakBits};

mod measures;

use crate::text::sketch::jaccard;
pub use measures::wilson_interval;
use measures::{band_pairs, char_trigrams};

/// A labelled document (a base document or a variant of one).
#[derive(Debug, Clone, Default, Deserialize)]
pub struct EvalDoc {
    /// Unique id, referred to by pairs.
    pub id: String,
    /// Language tag (`zh`, `en`, ...), if given.
    #[serde(default)]
    pub lang: Option<String>,
    /// Title (may be empty).
    #[serde(default)]
    pub title: Option<String>,
    /// Body text.
    #[serde(default)]
    pub text: String,
    /// The web page the text came from, where there is one.
    #[serde(default)]
    pub html: Option<String>,
    /// For a variant: the id of the base document it was made from. `None` marks a base
    /// document (see [`base_collisions`]).
    #[serde(default)]
    pub base_id: Option<String>,
}

/// A labelled pair of documents.
#[derive(Debug, Clone, Deserialize)]
pub struct Pair {
    /// Id of the first document.
    pub a: String,
    /// Id of the second document.
    pub b: String,
    /// 1: near-duplicates; 0: not.
    pub label: u8,
    /// The kind of pair (`boiler_append`, `neg_random`, ...).
    #[serde(default)]
    pub class: String,
    /// Language of the pair.
    #[serde(default)]
    pub lang: String,
    /// Length bucket of the pair (`short`, `medium`, `long`), where the set gives one.
    #[serde(default)]
    pub len_bucket: Option<String>,
}

/// What to fingerprint of a document that has a web page.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Source {
    /// The title and the text.
    #[default]
    Text,
    /// The page's HTML where there is one (title and text extracted), else the text.
    Html,
}

/// What [`evaluate`] needs of one document: its fingerprint and, for two-stage
/// evaluation, its sketch.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Signature {
    /// The fingerprint.
    pub fp: Fingerprint,
    /// The shingle sketch, when asked for and the text has words.
    pub sketch: Option<Sketch>,
    /// The fingerprint's weak bits, when sketches are asked for (for the query-directed
    /// probes of a mode's rule).
    pub weak_bits: Option<WeakBits>,
}

/// Fingerprints (and with `sketches`, sketches) every document in parallel. A document that
/// cannot be fingerprinted (no words) gets `None`; pairs with it are predicted "not
/// duplicate".
pub fn fingerprint_all(
    f: &Fingerprinter,
    docs: &[EvalDoc],
    source: Source,
    sketches: bool,
) -> HashMap<String, Option<Signature>> {
    docs.par_iter()
        .map(|d| {
            // A page as the store keeps it: what its reader left out counts ([`analyze_page`]).
            let (title, text, left_out) = match (&d.html, source) {
                (Some(page), Source::Html) => {
                    let page = html::parse(page);
                    (page.title, page.text, Some(page.left_out))
                }
                _ => (
                    d.title.clone().filter(|t| !t.is_empty()),
                    d.text.clone(),
                    None,
                ),
            };
            let sig = if sketches {
                let a = analyze_page(f, title.as_deref(), &text, left_out.as_deref());
                a.ok().map(|a| Signature {
                    fp: a.fingerprint,
                    sketch: a.sketch,
                    weak_bits: a.weak_bits,
                })
            } else {
                f.fingerprint(title.as_deref(), &text)
                    .ok()
                    .map(|fp| Signature {
                        fp,
                        sketch: None,
                        weak_bits: None,
                    })
            };
            (d.id.clone(), sig)
        })
        .collect()
}

/// Confusion counts at one k.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct Counts {
    /// Duplicates predicted duplicate.
    pub tp: u64,
    /// Non-duplicates predicted duplicate.
    pub fp: u64,
    /// Duplicates predicted not duplicate.
    pub fn_: u64,
    /// Non-duplicates predicted not duplicate.
    pub tn: u64,
}

impl Counts {
    fn add(&mut self, label: bool, predicted: bool) {
        match (label, predicted) {
            (true, true) => self.tp += 1,
            (false, true) => self.fp += 1,
            (true, false) => self.fn_ += 1,
            (false, false) => self.tn += 1,
        }
    }

    /// tp / (tp + fp); 1 when nothing was predicted duplicate.
    pub fn precision(&self) -> f64 {
        ratio(self.tp, self.tp + self.fp, 1.0)
    }

    /// tp / (tp + fn); 0 when there are no duplicates.
    pub fn recall(&self) -> f64 {
        ratio(self.tp, self.tp + self.fn_, 0.0)
    }

    /// Harmonic mean of precision and recall.
    pub fn f1(&self) -> f64 {
        let (p, r) = (self.precision(), self.recall());
        if p + r == 0.0 {
            0.0
        } else {
            2.0 * p * r / (p + r)
        }
    }

    /// fp / (fp + tn): the share of non-duplicates predicted duplicate.
    pub fn false_positive_rate(&self) -> f64 {
        ratio(self.fp, self.fp + self.tn, 0.0)
    }

    /// Number of pairs counted.
    pub fn pairs(&self) -> u64 {
        self.tp + self.fp + self.fn_ + self.tn
    }
}

fn ratio(num: u64, den: u64, empty: f64) -> f64 {
    if den == 0 {
        empty
    } else {
        num as f64 / den as f64
    }
}

/// Counts per row of a [`Predictor`] (for [`Predictor::Distance`], index = k).
pub type Rows = Vec<Counts>;

/// The result of [`evaluate`].
#[derive(Debug, Clone, Default, Serialize)]
pub struct Report {
    /// Pairs evaluated.
    pub pairs: u64,
    /// Pairs naming a document that is not in the input (skipped).
    pub missing: u64,
    /// Pairs with a document that could not be fingerprinted (counted as "not duplicate").
    pub unfingerprinted: u64,
    /// Over all pairs.
    pub overall: Rows,
    /// Per language.
    pub by_lang: BTreeMap<String, Rows>,
    /// Per `lang:class`.
    pub by_class: BTreeMap<String, Rows>,
    /// Per `lang:len_bucket`, for the pairs that have a length bucket.
    pub by_length: BTreeMap<String, Rows>,
}

/// What [`evaluate`] and [`BasePairs::collisions`] count as a predicted duplicate, in one
/// or more rows: a pair predicted duplicate in a row is predicted so in every later row.
#[derive(Debug, Clone, PartialEq)]
pub enum Predictor {
    /// Row k, for every k in `0..=max_k`: "distance ≤ k"; with `verify = Some(t)`, "distance
    /// ≤ k and sketch similarity ≥ t" (the two-stage query; a side without a sketch never
    /// matches).
    Distance {
        /// Largest k evaluated.
        max_k: u32,
        /// The two-stage query's similarity threshold.
        verify: Option<f64>,
    },
    /// One row: what a store laid out with `layout` answers under `rule` — the tables it
    /// probes for `rule.k` put the pair in one span ([`Layout::finds`]) or the sketches
    /// share one of the rule's bands ([`MatchRule::shares_band`]), and `rule` accepts it
    /// ([`MatchRule::accepts`]). A store reads at most
    /// [`crate::index::bands::MAX_BAND_CANDIDATES`] documents of a band: this counts them
    /// all.
    Rule {
        /// The store's layout.
        layout: Layout,
        /// The rule of its queries.
        rule: MatchRule,
    },
}

impl Predictor {
    /// Quality mode `quality` as a store of that mode created for `scale` documents answers
    /// it: the mode's layout for that size ([`Quality::layout`], what `simstore init
    /// --quality Q --expected-docs N` creates), and the mode's rule at its `k_max`.
    pub fn mode(quality: Quality, scale: u64) -> crate::Result<Self> {
        let layout = quality.layout(scale)?;
        let rule = quality.rule(layout.k_max());
        Ok(Predictor::Rule { layout, rule })
    }

    /// "Distance ≤ k" as a store laid out for `scale` documents with `k_max = k` answers it
    /// (exactly: the answer does not depend on the layout, its cost does).
    pub fn within(k: u32, scale: u64) -> crate::Result<Self> {
        let layout = Layout::for_expected_docs(scale, k)?;
        Ok(Predictor::Rule {
            layout,
            rule: MatchRule::within(k),
        })
    }

    /// Number of rows.
    pub fn rows(&self) -> usize {
        match self {
            Predictor::Distance { max_k, .. } => *max_k as usize + 1,
            Predictor::Rule { .. } => 1,
        }
    }

    /// The bands whose pairs are predicted duplicate at any distance (0: none).
    pub fn bands(&self) -> u32 {
        match self {
            Predictor::Distance { .. } => 0,
            Predictor::Rule { rule, .. } if rule.min_similarity.is_some() => rule.bands,
            Predictor::Rule { .. } => 0,
        }
    }

    /// The largest distance of a pair predicted duplicate, but for pairs sharing a band
    /// ([`Predictor::bands`]).
    pub fn reach(&self) -> u32 {
        match self {
            Predictor::Distance { max_k, .. } => *max_k,
            Predictor::Rule { rule, .. } => rule.reach.max(rule.k),
        }
    }

    /// Whether the prediction reads sketches (fingerprint them too).
    pub fn needs_sketches(&self) -> bool {
        match self {
            Predictor::Distance { verify, .. } => verify.is_some(),
            Predictor::Rule { rule, .. } => rule.min_similarity.is_some(),
        }
    }

    /// The first row in which the pair `a`, `b` is predicted duplicate (it is in every later
    /// row too), or `None` when no row predicts it.
    pub fn first_row(&self, a: &Signature, b: &Signature) -> Option<usize> {
        let distance = a.fp.distance(b.fp);
        match self {
            Predictor::Distance { max_k, verify } => {
                (distance <= *max_k && verified(*verify, a, b)).then_some(distance as usize)
            }
            Predictor::Rule { layout, rule } => {
                let (x, y) = (a.sketch.as_ref(), b.sketch.as_ref());
                let banded = rule.shares_band(x, y);
                if distance > rule.reach.max(rule.k) && !banded {
                    return None;
                }
                // `b` queries a store holding `a` (with its weak bits, when known).
                let probes = rule.probes_for(y);
                let flips = probing::query_flips(layout, rule.k, probes, b.weak_bits.as_ref());
                let found = (banded || probing::finds(layout, rule.k, &flips, b.fp.0, a.fp.0))
                    && rule.accepts(distance, x, y);
                found.then_some(0)
            }
        }
    }
}

/// Whether a pair passes the second stage: always without `verify`; with `Some(t)`, when
/// both have sketches whose estimated similarity is at least `t`.
fn verified(verify: Option<f64>, a: &Signature, b: &Signature) -> bool {
    match (verify, a.sketch, b.sketch) {
        (None, _, _) => true,
        (Some(t), Some(x), Some(y)) => x.similarity(&y) >= t,
        (Some(_), _, _) => false,
    }
}

/// Counts, in every row of `predictor`, the labelled `pairs` predicted duplicate or not,
/// overall, per language, per `lang:class` and per `lang:len_bucket`.
pub fn evaluate(
    fps: &HashMap<String, Option<Signature>>,
    pairs: &[Pair],
    predictor: &Predictor,
) -> Report {
    let n = predictor.rows();
    let mut report = Report {
        overall: vec![Counts::default(); n],
        ..Report::default()
    };
    for pair in pairs {
        let (Some(a), Some(b)) = (fps.get(&pair.a), fps.get(&pair.b)) else {
            report.missing += 1;
            continue;
        };
        report.pairs += 1;
        let first = match (a, b) {
            (Some(a), Some(b)) => predictor.first_row(a, b),
            _ => {
                report.unfingerprinted += 1;
                None
            }
        };
        let label = pair.label == 1;
        let by_lang = report
            .by_lang
            .entry(pair.lang.clone())
            .or_insert_with(|| vec![Counts::default(); n]);
        let by_class = report
            .by_class
            .entry(format!("{}:{}", pair.lang, pair.class))
            .or_insert_with(|| vec![Counts::default(); n]);
        let mut by_length = pair.len_bucket.as_ref().map(|bucket| {
            report
                .by_length
                .entry(format!("{}:{bucket}", pair.lang))
                .or_insert_with(|| vec![Counts::default(); n])
        });
        for row in 0..n {
            let predicted = first.is_some_and(|f| f <= row);
            report.overall[row].add(label, predicted);
            by_lang[row].add(label, predicted);
            by_class[row].add(label, predicted);
            if let Some(by_length) = by_length.as_mut() {
                by_length[row].add(label, predicted);
            }
        }
    }
    report
}

/// Shingle Jaccard similarity below which two texts are unrelated (the dev set screens its
/// negative pairs at 0.2 too).
pub const UNRELATED_JACCARD: f64 = 0.2;

/// Pairs of base documents predicted duplicate, per row of a [`Predictor`] (see
/// [`base_collisions`]).
#[derive(Debug, Clone, Default, Serialize)]
pub struct Collisions {
    /// Base documents fingerprinted.
    pub documents: u64,
    /// Per row: pairs of base documents predicted duplicate whose texts are unrelated
    /// (character 3-gram Jaccard below [`UNRELATED_JACCARD`]): false matches a store would
    /// report.
    pub unrelated_pairs: Vec<u64>,
    /// Per row: base documents predicted duplicate of at least one unrelated document — the
    /// share of pages a crawler would wrongly skip as "seen".
    pub unrelated_documents: Vec<u64>,
    /// Per row: pairs predicted duplicate whose texts do overlap (copies inside the source
    /// data).
    pub related_pairs: Vec<u64>,
}

/// The pairs of base documents (those without a `base_id`) within some distance of each
/// other, each marked related or not by its texts: found once ([`base_pairs`]), counted
/// under any predictor reaching no further ([`BasePairs::collisions`]).
#[derive(Debug, Clone)]
pub struct BasePairs {
    /// The base documents' signatures.
    sigs: Vec<Signature>,
    /// The distance the pairs were enumerated within.
    within: u32,
    /// `(a, b, related)`, indices into `sigs`.
    pairs: Vec<(u32, u32, bool)>,
}

/// Every pair of base documents within distance `within` of each other or sharing one of
/// the first `bands` bands of their sketches, with whether their texts are related (see
/// [`Collisions`]). The base documents of a labelled set are distinct texts, so a pair of
/// unrelated ones predicted duplicate is a false positive that labelled pairs may never
/// show.
pub fn base_pairs(
    docs: &[EvalDoc],
    fps: &HashMap<String, Option<Signature>>,
    (within, bands): (u32, u32),
) -> crate::Result<BasePairs> {
    let base: Vec<(&EvalDoc, Signature)> = docs
        .iter()
        .filter(|d| d.base_id.is_none())
        .filter_map(|d| match fps.get(&d.id) {
            Some(Some(sig)) => Some((d, *sig)),
            _ => None,
        })
        .collect();
    let values: Vec<u64> = base.iter().map(|b| b.1.fp.0).collect();
    let mut pairs: Vec<(u32, u32)> = Vec::new();
    crate::index::cluster::near_duplicates(&values, within, |a, b, _| {
        pairs.push((a, b));
        Ok(())
    })?;
    let sketches: Vec<Option<&Sketch>> = base.iter().map(|b| b.1.sketch.as_ref()).collect();
    pairs.extend(band_pairs(&sketches, bands));
    pairs.sort_unstable();
    pairs.dedup();
    let mut grams: HashMap<u32, Vec<u64>> = HashMap::new();
    for &(a, b) in &pairs {
        for i in [a, b] {
            grams.entry(i).or_insert_with(|| {
                let d = base[i as usize].0;
                char_trigrams(d.title.as_deref(), &d.text)
            });
        }
    }
    let pairs = pairs
        .into_iter()
        .map(|(a, b)| (a, b, jaccard(&grams[&a], &grams[&b]) >= UNRELATED_JACCARD))
        .collect();
    Ok(BasePairs {
        sigs: base.into_iter().map(|b| b.1).collect(),
        within,
        pairs,
    })
}

impl BasePairs {
    /// The base documents' pairs that `predictor` predicts duplicate, per row. Only the
    /// pairs within [`BasePairs::within`] are seen: find them within the predictor's reach
    /// ([`Predictor::reach`]).
    pub fn collisions(&self, predictor: &Predictor) -> Collisions {
        let n = predictor.rows();
        let mut out = Collisions {
            documents: self.sigs.len() as u64,
            unrelated_pairs: vec![0; n],
            unrelated_documents: vec![0; n],
            related_pairs: vec![0; n],
        };
        // Per document, the first row in which an unrelated document is predicted duplicate.
        let mut first_unrelated: HashMap<u32, usize> = HashMap::new();
        for &(a, b, related) in &self.pairs {
            let Some(first) = predictor.first_row(&self.sigs[a as usize], &self.sigs[b as usize])
            else {
                continue;
            };
            let counts = if related {
                &mut out.related_pairs
            } else {
                &mut out.unrelated_pairs
            };
            counts[first..].iter_mut().for_each(|c| *c += 1);
            if !related {
                for x in [a, b] {
                    let e = first_unrelated.entry(x).or_insert(first);
                    *e = (*e).min(first);
                }
            }
        }
        for first in first_unrelated.into_values() {
            out.unrelated_documents[first..]
                .iter_mut()
                .for_each(|c| *c += 1);
        }
        out
    }

    /// The distance the pairs were found within.
    pub fn within(&self) -> u32 {
        self.within
    }
}

/// Unlabelled false matches under `predictor`: [`base_pairs`] within its reach, counted
/// ([`BasePairs::collisions`]).
pub fn base_collisions(
    docs: &[EvalDoc],
    fps: &HashMap<String, Option<Signature>>,
    predictor: &Predictor,
) -> crate::Result<Collisions> {
    Ok(base_pairs(docs, fps, (predictor.reach(), predictor.bands()))?.collisions(predictor))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn distance(max_k: u32, verify: Option<f64>) -> Predictor {
        Predictor::Distance { max_k, verify }
    }

    fn pair(a: &str, b: &str, label: u8, class: &str) -> Pair {
        Pair {
            a: a.into(),
            b: b.into(),
            label,
            class: class.into(),
            lang: "en".into(),
            len_bucket: None,
        }
    }

    #[test]
    fn base_collisions_split_related_and_unrelated_pairs() {
        let doc = |id: &str, text: &str, base: Option<&str>| EvalDoc {
            id: id.into(),
            text: text.into(),
            base_id: base.map(Into::into),
            ..EvalDoc::default()
        };
        let docs = [
            doc("a", "the harbour opened a new crane on monday", None),
            doc("b", "copper mines cut output in the highlands", None),
            doc("c", "the harbour opened a new crane on tuesday", None),
            doc("far", "wheat exports rose after the rains", None),
            // A variant is never a base document, however close.
            doc(
                "a-v1",
                "the harbour opened a new crane on monday",
                Some("a"),
            ),
        ];
        let fps: HashMap<String, Option<Signature>> = [
            ("a", 0u64),
            ("b", 0b1),   // 1 from a, unrelated text
            ("c", 0b110), // 2 from a (related text), 3 from b
            ("far", !0),  // 64 from a
            ("a-v1", 0),
        ]
        .into_iter()
        .map(|(id, fp)| {
            let sig = Signature {
                fp: Fingerprint(fp),
                sketch: None,
                weak_bits: None,
            };
            (id.to_owned(), Some(sig))
        })
        .collect();
        let c = base_collisions(&docs, &fps, &distance(3, None)).unwrap();
        assert_eq!(c.documents, 4);
        // a–b at 1 (unrelated), a–c at 2 (related), b–c at 3 (unrelated).
        assert_eq!(c.unrelated_pairs, vec![0, 1, 1, 2]);
        assert_eq!(c.related_pairs, vec![0, 0, 1, 1]);
        assert_eq!(c.unrelated_documents, vec![0, 2, 2, 3]);
        assert!(jaccard(&char_trigrams(None, "abcd"), &char_trigrams(None, "abcd")) == 1.0);
        // Verification without sketches rejects every pair.
        let c = base_collisions(&docs, &fps, &distance(3, Some(0.1))).unwrap();
        assert_eq!(c.unrelated_pairs[3] + c.related_pairs[3], 0);
    }

    #[test]
    fn wilson_intervals_bracket_the_rate() {
        let (lo, hi) = wilson_interval(0, 200_000);
        assert_eq!(lo, 0.0);
        assert!(hi > 1.5e-5 && hi < 2.5e-5, "{hi}");
        let (lo, hi) = wilson_interval(40, 200_000);
        assert!(
            lo < 2e-4 && hi > 2e-4 && lo > 1e-4 && hi < 3e-4,
            "{lo} {hi}"
        );
        assert_eq!(wilson_interval(0, 0), (0.0, 1.0));
    }

    #[test]
    fn counts_per_k() {
        let fps: HashMap<String, Option<Signature>> = [
            ("a", Some(0)),
            ("b", Some(0b1)),   // distance 1 from a
            ("c", Some(0b111)), // distance 3 from a
            ("e", None),
        ]
        .into_iter()
        .map(|(id, fp)| {
            let sig = fp.map(|fp| Signature {
                fp: Fingerprint(fp),
                sketch: None,
                weak_bits: None,
            });
            (id.to_owned(), sig)
        })
        .collect();
        let short = |p: Pair| Pair {
            len_bucket: Some("short".into()),
            ..p
        };
        let pairs = [
            short(pair("a", "b", 1, "dup")),
            short(pair("a", "c", 0, "neg")),
            pair("a", "e", 1, "dup"),
            pair("a", "zz", 1, "dup"),
        ];
        let r = evaluate(&fps, &pairs, &distance(4, None));
        assert_eq!((r.pairs, r.missing, r.unfingerprinted), (3, 1, 1));
        let k0 = r.overall[0];
        assert_eq!((k0.tp, k0.fp, k0.fn_, k0.tn), (0, 0, 2, 1));
        let k1 = r.overall[1];
        assert_eq!((k1.tp, k1.fp, k1.fn_, k1.tn), (1, 0, 1, 1));
        let k3 = r.overall[3];
        assert_eq!((k3.tp, k3.fp, k3.fn_, k3.tn), (1, 1, 1, 0));
        assert!((k3.precision() - 0.5).abs() < 1e-12);
        assert!((k3.recall() - 0.5).abs() < 1e-12);
        assert!((k3.f1() - 0.5).abs() < 1e-12);
        assert_eq!(r.by_class["en:neg"][3].false_positive_rate(), 1.0);
        assert_eq!(r.by_class["en:neg"][2].false_positive_rate(), 0.0);
        // Only the pairs with a length bucket are counted by length.
        assert_eq!(r.by_length.len(), 1);
        let s3 = r.by_length["en:short"][3];
        assert_eq!((s3.tp, s3.fp, s3.fn_, s3.tn), (1, 1, 0, 0));
        let s0 = r.by_length["en:short"][0];
        assert_eq!((s0.tp, s0.fp, s0.fn_, s0.tn), (0, 0, 1, 1));
        // Verification without sketches rejects every pair.
        let r = evaluate(&fps, &pairs, &distance(4, Some(0.5)));
        assert_eq!(r.overall[4].tp + r.overall[4].fp, 0);
    }

    fn sig(fp: u64, sketch: Option<u8>) -> Signature {
        Signature {
            fp: Fingerprint(fp),
            sketch: sketch.map(Sketch::uniform),
            weak_bits: None,
        }
    }

    /// `a` with one bit flipped in the first leading block of each of `layout`'s tables.
    fn one_bit_in_each_prefix(layout: &Layout, a: u64) -> u64 {
        let tops: Vec<u32> = layout
            .widths()
            .iter()
            .scan(64u32, |top, &w| {
                *top -= u32::from(w);
                Some(*top)
            })
            .collect();
        let flips = layout
            .tables()
            .iter()
            .fold(0u64, |m, t| m | 1 << tops[usize::from(t.order()[0])]);
        a ^ flips
    }

    /// A mode counts what a store of the mode answers: a pair beyond k that the tables put
    /// in one span when the sketches agree; not one they never meet, however alike; a pair
    /// within k where a side has no sketch.
    #[test]
    fn a_mode_predicts_what_its_store_answers() {
        let mode = Predictor::mode(Quality::Standard, 10_000_000).unwrap();
        let Predictor::Rule { layout, rule } = &mode else {
            panic!("a mode is a rule")
        };
        assert_eq!((layout.k_max(), layout.tables().len()), (3, 4), "{layout}");
        assert_eq!(layout.lead(), 1, "{layout}");
        assert_eq!((rule.k, rule.reach), (3, 12));
        let a = 0x0123_4567_89AB_CDEFu64;
        // Six bits beyond the prefix of table 0: one span, distance 6.
        let in_span = a ^ layout.unpermute(0, 0b11_1111);
        assert_eq!((a ^ in_span).count_ones(), 6);
        assert!(layout.finds(3, a, in_span));
        // One bit in the first leading block of each table: every table's prefix differs,
        // at a distance within the reach.
        let apart = one_bit_in_each_prefix(layout, a);
        assert!((a ^ apart).count_ones() <= rule.reach);
        assert!(!layout.finds(3, a, apart));
        let cases = [
            (
                sig(a, Some(1)),
                sig(in_span, Some(1)),
                Some(0),
                "beyond k, verified",
            ),
            (
                sig(a, Some(1)),
                sig(in_span, Some(2)),
                None,
                "beyond k, sketches differ",
            ),
            (
                sig(a, None),
                sig(in_span, Some(1)),
                None,
                "beyond k, unverifiable",
            ),
            (
                sig(a, Some(1)),
                sig(apart, Some(1)),
                Some(0),
                "never in one span, sharing a band",
            ),
            (
                sig(a, Some(1)),
                sig(!a, Some(1)),
                Some(0),
                "64 bits apart, sharing a band",
            ),
            (
                sig(a, None),
                sig(a ^ 0b101, None),
                Some(0),
                "within k, no sketches",
            ),
            (
                sig(a, Some(1)),
                sig(a ^ 0b101, Some(2)),
                None,
                "within k, sketches differ",
            ),
        ];
        for (x, y, want, what) in cases {
            assert_eq!(mode.first_row(&x, &y), want, "{what}");
        }
        // Without bands, a pair the tables never meet is not found, however alike.
        let tables_only = Predictor::Rule {
            layout: layout.clone(),
            rule: MatchRule { bands: 0, ..*rule },
        };
        assert_eq!(
            tables_only.first_row(&sig(a, Some(1)), &sig(apart, Some(1))),
            None
        );
        // Through evaluate: one row, counted as the cases say.
        let fps: HashMap<String, Option<Signature>> = [
            ("a", sig(a, Some(1))),
            ("span", sig(in_span, Some(1))),
            ("apart", sig(apart, Some(1))),
        ]
        .into_iter()
        .map(|(id, s)| (id.to_owned(), Some(s)))
        .collect();
        let pairs = [pair("a", "span", 1, "dup"), pair("a", "apart", 1, "dup")];
        let r = evaluate(&fps, &pairs, &mode);
        assert_eq!(r.overall.len(), 1);
        let c = r.overall[0];
        assert_eq!((c.tp, c.fn_), (2, 0), "the band finds the pair apart");
        let c = evaluate(&fps, &pairs, &tables_only).overall[0];
        assert_eq!((c.tp, c.fn_), (1, 1));
        // The plain query within 7 finds both, and "distance <= 3" neither.
        assert_eq!(evaluate(&fps, &pairs, &distance(7, None)).overall[7].tp, 2);
        let plain = Predictor::within(3, 10_000_000).unwrap();
        assert_eq!(evaluate(&fps, &pairs, &plain).overall[0].tp, 0);
    }

    /// The base pairs are found once, within the largest reach, and counted under each
    /// predictor: a mode sees an unrelated pair beyond k in one span.
    #[test]
    fn base_pairs_are_counted_under_any_predictor() {
        let mode = Predictor::mode(Quality::Standard, 10_000_000).unwrap();
        let Predictor::Rule { layout, .. } = &mode else {
            panic!("a mode is a rule")
        };
        let a = 0x0123_4567_89AB_CDEFu64;
        let doc = |id: &str, text: &str| EvalDoc {
            id: id.into(),
            text: text.into(),
            ..EvalDoc::default()
        };
        let docs = [
            doc("a", "the harbour opened a new crane on monday"),
            doc("b", "copper mines cut output in the highlands"),
        ];
        let fps: HashMap<String, Option<Signature>> = [
            ("a", sig(a, Some(1))),
            ("b", sig(a ^ layout.unpermute(0, 0b11_1111), Some(1))),
        ]
        .into_iter()
        .map(|(id, s)| (id.to_owned(), Some(s)))
        .collect();
        let base = base_pairs(&docs, &fps, (8, 0)).unwrap();
        assert_eq!(base.within(), 8);
        let c = base.collisions(&mode);
        assert_eq!((c.documents, c.unrelated_pairs.clone()), (2, vec![1]));
        assert_eq!(c.unrelated_documents, vec![2]);
        let c = base.collisions(&distance(8, None));
        assert_eq!(c.unrelated_pairs, vec![0, 0, 0, 0, 0, 0, 1, 1, 1]);
        let plain = Predictor::within(3, 10_000_000).unwrap();
        assert_eq!(base.collisions(&plain).unrelated_pairs, vec![0]);
    }
}
