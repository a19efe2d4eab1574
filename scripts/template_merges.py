#!/usr/bin/env python3
"""Template-sharing articles through a store, as a crawler checks them in: how many
different articles a quality mode merges (docs/quality.md, issue 43's trial).

    python3 scripts/template_merges.py [--bin target/release/simstore] [--seeds 1,2,3]
        [--n-base 300] [--quality standard,high] [--expected-docs N] [--keep DIR]

For each seed, `data/gen_sample.py` writes N_BASE articles per language from one
generator's site templates (shared chrome, stock sentences, one topic's words) and their
reposts; ids are prefixed by the seed, so the seeds' articles are all different. Every
record goes through `simstore import --dedup` into a fresh store of each quality mode
(`init --quality Q`, with `--expected-docs` when given). A reported copy whose article is
not the one it was reported a copy of is a merge. Prints, per mode: copies reported,
reposts in the corpus, merges (record lines) and the distinct article pairs merged.
"""

import argparse
import json
import os
import subprocess
import sys
import tempfile

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def article(record_id):
    """`s1-zh-0007` for the article itself and for its reposts `s1-zh-0007-v2`."""
    i = record_id.rfind("-v")
    return record_id[:i] if i >= 0 else record_id


def corpus(seeds, n_base, out):
    with open(out, "w", encoding="utf-8") as w:
        for seed in seeds:
            path = f"{out}.seed{seed}"
            env = dict(os.environ, SEED=str(seed), N_BASE=str(n_base))
            subprocess.run(
                [sys.executable, os.path.join(REPO, "data/gen_sample.py"), path],
                env=env, check=True, stdout=subprocess.DEVNULL,
            )
            with open(path, encoding="utf-8") as r:
                for line in r:
                    v = json.loads(line)
                    v["id"] = f"s{seed}-{v['id']}"
                    w.write(json.dumps(v, ensure_ascii=False) + "\n")


def merges(binary, db, quality, expected_docs, records):
    init = [binary, "--db", db, "init", "--quality", quality]
    if expected_docs:
        init += ["--expected-docs", str(expected_docs)]
    subprocess.run(init, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    out = subprocess.run(
        [binary, "--db", db, "import", "--dedup", records],
        check=True, capture_output=True, text=True,
    ).stdout
    copies, merged = 0, []
    for line in out.splitlines():
        v = json.loads(line)
        copies += 1
        a, b = article(v["id"]), article(v["duplicate_of"])
        if a != b:
            merged.append((v["id"], v["duplicate_of"], v.get("distance")))
    return copies, merged


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--bin", default=os.path.join(REPO, "target/release/simstore"))
    p.add_argument("--seeds", default="1,2,3")
    p.add_argument("--n-base", type=int, default=300)
    p.add_argument("--quality", default="standard,high")
    p.add_argument("--expected-docs", type=int)
    p.add_argument("--keep", help="write the corpus and stores here instead of a temporary directory")
    a = p.parse_args()
    seeds = [int(s) for s in a.seeds.split(",")]
    with tempfile.TemporaryDirectory() as tmp:
        work = a.keep or tmp
        os.makedirs(work, exist_ok=True)
        records = os.path.join(work, "all.jsonl")
        corpus(seeds, a.n_base, records)
        with open(records, encoding="utf-8") as r:
            ids = [json.loads(line)["id"] for line in r]
        reposts = sum(1 for i in ids if article(i) != i)
        print(f"{len(ids) - reposts} articles and {reposts} reposts (seeds {a.seeds}, N_BASE {a.n_base})")
        for quality in a.quality.split(","):
            db = os.path.join(work, f"{quality}.db")
            copies, merged = merges(a.bin, db, quality, a.expected_docs, records)
            pairs = sorted({tuple(sorted((article(x), article(y)))) for x, y, _ in merged})
            print(f"{quality}: {copies} copies reported of {reposts} reposts; "
                  f"{len(merged)} records reported as copies of another article, "
                  f"{len(pairs)} article pairs merged {pairs[:10]}")


if __name__ == "__main__":
    main()
