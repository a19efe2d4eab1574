"""The Python API on its own: every method, its results and its types."""

from __future__ import annotations

from pathlib import Path

import pytest

import simstore
from simstore import Fingerprint

WEATHER = "今天北京的天气很好，我们去公园散步，看到很多人在跑步和放风筝。"
WEATHER_REPOST = "今天北京的天气很好,我们去公园散步,看到很多人在跑步和放风筝!"


def test_fingerprint_is_an_int_that_prints_as_hex() -> None:
    fp = simstore.fingerprint(WEATHER, title="北京天气")
    assert isinstance(fp, Fingerprint) and isinstance(fp, int)
    # The README's figure for this page (simstore fingerprint / serve agree on it).
    assert fp.hex == "3c3e65769dfcbeec" and str(fp) == fp.hex
    assert repr(fp) == "Fingerprint('3c3e65769dfcbeec')"
    assert Fingerprint("3c3e65769dfcbeec") == fp and Fingerprint(int(fp)) == fp
    assert fp.distance(fp) == 0 and fp.distance(int(fp) ^ 0b1011) == 3
    assert fp.distance("3c3e65769dfcbeed") == 1
    # Fingerprinting ignores punctuation width: the repost has the same fingerprint.
    assert simstore.fingerprint(WEATHER_REPOST, title="北京天气") == fp
    assert simstore.fingerprint(WEATHER) != fp  # the title counts


def test_store_round_trip(tmp_path: Path) -> None:
    with simstore.Store(tmp_path / "pages.db") as store:
        assert len(store) == 0 and "a" not in store and store.k_max == 3
        assert store.insert("a", WEATHER, title="北京天气", url="https://e.com/a") == "inserted"
        assert store.insert("a", WEATHER, title="北京天气", url="https://e.com/a") == "replaced"
        assert store.insert_fingerprint("b", "0f3a5c7e9b1d2f40", title="fp only") == "inserted"
        assert len(store) == 2 and "a" in store and "b" in store
        doc = store.get("a")
        assert doc is not None
        assert (doc.id, doc.fp.hex, doc.title, doc.url, doc.length) == (
            "a", "3c3e65769dfcbeec", "北京天气", "https://e.com/a", len(WEATHER))
        assert store.get("b").fp == Fingerprint("0f3a5c7e9b1d2f40") and store.get("b").length == 0
        assert store.get("nope") is None
        assert store.delete("b") is True and store.delete("b") is False and len(store) == 1
        report = store.check()
        # 4 permutation tables and 2 band tables: the weather text's sketch has both bands.
        assert report["ok"] and report["docs"] == 1 and report["table_entries"] == [1, 1, 1, 1, 1, 1]
        stats = store.stats()
        assert stats["docs"] == 1 and stats["k_max"] == 3 and stats["blocks"] == [13, 13, 13, 13, 12]
        assert stats["spec"] == simstore.SPEC and stats["band_tables"] == 2
    assert store.closed


def test_check_and_insert_statuses(tmp_path: Path) -> None:
    with simstore.Store(tmp_path / "pages.db") as store:
        new = store.check_and_insert("https://e.com/a", WEATHER, title="北京天气", url="https://e.com/a")
        assert (new.status, new.of, new.distance, new.replaced, new.is_new) == ("new", None, None, False, True)
        assert new.fp == simstore.fingerprint(WEATHER, title="北京天气")
        exact = store.check_and_insert("https://e.org/c", WEATHER_REPOST, title="北京天气")
        assert (exact.status, exact.of, exact.distance, exact.is_new) == ("exact_duplicate", "https://e.com/a", 0, False)
        assert "https://e.org/c" not in store, "a duplicate is not stored"
        # Re-crawl of an unchanged page: an exact duplicate of itself.
        again = store.check_and_insert("https://e.com/a", WEATHER, title="北京天气")
        assert (again.status, again.of) == ("exact_duplicate", "https://e.com/a")
        assert repr(again).startswith("CheckResult(status='exact_duplicate', of='https://e.com/a', distance=0")


def test_check_and_insert_near_and_k(tmp_path: Path) -> None:
    text = "The river rose two metres overnight after heavy rain in the hills above the town."
    fp = simstore.fingerprint(text)
    with simstore.Store(tmp_path / "pages.db") as store:
        # A stored fingerprint 3 bits away (no words: never an exact duplicate).
        store.insert_fingerprint("three-bits", int(fp) ^ 0b10101)
        near = store.check_and_insert("page", text)
        assert (near.status, near.of, near.distance) == ("near_duplicate", "three-bits", 3)
        assert "page" not in store
        new = store.check_and_insert("page", text, k=2)
        assert (new.status, new.of, new.distance) == ("new", None, None)
        assert store.get("page").fp == fp
        with pytest.raises(simstore.KTooLargeError, match="k = 4 exceeds this store's k_max = 3"):
            store.check_and_insert("page2", text, k=4)


def test_query_by_text_fp_and_batch(tmp_path: Path, sample: list) -> None:
    with simstore.Store(tmp_path / "pages.db") as store:
        for r in sample[:40]:
            store.insert(r["id"], r["text"], title=r["title"], url=r["url"])
        q = sample[0]
        by_text = store.query(q["text"], title=q["title"], k=3)
        assert by_text and by_text[0].distance == 0
        assert [m.distance for m in by_text] == sorted(m.distance for m in by_text)
        fp = simstore.fingerprint(q["text"], title=q["title"])
        by_fp = store.query(fp=fp, k=3)
        assert [(m.id, m.distance) for m in by_fp] == [(m.id, m.distance) for m in by_text]
        assert [m.id for m in store.query(fp=fp.hex)] == [m.id for m in by_fp]
        assert len(store.query(fp=fp, limit=1)) == 1
        with pytest.raises(simstore.InvalidArgumentError, match="limit=0"):
            store.query(fp=fp, limit=0)
        m = by_fp[0]
        assert isinstance(m.fp, Fingerprint) and m.fp.distance(fp) == m.distance
        assert m.url and m.title is not None
        batch = store.query_batch([q["text"], fp, {"fp": fp.hex}, {"text": q["text"], "title": q["title"]}], k=3)
        assert [[x.id for x in b] for b in batch][1:] == [[x.id for x in by_fp]] * 3
        assert store.query_batch([], k=3) == []
        verified = store.query(q["text"], title=q["title"], k=3, verify=0.4)
        assert {x.id for x in verified} <= {x.id for x in by_text} and verified


ARTICLE = (
    "The city council approved a new budget on Tuesday, adding funds for parks, libraries and road repairs "
    "across the northern districts.\nThe mayor said the plan would hire forty new librarians and repave twelve "
    "miles of streets before the winter.\nCritics on the council argued that the budget relied on optimistic "
    "tax forecasts and left little money for emergencies.\nThe vote passed seven to two after a long public "
    "hearing in which residents asked for more bus routes and safer crossings.\nOfficials expect the first "
    "road works to begin in the spring, starting with the bridge over the river."
)
# Two words changed: 6 bits away (beyond k_max = 3), the same shingles otherwise.
COPY = ARTICLE.replace("optimistic", "changed48").replace("spring,", "changed87")
# The same words in reverse order: the same fingerprint, no shingle in common.
DECOY = " ".join(reversed(ARTICLE.split(" ")))


def test_defaults_follow_the_quality_mode(tmp_path: Path) -> None:
    assert simstore.fingerprint(COPY).distance(simstore.fingerprint(ARTICLE)) == 6
    with simstore.Store(tmp_path / "pages.db") as store:
        assert (store.quality, store.k_max) == ("standard", 3)
        assert store.stats()["quality_rule"] == {
            "k": 3, "reach": 12, "min_similarity": 0.3,
            "min_shingles": 16, "few_shingles_similarity": 0.8, "min_content_shingles": 4,
            "han_min_similarity": 0.25, "han_similarity_per_bit": 0.025, "han_min_shingles": 24, "bands": 2,
        }
        store.insert("article", ARTICLE)
        # Given no k: the mode's rule (candidates within 12 whose sketches agree).
        assert [(m.id, m.distance) for m in store.query(COPY)] == [("article", 6)]
        assert store.query(COPY, k=3) == []
        # query_batch follows the mode too; with k=3 it is "distance <= 3".
        assert [[m.id for m in ms] for ms in store.query_batch([COPY, DECOY])] == [["article"], []]
        assert [[m.id for m in ms] for ms in store.query_batch([COPY, DECOY], k=3)] == [[], ["article"]]
        assert [m.id for m in store.query(DECOY, k=3)] == ["article"]
        assert store.query(DECOY) == []
        assert store.check_and_insert("c1", COPY, k=3).status == "new"
        assert store.delete("c1")
        r = store.check_and_insert("c2", COPY)
        assert (r.status, r.of, r.distance) == ("near_duplicate", "article", 6)
        # verify=: within k (default k_max) and similar by sketch: the decoy is new.
        assert store.check_and_insert("d", DECOY, verify=0.5).status == "new"
        # dedup: the mode pairs the article and its copy; "distance <= 3", the decoy.
        store.insert("copy", COPY)
        assert store.dedup() == [["article", "copy"]]
        assert store.dedup(3) == [["article", "d"]]
        with pytest.raises(simstore.InvalidArgumentError, match="between 0 and 1"):
            store.check_and_insert("e", DECOY, verify=1.5)
    with simstore.Store(tmp_path / "high.db", quality="high") as store:
        assert (store.quality, store.k_max, store.stats()["quality"]) == ("high", 3, "high")
        assert store.stats()["quality_rule"] == {
            "k": 3, "reach": 14, "min_similarity": 0.3, "probes": 28,
            "min_shingles": 16, "few_shingles_similarity": 0.8, "min_content_shingles": 4,
            "han_min_similarity": 0.25, "han_similarity_per_bit": 0.025, "han_min_shingles": 24, "bands": 4,
        }
        assert store.stats()["band_tables"] == 4
    with simstore.Store(tmp_path / "wide.db", quality="high", k_max=6) as store:
        assert (store.quality, store.k_max) == ("high", 6)
    with pytest.raises(ValueError, match="use standard or high"):
        simstore.Store(tmp_path / "bad.db", quality="best")


def test_dedup_clusters(tmp_path: Path, sample: list) -> None:
    with simstore.Store(tmp_path / "pages.db") as store:
        for r in sample[:40]:
            store.insert(r["id"], r["text"], title=r["title"])
        clusters = store.dedup(3)
        assert clusters and all(c == sorted(c) and len(c) >= 2 for c in clusters)
        assert [c[0] for c in clusters] == sorted(c[0] for c in clusters)


def test_read_only_beside_a_writer(tmp_path: Path) -> None:
    db = tmp_path / "pages.db"
    with simstore.Store(db) as writer:
        writer.insert("a", WEATHER)
        with simstore.Store(db, read_only=True) as reader:
            assert reader.read_only and len(reader) == 1 and reader.get("a") is not None
            with pytest.raises(simstore.ReadOnlyError):
                reader.insert("b", "some text")


def test_extract_page_drops_chrome() -> None:
    html = ("<html><head><title>A headline about rivers – The Daily</title></head><body>"
            "<nav><a href='/'>Home</a> <a href='/x'>World</a></nav>"
            "<article><p>The river rose two metres overnight after heavy rain.</p></article>"
            "<footer>© The Daily</footer></body></html>")
    title, text = simstore.extract_page(html)
    assert title == "A headline about rivers"
    assert text == "The river rose two metres overnight after heavy rain."
    assert simstore.extract_page(html.encode("utf-8")) == (title, text)
    gbk = "<html><body><p>今天北京的天气很好。</p></body></html>".encode("gbk")
    assert simstore.extract_page(gbk, charset="gbk")[1] == "今天北京的天气很好。"


def _listing_page(intro: str, links: list) -> str:
    items = "".join(f"<li><a href='/p/{i}'>{text}</a></li>" for i, text in enumerate(links))
    return f"<html><body><h1>Harbour news</h1><p>{intro}</p><ul>{items}</ul></body></html>"


def test_listing_pages_stay_apart_with_what_the_reader_left_out(tmp_path: Path) -> None:
    intro = "Every story of the week about the harbour, its boats and the people who sail them out."
    words = "ferry storm nets gulls tide crane quay pier lamp rope sail mast hull keel oar".split()
    pages = [_listing_page(intro, [f"{words[(i + j) % 15]} {words[(3 * i + j) % 15]} story {i} {j}"
                                   for j in range(20)]) for i in range(6)]
    title, text, left_out = simstore.extract_page(pages[0], left_out=True)
    assert (title, text) == simstore.extract_page(pages[0])
    assert "ferry" in left_out or "storm" in left_out
    with simstore.Store(tmp_path / "apart.db") as store:
        for i, page in enumerate(pages):
            title, text, left_out = simstore.extract_page(page, left_out=True)
            assert store.check_and_insert(f"p{i}", text, title=title, left_out=left_out).status == "new", i
        # A query of a page compares it as it was stored: never as its group.
        for i, page in enumerate(pages):
            title, text, left_out = simstore.extract_page(page, left_out=True)
            assert all(m.id == f"p{i}" for m in store.query(text, title=title, left_out=left_out)), i
    # By their main texts alone they are one page: the test above has teeth.
    with simstore.Store(tmp_path / "joined.db") as store:
        statuses = []
        for i, page in enumerate(pages):
            title, text = simstore.extract_page(page)
            statuses.append(store.check_and_insert(f"p{i}", text, title=title).status)
        assert statuses[1:] == ["exact_duplicate"] * 5, statuses


def test_help_reads_well() -> None:
    assert (simstore.Store.check_and_insert.__text_signature__
            == "($self, id, text, *, title=None, url=None, k=None, verify=None, left_out=None)")
    assert "context manager" in simstore.Store.__doc__
    for name in ("insert", "insert_fingerprint", "check_and_insert", "query", "query_batch", "get", "delete",
                 "stats", "check", "dedup", "close"):
        assert getattr(simstore.Store, name).__doc__, name
