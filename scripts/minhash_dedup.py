#!/usr/bin/env python3
"""The same dataset dedup as `simstore dedup --text-field F --output KEPT`, with datasketch's
MinHash-LSH, for comparison (docs/benchmarks.md). datasketch is not a dependency of
simstore: install it in a venv of your own:

    python3 -m venv /tmp/mh && /tmp/mh/bin/pip install datasketch
    /tmp/mh/bin/python scripts/minhash_dedup.py corpus.jsonl kept.jsonl --text-field content

Each record's text is lowercased and split on whitespace; its shingles are the word
5-grams (the whole text when shorter), as text-dedup does. MinHash signatures (128
permutations by default) are computed by a pool of worker processes (one per core), the LSH
index (threshold 0.7 by default) is queried and updated in input order in the main process:
a record is dropped when the index already holds a candidate, else kept (written
unchanged) and inserted. Kept lines are written as read (gzip'd when the name ends in .gz).
"""
import argparse
import gzip
import itertools
import json
import multiprocessing as mp
import sys
import time

from datasketch import LeanMinHash, MinHash, MinHashLSH

NUM_PERM = 128
NGRAM = 5


def signature(line):
    text = json.loads(line).get(FIELD)
    if not isinstance(text, str):
        return None
    words = text.lower().split()
    if len(words) <= NGRAM:
        grams = [" ".join(words)]
    else:
        grams = [" ".join(words[i:i + NGRAM]) for i in range(len(words) - NGRAM + 1)]
    m = MinHash(num_perm=NUM_PERM)
    m.update_batch([g.encode("utf-8") for g in grams])
    return LeanMinHash(m)


def init(field, num_perm):
    global FIELD, NUM_PERM
    FIELD, NUM_PERM = field, num_perm


def opener(path, mode):
    return gzip.open(path, mode) if path.endswith(".gz") else open(path, mode)


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("input")
    p.add_argument("output")
    p.add_argument("--text-field", default="text")
    p.add_argument("--threshold", type=float, default=0.7)
    p.add_argument("--num-perm", type=int, default=NUM_PERM)
    p.add_argument("--processes", type=int, default=mp.cpu_count())
    p.add_argument("--limit", type=int, default=0, help="read only the first N records")
    a = p.parse_args()
    init(a.text_field, a.num_perm)
    lsh = MinHashLSH(threshold=a.threshold, num_perm=a.num_perm)
    start = time.time()
    read = kept = failed = 0
    with opener(a.input, "rb") as inp, opener(a.output, "wb") as out, \
            mp.Pool(a.processes, initializer=init, initargs=(a.text_field, a.num_perm)) as pool:
        lines = itertools.islice(inp, a.limit) if a.limit else inp
        batch = []
        for line in lines:
            batch.append(line)
            if len(batch) == 20_000:
                kept, failed = step(pool, batch, lsh, out, kept, failed)
                read += len(batch)
                batch = []
        if batch:
            kept, failed = step(pool, batch, lsh, out, kept, failed)
            read += len(batch)
    secs = time.time() - start
    print(f"{read} records: kept {kept}, dropped {read - kept - failed}, failed {failed}; "
          f"{secs:.1f} s, {read / secs:.0f} records/s", file=sys.stderr)


def step(pool, batch, lsh, out, kept, failed):
    for line, hv in zip(batch, pool.map(signature, batch, chunksize=500)):
        if hv is None:
            failed += 1
            continue
        m = hv
        if lsh.query(m):
            continue
        lsh.insert(kept, m, check_duplication=False)
        out.write(line if line.endswith(b"\n") else line + b"\n")
        kept += 1
    return kept, failed


if __name__ == "__main__":
    main()
