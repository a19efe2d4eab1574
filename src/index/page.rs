//! What a store keeps of a web page whose reader left out much of its visible text: the
//! content hash and the sketch of the whole page, so that two pages whose main texts are
//! one and the same (a site's listing pages: one intro, different lists of links) are told
//! apart, while the fingerprint, the tables' key, stays the main text's.

use crate::error::Result;
use crate::index::near::PARTIAL_SHARE;
use crate::index::quality::MatchRule;
use crate::text::fingerprint::{Analysis, Fingerprinter};
use crate::types::Sketch;
use crate::types::sketch::MINIMA;

/// The analysis of a document as a store keeps and queries it: `f.analyze(title, text)`,
/// and when `left_out` (the visible text its page's reader left out of `text`,
/// [`crate::input::html::Page::left_out`]) is more than [`PARTIAL_SHARE`] of the page's
/// tokens, the content hash and the sketch of the whole visible text in place of the main
/// text's ([`Fingerprinter::whole_text`]; a rule then takes its pairs only within its
/// reach, not by a shared band alone: [`crate::MatchRule::accepts`]). The fingerprint and
/// the weak bits are the main text's either way.
///
/// ```
/// use simstore::Fingerprinter;
/// use simstore::index::page::analyze_page;
/// let f = Fingerprinter::new();
/// let intro = "All the stories of the week about the harbour and the boats that left it.";
/// let links = "The night ferry\nA storm in May\nNew boats for the fishers\nThe harbour master";
/// let page = analyze_page(&f, None, intro, Some(links)).unwrap();
/// let text = f.analyze(None, intro).unwrap();
/// assert_eq!(page.fingerprint, text.fingerprint);
/// assert!(page.sketch.unwrap().whole_text());
/// assert_ne!(page.content_hash, text.content_hash);
/// ```
pub fn analyze_page(
    f: &Fingerprinter,
    title: Option<&str>,
    text: &str,
    left_out: Option<&str>,
) -> Result<Analysis> {
    let mut a = f.analyze(title, text)?;
    if let Some(left_out) = left_out
        && left_out_much(f, &a, left_out)
    {
        a.main_sketch = a.sketch;
        (a.content_hash, a.sketch) = f.whole_text(title, text, left_out);
    }
    Ok(a)
}

/// Whether `rule` takes a candidate at `distance` whose sketch is `stored`, for a query
/// whose sketch is `sketch` and, where that is of a web page's whole visible text, whose
/// main text's is `main` ([`crate::QueryKey::main_sketch`]): both must be taken, so the
/// whole pages and the main texts agree — two match reports that show one list of
/// most-read links share the list, not their reports; two copies of one story with lists
/// of their own agree by their main texts at least as well as by their pages. A stored
/// page compared whole keeps no sketch of its main text, only of its whole page: against
/// it the main text may agree by the rest of the pages instead ([`rest_agrees`]), so a
/// listing page finds itself and its re-crawl with a few links changed.
pub fn accepts(
    rule: &MatchRule,
    distance: u32,
    (sketch, main): (Option<&Sketch>, Option<&Sketch>),
    stored: Option<&Sketch>,
) -> bool {
    rule.accepts(distance, sketch, stored)
        && main.is_none_or(|m| {
            rule.accepts(distance, Some(m), stored)
                || rest_agrees(rule, distance, (sketch, m), stored)
        })
}

/// Whether a query page compared whole (its sketch `whole`, its main text's `main`) and a
/// stored page compared whole (`stored`) have one main text and agree beyond it: one
/// fingerprint and one sketch (the same page, by all a store keeps of it); or, of text
/// other than Chinese (whose templates share more of their shingles than a handful of
/// slots can tell apart), their fingerprints within the rule's `k`, the query's main text
/// found in the stored page ([`main_in_page`]), and the pages' similarity with the main
/// text taken out of both (pages of about one size) at least [`MIN_REST`] and the rule's
/// threshold. A listing page and its re-crawl with a few links changed agree; two listing
/// pages of one intro with lists of their own do not, nor two reports of one template and
/// one list of most-read links whose fingerprints are near (the same teams the other way
/// round).
pub fn rest_agrees(
    rule: &MatchRule,
    distance: u32,
    (whole, main): (Option<&Sketch>, &Sketch),
    stored: Option<&Sketch>,
) -> bool {
    let (Some(whole), Some(stored)) = (whole, stored) else {
        return false;
    };
    if distance > rule.k || !whole.whole_text() || !stored.whole_text() {
        return false;
    }
    if distance == 0 && whole == stored {
        return true;
    }
    if whole.han_chars() || stored.han_chars() || !main_in_page((whole, main), stored) {
        return false;
    }
    let rest = rest_similarity(whole.similarity(stored), main.similarity(whole));
    rest >= MIN_REST && rule.accepts_exact(distance, Some(whole), Some(stored), Some(rest))
}

/// The least similarity of two pages beyond their main text for [`rest_agrees`]: a re-crawl
/// keeps most of its list; a page of one intro with a list of its own shares a few links.
pub const MIN_REST: f64 = 0.5;

/// Whether a page `stored` holds the main text `main` of a page `whole`: of the sketch's
/// slots whose minimum the main text gives its page, `stored` has the same minimum in so
/// many that a text holding half of the main text's shingles (more than a template's
/// share: the rule asks 0.3 of two main texts' similarity, about 0.46 of either in the
/// other) would have them less often than [`MAIN_IN_PAGE_CHANCE`]. A main text of fewer
/// than 7 slots never passes; of 7 or 8 it needs them all, of 12 11, of 20 16.
pub fn main_in_page((whole, main): (&Sketch, &Sketch), stored: &Sketch) -> bool {
    let slots = (whole.0.iter().zip(main.0.iter()).zip(stored.0.iter())).take(MINIMA);
    let (mut own, mut found) = (0u32, 0u32);
    for ((w, m), s) in slots {
        if w == m {
            own += 1;
            found += u32::from(s == w);
        }
    }
    at_least_of_half(found, own) < MAIN_IN_PAGE_CHANCE
}

/// How rarely [`main_in_page`] lets a text holding half of the main text's shingles pass.
pub const MAIN_IN_PAGE_CHANCE: f64 = 0.01;

/// The chance of at least `k` heads in `n` tosses of a fair coin.
fn at_least_of_half(k: u32, n: u32) -> f64 {
    let (mut term, mut sum) = (0.5f64.powi(n as i32), 0.0);
    for i in 0..=n {
        if i >= k {
            sum += term;
        }
        term *= f64::from(n - i) / f64::from(i + 1);
    }
    sum
}

/// The Jaccard similarity of two pages' texts with a text common to both taken out, given
/// the pages' similarity `pages` and the common text's share `share` of a page (its
/// similarity to the page, which holds it), for pages of one size: of a union of
/// `2 / (1 + pages)` pages and an intersection of `2 pages / (1 + pages)`, `share` goes.
fn rest_similarity(pages: f64, share: f64) -> f64 {
    let common = share * (1.0 + pages);
    let union = 2.0 - common;
    if union <= f64::EPSILON {
        return pages;
    }
    ((2.0 * pages - common) / union).clamp(0.0, 1.0)
}

/// Whether the tokens of `left_out` are more than [`PARTIAL_SHARE`] of the page's: those of
/// its main text (analysis `a`, every line) and `left_out`'s.
fn left_out_much(f: &Fingerprinter, a: &Analysis, left_out: &str) -> bool {
    let more = f.count_tokens(left_out);
    more > 0 && more as f64 / (a.body_tokens + more) as f64 > PARTIAL_SHARE
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_little_left_out_keeps_the_main_texts_signals() {
        let f = Fingerprinter::new();
        let story =
            "The harbour master counted the boats that came back after the storm. ".repeat(12);
        let text = f.analyze(None, &story).unwrap();
        for left_out in [None, Some(""), Some("  \n "), Some("More stories")] {
            let page = analyze_page(&f, None, &story, left_out).unwrap();
            assert_eq!(page.sketch, text.sketch, "{left_out:?}");
            assert_eq!(page.content_hash, text.content_hash, "{left_out:?}");
        }
    }

    #[test]
    fn the_rest_of_two_pages_is_their_similarity_without_the_common_text() {
        // Pages of 10 shingles sharing 4 of main text: 6 more each, 2 of them common.
        let pages = 6.0 / 14.0;
        let share = 4.0 / 10.0;
        assert!((rest_similarity(pages, share) - 2.0 / 10.0).abs() < 1e-9);
        assert_eq!(rest_similarity(1.0, 0.3), 1.0, "one page");
        assert_eq!(
            rest_similarity(share / (2.0 - share), share),
            0.0,
            "nothing else shared"
        );
        assert_eq!(rest_similarity(1.0, 1.0), 1.0, "all main text");
    }

    #[test]
    fn a_main_text_of_few_slots_must_be_found_in_all() {
        assert_eq!(at_least_of_half(0, 4), 1.0);
        assert!((at_least_of_half(7, 8) - 9.0 / 256.0).abs() < 1e-12);
        // The fewest slots found, of 5, 8, 12, 20 slots the main text gives its page.
        let least = |n| (0..=n).find(|&k| at_least_of_half(k, n) < MAIN_IN_PAGE_CHANCE);
        assert_eq!(
            [5, 8, 12, 20].map(least),
            [None, Some(8), Some(11), Some(16)]
        );
    }

    #[test]
    fn a_listing_page_agrees_with_itself_not_with_another_of_its_intro() {
        let f = Fingerprinter::new();
        let intro = "Every story of the week about the harbour and the boats that left it, \
            the storms that kept them in and the fish they brought back to the market.";
        let links = |from: usize| -> String {
            (from..from + 30)
                .map(|i| format!("Story {i} of {}\n", i * 7919))
                .collect()
        };
        let page = |from: usize| analyze_page(&f, None, intro, Some(&links(from))).unwrap();
        let (a, recrawl, other) = (page(0), page(3), page(1000));
        let rule = crate::Quality::Standard.rule(3);
        let takes = |x: &Analysis, y: &Analysis| {
            let d = x.fingerprint.distance(y.fingerprint);
            accepts(
                &rule,
                d,
                (x.sketch.as_ref(), x.main_sketch.as_ref()),
                y.sketch.as_ref(),
            )
        };
        assert!(takes(&a, &a), "itself");
        assert!(takes(&recrawl, &a), "its re-crawl, 3 of 30 links new");
        assert!(!takes(&other, &a), "another list under the intro");
    }

    #[test]
    fn a_page_of_a_short_intro_and_chinese_pages_agree_by_the_rest_only_with_themselves() {
        let f = Fingerprinter::new();
        let rule = crate::Quality::Standard.rule(3);
        let links = |from: usize| -> String {
            (from..from + 40)
                .map(|i| format!("Story {i} of {}\n", i * 7919))
                .collect()
        };
        let zh = |from: usize| -> String {
            (from..from + 20)
                .map(|i| {
                    format!(
                        "第{i}条新闻：港口的渔船在风暴之后回来了，编号{}\n",
                        i * 7919
                    )
                })
                .collect()
        };
        let pages = [
            ("All the news.", links(0), links(3)),
            ("本周港口和渔船的全部新闻。", zh(0), zh(1)),
        ];
        for (intro, list, changed) in pages {
            let a = analyze_page(&f, None, intro, Some(&list)).unwrap();
            let b = analyze_page(&f, None, intro, Some(&changed)).unwrap();
            let whole = (a.sketch.as_ref(), a.main_sketch.as_ref().unwrap());
            assert!(
                rest_agrees(&rule, 0, whole, a.sketch.as_ref()),
                "{intro} itself"
            );
            assert!(
                !rest_agrees(&rule, 0, whole, b.sketch.as_ref()),
                "{intro} changed"
            );
        }
    }

    #[test]
    fn two_listing_pages_of_one_intro_differ_by_their_links() {
        let f = Fingerprinter::new();
        let intro = "Every story of the week about the harbour and the boats that left it.";
        let a = analyze_page(
            &f,
            None,
            intro,
            Some("The night ferry\nA storm in May\nOld nets"),
        );
        let b = analyze_page(
            &f,
            None,
            intro,
            Some("Fish prices\nThe lighthouse keeper\nGulls"),
        );
        let (a, b) = (a.unwrap(), b.unwrap());
        assert_eq!(a.fingerprint, b.fingerprint, "the main texts are one");
        assert_ne!(a.content_hash, b.content_hash);
        assert!(a.sketch.unwrap().similarity(&b.sketch.unwrap()) < 0.9);
    }
}
