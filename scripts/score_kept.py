#!/usr/bin/env python3
"""Scores a dedup's kept rows against the ground truth of a corpus (scripts/gen_dedup_corpus_natural.py).

    scripts/score_kept.py CORPUS KEPT [--name TOOL]

CORPUS: the corpus's Parquet directory (or a .parquet/.jsonl file) with columns url and
cluster. KEPT: what a dedup kept — a Parquet file, a directory of Parquet files (searched
recursively), a JSONL file, or a Hugging Face `save_to_disk` directory (*.arrow); a kept
row is named by its "url" column, else its "id" column (datatrove writes the url there).
Prints one JSON object: records, true clusters (what a perfect dedup keeps), kept, copies
missed (kept rows whose cluster another kept row already has: kept - distinct clusters
kept), clusters lost (true clusters with no row kept: originals lost to wrong merges), and
unknown ids (kept ids not in the corpus; should be 0).
"""
import argparse
import glob
import json
import os

import pyarrow as pa
import pyarrow.parquet as pq


def table_files(path, exts):
    if os.path.isfile(path):
        return [path]
    return sorted(f for e in exts for f in glob.glob(os.path.join(path, "**", "*" + e), recursive=True))


def read_column(path, names):
    """Values of the first of NAMES present, over every file of PATH."""
    out = []
    for f in table_files(path, [".parquet", ".jsonl", ".arrow"]):
        if f.endswith(".jsonl"):
            with open(f, encoding="utf-8") as fh:
                for line in fh:
                    if line.strip():
                        r = json.loads(line)
                        out.append(next(r[n] for n in names if n in r))
            continue
        if f.endswith(".arrow"):
            with pa.memory_map(f) as src:
                try:
                    t = pa.ipc.open_stream(src).read_all()
                except pa.ArrowInvalid:
                    t = pa.ipc.open_file(src).read_all()
        else:
            schema = pq.read_schema(f)
            t = pq.read_table(f, columns=[next(n for n in names if n in schema.names)])
        name = next(n for n in names if n in t.column_names)
        out.extend(t.column(name).to_pylist())
    return out


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("corpus")
    p.add_argument("kept")
    p.add_argument("--name", default="")
    a = p.parse_args()
    urls = read_column(a.corpus, ["url"])
    clusters = read_column(a.corpus, ["cluster"])
    cluster_of = dict(zip(urls, clusters))
    kept = read_column(a.kept, ["url", "id"])
    known = [cluster_of[k] for k in kept if k in cluster_of]
    distinct = len(set(known))
    true_clusters = len(set(clusters))
    print(json.dumps({"tool": a.name, "records": len(urls), "true_clusters": true_clusters, "kept": len(kept),
                      "copies_missed": len(known) - distinct, "clusters_lost": true_clusters - distinct,
                      "unknown_ids": len(kept) - len(known)}))


if __name__ == "__main__":
    main()
