"""A process that forks while its store is open (run by test_fork.py in a fresh interpreter,
so that a child can leave through Python's own finalization, as a script's would).

    python fork_scenario.py DB CHILD [--sync] [--with]

Opens the store DB (`--sync`: sync_writes=True; `--with`: inside a `with` block), stores
1,000 fingerprints, forks; the child does CHILD and exits:

- `os_exit`: `os._exit(0)` at once (no finalization);
- `sys_exit`: `sys.exit(0)` (finalization: the child's `Store` object is destroyed);
- `raise`: an uncaught exception (finalization, exit status 1);
- `use`: tries the inherited store (insert, queries, properties, close, the context
  manager's exit) and reports what each did, then `sys.exit(0)`.

Then the parent stores 2,000 more fingerprints, closes the store and prints one JSON line:
the child's exit status and report, and the statuses of the parent's inserts.
"""

from __future__ import annotations

import json
import os
import sys
from collections import Counter
from typing import Callable

import simstore

FIRST, SECOND = 1000, 2000


def fp(i: int) -> int:
    """A fingerprint per document, spread over the 64 bits (a 64-bit multiplicative hash)."""
    return (i * 0x9E3779B97F4A7C15 + 0x632BE59BD9B4E019) % 2**64


def attempt(call: Callable[[], object]) -> list:
    """[exception class, message], or ["ok", repr of the result]."""
    try:
        return ["ok", repr(call())]
    except Exception as e:  # noqa: BLE001 - reported, whatever it is
        return [type(e).__name__, str(e)]


def use(store: simstore.Store) -> dict:
    """What each call on the inherited store does in the child."""
    return {
        "insert_fingerprint": attempt(lambda: store.insert_fingerprint("child", fp(10**6))),
        "insert": attempt(lambda: store.insert("child-text", "a page written by the child process")),
        "check_and_insert": attempt(lambda: store.check_and_insert("child-c", "another page of the child")),
        "query": attempt(lambda: store.query(fp=fp(1))),
        "query_batch": attempt(lambda: store.query_batch([fp(1)])),
        "get": attempt(lambda: store.get("a1")),
        "len": attempt(lambda: len(store)),
        "contains": attempt(lambda: "a1" in store),
        "delete": attempt(lambda: store.delete("a1")),
        "stats": attempt(store.stats),
        "check": attempt(store.check),
        "dedup": attempt(store.dedup),
        "flush": attempt(store.flush),
        "k_max": attempt(lambda: store.k_max),
        "quality": attempt(lambda: store.quality),
        "closed": attempt(lambda: store.closed),
        "repr": attempt(lambda: repr(store)),
        "close": attempt(store.close),
        "exit": attempt(lambda: store.__exit__(None, None, None)),
    }


def child(store: simstore.Store, mode: str, report_fd: int) -> None:
    report = use(store) if mode == "use" else {}
    with os.fdopen(report_fd, "w") as f:
        json.dump(report, f)
    if mode == "os_exit":
        os._exit(0)
    if mode == "raise":
        raise RuntimeError("the child fails")
    sys.exit(0)  # sys_exit, use: through finalization


def scenario(store: simstore.Store, mode: str) -> dict:
    for i in range(FIRST):
        assert store.insert_fingerprint(f"a{i}", fp(i)) == "inserted"
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(r)
        child(store, mode, w)
    os.close(w)
    with os.fdopen(r) as f:
        text = f.read()
    _, status = os.waitpid(pid, 0)
    statuses = Counter(store.insert_fingerprint(f"b{i}", fp(FIRST + i)) for i in range(SECOND))
    return {
        "child_exit": os.waitstatus_to_exitcode(status),
        "child_report": json.loads(text) if text else None,
        "parent_inserts": dict(statuses),
        "len_before_close": len(store),
    }


def main() -> None:
    db, mode = sys.argv[1], sys.argv[2]
    sync = "--sync" in sys.argv[3:]
    if "--with" in sys.argv[3:]:
        with simstore.Store(db, sync_writes=sync) as store:
            result = scenario(store, mode)
    else:
        store = simstore.Store(db, sync_writes=sync)
        result = scenario(store, mode)
        store.close()
    print(json.dumps(result))


if __name__ == "__main__":
    main()
