//! A rule's fields as the stores report them (`simstore stats --json`, `/stats`, Python's
//! `stats()`).

use super::{
    FEW_SHINGLES_SIMILARITY, HAN_MIN_SHINGLES, HAN_MIN_SIMILARITY, HAN_SIMILARITY_PER_BIT,
    MIN_CONTENT_SHINGLES, MatchRule,
};

/// One field of a rule as reported ([`MatchRule::fields`]): a count or a similarity.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum RuleValue {
    /// A number of bits, probes or shingles.
    Count(u32),
    /// A similarity threshold, 0 to 1.
    Share(f64),
}

impl MatchRule {
    /// The rule's fields as `simstore stats --json`, `/stats` and Python's `stats()` report
    /// them (`quality_rule`): `k`, `reach`; when it verifies, `min_similarity`; with
    /// query-directed probes, `probes`; with bands, `bands`; with the guard, `min_shingles`,
    /// `few_shingles_similarity`, `min_content_shingles`, `han_min_similarity`,
    /// `han_similarity_per_bit` and `han_min_shingles`.
    pub fn fields(&self) -> Vec<(&'static str, RuleValue)> {
        let mut out = vec![
            ("k", RuleValue::Count(self.k)),
            ("reach", RuleValue::Count(self.reach)),
        ];
        if let Some(t) = self.min_similarity {
            out.push(("min_similarity", RuleValue::Share(t)));
        }
        if self.probes > 0 {
            out.push(("probes", RuleValue::Count(self.probes)));
        }
        if self.bands > 0 {
            out.push(("bands", RuleValue::Count(self.bands)));
        }
        if self.min_similarity.is_some() && self.min_shingles > 0 {
            out.push(("min_shingles", RuleValue::Count(self.min_shingles)));
            let few = RuleValue::Share(FEW_SHINGLES_SIMILARITY);
            out.push(("few_shingles_similarity", few));
            let floor = RuleValue::Count(MIN_CONTENT_SHINGLES);
            out.push(("min_content_shingles", floor));
            let han = RuleValue::Share(HAN_MIN_SIMILARITY);
            out.push(("han_min_similarity", han));
            let per_bit = RuleValue::Share(HAN_SIMILARITY_PER_BIT);
            out.push(("han_similarity_per_bit", per_bit));
            out.push(("han_min_shingles", RuleValue::Count(HAN_MIN_SHINGLES)));
        }
        out
    }
}
