//! Which pairs a dedup takes: the rule of its arguments, the candidates a dedup of files
//! compares, and the rule in the summary's words.

use simstore::index::groups::Grouping;
use simstore::{MatchRule, Quality};

use super::Args;

/// The k of a dedup of files given `--verify` without `--k`.
pub(super) const DEFAULT_FILES_K: u32 = 3;

/// The quality mode whose rule a dedup of files applies given neither `--k`, `--verify`
/// nor `--quality`.
pub(super) const FILES_MODE: Quality = Quality::Standard;

/// The rule of `args`: `--k K` alone, distance ≤ K; `--verify T`, within `--k` (default
/// `k`) and at least T similar; neither, `mode()`.
pub(super) fn rule_of(args: &Args, k: u32, mode: impl FnOnce() -> MatchRule) -> MatchRule {
    match (args.k_arg, args.verify) {
        (_, Some(t)) => MatchRule::verified(args.k_arg.unwrap_or(k), t),
        (Some(k), None) => MatchRule::within(k),
        (None, None) => mode(),
    }
}

/// How a dedup of `n` records of files pairs and groups them: given neither --k nor
/// --verify, the candidates a store of the quality mode (`--quality`, else standard)
/// created for `n` records compares (its tables' spans within the mode's reach, its
/// sketch bands); else every pair within k.
pub(super) fn grouping(args: &Args, n: usize) -> simstore::Result<Grouping> {
    let mode = match (args.k_arg, args.verify) {
        (None, None) => Some(args.quality.unwrap_or(FILES_MODE)),
        _ => None,
    };
    Grouping::new(args.rule, mode, n, args.transitive)
}

/// What the summary says of the pairs: "within k = 3" (also with `--verify`, which
/// [`super::summary_tail`] adds), or for a mode's rule "in `mode` (the rule in words)".
pub(super) fn pairs_in(args: &Args, mode: &str) -> String {
    match (args.k_arg, args.verify) {
        (None, None) => format!("in {mode} ({})", crate::cli::rule::describe(&args.rule)),
        _ => format!("within k = {}", args.rule.k),
    }
}

/// The mode of a dedup of files, in words: "the standard mode's rule".
pub(super) fn files_mode(args: &Args) -> String {
    format!("the {} mode's rule", args.quality.unwrap_or(FILES_MODE))
}
