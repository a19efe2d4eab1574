//! What a caller hands the store's one query, one check and one dedup: the document or
//! fingerprint asked about ([`Query`], [`Incoming`]) and the rule that says what counts as
//! a near duplicate ([`Rule`]). Each converts from the plain values a caller has.

use crate::index::quality::{MatchRule, Quality};
use crate::text::fingerprint::Analysis;
use crate::types::{Document, Entry, Fingerprint, QueryKey};

/// What [`crate::Store::query`] looks for: a fingerprint (with, where known, its sketch and
/// weak bits) or a document the store fingerprints first.
///
/// ```
/// # use simstore::{Document, Fingerprint, Query};
/// let by_fp: Query = Fingerprint(0x0123_4567_89ab_cdef).into();
/// let page = Document::new("a", "some text");
/// let by_text: Query = (&page).into();
/// # let _ = (by_fp, by_text);
/// ```
#[derive(Debug, Clone, Copy)]
pub enum Query<'a> {
    /// A fingerprint, and what is known of it.
    Key(QueryKey),
    /// A document: its analysis gives the fingerprint, the sketch and the weak bits.
    Doc(&'a Document),
}

impl From<Fingerprint> for Query<'_> {
    fn from(fp: Fingerprint) -> Self {
        Query::Key(fp.into())
    }
}

impl From<QueryKey> for Query<'_> {
    fn from(key: QueryKey) -> Self {
        Query::Key(key)
    }
}

impl From<&Analysis> for Query<'_> {
    fn from(analysis: &Analysis) -> Self {
        Query::Key(analysis.into())
    }
}

impl<'a> From<&'a Document> for Query<'a> {
    fn from(doc: &'a Document) -> Self {
        Query::Doc(doc)
    }
}

/// What [`crate::Store::check_and_insert`] checks and stores: a document (fingerprinted
/// by the store) or an id with a fingerprint made elsewhere.
#[derive(Debug, Clone, Copy)]
pub enum Incoming<'a> {
    /// A document.
    Doc(&'a Document),
    /// An id, its fingerprint and its metadata.
    Entry(&'a Entry),
}

impl<'a> From<&'a Document> for Incoming<'a> {
    fn from(doc: &'a Document) -> Self {
        Incoming::Doc(doc)
    }
}

impl<'a> From<&'a Entry> for Incoming<'a> {
    fn from(entry: &'a Entry) -> Self {
        Incoming::Entry(entry)
    }
}

/// Which stored documents count as near duplicates, for a query, a check or a dedup.
/// A `u32` converts into [`Rule::Within`], a [`Quality`] into [`Rule::Quality`], a
/// [`MatchRule`] into [`Rule::Custom`]; [`crate::Store::rule`] gives the exact
/// [`MatchRule`] a store applies for any of them.
///
/// ```
/// # use simstore::{Quality, Rule};
/// assert_eq!(Rule::from(3), Rule::Within(3));
/// assert_eq!(Rule::from(Quality::High), Rule::Quality(Quality::High));
/// assert_eq!(Rule::options(None, None), Rule::Mode);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub enum Rule {
    /// The store's own quality mode, at its `k_max` and with its band tables: the rule to
    /// use unless there is a reason not to.
    #[default]
    Mode,
    /// "Distance ≤ k", exact for every `k ≤ k_max` (a larger k is
    /// [`crate::Error::KTooLarge`]).
    Within(u32),
    /// "Distance ≤ k (the store's `k_max` when `None`) and sketch similarity ≥
    /// `min_similarity`": the two-stage query. A side without a sketch never matches.
    Verified {
        /// The distance probed; `None`: the store's `k_max`.
        k: Option<u32>,
        /// The least estimated Jaccard similarity of the shingle sketches, 0 to 1.
        min_similarity: f64,
    },
    /// A quality mode's rule at the store's `k_max` and band tables.
    Quality(Quality),
    /// Exactly this rule.
    Custom(MatchRule),
    /// Every stored document within distance k (any k ≤ 64), by a scan of every record:
    /// exact but slow. Queries only; a check or a dedup refuses it.
    Exhaustive(u32),
}

impl Rule {
    /// The rule of the optional `k` and similarity threshold `verify` that the command
    /// line (`--k`, `--verify`), HTTP and Python take: neither, [`Rule::Mode`]; `k` alone,
    /// [`Rule::Within`]; `verify`, [`Rule::Verified`].
    pub fn options(k: Option<u32>, verify: Option<f64>) -> Rule {
        match (k, verify) {
            (None, None) => Rule::Mode,
            (Some(k), None) => Rule::Within(k),
            (k, Some(min_similarity)) => Rule::Verified { k, min_similarity },
        }
    }
}

impl From<u32> for Rule {
    fn from(k: u32) -> Self {
        Rule::Within(k)
    }
}

impl From<Quality> for Rule {
    fn from(quality: Quality) -> Self {
        Rule::Quality(quality)
    }
}

impl From<MatchRule> for Rule {
    fn from(rule: MatchRule) -> Self {
        Rule::Custom(rule)
    }
}

impl From<&MatchRule> for Rule {
    fn from(rule: &MatchRule) -> Self {
        Rule::Custom(*rule)
    }
}
