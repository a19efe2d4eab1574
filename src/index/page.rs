//! What a store keeps of a web page whose reader left out much of its visible text: the
//! content hash and the sketch of the whole page, so that two pages whose main texts are
//! one and the same (a site's listing pages: one intro, different lists of links) are told
//! apart, while the fingerprint, the tables' key, stays the main text's.

use crate::error::Result;
use crate::index::near::PARTIAL_SHARE;
use crate::index::quality::MatchRule;
use crate::text::fingerprint::{Analysis, Fingerprinter};
use crate::types::Sketch;

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
/// of their own agree by their main texts at least as well as by their pages.
pub fn accepts(
    rule: &MatchRule,
    distance: u32,
    (sketch, main): (Option<&Sketch>, Option<&Sketch>),
    stored: Option<&Sketch>,
) -> bool {
    rule.accepts(distance, sketch, stored)
        && main.is_none_or(|m| rule.accepts(distance, Some(m), stored))
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
