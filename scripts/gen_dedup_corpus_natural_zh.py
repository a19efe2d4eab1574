#!/usr/bin/env python3
"""Writes a near-duplicate corpus of natural Chinese text (JSONL and Parquet shards).

    scripts/gen_dedup_corpus_natural_zh.py N SEED OUTDIR [--no-jsonl] [--shard-rows 100000]
        [--git-dir /work/.mirror/tennessine+corpus/repo]
        [--cmrc-git-dir /work/.mirror/ymcui+cmrc2018/repo]

The Chinese counterpart of scripts/gen_dedup_corpus_natural.py: same CLI, columns and planting
scheme, with characters in place of words.

Source text, two public GitHub repositories, each pinned to a commit:
- tennessine/corpus, commit c5ce96aca36c6a3cb4da5f0ff7d2d5fa30c32aea: the full texts of the four
  classic novels 三国演义, 水浒传, 西游记 and 红楼梦 (14th-18th century works in the public
  domain; the repository has no licence file), about 3 million characters of narrative prose;
- ymcui/cmrc2018, commit c0eb1b6ba219847457e6af3180da722bbeb656af (CC-BY-SA-4.0): the Chinese
  Wikipedia paragraphs ("context") of squad-style-data/cmrc2018_dev.json and
  cmrc2018_trial.json, modern expository prose (the train file is left out on purpose: it is
  over the 4 MiB a `fetch` snapshot holds, so the pool would depend on how the source was got).
Get them with the `fetch` tool (github:tennessine/corpus, github:ymcui/cmrc2018) or `git clone`;
the files are read with `git --git-dir=GIT_DIR show COMMIT:PATH`, so the corpus is rebuilt from
the fetched sources and never stored in this repository (a blob or repository missing is
skipped, with a note). Each line (paragraph) is split into sentences after 。！？； (a closing
quote or bracket stays with its sentence; 红楼梦's full-width "．" is read as "。"), and each
distinct sentence of 8-80 characters that is at least half CJK ideographs is kept (~135k
sentences; the pool is cached in /tmp/natural-zh-sentences-COMMIT-COMMIT.txt).

Planting scheme, as scripts/gen_dedup_corpus_natural.py: an original is 100-300 characters
made of real sentences drawn at random from the pool and written one after the other without
a separator (so originals do not share passages); 30 % of the originals get 1-4 near copies;
each copy changes about 3 % of the characters (replaced by an ideograph of the sources,
dropped, or an ideograph inserted) and half of them also get a short boilerplate line
("来源：新华网", "责任编辑：王明", "点击分享", a date such as "2024年3月5日", ...) before or
after, joined by a newline. Records come in blocks of 10,000 shuffled together. "cluster" is
the ground truth (the original's number): a perfect keep-first dedup keeps one record per
cluster value.

Columns: url (https://example.com/doc/N, unique), content, cluster (int64), ts (an ISO 8601
UTC timestamp string, random in 2020-2026). Writes OUTDIR/corpus.jsonl (unless --no-jsonl)
and OUTDIR/parquet/part-00000.parquet ... (pyarrow, snappy, --shard-rows rows each).
Deterministic for a given N, SEED and source commits.
"""
import argparse
import json
import os
import random
import re
import subprocess
import sys
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from gen_dedup_corpus_natural import write_corpus  # noqa: E402

COMMIT = "c5ce96aca36c6a3cb4da5f0ff7d2d5fa30c32aea"  # tennessine/corpus
NOVELS = ["三国演义.txt", "水浒传.txt", "西游记.txt", "红楼梦.txt"]
CMRC_COMMIT = "c0eb1b6ba219847457e6af3180da722bbeb656af"  # ymcui/cmrc2018
CMRC = ["squad-style-data/cmrc2018_dev.json", "squad-style-data/cmrc2018_trial.json"]
BOILER = ["来源：新华网", "责任编辑：王明", "点击分享", "转载请注明出处。", "阅读原文",
          "欢迎关注我们的公众号。"]
SENTENCE = re.compile(r"[^。！？；]*[。！？；]+[”’」』\"'）)]*")
IDEOGRAPH = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff]")


def blob(git_dir, commit, path):
    done = subprocess.run(["git", "--git-dir", git_dir, "show", "%s:%s" % (commit, path)], capture_output=True)
    if done.returncode != 0:  # a blob the snapshot lacks (its largest files), or no snapshot
        print("skipped (not in the snapshot %s): %s" % (git_dir, path), file=sys.stderr)
        return None
    return done.stdout.decode("utf-8", "replace")


def paragraphs(novels_git_dir, novels_commit, cmrc_git_dir, cmrc_commit):
    for path in NOVELS:
        text = blob(novels_git_dir, novels_commit, path)
        if text is not None:
            yield from text.replace("．", "。").splitlines()
    for path in CMRC:
        text = blob(cmrc_git_dir, cmrc_commit, path)
        if text is not None:
            for article in json.loads(text)["data"]:
                for para in article["paragraphs"]:
                    yield from para["context"].splitlines()


def sentence_pool(novels_git_dir, novels_commit, cmrc_git_dir, cmrc_commit):
    cache = "/tmp/natural-zh-sentences-%s-%s.txt" % (novels_commit[:12], cmrc_commit[:12])
    if os.path.exists(cache):
        with open(cache, encoding="utf-8") as f:
            return f.read().split("\n")
    seen, pool = set(), []
    for para in paragraphs(novels_git_dir, novels_commit, cmrc_git_dir, cmrc_commit):
        para = " ".join(para.split())
        for s in SENTENCE.findall(para):
            s = s.strip()
            if (8 <= len(s) <= 80 and len(IDEOGRAPH.findall(s)) * 2 >= len(s) and "\ufffd" not in s
                    and s not in seen):
                seen.add(s)
                pool.append(s)
    with open(cache + ".tmp", "w", encoding="utf-8") as f:
        f.write("\n".join(pool))
    os.replace(cache + ".tmp", cache)
    return pool


def original(r, pool):
    target = r.randint(100, 300)
    out, n = [], 0
    while n < target:
        s = pool[r.randrange(len(pool))]
        out.append(s)
        n += len(s)
    return "".join(out)


def near_copy(r, text, chars_of_source):
    chars = list(text)
    for _ in range(max(1, len(chars) * 3 // 100)):
        op, i = r.random(), r.randrange(len(chars))
        if op < 0.5:
            chars[i] = r.choice(chars_of_source)
        elif op < 0.75 and len(chars) > 10:
            del chars[i]
        else:
            chars.insert(i, r.choice(chars_of_source))
    text = "".join(chars)
    if r.random() < 0.5:
        extra = r.choice(BOILER + ["2024年%d月%d日" % (r.randint(1, 12), r.randint(1, 28))])
        text = extra + "\n" + text if r.random() < 0.5 else text + "\n" + extra
    return text


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("n", type=int)
    p.add_argument("seed", type=int)
    p.add_argument("outdir")
    p.add_argument("--git-dir", default="/work/.mirror/tennessine+corpus/repo",
                   help="git directory of tennessine/corpus (the four novels)")
    p.add_argument("--commit", default=COMMIT)
    p.add_argument("--cmrc-git-dir", default="/work/.mirror/ymcui+cmrc2018/repo",
                   help="git directory of ymcui/cmrc2018 (Wikipedia paragraphs)")
    p.add_argument("--cmrc-commit", default=CMRC_COMMIT)
    p.add_argument("--shard-rows", type=int, default=100_000)
    p.add_argument("--no-jsonl", action="store_true")
    a = p.parse_args()

    pool = sentence_pool(a.git_dir, a.commit, a.cmrc_git_dir, a.cmrc_commit)
    r = random.Random(a.seed)
    chars_of_source = [c for s in r.sample(pool, min(len(pool), 50_000)) for c in IDEOGRAPH.findall(s)]
    write_corpus(a, r, len(pool), lambda: original(r, pool), lambda t: near_copy(r, t, chars_of_source))

if __name__ == "__main__":
    main()
