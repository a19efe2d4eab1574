//! Documents as they enter the store, and what the store keeps about them.
//!
//! Leaf types: every stage uses them, they use nothing but [`Fingerprint`] and [`Sketch`].

use crate::types::fingerprint::Fingerprint;
use crate::types::sketch::Sketch;
use crate::types::weak_bits::WeakBits;

/// A document to fingerprint and store.
///
/// ```
/// use simstore::Document;
/// let page = Document::new("https://example.com/a", "the page's main text")
///     .with_title("A title")
///     .with_url("https://example.com/a");
/// assert_eq!(page.title.as_deref(), Some("A title"));
/// ```
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Document {
    /// The caller's unique id (a URL, a path, a database key...). Non-empty, at most
    /// `MAX_ID_BYTES` bytes.
    pub id: String,
    /// The title, if any; its words weigh 2× the body's, up to a fifth of the body in all.
    /// Stored: at most [`MAX_TITLE_BYTES`] bytes.
    pub title: Option<String>,
    /// The body text (not stored, so not bounded here).
    pub text: String,
    /// Where the document came from, if known. Stored (at most [`MAX_URL_BYTES`] bytes),
    /// not fingerprinted.
    pub url: Option<String>,
    /// For a web page, the visible text its reader left out of `text` (link lists:
    /// [`crate::input::html::Page::left_out`]); not stored, not fingerprinted. When it is
    /// more than a tenth of the page, the store compares the page by its whole visible text
    /// as well as by its fingerprint ([`crate::index::page::analyze_page`]), so that pages
    /// that differ only there (listing pages of one site) are not duplicates.
    pub left_out: Option<String>,
}

/// The longest document id accepted, in bytes.
pub const MAX_ID_BYTES: usize = 4096;

/// Checks an external id: non-empty and at most [`MAX_ID_BYTES`] bytes. The error says which.
pub fn check_id(id: &str) -> Result<(), String> {
    if id.is_empty() {
        return Err("the id is empty".into());
    }
    if id.len() > MAX_ID_BYTES {
        return Err(format!(
            "the id is {} bytes; at most {MAX_ID_BYTES} are allowed",
            id.len()
        ));
    }
    Ok(())
}

/// The longest title stored, in bytes (64 KiB): an HTML `<title>` is rarely over 200
/// bytes; the bound keeps one document's record, and so every answer naming it, small.
pub const MAX_TITLE_BYTES: usize = 64 << 10;

/// The longest url stored, in bytes (8 KiB): longer request lines are refused by common web
/// servers (nginx's and Apache's defaults are 8 KiB), so a longer url is not one a crawler
/// fetched.
pub const MAX_URL_BYTES: usize = 8 << 10;

/// Checks the stored fields of document `id`: its title at most [`MAX_TITLE_BYTES`], its
/// url at most [`MAX_URL_BYTES`]. The error names the document, the field, its length and
/// the maximum.
pub fn check_stored_fields(
    id: &str,
    title: Option<&str>,
    url: Option<&str>,
) -> Result<(), crate::error::Error> {
    let fields = [
        ("title", title, MAX_TITLE_BYTES),
        ("url", url, MAX_URL_BYTES),
    ];
    for (field, value, max) in fields {
        if let Some(v) = value
            && v.len() > max
        {
            return Err(crate::error::Error::FieldTooLong {
                id: id.to_owned(),
                field,
                bytes: v.len(),
                max,
            });
        }
    }
    Ok(())
}

impl Document {
    /// A document with an id and a body text.
    pub fn new(id: impl Into<String>, text: impl Into<String>) -> Self {
        Self {
            id: id.into(),
            text: text.into(),
            ..Self::default()
        }
    }

    /// Sets the title.
    #[must_use]
    pub fn with_title(mut self, title: impl Into<String>) -> Self {
        self.title = Some(title.into());
        self
    }

    /// Sets the URL.
    #[must_use]
    pub fn with_url(mut self, url: impl Into<String>) -> Self {
        self.url = Some(url.into());
        self
    }

    /// Sets what the page's reader left out of the text ([`Document::left_out`]).
    ///
    /// ```
    /// # #[cfg(feature = "html")] {
    /// use simstore::Document;
    /// let page = simstore::read::parse_html("<p>An intro.</p><ul><li><a href=/a>A</a></li></ul>");
    /// let doc = Document::new("https://example.com/", page.text).with_left_out(page.left_out);
    /// assert!(doc.left_out.is_some());
    /// # }
    /// ```
    #[must_use]
    pub fn with_left_out(mut self, left_out: impl Into<String>) -> Self {
        self.left_out = Some(left_out.into());
        self
    }

    /// The metadata the store keeps for this document.
    pub fn meta(&self) -> DocMeta {
        DocMeta {
            title: self.title.clone(),
            url: self.url.clone(),
            length: self.text.chars().count() as u64,
            content_hash: None,
            sketch: None,
            weak_bits: None,
            main_sketch: None,
            times: None,
        }
    }
}

/// What the store keeps about a document besides its id and fingerprint.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct DocMeta {
    /// The title, if any.
    pub title: Option<String>,
    /// The URL, if any.
    pub url: Option<String>,
    /// Length of the body in characters (0 when only a fingerprint was given).
    pub length: u64,
    /// The content hash ([`crate::Fingerprinter::content_hash`]) that the exact-duplicate
    /// path of [`crate::Store::check_and_insert`] looks up; `None` when only a fingerprint
    /// is known. [`crate::Store::insert`] fills it in; [`Document::meta`] leaves it `None`.
    pub content_hash: Option<u128>,
    /// The shingle sketch ([`crate::Fingerprinter::sketch`]) that
    /// a verifying rule ([`crate::Rule::Verified`]) compares; `None` when only a fingerprint is known.
    /// [`crate::Store::insert`] fills it in; [`Document::meta`] leaves it `None`.
    pub sketch: Option<Sketch>,
    /// The fingerprint's least certain bits, which a check by a quality mode's rule probes
    /// beyond the tables' spans ([`crate::MatchRule::probes`]); not stored. `None` when only
    /// a fingerprint is known; [`crate::Store::check_and_insert`] fills it in.
    pub weak_bits: Option<WeakBits>,
    /// When `sketch` is of a web page's whole visible text ([`Sketch::whole_text`]), the
    /// sketch of its main text, which a check compares too; not stored (a stored page keeps
    /// the whole text's). `None` otherwise; [`crate::Store::check_and_insert`] fills it in.
    pub main_sketch: Option<Sketch>,
    /// The stored and last-seen times to keep (seconds since the Unix epoch), as a restore
    /// of an export or a copy has them; `None`: now.
    pub times: Option<(u64, u64)>,
}

impl DocMeta {
    /// Checks the stored fields of document `id` (`check_stored_fields`).
    pub fn check(&self, id: &str) -> Result<(), crate::error::Error> {
        check_stored_fields(id, self.title.as_deref(), self.url.as_deref())
    }
}

/// A stored document, as returned by [`crate::Store::get`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoredDoc {
    /// The external id.
    pub id: String,
    /// The fingerprint (as a raw u64; see [`StoredDoc::fingerprint`]).
    pub fp: u64,
    /// The title, if any.
    pub title: Option<String>,
    /// The URL, if any.
    pub url: Option<String>,
    /// Length of the body in characters (0 when only a fingerprint was given).
    pub length: u64,
    /// When it was stored, in seconds since the Unix epoch (a replacement with the same
    /// fingerprint keeps it, from format 7).
    pub time: u64,
    /// When it was last written or, with last-seen tracking on, last found as the
    /// duplicate of a checked page ([`crate::Store::set_retention`]); `time` until then.
    pub seen: u64,
    /// Its content hash, when it was stored from text (see [`DocMeta::content_hash`]).
    pub content_hash: Option<u128>,
    /// Its shingle sketch, when it was stored from text (see [`DocMeta::sketch`]).
    pub sketch: Option<Sketch>,
}

impl StoredDoc {
    /// The fingerprint.
    pub fn fingerprint(&self) -> Fingerprint {
        Fingerprint(self.fp)
    }

    /// The entry that stores this document again as it is (times included), e.g. into
    /// another store.
    pub fn into_entry(self) -> Entry {
        Entry {
            id: self.id,
            fp: Fingerprint(self.fp),
            meta: DocMeta {
                title: self.title,
                url: self.url,
                length: self.length,
                content_hash: self.content_hash,
                sketch: self.sketch,
                weak_bits: None,
                main_sketch: None,
                times: Some((self.time, self.seen)),
            },
        }
    }
}

/// One answer to a query: a stored document within the asked distance.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Match {
    /// Hamming distance between the query and the document's fingerprint.
    pub distance: u32,
    /// The stored document.
    pub doc: StoredDoc,
}

/// One entry of [`crate::Store::insert_batch`] or [`crate::Store::check_and_insert`]: an
/// id, its fingerprint and its metadata.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entry {
    /// The external id.
    pub id: String,
    /// The fingerprint to store.
    pub fp: Fingerprint,
    /// Title, URL and length to keep with it.
    pub meta: DocMeta,
}

impl Entry {
    /// An entry of `id` with fingerprint `fp` and metadata `meta`.
    pub fn new(id: impl Into<String>, fp: Fingerprint, meta: DocMeta) -> Entry {
        Entry {
            id: id.into(),
            fp,
            meta,
        }
    }
}

/// What a query knows of its document: the fingerprint, and where it was made from text,
/// the sketch (for a rule's verification) and the weak bits (for a rule's query-directed
/// probes).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct QueryKey {
    /// The fingerprint.
    pub fp: Fingerprint,
    /// The shingle sketch, if known.
    pub sketch: Option<Sketch>,
    /// The fingerprint's least certain bits, if known.
    pub weak_bits: Option<WeakBits>,
    /// When `sketch` is of a web page's whole visible text, its main text's sketch: a
    /// candidate must agree with both ([`crate::index::page::accepts`]).
    pub main_sketch: Option<Sketch>,
}

impl From<Fingerprint> for QueryKey {
    /// A query by fingerprint alone.
    fn from(fp: Fingerprint) -> Self {
        QueryKey {
            fp,
            sketch: None,
            weak_bits: None,
            main_sketch: None,
        }
    }
}

impl From<&Entry> for QueryKey {
    /// A query by an entry's fingerprint, sketch and weak bits.
    fn from(e: &Entry) -> Self {
        QueryKey {
            fp: e.fp,
            sketch: e.meta.sketch,
            weak_bits: e.meta.weak_bits,
            main_sketch: e.meta.main_sketch,
        }
    }
}
