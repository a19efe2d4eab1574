"""The Python package on a store on a real Redis Cluster (3 masters + 3 replicas on
loopback, redis_cluster.py), shared by threads: check_and_insert stays atomic across the
cluster, and concurrent writes agree with a model. Skipped when redis-server is missing
(under CI, where it is installed, that is a failure)."""

from __future__ import annotations

import multiprocessing
import random
import threading
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Iterator

import pytest

import redis_cluster
import simstore

THREADS = 8


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[redis_cluster.RedisCluster]:
    if not redis_cluster.available():
        if redis_cluster.in_ci():
            pytest.fail(redis_cluster.MISSING)
        pytest.skip(redis_cluster.MISSING)
    c = redis_cluster.RedisCluster.start(tmp_path_factory.mktemp("redis-cluster"))
    try:
        yield c
    finally:
        c.stop()


def _race(store: simstore.Store, ids: list, text: str, title: str) -> list:
    """check_and_insert(ids[i], text) from len(ids) threads released at once."""
    barrier = threading.Barrier(len(ids))

    def one(i: int) -> simstore.CheckResult:
        barrier.wait()
        return store.check_and_insert(ids[i], text, title=title)

    with ThreadPoolExecutor(max_workers=len(ids)) as pool:
        return list(pool.map(one, range(len(ids))))


def test_threads_racing_one_text_exactly_one_new(cluster: redis_cluster.RedisCluster, sample: list) -> None:
    originals = [r for r in sample if "-v" not in r["id"]][:20]
    with simstore.Store(cluster.url("py-race")) as store:
        for r in originals:
            ids = [f"{r['id']}@copy{i}" for i in range(THREADS)]
            results = _race(store, ids, r["text"], r["title"])
            new = [ids[i] for i, res in enumerate(results) if res.status == "new"]
            assert len(new) == 1, (r["id"], [x.status for x in results])
            for i, res in enumerate(results):
                if ids[i] != new[0]:
                    assert (res.status, res.of, res.distance) == ("exact_duplicate", new[0], 0)
        assert len(store) == len(originals) and store.check()["ok"]
    with simstore.Store(cluster.url("py-race")) as store:  # reopened: the same documents
        assert len(store) == len(originals)


def _near(rng: random.Random, bases: list) -> int:
    """A fingerprint near one of `bases` (0 to 5 bits flipped): matches within k exist."""
    fp = rng.choice(bases)
    for bit in rng.sample(range(64), rng.randrange(6)):
        fp ^= 1 << bit
    return fp


def _writer(store: simstore.Store, w: int, bases: list) -> dict:
    """Inserts, replaces and deletes among its own 40 ids, checking every answer against its
    model (which it returns)."""
    rng, model = random.Random(w), {}
    for _ in range(300):
        doc = f"w{w}-{rng.randrange(40)}"
        if rng.random() < 0.2:
            assert store.delete(doc) is (doc in model), doc
            model.pop(doc, None)
        else:
            fp = _near(rng, bases)
            expected = "replaced" if doc in model else "inserted"
            assert store.insert_fingerprint(doc, fp) == expected, doc
            model[doc] = fp
        got = store.get(doc)
        assert (got.fp if got else None) == model.get(doc), doc
    return model


def test_threads_writing_agree_with_a_model(cluster: redis_cluster.RedisCluster) -> None:
    rng = random.Random(7)
    bases = [rng.getrandbits(64) for _ in range(8)]
    with simstore.Store(cluster.url("py-model")) as store:
        with ThreadPoolExecutor(max_workers=4) as pool:
            models = list(pool.map(lambda w: _writer(store, w, bases), range(4)))
        model = {k: v for m in models for k, v in m.items()}
        assert len(store) == len(model)
        for q in [_near(rng, bases) for _ in range(40)]:
            got = [(m.distance, m.id) for m in store.query(fp=q, k=3)]
            want = sorted((bin(q ^ fp).count("1"), doc) for doc, fp in model.items()
                          if bin(q ^ fp).count("1") <= 3)
            assert got == want, hex(q)
        assert store.check()["ok"]
    with simstore.Store(cluster.url("py-model")) as store:
        assert len(store) == len(model)
        assert all(store.get(doc).fp == fp for doc, fp in model.items())


def _forked_worker(store: simstore.Store, results: "multiprocessing.Queue") -> None:
    try:
        store.insert_fingerprint("worker", 1)
        results.put("ok")
    except simstore.Error as e:
        results.put(type(e).__name__)


def test_forked_worker_cannot_use_a_cluster_store(cluster: redis_cluster.RedisCluster) -> None:
    ctx = multiprocessing.get_context("fork")
    with simstore.Store(cluster.url("py-fork")) as store:
        store.insert_fingerprint("before", 2)
        results = ctx.Queue()
        worker = ctx.Process(target=_forked_worker, args=(store, results))
        worker.start()
        assert results.get(timeout=120) == "ForkedError"
        worker.join()
        assert store.insert_fingerprint("after", 3) == "inserted"  # the parent's connections work
        assert len(store) == 2 and "worker" not in store
