#!/usr/bin/env python3
"""rensa's documented dedup (README "Keep unique documents"), keep-first over a Parquet corpus.

    bench_peer_rensa.py PARQUET_DIR OUT.parquet [--text-field content]

RMinHashDeduplicator(threshold=0.8, num_perm=128, use_lsh=True) fed (id, text.split()) of
every row in file order, as the README shows; writes the rows it keeps (all columns) to
OUT.parquet. Part of scripts/bench_dedup_peers.sh.
"""
import argparse
import glob
import os

import pyarrow as pa
import pyarrow.parquet as pq
from rensa import RMinHashDeduplicator


def main():
    p = argparse.ArgumentParser()
    p.add_argument("input")
    p.add_argument("output")
    p.add_argument("--text-field", default="content")
    a = p.parse_args()
    dedup = RMinHashDeduplicator(threshold=0.8, num_perm=128, use_lsh=True)
    writer, base = None, 0
    for path in sorted(glob.glob(os.path.join(a.input, "*.parquet"))):
        pf = pq.ParquetFile(path)
        for batch in pf.iter_batches(batch_size=100_000):
            texts = batch.column(a.text_field).to_pylist()
            keep = dedup.add_pairs((str(base + i), t.split()) for i, t in enumerate(texts))
            base += len(texts)
            kept = batch.filter(pa.array(keep, pa.bool_()))
            if writer is None:
                writer = pq.ParquetWriter(a.output, kept.schema, compression="snappy")
            writer.write_batch(kept)
    if writer:
        writer.close()


if __name__ == "__main__":
    main()
