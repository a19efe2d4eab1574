"""In-process throughput of Store.check_and_insert from Python, with 1 and several threads.

    python python/benches/check_and_insert.py [--n 20000] [--threads 1,4] [--jsonl pages.jsonl]

Pages are generated from data/sample.jsonl (Chinese and English): a new page is 6 lines of
random sample documents under a sample title; as in `simstore bench --check-insert`, about
half the pages are new, a quarter exact copies of an earlier page (another id, the same
words) and a quarter near copies (an earlier page with one line changed). Each run uses a
fresh store in a temporary directory; a thread takes every T-th page. Also measured: the
fingerprint alone (simstore.fingerprint). --jsonl writes the pages, e.g. to time
`simstore import --dedup` on the same input.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import tempfile
import time
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import simstore

SAMPLE = Path(__file__).resolve().parents[2] / "data" / "sample.jsonl"


def pages(n: int, seed: int = 7) -> list:
    rng = random.Random(seed)
    docs = [json.loads(line) for line in SAMPLE.open(encoding="utf-8")]
    lines = [ln for d in docs for ln in d["text"].split("\n") if len(ln) >= 20]
    titles = [d["title"] for d in docs]
    out: list = []
    for i in range(n):
        kind = rng.randrange(4) if out else 0
        if kind in (0, 1):
            page = {"title": rng.choice(titles), "text": "\n".join(rng.sample(lines, 6))}
        elif kind == 2:
            page = dict(rng.choice(out))
        else:
            base = rng.choice(out)
            body = base["text"].split("\n")
            body[rng.randrange(len(body))] = rng.choice(lines)
            page = {"title": base["title"], "text": "\n".join(body)}
        page["id"] = f"https://example.com/page/{i}"
        out.append(page)
    return out


def run(docs: list, threads: int) -> tuple:
    """(wall seconds, CPU seconds of the process, statuses) of check_and_insert of every
    page into a fresh store."""
    with tempfile.TemporaryDirectory() as tmp, simstore.Store(os.path.join(tmp, "bench.db")) as store:
        def part(w: int) -> Counter:
            c: Counter = Counter()
            for p in docs[w::threads]:
                c[store.check_and_insert(p["id"], p["text"], title=p["title"], url=p["id"]).status] += 1
            return c

        t, cpu = time.perf_counter(), time.process_time()
        with ThreadPoolExecutor(max_workers=threads) as pool:
            counts = sum(pool.map(part, range(threads)), Counter())
        return time.perf_counter() - t, time.process_time() - cpu, counts


def fingerprints(docs: list, threads: int) -> tuple:
    def part(w: int) -> None:
        for p in docs[w::threads]:
            simstore.fingerprint(p["text"], title=p["title"])

    t, cpu = time.perf_counter(), time.process_time()
    with ThreadPoolExecutor(max_workers=threads) as pool:
        list(pool.map(part, range(threads)))
    return time.perf_counter() - t, time.process_time() - cpu


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--n", type=int, default=20_000)
    ap.add_argument("--threads", default="1,4")
    ap.add_argument("--jsonl", help="also write the pages here (JSONL)")
    args = ap.parse_args()
    docs = pages(args.n)
    if args.jsonl:
        with open(args.jsonl, "w", encoding="utf-8") as f:
            for p in docs:
                f.write(json.dumps(p, ensure_ascii=False) + "\n")
    chars = sum(len(p["text"]) for p in docs) / len(docs)
    print(f"{args.n} pages, {chars:.0f} characters each on average; {os.cpu_count()} cores; "
          f"load average {os.getloadavg()[0]:.1f}")
    print(f"{'method':<24} {'threads':>7} {'seconds':>8} {'pages/s':>9} {'CPU s':>7} {'µs CPU/page':>11}  statuses")
    for threads in (int(t) for t in args.threads.split(",")):
        secs, cpu = fingerprints(docs, threads)
        print(f"{'fingerprint (no store)':<24} {threads:>7} {secs:>8.2f} {args.n / secs:>9.0f} {cpu:>7.2f} "
              f"{cpu / args.n * 1e6:>11.0f}")
        secs, cpu, counts = run(docs, threads)
        print(f"{'Store.check_and_insert':<24} {threads:>7} {secs:>8.2f} {args.n / secs:>9.0f} {cpu:>7.2f} "
              f"{cpu / args.n * 1e6:>11.0f}  {dict(counts)}")


if __name__ == "__main__":
    main()
