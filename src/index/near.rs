//! A dedup's candidate pairs near its threshold, put off to the texts
//! ([`crate::index::groups::Clusters::checked`]): in the first scan over the candidates, a
//! pair whose sketches' estimate falls within [`EXACT_MARGIN`] of its threshold is set
//! aside; after the scan the caller computes the exact similarities of those pairs' shingle
//! sets (reading the texts again), which decide them, and any later scan.

use std::collections::HashMap;

use crate::error::Result;
use crate::index::quality::MatchRule;
use crate::text::fingerprint::{Analysis, Fingerprinter};
use crate::types::sketch::Sketch;

/// How far from its threshold the sketches' estimate of a pair's similarity may fall and
/// the pair still be decided by the texts: three standard errors of an estimate from 63
/// minima at similarity 0.5, where it is largest (√(0.25 / 63) ≈ 0.063). A pair whose estimate is farther off
/// is decided by it: with 63 minima a pair of similarity 0.3 (or 0.7) passes (or fails) a
/// threshold of 0.5 about once in 10⁴ pairs.
pub const EXACT_MARGIN: f64 = 0.19;

/// At most this many pairs are put off to the texts in one dedup; beyond, the sketches'
/// estimate decides ([`ExactCheck::unchecked`]).
pub const MAX_EXACT_PAIRS: usize = 8 << 20;

/// Pairs near their threshold (records' own positions, `a < b`), to be checked.
pub type NearPairs = Vec<(u32, u32)>;

/// The texts' exact similarities of the pairs that could be checked.
pub type ExactSimilarities = HashMap<(u32, u32), f64>;

/// Computes the exact similarities it can of the pairs it is given.
pub type ExactFn<'a> = &'a mut dyn FnMut(NearPairs) -> Result<ExactSimilarities>;

/// A record whose fingerprint and sketch miss more than this share of its tokens
/// ([`is_partial`]: tokens of the lines the cleaner left out, URLs, and what a web page's
/// reader left out) is *partial*: its sketch describes what is left, not the record, so
/// each pair of it that the sketches would take is decided by the texts
/// ([`crate::text::shingles::ShingleSets::similarity`]: cleaned and whole). A page's
/// dropped chrome is often more (the development set's copies with chrome added: 5–50 %),
/// and so is the code of a source file, whose lines the cleaner takes for a page's header
/// and footer: two files whose only long line is one licence sentence have one sketch. A
/// tenth is where the estimate of the cleaned texts can no longer stand for the whole
/// texts within [`EXACT_MARGIN`].
pub const PARTIAL_SHARE: f64 = 0.1;

/// Whether a record whose text's analysis is `a` is partial ([`PARTIAL_SHARE`]);
/// `left_out` is the visible text its page's reader left out of that text, if it was given
/// as a web page ([`crate::input::html::Page::left_out`]): its tokens count as the body's
/// and as missed.
pub fn is_partial(f: &Fingerprinter, a: &Analysis, left_out: Option<&str>) -> bool {
    let more = left_out.map_or(0, |t| f.count_tokens(t));
    match a.body_tokens + more {
        0 => false,
        all => (a.dropped_tokens + more) as f64 / all as f64 > PARTIAL_SHARE,
    }
}

/// What a dedup that can read its texts again gives [`crate::index::groups::Clusters::checked`].
pub struct Texts<'a> {
    /// Computes the exact similarities it can of the pairs it is given.
    pub exact: ExactFn<'a>,
    /// The records, by their own positions (increasing), whose every pair the sketches
    /// would take is decided by the texts, however far above its threshold its estimate:
    /// the partial records ([`PARTIAL_SHARE`]).
    pub partial: &'a [u32],
}

/// What checking the pairs near the threshold against the texts did.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ExactCheck {
    /// Pairs whose estimate was within [`EXACT_MARGIN`] of their threshold and whose
    /// texts were compared.
    pub checked: u64,
    /// Of those, the pairs the texts decided otherwise than the estimate: accepted (a copy
    /// the estimate missed) and rejected (a pair the estimate took).
    pub accepted: u64,
    /// See `accepted`.
    pub rejected: u64,
    /// Pairs near the threshold left to the estimate: beyond [`MAX_EXACT_PAIRS`], or
    /// whose texts could not be read.
    pub unchecked: u64,
    /// Pairs of a partial record that the estimate would take but whose texts could not be
    /// compared (beyond [`MAX_EXACT_PAIRS`], or unreadable): refused, since the estimate
    /// does not stand for such a record.
    pub refused_unchecked: u64,
}

/// A pair put off: positions in the scan's order and distance (the rule asks its sketches
/// again when the texts have spoken).
struct Near {
    a: u32,
    b: u32,
    distance: u32,
    /// Whether either record is partial: refused when the texts cannot say.
    partial: bool,
}

/// Decides the candidate pairs of a scan by a rule, putting off (until [`Judge::resolve`])
/// those near their threshold when it can ask the texts.
pub(crate) struct Judge<'a, 'e> {
    rule: &'a MatchRule,
    sketches: &'a [Option<Sketch>],
    /// The caller's exact similarities; `None`: the estimate decides every pair.
    exact: Option<ExactFn<'e>>,
    /// The records whose every pair the texts decide ([`Texts::partial`]).
    partial: &'e [u32],
    /// A pair's key by the records' own positions.
    key: &'a dyn Fn(u32, u32) -> (u32, u32),
    near: Vec<Near>,
    /// Whether the pairs put off were resolved (nothing is put off after that).
    resolved: bool,
    similarities: ExactSimilarities,
    check: ExactCheck,
}

impl<'a, 'e> Judge<'a, 'e> {
    /// A judge of `rule` over records with `sketches`, asking the `texts` about the pairs
    /// near the threshold and those of partial records (when the rule verifies), keyed by
    /// `key`.
    pub(crate) fn new(
        rule: &'a MatchRule,
        sketches: &'a [Option<Sketch>],
        texts: Option<Texts<'e>>,
        key: &'a dyn Fn(u32, u32) -> (u32, u32),
    ) -> Self {
        let asks = rule.min_similarity.is_some() && !sketches.is_empty();
        let (exact, partial) = match texts.filter(|_| asks) {
            Some(t) => (Some(t.exact), t.partial),
            None => (None, &[][..]),
        };
        Judge {
            rule,
            sketches,
            exact,
            partial,
            key,
            near: Vec::new(),
            resolved: false,
            similarities: HashMap::new(),
            check: ExactCheck::default(),
        }
    }

    /// Whether the candidate pair `a`, `b` at `distance` is taken now; false also for a
    /// pair put off to [`Judge::resolve`].
    pub(crate) fn takes(&mut self, a: u32, b: u32, distance: u32) -> bool {
        let sketch = |i: u32| self.sketches.get(i as usize).and_then(Option::as_ref);
        let (sa, sb) = (sketch(a), sketch(b));
        let margin = match self.exact {
            Some(_) => self.rule.margin(distance, sa, sb),
            None => None,
        };
        let Some(m) = margin else {
            return self.rule.accepts(distance, sa, sb);
        };
        // The margin is the estimate less the threshold: it decides as `accepts` would,
        // but a pair it takes whose record's sketch leaves out much of it goes to the texts.
        let partial = m >= -EXACT_MARGIN && self.either_partial(a, b);
        if m.abs() > EXACT_MARGIN && !partial {
            return m >= 0.0;
        }
        if let Some(&s) = self.similarities.get(&(self.key)(a, b)) {
            return self.rule.accepts_exact(distance, sa, sb, Some(s));
        }
        if self.resolved || self.near.len() >= MAX_EXACT_PAIRS {
            if !self.resolved {
                match partial && m >= 0.0 {
                    true => self.check.refused_unchecked += 1,
                    false => self.check.unchecked += 1,
                }
            }
            return m >= 0.0 && !partial;
        }
        self.near.push(Near {
            a,
            b,
            distance,
            partial,
        });
        false
    }

    /// Whether either record of the pair (positions in the scan's order) is partial.
    fn either_partial(&self, a: u32, b: u32) -> bool {
        let (a, b) = (self.key)(a, b);
        let partial = |i: u32| self.partial.binary_search(&i).is_ok();
        !self.partial.is_empty() && (partial(a) || partial(b))
    }

    /// Asks the texts about the pairs put off, and returns those taken (`(a, b,
    /// distance)`, positions in the scan's order): by their exact similarity, or their
    /// estimate when the texts could not say.
    pub(crate) fn resolve(&mut self) -> Result<Vec<(u32, u32, u32)>> {
        self.resolved = true;
        let near = std::mem::take(&mut self.near);
        let Some(exact) = self.exact.as_mut().filter(|_| !near.is_empty()) else {
            return Ok(Vec::new());
        };
        self.similarities = exact(near.iter().map(|p| (self.key)(p.a, p.b)).collect())?;
        let mut taken = Vec::new();
        for p in near {
            let exact = self.similarities.get(&(self.key)(p.a, p.b)).copied();
            let sketch = |i: u32| self.sketches.get(i as usize).and_then(Option::as_ref);
            let (sa, sb) = (sketch(p.a), sketch(p.b));
            let by_estimate = self.rule.accepts(p.distance, sa, sb);
            let verdict = exact.map_or(by_estimate && !p.partial, |s| {
                self.rule.accepts_exact(p.distance, sa, sb, Some(s))
            });
            let check = &mut self.check;
            match exact {
                None if p.partial && by_estimate => check.refused_unchecked += 1,
                None => check.unchecked += 1,
                Some(_) => check.checked += 1,
            }
            if exact.is_some() {
                check.accepted += u64::from(verdict && !by_estimate);
                check.rejected += u64::from(!verdict && by_estimate);
            }
            if verdict {
                taken.push((p.a, p.b, p.distance));
            }
        }
        Ok(taken)
    }

    /// The texts' similarities, by the records' own positions, and what the check did.
    pub(crate) fn finish(mut self) -> (ExactSimilarities, ExactCheck) {
        self.similarities.shrink_to_fit();
        (self.similarities, self.check)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::index::quality::Quality;

    /// Past [`MAX_EXACT_PAIRS`] the estimate decides a pair near the threshold, but refuses
    /// one of a partial record that it would take.
    #[test]
    fn past_the_cap_a_partial_records_pair_is_refused() {
        let rule = Quality::Standard.rule(3).for_datasets();
        let mut sketch = Sketch::uniform(0);
        sketch
            .0
            .iter_mut()
            .enumerate()
            .for_each(|(i, b)| *b = i as u8);
        let sketches = vec![Some(sketch); 3];
        let key = |a: u32, b: u32| (a.min(b), a.max(b));
        let mut exact = |_: NearPairs| Ok(ExactSimilarities::new());
        let texts = Texts {
            exact: &mut exact,
            partial: &[0],
        };
        let mut judge = Judge::new(&rule, &sketches, Some(texts), &key);
        // Identical sketches: far above the threshold. A pair of records 1 and 2 is taken
        // at once; one of record 0 is put off until the cap, then refused.
        assert!(judge.takes(1, 2, 0));
        for _ in 0..MAX_EXACT_PAIRS {
            assert!(!judge.takes(0, 1, 0));
        }
        assert!(!judge.takes(0, 2, 0), "past the cap, refused");
        assert!(judge.takes(1, 2, 0), "the others are still the estimate's");
        let (_, check) = judge.finish();
        assert_eq!((check.refused_unchecked, check.unchecked), (1, 0));
    }
}
