"""Listing, exporting and deleting many documents from Python: Store.ids, Store.export and
Store.delete_many, checked against what was stored and against `simstore export`."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import simstore

from conftest import run_cli

PAGES = [f"page {i}: the rivers of the north run cold and clear, stone roads {i * 7}" for i in range(40)]


def _store(tmp_path: Path) -> simstore.Store:
    store = simstore.Store(tmp_path / "s.db")
    for i, text in enumerate(PAGES):
        store.insert(f"id-{i}", text, title=f"t{i}", url=f"https://e.com/{i}")
    store.insert_fingerprint("fp-only", "0f3a5c7e9b1d2f40")
    return store


def test_ids_and_export_list_every_document_in_chunks(tmp_path: Path) -> None:
    with _store(tmp_path) as store:
        expected = [f"id-{i}" for i in range(40)] + ["fp-only"]
        for chunk in (1, 7, 41, 10000):
            assert list(store.ids(chunk=chunk)) == expected
        docs = list(store.export(chunk=3))
        assert [d["id"] for d in docs] == expected
        seqs = [d["seq"] for d in docs]
        assert seqs == sorted(seqs) and len(set(seqs)) == len(seqs)
        first = docs[0]
        assert set(first) == {"seq", "id", "fp", "title", "url", "length", "time", "seen",
                              "content_hash", "sketch"}
        got = store.get("id-0")
        assert got is not None
        assert (first["fp"], first["title"], first["url"], first["length"], first["time"]) == (
            got.fp, got.title, got.url, got.length, got.time)
        assert isinstance(first["fp"], simstore.Fingerprint)
        assert isinstance(first["sketch"], bytes) and len(first["sketch"]) > 0
        assert len(first["content_hash"]) == 32
        last = docs[-1]
        assert (last["id"], str(last["fp"]), last["sketch"], last["content_hash"]) == (
            "fp-only", "0f3a5c7e9b1d2f40", None, None)
        # Resuming after a document read.
        assert [d["id"] for d in store.export(from_seq=docs[10]["seq"] + 1)] == expected[11:]
        assert list(store.ids(from_seq=seqs[-1] + 1)) == []


def test_export_has_what_the_command_writes(tmp_path: Path, cli: Path) -> None:
    with _store(tmp_path) as store:
        mine = list(store.export())
    out = run_cli(cli, tmp_path / "s.db", "export").stdout
    lines = [json.loads(line) for line in out.splitlines()]
    assert len(lines) == len(mine)
    for d, line in zip(mine, lines):
        for key, value in line.items():
            if key == "sketch":
                assert d["sketch"].hex() == value
            elif key == "fp":
                assert str(d["fp"]) == value
            else:
                assert d[key] == value, key


def test_an_iteration_goes_on_across_writes(tmp_path: Path) -> None:
    with _store(tmp_path) as store:
        it = store.ids(chunk=10)
        head = [next(it) for _ in range(10)]
        store.delete("id-15")
        store.insert("late", "a page stored after the iteration began, with its own words")
        rest = list(it)
        assert head == [f"id-{i}" for i in range(10)]
        assert "id-15" not in rest and rest[-1] == "late"


def test_delete_many_is_one_atomic_call(tmp_path: Path) -> None:
    with _store(tmp_path) as store:
        assert store.delete_many(["id-1", "nope", "id-2", "id-1"]) == [True, False, True, False]
        assert len(store) == 39
        assert "id-1" not in store and "id-2" not in store and "id-3" in store
        assert store.delete_many([]) == []
        with pytest.raises(TypeError):
            store.delete_many("id-3")  # type: ignore[arg-type]
        assert store.check()["ok"]
    with simstore.Store(tmp_path / "s.db", read_only=True) as reader:
        with pytest.raises(simstore.ReadOnlyError):
            reader.delete_many(["id-3"])
        assert len(list(reader.ids())) == 39


def test_a_closed_store_refuses_to_iterate(tmp_path: Path) -> None:
    store = _store(tmp_path)
    it = store.export()
    store.close()
    with pytest.raises(simstore.ClosedError):
        next(it)
