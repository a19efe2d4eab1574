//! `simstore.dedup`'s native part: the texts of a dataset fingerprinted in parallel and
//! clustered in memory (leader clustering, as `simstore dedup FILE` does), the GIL released.

use pyo3::prelude::*;
use rayon::prelude::*;
use std::collections::HashMap;

use simstore::index::groups::{Clusters, Grouping};
use simstore::index::near::{ExactSimilarities, NearPairs, Texts, is_partial};
use simstore::text::shingles::ShingleSets;
use simstore::{MatchRule, Quality, Sketch};

use crate::FINGERPRINTER;
use crate::convert::{Text, Whole, text_of};
use crate::errors::{invalid_argument, to_py};

/// The k of a rule given `verify` and no `k`, as `simstore dedup FILE --verify T`.
const DEFAULT_K: u32 = 3;

/// The indices (in the texts' order) of the texts a dedup keeps: every text in no cluster
/// and the one each cluster formed around. `order` is the order the texts are taken in
/// (positions, the preferred first: the keep policy); `keep_none` drops every member of a
/// cluster of two or more. The rule: `k` alone, distance ≤ k; `verify`, within `k`
/// (default 3) and sketches at least that similar; neither, the quality mode's rule as a
/// dataset's (sketches at least 0.6 similar) over the pairs a store of that mode compares
/// (its tables' spans within its reach, its bands). Pairs near the threshold are decided
/// by the texts' shingles (`Clusters::checked`, `ShingleSets::similarity`), and so is every
/// pair the sketches take of a text the cleaner left more than a tenth of out
/// (`PARTIAL_SHARE`). A text without words is in no cluster (kept). `pages`, when given,
/// holds for each record without a text its web page (HTML), read as `simstore dedup`
/// reads an `"html"` record: its title and main text compared, and what the reader left
/// out of the text counted as missed by the fingerprint (`is_partial`) and compared with
/// the whole text.
#[pyfunction]
#[pyo3(signature = (texts, order = None, quality = "standard", k = None, verify = None, keep_none = false, pages = None))]
#[allow(clippy::too_many_arguments, reason = "the Python signature")]
pub(crate) fn _dedup(
    py: Python<'_>,
    texts: Vec<Option<Text>>,
    order: Option<Vec<u32>>,
    quality: &str,
    k: Option<Whole<u32>>,
    verify: Option<f64>,
    keep_none: bool,
    pages: Option<Vec<Option<Text>>>,
) -> PyResult<Vec<u32>> {
    let k = k.map(|k| k.0);
    // A lone surrogate (half an emoji) reads as U+FFFD ([`Text`]), as the CLI reads one.
    let texts: Vec<Option<String>> = texts.into_iter().map(text_of).collect();
    let pages = pages.map(|p| p.into_iter().map(text_of).collect::<Vec<_>>());
    let (rule, mode) = rule(py, quality, k, verify)?;
    if let Some(o) = &order {
        check_order(py, o, texts.len())?;
    }
    if pages.as_ref().is_some_and(|p| p.len() != texts.len()) {
        return Err(invalid_argument(
            py,
            "pages: one per text (None where there is none)",
        ));
    }
    py.detach(|| kept(&records(texts, pages), order, rule, mode))
        .map_err(|e| to_py(py, e))
        .map(|kept| kept_indices(kept, keep_none))
}

/// A record as the dedup compares it: a text, or a web page's title, main text and what
/// its reader left out of that.
struct Doc {
    title: Option<String>,
    text: Option<String>,
    left_out: Option<String>,
}

/// The records of `texts` and, where a record has no text, of its page (in parallel).
fn records(texts: Vec<Option<String>>, pages: Option<Vec<Option<String>>>) -> Vec<Doc> {
    let pages = pages.unwrap_or_else(|| vec![None; texts.len()]);
    texts
        .into_par_iter()
        .zip(pages)
        .map(|(text, page)| match (text, page) {
            (None, Some(html)) => {
                let page = simstore::read::parse_html(&html);
                Doc {
                    title: page.title,
                    text: Some(page.text),
                    left_out: Some(page.left_out),
                }
            }
            (text, _) => Doc {
                title: None,
                text,
                left_out: None,
            },
        })
        .collect()
}

/// The rule of the arguments (see [`_dedup`]), and the quality mode whose candidates it
/// compares (none given `k` or `verify`: every pair within k).
fn rule(
    py: Python<'_>,
    quality: &str,
    k: Option<u32>,
    verify: Option<f64>,
) -> PyResult<(MatchRule, Option<Quality>)> {
    let mode: Quality = quality
        .parse()
        .map_err(|e: String| invalid_argument(py, e))?;
    if let Some(t) = verify.filter(|t| !(0.0..=1.0).contains(t)) {
        return Err(invalid_argument(
            py,
            format!("verify={t}: a similarity between 0 and 1"),
        ));
    }
    if k.is_some_and(|k| k > 64) {
        return Err(invalid_argument(py, "k: at most 64 bits"));
    }
    Ok(match (k, verify) {
        (_, Some(t)) => (MatchRule::verified(k.unwrap_or(DEFAULT_K), t), None),
        (Some(k), None) => (MatchRule::within(k), None),
        (None, None) => (mode.rule(mode.k_max()).for_datasets(), Some(mode)),
    })
}

/// Refuses an order that is not a permutation of `0..n`.
fn check_order(py: Python<'_>, order: &[u32], n: usize) -> PyResult<()> {
    let mut seen = vec![false; n];
    for &i in order {
        match seen.get_mut(i as usize) {
            Some(s) if !*s => *s = true,
            _ => {
                return Err(invalid_argument(
                    py,
                    "order: not a permutation of the texts",
                ));
            }
        }
    }
    match order.len() == n {
        true => Ok(()),
        false => Err(invalid_argument(
            py,
            "order: not a permutation of the texts",
        )),
    }
}

/// For every text, whether the dedup keeps it, and the clusters (for `keep_none`).
fn kept(
    texts: &[Doc],
    order: Option<Vec<u32>>,
    rule: MatchRule,
    mode: Option<Quality>,
) -> simstore::Result<(Vec<bool>, Vec<Vec<u32>>)> {
    let analyses: Vec<Option<(u64, Option<Sketch>, bool)>> = texts
        .par_iter()
        .map(|d| {
            let a = FINGERPRINTER
                .analyze(d.title.as_deref(), d.text.as_deref()?)
                .ok()?;
            let partial = is_partial(&FINGERPRINTER, &a, d.left_out.as_deref());
            Some((a.fingerprint.0, a.sketch, partial))
        })
        .collect();
    // Texts without words take no part: the others are clustered, their answers mapped back.
    let with: Vec<u32> = (0..texts.len() as u32)
        .filter(|&i| analyses[i as usize].is_some())
        .collect();
    let mut at = vec![u32::MAX; texts.len()];
    with.iter()
        .enumerate()
        .for_each(|(j, &i)| at[i as usize] = j as u32);
    let fps: Vec<u64> = with
        .iter()
        .map(|&i| analyses[i as usize].unwrap().0)
        .collect();
    let sketches: Vec<Option<Sketch>> = with
        .iter()
        .map(|&i| analyses[i as usize].unwrap().1)
        .collect();
    // Texts the cleaner left much of out: the pairs the sketches take are decided by the texts.
    let partial: Vec<u32> = (0..with.len() as u32)
        .filter(|&j| analyses[with[j as usize] as usize].unwrap().2)
        .collect();
    let order = order.map(|o| {
        o.into_iter()
            .map(|i| at[i as usize])
            .filter(|&j| j != u32::MAX)
            .collect()
    });
    let grouping = Grouping::new(rule, mode, fps.len(), false)?;
    // The pairs near the threshold, and the partial texts' pairs, are decided by the texts'
    // shingles, as in `simstore dedup`.
    let mut exact = |pairs: NearPairs| Ok(exact_similarities((texts, &with), &partial, pairs));
    let check = Texts {
        exact: &mut exact,
        partial: &partial,
    };
    let records = (&fps[..], &sketches[..], order);
    let (mut clusters, _) = Clusters::checked(records, &grouping, Some(check), |_, _, _| Ok(()))?;
    let mut kept = vec![true; texts.len()];
    for (j, k) in clusters.kept(false).into_iter().enumerate() {
        kept[with[j] as usize] = k;
    }
    let sets = clusters
        .sets(2)
        .into_iter()
        .map(|s| s.into_iter().map(|j| with[j as usize]).collect())
        .collect();
    Ok((kept, sets))
}

/// The indices kept, increasing.
fn kept_indices((mut kept, sets): (Vec<bool>, Vec<Vec<u32>>), keep_none: bool) -> Vec<u32> {
    if keep_none {
        sets.iter()
            .flatten()
            .for_each(|&i| kept[i as usize] = false);
    }
    (0..kept.len() as u32)
        .filter(|&i| kept[i as usize])
        .collect()
}

/// The exact similarities of the shingles of `pairs` (positions among the texts with
/// words, `with`: their indices among `texts`; the `partial` ones compared whole too).
fn exact_similarities(
    (texts, with): (&[Doc], &[u32]),
    partial: &[u32],
    pairs: NearPairs,
) -> ExactSimilarities {
    let mut wanted: Vec<u32> = pairs.iter().flat_map(|&(a, b)| [a, b]).collect();
    wanted.sort_unstable();
    wanted.dedup();
    let shingles: HashMap<u32, ShingleSets> = wanted
        .par_iter()
        .map(|&j| {
            let d = &texts[with[j as usize] as usize];
            let whole = partial.binary_search(&j).is_ok();
            let left_out = whole.then(|| d.left_out.as_deref().unwrap_or(""));
            let text = d.text.as_deref().unwrap_or("");
            (
                j,
                FINGERPRINTER.shingle_sets(d.title.as_deref(), text, left_out),
            )
        })
        .collect();
    pairs
        .par_iter()
        .map(|&(a, b)| ((a, b), shingles[&a].similarity(&shingles[&b])))
        .collect()
}
