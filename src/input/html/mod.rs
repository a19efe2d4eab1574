//! Web page → title and main text (the "reader" stage for HTML input).
//!
//! Parsing is html5ever's (the HTML5 parsing algorithm of Servo) into `scraper`'s tree, so
//! any page a browser can show parses.
//! What is kept:
//! - the title: `og:title` if given, else the longest part of `<title>` split at the
//!   usual "article – site" separators, else the first `<h1>`;
//! - `<meta name="description">` and `keywords` (reported, not fingerprinted);
//! - the main text: every text block of the body, except those inside page chrome (by tag,
//!   `SKIP_TAGS`; ARIA role, `SKIP_ROLES`; class or id words, `SKIP_WORDS`; or
//!   hidden) and link lists (blocks whose text is mostly link text). When the page marks
//!   its main content (`<article>`, `<main>`, `role="main"`, `itemprop="articleBody"`) and
//!   that holds at least a third of the text, only it is kept.
//!
//! Blocks are separated by newlines, so the line-level cleaning of [`crate::text::clean`]
//! applies to HTML-derived text as to plain text.

use ego_tree::NodeRef;
use scraper::{Html, Node};

use crate::input::charset::{self, Decoded};

mod chrome;

use chrome::{Content, El, SKIP_TAGS, is_chrome, is_main, named_chrome};

/// Error type of [`page_from_bytes`]: only undecodable (binary) input fails.
pub type Error = charset::Error;

/// What is kept of a web page.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Page {
    /// The article title, if the page has one.
    pub title: Option<String>,
    /// `<meta name="description">`, if any.
    pub description: Option<String>,
    /// `<meta name="keywords">`, if any.
    pub keywords: Option<String>,
    /// The main text, one block per line.
    pub text: String,
    /// The visible blocks of the main content that the reader left out of `text` as link
    /// lists (mostly link text), one per line. Not here: page chrome as the markup declares
    /// it (`<nav>`, `role="navigation"`, `class="sidebar"`, blocks outside a `<main>` or
    /// `<article>` that holds the text), and the link lists before the first text (a menu).
    /// A dataset dedup counts these as left out of the record
    /// ([`crate::index::near::is_partial`]): two listing pages under one heading and intro
    /// differ by their links alone.
    pub left_out: String,
}

/// Decodes a page's bytes (see `crate::input::charset::decode`; `charset_hint` is the HTTP
/// header's charset, if any, else the page's own `<meta charset>` is looked for) and
/// extracts its title and main text.
pub fn page_from_bytes(bytes: &[u8], charset_hint: Option<&str>) -> Result<Page, Error> {
    let Decoded { text, .. } = decode(bytes, charset_hint)?;
    Ok(parse(&text))
}

/// Decodes a page's bytes: the hint, else a `<meta charset>` / `http-equiv` declaration in
/// the first 1024 bytes, else detection.
pub fn decode(bytes: &[u8], charset_hint: Option<&str>) -> Result<Decoded, Error> {
    let meta = if charset_hint.is_none() {
        meta_charset(&bytes[..bytes.len().min(1024)])
    } else {
        None
    };
    charset::decode(bytes, charset_hint.or(meta.as_deref()))
}

/// The charset declared by a `<meta>` tag in `head`, if any.
fn meta_charset(head: &[u8]) -> Option<String> {
    let lower = head.to_ascii_lowercase();
    let mut from = 0;
    while let Some(i) = find(&lower[from..], b"<meta") {
        let start = from + i;
        let end = find(&lower[start..], b">").map_or(lower.len(), |e| start + e);
        let tag = &lower[start..end];
        if let Some(c) = find(tag, b"charset") {
            let rest = &tag[c + b"charset".len()..];
            let rest = rest.trim_ascii_start();
            if let Some(rest) = rest.strip_prefix(b"=") {
                let rest = rest.trim_ascii_start();
                let rest = rest
                    .strip_prefix(b"\"")
                    .or(rest.strip_prefix(b"'"))
                    .unwrap_or(rest);
                let label: Vec<u8> = rest
                    .iter()
                    .copied()
                    .take_while(|b| b.is_ascii_alphanumeric() || b"-_:.".contains(b))
                    .collect();
                if !label.is_empty() {
                    return String::from_utf8(label).ok();
                }
            }
        }
        from = end;
    }
    None
}

fn find(hay: &[u8], needle: &[u8]) -> Option<usize> {
    hay.windows(needle.len()).position(|w| w == needle)
}

/// Elements that start a new text block.
const BLOCK_TAGS: &[&str] = &[
    "p",
    "div",
    "br",
    "li",
    "ul",
    "ol",
    "dl",
    "dt",
    "dd",
    "h1",
    "h2",
    "h3",
    "h4",
    "h5",
    "h6",
    "pre",
    "blockquote",
    "article",
    "section",
    "main",
    "table",
    "tr",
    "td",
    "th",
    "hr",
    "figcaption",
    "figure",
    "address",
    "center",
    "body",
    "html",
    "title",
];

/// A node's children in document order, but not a `<template>`'s contents (a fragment the
/// page does not show).
fn shown_children<'a>(
    node: NodeRef<'a, Node>,
) -> impl DoubleEndedIterator<Item = NodeRef<'a, Node>> {
    node.children().filter(|c| !c.value().is_fragment())
}

#[derive(Default)]
struct Block {
    text: String,
    link_chars: usize,
    main: bool,
}

#[derive(Default)]
struct Walker {
    blocks: Vec<Block>,
    cur: Block,
}

impl Walker {
    fn end_block(&mut self) {
        let text = self.cur.text.trim();
        if !text.is_empty() {
            let block = Block {
                text: text.to_owned(),
                link_chars: self.cur.link_chars,
                main: self.cur.main,
            };
            self.blocks.push(block);
        }
        self.cur = Block::default();
    }

    fn text(&mut self, t: &str, in_link: bool, in_main: bool) {
        let mut last_space = self.cur.text.ends_with(' ') || self.cur.text.is_empty();
        let mut added = 0;
        for c in t.chars() {
            if c.is_whitespace() {
                if !last_space {
                    self.cur.text.push(' ');
                    last_space = true;
                }
            } else {
                self.cur.text.push(c);
                last_space = false;
                added += 1;
            }
        }
        if in_link {
            self.cur.link_chars += added;
        }
        if added > 0 {
            self.cur.main |= in_main;
        }
    }

    /// Walks the tree in document order with an explicit stack (no recursion: nesting
    /// depth is the page's to choose).
    fn walk(&mut self, root: NodeRef<'_, Node>) {
        enum Step<'a> {
            Enter(NodeRef<'a, Node>, bool, bool),
            EndBlock,
        }
        let mut content = Content::default();
        let mut stack = vec![Step::Enter(root, false, false)];
        while let Some(step) = stack.pop() {
            let (node, in_link, in_main) = match step {
                Step::EndBlock => {
                    self.end_block();
                    continue;
                }
                Step::Enter(node, in_link, in_main) => (node, in_link, in_main),
            };
            let (in_link, in_main) = match node.value() {
                Node::Text(text) => {
                    self.text(text, in_link, in_main);
                    continue;
                }
                Node::Element(element) => {
                    let e = El::new(element);
                    let block = BLOCK_TAGS.contains(&e.name) || SKIP_TAGS.contains(&e.name);
                    if block {
                        self.end_block();
                    }
                    if is_chrome(&e) || (named_chrome(&e) && !content.holds(root, node, &e)) {
                        continue;
                    }
                    if block {
                        stack.push(Step::EndBlock);
                    }
                    (in_link || e.name == "a", in_main || is_main(&e))
                }
                Node::Document => (in_link, in_main),
                _ => continue,
            };
            for child in shown_children(node).rev() {
                stack.push(Step::Enter(child, in_link, in_main));
            }
        }
    }
}

/// Nesting deeper than this is handled by [`strip_tags`]: html5ever's tree building is
/// quadratic in nesting depth (100,000 nested elements take over a minute).
const MAX_DEPTH: usize = 1000;

/// An upper estimate of the element nesting depth: opening tags minus closing tags, at
/// their running maximum (void and self-closed elements do not count). Linear time.
fn nesting_depth(html: &str) -> usize {
    const VOID: &[&str] = &[
        "area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source",
        "track", "wbr", "p", "li", "!doctype", "!--",
    ];
    let bytes = html.as_bytes();
    let (mut depth, mut max) = (0usize, 0usize);
    let mut i = 0;
    while let Some(off) = bytes[i..].iter().position(|&b| b == b'<') {
        let start = i + off + 1;
        let end = bytes[start..]
            .iter()
            .position(|&b| b == b'>')
            .map_or(bytes.len(), |e| start + e);
        let tag = &html[start..end];
        if let Some(closing) = tag.strip_prefix('/') {
            if !closing.is_empty() {
                depth = depth.saturating_sub(1);
            }
        } else {
            let name: String = tag
                .chars()
                .take_while(|c| !c.is_whitespace() && *c != '/')
                .collect::<String>()
                .to_ascii_lowercase();
            if !name.is_empty() && !VOID.contains(&name.as_str()) && !tag.ends_with('/') {
                depth += 1;
                max = max.max(depth);
            }
        }
        i = end.min(bytes.len());
        if i >= bytes.len() {
            break;
        }
    }
    max
}

/// Linear fallback for pathologically nested pages: the text between tags, without the
/// content of `script` and `style` elements, blocks joined by newlines.
fn strip_tags(html: &str) -> Page {
    let mut text = String::new();
    let mut rest = html;
    while !rest.is_empty() {
        let Some(lt) = rest.find('<') else {
            text.push_str(rest);
            break;
        };
        text.push_str(&rest[..lt]);
        let after = &rest[lt..];
        let lower_start: String = after
            .chars()
            .take(8)
            .collect::<String>()
            .to_ascii_lowercase();
        let skip_to = if lower_start.starts_with("<script") {
            Some("</script")
        } else if lower_start.starts_with("<style") {
            Some("</style")
        } else {
            None
        };
        let resume = match skip_to {
            Some(end_tag) => after
                .to_ascii_lowercase()
                .find(end_tag)
                .map_or(after.len(), |e| e + end_tag.len()),
            None => 0,
        };
        let after = &after[resume..];
        match after.find('>') {
            Some(gt) => {
                text.push('\n');
                rest = &after[gt + 1..];
            }
            None => break,
        }
    }
    let text = text
        .lines()
        .map(collapse)
        .filter(|l| !l.is_empty())
        .collect::<Vec<_>>()
        .join("\n");
    Page {
        text,
        ..Page::default()
    }
}

/// Extracts the title, description, keywords and main text of an HTML document.
pub fn parse(html: &str) -> Page {
    if nesting_depth(html) > MAX_DEPTH {
        return strip_tags(html);
    }
    let dom = Html::parse_document(html);
    let mut page = Page::default();
    let mut og_title = None;
    let mut title_tag = None;
    let mut h1 = None;
    let mut stack = vec![dom.tree.root()];
    while let Some(node) = stack.pop() {
        if let Node::Element(element) = node.value() {
            let e = El::new(element);
            match e.name {
                "title" if title_tag.is_none() => title_tag = Some(text_of(node)),
                "h1" if h1.is_none() => h1 = Some(text_of(node)),
                "meta" => {
                    let name = e
                        .attr("name")
                        .or(e.attr("property"))
                        .unwrap_or("")
                        .to_ascii_lowercase();
                    let content = e.attr("content").map(collapse).filter(|c| !c.is_empty());
                    match name.as_str() {
                        "og:title" if og_title.is_none() => og_title = content,
                        "description" if page.description.is_none() => {
                            page.description = content;
                        }
                        "keywords" if page.keywords.is_none() => page.keywords = content,
                        _ => {}
                    }
                }
                _ => {}
            }
        }
        stack.extend(shown_children(node).rev());
    }
    page.title = og_title
        .or_else(|| title_tag.as_deref().map(crate::text::clean::title))
        .or(h1)
        .filter(|t| !t.is_empty());

    let mut walker = Walker::default();
    walker.walk(dom.tree.root());
    walker.end_block();
    let blocks = walker.blocks;
    let total: usize = blocks.iter().map(|b| b.text.chars().count()).sum();
    let main: usize = blocks
        .iter()
        .filter(|b| b.main)
        .map(|b| b.text.chars().count())
        .sum();
    let only_main = main > 0 && main * 3 >= total;
    let mut text = String::with_capacity(total * 3);
    let mut left_out = String::new();
    for b in &blocks {
        // Outside the page's declared main content: chrome, as its markup says.
        if only_main && !b.main {
            continue;
        }
        let chars = b.text.chars().filter(|c| !c.is_whitespace()).count();
        // Link lists: mostly link text. Single links inside prose stay. Those before the
        // first text are the page's menu, as the cleaner takes a page's first short lines
        // for its header: not counted as left out.
        let to = match chars > 0 && b.link_chars * 2 > chars {
            false => &mut text,
            true if text.is_empty() => continue,
            true => &mut left_out,
        };
        to.push_str(&b.text);
        to.push('\n');
    }
    text.pop();
    left_out.pop();
    page.text = text;
    page.left_out = left_out;
    page
}

/// The text of a node's descendants, whitespace collapsed.
fn text_of(node: NodeRef<'_, Node>) -> String {
    let mut s = String::new();
    let mut stack = vec![node];
    while let Some(n) = stack.pop() {
        if let Node::Text(text) = n.value() {
            s.push_str(text);
        }
        stack.extend(shown_children(n).rev());
    }
    collapse(&s)
}

fn collapse(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;

    const PAGE: &str = r#"<!doctype html><html><head>
<meta charset="utf-8"><title>北京今日天气晴好 - 示例新闻网</title>
<meta name="description" content="北京天气">
<script>var counter = 12345;</script><style>p { color: red }</style>
</head><body>
<header><a href="/">首页</a> | <a href="/news">新闻</a></header>
<nav><ul><li><a href="/a">体育</a></li><li><a href="/b">财经</a></li></ul></nav>
<div class="share-bar">分享到：微信 微博</div>
<article>
  <h1>北京今日天气晴好</h1>
  <p>今天北京的天气很好，我们去公园散步，看到很多人在跑步和放风筝。</p>
  <p>下午气温升到二十度，<a href="/x">公园</a>里游客很多。</p>
  <div style="display: none">隐藏的统计代码</div>
</article>
<aside>热门文章：某某某</aside>
<div id="comments">评论区内容</div>
<ul class="links"><li><a href="/1">相关链接一</a></li><li><a href="/2">相关链接二</a></li></ul>
<footer>版权所有 © 2026 示例新闻网</footer>
</body></html>"#;

    #[test]
    fn keeps_title_and_main_text_only() {
        let page = parse(PAGE);
        assert_eq!(page.title.as_deref(), Some("北京今日天气晴好"));
        assert_eq!(page.description.as_deref(), Some("北京天气"));
        assert_eq!(
            page.text,
            "北京今日天气晴好\n今天北京的天气很好，我们去公园散步，看到很多人在跑步和放风筝。\n下午气温升到二十度，公园里游客很多。"
        );
        // Outside the article is chrome, link list or not; within it there is none.
        assert_eq!(page.left_out, "");
    }

    /// A theme's state words in the class of the element that holds the article (or of
    /// `<body>`) do not make it chrome: the article stays, the sidebar, the menu and the
    /// comments beside it go. Each of these classes dropped the whole article once.
    #[test]
    fn content_under_a_themes_state_words_stays() {
        let story = "<p>The harbour council voted on Tuesday to build protected bike lanes \
            through the district, ending a debate of three years.</p><p>The plan adds eleven \
            kilometres of lanes along Quay Street and Mill Road.</p>";
        let text = "The harbour council voted on Tuesday to build protected bike lanes through \
            the district, ending a debate of three years.\nThe plan adds eleven kilometres of \
            lanes along Quay Street and Mill Road.";
        let beside = r#"<div class="sidebar"><h3>Popular</h3><ul><li><a href="/a">A story of the
            week</a></li><li><a href="/b">Another story</a></li></ul></div>
            <div class="comments"><p>Great read, thank you!</p></div>
            <div class="menu-open">Open the menu</div>"#;
        for (body, div) in [
            ("single has-sidebar", "post has-comments"),
            ("menu-closed", "entry share-enabled"),
            ("home", "content sidebar-left"),
            ("", "comments-closed story ad-free"),
        ] {
            let page = parse(&format!(
                r#"<html><body class="{body}"><nav><a href="/">Home</a></nav>
                <div class="{div}">{story}</div>{beside}</body></html>"#
            ));
            assert_eq!(page.text, text, "body {body:?}, div {div:?}");
        }
        // Named chrome that holds most of the page is kept only when it is not links.
        let links: String = (0..40)
            .map(|i| format!(r#"<li><a href="/{i}">Story number {i} of the week</a></li>"#))
            .collect();
        let page = parse(&format!(
            r#"<html><body>{story}<div class="sidebar"><ul>{links}</ul></div></body></html>"#
        ));
        assert_eq!((page.text.as_str(), page.left_out.as_str()), (text, ""));
        // A prose sidebar beside a short article, the same on every page of the site, goes
        // even when it holds half of the page: it is not most of it.
        let bio = "Mara Quill has covered the harbour for the Ledger since 2009, writing about \
            its ferries, its markets and the people who work the night shift at the docks. \
            Before that she reported on the fishing fleets of the north coast for eleven years.";
        let page = parse(&format!(
            r#"<html><body>{story}<div class="sidebar"><p>{bio}</p></div></body></html>"#
        ));
        assert_eq!(page.text, text);
    }

    #[test]
    fn without_a_main_element_chrome_and_link_lists_go() {
        let page = parse(
            r#"<html><body><div class="topNav"><a href="/">Home</a></div>
<div class="content"><p>The quick brown fox jumps over the lazy dog.</p>
<p>It was a <a href="/day">sunny</a> day in the park.</p></div>
<div><a href="/1">Sports</a> <a href="/2">Business</a> <a href="/3">Weather</a></div>
<div class="ad-slot">Buy now!</div>
</body></html>"#,
        );
        assert_eq!(page.title, None);
        assert_eq!(
            page.text,
            "The quick brown fox jumps over the lazy dog.\nIt was a sunny day in the park."
        );
        assert_eq!(page.left_out, "Sports Business Weather");
        // A link list before the first text is the page's menu: not counted.
        let menu = r#"<div><a href="/">Home</a> <a href="/a">Archive</a></div>"#;
        let page = parse(&format!(
            "<html><body>{menu}<p>The story itself.</p></body></html>"
        ));
        assert_eq!(
            (page.text.as_str(), page.left_out.as_str()),
            ("The story itself.", "")
        );
    }

    #[test]
    fn titles() {
        let og = parse(
            r#"<html><head><meta property="og:title" content="OG title"><title>T - S</title></head><body><p>x</p></body></html>"#,
        );
        assert_eq!(og.title.as_deref(), Some("OG title"));
        let h1 = parse("<html><body><h1>Heading</h1><p>text</p></body></html>");
        assert_eq!(h1.title.as_deref(), Some("Heading"));
    }

    #[test]
    fn charset_from_meta_or_detection() {
        let html = "<html><head><meta http-equiv=\"Content-Type\" content=\"text/html; charset=gb2312\"><title>新闻标题</title></head><body><p>今天北京的天气很好，我们去公园散步。</p></body></html>";
        let (gbk, _, _) = encoding_rs::GBK.encode(html);
        assert_eq!(meta_charset(&gbk).as_deref(), Some("gb2312"));
        let page = page_from_bytes(&gbk, None).unwrap();
        assert_eq!(page.title.as_deref(), Some("新闻标题"));
        assert_eq!(page.text, "今天北京的天气很好，我们去公园散步。");
        // A wrong HTTP hint over UTF-8 bytes: the bytes win.
        let page = page_from_bytes(html.as_bytes(), Some("iso-8859-1")).unwrap();
        assert_eq!(page.title.as_deref(), Some("新闻标题"));
        // Big5 without any declaration.
        let tw = "<html><body><p>今天臺北的天氣很好，我們去公園散步，看到很多人在跑步和放風箏。</p></body></html>";
        let (big5, _, _) = encoding_rs::BIG5.encode(tw);
        let page = page_from_bytes(&big5, None).unwrap();
        assert_eq!(
            page.text,
            "今天臺北的天氣很好，我們去公園散步，看到很多人在跑步和放風箏。"
        );
        assert!(page_from_bytes(b"\x00\x01binary", None).is_err());
    }

    #[test]
    fn malformed_html_does_not_panic() {
        for html in [
            "",
            "<",
            "<html><body><p>unclosed <b>bold",
            "</div></div>text",
            "<<<>>>",
        ] {
            let _ = parse(html);
        }
        // Deep nesting: linear fallback, no recursion, no stack overflow.
        assert!(nesting_depth("<div><p>a<br><img src=x/><span>b</span></div>") == 2);
        let deep = format!(
            "{}deep text{}",
            "<div><span>".repeat(100_000),
            "</span></div>".repeat(100_000)
        );
        assert_eq!(parse(&deep).text, "deep text");
        let deep_script = format!(
            "{}<script>var x = '<b>';</script>kept<style>p {{}}</style>{}",
            "<div>".repeat(5_000),
            "</div>".repeat(5_000)
        );
        assert_eq!(parse(&deep_script).text, "kept");
        assert_eq!(parse("<p>unclosed <b>bold").text, "unclosed bold");
    }
}
