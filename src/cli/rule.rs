//! What a query or check counts as a near duplicate, around the [`MatchRule`] that
//! [`simstore::Store::rule`] picks from a command's `--k` and `--verify` (or the HTTP
//! request's `"k"` and `"verify"`): the threshold check, the similarity shown, the rule in
//! words and in JSON.

#[cfg(doc)]
use simstore::Fingerprinter;
use simstore::index::quality::{
    DATASET_MIN_SIMILARITY, FEW_SHINGLES_SIMILARITY, HAN_DISCOUNT, HAN_MIN_SHINGLES,
    HAN_MIN_SIMILARITY, HAN_SIMILARITY_PER_BIT, MIN_CONTENT_SHINGLES, RuleValue,
};
use simstore::{MatchRule, Rule, Sketch, Store};

/// Whether `t` is a similarity threshold (0 to 1).
pub fn is_similarity(t: f64) -> bool {
    (0.0..=1.0).contains(&t)
}

/// The similarity a verifying rule checked between the query's and a match's sketches
/// (`None` when the rule does not verify or either side has no sketch).
pub fn similarity(
    rule: &MatchRule,
    query: Option<&Sketch>,
    stored: Option<&Sketch>,
) -> Option<f64> {
    rule.min_similarity?;
    Some(query?.similarity(stored?))
}

/// The threshold two sketches of Chinese characters must reach, in words: "0.25 + 0.025 a
/// bit of distance".
pub fn han_threshold() -> String {
    format!("{HAN_MIN_SIMILARITY} + {HAN_SIMILARITY_PER_BIT} a bit of distance")
}

/// ", at least 0.45" where a rule's threshold `t` puts a floor under the rising threshold
/// of Chinese sketches (a dataset's rule), else nothing.
fn han_floor(t: f64) -> String {
    let floor = ((t - HAN_DISCOUNT) * 1000.0).round() / 1000.0;
    match floor > HAN_MIN_SIMILARITY {
        true => format!(", at least {floor}"),
        false => String::new(),
    }
}

/// The rule of a dedup of records against `store` (`dedup --against`; `import --dedup`
/// checks as the store's own checks do):
/// `k` and `verify` (`--k`, `--verify`) as given; given neither, the store's quality mode's
/// rule at a dataset's threshold (at least [`DATASET_MIN_SIMILARITY`]: a store's 0.3 also
/// joins records that share only a passage, or a template with other figures). Either way
/// a record's short text repeated is a copy ([`MatchRule::equal_short_texts`]), as in a
/// dedup of files. The records' content hashes count their digits
/// ([`Fingerprinter::counting_digits`]).
pub fn for_records(store: &Store, k: Option<u32>, verify: Option<f64>) -> MatchRule {
    let rule = store.rule(Rule::options(k, verify));
    let min_similarity = match (k, verify) {
        (None, None) => rule.min_similarity.map(|t| t.max(DATASET_MIN_SIMILARITY)),
        _ => rule.min_similarity,
    };
    MatchRule {
        min_similarity,
        equal_short_texts: true,
        ..rule
    }
}

/// The rule in words: "within k = 3", "within k = 8, verified at 0.4", or for a mode's rule
/// "candidates within 3, and within 12 in the tables' spans, any distance sharing one of 2
/// bands of the sketch; kept at sketch similarity 0.3, Chinese 0.25 + 0.025 a bit (0.8
/// below 16 shingles, 24 in Chinese; none below 4)" — a dataset's rule: "only equal
/// sketches below 4" ([`MatchRule::equal_short_texts`]).
pub fn describe(rule: &MatchRule) -> String {
    let mut probes = match rule.probes {
        0 => String::new(),
        n => format!(", {n} probes of weak bits"),
    };
    if rule.bands > 0 && rule.min_similarity.is_some() {
        probes += &format!(
            ", any distance sharing one of {} bands of the sketch",
            rule.bands
        );
    }
    match rule.min_similarity {
        None => format!("within k = {}{probes}", rule.k),
        Some(t) if rule.reach <= rule.k && !rule.unverifiable_within_k => {
            format!("within k = {}, verified at {t}{probes}", rule.k)
        }
        Some(t) => {
            let short = match rule.equal_short_texts {
                true => "only equal sketches",
                false => "none",
            };
            let guard = match rule.min_shingles {
                0 => String::new(),
                n => format!(
                    ", Chinese {HAN_MIN_SIMILARITY} + {HAN_SIMILARITY_PER_BIT} a bit{} \
                     ({FEW_SHINGLES_SIMILARITY} below {n} shingles, {} in Chinese; {short} \
                     below {MIN_CONTENT_SHINGLES})",
                    han_floor(t),
                    n.max(HAN_MIN_SHINGLES)
                ),
            };
            format!(
                "candidates within {}, and within {} in the tables' spans{probes}; kept at \
                 sketch similarity {t}{guard}",
                rule.k, rule.reach
            )
        }
    }
}

/// The rule as JSON fields (for `stats --json`, `/stats` and the summaries):
/// [`MatchRule::fields`].
pub fn rule_json(rule: &MatchRule) -> serde_json::Value {
    let fields = rule.fields().into_iter().map(|(name, value)| {
        let value = match value {
            RuleValue::Count(n) => n.into(),
            RuleValue::Share(t) => t.into(),
        };
        (name.to_owned(), value)
    });
    serde_json::Value::Object(fields.collect())
}

#[cfg(test)]
mod tests {
    use simstore::Quality;

    use super::*;

    #[test]
    fn each_rule_says_what_it_counts() {
        assert_eq!(describe(&MatchRule::within(3)), "within k = 3");
        assert_eq!(
            describe(&MatchRule::verified(8, 0.4)),
            "within k = 8, verified at 0.4"
        );
        assert_eq!(
            describe(&Quality::Standard.rule(3)),
            "candidates within 3, and within 12 in the tables' spans, \
             any distance sharing one of 2 bands of the sketch; kept at sketch similarity 0.3, Chinese 0.25 + 0.025 a bit (0.8 below 16 shingles, \
             24 in Chinese; none below 4)"
        );
        assert_eq!(
            describe(&Quality::High.rule(3)),
            "candidates within 3, and within 14 in the tables' spans, 28 probes of weak bits, \
             any distance sharing one of 4 bands of the sketch; kept at sketch similarity 0.3, Chinese 0.25 + 0.025 a bit (0.8 below 16 shingles, \
             24 in Chinese; none below 4)"
        );
        let json = rule_json(&Quality::High.rule(3));
        assert_eq!(
            json,
            serde_json::json!({"k": 3, "reach": 14, "min_similarity": 0.3, "probes": 28,
                "min_shingles": 16, "few_shingles_similarity": 0.8, "min_content_shingles": 4,
                "han_min_similarity": 0.25, "han_similarity_per_bit": 0.025,
                "han_min_shingles": 24, "bands": 4})
        );
        assert!(
            rule_json(&MatchRule::within(2))
                .get("min_similarity")
                .is_none()
        );
    }

    #[test]
    fn similarity_only_when_verified_and_both_sides_have_a_sketch() {
        let a = Sketch([1; Sketch::BYTES]);
        assert_eq!(similarity(&MatchRule::within(3), Some(&a), Some(&a)), None);
        let verified = MatchRule::verified(3, 0.5);
        assert_eq!(similarity(&verified, Some(&a), Some(&a)), Some(1.0));
        assert_eq!(similarity(&verified, None, Some(&a)), None);
        assert_eq!(similarity(&verified, Some(&a), None), None);
    }
}
