#!/usr/bin/env python3
"""Writes a ground-truth corpus of raw-HTML web pages (JSONL) for measuring a dataset dedup
on pages whose visible text the HTML reader partly strips, and scores what a dedup kept.

    scripts/gen_dedup_corpus_html.py N SEED OUT.jsonl [--git-dir /work/.mirror/jhacksman+arxiv2025/repo] [--commit C]
    scripts/gen_dedup_corpus_html.py --score CORPUS.jsonl KEPT.jsonl

Source text: the sentence pool of scripts/gen_dedup_corpus_natural.py (imported from this
folder): the English Project Gutenberg books of jhacksman/arxiv2025, commit
8782bb4e8a336d6319ab47696bc17968ed7e54f4 (get it with the `fetch` tool, github:jhacksman/arxiv2025;
the pool is cached in /tmp/natural-sentences-COMMIT.txt). Titles (4-10 words), headings (1-4)
and link texts (3-8) are runs of consecutive words of pool sentences, punctuation stripped.
Nothing of the corpus is stored in this repository; rebuild it with the command above, e.g.
`scripts/gen_dedup_corpus_html.py 3000 1 /tmp/htmlcorpus/c3k.jsonl`.

Each line is {"id": "p000123", "html": "<!doctype html>...", "cluster": 17, "kind": K}; "cluster"
is the truth (same cluster = real copies of one page; a perfect dedup keeps one record per
cluster and never merges two clusters). Kinds, by share of the N records:
- "article" (with its "copy" records, ~60 %): title in <title> and <h1>, 3-8 paragraphs of
  60-160 words (--article-words) of random pool sentences, in one of 8 site templates that differ in chrome
  words and markup: a menu (<header>, <nav>, role=navigation, id=topNav, ...), mostly a
  sidebar of links (<aside>, class=sidebar, role=complementary, ...), a footer, in half of
  them a plain unmarked <ul> of 5-15 links after the story (dropped by the reader only for
  its link-text share), in some a <main>/<article>/role=main/itemprop=articleBody wrapper and
  a visible date line. 30 % of the articles get 1-3 "copy" records on other templates: same
  title and paragraphs, ~2 % of the words replaced, dropped or inserted, half with a short
  line ("Posted by staff.") added; they share the article's cluster.
- "listing" (~25 %): groups of 5-30 category pages of one site (bare, or in the site's
  template) sharing an <h1> and a 15-40-word intro, each with its own unmarked list of
  10-40 links of 3-8 words (two pages of a group share at most 10 % of the shorter list).
  Every listing page is its own cluster: once the reader drops the lists they look alike.
- "stub" (~15 %): groups of 5-30 pages of one shop whose main text is one shared short
  sentence ("This product is out of stock.") plus a distinct <ul> of spec/product links;
  half of the groups also share the <title>, the others have one product name per page.
  Each its own cluster.
Records are shuffled and numbered afterwards. Also writes OUT.truth.json (counts by kind,
clusters, planted copies, groups). Deterministic for a given N, SEED and source commit.

--score prints one JSON object: records, clusters, kept, copies_missed (kept rows whose
cluster another kept row already has), clusters_lost (clusters with no kept row),
unknown_ids, and by_kind {article, listing, stub}: the same numbers per kind of cluster.
A kept row is named by its "id".
"""
import argparse
import html
import importlib.util
import json
import os
import random
import re
import sys
from collections import Counter

HERE = os.path.dirname(os.path.abspath(__file__))
_spec = importlib.util.spec_from_file_location("natural", os.path.join(HERE, "gen_dedup_corpus_natural.py"))
natural = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(natural)

# Site templates: chrome markup and words differ per site. nav: {a} menu links, {bar} the same
# with " | ", {ul} as a list, {site}; side/foot/wrap: {} is the content; related: the heading
# of the unmarked link list after the story ("" none), None for no list; date: a visible line.
T = dict
TEMPLATES = [
    T(site="The Harbour Gazette", sep=" – ", nav='<header class="masthead"><strong>{site}</strong> {bar}</header>',
      menu=["Home", "Harbour", "Shipping", "Weather", "Opinion", "Archive"], side="<aside>{}</aside>",
      side_head="Most read", foot="<footer><p>{}</p></footer>", related="More stories", date=None,
      foot_text="© 2024 The Harbour Gazette. All rights reserved. Harbour House, Quay Street.",
      wrap="<article>\n{}\n</article>", path="/news/"),
    T(site="Northfield Review", sep=" | ", nav="<nav>\n{ul}\n</nav>", side='<div class="sidebar">{}</div>',
      menu=["Front page", "Books", "Essays", "Letters", "Subscribe"], side_head="Popular this week",
      foot='<div class="site-footer"><p>{}</p></div>', related=None, date=None,
      foot_text="Northfield Review is published by Northfield Press Ltd. Terms · Privacy",
      wrap="<main>\n{}\n</main>", path="https://northfield-review.example/essays/"),
    T(site="Quill & Lantern", sep=" - ", nav='<div id="topNav">{a}</div>', side=None, side_head="",
      menu=["Start", "Stories", "Poems", "Authors", "About us"], foot='<div id="copyright">{}</div>',
      foot_text="Copyright 2019-2025 Quill and Lantern Society. Contact the editors.", related="", date=None,
      wrap='<div class="content">\n{}\n</div>', path="/p/"),
    T(site="Meridian Daily", sep=" :: ", nav='<div role="navigation" class="top">{a}</div>',
      menu=["Latest", "Politics", "Business", "Science", "Sport", "Culture", "Travel"],
      side='<div role="complementary">{}</div>', side_head="Trending now", related=None,
      foot='<footer class="foot"><small>{}</small></footer>', date="Meridian Daily, {d}",
      foot_text="Meridian Daily Media Group. Advertise with us. Careers. Accessibility.",
      wrap='<div itemprop="articleBody">\n{}\n</div>', path="https://meridian.example/story/"),
    T(site="Old Mill Journal", sep=" – ", nav="<header><h2>{site}</h2><nav>{a}</nav></header>",
      menu=["Journal", "Village", "History", "Events", "Gallery"], side='<div class="widget-area">{}</div>',
      side_head="Elsewhere on the site", foot='<div role="contentinfo">{}</div>', related="See also", date=None,
      foot_text="The Old Mill Journal, Mill Lane. Registered charity. Sitemap.",
      wrap='<div role="main">\n{}\n</div>', path="/journal/"),
    T(site="Copperbeech Notes", sep=" | ", nav='<div class="menu">{a}</div>', side='<aside id="blogroll">{}</aside>',
      menu=["Blog", "Notes", "Tags", "Feed", "Colophon"], side_head="Blogroll", foot="<footer><p>{}</p></footer>",
      foot_text="Powered by a small static site generator. Copperbeech Notes, all text CC BY.", related=None,
      date="Posted {d}", wrap='<div id="post">\n{}\n</div>', path="/notes/"),
    T(site="Saltmarsh Courier", sep=" - ", nav='<nav class="navbar navbar-expand">{ul}</nav>',
      menu=["News", "Tides", "Farming", "Obituaries", "Notices", "Jobs"], side='<div class="sidebar-right">{}</div>',
      side_head="Editor's picks", foot='<div class="footer-links">{}</div>', related="", date=None,
      foot_text="Saltmarsh Courier © 2025 · Marsh Road Printing Works · Corrections",
      wrap="<main>\n{}\n</main>", path="https://saltmarsh-courier.example/"),
    T(site="Greywater Tribune", sep=" — ", nav='<div id="navigation">{ul}</div>', side=None, side_head="",
      menu=["Home", "City", "County", "Courts", "Schools", "Arts"], foot="<footer><p>{}</p></footer>",
      foot_text="Greywater Tribune. Independent since 1887. Send us a tip.", related=None,
      date="{d} · Greywater", wrap="<article>\n{}\n</article>", path="/tribune/"),
]
STUBS = ["This product is out of stock.", "This item is no longer available.", "Sorry, this page has moved.",
         "Sign in to see prices and availability.", "This listing has expired.", "Coming soon to our shop."]
EXTRA = ["Posted by staff.", "Share this article.", "Updated on 2024-{m:02d}-{d:02d}.", "Filed under general news."]
SPEC = ["Model", "Size", "Colour", "Weight", "Variant", "Edition", "Part no."]


def slug(text):
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")[:60]


class Gen:
    def __init__(self, r, pool):
        self.r, self.pool = r, pool
        self.words = [w for s in r.sample(pool, min(len(pool), 50_000)) for w in s.split()]

    def phrase(self, lo, hi):
        """lo-hi consecutive words of a pool sentence, punctuation stripped, first capitalised."""
        while True:
            w = [x for x in (re.sub(r"[^\w'-]", "", t).strip("'-") for t in self.r.choice(self.pool).split()) if x]
            k = self.r.randint(lo, hi)
            if len(w) >= k:
                i = self.r.randrange(len(w) - k + 1)
                p = " ".join(w[i:i + k])
                return p[0].upper() + p[1:]

    def sentences(self, lo, hi, least=1):
        """Random pool sentences, lo-hi words in all (at least `least` of them)."""
        target, out, n = self.r.randint(lo, hi), [], 0
        while n < target or len(out) < least:
            s = self.r.choice(self.pool)
            k = s.count(" ") + 1
            if n + k <= hi:
                out.append(s)
                n += k
            elif n >= lo and len(out) >= least:
                break
        return out

    def intro(self):
        """One or two pool sentences of 15-40 words in all."""
        while True:
            s = self.r.sample(self.pool, self.r.randint(1, 2))
            if 15 <= sum(x.count(" ") + 1 for x in s) <= 40:
                return " ".join(s)

    def links(self, k, base):
        return [(base + slug(t) + "-%d" % self.r.randrange(10_000), t) for t in (self.phrase(3, 8) for _ in range(k))]

    def date(self):
        return "2024-%02d-%02d" % (self.r.randint(1, 12), self.r.randint(1, 28))

    def edit(self, paras):
        paras = [p.split(" ") for p in paras]
        for _ in range(max(1, sum(map(len, paras)) * 2 // 100)):
            w = self.r.choices(paras, weights=[len(p) for p in paras])[0]
            op, i = self.r.random(), self.r.randrange(len(w))
            if op < 0.5:
                w[i] = self.r.choice(self.words)
            elif op < 0.75 and len(w) > 5:
                del w[i]
            else:
                w.insert(i, self.r.choice(self.words))
        return [" ".join(w) for w in paras]


def ul(links, cls=""):
    e = html.escape
    return "<ul%s>\n%s\n</ul>" % (cls, "\n".join('<li><a href="%s">%s</a></li>' % (e(h), e(t)) for h, t in links))


def page(g, t, title, inner, story=True):
    """inner (HTML of the main content) inside template t; story: an article (date line, related links)."""
    e, r = html.escape, g.r
    menu = [("/" if i == 0 else t["path"] + slug(m), m) for i, m in enumerate(t["menu"])]
    a = " ".join('<a href="%s">%s</a>' % (e(h), e(m)) for h, m in menu)
    nav = t["nav"].format(a=a, bar=a.replace("> <", "> | <"), ul=ul(menu), site=e(t["site"]))
    side = ""
    if t["side"]:
        side = t["side"].format("<h3>%s</h3>\n%s" % (e(t["side_head"]), ul(g.links(r.randint(4, 8), t["path"]))))
    foot = t["foot"].format(e(t["foot_text"]))
    if story and t["date"]:
        inner = '<div class="meta">%s</div>\n%s' % (e(t["date"].format(d=g.date())), inner)
    if story and t["related"] is not None:
        head = "<h3>%s</h3>\n" % e(t["related"]) if t["related"] else ""
        inner += "\n%s%s" % (head, ul(g.links(r.randint(5, 15), t["path"])))
    wrap = t["wrap"].format(inner)
    body = [nav, wrap, side] if r.random() < 0.5 else [nav, side, wrap]
    return ('<!doctype html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n<title>%s%s%s</title>\n'
            '<link rel="stylesheet" href="/static/%s.css">\n<script>window.dataLayer=[];</script>\n</head>\n'
            '<body>\n%s\n%s\n</body>\n</html>\n') % (e(title), t["sep"], e(t["site"]), slug(t["site"]),
                                                      "\n".join(b for b in body if b), foot)


def bare(title, inner):
    return ('<!doctype html>\n<html>\n<head><meta charset="utf-8"><title>%s</title></head>\n<body>\n%s\n</body>\n</html>\n'
            % (html.escape(title), inner))


def article_inner(title, paras, extra=None):
    ps = ["<p>%s</p>" % html.escape(p) for p in paras]
    if extra:
        ps.insert(0 if extra[0] else len(ps), "<p>%s</p>" % html.escape(extra[1]))
    return "<h1>%s</h1>\n%s" % (html.escape(title), "\n".join(ps))


def generate(n, r, g, words=(60, 160)):
    recs, cluster, groups = [], 0, Counter()
    n_art, n_list = round(n * 0.6), round(n * 0.25)
    while len(recs) < n_art:
        t = r.randrange(len(TEMPLATES))
        title, sents = g.phrase(4, 10), g.sentences(words[0], words[1], least=3)
        k = r.randint(3, min(8, len(sents)))
        cuts = sorted(r.sample(range(1, len(sents)), k - 1))
        paras = [" ".join(sents[a:b]) for a, b in zip([0] + cuts, cuts + [len(sents)])]
        recs.append((cluster, "article", page(g, TEMPLATES[t], title, article_inner(title, paras))))
        if r.random() < 0.3:
            for c in r.sample([i for i in range(len(TEMPLATES)) if i != t], r.randint(1, 3)):
                if len(recs) >= n_art:
                    break
                extra = None
                if r.random() < 0.5:
                    extra = (r.random() < 0.5, r.choice(EXTRA).format(m=r.randint(1, 12), d=r.randint(1, 28)))
                recs.append((cluster, "copy", page(g, TEMPLATES[c], title, article_inner(title, g.edit(paras), extra))))
        cluster += 1
    for kind, budget in (("listing", n_list), ("stub", n - n_art - n_list)):
        end = len(recs) + budget
        while len(recs) < end:
            t = TEMPLATES[r.randrange(len(TEMPLATES))]
            chrome = r.random() < 0.7
            groups[kind] += 1
            if kind == "listing":
                head = " ".join(w.capitalize() for w in g.phrase(1, 4).split())
                intro = g.intro()
                shared = g.links(4, t["path"] + slug(head) + "/")
            else:
                line, shared_title = r.choice(STUBS), r.random() < 0.5
                head = r.choice(["Product unavailable", "Shop", "Item details", "Catalogue"])
            for _ in range(min(r.randint(5, 30), end - len(recs))):
                if kind == "listing":
                    k = r.randint(10, 40)
                    links = g.links(k - k // 10, t["path"] + slug(head) + "/") + r.sample(shared, k // 10)
                    r.shuffle(links)
                    title = head
                    inner = "<h1>%s</h1>\n<p>%s</p>\n%s" % (html.escape(head), html.escape(intro), ul(links))
                else:
                    links = [("/shop/item/%d" % r.randrange(10 ** 6),
                              "%s: %s %d" % (r.choice(SPEC), g.phrase(1, 2), r.randrange(1000)) if r.random() < 0.5
                              else g.phrase(3, 8)) for _ in range(r.randint(6, 20))]
                    title = head if shared_title else "%s %d" % (g.phrase(2, 4), r.randrange(100, 10_000))
                    inner = "<p>%s</p>\n%s" % (html.escape(line), ul(links))
                doc = page(g, t, title, inner, story=False) if chrome else bare(title + t["sep"] + t["site"], inner)
                recs.append((cluster, kind, doc))
                cluster += 1
    return recs, groups


def score(corpus, kept_path):
    cl, kind = {}, {}
    with open(corpus, encoding="utf-8") as f:
        for line in f:
            if line.strip():
                d = json.loads(line)
                cl[d["id"]] = d["cluster"]
                if d["kind"] != "copy":
                    kind[d["cluster"]] = d["kind"]
    with open(kept_path, encoding="utf-8") as f:
        kept = [json.loads(line)["id"] for line in f if line.strip()]
    known = [cl[k] for k in kept if k in cl]
    out = {"records": len(cl), "clusters": len(kind), "kept": len(kept), "copies_missed": len(known) - len(set(known)),
           "clusters_lost": len(kind) - len(set(known)), "unknown_ids": len(kept) - len(known), "by_kind": {}}
    for k in sorted(set(kind.values())):
        mine = [c for c in known if kind.get(c) == k]
        total = sum(1 for v in kind.values() if v == k)
        out["by_kind"][k] = {"records": sum(1 for c in cl.values() if kind.get(c) == k), "clusters": total,
                             "kept": len(mine), "copies_missed": len(mine) - len(set(mine)),
                             "clusters_lost": total - len(set(mine))}
    print(json.dumps(out, indent=1))


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("n", type=int, nargs="?")
    p.add_argument("seed", type=int, nargs="?")
    p.add_argument("out", nargs="?")
    p.add_argument("--git-dir", default="/work/.mirror/jhacksman+arxiv2025/repo")
    p.add_argument("--commit", default=natural.COMMIT)
    p.add_argument("--score", nargs=2, metavar=("CORPUS", "KEPT"))
    p.add_argument("--article-words", default="60,160", metavar="MIN,MAX",
                   help="an article's length in words (default 60,160)")
    a = p.parse_args()
    if a.score:
        return score(*a.score)
    if a.out is None:
        p.error("N SEED OUT.jsonl are required (or --score CORPUS KEPT)")
    pool = natural.sentence_pool(a.git_dir, a.commit)
    r = random.Random(a.seed)
    recs, groups = generate(a.n, r, Gen(r, pool), tuple(int(x) for x in a.article_words.split(",")))
    r.shuffle(recs)
    os.makedirs(os.path.dirname(os.path.abspath(a.out)), exist_ok=True)
    with open(a.out, "w", encoding="utf-8") as f:
        for i, (c, kind, doc) in enumerate(recs):
            f.write(json.dumps({"id": "p%06d" % i, "html": doc, "cluster": c, "kind": kind}, ensure_ascii=False) + "\n")
    kinds = Counter(k for _, k, _ in recs)
    clusters = len({c for c, _, _ in recs})
    truth = {"records": len(recs), "clusters": clusters, "planted_copies": len(recs) - clusters,
             "by_kind": dict(sorted(kinds.items())), "groups": dict(groups), "templates": len(TEMPLATES),
             "n": a.n, "seed": a.seed, "commit": a.commit, "sentence_pool": len(pool)}
    with open(os.path.splitext(a.out)[0] + ".truth.json", "w") as f:
        json.dump(truth, f, indent=1)
    print(json.dumps(truth), file=sys.stderr)


if __name__ == "__main__":
    main()
