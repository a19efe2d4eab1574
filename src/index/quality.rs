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

use crate::types::Sketch;

/// A store's quality mode, chosen at creation (`simstore init --quality`) and recorded in
/// the store: the layout's `k_max` and the rule of queries and checks given no `k`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum Quality {
    /// The default: the k_max = 3 tables, candidates within 8 verified by the sketch.
    #[default]
    Standard,
    /// Twice the tables of [`Quality::Standard`] (k_max = 4), candidates within 8 verified.
    High,
}

/// Sketch similarity a mode's candidates must reach (both modes).
pub const MODE_MIN_SIMILARITY: f64 = 0.2;

/// Candidate distance of both modes.
pub const MODE_REACH: u32 = 8;

impl Quality {
    /// Every mode, in order of cost.
    pub const ALL: [Quality; 2] = [Quality::Standard, Quality::High];

    /// The `k_max` of a store created in this mode (the tables answer it exactly).
    pub fn k_max(self) -> u32 {
        match self {
            Quality::Standard => 3,
            Quality::High => 4,
        }
    }

    /// The mode's rule on a store whose layout answers `k_max` exactly.
    pub fn rule(self, k_max: u32) -> MatchRule {
        MatchRule {
            k: k_max,
            reach: MODE_REACH.max(k_max),
            min_similarity: Some(MODE_MIN_SIMILARITY),
            unverifiable_within_k: true,
        }
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
}

impl MatchRule {
    /// "Distance ≤ k": the plain query, exact.
    pub fn within(k: u32) -> Self {
        MatchRule {
            k,
            reach: k,
            min_similarity: None,
            unverifiable_within_k: true,
        }
    }

    /// "Distance ≤ k and sketch similarity ≥ t" (the two-stage query, `--verify t`): a
    /// side without a sketch never matches.
    pub fn verified(k: u32, min_similarity: f64) -> Self {
        MatchRule {
            k,
            reach: k,
            min_similarity: Some(min_similarity),
            unverifiable_within_k: false,
        }
    }

    /// Whether a candidate at `distance` matches, given the query's and the candidate's
    /// sketches.
    pub fn accepts(&self, distance: u32, query: Option<&Sketch>, stored: Option<&Sketch>) -> bool {
        if distance > self.reach {
            return false;
        }
        match (self.min_similarity, query, stored) {
            (None, _, _) => distance <= self.k,
            (Some(t), Some(a), Some(b)) => a.similarity(b) >= t,
            (Some(_), _, _) => self.unverifiable_within_k && distance <= self.k,
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
        Sketch([byte; Sketch::BYTES])
    }

    #[test]
    fn a_mode_rule_verifies_beyond_k_and_falls_back_within_k() {
        let rule = Quality::Standard.rule(3);
        let (a, b) = (sketch(1), sketch(2));
        assert!(rule.accepts(8, Some(&a), Some(&a)));
        assert!(!rule.accepts(9, Some(&a), Some(&a)), "beyond reach");
        assert!(!rule.accepts(0, Some(&a), Some(&b)), "sketches disagree");
        assert!(rule.accepts(3, None, Some(&a)) && rule.accepts(3, Some(&a), None));
        assert!(!rule.accepts(4, None, None), "unverifiable beyond k");
        assert_eq!(rule.without_sketch(), Some(MatchRule::within(3)));
        assert_eq!(Quality::High.rule(4).k, 4);
        assert_eq!(Quality::Standard.rule(10).reach, 10);
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
