#!/usr/bin/env python3
"""datasketch's MinHash-LSH on the labelled development set, measured as `simstore eval`
measures SimHash (docs/quality.md), so the two can be set side by side. datasketch is not
a dependency of simstore: install it in a venv of your own:

    python3 -m venv /tmp/mh && /tmp/mh/bin/pip install datasketch
    /tmp/mh/bin/python scripts/minhash_eval.py ../shared/data/dev --json minhash.json

The set's directory holds docs.jsonl.gz (base documents), variants.jsonl.gz and
pairs.jsonl.gz (see its README). A document's text is `title + "\\n" + text`, lowercased.
Shingle kinds (--kinds, comma-separated):
  charN          character N-grams of the text with whitespace dropped, every language;
  wordN+charM    English (and any language but zh): word N-grams, a word being a run of
                 letters, digits and `_` (regex \w+: punctuation dropped, as text-dedup
                 splits on non-alphanumerics); Chinese: character M-grams (whitespace
                 dropped);
  wswordN+charM  the same with words split on whitespace (punctuation kept on the words,
                 as scripts/minhash_dedup.py).
A text shorter than N is one shingle; a text with none is not inserted (its pairs count
"not duplicate", as an unfingerprintable document in `simstore eval`).

MinHash signatures (128 permutations, seed 1, datasketch's default permutation scheme) are
computed once per kind by a pool of worker processes (one per core). For every LSH threshold
(--thresholds) one MinHashLSH holds all documents, base and variants, keyed by id;
datasketch picks its bands b and rows r from the threshold. Two rules are reported:
  lsh      (the main one: what a datasketch user gets) a pair is predicted duplicate when
           querying the index with a's signature returns b;
  lsh+jac  the same and the signatures' estimated Jaccard is at least the threshold.
For each: precision, recall, F1, tp/fp/fn/tn overall, per language, per length bucket and per
`lang:class`, as `simstore eval` (src/tools/eval.rs, `evaluate`). Unlabelled check, as
`base_collisions`: every pair of base documents (no `base_id`) that the index reports, split
by their character 3-gram Jaccard (title + text, whitespace dropped, lowercased; unrelated
below 0.2); the unrelated pairs and the documents in one are false matches a store would
report. One line is printed per configuration, then the per-class table of the best ones;
--json FILE writes everything.
"""
import argparse
import gzip
import json
import multiprocessing as mp
import os
import re
import sys
import time
from collections import defaultdict

try:
    import datasketch
    from datasketch import LeanMinHash, MinHash, MinHashLSH
except ImportError:
    sys.exit("minhash_eval.py needs datasketch, which simstore does not depend on: "
             "python3 -m venv /tmp/mh && /tmp/mh/bin/pip install datasketch, "
             "then run this script with /tmp/mh/bin/python")

NUM_PERM = 128
THRESHOLDS = "0.3,0.4,0.5,0.6,0.7,0.8"
KINDS = "char3,char5,word3+char3,word5+char5"
UNRELATED_JACCARD = 0.2  # eval.rs: UNRELATED_JACCARD
TARGET_PRECISION = 0.999
FILES = ("docs.jsonl.gz", "variants.jsonl.gz", "pairs.jsonl.gz")
# Rust's char::is_whitespace (Unicode White_Space); Python's str.isspace also takes U+001C..1F.
WHITESPACE = ("\t\n\x0b\x0c\r \x85\xa0\u1680" + "".join(map(chr, range(0x2000, 0x200B)))
              + "\u2028\u2029\u202f\u205f\u3000")
DROP_WHITESPACE = {ord(c): None for c in WHITESPACE}
WORD = re.compile(r"\w+")


# --- text -------------------------------------------------------------------------------

def fold(s):
    """Lowercases as Rust's per-character `char::to_lowercase` (Python's `str.lower` alone
    differs only by its final-sigma rule)."""
    return "".join(c.lower() for c in s) if "Σ" in s else s.lower()


def char_grams(text, n):
    """The set of character n-grams of `text` with whitespace dropped, lowercased; a text
    shorter than n is one gram, an empty one none (eval.rs: `char_trigrams`)."""
    chars = fold(text.translate(DROP_WHITESPACE))
    n = max(1, min(n, len(chars)))
    return {chars[i:i + n] for i in range(len(chars) - n + 1)}


def word_grams(text, n, split):
    """The set of word n-grams of `text`, lowercased; words are runs of `\\w` or, with
    `split == "wsword"`, whitespace-separated."""
    words = fold(text).split() if split == "wsword" else WORD.findall(fold(text))
    n = max(1, min(n, len(words)))
    return {" ".join(words[i:i + n]) for i in range(len(words) - n + 1)}


def parse_kind(spec):
    """`char5` -> {"name", "en": ("char", 5), "zh": ("char", 5)}; `word3+char3` -> English
    word 3-grams, Chinese character 3-grams (`wsword3+char3`: whitespace-split words)."""
    try:
        if spec.startswith("char"):
            n = int(spec[4:])
            return {"name": spec, "en": ("char", n), "zh": ("char", n)}
        word, char = spec.split("+")
        split = "wsword" if word.startswith("wsword") else "word"
        if word.startswith(split) and char.startswith("char"):
            return {"name": spec, "en": (split, int(word[len(split):])),
                    "zh": ("char", int(char[4:]))}
    except ValueError:
        pass
    sys.exit(f"shingle kind {spec!r}: expected charN, wordN+charM or wswordN+charM")


def shingles(kind, lang, text):
    """The shingles of one document's text for a kind (see parse_kind)."""
    how, n = kind["zh"] if lang == "zh" else kind["en"]
    return char_grams(text, n) if how == "char" else word_grams(text, n, how)


# --- signatures (worker processes) -------------------------------------------------------

def init_worker(docs, num_perm, seed):
    global DOCS, PERMS, SEED
    DOCS, PERMS, SEED = docs, num_perm, seed


def sign(job):
    """The MinHash of document `i` for `kind`, or None when it has no shingles."""
    kind, i = job
    lang, text = DOCS[i]
    grams = shingles(kind, lang, text)
    if not grams:
        return None
    m = MinHash(num_perm=PERMS, seed=SEED)
    m.update_batch([g.encode("utf-8") for g in grams])
    return LeanMinHash(m)


def signatures(pool, kind, ids):
    """id -> LeanMinHash (None for a document without shingles), for every document."""
    return dict(zip(ids, pool.map(sign, [(kind, i) for i in range(len(ids))], chunksize=200)))


# --- loading -----------------------------------------------------------------------------

def read_jsonl(path):
    with gzip.open(path, "rt", encoding="utf-8") as f:
        for n, line in enumerate(f, 1):
            if line.strip():
                try:
                    yield json.loads(line)
                except json.JSONDecodeError as e:
                    sys.exit(f"{path}:{n}: not JSON ({e}); is this the labelled set?")


def load(directory):
    """Documents {id: (lang, title + "\\n" + text, is_base, title, text)} and pairs."""
    missing = [f for f in FILES if not os.path.isfile(os.path.join(directory, f))]
    if missing:
        sys.exit(f"{directory}: no {', '.join(missing)}; give the labelled set's directory "
                 "(default ../shared/data/dev, run from the repository root)")
    docs = {}
    for name in FILES[:2]:
        for d in read_jsonl(os.path.join(directory, name)):
            require(d, ("id",), name)
            title, text = d.get("title") or "", d.get("text") or ""
            docs[d["id"]] = (d.get("lang") or "", f"{title}\n{text}", d.get("base_id") is None,
                             title, text)
    pairs = list(read_jsonl(os.path.join(directory, FILES[2])))
    for pair in pairs:
        require(pair, ("a", "b", "label"), FILES[2])
    return docs, pairs


def require(record, keys, name):
    """Exits with a message naming the file and record when `record` lacks one of `keys`."""
    lacking = [k for k in keys if k not in record]
    if lacking:
        sys.exit(f"{name}: record {json.dumps(record, ensure_ascii=False)[:120]} has no "
                 f"{', '.join(lacking)}; is this the labelled set (see its README)?")


# --- counting (eval.rs: Counts, evaluate) ------------------------------------------------

def counts():
    return {"tp": 0, "fp": 0, "fn_": 0, "tn": 0}


def add(c, label, predicted):
    key = ("tp" if predicted else "fn_") if label else ("fp" if predicted else "tn")
    c[key] += 1


def scores(c):
    """Precision (1 when nothing is predicted), recall (0 without duplicates), F1 and the
    false-positive rate, as eval.rs."""
    p = c["tp"] / (c["tp"] + c["fp"]) if c["tp"] + c["fp"] else 1.0
    r = c["tp"] / (c["tp"] + c["fn_"]) if c["tp"] + c["fn_"] else 0.0
    f1 = 2 * p * r / (p + r) if p + r else 0.0
    fpr = c["fp"] / (c["fp"] + c["tn"]) if c["fp"] + c["tn"] else 0.0
    return dict(c, precision=p, recall=r, f1=f1, false_positive_rate=fpr)


def new_report():
    return {"pairs": 0, "missing": 0, "unsigned": 0, "overall": counts(),
            "by_lang": defaultdict(counts), "by_class": defaultdict(counts),
            "by_length": defaultdict(counts)}


def count_pair(report, pair, predicted):
    label = pair["label"] == 1
    lang = pair.get("lang", "")
    add(report["overall"], label, predicted)
    add(report["by_lang"][lang], label, predicted)
    add(report["by_class"][f"{lang}:{pair.get('class', '')}"], label, predicted)
    if pair.get("len_bucket"):
        add(report["by_length"][f"{lang}:{pair['len_bucket']}"], label, predicted)


def evaluate(lsh, sigs, pairs, threshold):
    """Reports for the two rules (module docstring) on the labelled pairs."""
    reports = {"lsh": new_report(), "lsh+jac": new_report()}
    found = {}
    for pair in pairs:
        a, b = pair["a"], pair["b"]
        if a not in sigs or b not in sigs:
            for r in reports.values():
                r["missing"] += 1
            continue
        sa, sb = sigs[a], sigs[b]
        if sa is None or sb is None:
            candidate = close = False
        else:
            if a not in found:
                found[a] = set(lsh.query(sa))
            candidate = b in found[a]
            close = candidate and sa.jaccard(sb) >= threshold
        for rule, predicted in (("lsh", candidate), ("lsh+jac", close)):
            reports[rule]["pairs"] += 1
            reports[rule]["unsigned"] += sa is None or sb is None
            count_pair(reports[rule], pair, predicted)
    return {rule: finish(r) for rule, r in reports.items()}


def finish(report):
    """Adds the scores to every table of a report."""
    out = dict(report, overall=scores(report["overall"]))
    for table in ("by_lang", "by_class", "by_length"):
        out[table] = {k: scores(v) for k, v in sorted(report[table].items())}
    return out


# --- unlabelled base pairs (eval.rs: base_collisions) ------------------------------------

class Trigrams:
    """Character 3-gram sets of base documents, computed once each (eval.rs: char_trigrams
    of title and text; whitespace is dropped, so the "\\n" between them does not count)."""

    def __init__(self, docs):
        self.docs, self.sets = docs, {}

    def jaccard(self, a, b):
        x, y = self.get(a), self.get(b)
        union = len(x | y)
        return len(x & y) / union if union else 1.0

    def get(self, d):
        if d not in self.sets:
            _, _, _, title, text = self.docs[d]
            self.sets[d] = char_grams(title + text, 3)
        return self.sets[d]


def base_pairs(lsh, sigs, base, threshold):
    """Pairs of base documents the index reports: (a, b, estimated Jaccard ≥ threshold)."""
    is_base = set(base)
    out = []
    for a in base:
        sa = sigs[a]
        for b in lsh.query(sa):
            if b > a and b in is_base:
                out.append((a, b, sa.jaccard(sigs[b]) >= threshold))
    return out


def collisions(lsh, sigs, base, threshold, trigrams):
    """Unrelated and related base pairs and documents in an unrelated pair, per rule."""
    out = {rule: {"documents": len(base), "unrelated_pairs": 0, "related_pairs": 0,
                  "unrelated_documents": set()} for rule in ("lsh", "lsh+jac")}
    for a, b, close in base_pairs(lsh, sigs, base, threshold):
        related = trigrams.jaccard(a, b) >= UNRELATED_JACCARD
        for rule in ("lsh", "lsh+jac") if close else ("lsh",):
            c = out[rule]
            if related:
                c["related_pairs"] += 1
            else:
                c["unrelated_pairs"] += 1
                c["unrelated_documents"].update((a, b))
    for c in out.values():
        c["unrelated_documents"] = len(c["unrelated_documents"])
    return out


# --- running -----------------------------------------------------------------------------

def run_config(kind, threshold, sigs, docs, pairs, trigrams, num_perm):
    """One LSH index at one threshold: pairs and base collisions for both rules."""
    start = time.time()
    lsh = MinHashLSH(threshold=threshold, num_perm=num_perm)
    with lsh.insertion_session() as session:
        for d, s in sigs.items():
            if s is not None:
                session.insert(d, s, check_duplication=False)
    base = sorted(d for d, v in docs.items() if v[2] and sigs[d] is not None)
    result = {"kind": kind["name"], "threshold": threshold, "b": lsh.b, "r": lsh.r,
              "signed_base_documents": len(base),
              "pairs": evaluate(lsh, sigs, pairs, threshold),
              "collisions": collisions(lsh, sigs, base, threshold, trigrams)}
    result["seconds"] = round(time.time() - start, 2)
    return result


def line(res):
    """One printed line per configuration."""
    o, j = res["pairs"]["lsh"], res["pairs"]["lsh+jac"]
    c, cj = res["collisions"]["lsh"], res["collisions"]["lsh+jac"]
    oo, jo = o["overall"], j["overall"]
    lang = "  ".join(f"{k} {v['f1']:.4f}" for k, v in o["by_lang"].items())
    docs = c["unrelated_documents"]
    return (f"{res['kind']:<12} {res['threshold']:.1f} {res['b']:>3}x{res['r']:<3}"
            f"{oo['precision']:9.4f}{oo['recall']:8.4f}{oo['f1']:8.4f}"
            f"{oo['tp']:6}{oo['fp']:5}{oo['fn_']:6}  {lang}  |"
            f"{jo['precision']:8.4f}{jo['recall']:8.4f}{jo['f1']:8.4f}  |"
            f"{c['unrelated_pairs']:7}{docs:6} ({100 * docs / c['documents']:5.2f} %)"
            f"{c['related_pairs']:6}  | {cj['unrelated_pairs']:5}{cj['unrelated_documents']:6}"
            f"  {res['seconds']:5.1f} s")


HEADER = ("kind         t     bxr  precision  recall      F1    tp   fp    fn  F1 per language"
          "   | lsh+jac: P       R      F1  | base unrelated: pairs docs (%)  related"
          " | +jac: pairs docs")


def best(results, rule):
    """Per kind: the best F1 at precision ≥ TARGET_PRECISION, and the best F1 overall."""
    out = {}
    for kind in dict.fromkeys(r["kind"] for r in results):
        rows = [(r["pairs"][rule]["overall"], r["threshold"]) for r in results
                if r["kind"] == kind]
        ok = [x for x in rows if x[0]["precision"] >= TARGET_PRECISION]
        pick = lambda xs: max(xs, key=lambda x: x[0]["f1"]) if xs else None  # noqa: E731
        out[kind] = {"at_precision": summary(pick(ok)), "overall": summary(pick(rows))}
    return out


def summary(row):
    if row is None:
        return None
    o, t = row
    return {"threshold": t, **{k: o[k] for k in ("precision", "recall", "f1", "tp", "fp", "fn_")}}


def print_best(results):
    for rule in ("lsh", "lsh+jac"):
        print(f"\nbest per kind, rule {rule} (F1 at precision >= {TARGET_PRECISION}; best F1)")
        for kind, b in best(results, rule).items():
            at, top = b["at_precision"], b["overall"]
            at_s = (f"t {at['threshold']:.1f}: F1 {at['f1']:.4f} P {at['precision']:.4f} "
                    f"R {at['recall']:.4f}" if at else "none reaches it")
            print(f"  {kind:<12} {at_s:<42} | t {top['threshold']:.1f}: F1 {top['f1']:.4f} "
                  f"P {top['precision']:.4f} R {top['recall']:.4f}")


def print_classes(results):
    """Per class (recall of duplicate classes, FP rate of the others) for each kind's best
    configuration at the target precision (else its best F1, marked *), rule lsh."""
    chosen, heads = [], []
    for kind, b in best(results, "lsh").items():
        t = (b["at_precision"] or b["overall"])["threshold"]
        chosen += [r for r in results if r["kind"] == kind and r["threshold"] == t]
        heads.append(f"{kind} {t}{'' if b['at_precision'] else '*'}")
    print("\nper class, rule lsh (recall of duplicate classes, FP rate of the others; "
          f"each kind at its best F1 with precision >= {TARGET_PRECISION}, * none: best F1)")
    print(f"  {'class':<28}" + "".join(f"{h:>18}" for h in heads))
    for cls in chosen[0]["pairs"]["lsh"]["by_class"]:
        cells = []
        for r in chosen:
            c = r["pairs"]["lsh"]["by_class"][cls]
            if c["tp"] + c["fn_"]:
                cells.append(f"R {c['recall']:.2f}")
            else:
                cells.append(f"FP {c['false_positive_rate']:.2f}")
        print(f"  {cls:<28}" + "".join(f"{x:>18}" for x in cells))


def parse_args():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter,
                                epilog=__doc__.split("\n\n", 1)[1])
    p.add_argument("dir", nargs="?", default="../shared/data/dev",
                   help="the labelled set's directory (default ../shared/data/dev)")
    p.add_argument("--kinds", default=KINDS, help=f"shingle kinds (default {KINDS})")
    p.add_argument("--thresholds", default=THRESHOLDS,
                   help=f"LSH thresholds (default {THRESHOLDS})")
    p.add_argument("--num-perm", type=int, default=NUM_PERM, help="MinHash permutations")
    p.add_argument("--seed", type=int, default=1,
                   help="MinHash seed (datasketch's default 1): another draw of the permutations")
    p.add_argument("--processes", type=int, default=mp.cpu_count(),
                   help="signature worker processes (default: one per core)")
    p.add_argument("--json", metavar="FILE", help="also write every figure as JSON to FILE")
    a = p.parse_args()
    kinds = [parse_kind(k.strip()) for k in a.kinds.split(",") if k.strip()]
    try:
        thresholds = [float(t) for t in a.thresholds.split(",")]
    except ValueError:
        p.error(f"--thresholds {a.thresholds!r}: expected numbers such as {THRESHOLDS}")
    if not all(0 < t < 1 for t in thresholds):
        p.error("--thresholds: each must be between 0 and 1 (exclusive)")
    return a, kinds, thresholds


def main():
    a, kinds, thresholds = parse_args()
    start = time.time()
    docs, pairs = load(a.dir)
    ids = list(docs)
    print(f"{len(docs)} documents ({sum(v[2] for v in docs.values())} base), {len(pairs)} pairs; "
          f"datasketch {datasketch.__version__}, {a.num_perm} permutations, seed {a.seed}, "
          f"{a.processes} processes")
    trigrams = Trigrams(docs)
    results, sign_seconds = [], {}
    with mp.Pool(a.processes, initializer=init_worker,
                 initargs=([(docs[d][0], docs[d][1]) for d in ids], a.num_perm, a.seed)) as pool:
        for kind in kinds:
            t0 = time.time()
            sigs = signatures(pool, kind, ids)
            sign_seconds[kind["name"]] = round(time.time() - t0, 2)
            print(f"\n{kind['name']}: signatures in {sign_seconds[kind['name']]:.1f} s\n{HEADER}")
            for t in thresholds:
                results.append(run_config(kind, t, sigs, docs, pairs, trigrams, a.num_perm))
                print(line(results[-1]), flush=True)
    print_best(results)
    print_classes(results)
    print(f"\ntotal {time.time() - start:.1f} s")
    if a.json:
        write_json(a, results, sign_seconds)


def write_json(a, results, sign_seconds):
    out = {"dir": a.dir, "datasketch": datasketch.__version__, "num_perm": a.num_perm,
           "seed": a.seed, "scheme": MinHash(num_perm=1).scheme,
           "target_precision": TARGET_PRECISION, "signature_seconds": sign_seconds,
           "best": {rule: best(results, rule) for rule in ("lsh", "lsh+jac")},
           "configs": results}
    with open(a.json, "w", encoding="utf-8") as f:
        json.dump(out, f, indent=1)
    print(f"report written to {a.json}")


if __name__ == "__main__":
    main()
