#!/usr/bin/env python3
"""Writes a near-duplicate corpus of natural English text (JSONL and Parquet shards).

    scripts/gen_dedup_corpus_natural.py N SEED OUTDIR [--no-jsonl] [--shard-rows 100000]
        [--git-dir /work/.mirror/jhacksman+arxiv2025/repo]

Source text: the Project Gutenberg plain-text books of the public GitHub repository
jhacksman/arxiv2025, commit 8782bb4e8a336d6319ab47696bc17968ed7e54f4, every
library/content/literature/**/*.txt whose header says "Language: English" (about 85 books:
Moby Dick, Middlemarch, War and Peace, Leviathan, ...). Get it with the `fetch` tool
(github:jhacksman/arxiv2025) or `git clone`; the files are read with
`git --git-dir=GIT_DIR show COMMIT:PATH`, so the corpus is rebuilt from the fetched source
and never stored in this repository. The text between the "*** START OF" and "*** END OF"
markers is unwrapped (a blob missing from a partial snapshot is skipped, with a note), split into sentences, and each distinct sentence of 6-60 words is kept
(~400k sentences; the pool is cached in /tmp/natural-sentences-COMMIT.txt).

Planting scheme, as scripts/gen_dedup_corpus.py: an original is 60-160 words made of real
sentences drawn at random from the pool (so originals do not share passages); 30 % of the
originals get 1-4 near copies; each copy changes about 3 % of the words (replaced by a word
of the books, dropped, or a word inserted) and half of them also get a short boilerplate
line ("Share this article.", a date) before or after. Records come in blocks of 10,000
shuffled together. "cluster" is the ground truth (the original's number): a perfect
keep-first dedup keeps one record per cluster value.

Columns: url (https://example.com/doc/N, unique), content, cluster (int64), ts (an ISO 8601
UTC timestamp string, random in 2020-2026). Writes OUTDIR/corpus.jsonl (unless --no-jsonl)
and OUTDIR/parquet/part-00000.parquet ... (pyarrow, snappy, --shard-rows rows each).
Deterministic for a given N, SEED and source commit.
"""
import argparse
import json
import os
import random
import re
import subprocess
import sys
import time

COMMIT = "8782bb4e8a336d6319ab47696bc17968ed7e54f4"
PREFIX = "library/content/literature/"
BOILER = ["Share this article.", "Read more:", "Subscribe to our newsletter."]


def book_text(git_dir, commit, path):
    done = subprocess.run(["git", "--git-dir", git_dir, "show", "%s:%s" % (commit, path)], capture_output=True)
    if done.returncode != 0:  # a blob the snapshot lacks (its largest files)
        print("skipped (not in the snapshot): %s" % path, file=sys.stderr)
        return None
    raw = done.stdout.decode("utf-8", "replace")
    head = raw[:3000]
    if not re.search(r"^Language:\s*English", head, re.M):
        return None
    start = re.search(r"^\*\*\* ?START OF.*$", raw, re.M)
    end = re.search(r"^\*\*\* ?END OF", raw, re.M)
    return raw[start.end() if start else 0: end.start() if end else len(raw)]


def sentence_pool(git_dir, commit):
    cache = "/tmp/natural-sentences-%s.txt" % commit[:12]
    if os.path.exists(cache):
        with open(cache, encoding="utf-8") as f:
            return f.read().split("\n")
    paths = subprocess.run(["git", "--git-dir", git_dir, "ls-tree", "-r", "--name-only", commit, PREFIX],
                           check=True, capture_output=True, text=True).stdout.split()
    seen, pool = set(), []
    for path in sorted(p for p in paths if p.endswith(".txt")):
        text = book_text(git_dir, commit, path)
        if text is None:
            continue
        for para in re.split(r"\n\s*\n", text):
            para = " ".join(para.split())
            for s in re.split(r"(?<=[.!?])\s+(?=[\"'‘“(]?[A-Z])", para):
                n = len(s.split())
                if 6 <= n <= 60 and s[-1] in ".!?\"'’”" and not s.isupper() and s not in seen:
                    seen.add(s)
                    pool.append(s)
    with open(cache + ".tmp", "w", encoding="utf-8") as f:
        f.write("\n".join(pool))
    os.replace(cache + ".tmp", cache)
    return pool


def original(r, pool):
    target = r.randint(60, 160)
    out, n = [], 0
    while n < target:
        s = pool[r.randrange(len(pool))]
        out.append(s)
        n += s.count(" ") + 1
    return " ".join(out)


def near_copy(r, text, words_of_books):
    words = text.split(" ")
    for _ in range(max(1, len(words) * 3 // 100)):
        op, i = r.random(), r.randrange(len(words))
        if op < 0.5:
            words[i] = r.choice(words_of_books)
        elif op < 0.75 and len(words) > 10:
            del words[i]
        else:
            words.insert(i, r.choice(words_of_books))
    text = " ".join(words)
    if r.random() < 0.5:
        extra = r.choice(BOILER + ["Posted on 2024-%02d-%02d." % (r.randint(1, 12), r.randint(1, 28))])
        text = extra + " " + text if r.random() < 0.5 else text + " " + extra
    return text


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("n", type=int)
    p.add_argument("seed", type=int)
    p.add_argument("outdir")
    p.add_argument("--git-dir", default="/work/.mirror/jhacksman+arxiv2025/repo")
    p.add_argument("--commit", default=COMMIT)
    p.add_argument("--shard-rows", type=int, default=100_000)
    p.add_argument("--no-jsonl", action="store_true")
    a = p.parse_args()
    pool = sentence_pool(a.git_dir, a.commit)
    r = random.Random(a.seed)
    words_of_books = [w for s in r.sample(pool, min(len(pool), 50_000)) for w in s.split()]
    write_corpus(a, r, len(pool), lambda: original(r, pool), lambda t: near_copy(r, t, words_of_books))


def write_corpus(a, r, pool_size, make_original, make_copy):
    """Writes a.n records (originals from make_original(), 30 % with 1-4 copies by
    make_copy(text)) to a.outdir: corpus.jsonl unless a.no_jsonl, and parquet/ shards of
    a.shard_rows rows; records in shuffled blocks of 10,000. Shared with
    gen_dedup_corpus_natural_zh.py."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    os.makedirs(os.path.join(a.outdir, "parquet"), exist_ok=True)
    jsonl = None if a.no_jsonl else open(os.path.join(a.outdir, "corpus.jsonl"), "w", encoding="utf-8")
    schema = pa.schema([("url", pa.string()), ("content", pa.string()), ("cluster", pa.int64()), ("ts", pa.string())])
    cols = {"url": [], "content": [], "cluster": [], "ts": []}
    shard = 0

    def flush():
        nonlocal shard
        if cols["url"]:
            pq.write_table(pa.table(cols, schema=schema),
                           os.path.join(a.outdir, "parquet", "part-%05d.parquet" % shard), compression="snappy")
            shard += 1
            for v in cols.values():
                v.clear()

    written, cluster, block = 0, 0, []
    while written < a.n:
        text = make_original()
        copies = r.randint(1, 4) if r.random() < 0.3 else 0
        for c in range(copies + 1):
            block.append((cluster, text if c == 0 else make_copy(text)))
        cluster += 1
        if len(block) >= 10_000 or written + len(block) >= a.n:
            block = block[: a.n - written]
            r.shuffle(block)
            for cl, t in block:
                secs = r.randrange(1_577_836_800, 1_798_761_600)  # 2020-01-01 .. 2027-01-01
                ts = "%04d-%02d-%02dT%02d:%02d:%02dZ" % time.gmtime(secs)[:6]
                url = "https://example.com/doc/%d" % written
                if jsonl:
                    jsonl.write(json.dumps({"url": url, "content": t, "cluster": cl, "ts": ts}, ensure_ascii=False) + "\n")
                cols["url"].append(url)
                cols["content"].append(t)
                cols["cluster"].append(cl)
                cols["ts"].append(ts)
                written += 1
                if len(cols["url"]) >= a.shard_rows:
                    flush()
            block = []
    flush()
    if jsonl:
        jsonl.close()
    print("records %d, true clusters %d, sentence pool %d, shards %d" % (written, cluster, pool_size, shard),
          file=sys.stderr)


if __name__ == "__main__":
    main()
