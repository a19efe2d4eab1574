"""Errors are exceptions (simstore.Error and its subclasses) with the engine's messages."""

from __future__ import annotations

from pathlib import Path

import pytest

import simstore
from conftest import run_cli


def test_locked_store(tmp_path: Path, cli: Path) -> None:
    db = tmp_path / "pages.db"
    with simstore.Store(db):
        with pytest.raises(simstore.LockedError, match="locked by another writer"):
            simstore.Store(db)
        # Another process: the CLI is refused too, and says why.
        proc = run_cli(cli, db, "import", "-", check=False)
        assert proc.returncode == 2 and "locked by another writer" in proc.stderr
    simstore.Store(db).close()  # released on close


def test_cli_writer_locks_python_out(tmp_path: Path, cli: Path) -> None:
    import subprocess

    db = tmp_path / "pages.db"
    run_cli(cli, db, "init")
    serve = subprocess.Popen([str(cli), "--db", str(db), "serve", "--port", "0"], stdout=subprocess.PIPE, text=True)
    try:
        assert serve.stdout.readline().startswith("http://127.0.0.1:")  # listening: it holds the lock
        with pytest.raises(simstore.LockedError) as info:
            simstore.Store(db)
        assert isinstance(info.value, simstore.Error) and str(db) in str(info.value)
        with simstore.Store(db, read_only=True) as reader:  # readers still open it
            assert len(reader) == 0
    finally:
        serve.terminate()
        serve.wait(timeout=60)


def test_store_errors(tmp_path: Path, v1_store: Path) -> None:
    with pytest.raises(simstore.IncompatibleStoreError, match="store format version 1 is not supported"):
        simstore.Store(v1_store)
    with pytest.raises(simstore.NoStoreError, match="no store at"):
        simstore.Store(tmp_path / "missing.db", read_only=True)
    junk = tmp_path / "junk"
    junk.mkdir()
    (junk / "notes.txt").write_text("not a store")
    with pytest.raises(simstore.NotAStoreError, match="is not a simstore store"):
        simstore.Store(junk)
    with pytest.raises(simstore.InvalidArgumentError, match="invalid layout"):
        simstore.Store(tmp_path / "bad.db", k_max=64)
    with pytest.raises(simstore.InvalidArgumentError, match="invalid store URL"):
        simstore.Store("redis://")


def test_argument_errors(tmp_path: Path) -> None:
    with simstore.Store(tmp_path / "pages.db") as store:
        with pytest.raises(simstore.InvalidFingerprintError, match="expected exactly 16 hexadecimal digits"):
            store.query(fp="0f3a")
        for bad in (-1, 1 << 64, 2.5, True):
            with pytest.raises(simstore.InvalidFingerprintError):
                store.insert_fingerprint("x", bad)
        with pytest.raises(ValueError):  # every argument error is also a ValueError
            simstore.Fingerprint("xyz")
        with pytest.raises(simstore.KTooLargeError, match="exceeds this store's k_max = 3"):
            store.query("some text", k=4)
        with pytest.raises(simstore.EmptyDocumentError, match="no text to fingerprint"):
            store.check_and_insert("a", " ,.!? ")
        with pytest.raises(simstore.EmptyDocumentError):
            simstore.fingerprint("")
        with pytest.raises(simstore.InvalidArgumentError, match="the id is empty"):
            store.insert("", "text")
        with pytest.raises(simstore.InvalidArgumentError, match="invalid document id"):
            store.insert("x" * 5000, "text")
        with pytest.raises(simstore.InvalidArgumentError, match="its title is 65537 bytes; a stored title is at most 65536"):
            store.insert("t", "text", title="t" * 65537)
        with pytest.raises(simstore.InvalidArgumentError, match="its url is 8193 bytes"):
            store.check_and_insert("u", "text", url="u" * 8193)
        store.insert("long", "a long text " * 100_000, title="t" * 65536)  # the text is not bounded
        with pytest.raises(simstore.InvalidArgumentError, match="nothing to query with"):
            store.query()
        with pytest.raises(simstore.InvalidArgumentError, match="not both"):
            store.query("text", fp=1)
        with pytest.raises(simstore.EmptyDocumentError, match="query 1: document has no text"):
            store.query_batch(["a text", "", 1])
        with pytest.raises(simstore.InvalidArgumentError, match="query 0: expected a text"):
            store.query_batch([3.5])
        with pytest.raises(TypeError):
            store.insert(1, "text")
    with pytest.raises(simstore.ClosedError, match="is closed"):
        store.insert("a", "text")
    with pytest.raises(simstore.ClosedError):
        len(store)
    store.close()  # closing twice is fine


def test_errors_are_simstore_errors() -> None:
    for name in simstore.errors.__all__:
        assert issubclass(getattr(simstore, name), simstore.Error)
    assert issubclass(simstore.StorageError, OSError)
    assert issubclass(simstore.KTooLargeError, ValueError)


def test_negative_numbers_and_lone_surrogates(tmp_path: Path) -> None:
    """A trial found a negative k, limit or k_max raised a bare OverflowError, and half an
    emoji in a text (a lone surrogate, as json.loads reads "\\ud83d") a bare
    UnicodeEncodeError: now an InvalidArgumentError, and U+FFFD as the CLI reads it."""
    text = "the council approved the harbour budget on Tuesday after a long debate \ud83d"
    with simstore.Store(tmp_path / "s.db") as store:
        for call in (lambda: store.query(text, k=-1), lambda: store.query(text, limit=-1),
                     lambda: store.query_batch([text], k=-1), lambda: store.dedup(k=-1),
                     lambda: store.check_and_insert("x", text, k=-3),
                     lambda: simstore.Store(tmp_path / "t.db", k_max=-1),
                     lambda: simstore.dedup([text, text], k=-1)):
            with pytest.raises(simstore.InvalidArgumentError, match="expected a whole number >= 0"):
                call()
        assert store.check_and_insert("a", text, title="Budget \ud83d").status == "new"
        again = store.check_and_insert("b", text.replace("\ud83d", "\ufffd"), title="Budget \ufffd")
        assert (again.status, again.of) == ("exact_duplicate", "a")
        assert [m.id for m in store.query(text)] == ["a"]


def test_a_lone_surrogate_in_an_id_is_refused_by_name(tmp_path: Path) -> None:
    """A trial found a lone surrogate in an id raised a bare UnicodeEncodeError. Read as
    U+FFFD, "a\\ud83d" and "a\\ud83e" would be one id and replace each other, so it is an
    InvalidArgumentError naming the id, as the command line refuses such a record; texts of
    a query batch and of extract_page are read as U+FFFD like every other text."""
    text = "the council approved the harbour budget on Tuesday after a long debate"
    with simstore.Store(tmp_path / "s.db") as store:
        for call in (lambda: store.insert("a\ud83d", text),
                     lambda: store.check_and_insert("a\ud83d", text),
                     lambda: store.insert_fingerprint("a\ud83d", 1),
                     lambda: store.get("a\ud83d"), lambda: store.delete("a\ud83d"),
                     lambda: store.delete_many(["b", "a\ud83d"]),
                     lambda: "a\ud83d" in store):
            with pytest.raises(simstore.InvalidArgumentError, match="lone surrogate") as e:
                call()
            assert "'a\\ud83d'" in str(e.value)
        assert len(store) == 0
        store.insert("a", text + " \ud83d")
        assert [m[0].id for m in store.query_batch([text + " \ud83d", {"text": text + " \ud83d"}])] == ["a", "a"]
        assert simstore.extract_page("<p>" + text + " \ud83d</p>")[1].endswith("\ufffd")


def test_a_query_of_a_text_and_a_fingerprint_is_refused(tmp_path: Path) -> None:
    """A dict with both "text" and "fp" was queried by the fingerprint, the text ignored."""
    with simstore.Store(tmp_path / "s.db") as store:
        with pytest.raises(simstore.InvalidArgumentError, match="not both"):
            store.query_batch([{"text": "a page", "fp": 1}])
        with pytest.raises(simstore.InvalidArgumentError, match="not both"):
            store.query_batch([{"title": "a page", "fp": 1}])
