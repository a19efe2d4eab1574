"""The Python API against the `simstore` command on the same stores: same fingerprints, same
answers, whichever of the two wrote the store."""

from __future__ import annotations

import json
from pathlib import Path

import simstore
from conftest import SAMPLE, run_cli


def _cli_matches(line: dict) -> list:
    return [(m["id"], m["distance"], m["fp"], m.get("title"), m.get("url")) for m in line["matches"]]


def _py_matches(matches: list) -> list:
    return [(m.id, m.distance, m.fp.hex, m.title, m.url) for m in matches]


def test_same_fingerprints(cli: Path, sample: list, tmp_path: Path) -> None:
    out = run_cli(cli, tmp_path / "unused.db", "fingerprint", "--json", "--batch", str(SAMPLE)).stdout
    by_cli = {r["id"]: r["fp"] for r in map(json.loads, out.splitlines())}
    assert len(by_cli) == len(sample) == 300
    for r in sample:
        assert simstore.fingerprint(r["text"], title=r["title"]).hex == by_cli[r["id"]], r["id"]


def test_python_store_answers_like_the_cli(cli: Path, sample: list, tmp_path: Path) -> None:
    """Python writes the store; the CLI and Python query it and agree on every record."""
    db = tmp_path / "py.db"
    with simstore.Store(db) as store:
        for r in sample:
            assert store.insert(r["id"], r["text"], title=r["title"], url=r["url"]) == "inserted"
        py_answers = [store.query(r["text"], title=r["title"], k=3) for r in sample]
        py_batch = store.query_batch([{"text": r["text"], "title": r["title"]} for r in sample], k=3)
    out = run_cli(cli, db, "query", "--k", "3", "--batch", str(SAMPLE)).stdout
    cli_answers = [json.loads(line) for line in out.splitlines()]
    assert [a["query"] for a in cli_answers] == [r["id"] for r in sample]
    pairs = 0
    for r, cli_a, py_a, py_b in zip(sample, cli_answers, py_answers, py_batch):
        assert _py_matches(py_a) == _cli_matches(cli_a), r["id"]
        assert _py_matches(py_b) == _cli_matches(cli_a), r["id"]
        pairs += len(py_a) - 1
    assert pairs > 300, "the sample's near-duplicate groups are found"


def test_cli_store_read_from_python(cli: Path, sample: list, tmp_path: Path) -> None:
    """The CLI imports; Python opens the same store and sees the same documents, stats,
    check, clusters and matches."""
    db = tmp_path / "cli.db"
    run_cli(cli, db, "import", str(SAMPLE))
    cli_stats = json.loads(run_cli(cli, db, "stats", "--json").stdout)
    cli_check = json.loads(run_cli(cli, db, "check", "--json").stdout)
    cli_clusters = [json.loads(line)["ids"] for line in run_cli(cli, db, "dedup", "--k", "3").stdout.splitlines()]
    cli_doc = json.loads(run_cli(cli, db, "get", "--json", "zh-0001").stdout)
    fp = sample[7]
    cli_fp_query = [json.loads(x) for x in run_cli(
        cli, db, "query", "--json", "--k", "2", "--fp", simstore.fingerprint(fp["text"], title=fp["title"]).hex,
    ).stdout.splitlines()]
    with simstore.Store(db, read_only=True) as store:
        stats = store.stats()
        for key in ("docs", "format_version", "spec", "spec_version", "k_max", "blocks", "tables",
                    "prefix_bits", "expected_candidates_per_query", "observed_candidates_per_query",
                    "observed_candidates_max", "observed_queries", "expected_query_us"):
            assert stats[key] == cli_stats[key], key
        check = store.check()
        assert {k: check[k] for k in cli_check} == cli_check
        assert store.dedup(3) == cli_clusters
        doc = store.get("zh-0001")
        assert (doc.id, doc.fp.hex, doc.length, doc.time, doc.title, doc.url) == (
            cli_doc["id"], cli_doc["fp"], cli_doc["length"], cli_doc["time"], cli_doc["title"], cli_doc["url"])
        assert len(store) == 300 and all(r["id"] in store for r in sample)
        fp_matches = store.query(fp=simstore.fingerprint(fp["text"], title=fp["title"]), k=2)
        assert _py_matches(fp_matches) == [
            (m["id"], m["distance"], m["fp"], m.get("title"), m.get("url")) for m in cli_fp_query]


def test_check_and_insert_like_import_dedup(cli: Path, sample: list, tmp_path: Path) -> None:
    """`simstore import --dedup` and Store.check_and_insert, record by record, keep the same
    documents and report the same duplicates."""
    out = run_cli(cli, tmp_path / "cli.db", "import", "--dedup", "--k", "3", str(SAMPLE)).stdout
    cli_dups = {d["id"]: (d["duplicate_of"], d["distance"]) for d in map(json.loads, out.splitlines())}
    py_dups = {}
    with simstore.Store(tmp_path / "py.db") as store:
        for r in sample:
            res = store.check_and_insert(r["id"], r["text"], title=r["title"], url=r["url"], k=3)
            if res.status != "new":
                py_dups[r["id"]] = (res.of, res.distance)
        kept = len(store)
    assert py_dups == cli_dups and len(py_dups) > 100
    assert kept == 300 - len(cli_dups)
