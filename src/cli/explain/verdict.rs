//! The verdict of `simstore explain`: whether a rule counts two documents as near
//! duplicates, and which part of it decided — as a store's queries and checks would
//! (`MatchRule::accepts`, and beyond the rule's `k` only the pairs the store's tables put in
//! one span, `Layout::finds`).

use serde_json::{Value, json};
use simstore::index::probing::{probes_find, query_flips};
use simstore::index::quality::{FEW_SHINGLES_SIMILARITY, MIN_CONTENT_SHINGLES};
use simstore::{Fingerprint, Layout, MatchRule, Quality, Sketch, WeakBits};

use crate::cli::rule::{describe, han_threshold, rule_json};

/// The rule a verdict is given under, and where it came from.
pub struct Judge<'a> {
    /// The rule applied.
    pub rule: MatchRule,
    /// The store's quality mode, when its rule is the one applied (no `--k`, no `--verify`).
    pub mode: Option<Quality>,
    /// The store's layout (which pairs beyond `k` a query sees); `None` without a store.
    pub layout: Option<&'a Layout>,
}

/// What decided a verdict.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Decision {
    /// Within `k`, under a rule that does not verify: near duplicates.
    WithinK,
    /// A candidate (within `k`, or within the reach in one of the tables' spans) whose
    /// sketches are at least the threshold similar: near duplicates.
    SketchesAgree(f64, f64),
    /// Within `k`, a side without a sketch, under a rule that lets such a pair match within
    /// `k` (a mode's rule): near duplicates.
    UnverifiableWithinK,
    /// Beyond `k`, under a rule without a reach beyond it: not near duplicates.
    BeyondK,
    /// Beyond the rule's reach: not near duplicates.
    BeyondReach,
    /// Beyond `k`, within the reach, but in no span of the tables probed for `k`: a query
    /// of one never sees the other (not a candidate).
    NotInASpan,
    /// A candidate whose sketches are less similar than the threshold.
    SketchesDiffer(f64, f64),
    /// A candidate of the sketch's bands alone (beyond the reach, or in no span of the
    /// tables) whose sketches are at least the threshold similar: near duplicates.
    BandAgrees(f64, f64),
    /// A candidate of the bands alone whose sketches are less similar than the threshold.
    BandDiffers(f64, f64),
    /// The rule verifies and a side has no sketch (beyond `k`, or a rule that never lets
    /// such a pair match).
    NoSketch,
}

impl Decision {
    /// Whether the pair counts as near duplicates.
    pub fn accepted(self) -> bool {
        matches!(
            self,
            Decision::WithinK
                | Decision::SketchesAgree(..)
                | Decision::UnverifiableWithinK
                | Decision::BandAgrees(..)
        )
    }

    /// A stable name for JSON (`decided_by`).
    pub fn code(self) -> &'static str {
        match self {
            Decision::WithinK => "within_k",
            Decision::SketchesAgree(..) => "sketches_agree",
            Decision::UnverifiableWithinK => "within_k_unverifiable",
            Decision::BeyondK => "beyond_k",
            Decision::BeyondReach => "beyond_reach",
            Decision::NotInASpan => "not_in_a_span",
            Decision::SketchesDiffer(..) => "sketches_differ",
            Decision::NoSketch => "no_sketch",
            Decision::BandAgrees(..) => "band_sketches_agree",
            Decision::BandDiffers(..) => "band_sketches_differ",
        }
    }
}

/// Which part of `judge`'s rule decides the pair of fingerprints `a`, `b` with sketches.
#[cfg(test)]
pub fn decide(
    judge: &Judge<'_>,
    (a, b): (Fingerprint, Fingerprint),
    sketches: (Option<&Sketch>, Option<&Sketch>),
) -> Decision {
    decide_probed(judge, (a, b), sketches, None)
}

/// [`decide`] for `b` checked as a query with the fingerprint's weak bits, of which it
/// probes the given number (`MatchRule::probes_for` its sketch): a pair in no common span
/// of the tables is still a candidate when one of those probes reads `a`'s span, as a
/// store's check finds it.
pub fn decide_probed(
    judge: &Judge<'_>,
    (a, b): (Fingerprint, Fingerprint),
    sketches: (Option<&Sketch>, Option<&Sketch>),
    weak: Option<(&WeakBits, u32)>,
) -> Decision {
    let rule = &judge.rule;
    let d = a.distance(b);
    let probed = |l: &Layout| {
        weak.is_some_and(|(w, probes)| {
            probes_find(l, &query_flips(l, rule.k, probes, Some(w)), b.0, a.0)
        })
    };
    let in_span = d <= rule.k
        || judge
            .layout
            .is_some_and(|l| l.finds(rule.k, a.0, b.0) || probed(l));
    // A band alone never brings a page compared by its whole visible text from beyond the
    // reach (`in_reach`).
    if let (Some(t), (Some(x), Some(y))) = (rule.min_similarity, sketches)
        && rule.shares_band(Some(x), Some(y))
        && (!(x.whole_text() || y.whole_text()) || d <= rule.reach)
        && (d > rule.reach.max(rule.k) || !in_span)
    {
        let (s, t) = (
            x.similarity(y),
            rule.threshold(t, rule.verified_at(d), x, y),
        );
        return if s >= t {
            Decision::BandAgrees(s, t)
        } else {
            Decision::BandDiffers(s, t)
        };
    }
    if d > rule.reach.max(rule.k) {
        return if rule.reach > rule.k {
            Decision::BeyondReach
        } else {
            Decision::BeyondK
        };
    }
    if !in_span {
        return Decision::NotInASpan;
    }
    match (rule.min_similarity, sketches) {
        (None, _) if d <= rule.k => Decision::WithinK,
        (None, _) => Decision::BeyondK,
        (Some(t), (Some(x), Some(y))) => {
            let (s, t) = (x.similarity(y), rule.threshold(t, d, x, y));
            if s >= t {
                Decision::SketchesAgree(s, t)
            } else {
                Decision::SketchesDiffer(s, t)
            }
        }
        (Some(_), _) if rule.unverifiable_within_k && d <= rule.k => Decision::UnverifiableWithinK,
        (Some(_), _) => Decision::NoSketch,
    }
}

/// Why: the decision in words, e.g. "distance 6 > k = 3 but within reach 12, in a span of
/// the store's tables; sketch similarity 0.641 >= 0.3".
pub fn reason(judge: &Judge<'_>, decision: Decision, distance: u32) -> String {
    let MatchRule { k, reach, .. } = judge.rule;
    let few = |t: f64| match judge.rule.min_similarity {
        Some(m) if t == m || t.is_infinite() => String::new(),
        Some(_) if t >= FEW_SHINGLES_SIMILARITY => {
            " (the threshold of texts with too little content to tell apart)".to_owned()
        }
        Some(_) => format!(" (Chinese text: {})", han_threshold()),
        None => String::new(),
    };
    let span = if distance > k {
        format!(
            "distance {distance} > k = {k} but within reach {reach}, in a span of the store's tables"
        )
    } else {
        format!("distance {distance} <= k = {k}")
    };
    match decision {
        Decision::WithinK => format!("distance {distance} <= {k}"),
        Decision::BeyondK => format!("distance {distance} > {k}"),
        Decision::SketchesAgree(s, t) => {
            format!("{span}; sketch similarity {s:.3} >= {}{}", share(t), few(t))
        }
        Decision::SketchesDiffer(_, t) if t.is_infinite() => format!(
            "{span}; a text has too little content to be anyone's near duplicate (fewer than \
             {MIN_CONTENT_SHINGLES} shingles)"
        ),
        Decision::SketchesDiffer(s, t) => {
            format!("{span}; sketch similarity {s:.3} < {}{}", share(t), few(t))
        }
        Decision::BandAgrees(s, t) => format!(
            "{}; sketch similarity {s:.3} >= {}{}",
            banded(distance),
            share(t),
            few(t)
        ),
        Decision::BandDiffers(s, t) => format!(
            "{}; sketch similarity {s:.3} < {}{}",
            banded(distance),
            share(t),
            few(t)
        ),
        Decision::UnverifiableWithinK => {
            format!("{span}; a side has no sketch, so within k decides")
        }
        Decision::NoSketch => format!("{span}; a side has no sketch to verify"),
        Decision::BeyondReach => format!("distance {distance} > reach {reach}"),
        Decision::NotInASpan => format!(
            "distance {distance} > k = {k}, and neither the store's tables nor the checked text's probes put the two in one span: a check of one never sees the other"
        ),
    }
}

/// How a pair found by a band alone was found.
fn banded(distance: u32) -> String {
    format!(
        "distance {distance}, outside the tables' spans, but the sketches share a band \
         (candidates from the sketch)"
    )
}

/// A threshold as people write it: 0.37, not 0.37000000000000005.
fn share(t: f64) -> String {
    let s = format!("{t:.3}");
    s.trim_end_matches('0').trim_end_matches('.').to_owned()
}

/// The verdict line: "verdict at k = 3: ..." under a plain rule, "verdict by the store's
/// quality mode standard (exact within 3; ...): ..." under the mode's, "verdict within k =
/// 8, verified at 0.4: ..." under `--verify`.
pub fn line(judge: &Judge<'_>, decision: Decision, distance: u32) -> String {
    let rule = describe(&judge.rule);
    let under = match (judge.mode, judge.rule.min_similarity) {
        (Some(q), _) => format!("by the store's quality mode {q} ({rule})"),
        (None, None) => format!("at k = {}", judge.rule.k),
        (None, Some(_)) => rule,
    };
    let verdict = if decision.accepted() {
        "near duplicates"
    } else {
        "not near duplicates"
    };
    format!(
        "verdict {under}: {verdict} ({})",
        reason(judge, decision, distance)
    )
}

/// The verdict's JSON fields (besides the stable `k` and `near_duplicates`): `rule`,
/// `quality` (the mode whose rule applied, or null), `decided_by` ([`Decision::code`]),
/// `similarity` (the sketch similarity the rule checked, or null) and `reason`.
pub fn json(judge: &Judge<'_>, decision: Decision, distance: u32) -> Value {
    let similarity = match decision {
        Decision::SketchesAgree(s, _)
        | Decision::SketchesDiffer(s, _)
        | Decision::BandAgrees(s, _)
        | Decision::BandDiffers(s, _) => Some(s),
        _ => None,
    };
    json!({
        "rule": rule_json(&judge.rule),
        "quality": judge.mode.map(Quality::name),
        "decided_by": decision.code(),
        "similarity": similarity,
        "reason": reason(judge, decision, distance),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sketch(byte: u8) -> Sketch {
        Sketch::uniform(byte)
    }

    /// Every rule, pair and pair of sketches: the decision accepts exactly what a store's
    /// query accepts (`MatchRule::accepts`, and beyond k only in a span of the tables).
    #[test]
    fn the_decision_agrees_with_the_rule_and_the_tables() {
        let layout = Layout::for_expected_docs(1_000_000, 3).unwrap();
        let rules = [
            MatchRule::within(3),
            MatchRule::verified(3, 0.5),
            Quality::Standard.rule(3),
        ];
        let (same, other) = (sketch(1), sketch(2));
        let sketch_pairs = [
            (Some(&same), Some(&same)),
            (Some(&same), Some(&other)),
            (None, Some(&same)),
        ];
        let a = Fingerprint(0x0123_4567_89ab_cdef);
        for rule in rules {
            let judge = Judge {
                rule,
                mode: None,
                layout: Some(&layout),
            };
            for bits in [
                0u64,
                0b111,
                0b1111,
                0xF0000,
                1 << 63 | 1 << 47 | 1 << 31 | 1 << 15,
                0x1FF,
            ] {
                let b = Fingerprint(a.0 ^ bits);
                let d = a.distance(b);
                for (x, y) in sketch_pairs {
                    let seen =
                        d <= rule.k || layout.finds(rule.k, a.0, b.0) || rule.shares_band(x, y);
                    let expected = seen && rule.accepts(d, x, y);
                    let decision = decide(&judge, (a, b), (x, y));
                    assert_eq!(decision.accepted(), expected, "{rule:?} d {d} {decision:?}");
                }
            }
        }
    }

    /// Each part of the mode's rule is named: the sketches, the span, the reach.
    #[test]
    fn the_mode_names_what_decided() {
        let layout = Layout::for_expected_docs(1_000_000, 3).unwrap();
        let judge = Judge {
            rule: Quality::Standard.rule(3),
            mode: Some(Quality::Standard),
            layout: Some(&layout),
        };
        let (same, other) = (sketch(1), sketch(2));
        // As alike as `same`, but sharing no band with it.
        let mut unbanded = same;
        unbanded.0[..8].copy_from_slice(&[9; 8]);
        let a = Fingerprint(0);
        // 4 bits in one 16-bit block: the other three blocks agree (a common span).
        let in_span = Fingerprint(0xF);
        // One bit in each of the four blocks: no table's prefix agrees.
        let apart = Fingerprint(1 << 63 | 1 << 47 | 1 << 31 | 1 << 15);
        let both = (Some(&same), Some(&same));
        assert_eq!(
            decide(&judge, (a, in_span), both),
            Decision::SketchesAgree(1.0, 0.3)
        );
        let no_band = (Some(&same), Some(&unbanded));
        assert_eq!(decide(&judge, (a, apart), no_band), Decision::NotInASpan);
        // A check of `apart` whose weakest bit is 63 probes it flipped, which puts the two
        // in one span: the store's check finds the pair, and so does the verdict (it said
        // "never sees the other" of 30 of 264 pairs a trial's store had matched).
        let bits = std::array::from_fn(|i| 63 - i as u8);
        let weak = simstore::WeakBits::from_parts(bits, std::array::from_fn(|i| i as u16)).unwrap();
        let probed = decide_probed(&judge, (a, apart), no_band, Some((&weak, 4)));
        assert!(matches!(probed, Decision::SketchesAgree(..)), "{probed:?}");
        let unprobed = decide_probed(&judge, (a, apart), no_band, Some((&weak, 0)));
        assert_eq!(unprobed, Decision::NotInASpan);
        assert_eq!(
            decide(&judge, (a, Fingerprint(0x1FFF)), no_band),
            Decision::BeyondReach
        );
        // The sketches' bands find what the tables do not.
        assert_eq!(
            decide(&judge, (a, apart), both),
            Decision::BandAgrees(1.0, 0.3)
        );
        assert_eq!(
            decide(&judge, (a, Fingerprint(!0)), both),
            Decision::BandAgrees(1.0, 0.3)
        );
        let text = line(&judge, Decision::BandAgrees(1.0, 0.3), 64);
        assert!(text.contains("near duplicates (distance 64, outside the tables' spans, but the sketches share a band"), "{text}");
        let differ = decide(&judge, (a, a), (Some(&same), Some(&other)));
        assert!(
            matches!(differ, Decision::SketchesDiffer(s, _) if s < 0.2),
            "{differ:?}"
        );
        assert_eq!(
            decide(&judge, (a, a), (None, Some(&same))),
            Decision::UnverifiableWithinK
        );
        assert_eq!(
            decide(&judge, (a, in_span), (None, Some(&same))),
            Decision::NoSketch
        );
        let text = line(&judge, Decision::SketchesAgree(0.5, 0.3), 4);
        assert!(
            text.starts_with("verdict by the store's quality mode standard (candidates within 3, and within 12 in the tables' spans, any distance sharing one of 2 bands of the sketch; kept at sketch similarity 0.3, Chinese 0.25 + 0.025 a bit (0.8 below 16 shingles, 24 in Chinese; none below 4)): near duplicates (distance 4 > k = 3 but within reach 12"),
            "{text}"
        );
    }
}
