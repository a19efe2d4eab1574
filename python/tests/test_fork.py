"""A store open in a process that forks: the child can neither use nor damage it.

The child of fork() shares the parent's open RocksDB files but has none of its threads; if
it wrote, or closed the store (flushing its copy of the memtable and deleting the write-ahead
log the parent still appends to), the parent's later acknowledged writes were lost or every
later open failed. Each scenario runs in a fresh interpreter (fork_scenario.py), so that the
child exits as a script's would: os._exit, sys.exit through finalization, an exception.
"""

from __future__ import annotations

import json
import multiprocessing
import subprocess
import sys
from pathlib import Path

import pytest

import simstore
from conftest import run_cli

SCENARIO = Path(__file__).with_name("fork_scenario.py")
FIRST, SECOND = 1000, 2000
FIX = "open the store after forking, in the child; or use the spawn/forkserver start method"


def run_scenario(db: Path, mode: str, *flags: str) -> dict:
    proc = subprocess.run([sys.executable, str(SCENARIO), str(db), mode, *flags],
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout.splitlines()[-1])


def assert_parent_writes_survive(db: Path, cli: Path, result: dict) -> None:
    """Every acknowledged write is there after reopening, and the store checks clean."""
    assert result["parent_inserts"] == {"inserted": SECOND}
    assert result["len_before_close"] == FIRST + SECOND
    with simstore.Store(db) as store:
        assert len(store) == FIRST + SECOND
        assert "a0" in store and f"b{SECOND - 1}" in store and "child" not in store
        assert store.check()["ok"]
    report = json.loads(run_cli(cli, db, "check", "--json").stdout)
    assert report["ok"] and report["docs"] == FIRST + SECOND


@pytest.mark.parametrize("mode,exit_code", [("os_exit", 0), ("sys_exit", 0), ("raise", 1)])
@pytest.mark.parametrize("flags", [(), ("--sync",), ("--with",)], ids=["default", "sync_writes", "with"])
def test_child_exit_keeps_parent_writes(tmp_path: Path, cli: Path, mode: str, exit_code: int,
                                        flags: tuple) -> None:
    """The trial's scenario: 1,000 inserts, a fork whose child only exits, 2,000 more."""
    db = tmp_path / "pages.db"
    result = run_scenario(db, mode, *flags)
    if "--with" in flags and mode != "os_exit":
        exit_code = 1  # the child unwinds through the with block: its __exit__ raises ForkedError
    assert result["child_exit"] == exit_code
    assert_parent_writes_survive(db, cli, result)


@pytest.mark.parametrize("flags", [(), ("--with",)], ids=["plain", "with"])
def test_child_using_the_store_gets_forked_error(tmp_path: Path, cli: Path, flags: tuple) -> None:
    """Every call of the child on the inherited store raises ForkedError, saying what to do;
    the repr and the path still answer (no engine involved)."""
    db = tmp_path / "pages.db"
    result = run_scenario(db, "use", *flags)
    report = result["child_report"]
    assert report.pop("repr")[0] == "ok"
    for call, (kind, message) in report.items():
        assert kind == "ForkedError", (call, kind, message)
        assert FIX in message and str(db) in message, (call, message)
    assert result["child_exit"] == (1 if flags else 0)
    assert_parent_writes_survive(db, cli, result)


def test_forked_error_is_a_simstore_error() -> None:
    assert issubclass(simstore.ForkedError, simstore.Error)
    assert simstore.errors.ForkedError is simstore.ForkedError


def _worker(store: simstore.Store, results: "multiprocessing.Queue") -> None:
    """A multiprocessing worker (fork start method) given the parent's open store."""
    for name, call in [("insert", lambda: store.insert_fingerprint("worker", 12345)),
                       ("query", lambda: store.query(fp=12345)),
                       ("len", lambda: len(store))]:
        try:
            call()
            results.put((name, "ok", ""))
        except simstore.Error as e:
            results.put((name, type(e).__name__, str(e)))


def test_multiprocessing_fork_worker_cannot_use_inherited_store(tmp_path: Path, cli: Path) -> None:
    db = tmp_path / "pages.db"
    ctx = multiprocessing.get_context("fork")
    store = simstore.Store(db)
    try:
        for i in range(FIRST):
            store.insert_fingerprint(f"a{i}", (i * 0x9E3779B97F4A7C15) % 2**64)
        results = ctx.Queue()
        worker = ctx.Process(target=_worker, args=(store, results))
        worker.start()
        got = [results.get(timeout=120) for _ in range(3)]
        worker.join()
        assert worker.exitcode == 0
        for name, kind, message in got:
            assert kind == "ForkedError" and FIX in message, (name, kind, message)
        statuses = {store.insert_fingerprint(f"b{i}", ((FIRST + i) * 0x9E3779B97F4A7C15) % 2**64)
                    for i in range(SECOND)}
        assert statuses == {"inserted"}
    finally:
        store.close()
    with simstore.Store(db) as store:
        assert len(store) == FIRST + SECOND and "worker" not in store and store.check()["ok"]
    assert json.loads(run_cli(cli, db, "check", "--json").stdout)["ok"]
