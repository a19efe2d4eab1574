"""One Store shared by threads: check_and_insert stays atomic."""

from __future__ import annotations

import socket
import threading
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

import simstore

THREADS = 8


def _race(store: simstore.Store, ids: list, texts: list, titles: list) -> list:
    """Calls check_and_insert(ids[i], texts[i]) from len(ids) threads released at once."""
    barrier = threading.Barrier(len(ids))

    def one(i: int) -> simstore.CheckResult:
        barrier.wait()
        return store.check_and_insert(ids[i], texts[i], title=titles[i])

    with ThreadPoolExecutor(max_workers=len(ids)) as pool:
        return list(pool.map(one, range(len(ids))))


def test_threads_racing_one_text_exactly_one_new(tmp_path: Path, sample: list) -> None:
    with simstore.Store(tmp_path / "race.db") as store:
        originals = [r for r in sample if "-v" not in r["id"]][:30]
        assert len(originals) == 30
        for r in originals:  # 30 rounds, one article each (none repeats another)
            ids = [f"{r['id']}@copy{i}" for i in range(THREADS)]
            results = _race(store, ids, [r["text"]] * THREADS, [r["title"]] * THREADS)
            new = [ids[i] for i, res in enumerate(results) if res.status == "new"]
            assert len(new) == 1, (r["id"], [x.status for x in results])
            for i, res in enumerate(results):
                if ids[i] != new[0]:
                    assert (res.status, res.of, res.distance) == ("exact_duplicate", new[0], 0)
        assert len(store) == 30
        assert store.check()["ok"]


def test_threads_racing_near_copies_exactly_one_new(tmp_path: Path, sample: list) -> None:
    """The sample's groups (an article and its edited copies, within k of one another): all
    members checked at once, exactly one stored per group."""
    groups: dict = {}
    for r in sample:
        groups.setdefault(r["id"].split("-v")[0], []).append(r)
    with simstore.Store(tmp_path / "race.db") as store:
        raced = 0
        for base, members in groups.items():
            fps = [simstore.fingerprint(m["text"], title=m["title"]) for m in members]
            if len(members) < 2 or max(a.distance(b) for a in fps for b in fps) > 3:
                continue  # only groups whose every pair is within k: one survivor whatever the order
            results = _race(store, [m["id"] for m in members], [m["text"] for m in members],
                            [m["title"] for m in members])
            assert [x.status for x in results].count("new") == 1, base
            raced += 1
        assert raced >= 20 and len(store) == raced


def test_queries_from_threads_beside_a_writer(tmp_path: Path, sample: list) -> None:
    with simstore.Store(tmp_path / "rw.db") as store:
        for r in sample[:100]:
            store.insert(r["id"], r["text"], title=r["title"])
        expected = {r["id"]: [m.id for m in store.query(r["text"], title=r["title"])] for r in sample[:100]}

        def reader(part: int) -> int:
            checked = 0
            for r in sample[part:100:4]:
                got = [m.id for m in store.query(r["text"], title=r["title"])]
                assert got == expected[r["id"]], r["id"]
                checked += 1
            return checked

        def writer() -> int:
            for i, r in enumerate(sample[100:]):
                store.insert(f"w{i}", "unrelated filler text number " + "x" * (i % 7) + f" {i} about nothing",
                             title=None)
            return 0

        with ThreadPoolExecutor(max_workers=5) as pool:
            futures = [pool.submit(reader, p) for p in range(4)] + [pool.submit(writer)]
            assert sum(f.result() for f in futures) == 100


def test_engine_calls_release_the_gil() -> None:
    """While the engine works, other Python threads run: the store URL points at a fake Redis
    server written in Python (a thread of this process) that answers every command with an
    error of its own. The engine can only report that error if the server thread ran during
    the call, i.e. if the calling thread released the GIL; with the GIL held, the engine
    would wait for an answer in vain and fail with a timeout instead."""
    srv = socket.create_server(("127.0.0.1", 0))

    def serve() -> None:
        while True:
            try:
                conn, _ = srv.accept()
            except OSError:
                return  # closed: the test is over
            with conn:
                while data := conn.recv(65536):
                    commands = sum(1 for line in data.split(b"\r\n") if line.startswith(b"*"))
                    conn.sendall(b"-ERR answered by a Python thread\r\n" * max(commands, 1))

    threading.Thread(target=serve, daemon=True).start()
    try:
        with pytest.raises(simstore.StorageError, match="answered by a Python thread"):
            simstore.Store(f"redis://127.0.0.1:{srv.getsockname()[1]}/gil")
    finally:
        srv.close()


def _busy(store: simstore.Store, call, started: threading.Event, outcomes: list) -> None:
    """Calls `call(store)` until the store is closed (ClosedError), noting each outcome."""
    while True:
        try:
            call(store)
            outcomes.append("done")
            started.set()
        except simstore.ClosedError:
            outcomes.append("closed")
            return
        except BaseException as e:  # noqa: BLE001 - reported by the test
            outcomes.append(repr(e))
            started.set()
            return


@pytest.mark.parametrize("kind", ["query_batch", "insert"])
def test_close_waits_for_calls_in_progress(tmp_path: Path, sample: list, kind: str) -> None:
    """A close while another thread is inside a call returns once that call is over and the
    store's lock released: the same process reopens it at once (it raised LockedError)."""
    db = tmp_path / "busy.db"
    with simstore.Store(db) as store:
        for r in sample:
            store.insert(r["id"], r["text"], title=r["title"])
    queries = [r["text"] for r in sample] * 10
    counter = iter(range(10**9))
    calls = {
        "query_batch": lambda s: s.query_batch(queries),
        "insert": lambda s: [s.insert(f"w{next(counter)}", sample[i % 300]["text"]) for i in range(100)],
    }
    for _ in range(10):
        store = simstore.Store(db)
        started, outcomes = threading.Event(), []
        worker = threading.Thread(target=_busy, args=(store, calls[kind], started, outcomes))
        worker.start()
        started.wait()
        store.close()  # the worker is in a call (it spends nearly all its time in one)
        assert store.closed
        with simstore.Store(db) as again:  # at once: the lock was released by close
            assert again.check()["ok"]
        worker.join()
        assert outcomes[-1] == "closed" and set(outcomes[:-1]) == {"done"}, outcomes[-3:]
