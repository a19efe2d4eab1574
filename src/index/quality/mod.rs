//! Quality modes: what a query with no explicit `k` or verification threshold counts as a
//! near duplicate ([`MatchRule`]), chosen once per store ([`Quality`]).
//!
//! A mode's rule takes as candidates every stored document that the store's tables put in
//! the query's spans within Hamming distance `reach` (all of them up to `k_max`, where the
//! tables are exact; beyond `k_max`, those that share a table prefix with the query, as in
//! LSH), and keeps a candidate when the shingle sketches agree. Measured on the development
//! set and on its unrelated base documents (docs/quality.md).

use std::fmt;
use std::str::FromStr;

use crate::error::{Error, Result};
use crate::index::bands::{self, BAND_DISTANCE_CAP};
use crate::index::layout::Layout;
use crate::types::Sketch;

mod fields;

pub use fields::RuleValue;

/// A store's quality mode, chosen at creation (`simstore init --quality`) and recorded in
/// the store: the layout's `k_max` and the rule of queries and checks given no `k`.
///
/// ```
/// use simstore::Quality;
/// let q: Quality = "high".parse().unwrap();
/// assert_eq!(q, Quality::High);
/// assert_eq!(Quality::default(), Quality::Standard);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum Quality {
    /// The default: the k_max = 3 tables, candidates within 12 in their spans and those
    /// sharing a band of the sketch, verified by the sketch.
    #[default]
    Standard,
    /// The k_max = 3 tables laid out for query-directed probes, 28 probes a query made
    /// from text and 4 sketch bands, candidates within 14 verified.
    High,
}

/// Sketch similarity the standard mode's candidates must reach.
pub const MODE_MIN_SIMILARITY: f64 = 0.3;

/// Sketch similarity the high mode's candidates must reach.
pub const HIGH_MIN_SIMILARITY: f64 = 0.3;

/// Sketch similarity a mode's rule asks of a pair in a dedup of a dataset (`simstore dedup
/// FILE...`, Python's `simstore.dedup`; [`MatchRule::for_datasets`]) instead of its own
/// 0.3. A mode's 0.3 sees through page chrome and through copies with a fifth of their
/// words edited, which a crawler wants to skip; in a dataset it also drops records that
/// share one passage with another (a quote, a paragraph of boilerplate), and an original
/// is lost. 0.6 of 3-token shingles takes a copy with about 8 % of its words edited (as
/// 5-token shingles at 0.4: looser than the MinHash pipelines of datasets, 0.7–0.8 of
/// 5-token shingles) and refuses two records unless three quarters of each is the other
/// (docs/quality.md, "A dataset's threshold").
pub const DATASET_MIN_SIMILARITY: f64 = 0.6;

/// A mode's rule treats a pair as having too little content to tell apart when either
/// sketch's text filled fewer bins than this ([`Sketch::shingles`]: about its distinct
/// 3-token shingles): a one-line review, one phrase repeated, a table of figures whose lines
/// the cleaner dropped. Such fingerprints coincide with unrelated ones' at small distances,
/// so the pair must reach [`FEW_SHINGLES_SIMILARITY`] instead of the mode's threshold.
pub const MIN_SHINGLES: u32 = 16;

/// A mode's rule never takes a text whose shingles filled fewer bins than this for a near
/// duplicate of anything: a phrase, one word repeated, an exclamation with emoji ("武汉加油！",
/// "\[加油\]\[加油\]") says too little to tell it from another such text (docs/quality.md).
/// Exact duplicates are still found by their content hash (`check_and_insert`,
/// `import --dedup`), and `--k K` still finds any fingerprint within K.
pub const MIN_CONTENT_SHINGLES: u32 = 4;

/// The sketch similarity a mode's rule asks of two sketches of Han characters
/// ([`Sketch::han_chars`]) at distance 0, instead of the mode's threshold; it rises by
/// [`HAN_SIMILARITY_PER_BIT`] with each bit between the fingerprints. Different Chinese
/// texts of one topic or one site share more character shingles than word shingles, so a
/// flat threshold either merges them or misses copies with edited characters; the
/// fingerprint's distance is the second, independent witness (docs/quality.md, spec v9).
pub const HAN_MIN_SIMILARITY: f64 = 0.25;

/// How much [`HAN_MIN_SIMILARITY`] rises with each bit of distance (0.55 at 12 bits, 0.6 at
/// 14).
pub const HAN_SIMILARITY_PER_BIT: f64 = 0.025;

/// How far below a rule's threshold the threshold of two sketches of Han characters may
/// start at distance 0: the modes' 0.3 less this is [`HAN_MIN_SIMILARITY`] (so the floor
/// changes nothing there); a dataset's 0.6 ([`DATASET_MIN_SIMILARITY`]) makes it 0.55.
pub const HAN_DISCOUNT: f64 = 0.05;

/// [`MIN_SHINGLES`] for sketches of Han characters: a Chinese text has about 1.5 characters
/// for each word, so the same content fills about 1.5 times the bins.
pub const HAN_MIN_SHINGLES: u32 = 24;

/// The sketch similarity a pair with too little content ([`MIN_SHINGLES`]) must reach in a
/// mode's rule: nearly the same shingles.
pub const FEW_SHINGLES_SIMILARITY: f64 = 0.8;

/// Candidate distance of the standard mode (and the distances its layout is chosen for,
/// [`probed_reach_share`]).
pub const MODE_REACH: u32 = 12;

/// The distances up to which the high mode's layout is chosen to see pairs
/// ([`probed_reach_share`]): a layout chosen for its whole reach has shorter prefixes, and
/// the candidates it fetches cost more than the copies they add (docs/quality.md).
pub const HIGH_LAYOUT_REACH: u32 = 12;

/// Candidate distance of the high mode.
pub const HIGH_REACH: u32 = 14;

/// Query-directed probes of the standard mode ([`MatchRule::probes`]): none, its band
/// spans find more of the copies its tables miss, for fewer spans.
pub const MODE_PROBES: u32 = 0;

/// Query-directed probes of the standard mode on a store without band tables (format 7 and
/// older): what it read before it read bands.
pub const MODE_PROBES_WITHOUT_BANDS: u32 = 4;

/// Query-directed probes of the high mode ([`MatchRule::probes`]).
pub const HIGH_PROBES: u32 = 28;

/// The high mode's probes for each of its bands a store lacks ([`Quality::rule_for`]).
pub const PROBES_PER_MISSING_BAND: u32 = 2;

/// Band tables a standard store keeps and the standard mode reads ([`MatchRule::bands`]).
pub const MODE_BANDS: u32 = 2;

/// Band tables a high store keeps and the high mode reads: two more than the standard
/// mode's, about 10.5 bytes a document each, for the Chinese copies whose sketches share
/// no band among the first two.
pub const HIGH_BANDS: u32 = bands::MAX_BANDS;

/// The extra spans the high mode's layout is chosen to afford ([`Quality::extra_spans`]):
/// the 44 probes it read before it read bands (the layouts did not change).
pub const HIGH_LAYOUT_SPANS: u32 = 44;

impl Quality {
    /// Every mode, in order of cost.
    pub const ALL: [Quality; 2] = [Quality::Standard, Quality::High];

    /// The `k_max` of a store created in this mode (the tables answer it exactly).
    pub fn k_max(self) -> u32 {
        3
    }

    /// What [`Quality::layout`] maximizes: the share of the pairs at distances k_max + 1 up
    /// to the reach (high: up to [`HIGH_LAYOUT_REACH`]) that the tables see with one flipped
    /// prefix bit ([`probed_reach_share`]).
    fn share(self, layout: &Layout) -> f64 {
        match self {
            Quality::Standard => probed_reach_share(layout, MODE_REACH, 1),
            Quality::High => probed_reach_share(layout, HIGH_LAYOUT_REACH, 1),
        }
    }

    /// The query-directed probes of the mode's rule ([`MatchRule::probes`]).
    pub fn probes(self) -> u32 {
        match self {
            Quality::Standard => MODE_PROBES,
            Quality::High => HIGH_PROBES,
        }
    }

    /// The sketch similarity the mode's candidates must reach.
    pub fn min_similarity(self) -> f64 {
        match self {
            Quality::Standard => MODE_MIN_SIMILARITY,
            Quality::High => HIGH_MIN_SIMILARITY,
        }
    }

    /// A query's estimated time on `layout` over `n` fingerprints with the mode's extra
    /// spans ([`Quality::extra_spans`]): each costs about what one of the tables' own does
    /// ([`Layout::expected_query_us`]).
    pub fn expected_query_us(self, layout: &Layout, n: f64) -> f64 {
        layout.expected_query_us(n) * spans_per_table_span(layout, self.extra_spans())
    }

    /// The spans beyond the tables' own that the mode's layout is chosen to afford, kept
    /// so that the layouts do not change: the high mode's `HIGH_LAYOUT_SPANS`; the standard
    /// mode's 2 band spans counted twice, since their candidates are records the tables
    /// did not fetch.
    pub fn extra_spans(self) -> u32 {
        match self {
            Quality::Standard => 2 * MODE_BANDS,
            Quality::High => HIGH_LAYOUT_SPANS,
        }
    }

    /// The layout a store of this mode gets for `expected_docs` documents: of the
    /// coverings with the mode's `k_max`, those within the mode's budget beside the plain
    /// layout ([`Layout::for_expected_docs`] with k_max = 3) — at most
    /// [`Quality::cost_factors`] times its estimated query time and tables — the one whose
    /// probe finds the most pairs beyond k_max (`Quality::share`; ties: fewer tables). The
    /// plain layout is kept unless another sees 5 % more of the reach.
    pub fn layout(self, expected_docs: u64) -> Result<Layout> {
        let n = expected_docs.max(1) as f64;
        let plain = Layout::for_expected_docs(expected_docs, 3)?;
        let (time, tables) = self.cost_factors();
        let max_us = plain.expected_query_us(n) * time;
        let max_tables = (plain.tables().len() as f64 * tables).floor() as usize;
        let k_max = self.k_max();
        // Another layout than the plain one (when it has the mode's k_max) must see at least
        // 5 % more of the reach: a layout of odd block widths for a sliver is not worth it.
        let mut best: Option<(f64, Layout)> =
            (plain.k_max() == k_max).then(|| (self.share(&plain) * 1.05, plain.clone()));
        let affordable = Layout::coverings(k_max)
            .filter(|l| l.tables().len() <= max_tables && self.expected_query_us(l, n) <= max_us);
        for layout in affordable {
            let share = self.share(&layout);
            let better = best.as_ref().is_none_or(|(s, l)| {
                share > *s || (share == *s && layout.tables().len() < l.tables().len())
            });
            if better {
                best = Some((share, layout));
            }
        }
        best.map(|(_, l)| l).ok_or_else(|| {
            Error::InvalidLayout(format!("no {self} layout for {expected_docs} documents"))
        })
    }

    /// The layout of explicit options, as [`Layout::choose`], where a store of this mode
    /// takes its own ([`Quality::layout`]) when neither `k_max` nor `blocks` is given.
    pub fn choose_layout(
        self,
        k_max: Option<u32>,
        blocks: Option<u32>,
        lead: Option<u32>,
        expected_docs: u64,
    ) -> Result<Layout> {
        match (k_max, blocks) {
            (None, None) if lead.is_none() => self.layout(expected_docs),
            _ => Layout::choose(k_max.unwrap_or(self.k_max()), blocks, lead, expected_docs),
        }
    }

    /// The mode's budget beside the plain k_max = 3 layout of the same size: at most
    /// `(time, tables)` times its estimated query time and its number of tables (standard:
    /// 2.8× and 1.5×; high: 8× and 3×, their probes counted: [`Quality::expected_query_us`]).
    /// The plain layout itself is kept whatever the probes cost on it.
    pub fn cost_factors(self) -> (f64, f64) {
        match self {
            Quality::Standard => (2.8, 1.5),
            Quality::High => (8.0, 3.0),
        }
    }

    /// The mode's rule on a store whose layout answers `k_max` exactly.
    pub fn rule(self, k_max: u32) -> MatchRule {
        let (reach, probes) = match self {
            Quality::Standard => (MODE_REACH, MODE_PROBES),
            Quality::High => (HIGH_REACH, HIGH_PROBES),
        };
        MatchRule {
            k: k_max,
            reach: reach.max(k_max),
            min_similarity: Some(self.min_similarity()),
            unverifiable_within_k: true,
            probes,
            min_shingles: MIN_SHINGLES,
            bands: self.bands(),
            equal_short_texts: false,
        }
    }

    /// The band tables a store created in this mode keeps, and the mode's rule reads
    /// (standard `MODE_BANDS`, high `HIGH_BANDS`).
    pub fn bands(self) -> u32 {
        match self {
            Quality::Standard => MODE_BANDS,
            Quality::High => HIGH_BANDS,
        }
    }

    /// The mode's rule on a store whose layout answers `k_max` exactly and that keeps
    /// `bands` band tables: [`Quality::rule`] reading at most those. On a store without
    /// any (format 7 and older), the standard mode reads its former probes instead
    /// (`MODE_PROBES_WITHOUT_BANDS`), so such a store answers as it did; the high mode
    /// reads `PROBES_PER_MISSING_BAND` more probes for each band the store lacks.
    pub fn rule_for(self, k_max: u32, bands: u32) -> MatchRule {
        let mut rule = self.rule(k_max);
        let missing = rule.bands.saturating_sub(bands);
        rule.bands -= missing;
        match self {
            Quality::Standard if rule.bands == 0 => rule.probes = MODE_PROBES_WITHOUT_BANDS,
            Quality::Standard => {}
            Quality::High => rule.probes += PROBES_PER_MISSING_BAND * missing,
        }
        rule
    }

    /// The name used on the command line and in JSON.
    pub fn name(self) -> &'static str {
        match self {
            Quality::Standard => "standard",
            Quality::High => "high",
        }
    }

    /// The mode's byte in the store's `meta` space.
    pub fn code(self) -> u8 {
        match self {
            Quality::Standard => 0,
            Quality::High => 1,
        }
    }

    /// The mode of a stored byte, if known.
    pub fn from_code(code: u8) -> Option<Self> {
        Quality::ALL.into_iter().find(|q| q.code() == code)
    }
}

/// The spans a query with `probes` query-directed probes reads on `layout`, per span of the
/// tables' own: the factor by which the probes multiply a query's cost (each extra span
/// costs about what one of the tables' own does).
pub fn spans_per_table_span(layout: &Layout, probes: u32) -> f64 {
    let tables = layout.tables().len() as f64;
    (tables + f64::from(probes)) / tables
}

/// Samples per distance in [`probed_reach_share`].
const REACH_SAMPLES: u64 = 512;

/// The share of fingerprint pairs at distances `k_max + 1 ..= reach` (averaged over the
/// distances; each distance by `REACH_SAMPLES` (512) pseudo-random patterns of differing bits,
/// the same for every layout) that a probe of `layout`'s tables finds when a table also
/// finds the pairs whose prefixes differ in up to `slack` bits: how much of a mode's reach
/// beyond the exact `k_max` the layout sees, with query-directed probes that flip the
/// right bits (the model by which both modes pick their layouts). 1 when `reach ≤ k_max`.
pub fn probed_reach_share(layout: &Layout, reach: u32, slack: u32) -> f64 {
    let k_max = layout.k_max();
    if reach <= k_max {
        return 1.0;
    }
    let tables = layout.tables_for_k(k_max).unwrap_or(&[]);
    let masks: Vec<u64> = tables
        .iter()
        .map(|&t| crate::index::probing::prefix_mask(layout, t))
        .collect();
    let mut state = 0x5EED_u64;
    let mut found = 0u64;
    for d in (k_max + 1)..=reach {
        for _ in 0..REACH_SAMPLES {
            let mut x = 0u64;
            while x.count_ones() < d {
                state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
                x |= 1 << (splitmix(state) % 64);
            }
            found += u64::from(masks.iter().any(|m| (x & m).count_ones() <= slack));
        }
    }
    found as f64 / (REACH_SAMPLES * u64::from(reach - k_max)) as f64
}

fn splitmix(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

impl fmt::Display for Quality {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for Quality {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, String> {
        Quality::ALL
            .into_iter()
            .find(|q| q.name() == s)
            .ok_or_else(|| format!("unknown quality mode {s:?}: use standard or high"))
    }
}

/// When a candidate found by the tables is a near duplicate.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct MatchRule {
    /// The distance answered exactly (at most the store's `k_max`): without verification,
    /// the rule is "distance ≤ k".
    pub k: u32,
    /// Largest candidate distance (≥ `k`). Beyond `k` only candidates in the spans of the
    /// tables probed for `k` are seen: not every document within `reach`.
    pub reach: u32,
    /// With `Some(t)`, a candidate matches when both sketches exist and their estimated
    /// similarity is at least `t`.
    pub min_similarity: Option<f64>,
    /// With verification, what happens when either side has no sketch (a fingerprint-only
    /// document or query): `true` — it matches when within `k`; `false` — it never does.
    pub unverifiable_within_k: bool,
    /// Query-directed probes (`crate::index::probing`): how many extra spans a query
    /// that knows its fingerprint's weak bits (one made from text) reads beyond the tables'
    /// own. 0: none.
    pub probes: u32,
    /// With verification: a pair where either sketch filled fewer bins than this
    /// ([`Sketch::shingles`]) has too little content for the threshold, and must reach
    /// `FEW_SHINGLES_SIMILARITY` (if higher); below `MIN_CONTENT_SHINGLES` it never
    /// matches ([`MatchRule::threshold`]). 0: no such guard (`--verify T` alone).
    pub min_shingles: u32,
    /// Candidates from the sketch's first `bands` bands (`crate::index::bands`): a pair
    /// whose sketches share one is a candidate at any distance, and is verified at its
    /// distance capped at `BAND_DISTANCE_CAP`. 0: none (the tables' candidates only).
    pub bands: u32,
    /// With the guard: a pair where either sketch filled fewer than `MIN_CONTENT_SHINGLES`
    /// bins (at least one) matches when the sketches are equal, instead of never: a
    /// dataset's short record repeated ([`MatchRule::for_datasets`]; docs/design.md §6).
    pub equal_short_texts: bool,
}

impl MatchRule {
    /// The rule as a dedup of a dataset applies it: a verifying rule's threshold raised to
    /// at least [`DATASET_MIN_SIMILARITY`] (two sketches of Han characters': that less
    /// [`HAN_DISCOUNT`]), and its bands, if any, all the sketch's ([`bands::SKETCH_BANDS`]:
    /// in memory, a band costs a sort), and equal short texts taken
    /// ([`MatchRule::equal_short_texts`]); a rule that does not verify is unchanged.
    pub fn for_datasets(self) -> Self {
        let every_band = self.min_similarity.is_some() && self.bands > 0;
        MatchRule {
            equal_short_texts: self.min_similarity.is_some(),
            min_similarity: self.min_similarity.map(|t| t.max(DATASET_MIN_SIMILARITY)),
            bands: if every_band {
                bands::SKETCH_BANDS
            } else {
                self.bands
            },
            ..self
        }
    }

    /// "Distance ≤ k": the plain query, exact.
    pub fn within(k: u32) -> Self {
        MatchRule {
            k,
            reach: k,
            min_similarity: None,
            unverifiable_within_k: true,
            probes: 0,
            min_shingles: 0,
            bands: 0,
            equal_short_texts: false,
        }
    }

    /// "Distance ≤ k and sketch similarity ≥ t" (the two-stage query, `--verify t`): a
    /// side without a sketch never matches.
    pub fn verified(k: u32, min_similarity: f64) -> Self {
        MatchRule {
            min_similarity: Some(min_similarity),
            unverifiable_within_k: false,
            ..Self::within(k)
        }
    }

    /// Whether a candidate at `distance` matches, given the query's and the candidate's
    /// sketches. Beyond the reach only a pair that shares a band does
    /// ([`MatchRule::bands`]), verified at its distance capped at `BAND_DISTANCE_CAP`.
    pub fn accepts(&self, distance: u32, query: Option<&Sketch>, stored: Option<&Sketch>) -> bool {
        self.accepts_exact(distance, query, stored, None)
    }

    /// [`MatchRule::accepts`], with the similarity of the two texts' shingle sets when it is
    /// known (`exact`, see [`crate::text::sketch::jaccard`]) in place of the sketches'
    /// estimate of it.
    pub fn accepts_exact(
        &self,
        distance: u32,
        query: Option<&Sketch>,
        stored: Option<&Sketch>,
        exact: Option<f64>,
    ) -> bool {
        if !self.in_reach(distance, query, stored) {
            return false;
        }
        match (self.min_similarity, query, stored) {
            (None, _, _) => distance <= self.k,
            (Some(t), Some(a), Some(b)) => {
                let similarity = exact.unwrap_or_else(|| a.similarity(b));
                similarity >= self.threshold(t, self.verified_at(distance), a, b)
            }
            (Some(_), _, _) => self.unverifiable_within_k && distance <= self.k,
        }
    }

    /// How far the sketches' estimate of a candidate pair's similarity is from the
    /// threshold the rule holds it to (positive: above), when the estimate decides the
    /// pair: the rule verifies, both have sketches, enough content for a finite threshold,
    /// and the pair is within the reach or shares a band. `None` otherwise.
    pub fn margin(
        &self,
        distance: u32,
        query: Option<&Sketch>,
        stored: Option<&Sketch>,
    ) -> Option<f64> {
        if !self.in_reach(distance, query, stored) {
            return None;
        }
        let (t, a, b) = (self.min_similarity?, query?, stored?);
        let threshold = self.threshold(t, self.verified_at(distance), a, b);
        threshold.is_finite().then(|| a.similarity(b) - threshold)
    }

    /// Whether a candidate at `distance` may match at all: within the reach, or sharing a
    /// band — but not by a band alone when either sketch is of a page's whole visible text
    /// ([`Sketch::whole_text`]). Such a sketch speaks for the whole page, link lists and
    /// all; that the main texts agree too is the fingerprints' part, which a distance
    /// within the reach answers for (two short articles on one site's template that show
    /// the same list of popular links share most of their sketches, not their main texts).
    fn in_reach(&self, distance: u32, query: Option<&Sketch>, stored: Option<&Sketch>) -> bool {
        if distance <= self.reach {
            return true;
        }
        let whole = query.is_some_and(Sketch::whole_text) || stored.is_some_and(Sketch::whole_text);
        !whole && self.shares_band(query, stored)
    }

    /// The distance at which a pair at `distance` is verified: its own, but at most
    /// `BAND_DISTANCE_CAP` (or the reach, if larger), which only a pair found by a band
    /// exceeds.
    pub fn verified_at(&self, distance: u32) -> u32 {
        distance.min(BAND_DISTANCE_CAP.max(self.reach))
    }

    /// The query-directed probes ([`MatchRule::probes`]) of a query whose sketch is
    /// `sketch`: the rule's; for a page compared by its whole visible text
    /// ([`Sketch::whole_text`]) under a rule that reads bands, those of the same rule on a
    /// store without band tables ([`Quality::rule_for`]): a whole page's bands speak for
    /// its link lists too, which its copies on other templates do not share, so they rarely
    /// bring those copies, and its fingerprint (its main text's) is probed instead.
    pub fn probes_for(&self, sketch: Option<&Sketch>) -> u32 {
        let whole = sketch.is_some_and(Sketch::whole_text);
        match whole && self.bands > 0 && self.min_similarity.is_some() {
            true => {
                (self.probes + PROBES_PER_MISSING_BAND * self.bands).max(MODE_PROBES_WITHOUT_BANDS)
            }
            false => self.probes,
        }
    }

    /// Whether the rule reads bands and the two sketches share one of them: the pair is a
    /// candidate however far apart its fingerprints are.
    pub fn shares_band(&self, query: Option<&Sketch>, stored: Option<&Sketch>) -> bool {
        match (query, stored) {
            (Some(a), Some(b)) if self.bands > 0 && self.min_similarity.is_some() => {
                bands::share(a, b, self.bands)
            }
            _ => false,
        }
    }

    /// The similarity two sketches at `distance` must reach under threshold `t`. With the
    /// guard ([`MatchRule::min_shingles`] > 0): more than 1 (never; 1 under
    /// [`MatchRule::equal_short_texts`]) when either filled fewer than
    /// `MIN_CONTENT_SHINGLES` bins; for two sketches of Han characters,
    /// `HAN_MIN_SIMILARITY` plus `HAN_SIMILARITY_PER_BIT` a bit instead of `t`, but at
    /// least `t − HAN_DISCOUNT` (the higher of that and `t` when only one is);
    /// `FEW_SHINGLES_SIMILARITY` at least when either
    /// filled fewer than `min_shingles` bins (`HAN_MIN_SHINGLES` with Han characters).
    /// Without the guard, `t`.
    pub fn threshold(&self, t: f64, distance: u32, a: &Sketch, b: &Sketch) -> f64 {
        let content = a.shingles().min(b.shingles());
        if self.min_shingles == 0 {
            return t;
        }
        if content < MIN_CONTENT_SHINGLES {
            let equal = self.equal_short_texts && content > 0;
            return if equal { 1.0 } else { f64::INFINITY };
        }
        let han = HAN_MIN_SIMILARITY + HAN_SIMILARITY_PER_BIT * f64::from(distance);
        let (t, min_shingles) = match (a.han_chars(), b.han_chars()) {
            (false, false) => (t, self.min_shingles),
            (true, true) => (
                han.max(t - HAN_DISCOUNT),
                self.min_shingles.max(HAN_MIN_SHINGLES),
            ),
            _ => (t.max(han), self.min_shingles.max(HAN_MIN_SHINGLES)),
        };
        if content < min_shingles {
            t.max(FEW_SHINGLES_SIMILARITY)
        } else {
            t
        }
    }

    /// The rule for a query that has no sketch: verification cannot apply, so it is
    /// "distance ≤ k" when unverifiable documents match within k, and matches nothing
    /// otherwise (`None`).
    pub fn without_sketch(&self) -> Option<MatchRule> {
        match (self.min_similarity, self.unverifiable_within_k) {
            (None, _) | (Some(_), true) => Some(MatchRule::within(self.k)),
            (Some(_), false) => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sketch(byte: u8) -> Sketch {
        Sketch::uniform(byte)
    }

    /// Two Chinese sketches found by a band alone far apart are verified at the cap's
    /// distance: 0.25 + 0.025 × 24 = 0.85.
    #[test]
    fn band_pairs_beyond_the_cap_are_verified_at_the_cap() {
        let rule = Quality::Standard.rule(3);
        let mut a = sketch(1);
        a.0[63] |= crate::types::sketch::HAN_CHARS_FLAG;
        let mut b = a;
        // 8 of 63 minima differ: similarity ~0.87, above 0.85.
        b.0[10..18].copy_from_slice(&[7; 8]);
        assert!(rule.accepts(40, Some(&a), Some(&b)));
        b.0[18..20].copy_from_slice(&[7; 2]);
        assert!(a.similarity(&b) < 0.85);
        assert!(!rule.accepts(40, Some(&a), Some(&b)));
        assert!(rule.accepts(12, Some(&a), Some(&b)), "0.55 at 12 bits");
    }

    /// A store without band tables (format 7 and older) keeps the standard mode's former
    /// probes; one with them reads its bands instead. A high store with fewer bands than
    /// the mode's reads more probes.
    #[test]
    fn a_store_without_bands_keeps_the_former_probes() {
        let old = Quality::Standard.rule_for(3, 0);
        assert_eq!((old.bands, old.probes), (0, MODE_PROBES_WITHOUT_BANDS));
        let new = Quality::Standard.rule_for(3, 2);
        assert_eq!((new.bands, new.probes), (2, 0));
        assert_eq!(new, Quality::Standard.rule(3));
        let high = Quality::High.rule_for(3, 0);
        assert_eq!((high.bands, high.probes), (0, HIGH_PROBES + 8));
        let two = Quality::High.rule_for(3, 2);
        assert_eq!(
            (two.bands, two.probes),
            (2, 32),
            "as a high store of 2 bands read"
        );
        assert_eq!(Quality::High.rule_for(3, HIGH_BANDS), Quality::High.rule(3));
    }

    /// A page compared whole is probed as a store without band tables probes, in either
    /// mode; a main text's sketch, or a rule without bands or sketches, keeps its probes.
    #[test]
    fn a_whole_page_is_probed_as_without_bands() {
        let (a, whole) = (sketch(1), sketch(1).of_whole_text());
        for quality in Quality::ALL {
            let rule = quality.rule(3);
            assert_eq!(rule.probes_for(Some(&a)), rule.probes);
            assert_eq!(rule.probes_for(None), rule.probes);
            let without = quality.rule_for(3, 0).probes;
            assert!(without > rule.probes, "{quality}");
            assert_eq!(rule.probes_for(Some(&whole)), without, "{quality}");
            let no_bands = quality.rule_for(3, 0);
            assert_eq!(no_bands.probes_for(Some(&whole)), no_bands.probes);
        }
        assert_eq!(MatchRule::within(3).probes_for(Some(&whole)), 0);
    }

    #[test]
    fn a_whole_page_sketch_needs_the_reach_not_a_band() {
        let rule = Quality::Standard.rule(3);
        let a = sketch(1);
        let whole = a.of_whole_text();
        assert!(whole.whole_text() && !a.whole_text());
        assert_eq!(
            whole.shingles(),
            a.shingles(),
            "the flag leaves the count alone"
        );
        assert!((whole.similarity(&a) - 1.0).abs() < 1e-9);
        // Within the reach, as any pair; beyond it a shared band brings a pair of main-text
        // sketches, never one with a whole page's, from either side.
        assert!(rule.accepts(MODE_REACH, Some(&whole), Some(&whole)));
        assert!(rule.accepts(MODE_REACH + 1, Some(&a), Some(&a)));
        for (q, s) in [(&whole, &a), (&a, &whole), (&whole, &whole)] {
            assert!(!rule.accepts(MODE_REACH + 1, Some(q), Some(s)));
            assert_eq!(rule.margin(MODE_REACH + 1, Some(q), Some(s)), None);
        }
    }

    #[test]
    fn a_mode_rule_verifies_beyond_k_and_falls_back_within_k() {
        let rule = Quality::Standard.rule(3);
        let (a, b) = (sketch(1), sketch(2));
        assert!(rule.accepts(MODE_REACH, Some(&a), Some(&a)));
        let no_bands = MatchRule { bands: 0, ..rule };
        assert!(
            !no_bands.accepts(MODE_REACH + 1, Some(&a), Some(&a)),
            "beyond reach"
        );
        // Beyond the reach, a pair sharing a band is verified (at most at the cap's
        // distance); a pair as similar that shares none is not a candidate.
        assert!(rule.accepts(MODE_REACH + 1, Some(&a), Some(&a)));
        assert!(rule.accepts(64, Some(&a), Some(&a)));
        let mut other_bands = a;
        other_bands.0[..8].copy_from_slice(&[9; 8]);
        assert!(a.similarity(&other_bands) > 0.85);
        assert!(rule.accepts(MODE_REACH, Some(&a), Some(&other_bands)));
        assert!(!rule.accepts(MODE_REACH + 1, Some(&a), Some(&other_bands)));
        assert!(!rule.accepts(0, Some(&a), Some(&b)), "sketches disagree");
        assert!(rule.accepts(3, None, Some(&a)) && rule.accepts(3, Some(&a), None));
        assert!(!rule.accepts(4, None, None), "unverifiable beyond k");
        assert_eq!(rule.without_sketch(), Some(MatchRule::within(3)));
        assert_eq!(Quality::High.rule(3).k, 3);
        assert_eq!(Quality::High.rule(3).reach, HIGH_REACH);
        assert_eq!(Quality::High.rule(3).probes, HIGH_PROBES);
        assert_eq!(Quality::Standard.rule(3).probes, MODE_PROBES);
        assert_eq!(Quality::Standard.rule(14).reach, 14);
    }

    /// Two sketches that share `equal` of their minima, from texts that filled `bins` bins.
    fn sketches(equal: usize, bins: u8) -> (Sketch, Sketch) {
        let mut a = [0u8; Sketch::BYTES];
        let mut b = [0u8; Sketch::BYTES];
        for i in 0..crate::types::sketch::MINIMA {
            a[i] = i as u8;
            b[i] = if i < equal { i as u8 } else { 255 - i as u8 };
        }
        a[crate::types::sketch::MINIMA] = bins;
        b[crate::types::sketch::MINIMA] = bins;
        (Sketch(a), Sketch(b))
    }

    /// A pair of texts with too little content needs nearly the same shingles under a mode's
    /// rule, whatever the distance; the explicit `--verify T` rule has no such guard.
    #[test]
    fn too_little_content_needs_nearly_equal_sketches() {
        let rule = Quality::Standard.rule(3);
        let (a, b) = sketches(40, 63);
        assert!(a.similarity(&b) > MODE_MIN_SIMILARITY && a.similarity(&b) < 0.8);
        assert!(rule.accepts(0, Some(&a), Some(&b)), "enough content");
        let (a, b) = sketches(40, MIN_SHINGLES as u8 - 1);
        assert!(!rule.accepts(0, Some(&a), Some(&b)), "too little content");
        assert!(MatchRule::verified(3, 0.3).accepts(0, Some(&a), Some(&b)));
        let (a, b) = sketches(60, 4);
        assert!(rule.accepts(2, Some(&a), Some(&b)), "nearly equal");
        let (a, b) = sketches(63, MIN_CONTENT_SHINGLES as u8 - 1);
        assert!(
            !rule.accepts(0, Some(&a), Some(&b)),
            "too short to tell apart"
        );
        assert!(MatchRule::within(0).accepts(0, Some(&a), Some(&b)));
    }

    /// A dataset's rule takes two short texts when their sketches are equal (the same few
    /// shingles), and no other pair of them; a store's never does.
    #[test]
    fn a_datasets_rule_takes_equal_short_texts() {
        for mode in Quality::ALL {
            let (store, dataset) = (mode.rule(3), mode.rule(3).for_datasets());
            for bins in 1..MIN_CONTENT_SHINGLES as u8 {
                let (a, b) = sketches(63, bins);
                assert!(dataset.accepts(0, Some(&a), Some(&b)), "{bins} bins, equal");
                assert!(!store.accepts(0, Some(&a), Some(&b)), "a store's rule");
                let (a, b) = sketches(62, bins);
                assert!(
                    !dataset.accepts(0, Some(&a), Some(&b)),
                    "{bins} bins, 62 equal"
                );
            }
            // No content at all: nothing to tell, never taken.
            let (a, b) = sketches(63, 0);
            assert!(!dataset.accepts(0, Some(&a), Some(&b)));
        }
    }

    /// Two sketches of Han characters need more agreement the farther apart their
    /// fingerprints are; word sketches keep the flat threshold; `--verify T` ignores it.
    #[test]
    fn han_character_sketches_need_more_with_distance() {
        let rule = Quality::Standard.rule(3);
        let han = |(mut a, mut b): (Sketch, Sketch)| {
            a.0[crate::types::sketch::MINIMA] |= crate::types::sketch::HAN_CHARS_FLAG;
            b.0[crate::types::sketch::MINIMA] |= crate::types::sketch::HAN_CHARS_FLAG;
            (a, b)
        };
        // 20 of 63 minima equal: similarity ≈ 0.315.
        let (a, b) = han(sketches(20, 63));
        assert!(a.han_chars() && a.shingles() == 63);
        let s = a.similarity(&b);
        assert!(s > 0.31 && s < 0.32, "{s}");
        assert!(rule.accepts(2, Some(&a), Some(&b)), "0.25 + 0.05 <= {s}");
        assert!(!rule.accepts(4, Some(&a), Some(&b)), "0.25 + 0.1 > {s}");
        let (w, x) = sketches(20, 63);
        assert!(
            rule.accepts(4, Some(&w), Some(&x)),
            "word sketches: 0.3 flat"
        );
        assert!(
            !rule.accepts(4, Some(&w), Some(&b)),
            "one of each: the higher"
        );
        assert!(MatchRule::verified(8, 0.3).accepts(8, Some(&a), Some(&b)));
        // 40 equal: ≈ 0.63, enough at 12 bits (0.55), but not from 20 bins of Han characters.
        let (a, b) = han(sketches(40, 63));
        assert!(rule.accepts(12, Some(&a), Some(&b)));
        let (a, b) = han(sketches(40, HAN_MIN_SHINGLES as u8 - 1));
        assert!(
            !rule.accepts(0, Some(&a), Some(&b)),
            "too little Chinese text"
        );
        let (w, x) = sketches(40, HAN_MIN_SHINGLES as u8 - 1);
        assert!(rule.accepts(0, Some(&w), Some(&x)), "enough words");
    }

    #[test]
    fn a_datasets_rule_asks_more_of_every_sketch() {
        let han = |(mut a, mut b): (Sketch, Sketch)| {
            a.0[crate::types::sketch::MINIMA] |= crate::types::sketch::HAN_CHARS_FLAG;
            b.0[crate::types::sketch::MINIMA] |= crate::types::sketch::HAN_CHARS_FLAG;
            (a, b)
        };
        for mode in Quality::ALL {
            let rule = mode.rule(3);
            let dataset = rule.for_datasets();
            assert_eq!(dataset.min_similarity, Some(DATASET_MIN_SIMILARITY));
            assert_eq!((dataset.k, dataset.reach), (rule.k, rule.reach));
            assert!(rule.bands > 0);
            assert_eq!(dataset.bands, bands::SKETCH_BANDS);
            // 26 of 63 minima equal: ≈ 0.41, taken by the mode's rule, not a dataset's.
            let (w, x) = sketches(26, 63);
            assert!(rule.accepts(4, Some(&w), Some(&x)));
            assert!(!dataset.accepts(4, Some(&w), Some(&x)));
            // 36 equal: ≈ 0.57 — Chinese at 2 bits: the mode's 0.3, a dataset's floor 0.55.
            let (a, b) = han(sketches(36, 63));
            assert!(rule.accepts(2, Some(&a), Some(&b)));
            assert!(dataset.accepts(2, Some(&a), Some(&b)), "0.55 <= 0.57");
            let (a, b) = han(sketches(33, 63));
            assert!(!dataset.accepts(2, Some(&a), Some(&b)), "0.55 > 0.52");
            assert!(rule.accepts(2, Some(&a), Some(&b)));
            // Far apart, the rising threshold is above the floor: the same for both.
            let (a, b) = han(sketches(36, 63));
            let at = |r: &MatchRule, d| r.threshold(r.min_similarity.unwrap(), d, &a, &b);
            assert_eq!(at(&rule, 14), at(&dataset, 14));
        }
        // A rule that does not verify is not changed.
        assert_eq!(MatchRule::within(5).for_datasets(), MatchRule::within(5));
    }

    #[test]
    fn plain_and_verified_rules_keep_their_meaning() {
        let (a, b) = (sketch(1), sketch(2));
        let plain = MatchRule::within(3);
        assert!(plain.accepts(3, Some(&a), Some(&b)) && !plain.accepts(4, None, None));
        let verified = MatchRule::verified(3, 0.4);
        assert!(verified.accepts(3, Some(&a), Some(&a)));
        assert!(
            !verified.accepts(1, None, Some(&a)),
            "no sketch: never verified"
        );
        assert_eq!(verified.without_sketch(), None);
    }

    /// The modes' layouts other than the plain one stay within their budgets beside it (the
    /// modes' probes counted) and see more of their reach than it does.
    #[test]
    fn mode_layouts_keep_their_budgets_and_widen_the_reach() {
        for n in [1_000_000u64, 10_000_000, 100_000_000] {
            let plain = Layout::for_expected_docs(n, 3).unwrap();
            for q in Quality::ALL {
                let l = q.layout(n).unwrap();
                let (time, tables) = q.cost_factors();
                assert_eq!(l.k_max(), q.k_max());
                // The plain layout is the fallback, whatever the mode's probes cost on it.
                let us = q.expected_query_us(&l, n as f64);
                let budget = plain.expected_query_us(n as f64) * time;
                assert!(l == plain || us <= budget, "{q} at {n}");
                assert!(l.tables().len() as f64 <= plain.tables().len() as f64 * tables);
                assert!(q.share(&l) >= q.share(&plain), "{q} at {n}");
            }
            let high = Quality::High.layout(n).unwrap();
            assert!(
                probed_reach_share(&high, HIGH_REACH, 1) > probed_reach_share(&high, HIGH_REACH, 0),
                "a flipped bit widens what the tables see"
            );
        }
        assert_eq!(probed_reach_share(&Layout::new(3, 4).unwrap(), 3, 0), 1.0);
    }

    #[test]
    fn names_and_codes_round_trip() {
        for q in Quality::ALL {
            assert_eq!(q.name().parse::<Quality>(), Ok(q));
            assert_eq!(Quality::from_code(q.code()), Some(q));
        }
        assert!("best".parse::<Quality>().is_err());
        assert_eq!(Quality::from_code(9), None);
    }
}
