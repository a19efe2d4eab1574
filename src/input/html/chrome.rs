//! What the HTML reader takes for page chrome: elements by tag (`SKIP_TAGS`), ARIA role
//! (`SKIP_ROLES`), hidden ones, and those whose class or id words name chrome
//! (`SKIP_WORDS`) — unless such a named element holds the page's content (`Content`).

use ego_tree::NodeRef;
use scraper::Node;

use super::shown_children;

/// Elements whose whole content is page chrome or not text.
pub(super) const SKIP_TAGS: &[&str] = &[
    "script", "style", "noscript", "template", "head", "nav", "header", "footer", "aside", "form",
    "iframe", "svg", "button", "select", "textarea", "input", "object", "embed", "canvas", "audio",
    "video", "map", "dialog", "menu", "label",
];

/// ARIA roles of page chrome.
const SKIP_ROLES: &[&str] = &[
    "navigation",
    "banner",
    "contentinfo",
    "complementary",
    "search",
    "dialog",
    "menu",
    "menubar",
    "toolbar",
    "alert",
];

/// Words in class names and ids that mark page chrome (matched as whole words of the
/// name split at non-alphanumeric characters and camelCase boundaries).
const SKIP_WORDS: &[&str] = &[
    "nav",
    "navbar",
    "navigation",
    "menu",
    "footer",
    "sidebar",
    "share",
    "sharing",
    "social",
    "comment",
    "comments",
    "related",
    "recommend",
    "recommended",
    "ad",
    "ads",
    "advert",
    "advertisement",
    "banner",
    "breadcrumb",
    "breadcrumbs",
    "copyright",
    "cookie",
    "cookies",
    "popup",
    "modal",
    "subscribe",
    "newsletter",
    "pagination",
    "pager",
    "toolbar",
    "widget",
    "sponsor",
    "sponsored",
    "promo",
    "hidden",
    "masthead",
    "topbar",
    "login",
    "signup",
];

/// An element's name and attributes, as the chrome rules see them.
pub(super) struct El<'a> {
    pub(super) name: &'a str,
    element: &'a scraper::node::Element,
}

impl<'a> El<'a> {
    pub(super) fn new(element: &'a scraper::node::Element) -> Self {
        El {
            name: element.name(),
            element,
        }
    }

    pub(super) fn attr(&self, name: &str) -> Option<&'a str> {
        self.element.attr(name)
    }
}

/// Marks of an element holding the main content.
pub(super) fn is_main(e: &El<'_>) -> bool {
    matches!(e.name, "article" | "main")
        || e.attr("role") == Some("main")
        || e.attr("itemprop") == Some("articleBody")
}

/// Whether the markup declares `e` chrome: its tag, its ARIA role, or hidden.
pub(super) fn is_chrome(e: &El<'_>) -> bool {
    if SKIP_TAGS.contains(&e.name) {
        return true;
    }
    if e.attr("hidden").is_some() || e.attr("aria-hidden") == Some("true") {
        return true;
    }
    if let Some(style) = e.attr("style") {
        let style: String = style.chars().filter(|c| !c.is_whitespace()).collect();
        if style.to_ascii_lowercase().contains("display:none") {
            return true;
        }
    }
    if let Some(role) = e.attr("role")
        && SKIP_ROLES.contains(&role.trim().to_ascii_lowercase().as_str())
    {
        return true;
    }
    false
}

/// Whether a word of `e`'s class names or id names chrome (`SKIP_WORDS`): a sidebar, a
/// menu, comments, ads... or a theme's word for the state of a page that holds its content
/// (`has-sidebar`, `menu-open`, `comments-closed`), which [`Content::holds`] tells apart.
pub(super) fn named_chrome(e: &El<'_>) -> bool {
    let names = e
        .attr("class")
        .into_iter()
        .flat_map(str::split_whitespace)
        .chain(e.attr("id"));
    for name in names {
        if name_words(name).any(|w| SKIP_WORDS.contains(&w.as_str())) {
            return true;
        }
    }
    false
}

/// The page's shown text, which an element named chrome must not hold most of
/// ([`Content::holds`]); counted once, when the first such element is met.
#[derive(Default)]
pub(super) struct Content {
    total: Option<usize>,
}

impl Content {
    /// Whether element `e` (`node`), named chrome by its class or id words, is kept anyway:
    /// the document itself (`html`, `body`), an element the markup declares main content
    /// ([`is_main`]), or one that holds at least two thirds of the page's shown text
    /// (`root`'s), less than half of it link text — a page's content under a theme's state
    /// words (`<body class="has-sidebar">`, `<div class="post has-comments">`), not a
    /// sidebar, a menu or a comment thread beside an article (a prose sidebar beside a short
    /// article, an author's note, may hold half). Dropping such an element dropped the whole
    /// article.
    pub(super) fn holds(
        &mut self,
        root: NodeRef<'_, Node>,
        node: NodeRef<'_, Node>,
        e: &El<'_>,
    ) -> bool {
        if matches!(e.name, "html" | "body") || is_main(e) {
            return true;
        }
        let total = *self.total.get_or_insert_with(|| shown_text(root).0);
        let (text, links) = shown_text(node);
        text > 0 && text * 3 >= total * 2 && links * 2 < text
    }
}

/// Characters (not whitespace) of the text `node` shows — not under an element the markup
/// declares chrome ([`is_chrome`]) — and of those, inside links.
fn shown_text(node: NodeRef<'_, Node>) -> (usize, usize) {
    let (mut text, mut links) = (0, 0);
    let mut stack = vec![(node, false)];
    while let Some((n, in_link)) = stack.pop() {
        let in_link = match n.value() {
            Node::Text(t) => {
                let chars = t.chars().filter(|c| !c.is_whitespace()).count();
                text += chars;
                links += if in_link { chars } else { 0 };
                continue;
            }
            Node::Element(element) => {
                let e = El::new(element);
                if is_chrome(&e) {
                    continue;
                }
                in_link || e.name == "a"
            }
            Node::Document => in_link,
            _ => continue,
        };
        stack.extend(shown_children(n).map(|c| (c, in_link)));
    }
    (text, links)
}

/// The words of a class name or id: split at non-alphanumerics and lower→upper case steps.
fn name_words(name: &str) -> impl Iterator<Item = String> + '_ {
    let mut words = Vec::new();
    let mut cur = String::new();
    let mut prev_lower = false;
    for c in name.chars() {
        if !c.is_ascii_alphanumeric() {
            if !cur.is_empty() {
                words.push(std::mem::take(&mut cur));
            }
            prev_lower = false;
            continue;
        }
        if c.is_ascii_uppercase() && prev_lower && !cur.is_empty() {
            words.push(std::mem::take(&mut cur));
        }
        prev_lower = c.is_ascii_lowercase() || c.is_ascii_digit();
        cur.push(c.to_ascii_lowercase());
    }
    if !cur.is_empty() {
        words.push(cur);
    }
    words.into_iter()
}
