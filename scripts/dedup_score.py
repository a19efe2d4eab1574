#!/usr/bin/env python3
"""Scores `simstore dedup` clusters against the ground truth of the input records.

    simstore dedup corpus.jsonl --text-field content --json > clusters.jsonl
    scripts/dedup_score.py --clusters clusters.jsonl --truth cluster corpus.jsonl

FILES are the JSONL inputs of the dedup (gzip'd if they end in .gz), in the same order;
a record's id is its --id-field ("id"), else its line number, as `simstore dedup` names it
(one input file then). --truth names the fields that hold a record's true group, the first
present one counting (`cluster` for scripts/gen_dedup_corpus.py; `base_id,id` for the
development set, whose variants name their base document). A dedup keeps the first record
(in input order) of each cluster and every record in none.

Prints one JSON object: records, true groups (what a perfect dedup keeps), kept, originals
lost (a record that is the first of its true group, or alone in it, and is dropped), true
duplicates missed (a later record of a true group that is kept), wrong joins (a dropped
record whose cluster keeps a record of another true group), the largest cluster, and with
--split-of UF.jsonl (the clusters of a --transitive run of the same rule) how many of those
connected components the leader clustering split (kept two or more records of).
"""
import argparse
import gzip
import json


def records(files, id_field, truth_fields):
    """(id, truth) of every record of FILES, in input order."""
    out = []
    for name in files:
        opener = gzip.open if name.endswith(".gz") else open
        with opener(name, "rt", encoding="utf-8") as f:
            for line_no, line in enumerate(f, 1):
                if not line.strip():
                    continue
                r = json.loads(line)
                rid = r.get(id_field)
                rid = str(line_no) if rid is None else str(rid)
                truth = next(r[t] for t in truth_fields if r.get(t) is not None)
                out.append((rid, str(truth)))
    return out


def clusters(path):
    with open(path, encoding="utf-8") as f:
        return [json.loads(line)["ids"] for line in f if line.strip()]


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--clusters", required=True, help="dedup --json output")
    p.add_argument("--truth", required=True, help="comma-separated truth fields")
    p.add_argument("--id-field", default="id")
    p.add_argument("--split-of", help="the --transitive run's clusters, to count splits")
    p.add_argument("files", nargs="+")
    a = p.parse_args()
    recs = records(a.files, a.id_field, a.truth.split(","))
    order = {rid: i for i, (rid, _) in enumerate(recs)}
    truth = [t for _, t in recs]
    kept = [True] * len(recs)
    leader_of = list(range(len(recs)))
    cl = clusters(a.clusters)
    for c in cl:
        members = sorted(order[i] for i in c)
        for m in members[1:]:
            kept[m] = False
            leader_of[m] = members[0]
    first_of_group = {}
    for i, t in enumerate(truth):
        first_of_group.setdefault(t, i)
    is_first = [first_of_group[t] == i for i, t in enumerate(truth)]
    result = {
        "records": len(recs),
        "true_groups": len(first_of_group),
        "kept": sum(kept),
        "originals_lost": sum(1 for i in range(len(recs)) if is_first[i] and not kept[i]),
        "duplicates_missed": sum(1 for i in range(len(recs)) if not is_first[i] and kept[i]),
        "wrong_joins": sum(1 for i in range(len(recs))
                           if not kept[i] and truth[leader_of[i]] != truth[i]),
        "largest_cluster": max((len(c) for c in cl), default=0),
        "clusters": len(cl),
    }
    if a.split_of:
        result["components"] = 0
        result["components_split"] = 0
        for c in clusters(a.split_of):
            result["components"] += 1
            if sum(kept[order[i]] for i in c) >= 2:
                result["components_split"] += 1
    print(json.dumps(result))


if __name__ == "__main__":
    main()
