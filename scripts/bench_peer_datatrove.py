#!/usr/bin/env python3
"""datatrove's MinHash dedup (its 4 stages, as examples/minhash_deduplication.py), local executor.

    bench_peer_datatrove.py PARQUET_DIR WORK_DIR [--workers 2]

Reads PARQUET_DIR/*.parquet (text "content", id "url"), default MinhashConfig() (5-grams,
14 buckets x 8 hashes, 64-bit xxhash), English word tokenizer; writes the kept rows to
WORK_DIR/output/*.parquet (ParquetWriter; the "id" column is the url). Stages 1 and 4 run
one task per input shard, stage 2 one task per bucket, stage 3 one task; `--workers`
processes at a time. Part of scripts/bench_dedup_peers.sh.
"""
import argparse
import glob
import os

from datatrove.executor.local import LocalPipelineExecutor
from datatrove.pipeline.dedup import MinhashDedupSignature
from datatrove.pipeline.dedup.minhash import (MinhashConfig, MinhashDedupBuckets, MinhashDedupCluster,
                                              MinhashDedupFilter)
from datatrove.pipeline.readers import ParquetReader
from datatrove.pipeline.writers import ParquetWriter
from datatrove.utils.typeshelper import Languages


def main():
    p = argparse.ArgumentParser()
    p.add_argument("input")
    p.add_argument("work")
    p.add_argument("--workers", type=int, default=2)
    a = p.parse_args()
    cfg = MinhashConfig()
    tasks = len(glob.glob(os.path.join(a.input, "*.parquet")))
    w = a.work

    def reader():
        return ParquetReader(a.input, text_key="content", id_key="url", glob_pattern="*.parquet")

    stage1 = LocalPipelineExecutor(
        pipeline=[reader(), MinhashDedupSignature(output_folder=f"{w}/signatures", config=cfg, language=Languages.english)],
        tasks=tasks, workers=a.workers, logging_dir=f"{w}/logs/signatures")
    stage2 = LocalPipelineExecutor(
        pipeline=[MinhashDedupBuckets(input_folder=f"{w}/signatures", output_folder=f"{w}/buckets", config=cfg)],
        tasks=cfg.num_buckets, workers=a.workers, logging_dir=f"{w}/logs/buckets", depends=stage1)
    stage3 = LocalPipelineExecutor(
        pipeline=[MinhashDedupCluster(input_folder=f"{w}/buckets", output_folder=f"{w}/remove_ids", config=cfg)],
        tasks=1, logging_dir=f"{w}/logs/clusters", depends=stage2)
    stage4 = LocalPipelineExecutor(
        pipeline=[reader(),
                  MinhashDedupFilter(input_folder=f"{w}/remove_ids",
                                     exclusion_writer=ParquetWriter(f"{w}/removed")),
                  ParquetWriter(output_folder=f"{w}/output")],
        tasks=tasks, workers=a.workers, logging_dir=f"{w}/logs/filter", depends=stage3)
    stage4.run()


if __name__ == "__main__":
    main()
