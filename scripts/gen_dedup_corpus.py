#!/usr/bin/env python3
"""Writes a synthetic JSONL corpus of near-duplicate clusters, for benchmarking dataset dedup.

    scripts/gen_dedup_corpus.py N SEED > corpus.jsonl

Each record is {"url", "content", "cluster", "meta"}. Vocabulary: 20,000 pseudo-words
(random letter strings, chosen with a Zipf-like skew). An original document is 60-160 words
in sentences of 8-20. Of the originals, 30 % get 1-4 near copies; each copy changes about
3 % of the words (replaced, dropped or inserted) and half of them also get a short
boilerplate line ("Share this article", a date) before or after. Records come in blocks of
10,000 shuffled together, so copies are not next to their originals. "cluster" is the
ground truth (the original's number): a perfect keep-first dedup keeps one record per
cluster value. Deterministic for a given N and SEED.
"""
import json
import random
import sys


def vocabulary(r):
    letters = "abcdefghijklmnopqrstuvwxyz"
    return ["".join(r.choice(letters) for _ in range(r.randint(2, 10))) for _ in range(20_000)]


def original(r, vocab, weights):
    n = r.randint(60, 160)
    words = r.choices(vocab, cum_weights=weights, k=n)
    out, i = [], 0
    while i < n:
        s = r.randint(8, 20)
        sentence = words[i:i + s]
        sentence[0] = sentence[0].capitalize()
        out.append(" ".join(sentence) + ".")
        i += s
    return " ".join(out)


def near_copy(r, text, vocab):
    words = text.split(" ")
    for _ in range(max(1, len(words) * 3 // 100)):
        op, i = r.random(), r.randrange(len(words))
        if op < 0.5:
            words[i] = r.choice(vocab)
        elif op < 0.75 and len(words) > 10:
            del words[i]
        else:
            words.insert(i, r.choice(vocab))
    text = " ".join(words)
    if r.random() < 0.5:
        extra = r.choice(["Share this article.", "Posted on 2024-%02d-%02d." % (r.randint(1, 12), r.randint(1, 28)),
                          "Read more:", "Subscribe to our newsletter."])
        text = extra + " " + text if r.random() < 0.5 else text + " " + extra
    return text


def main():
    n, seed = int(sys.argv[1]), int(sys.argv[2])
    r = random.Random(seed)
    vocab = vocabulary(r)
    acc, weights = 0.0, []
    for rank in range(1, len(vocab) + 1):
        acc += 1.0 / rank ** 0.5
        weights.append(acc)
    out = sys.stdout
    written, cluster, block = 0, 0, []
    while written < n:
        text = original(r, vocab, weights)
        copies = r.randint(1, 4) if r.random() < 0.3 else 0
        for c in range(copies + 1):
            block.append((cluster, text if c == 0 else near_copy(r, text, vocab)))
        cluster += 1
        if len(block) >= 10_000 or written + len(block) >= n:
            block = block[: n - written]
            r.shuffle(block)
            for cl, t in block:
                rec = {"url": "https://example.com/doc/%d" % written, "content": t, "cluster": cl,
                       "meta": {"source": "synthetic", "n": written}}
                out.write(json.dumps(rec) + "\n")
                written += 1
            block = []


if __name__ == "__main__":
    main()
