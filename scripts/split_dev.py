#!/usr/bin/env python3
"""Splits a labelled set (docs.jsonl.gz, variants.jsonl.gz, pairs.jsonl.gz; see the set's
README) into two sets of the same format by the `source` of the base documents:

    python3 scripts/split_dev.py ../shared/data/dev /tmp/devsplit

writes /tmp/devsplit/report (base documents of the --report-sources) and /tmp/devsplit/tune
(every other source): tune on one, report on the other, so that no figure reported was
tuned on the same texts. A variant goes with its base document (`base_id`); a pair goes to
the split that holds both its documents, and a pair whose documents fall on both sides is
dropped (their number is printed). stats.json and the README are not copied; counts per
split (documents, variants, pairs per language, positive and negative) are printed and
written to OUT/<split>/split.json. Standard library only. Write OUT outside the
repository: the development set is never copied into it.
"""
import argparse
import gzip
import json
import os
import sys
from collections import Counter

REPORT_SOURCES = "chnsenticorp_htl,iflytek,csldcp,bbc,readability"
SPLITS = ("tune", "report")


def read_jsonl(path):
    """The records of a gzip'd JSON Lines file (blank lines skipped)."""
    with gzip.open(path, "rt", encoding="utf-8") as f:
        for n, line in enumerate(f, 1):
            if line.strip():
                try:
                    yield line, json.loads(line)
                except json.JSONDecodeError as e:
                    sys.exit(f"{path}:{n}: not JSON ({e})")


def split_docs(src, report_sources, writers, counts):
    """Writes each base document to its split; returns {id: split}."""
    side = {}
    for line, d in read_jsonl(os.path.join(src, "docs.jsonl.gz")):
        s = "report" if d.get("source") in report_sources else "tune"
        side[d["id"]] = s
        writers[s]["docs.jsonl.gz"].write(line if line.endswith("\n") else line + "\n")
        counts[s][f"docs {d.get('lang', '?')}"] += 1
        counts[s][f"source {d.get('source')}"] += 1
    return side


def split_variants(src, side, writers, counts):
    """Writes each variant next to its base document; adds the variants to `side`."""
    orphans = 0
    for line, v in read_jsonl(os.path.join(src, "variants.jsonl.gz")):
        s = side.get(v.get("base_id"))
        if s is None:
            orphans += 1
            continue
        side[v["id"]] = s
        writers[s]["variants.jsonl.gz"].write(line if line.endswith("\n") else line + "\n")
        counts[s][f"variants {v.get('lang', '?')}"] += 1
    return orphans


def split_pairs(src, side, writers, counts):
    """Writes each pair to the split holding both documents; counts the others."""
    dropped = Counter()
    for line, p in read_jsonl(os.path.join(src, "pairs.jsonl.gz")):
        a, b = side.get(p["a"]), side.get(p["b"])
        kind = "positive" if p.get("label") == 1 else "negative"
        if a is None or b is None or a != b:
            dropped[f"{'unknown id' if a is None or b is None else 'across'} "
                    f"{p.get('lang', '?')} {kind}"] += 1
            continue
        writers[a]["pairs.jsonl.gz"].write(line if line.endswith("\n") else line + "\n")
        counts[a][f"pairs {p.get('lang', '?')} {kind}"] += 1
    return dropped


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter,
                                epilog=__doc__.split("\n\n", 1)[1])
    p.add_argument("src", help="the labelled set's directory (e.g. ../shared/data/dev)")
    p.add_argument("out", help="output directory (outside the repository); gets tune/ and report/")
    p.add_argument("--report-sources", default=REPORT_SOURCES,
                   help=f"sources of the report split, comma-separated (default {REPORT_SOURCES})")
    a = p.parse_args()
    report_sources = {s.strip() for s in a.report_sources.split(",") if s.strip()}
    names = ("docs.jsonl.gz", "variants.jsonl.gz", "pairs.jsonl.gz")
    missing = [n for n in names if not os.path.isfile(os.path.join(a.src, n))]
    if missing:
        sys.exit(f"{a.src}: no {', '.join(missing)}; give the labelled set's directory")
    if os.path.realpath(a.out) == os.path.realpath(a.src):
        sys.exit("the output directory must not be the input one")
    counts = {s: Counter() for s in SPLITS}
    writers = {}
    for s in SPLITS:
        os.makedirs(os.path.join(a.out, s), exist_ok=True)
        writers[s] = {n: gzip.open(os.path.join(a.out, s, n), "wt", encoding="utf-8")
                      for n in names}
    try:
        side = split_docs(a.src, report_sources, writers, counts)
        orphans = split_variants(a.src, side, writers, counts)
        dropped = split_pairs(a.src, side, writers, counts)
    finally:
        for files in writers.values():
            for f in files.values():
                f.close()
    report(a, report_sources, counts, orphans, dropped)


def report(a, report_sources, counts, orphans, dropped):
    """Prints the counts per split and writes them to OUT/<split>/split.json."""
    seen = {k[7:] for c in counts.values() for k in c if k.startswith("source ")}
    unknown = report_sources - seen
    if unknown:
        print(f"warning: no base document has source {', '.join(sorted(unknown))}")
    for s in SPLITS:
        c = counts[s]
        print(f"{s}: {os.path.join(a.out, s)}")
        for key in sorted(k for k in c if not k.startswith("source ")):
            print(f"  {key:<24}{c[key]:7}")
        print("  sources: " + ", ".join(f"{k[7:]} {v}" for k, v in sorted(c.items())
                                        if k.startswith("source ")))
        with open(os.path.join(a.out, s, "split.json"), "w", encoding="utf-8") as f:
            json.dump({"src": a.src, "report_sources": sorted(report_sources),
                       "split": s, "counts": dict(sorted(c.items()))}, f, indent=1)
    print(f"pairs dropped: {sum(dropped.values())}"
          + "".join(f"; {k} {v}" for k, v in sorted(dropped.items())))
    if orphans:
        print(f"variants dropped (base document not in docs.jsonl.gz): {orphans}")


if __name__ == "__main__":
    main()
