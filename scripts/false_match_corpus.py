#!/usr/bin/env python3
"""Build the false-match (negatives) corpus for simstore's quality evaluation.

Usage:
    python3 false_match_corpus.py [--mirror DIR] [--repo OWNER/NAME=GITDIR ...]
                                  [--out DIR] [--list-sources] [--sample N]

    --mirror DIR   directory holding fetched snapshots, one per repository, as
                   DIR/<owner>+<name>/repo (bare or with .git inside) or
                   DIR/<owner>+<name>.git   (default: /work/.mirror)
    --repo R=PATH  explicit git directory for one repository (repeatable);
                   overrides --mirror for that repository
    --out DIR      output directory (default: /work/data/negatives)
    --list-sources print the source table (repo, commit, paths, licence) and exit
    --sample N     after building, print N random docs per language (seeded)

Output (in --out):
    docs.jsonl.gz      one JSON object per line:
                       {"id": "<source>:<n>", "lang": "zh"|"en", "title": str,
                        "text": str, "source": str, "category": str}
    variants.jsonl.gz  empty (the evaluator expects the file)
    pairs.jsonl.gz     empty (the evaluator expects the file)
    stats.json         counts per language / source / category and length
                       percentiles (characters) per language

Every source below is a public GitHub repository pinned to one commit; files are
read with `git --git-dir=GITDIR cat-file --batch` (equivalent to
`git show COMMIT:path`), so the result does not depend on what the snapshot's
HEAD is.  The build is deterministic: sources are processed in a fixed order,
file lists are sorted, capped sources keep the documents with the smallest
SHA-1 of (source, text), and gzip headers carry no timestamp.

Cleaning: whitespace is normalised (runs of spaces/tabs collapsed, at most one
blank line between paragraphs), HTML entities are unescaped for English, and a
document is dropped when it is shorter than 5 characters, contains U+FFFD or a
typical UTF-8-as-Latin-1 mojibake sequence, looks like markup or code, or is
not in the expected language (Chinese documents need >= 30 % CJK characters,
English ones none).  Exact duplicate texts (after whitespace normalisation) are
kept once, first source in SOURCES order wins.  Near-duplicates that exist in a
source are kept.

Only the Python 3 standard library and the `git` command are needed.
"""

import argparse
import csv
import gzip
import hashlib
import html
import io
import json
import os
import random
import re
import subprocess
import sys
import tarfile
import time
import zipfile

# ---------------------------------------------------------------------------
# Source table.  commit = the snapshot commit the corpus was built from.
# ---------------------------------------------------------------------------
REPOS = {
    "chinese-poetry/chinese-poetry": ("99ebbef7e1345c0985c44b9fd96a3f9e776f117b", "MIT"),
    "pwxcoo/chinese-xinhua": ("fe6d6c2e8baa82187f4c96bbe042e43f96c05666", "MIT"),
    "dbiir/UER-py": ("5743050cc41f0f21986c9f938db5ac1726052629", "Apache-2.0 (code); data as distributed with UER-py"),
    "649453932/Chinese-Text-Classification-Pytorch": ("6cb26819af7b646275aff8a4693676f2849e67f6", "MIT (repo); THUCNews titles, THUCTC terms"),
    "ymcui/cmrc2018": ("c0eb1b6ba219847457e6af3180da722bbeb656af", "CC-BY-SA-4.0"),
    "lancopku/Chinese-Literature-NER-RE-Dataset": ("021b3c1c6a1449634ecb2bf9c4ac17f2c5c870dd", "none stated (research data)"),
    "tennessine/corpus": ("c5ce96aca36c6a3cb4da5f0ff7d2d5fa30c32aea", "none stated; texts are public domain"),
    "v-zich/couplet-clean-dataset": ("68506b371c23cf14ef3f04521ed244fe8e11a280", "MIT"),
    "yiyepianzhounc/DMR-Dataset-1": ("100c7e29b111ad6077fa61347e5b801a7d8ae67d", "none stated (research data)"),
    "cardiffnlp/tweeteval": ("4fbd22cd78421f05b1ecdb4fc5725bc7a7bd8f66", "none stated; Twitter terms (per-task licences in README)"),
    "spoddutur/spark-ml-dashboard": ("d95a19293f4cca408ae9c889921b91287f1514ba", "none stated; 20 Newsgroups (public research set)"),
    "nltk/nltk_data": ("5db857e6f7df11eabb5e5665836db9ec8df07e28", "per corpus (see each package README); mostly research-only / public domain"),
    "cjhutto/vaderSentiment": ("44fc044cd877310ee8278a0eadf34bcd50d41d06", "MIT"),
    "taivop/joke-dataset": ("633965537d15d46adb5ab064806cddc681406d69", "none stated (scraped jokes)"),
    "harvardnlp/sent-conv-torch": ("d61ded09c99c0199d8c5bca946cd65864de2b296", "MIT (repo); TREC QC data (Li & Roth)"),
    "Shane-Neeley/CharCnn_Keras": ("3e6cdbf2f97e3cbbfa349d1abf8a951e18694372", "none stated; AG's news sample (non-commercial research)"),
    "GITenberg/The-Devil-s-Dictionary_972": ("fcea6b9736136ae4bd6bb76b398d56b7cd62e3c8", "Project Gutenberg licence (public domain text)"),
    "GITenberg/News-from-Nowhere--Or-An-Epoch-of-Rest--13-Being-Some-Chapters-from-a-Utopian-Romance_3261": ("79bd67b0ae225cd64f7bbc25c0449850b3131069", "Project Gutenberg licence (public domain text)"),
    "GITenberg/Jack-Sheppard--A-Romance_16215": ("53c2275d68a942a3c29d037179f8b89c9b094c3f", "Project Gutenberg licence (public domain text)"),
    "GITenberg/Katrine--A-Novel_14263": ("cda5284ad5c11e1928cd4c133c0726c1592bea08", "Project Gutenberg licence (public domain text)"),
    "GITenberg/The-Complete-Angler-1653_9198": ("3e96ba0d8cc824b4aaf81f9e8d08dd904996df2b", "Project Gutenberg licence (public domain text)"),
    "GITenberg/Critical-and-Historical-Essays--13-Lectures-delivered-at-Columbia-University_16351": ("462f29e0b3d7ecf8e302fe9757d0be5ab182b210", "Project Gutenberg licence (public domain text)"),
    "GITenberg/The-Log-School-House-on-the-Columbia_14881": ("e0989d1c6a67afbfa7716e87df2ab9438020d6d5", "Project Gutenberg licence (public domain text)"),
}

GUTENBERG_BOOKS = [
    ("GITenberg/The-Devil-s-Dictionary_972", "972.txt"),
    ("GITenberg/News-from-Nowhere--Or-An-Epoch-of-Rest--13-Being-Some-Chapters-from-a-Utopian-Romance_3261", "3261.txt"),
    ("GITenberg/Jack-Sheppard--A-Romance_16215", "16215.txt"),
    ("GITenberg/Katrine--A-Novel_14263", "14263.txt"),
    ("GITenberg/The-Complete-Angler-1653_9198", "9198.txt"),
    ("GITenberg/Critical-and-Historical-Essays--13-Lectures-delivered-at-Columbia-University_16351", "16351.txt"),
    ("GITenberg/The-Log-School-House-on-the-Columbia_14881", "14881.txt"),
]

# Per-source caps (documents kept after cleaning and de-duplication).  They
# keep every source under ~30 % of its language.
CAPS = {
    "chinese-poetry": 34000,
    "weibo-smp2020": 34000,
    "douban-book-review": 30000,
    "tweeteval": 34000,
}

# ---------------------------------------------------------------------------
# git access
# ---------------------------------------------------------------------------


class Repo:
    """Reads blobs of one pinned commit through a persistent cat-file process."""

    def __init__(self, name, gitdir, commit):
        self.name, self.gitdir, self.commit = name, gitdir, commit
        self.proc = subprocess.Popen(
            ["git", "--git-dir=" + gitdir, "cat-file", "--batch"],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE)
        self.missing = []

    def read(self, path):
        """Bytes of COMMIT:path, or None when the blob is absent (LFS, >4 MiB)."""
        self.proc.stdin.write(("%s:%s\n" % (self.commit, path)).encode("utf-8"))
        self.proc.stdin.flush()
        header = self.proc.stdout.readline().decode("utf-8", "replace").split()
        if len(header) != 3 or header[1] != "blob":
            self.missing.append(path)
            return None
        data = self.proc.stdout.read(int(header[2]))
        self.proc.stdout.read(1)
        return data

    def text(self, path, encoding="utf-8"):
        data = self.read(path)
        if data is None:
            return None
        return data.decode(encoding, "replace").lstrip("\ufeff")

    def ls(self, prefix=""):
        """Sorted file paths under prefix at the pinned commit."""
        out = subprocess.run(
            ["git", "--git-dir=" + self.gitdir, "ls-tree", "-r", "-z", "--name-only",
             self.commit, "--", prefix] if prefix else
            ["git", "--git-dir=" + self.gitdir, "ls-tree", "-r", "-z", "--name-only", self.commit],
            check=True, stdout=subprocess.PIPE).stdout
        return sorted(p.decode("utf-8") for p in out.split(b"\0") if p)

    def close(self):
        self.proc.stdin.close()
        self.proc.wait()


def find_gitdir(mirror, name, overrides):
    if name in overrides:
        return overrides[name]
    base = os.path.join(mirror, name.replace("/", "+"))
    for cand in (os.path.join(base, "repo", ".git"), os.path.join(base, "repo"), base + ".git", base):
        if os.path.isfile(os.path.join(cand, "HEAD")):
            return cand
    return None


# ---------------------------------------------------------------------------
# Text helpers
# ---------------------------------------------------------------------------
CJK = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\U00020000-\U0002ffff]")
MOJIBAKE = re.compile(r"Ã[\u0080-\u00bf]|â€|Ã©|Â[\u00a0-\u00bf]|ï»¿|锟斤拷|�")
TAG = re.compile(r"</?[A-Za-z][A-Za-z0-9]*(\s[^<>]*)?/?>")
CODE_CHARS = re.compile(r"[{};=<>\\|^~$]")
LATIN = re.compile(r"[A-Za-z]")


CTRL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")
WIKI_CONV = re.compile(r"-\{(.*?)\}-")


def wiki_conv(m):
    """Resolve MediaWiki language-conversion markup -{zh-hans:..;zh-hant:..}-."""
    body = m.group(1)
    variants = dict(v.split(":", 1) for v in body.split(";") if ":" in v)
    if not variants:
        return body
    for k in ("zh-cn", "zh-hans", "zh"):
        if k in variants:
            return variants[k].strip()
    return next(iter(variants.values())).strip()


def norm_ws(text):
    text = CTRL.sub("", text)
    text = text.replace("\r\n", "\n").replace("\r", "\n").replace("\u3000", " ")
    text = text.replace("\u00a0", " ").replace("\u200b", "")
    lines = [re.sub(r"[ \t\f\v]+", " ", l).strip() for l in text.split("\n")]
    text = "\n".join(lines)
    text = re.sub(r"\n{3,}", "\n\n", text)
    return text.strip()


def dedup_key(text):
    return re.sub(r"\s+", " ", text).strip()


def looks_bad(text, lang):
    """Reason string when the text is garbage for our purpose, else None."""
    if len(text) < 5:
        return "short"
    if MOJIBAKE.search(text):
        return "mojibake"
    if len(TAG.findall(text)) >= 2:
        return "markup"
    chars = [c for c in text if not c.isspace()]
    if not chars:
        return "empty"
    code = len(CODE_CHARS.findall(text)) / len(chars)
    if code > 0.06 and len(chars) > 40:
        return "code"
    long_tokens = sum(1 for l in text.split("\n") if len(l) >= 50 and " " not in l and not CJK.search(l))
    if long_tokens >= 3:
        return "binary"
    cjk = len(CJK.findall(text))
    if lang == "zh":
        if cjk / len(chars) < 0.3:
            return "lang"
    else:
        if cjk:
            return "lang"
        if len(LATIN.findall(text)) / len(chars) < 0.5:
            return "lang"
    return None


SENTENCE = re.compile(r"[^.!?;。！？；]*(?:[.!?;。！？；]+[\"'”’」』)）]*\s*|$)")


def split_long(para, max_chars):
    """Split one over-long paragraph at sentence ends into pieces <= max_chars."""
    if len(para) <= max_chars:
        return [para]
    pieces, cur = [], ""
    for sent in (x for x in SENTENCE.findall(para) if x):
        if cur and len(cur) + len(sent) > max_chars:
            pieces.append(cur.strip())
            cur = ""
        cur += sent
    if cur.strip():
        pieces.append(cur.strip())
    return pieces


def group_paragraphs(paras, min_chars, max_chars):
    """Join consecutive paragraphs into passages of min_chars..~max_chars."""
    return group_varied(paras, [(min_chars, max_chars)])


def group_varied(paras, sizes):
    """Like group_paragraphs, but passage i uses size range sizes[i % len(sizes)]."""
    out, cur, size = [], [], 0
    lo, hi = sizes[0]
    for para in paras:
        for p in split_long(para, hi):
            if cur and size + len(p) > hi:
                out.append(cur)
                cur, size = [], 0
                lo, hi = sizes[len(out) % len(sizes)]
            cur.append(p)
            size += len(p)
            if size >= lo:
                out.append(cur)
                cur, size = [], 0
                lo, hi = sizes[len(out) % len(sizes)]
    if cur:
        if out and size < lo // 3:
            out[-1].extend(cur)
        else:
            out.append(cur)
    return out


VARIED = [(300, 900), (900, 2500), (2500, 6000)]
MAX_DOC = 10000


def doc(title, text, category):
    return {"title": title or "", "text": text, "category": category}


# ---------------------------------------------------------------------------
# Chinese sources
# ---------------------------------------------------------------------------


def src_chinese_poetry(r):
    dirs = [("全唐诗/poet.tang.", "poem"), ("全唐诗/poet.song.", "poem"), ("宋词/ci.song.", "ci"),
            ("元曲/yuanqu.json", "qu"), ("诗经/shijing.json", "classic_poem"), ("楚辞/chuci.json", "classic_poem"),
            ("曹操诗集/caocao.json", "poem"), ("纳兰性德/纳兰性德诗集.json", "ci"),
            ("五代诗词/huajianji/huajianji-", "ci"), ("五代诗词/nantang/", "ci")]
    paths = r.ls()
    for prefix, cat in dirs:
        for p in paths:
            if not p.startswith(prefix) or not p.endswith(".json") or "/error/" in p or "preface" in p:
                continue
            data = json.loads(r.text(p))
            for item in data if isinstance(data, list) else [data]:
                lines = item.get("paragraphs") or item.get("content") or item.get("para") or []
                if isinstance(lines, str):
                    lines = [lines]
                title = item.get("title") or item.get("rhythmic") or ""
                yield doc(title, "\n".join(lines), cat)
    # prose classics: one saying / section per document
    for p, cat in [("论语/lunyu.json", "classic_prose"), ("四书五经/mengzi.json", "classic_prose"),
                   ("四书五经/daxue.json", "classic_prose"), ("四书五经/zhongyong.json", "classic_prose")]:
        data = json.loads(r.text(p))
        for item in data if isinstance(data, list) else [data]:
            for para in item.get("paragraphs", []):
                yield doc(item.get("chapter", ""), para, cat)
    for item in json.loads(r.text("幽梦影/youmengying.json")):
        yield doc("幽梦影", item["content"], "classic_prose")


def src_xiehouyu(r):
    for item in json.loads(r.text("data/xiehouyu.json")):
        yield doc("", "%s——%s" % (item["riddle"].strip(), item["answer"].strip()), "xiehouyu")


def tsv_text_a(r, path):
    t = r.text(path)
    if t is None:
        return
    rows = t.split("\n")
    cols = rows[0].split("\t")
    i = cols.index("text_a")
    for row in rows[1:]:
        parts = row.split("\t")
        if len(parts) > i:
            yield parts[i]


def src_book_review(r):
    for split in ("train", "dev", "test"):
        for t in tsv_text_a(r, "datasets/book_review/%s.tsv" % split):
            yield doc("", t, "review")


def src_smp2020(r):
    for sub in ("usual", "virus"):
        for split in ("train", "dev", "test"):
            for t in tsv_text_a(r, "datasets/smp2020-ewect/%s/%s.tsv" % (sub, split)):
                yield doc("", t, "weibo")


def src_msra(r):
    for split in ("dev", "test"):
        for t in tsv_text_a(r, "datasets/msra_ner/%s.tsv" % split):
            yield doc("", t.replace(" ", ""), "news_sentence")


def src_news_commentary(lang):
    def gen(r):
        for line in r.text("corpora/news-commentary-v13-en-zh_sampled.txt").split("\n"):
            parts = line.split("\t")
            if len(parts) == 2:
                yield doc("", parts[0] if lang == "en" else parts[1], "commentary")
    return gen


def src_thucnews_titles(r):
    for split in ("dev", "test"):
        for line in r.text("THUCNews/data/%s.txt" % split).split("\n"):
            yield doc("", line.rsplit("\t", 1)[0], "news_headline")


def src_cmrc(r):
    seen = set()
    for path in ("squad-style-data/cmrc2018_trial.json", "squad-style-data/cmrc2018_dev.json"):
        for art in json.loads(r.text(path))["data"]:
            for para in art["paragraphs"]:
                ctx = para["context"]
                if ctx not in seen:
                    seen.add(ctx)
                    yield doc(art.get("title", ""), WIKI_CONV.sub(wiki_conv, ctx), "wiki")
                for qa in para["qas"]:
                    yield doc("", qa["question"], "question")


def src_literature(r):
    for p in r.ls("relation_extraction"):
        if p.endswith(".txt"):
            lines = [l.strip() for l in r.text(p).split("\n")]
            # hard-wrapped prose: a line shorter than the wrap width ends a paragraph
            paras, cur = [], ""
            width = max([len(l) for l in lines] or [0])
            for l in lines:
                cur += l
                if l and len(l) < width - 2:
                    paras.append(cur)
                    cur = ""
            if cur:
                paras.append(cur)
            yield doc("", "\n".join(x for x in paras if x), "essay")


def src_novels(r):
    for name in ("三国演义.txt", "水浒传.txt", "红楼梦.txt", "西游记.txt"):
        book = name[:-4]
        chapter, paras = book, []
        chunks = []
        for line in r.text(name).split("\n"):
            line = line.strip().replace("\t", "")
            if not line:
                continue
            if re.match(r"^(第[一二三四五六七八九十百零〇]+回|楔子)", line) and len(line) < 60:
                chunks.append((chapter, paras))
                chapter, paras = line, []
                continue
            paras.append(line.replace("．", "。"))
        chunks.append((chapter, paras))
        for chapter, paras in chunks:
            for group in group_varied(paras, VARIED):
                yield doc("%s %s" % (book, chapter) if chapter != book else book, "\n".join(group), "novel")


def src_couplets(r):
    ins = r.text("couplets/test/in.txt").split("\n")
    outs = r.text("couplets/test/out.txt").split("\n")
    for a, b in zip(ins, outs):
        a, b = a.replace(" ", ""), b.replace(" ", "")
        if a and b:
            yield doc("", "%s\n%s" % (a, b), "couplet")


def src_douban_dmr(r):
    data = json.loads(r.text("reviews.json"))
    for key in sorted(data, key=lambda k: int(re.sub(r"\D", "", k) or 0)):
        rev = data[key]
        yield doc("", rev.get("text", ""), "review")
        ur = rev.get("user_reviews") or {}
        for k2 in sorted(ur, key=lambda k: int(re.sub(r"\D", "", k) or 0)):
            yield doc("", ur[k2].get("text", ""), "review")


# ---------------------------------------------------------------------------
# English sources
# ---------------------------------------------------------------------------


def src_tweeteval(r):
    for p in r.ls("datasets"):
        if p.endswith("_text.txt"):
            t = r.text(p)
            if t is None:
                continue
            for line in t.split("\n"):
                yield doc("", line.replace("\\n", "\n"), "tweet")


def src_20ng(r):
    for p in r.ls("data"):
        raw = r.text(p, "latin-1")
        if raw is None:
            continue
        body = raw.replace("\t", "\n")  # this copy stores newlines as tabs
        head, _, rest = body.partition("\n\n")
        m = re.search(r"^Subject:\s*(.*)$", head, re.M)
        title = m.group(1).strip() if m else ""
        group = p.split("/")[-2]
        rest = re.sub(r"-----BEGIN PGP SIGNATURE-----.*?-----END PGP SIGNATURE-----", "", rest, flags=re.S)
        rest = rest.replace("-----BEGIN PGP SIGNED MESSAGE-----", "")
        if len(rest) > 20000:
            continue
        yield doc(title, rest, "newsgroup:" + group)


def nltk_zip(r, name):
    return zipfile.ZipFile(io.BytesIO(r.read("packages/corpora/%s.zip" % name)))


def src_nltk_abc(r):
    z = nltk_zip(r, "abc")
    for n in ("abc/rural.txt", "abc/science.txt"):
        lines = [l.strip() for l in z.read(n).decode("latin-1").split("\n") if l.strip()]
        for g in group_paragraphs(lines, 500, 1200):
            yield doc("", " ".join(g), "news_" + n[4:-4])


def src_nltk_webtext(r):
    z = nltk_zip(r, "webtext")
    for n, cat in (("firefox", "bug_title"), ("singles", "personal_ad"), ("wine", "review")):
        for line in z.read("webtext/%s.txt" % n).decode("latin-1").split("\n"):
            yield doc("", line, cat)
    for block in z.read("webtext/overheard.txt").decode("latin-1").replace("\r", "").split("\n\n"):
        yield doc("", block, "dialogue")


def src_nltk_pros_cons(r):
    z = nltk_zip(r, "pros_cons")
    for n in ("IntegratedPros", "IntegratedCons"):
        for m in re.finditer(r"<(Pros|Cons)>(.*?)</\1>", z.read("pros_cons/%s.txt" % n).decode("latin-1"), re.S):
            yield doc("", m.group(2), "review_" + m.group(1).lower())


def src_nltk_speeches(r):
    for corpus in ("state_union", "inaugural"):
        z = nltk_zip(r, corpus)
        for n in sorted(z.namelist()):
            if not n.endswith(".txt"):
                continue
            t = z.read(n).decode("latin-1").replace("\r", "")
            paras = [re.sub(r"\s*\n\s*", " ", p).strip() for p in t.split("\n\n") if p.strip()]
            title = n.split("/")[-1][:-4]
            for g in group_varied(paras, VARIED):
                yield doc(title, "\n".join(g), "speech")


def src_nltk_product_reviews(r):
    for corpus in ("product_reviews_1", "product_reviews_2"):
        z = nltk_zip(r, corpus)
        for n in sorted(z.namelist()):
            if not n.endswith(".txt") or "README" in n.upper():
                continue
            title, sents = "", []
            for line in z.read(n).decode("latin-1").split("\n"):
                if line.startswith("[t]"):
                    if sents:
                        yield doc(title, " ".join(sents), "review")
                    title, sents = line[3:].strip(), []
                elif "##" in line and not line.startswith("*"):
                    s = line.split("##", 1)[1].strip()
                    if s:
                        sents.append(s)
            if sents:
                yield doc(title, " ".join(sents), "review")


def src_nltk_movie_reviews(r):
    z = nltk_zip(r, "movie_reviews")
    for n in sorted(z.namelist()):
        if n.endswith(".txt"):
            yield doc("", z.read(n).decode("latin-1"), "review_long")


def src_nltk_nps_chat(r):
    z = nltk_zip(r, "nps_chat")
    for n in sorted(z.namelist()):
        if n.endswith(".xml"):
            t = z.read(n).decode("latin-1")
            for m in re.finditer(r"<Post [^>]*>(.*?)<terminals>", t, re.S):
                txt = html.unescape(m.group(1).strip())
                if "User" in txt and re.search(r"\d+User\d+", txt):
                    continue
                yield doc("", txt, "chat")


def vader_tar(r):
    return tarfile.open(fileobj=io.BytesIO(r.read("additional_resources/hutto_ICWSM_2014.tar.gz")))


def vader_rows(tar, name):
    t = tar.extractfile("hutto_ICWSM_2014/%s.txt" % name).read().decode("utf-8", "replace")
    for line in t.split("\n"):
        parts = line.rstrip("\r").split("\t", 2)
        if len(parts) == 3:
            yield parts[0], parts[2]


def src_vader_tweets(r):
    for _, t in vader_rows(vader_tar(r), "tweets_GroundTruth"):
        yield doc("", t, "tweet")


def src_vader_movie(r):
    for _, t in vader_rows(vader_tar(r), "movieReviewSnippets_GroundTruth"):
        yield doc("", t, "review_snippet")


def src_vader_nyt(r):
    cur_id, sents = None, []
    for rid, t in vader_rows(vader_tar(r), "nytEditorialSnippets_GroundTruth"):
        d = rid.split("_")[0]
        if d != cur_id and sents:
            yield doc("", " ".join(sents), "news_editorial")
            sents = []
        cur_id = d
        sents.append(t.strip())
    if sents:
        yield doc("", " ".join(sents), "news_editorial")


def src_jokes(r):
    for item in json.loads(r.text("stupidstuff.json")):
        yield doc("", item.get("body", ""), "joke")


def src_trec(r):
    for path in ("data/raw/TREC.train", "data/raw/TREC.test"):
        for line in r.text(path, "latin-1").split("\n"):
            parts = line.split(" ", 1)
            if len(parts) == 2:
                q = re.sub(r" ([?.,!;:'])", r"\1", parts[1].strip()).replace(" 's", "'s")
                yield doc("", q, "question")


def src_ag_news(r):
    for path in ("data/ag_news_csv/train.csv", "data/ag_news_csv/test.csv"):
        for row in csv.reader(io.StringIO(r.text(path))):
            if len(row) == 3:
                desc = re.sub(r"<br\s*/?>", " ", row[2].replace("\\", " "), flags=re.I)
                yield doc(row[1], row[1] + "\n" + desc, "news")


def src_gutenberg(r):
    path = dict(GUTENBERG_BOOKS)[r.name]
    t = r.text(path, "latin-1" if not path.endswith("-8.txt") else "latin-1").replace("\r", "")
    start = re.search(r"^\*\*\* ?START OF.*$", t, re.M)
    end = re.search(r"^\*\*\* ?END OF.*$", t, re.M)
    t = t[start.end() if start else 0: end.start() if end else len(t)]
    m = re.search(r"^Title: (.*)$", r.text(path, "latin-1"), re.M)
    title = m.group(1).strip() if m else r.name.split("/")[1]
    paras = [re.sub(r"\s*\n\s*", " ", p).strip() for p in t.split("\n\n")]
    paras = [p for p in paras if p and len(p) > 1
             and not re.match(r"^(CHAPTER|Chapter|BOOK|PART|Produced by|Transcriber|\[Transcriber)", p)]
    for g in group_varied(paras, VARIED):
        yield doc(title, "\n".join(g), "book")


# name, lang, repo, paths (documentation), generator
SOURCES = [
    ("chinese-poetry", "zh", "chinese-poetry/chinese-poetry",
     "全唐诗/poet.{tang,song}.*.json, 宋词/ci.song.*.json, 元曲/yuanqu.json, 诗经, 楚辞, 曹操诗集, 纳兰性德, 五代诗词, 论语, 四书五经, 幽梦影",
     src_chinese_poetry),
    ("xinhua-xiehouyu", "zh", "pwxcoo/chinese-xinhua", "data/xiehouyu.json", src_xiehouyu),
    ("douban-book-review", "zh", "dbiir/UER-py", "datasets/book_review/{train,dev,test}.tsv", src_book_review),
    ("weibo-smp2020", "zh", "dbiir/UER-py", "datasets/smp2020-ewect/{usual,virus}/{train,dev,test}.tsv", src_smp2020),
    ("msra-news-sentences", "zh", "dbiir/UER-py", "datasets/msra_ner/{dev,test}.tsv (characters re-joined)", src_msra),
    ("news-commentary-zh", "zh", "dbiir/UER-py", "corpora/news-commentary-v13-en-zh_sampled.txt (zh column)", src_news_commentary("zh")),
    ("thucnews-titles", "zh", "649453932/Chinese-Text-Classification-Pytorch", "THUCNews/data/{dev,test}.txt", src_thucnews_titles),
    ("cmrc2018-wiki", "zh", "ymcui/cmrc2018", "squad-style-data/cmrc2018_{trial,dev}.json (contexts + questions)", src_cmrc),
    ("chinese-literature-essays", "zh", "lancopku/Chinese-Literature-NER-RE-Dataset", "relation_extraction/*/*.txt", src_literature),
    ("classic-novels", "zh", "tennessine/corpus", "三国演义.txt, 水浒传.txt, 红楼梦.txt, 西游记.txt", src_novels),
    ("couplets", "zh", "v-zich/couplet-clean-dataset", "couplets/test/{in,out}.txt", src_couplets),
    ("douban-movie-dmr", "zh", "yiyepianzhounc/DMR-Dataset-1", "reviews.json (reviews + users' past reviews)", src_douban_dmr),
    ("tweeteval", "en", "cardiffnlp/tweeteval", "datasets/**/*_text.txt", src_tweeteval),
    ("20newsgroups", "en", "spoddutur/spark-ml-dashboard", "data/20news-bydate-{train,test}/*/* (headers dropped)", src_20ng),
    ("nltk-abc-news", "en", "nltk/nltk_data", "packages/corpora/abc.zip", src_nltk_abc),
    ("nltk-webtext", "en", "nltk/nltk_data", "packages/corpora/webtext.zip (firefox, singles, wine, overheard)", src_nltk_webtext),
    ("nltk-pros-cons", "en", "nltk/nltk_data", "packages/corpora/pros_cons.zip", src_nltk_pros_cons),
    ("nltk-speeches", "en", "nltk/nltk_data", "packages/corpora/{state_union,inaugural}.zip", src_nltk_speeches),
    ("nltk-product-reviews", "en", "nltk/nltk_data", "packages/corpora/product_reviews_{1,2}.zip", src_nltk_product_reviews),
    ("nltk-movie-reviews", "en", "nltk/nltk_data", "packages/corpora/movie_reviews.zip", src_nltk_movie_reviews),
    ("nltk-nps-chat", "en", "nltk/nltk_data", "packages/corpora/nps_chat.zip", src_nltk_nps_chat),
    ("vader-tweets", "en", "cjhutto/vaderSentiment", "additional_resources/hutto_ICWSM_2014.tar.gz: tweets_GroundTruth.txt", src_vader_tweets),
    ("vader-movie-snippets", "en", "cjhutto/vaderSentiment", "additional_resources/hutto_ICWSM_2014.tar.gz: movieReviewSnippets_GroundTruth.txt", src_vader_movie),
    ("vader-nyt-editorials", "en", "cjhutto/vaderSentiment", "additional_resources/hutto_ICWSM_2014.tar.gz: nytEditorialSnippets_GroundTruth.txt", src_vader_nyt),
    ("jokes-stupidstuff", "en", "taivop/joke-dataset", "stupidstuff.json", src_jokes),
    ("trec-questions", "en", "harvardnlp/sent-conv-torch", "data/raw/TREC.{train,test}", src_trec),
    ("ag-news-sample", "en", "Shane-Neeley/CharCnn_Keras", "data/ag_news_csv/{train,test}.csv", src_ag_news),
    ("news-commentary-en", "en", "dbiir/UER-py", "corpora/news-commentary-v13-en-zh_sampled.txt (en column)", src_news_commentary("en")),
] + [("gutenberg", "en", repo, path, src_gutenberg) for repo, path in GUTENBERG_BOOKS]


# ---------------------------------------------------------------------------
# Build
# ---------------------------------------------------------------------------


def split_docs(docs):
    """Documents longer than MAX_DOC characters become several passages."""
    for d in docs:
        if len(d["text"]) <= MAX_DOC:
            yield d
            continue
        paras = [p for p in d["text"].replace("\r", "").split("\n") if p.strip()]
        for g in group_paragraphs(paras, 3000, 6000):
            yield dict(d, text="\n".join(g))


def sha(source, text):
    return hashlib.sha1((source + "\0" + text).encode("utf-8")).hexdigest()


def percentiles(values):
    if not values:
        return {}
    v = sorted(values)
    out = {}
    for p in (1, 5, 10, 25, 50, 75, 90, 95, 99):
        out["p%d" % p] = v[min(len(v) - 1, int(round(p / 100 * (len(v) - 1))))]
    out["min"], out["max"] = v[0], v[-1]
    out["mean"] = round(sum(v) / len(v), 1)
    out["le_100"] = sum(1 for x in v if x <= 100)
    out["101_500"] = sum(1 for x in v if 100 < x <= 500)
    out["501_2000"] = sum(1 for x in v if 500 < x <= 2000)
    out["gt_2000"] = sum(1 for x in v if x > 2000)
    return out


def build(args):
    overrides = dict(x.split("=", 1) for x in args.repo)
    repos, t0 = {}, time.time()
    seen = set()
    per_source = {}  # source -> list of docs (after dedup, before cap)
    dropped = {}
    order = []
    for name, lang, repo_name, _paths, gen in SOURCES:
        if repo_name not in repos:
            gitdir = find_gitdir(args.mirror, repo_name, overrides)
            if gitdir is None:
                sys.exit("missing snapshot for %s (fetch it or pass --repo %s=GITDIR)" % (repo_name, repo_name))
            repos[repo_name] = Repo(repo_name, gitdir, REPOS[repo_name][0])
        r = repos[repo_name]
        if name not in per_source:
            per_source[name] = []
            order.append((name, lang))
        n_in = 0
        for d in split_docs(gen(r)):
            n_in += 1
            text = d["text"]
            text = norm_ws(html.unescape(html.unescape(text)))
            reason = looks_bad(text, lang)
            if reason is None:
                key = dedup_key(text)
                if key in seen:
                    reason = "duplicate"
                else:
                    seen.add(key)
            if reason:
                dropped.setdefault(name, {}).setdefault(reason, 0)
                dropped[name][reason] += 1
                continue
            title = norm_ws(html.unescape(d["title"])).replace("\n", " ")
            per_source[name].append({"lang": lang, "title": title, "text": text,
                                     "source": name, "category": d["category"]})
        print("%-28s %-3s read %7d kept %7d  (%s)" % (name, lang, n_in, len(per_source[name]), repo_name),
              file=sys.stderr)
    for r in repos.values():
        if r.missing:
            print("note: %s: %d paths absent from snapshot: %s" % (r.name, len(r.missing), r.missing[:5]),
                  file=sys.stderr)
        r.close()

    docs = []
    for name, lang in order:
        items = per_source[name]
        cap = CAPS.get(name)
        if cap and len(items) > cap:
            keep = set(sorted(range(len(items)), key=lambda i: sha(name, items[i]["text"]))[:cap])
            dropped.setdefault(name, {})["cap"] = len(items) - cap
            items = [d for i, d in enumerate(items) if i in keep]
        for i, d in enumerate(items):
            docs.append(dict({"id": "%s:%d" % (name, i)}, **d))

    os.makedirs(args.out, exist_ok=True)
    with open(os.path.join(args.out, "docs.jsonl.gz"), "wb") as raw:
        with gzip.GzipFile(filename="", mode="wb", fileobj=raw, mtime=0) as gz:
            for d in docs:
                gz.write((json.dumps(d, ensure_ascii=False) + "\n").encode("utf-8"))
    for empty in ("variants.jsonl.gz", "pairs.jsonl.gz"):
        with open(os.path.join(args.out, empty), "wb") as raw:
            with gzip.GzipFile(filename="", mode="wb", fileobj=raw, mtime=0):
                pass

    stats = {"total": len(docs), "per_lang": {}, "per_source": {}, "per_category": {},
             "length_chars": {}, "dropped": dropped}
    for lang in ("zh", "en"):
        ld = [d for d in docs if d["lang"] == lang]
        stats["per_lang"][lang] = len(ld)
        stats["length_chars"][lang] = percentiles([len(d["text"]) for d in ld])
    for d in docs:
        key = "%s/%s" % (d["lang"], d["source"])
        stats["per_source"][key] = stats["per_source"].get(key, 0) + 1
        ckey = "%s/%s" % (d["lang"], d["category"].split(":")[0])
        stats["per_category"][ckey] = stats["per_category"].get(ckey, 0) + 1
    stats["source_share"] = {k: round(v / stats["per_lang"][k.split("/")[0]], 3)
                             for k, v in stats["per_source"].items()}
    stats["build_seconds"] = round(time.time() - t0, 1)
    with open(os.path.join(args.out, "stats.json"), "w", encoding="utf-8") as f:
        json.dump(stats, f, ensure_ascii=False, indent=1, sort_keys=True)
    print("wrote %d docs (%s) in %.1fs" % (len(docs), stats["per_lang"], time.time() - t0), file=sys.stderr)
    return docs


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--mirror", default="/work/.mirror")
    ap.add_argument("--repo", action="append", default=[])
    ap.add_argument("--out", default="/work/data/negatives")
    ap.add_argument("--list-sources", action="store_true")
    ap.add_argument("--sample", type=int, default=0)
    args = ap.parse_args()
    if args.list_sources:
        for name, lang, repo, paths, _ in SOURCES:
            commit, lic = REPOS[repo]
            print("\t".join([name, lang, repo, commit, paths, lic]))
        return
    docs = build(args)
    if args.sample:
        rnd = random.Random(20261128)
        for lang in ("zh", "en"):
            ld = [d for d in docs if d["lang"] == lang]
            for d in rnd.sample(ld, min(args.sample, len(ld))):
                print(json.dumps(dict(d, text=d["text"][:300]), ensure_ascii=False))


if __name__ == "__main__":
    main()
