#!/usr/bin/env python3
"""Simulates a candidate index on the sketch (LSH bands of its bytes) beside the standard
mode's tables, on a labelled set (docs/quality.md, "The next lever, simulated").

    simstore eval DIR --quality standard --signatures sigs.jsonl
    python3 scripts/sketch_bands.py DIR sigs.jsonl [--bands 0,1,2] [--rows 3] [--probes 4,0]
    python3 scripts/sketch_bands.py --negatives CORPUS_DIR corpus_sigs.jsonl  # bands' false matches

The store is the standard mode's at 10M documents: 4 tables whose prefixes are the 4
16-bit blocks of the fingerprint (top first), a query's 4 cheapest flips of its weak bits
(cost: the sum of the squared margins; at most 6 weak bits of a table's prefix, 3 flipped
at once), candidates within 12. The script first prints its own count with no band: it
must equal `eval --quality standard`'s true positives, or the model is not the store's. A
band is `rows` consecutive bytes of the sketch's 63 minima; a pair found by a band alone
is accepted by the spec v9 rule at its distance capped at 24 (two Han-character
sketches: 0.25 + 0.025 a bit; others 0.3; 0.8 below 16 bins, 24 for Han; nothing below 4).

With --negatives, every pair of documents of CORPUS_DIR that shares a band and that the
rule accepts is counted, and the documents in such pairs whose texts are unrelated
(character 3-gram Jaccard < 0.2 of the lowercased text without whitespace: close to, not
the same as, `eval`'s count).
"""

import argparse
import collections
import gzip
import itertools
import json
import os

BLOCKS = [48, 32, 16, 0]  # the shift of each 16-bit block: table t's prefix is block t
MASK16 = 0xFFFF


def read_jsonl(path):
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rt", encoding="utf-8") as f:
        return [json.loads(line) for line in f if line.strip()]


def find(directory, name):
    for c in (f"{name}.jsonl.gz", f"{name}.jsonl"):
        if os.path.exists(os.path.join(directory, c)):
            return os.path.join(directory, c)
    return None


def signatures(path):
    out = {}
    for v in read_jsonl(path):
        sketch = bytes.fromhex(v["sketch"]) if v["sketch"] else None
        out[v["id"]] = (int(v["fp"], 16), sketch, v["weak"])
    return out


def similarity(a, b):
    equal = sum(1 for i in range(63) if a[i] == b[i])
    p, chance = equal / 63, 1 / 256
    return max(0.0, min(1.0, (p - chance) / (1 - chance)))


def accepts(distance, a, b):
    """The spec v9 mode rule for two sketches at `distance`."""
    han_a, han_b = a[63] & 0x80, b[63] & 0x80
    bins = min(a[63] & 0x3F, b[63] & 0x3F)
    if bins < 4:
        return False
    han = 0.25 + 0.025 * distance
    if han_a and han_b:
        t, few = han, 24
    elif han_a or han_b:
        t, few = max(0.3, han), 24
    else:
        t, few = 0.3, 16
    if bins < few:
        t = max(t, 0.8)
    return similarity(a, b) >= t


def flips(weak, budget):
    """The `budget` cheapest flips of the query's weak bits over the 4 tables."""
    if budget == 0:
        return []
    candidates = []
    for t, shift in enumerate(BLOCKS):
        prefix = MASK16 << shift
        bits = [(b, m * m) for b, m in weak if prefix >> b & 1][:6]
        for subset in range(1, 1 << len(bits)):
            if bin(subset).count("1") > 3:
                continue
            mask = sum(1 << b for i, (b, _) in enumerate(bits) if subset >> i & 1)
            cost = sum(c for i, (_, c) in enumerate(bits) if subset >> i & 1)
            candidates.append((cost, t, mask))
    candidates.sort()
    return [(t, mask) for _, t, mask in candidates[:budget]]


def in_a_span(query, weak, stored, probes):
    for shift in BLOCKS:
        if (query ^ stored) >> shift & MASK16 == 0:
            return True
    for t, mask in flips(weak, probes):
        if (query ^ mask ^ stored) >> BLOCKS[t] & MASK16 == 0:
            return True
    return False


MIN_BAND_SHINGLES = 0


def indexed(s):
    return (s[63] & 0x3F) >= MIN_BAND_SHINGLES


def band_hit(a, b, bands, rows):
    if not (indexed(a) and indexed(b)):
        return False
    return any(a[i * rows:(i + 1) * rows] == b[i * rows:(i + 1) * rows] for i in range(bands))


def labelled(args):
    sigs = signatures(args.signatures)
    pairs = read_jsonl(find(args.dir, "pairs"))
    positives = collections.Counter(p["lang"] for p in pairs if p["label"] == 1)
    for probes in (int(x) for x in args.probes.split(",")):
        for bands in (int(x) for x in args.bands.split(",")):
            tp, fp = collections.Counter(), 0
            for p in pairs:
                a, b = sigs.get(p["a"]), sigs.get(p["b"])
                if not a or not b:
                    continue
                d = bin(a[0] ^ b[0]).count("1")
                if a[1] is None or b[1] is None:
                    found = d <= 3
                else:
                    found = d <= 12 and in_a_span(b[0], b[2], a[0], probes) and accepts(d, a[1], b[1])
                    if not found and bands and band_hit(a[1], b[1], bands, args.rows):
                        found = accepts(min(d, 24), a[1], b[1])
                if found and p["label"] == 1:
                    tp[p["lang"]] += 1
                elif found:
                    fp += 1
            total = sum(tp.values())
            precision = total / (total + fp) if total + fp else 1.0
            recall = total / sum(positives.values())
            f1 = 2 * precision * recall / (precision + recall) if total else 0.0
            per = " ".join(
                f"{lang} {2 * tp[lang] / (positives[lang] + tp[lang]) if tp[lang] else 0:.4f}"
                for lang in sorted(positives)
            )
            print(f"probes {probes}, bands {bands} x {args.rows}: tp {total} fp {fp} "
                  f"F1 {f1:.4f} (precision {precision:.4f}; F1 at precision 1 by language: {per})")


def trigrams(text):
    t = "".join(text.lower().split())
    return {t[i:i + 3] for i in range(len(t) - 2)}


def negatives(args):
    sigs = {k: v for k, v in signatures(args.signatures).items() if v[1] is not None}
    texts = {}
    for name in ("docs", "variants"):
        path = find(args.dir, name)
        for v in read_jsonl(path) if path else []:
            texts[v["id"]] = (v.get("title") or "") + "\n" + v["text"]
    bands = max(int(x) for x in args.bands.split(","))
    buckets = collections.defaultdict(list)
    for doc, (_, sketch, _) in sigs.items():
        if not indexed(sketch):
            continue
        for i in range(bands):
            buckets[(i, sketch[i * args.rows:(i + 1) * args.rows])].append(doc)
    sizes = sorted((len(v) for v in buckets.values()), reverse=True)
    accepted, unrelated, colliding = set(), set(), 0
    for docs in buckets.values():
        for x, y in itertools.combinations(sorted(docs), 2):
            colliding += 1
            if (x, y) in accepted:
                continue
            (fx, sx, _), (fy, sy, _) = sigs[x], sigs[y]
            if not accepts(min(bin(fx ^ fy).count("1"), 24), sx, sy):
                continue
            accepted.add((x, y))
            a, b = trigrams(texts[x]), trigrams(texts[y])
            if len(a & b) / max(1, len(a | b)) < 0.2:
                unrelated |= {x, y}
    print(f"{len(sigs)} documents, {bands} bands x {args.rows}: largest buckets {sizes[:5]}; "
          f"{colliding} colliding pairs, {len(accepted)} accepted, "
          f"{len(unrelated)} documents in accepted pairs of unrelated texts")


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("dir")
    p.add_argument("signatures")
    p.add_argument("--bands", default="0,1,2")
    p.add_argument("--rows", type=int, default=3)
    p.add_argument("--probes", default="4,0")
    p.add_argument("--negatives", action="store_true")
    p.add_argument("--min-shingles", type=int, default=0,
                   help="sketches that filled fewer bins are not indexed by bands")
    args = p.parse_args()
    global MIN_BAND_SHINGLES
    MIN_BAND_SHINGLES = args.min_shingles
    negatives(args) if args.negatives else labelled(args)


if __name__ == "__main__":
    main()
