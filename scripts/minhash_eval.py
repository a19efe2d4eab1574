#!/usr/bin/env python3
"""datasketch's MinHash-LSH on the labelled development set, measured as `simstore eval`
measures SimHash (docs/quality.md), so the two can be set side by side. datasketch is not
a dependency of simstore: install it in a venv of your own:

    python3 -m venv /tmp/mh && /tmp/mh/bin/pip install datasketch numpy
    /tmp/mh/bin/python scripts/minhash_eval.py ../shared/data/dev --json minhash.json
    /tmp/mh/bin/python scripts/minhash_eval.py ../shared/data/dev --pipeline strong

The set's directory holds docs.jsonl.gz (base documents), variants.jsonl.gz and
pairs.jsonl.gz (see its README); a missing variants or pairs file is read as empty, so a
directory of unrelated documents only can be measured too (then only the base-document
check below means anything, and the script says so). A document's text is
`title + "\\n" + text`, lowercased. Shingle kinds (--kinds, comma-separated):
  charN          character N-grams of the text with whitespace dropped, every language;
  wordN+charM    English (and any language but zh): word N-grams, a word being a run of
                 letters, digits and `_` (regex \\w+: punctuation dropped, as text-dedup
                 splits on non-alphanumerics); Chinese: character M-grams (whitespace
                 dropped); word3+char5 is the strong pipeline's;
  wswordN+charM  the same with words split on whitespace (punctuation kept on the words,
                 as scripts/minhash_dedup.py).
A text shorter than N is one shingle; a text with none is not inserted (its pairs count
"not duplicate", as an unfingerprintable document in `simstore eval`).

MinHash signatures (128 permutations, seed 1, datasketch's default permutation scheme) are
computed once per kind by a pool of worker processes (one per core; the texts go to them
with the jobs). Two modes:

The grid (default): for every LSH threshold (--thresholds) one MinHashLSH holds all
documents, base and variants, keyed by id; datasketch picks its bands b and rows r from the
threshold. Two rules are reported:
  lsh      (the main one: what a datasketch user gets) a pair is predicted duplicate when
           querying the index with a's signature returns b;
  lsh+jac  the same and the signatures' estimated Jaccard is at least the threshold.
One line is printed per configuration, then the best ones per kind and their per-class
table.

--pipeline strong: MinHash as its strongest users run it (the reference simstore is
compared with): shingles word3+char5, candidates from an LSH index at threshold 0.3 (b 37
bands x r 3 rows, datasketch's choice for 128 permutations), a candidate kept when the
signatures' estimated Jaccard (all 128 values, MinHash.jaccard) is at least t, for each t of
--verify (default 0.3, 0.35, ..., 0.7; 0.55 the reference): one candidate set, the sweep
applied to it. One line per rule (`lsh`: the candidates; `jac>=t`), then the per-class table
of the candidates and t = 0.5, 0.55. For memory on large sets (~250,000 documents: a few
hundred MB) the signatures are one n x 128 uint32 array, and the index is not a MinHashLSH:
per band, the documents are sorted by the band's r values and each run of equal ones gives
its pairs, which are the documents MinHashLSH.query reports (its bucket key is those values;
--check-datasketch builds the MinHashLSH as well and checks that they agree, for small sets).
Memory and work grow with the candidate pairs found, not with the square of the documents.

In both modes: precision, recall, F1, tp/fp/fn/tn overall, per language, per length bucket
and per `lang:class`, as `simstore eval` (src/tools/eval.rs, `evaluate`). Unlabelled check,
as `base_collisions`: every pair of base documents (no `base_id`) that the rule reports,
split by their character 3-gram Jaccard (title + text, whitespace dropped, lowercased;
unrelated below 0.2); the unrelated pairs and the documents in one are false matches a store
would report. --json FILE writes everything. At the end the peak resident memory of the main
process and of the largest worker is printed.
"""
import argparse
import gzip
import json
import multiprocessing as mp
import os
import re
import sys
import resource
import time
from collections import OrderedDict, defaultdict
from types import SimpleNamespace

try:
    import numpy as np
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

def init_worker(num_perm, seed):
    global PERMS, SEED
    PERMS, SEED = num_perm, seed


def sign(job):
    """The MinHash hash values (uint32) of one document's text for `kind`, or None when it
    has no shingles."""
    kind, lang, text = job
    grams = shingles(kind, lang, text)
    if not grams:
        return None
    m = MinHash(num_perm=PERMS, seed=SEED)
    m.update_batch([g.encode("utf-8") for g in grams])
    return m.hashvalues


def hash_values(pool, kind, texts):
    """The hash values of every (lang, text) of `texts`, in order, computed by the pool (the
    texts travel with the jobs, so a worker holds only the chunk it works on)."""
    return pool.imap(sign, ((kind, lang, text) for lang, text in texts), chunksize=256)


def signatures(pool, kind, docs, seed):
    """id -> LeanMinHash (None for a document without shingles), for every document."""
    scheme = MinHash(num_perm=1).scheme
    return {d: None if h is None else LeanMinHash(seed=seed, hashvalues=h, scheme=scheme)
            for d, h in zip(docs, hash_values(pool, kind, (v[:2] for v in docs.values())))}


# --- loading -----------------------------------------------------------------------------

def read_jsonl(path):
    with gzip.open(path, "rt", encoding="utf-8") as f:
        for n, line in enumerate(f, 1):
            if line.strip():
                try:
                    yield json.loads(line)
                except json.JSONDecodeError as e:
                    sys.exit(f"{path}:{n}: not JSON ({e}); is this the labelled set?")


def check_dir(directory):
    """Exits when the set has no docs.jsonl.gz; notes a missing variants or pairs file (read
    as empty)."""
    if not os.path.isfile(os.path.join(directory, FILES[0])):
        sys.exit(f"{directory}: no {FILES[0]}; give the labelled set's directory "
                 "(default ../shared/data/dev, run from the repository root)")
    absent = [f for f in FILES[1:] if not os.path.isfile(os.path.join(directory, f))]
    if absent:
        print(f"note: {directory} has no {', '.join(absent)}: read as empty", file=sys.stderr)


def doc_records(directory):
    """(id, lang, title + "\\n" + text, is_base) of every document: docs.jsonl.gz, then
    variants.jsonl.gz when there is one."""
    for name in FILES[:2]:
        path = os.path.join(directory, name)
        for d in read_jsonl(path) if os.path.isfile(path) else ():
            require(d, ("id",), name)
            title, text = d.get("title") or "", d.get("text") or ""
            yield d["id"], d.get("lang") or "", f"{title}\n{text}", d.get("base_id") is None


def load_pairs(directory):
    """The labelled pairs (none when the set has no pairs.jsonl.gz)."""
    path = os.path.join(directory, FILES[2])
    pairs = list(read_jsonl(path)) if os.path.isfile(path) else []
    for pair in pairs:
        require(pair, ("a", "b", "label"), FILES[2])
    return pairs


def load(directory):
    """Documents {id: (lang, title + "\\n" + text, is_base)} and pairs, for the grid (the
    pipeline keeps no text: it reads the set as it hashes it)."""
    docs = {d: (lang, text, base) for d, lang, text, base in doc_records(directory)}
    return docs, load_pairs(directory)


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
    """Character 3-gram sets of documents given as {key: title + "\\n" + text} (eval.rs:
    char_trigrams of title and text; whitespace is dropped, so the "\\n" between them does
    not count), the last `keep` computed kept (pairs come sorted by their first document)."""

    def __init__(self, texts, keep=4096):
        self.texts, self.sets, self.keep = texts, OrderedDict(), keep

    def jaccard(self, a, b):
        x, y = self.get(a), self.get(b)
        union = len(x | y)
        return len(x & y) / union if union else 1.0

    def get(self, d):
        if d in self.sets:
            self.sets.move_to_end(d)
        else:
            self.sets[d] = char_grams(self.texts[d], 3)
            if len(self.sets) > self.keep:
                self.sets.popitem(last=False)
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


# --- the named pipeline: LSH candidates, then a sweep of estimated-Jaccard thresholds -----

PIPELINES = {
    # MinHash as its strongest users run it: candidates from an LSH index at 0.3, kept
    # when the signatures' estimated Jaccard reaches t (0.55 the reference).
    "strong": {"kind": "word3+char5", "lsh": 0.3,
               "verify": "0.3,0.35,0.4,0.45,0.5,0.55,0.6,0.65,0.7"},
}
CLASS_COLUMNS = (0.5, 0.55)  # the per-class table's verification thresholds


BLOCK = 8192  # signature rows allocated at a time


def read_and_sign(pool, kind, directory, num_perm):
    """Reads the set's documents as the pool hashes them (their texts are not kept): the
    ids, which are base documents, the hash values as one n x num_perm uint32 array
    (datasketch's affine32 values fit) and which documents have shingles. Of a repeated id
    the last record counts (as in load); the others are left unsigned."""
    c = SimpleNamespace(ids=[], is_base=[], signed=[])

    def texts():
        for d, lang, text, is_base in doc_records(directory):
            c.ids.append(d)
            c.is_base.append(is_base)
            yield lang, text

    blocks = []
    for i, h in enumerate(hash_values(pool, kind, texts())):
        if i % BLOCK == 0:
            blocks.append(np.zeros((BLOCK, num_perm), dtype=np.uint32))
        if h is not None:
            blocks[-1][i % BLOCK] = h
        c.signed.append(h is not None)
    n = len(c.ids)
    c.sig = np.concatenate(blocks)[:n] if blocks else np.zeros((0, num_perm), dtype=np.uint32)
    c.signed, c.is_base = np.array(c.signed, dtype=bool), np.array(c.is_base, dtype=bool)
    c.index = {d: i for i, d in enumerate(c.ids)}
    repeated = [i for i, d in enumerate(c.ids) if c.index[d] != i]
    if repeated:
        c.signed[repeated] = c.is_base[repeated] = False
        print(f"warning: {len(repeated)} records repeat an earlier id; the last one counts")
    return c


def pair_stats(sig, ia, ib, b, r, chunk=50_000):
    """For the index pairs (ia[k], ib[k]): whether they share one of the b bands of r hash
    values (the documents MinHashLSH.query reports: its bucket key is the band's values) and
    their estimated Jaccard, computed as MinHash.jaccard."""
    cand, est = np.zeros(len(ia), dtype=bool), np.zeros(len(ia))
    for s in range(0, len(ia), chunk):
        eq = sig[ia[s:s + chunk]] == sig[ib[s:s + chunk]]
        cand[s:s + chunk] = eq[:, :b * r].reshape(len(eq), b, r).all(axis=2).any(axis=1)
        est[s:s + chunk] = np.count_nonzero(eq, axis=1) / float(sig.shape[1])
    return cand, est


def band_pairs(sig, rows, b, r):
    """Every pair of the documents `rows` that shares a band, as sorted distinct codes
    lo * n + hi: per band, the rows sorted by the band's values and each run of equal ones
    paired. Memory grows with the pairs found, not with the square of the documents."""
    n, codes = sig.shape[0], np.zeros(0, dtype=np.int64)
    for k in range(b):
        cols = sig[rows, k * r:(k + 1) * r]
        order = np.lexsort(cols.T[::-1])
        ranked = cols[order]
        first = np.ones(len(ranked), dtype=bool)
        first[1:] = np.any(ranked[1:] != ranked[:-1], axis=1)
        group = np.cumsum(first) - 1
        start = np.flatnonzero(first)
        size = np.diff(np.append(start, len(ranked)))
        pos = np.flatnonzero(size[group] > 1)
        after = size[group[pos]] - (pos - start[group[pos]]) - 1  # members behind pos
        found, d = [], 1
        while True:
            keep = after >= d
            pos, after = pos[keep], after[keep]
            if not len(pos):
                break
            x, y = rows[order[pos]], rows[order[pos + d]]
            found.append(np.minimum(x, y) * n + np.maximum(x, y))
            d += 1
        if found:
            codes = sorted_distinct(np.concatenate([codes] + found))
    return codes


def sorted_distinct(values):
    """The distinct values, sorted (np.unique's hash path is slow on millions of codes)."""
    values = np.sort(values)
    keep = np.ones(len(values), dtype=bool)
    keep[1:] = values[1:] != values[:-1]
    return values[keep]


def pipeline_rules(verify):
    return ["lsh"] + [f"jac>={t:g}" for t in verify]


def labelled_reports(sig, signed, index, pairs, b, r, verify):
    """Reports of rule `lsh` (an LSH candidate) and `jac>=t` (a candidate whose estimated
    Jaccard is at least t) on the labelled pairs."""
    known = [p for p in pairs if p["a"] in index and p["b"] in index]
    ia = np.array([index[p["a"]] for p in known], dtype=np.int64)
    ib = np.array([index[p["b"]] for p in known], dtype=np.int64)
    cand, est = pair_stats(sig, ia, ib, b, r)
    both = signed[ia] & signed[ib]
    cand &= both
    out = {}
    predictions = [cand] + [cand & (est >= t) for t in verify]
    for rule, predicted in zip(pipeline_rules(verify), predictions):
        rep = new_report()
        rep["pairs"], rep["missing"] = len(known), len(pairs) - len(known)
        rep["unsigned"] = int(np.count_nonzero(~both))
        for pair, x in zip(known, predicted.tolist()):
            count_pair(rep, pair, x)
        out[rule] = finish(rep)
    return out


def texts_of(directory, rows):
    """{row: title + "\\n" + text} of the given document rows, read from the set again."""
    want = set(rows.tolist())
    return {i: text for i, (_, _, text, _) in enumerate(doc_records(directory)) if i in want}


def base_collisions(c, codes, b, r, verify, trigrams):
    """Per rule: the base-document pairs (`codes`, from band_pairs) it reports, unrelated
    (character 3-gram Jaccard below UNRELATED_JACCARD) and related, and the documents in an
    unrelated pair."""
    ia, ib = codes // len(c.ids), codes % len(c.ids)
    _, est = pair_stats(c.sig, ia, ib, b, r)
    related = np.fromiter((trigrams.jaccard(x, y) >= UNRELATED_JACCARD
                           for x, y in zip(ia.tolist(), ib.tolist())), dtype=bool, count=len(ia))
    out = {}
    for rule, kept in zip(pipeline_rules(verify),
                          [np.ones(len(ia), dtype=bool)] + [est >= t for t in verify]):
        bad = kept & ~related
        out[rule] = {"base_documents": int(c.is_base.sum()),
                     "signed_base_documents": int(np.count_nonzero(c.is_base & c.signed)),
                     "unrelated_pairs": int(bad.sum()),
                     "related_pairs": int(np.count_nonzero(kept & related)),
                     "unrelated_documents": len(np.union1d(ia[bad], ib[bad]))}
    return out


def check_datasketch(c, pairs, threshold, args, codes, candidates):
    """Checks that datasketch's own MinHashLSH reports the same candidates (base pairs and
    labelled pairs) as the banding here. Holds every band in dicts: small sets only."""
    scheme = MinHash(num_perm=1).scheme
    lean = {d: LeanMinHash(seed=args.seed, hashvalues=c.sig[i], scheme=scheme)
            for d, i in c.index.items() if c.signed[i]}
    lsh = MinHashLSH(threshold=threshold, num_perm=args.num_perm)
    with lsh.insertion_session() as session:
        for d, m in lean.items():
            session.insert(d, m, check_duplication=False)
    base = {d for d in lean if c.is_base[c.index[d]]}
    theirs = {tuple(sorted((c.index[a], c.index[b])))
              for a in base for b in lsh.query(lean[a]) if b in base and b != a}
    ours = {(int(x) // len(c.ids), int(x) % len(c.ids)) for x in codes}
    labelled = [p for p in pairs if p["a"] in lean and p["b"] in lean]
    hits = sum(p["b"] in set(lsh.query(lean[p["a"]])) for p in labelled)
    same = theirs == ours and hits == candidates
    print(f"datasketch MinHashLSH({threshold}) check: base pairs {len(theirs)} (here "
          f"{len(ours)}), labelled candidates {hits} (here {candidates}): "
          f"{'the same' if same else 'DIFFERENT'}")
    return same


def run_pipeline(pool, name, directory, args):
    """The named pipeline on one set: signatures once, one LSH candidate set, the sweep."""
    spec, clock = PIPELINES[name], {}
    kind, verify = parse_kind(spec["kind"]), args.verify
    t0 = time.time()
    pairs = load_pairs(directory)
    c = read_and_sign(pool, kind, directory, args.num_perm)
    clock["signatures"] = round(time.time() - t0, 1)
    print_set(args, len(c.index), int(c.is_base.sum()), len(pairs))
    probe = MinHashLSH(threshold=spec["lsh"], num_perm=args.num_perm)  # datasketch's b and r
    b, r = probe.b, probe.r
    print(f"pipeline {name}: shingles {kind['name']}, MinHashLSH threshold {spec['lsh']} "
          f"(datasketch: b {b} bands x r {r} rows), verification at estimated Jaccard >= t; "
          f"read and hashed in {clock['signatures']} s (main process {peak_mb()} MB so far), "
          f"{int(c.signed.sum())} documents with shingles", flush=True)
    t0 = time.time()
    labelled = labelled_reports(c.sig, c.signed, c.index, pairs, b, r, verify)
    codes = band_pairs(c.sig, np.flatnonzero(c.is_base & c.signed), b, r)
    clock["candidates"] = round(time.time() - t0, 1)
    print(f"{len(codes)} candidate pairs of base documents in {clock['candidates']} s",
          flush=True)
    t0 = time.time()
    texts = texts_of(directory, np.union1d(codes // len(c.ids), codes % len(c.ids)))
    coll = base_collisions(c, codes, b, r, verify, Trigrams(texts))
    clock["trigram_check"] = round(time.time() - t0, 1)
    out = {"pipeline": name, **spec, "verify": verify, "kind": kind["name"], "b": b, "r": r,
           "documents": len(c.ids), "labelled": labelled, "collisions": coll, "seconds": clock}
    if args.check_datasketch:
        o = labelled["lsh"]["overall"]
        out["datasketch_same"] = check_datasketch(c, pairs, spec["lsh"], args, codes,
                                                  o["tp"] + o["fp"])
    return out, bool(pairs)


def peak_mb(who=resource.RUSAGE_SELF):
    """Peak resident memory in MB of this process (or of its largest finished child)."""
    return resource.getrusage(who).ru_maxrss // 1024


def print_set(args, n_docs, n_base, n_pairs):
    print(f"{args.dir}: {n_docs} documents ({n_base} base), {n_pairs} pairs; datasketch "
          f"{datasketch.__version__}, {args.num_perm} permutations, seed {args.seed}, "
          f"{args.processes} processes", flush=True)


NO_PAIRS = ("no labelled pairs: only the base documents in an unrelated pair (and the number "
            "of base documents) mean anything here")
PIPE_HEADER = ("rule           F1  precision recall   F1 en   F1 zh     tp    fp    fn"
               " | base docs in an unrelated pair     unrelated pairs  related pairs")


def print_pipeline(res, has_pairs):
    """One line per rule (the LSH candidates, then each t), then the per-class table."""
    if not has_pairs:
        print(NO_PAIRS)
    print(PIPE_HEADER)
    for rule in pipeline_rules(res["verify"]):
        rep, c = res["labelled"][rule], res["collisions"][rule]
        o, by = rep["overall"], rep["by_lang"]
        f1 = lambda lang: f"{by[lang]['f1']:8.4f}" if lang in by else "       -"  # noqa: E731
        scored = (f"{o['f1']:7.4f}{o['precision']:10.4f}{o['recall']:8.4f}{f1('en')}{f1('zh')}"
                  f"{o['tp']:7}{o['fp']:6}{o['fn_']:6}") if has_pairs else f"{'-':>7}" + " " * 53
        docs, of = c["unrelated_documents"], c["base_documents"]
        print(f"{rule:<10}{scored} | {docs:7} of {of:7} ({100 * docs / max(of, 1):6.3f} %)"
              f"{c['unrelated_pairs']:14}{c['related_pairs']:15}")
    if has_pairs:
        print_pipeline_classes(res)


def print_pipeline_classes(res):
    """Recall of each duplicate class and false-positive rate of each other one, for the
    LSH candidates and at the CLASS_COLUMNS thresholds."""
    rules = ["lsh"] + [f"jac>={t:g}" for t in CLASS_COLUMNS if t in res["verify"]]
    print("\nper class (R recall of a duplicate class, FP false-positive rate of the others)")
    print(f"  {'class':<28}" + "".join(f"{x:>12}" for x in rules))
    for cls in res["labelled"]["lsh"]["by_class"]:
        cells = []
        for rule in rules:
            c = res["labelled"][rule]["by_class"][cls]
            cells.append(f"R {c['recall']:.3f}" if c["tp"] + c["fn_"]
                         else f"FP {c['false_positive_rate']:.3f}")
        print(f"  {cls:<28}" + "".join(f"{x:>12}" for x in cells))


def parse_args():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter,
                                epilog=__doc__.split("\n\n", 1)[1])
    p.add_argument("dir", nargs="?", default="../shared/data/dev",
                   help="the labelled set's directory (default ../shared/data/dev)")
    p.add_argument("--kinds", default=KINDS, help=f"shingle kinds (default {KINDS})")
    p.add_argument("--thresholds", default=THRESHOLDS,
                   help=f"LSH thresholds (default {THRESHOLDS})")
    p.add_argument("--pipeline", choices=sorted(PIPELINES),
                   help="run this named pipeline instead of the grid of --kinds x --thresholds")
    p.add_argument("--verify", help="the pipeline's estimated-Jaccard thresholds "
                   f"(default {PIPELINES['strong']['verify']})")
    p.add_argument("--check-datasketch", action="store_true",
                   help="with --pipeline: also build datasketch's MinHashLSH and check that it "
                   "reports the same candidates (memory: small sets only)")
    p.add_argument("--num-perm", type=int, default=NUM_PERM, help="MinHash permutations")
    p.add_argument("--seed", type=int, default=1,
                   help="MinHash seed (datasketch's default 1): another draw of the permutations")
    p.add_argument("--processes", type=int, default=mp.cpu_count(),
                   help="signature worker processes (default: one per core)")
    p.add_argument("--json", metavar="FILE", help="also write every figure as JSON to FILE")
    a = p.parse_args()
    kinds = [parse_kind(k.strip()) for k in a.kinds.split(",") if k.strip()]
    thresholds = numbers(p, "--thresholds", a.thresholds)
    if a.pipeline:
        a.verify = numbers(p, "--verify", a.verify or PIPELINES[a.pipeline]["verify"])
    elif a.verify or a.check_datasketch:
        p.error("--verify and --check-datasketch go with --pipeline")
    return a, kinds, thresholds


def numbers(p, option, text):
    """A comma-separated list of thresholds, each strictly between 0 and 1."""
    try:
        values = [float(t) for t in text.split(",")]
    except ValueError:
        p.error(f"{option} {text!r}: expected numbers such as {THRESHOLDS}")
    if not all(0 < t < 1 for t in values):
        p.error(f"{option}: each must be between 0 and 1 (exclusive)")
    return values


def run_grid(pool, kinds, thresholds, docs, pairs, args):
    """Every kind x LSH threshold: one line each, then the best ones and their classes."""
    trigrams = Trigrams({d: v[1] for d, v in docs.items()})
    results, sign_seconds = [], {}
    for kind in kinds:
        t0 = time.time()
        sigs = signatures(pool, kind, docs, args.seed)
        sign_seconds[kind["name"]] = round(time.time() - t0, 2)
        print(f"\n{kind['name']}: signatures in {sign_seconds[kind['name']]:.1f} s\n{HEADER}")
        for t in thresholds:
            results.append(run_config(kind, t, sigs, docs, pairs, trigrams, args.num_perm))
            print(line(results[-1]), flush=True)
    print_best(results)
    print_classes(results)
    return results, sign_seconds


def main():
    a, kinds, thresholds = parse_args()
    start = time.time()
    # The pool starts before the documents are read: its workers hold none of them.
    check_dir(a.dir)
    with mp.Pool(a.processes, initializer=init_worker, initargs=(a.num_perm, a.seed)) as pool:
        if a.pipeline:
            out, has_pairs = run_pipeline(pool, a.pipeline, a.dir, a)
        else:
            docs, pairs = load(a.dir)
            print_set(a, len(docs), sum(v[2] for v in docs.values()), len(pairs))
            if not pairs:
                print(NO_PAIRS)
            out = run_grid(pool, kinds, thresholds, docs, pairs, a)
    if a.pipeline:
        print_pipeline(out, has_pairs)
    print(f"\ntotal {time.time() - start:.1f} s; peak resident memory {peak_mb()} MB (main "
          f"process), {peak_mb(resource.RUSAGE_CHILDREN)} MB (largest worker)")
    if a.json:
        write_json(a, out)


def write_json(a, out):
    head = {"dir": a.dir, "datasketch": datasketch.__version__, "num_perm": a.num_perm,
            "seed": a.seed, "scheme": MinHash(num_perm=1).scheme}
    if a.pipeline:
        head.update(out)
    else:
        results, sign_seconds = out
        head.update({"target_precision": TARGET_PRECISION, "signature_seconds": sign_seconds,
                     "best": {rule: best(results, rule) for rule in ("lsh", "lsh+jac")},
                     "configs": results})
    with open(a.json, "w", encoding="utf-8") as f:
        json.dump(head, f, indent=1)
    print(f"report written to {a.json}")


if __name__ == "__main__":
    main()
