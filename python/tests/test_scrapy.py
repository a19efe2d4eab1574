"""simstore.scrapy.SimstorePipeline in real Scrapy crawls of a local site.

The site (python/tests/site, written by make_site.py) is served on 127.0.0.1; the crawl is
examples/scrapy_project (its spider fetches the publisher's pages first, then the mirror and
the reposts, each wave concurrently), in a child process, as `scrapy crawl` runs it. The
pipeline must keep exactly the publisher's originals and drop every copy as the duplicate
the manifest says it is; Scrapy's stats must count the same.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from scrapy.exceptions import NotConfigured
from scrapy.utils.test import get_crawler

import simstore
from conftest import REPO, SITE
from simstore.scrapy import TAG_FIELDS, SimstorePipeline, _tag

PROJECT = REPO / "examples" / "scrapy_project"
TESTS = Path(__file__).parent
MANIFEST = json.loads((SITE / "manifest.json").read_text(encoding="utf-8"))


def crawl(tmp_path: Path, site_url: str, *args: str, fields: str = "url,link", waves: str = "") -> dict:
    """Runs a crawl of the site's waves (by default the publisher, then the mirror and the
    reposts); returns its stats, the kept items' URLs, the dropped pages and the store's path."""
    tmp_path.mkdir(parents=True, exist_ok=True)
    db, log, stats, kept = (tmp_path / n for n in ("pages.db", "crawl.log", "stats.json", "kept.jsonl"))
    waves = waves or f"{site_url}/news/index.html;{site_url}/mirror/index.html,{site_url}/repost/index.html"
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(PROJECT), str(TESTS)]))
    cmd = [
        sys.executable, "-m", "scrapy", *args, "-a", f"waves={waves}",
        "-s", f"SIMSTORE_DB={db}", "-s", f"LOG_FILE={log}", "-s", f"STATS_JSON={stats}",
        "-s", 'EXTENSIONS={"crawl_stats.StatsToJson": 500}', "-s", "CONCURRENT_REQUESTS=16",
        "-s", f"FEED_EXPORT_FIELDS={fields}", "-O", f"{kept}:jsonlines",
    ]
    proc = subprocess.run(cmd, cwd=PROJECT, env=env, capture_output=True, text=True, timeout=600)
    log_text = log.read_text(encoding="utf-8") if log.exists() else ""
    assert proc.returncode == 0, f"{proc.stderr}\n{log_text}"
    assert "Traceback" not in log_text, log_text
    dropped = {
        m["page"]: (m["kind"], m["of"], int(m["d"]))
        for m in re.finditer(r"Dropped: (?P<page>\S+) is an? (?P<kind>exact|near) duplicate of (?P<of>\S+) "
                             r"\(distance (?P<d>\d+)\)", log_text)
    }
    items = [json.loads(line) for line in kept.read_text(encoding="utf-8").splitlines()]
    return {"stats": json.loads(stats.read_text(encoding="utf-8")), "kept": items, "dropped": dropped, "db": db}


def expected(site_url: str) -> tuple:
    """The originals and the copies (page: (kind, of)) of the default waves' crawl."""
    originals = {site_url + p for p, e in MANIFEST.items() if e["role"] == "original"}
    copies = {site_url + p: (e["role"], site_url + e["of"]) for p, e in MANIFEST.items() if "of" in e}
    return originals, copies


def check_crawl(result: dict, site_url: str, url_field: str, k: int = 3) -> None:
    originals, copies = expected(site_url)
    stats = result["stats"]
    assert stats["finish_reason"] == "finished"
    assert {item[url_field] for item in result["kept"]} == originals
    assert {page: (kind, of) for page, (kind, of, _) in result["dropped"].items()} == copies
    for page, (kind, _, distance) in result["dropped"].items():
        assert distance == 0 if kind == "exact" else 0 <= distance <= k, page
    n_exact = sum(1 for kind, _ in copies.values() if kind == "exact")
    assert stats["simstore/new"] == len(originals) == 6
    assert stats["simstore/exact"] == n_exact
    assert stats["simstore/near"] == len(copies) - n_exact
    assert stats["item_scraped_count"] == len(originals)
    assert stats["item_dropped_count"] == len(copies)
    assert stats["response_received_count"] >= len(originals) + len(copies) + 3  # and the 3 index pages
    with simstore.Store(result["db"], read_only=True) as store:
        assert len(store) == len(originals) and all(u in store for u in originals)
        assert store.check()["ok"]


def test_crawl_keeps_exactly_the_originals(tmp_path: Path, site_url: str) -> None:
    """The example project as is: items {"url", "html"}, the pipeline extracts the text."""
    result = crawl(tmp_path, site_url, "crawl", "pages")
    check_crawl(result, site_url, "url")
    # The exact/near split is the engine's: mirrors repeat the words (chrome dropped), the
    # reposts carry an edited headline and an attribution line.
    assert result["stats"]["simstore/exact"] == 8 and result["stats"]["simstore/near"] == 4


SELECTOR_FIELDS = ["-s", "SIMSTORE_TEXT_FIELD=body", "-s", "SIMSTORE_TITLE_FIELD=headline", "-s", "SIMSTORE_URL_FIELD=link"]


def selectors_crawl(tmp_path: Path, site_url: str, *settings: str) -> dict:
    """A crawl by the selectors spider: fields extracted by the spider (other names, the text
    as a list of paragraphs, the headline apart from it)."""
    return crawl(tmp_path, site_url, "runspider", str(TESTS / "selectors_spider.py"), *SELECTOR_FIELDS, *settings)


def test_a_crawl_keeps_every_section_page_of_one_intro(tmp_path: Path, site_url: str) -> None:
    """The publisher's six archive pages of one section share their heading and intro and
    list stories of their own: the pipeline passes what the HTML reader left out of their
    main texts (the lists), so each is a page of its own, not a copy of the first."""
    listing = {site_url + p for p, e in MANIFEST.items() if e["role"] == "listing"}
    assert len(listing) == 6
    # The premise: by their main texts alone the store takes five for copies of the first.
    with simstore.Store(tmp_path / "premise.db") as store:
        statuses = []
        for p in sorted(listing):
            title, text = simstore.extract_page((SITE / p[len(site_url) + 1:]).read_bytes())
            statuses.append(store.check_and_insert(p, text, title=title).status)
        assert statuses.count("new") == 1, statuses
    result = crawl(tmp_path, site_url, "crawl", "pages", waves=f"{site_url}/sections/index.html")
    assert result["dropped"] == {}
    assert {item["url"] for item in result["kept"]} == listing
    assert result["stats"]["simstore/new"] == 6
    with simstore.Store(result["db"], read_only=True) as store:
        assert len(store) == 6


def test_a_default_crawl_applies_the_stores_quality_mode(tmp_path: Path, site_url: str) -> None:
    """Without the headline in the text, the edited headline of the harbour repost moves its
    fingerprint 4 bits, beyond k_max = 3; its paragraphs are the original's, so the shingle
    sketches agree. Given no SIMSTORE_K, the pipeline applies the store's quality mode, as
    `simstore query` and `serve` do: the repost is a near duplicate (distance 4). With
    SIMSTORE_K = 3 ("within 3 bits") it is a new page. The same in a store the pipeline
    creates in the high mode (SIMSTORE_QUALITY)."""
    repost = f"{site_url}/repost/harbour-bike-lanes.html"
    original = f"{site_url}/news/harbour-bike-lanes.html"
    result = selectors_crawl(tmp_path, site_url)
    check_crawl(result, site_url, "link", k=8)
    assert result["dropped"][repost] == ("near", original, 4)
    assert result["stats"]["simstore/near"] == 4
    with simstore.Store(result["db"], read_only=True) as store:
        assert (store.quality, store.k_max) == ("standard", 3)

    at_3 = selectors_crawl(tmp_path / "k3", site_url, "-s", "SIMSTORE_K=3")
    assert {item["link"] for item in at_3["kept"]} == expected(site_url)[0] | {repost}
    assert (at_3["stats"]["simstore/new"], at_3["stats"]["simstore/near"]) == (7, 3)

    high = selectors_crawl(tmp_path / "high", site_url, "-s", "SIMSTORE_QUALITY=high")
    check_crawl(high, site_url, "link", k=8)
    assert high["dropped"][repost] == ("near", original, 4)
    with simstore.Store(high["db"], read_only=True) as store:
        assert (store.quality, store.k_max) == ("high", 3)


def test_crawl_with_selector_fields_at_k_4(tmp_path: Path, site_url: str) -> None:
    """SIMSTORE_K = 4, in a store made with k_max 4: "within 4 bits" finds the harbour repost."""
    result = selectors_crawl(tmp_path, site_url, "-s", "SIMSTORE_K=4", "-s", "SIMSTORE_K_MAX=4")
    check_crawl(result, site_url, "link", k=4)
    repost = f"{site_url}/repost/harbour-bike-lanes.html"
    assert result["dropped"][repost] == ("near", f"{site_url}/news/harbour-bike-lanes.html", 4)
    with simstore.Store(result["db"], read_only=True) as store:
        assert store.k_max == 4


def test_a_tagging_crawl_keeps_every_item_and_names_what_it_repeats(tmp_path: Path, site_url: str) -> None:
    """SIMSTORE_ON_DUPLICATE = "tag": every page passes on; each copy carries the page it
    repeats (as the manifest says), how far its fingerprint is, and how similar its
    wording; the store holds the originals only, as with dropping."""
    fields = "url," + ",".join(TAG_FIELDS)
    result = crawl(tmp_path, site_url, "crawl", "pages", "-s", "SIMSTORE_ON_DUPLICATE=tag", fields=fields)
    originals, copies = expected(site_url)
    stats = result["stats"]
    assert result["dropped"] == {} and "item_dropped_count" not in stats
    assert stats["item_scraped_count"] == len(originals) + len(copies)
    assert (stats["simstore/new"], stats["simstore/exact"], stats["simstore/near"]) == (6, 8, 4)
    items = {item["url"]: item for item in result["kept"]}
    assert set(items) == originals | set(copies)
    for url in originals:
        assert items[url].get("duplicate_of") is None, url
    for url, (role, of) in copies.items():
        item = items[url]
        assert (item["duplicate_kind"], item["duplicate_of"]) == (role, of), url
        if role == "exact":
            assert (item["duplicate_distance"], item["duplicate_similarity"]) == (0, 1.0), url
        else:
            assert 0 <= item["duplicate_distance"] <= 3, url
            assert 0.0 < item["duplicate_similarity"] < 1.0, url
    with simstore.Store(result["db"], read_only=True) as store:
        assert len(store) == len(originals)


def test_tagging_needs_declared_fields_on_item_classes(tmp_path: Path) -> None:
    import scrapy

    class Page(scrapy.Item):
        url = scrapy.Field()
        text = scrapy.Field()

    with pytest.raises(simstore.InvalidArgumentError, match="drop or tag"):
        pipeline(SIMSTORE_ON_DUPLICATE="keep")
    p = pipeline(SIMSTORE_DB=str(tmp_path / "t.db"), SIMSTORE_ON_DUPLICATE="tag")
    assert p.on_duplicate == "tag"
    p.open_spider()
    try:
        text = "the rivers of the north run cold and clear in spring, and the passes stay closed"
        assert p._check("a", text, None, None).status == "new"
        result, similarity = p._check_and_compare("b", text, None, None)
        assert (result.status, result.of, similarity) == ("exact_duplicate", "a", 1.0)
        with pytest.raises(simstore.InvalidArgumentError, match="declare duplicate_of"):
            _tag(Page(url="b", text=text), (result.of, "exact", 0, similarity))
        item = {"url": "b"}
        _tag(item, (result.of, "exact", 0, similarity))
        assert item == {"url": "b", "duplicate_of": "a", "duplicate_kind": "exact",
                        "duplicate_distance": 0, "duplicate_similarity": 1.0}
    finally:
        p.close_spider()


def test_a_second_crawl_keeps_nothing_new(tmp_path: Path, site_url: str) -> None:
    """Re-crawling the site into the same store: every page repeats a stored one."""
    crawl(tmp_path, site_url, "crawl", "pages")
    again = crawl(tmp_path, site_url, "crawl", "pages")
    assert again["kept"] == [] and "simstore/new" not in again["stats"]
    assert again["stats"]["item_dropped_count"] == sum(e["role"] != "listing" for e in MANIFEST.values())


def pipeline(**settings: object) -> SimstorePipeline:
    return SimstorePipeline.from_crawler(get_crawler(settings_dict={"SIMSTORE_DB": "x.db", **settings}))


def test_pipeline_needs_a_store() -> None:
    with pytest.raises(NotConfigured, match="SIMSTORE_DB"):
        SimstorePipeline.from_crawler(get_crawler(settings_dict={}))
    p = pipeline(SIMSTORE_K=2)
    assert (p.db, p.k, p.id_field, p.text_field) == ("x.db", 2, "url", "text")


def test_settings_default_to_the_stores_mode() -> None:
    """No SIMSTORE_K/SIMSTORE_VERIFY: None down to check_and_insert (the store's mode); a
    store the pipeline creates gets the mode's own layout unless SIMSTORE_K_MAX, or a
    SIMSTORE_K above the mode's k_max, asks for another."""
    p = pipeline()
    assert (p.k, p.verify, p.quality, p.k_max) == (None, None, None, None)
    p = pipeline(SIMSTORE_K="3", SIMSTORE_VERIFY="0.4", SIMSTORE_QUALITY="high")
    assert (p.k, p.verify, p.quality, p.k_max) == (3, 0.4, "high", None)
    assert pipeline(SIMSTORE_K=4).k_max == 4  # above standard's 3: the store is made for it
    assert pipeline(SIMSTORE_K=3, SIMSTORE_QUALITY="high").k_max is None  # high's k_max is 3
    assert pipeline(SIMSTORE_K=4, SIMSTORE_QUALITY="high").k_max == 4
    assert pipeline(SIMSTORE_K=2, SIMSTORE_K_MAX=5).k_max == 5
    assert pipeline(SIMSTORE_K=6, SIMSTORE_K_MAX=5).k_max == 6
    for bad, match in [({"SIMSTORE_QUALITY": "best"}, "standard or high"),
                       ({"SIMSTORE_VERIFY": "1.5"}, "between 0 and 1"),
                       ({"SIMSTORE_K": "three"}, "SIMSTORE_K = 'three'")]:
        with pytest.raises(simstore.InvalidArgumentError, match=match):
            pipeline(**bad)


def test_verify_and_k_reach_check_and_insert(tmp_path: Path) -> None:
    """A page with a stored page's words in another order: the same fingerprint (distance 0),
    no shingle in common. "Within 3 bits" calls it a near duplicate; the store's mode and
    SIMSTORE_VERIFY compare the sketches and call it new."""
    text = ("The city council approved a new budget on Tuesday, adding funds for parks, libraries "
            "and road repairs across the northern districts, and the mayor said the plan would hire "
            "forty new librarians and repave twelve miles of streets before the winter.")
    shuffled = " ".join(reversed(text.split(" ")))
    outcomes = {}
    for name, settings in [("mode", {}), ("k", {"SIMSTORE_K": 3}), ("verify", {"SIMSTORE_VERIFY": 0.5})]:
        p = pipeline(SIMSTORE_DB=str(tmp_path / f"{name}.db"), **settings)
        p.open_spider()
        try:
            assert p._check("a", text, None, None).status == "new"
            outcomes[name] = p._check("b", shuffled, None, None).status
        finally:
            p.close_spider()
    assert outcomes == {"mode": "new", "k": "near_duplicate", "verify": "new"}


def test_a_k_above_an_existing_stores_k_max_stops_the_crawl(tmp_path: Path) -> None:
    db = tmp_path / "pages.db"
    simstore.Store(db).close()  # standard: k_max 3
    p = pipeline(SIMSTORE_DB=str(db), SIMSTORE_K=5)
    with pytest.raises(simstore.KTooLargeError, match="SIMSTORE_K = 5 is above the k_max"):
        p.open_spider()
    assert p.store is None
    with simstore.Store(db) as store:  # closed again: not locked
        assert store.k_max == 3


def _items(pipe: SimstorePipeline, items: list) -> list:
    """The items ``pipe`` passes on (a dropped one is left out), in order; the checks run
    inline instead of in the reactor's pool, as there is no crawl."""
    import asyncio

    from scrapy.exceptions import DropItem
    from twisted.internet import defer

    import simstore.scrapy as module

    passed = []

    async def run_all() -> None:
        for item in items:
            try:
                passed.append(await pipe.process_item(item))
            except DropItem:
                pass

    original = module.deferToThread
    module.deferToThread = lambda f, *a: defer.succeed(f(*a))  # type: ignore[assignment]
    try:
        asyncio.run(run_all())
    finally:
        module.deferToThread = original  # type: ignore[assignment]
    return passed


ARTICLES = [
    "The city council approved a new budget on Tuesday, adding funds for parks and libraries across the districts.",
    "A research ship returned to the harbour after two years of measuring the ice of the Arctic ocean and its storms.",
    "The museum opens an exhibition of last century's painters on Saturday, with works lent by private collectors.",
]


def test_items_without_text_are_passed_unchecked_never_compared_by_title(tmp_path: Path) -> None:
    """Items whose text is in a field the pipeline does not read (and no page) were compared
    by their site-wide title alone: every article after the first dropped as an exact
    duplicate. They pass unchecked now, counted and said once."""
    p = pipeline(SIMSTORE_DB=str(tmp_path / "a.db"))
    p.open_spider()
    try:
        items = [{"url": f"http://127.0.0.1/{i}", "title": "Example News", "content": t} for i, t in enumerate(ARTICLES)]
        assert _items(p, items) == items
        assert p.store is not None and len(p.store) == 0
    finally:
        p.close_spider()


def test_an_empty_text_reads_the_page(tmp_path: Path) -> None:
    """An empty text (an empty selector result) kept the HTML unread: copies passed."""
    page = ("<html><head><title>Budget</title></head><body><article><p>" + ARTICLES[0] + " " + ARTICLES[1]
            + "</p></article></body></html>")
    p = pipeline(SIMSTORE_DB=str(tmp_path / "b.db"))
    p.open_spider()
    try:
        items = [{"url": f"http://127.0.0.1/{i}", "text": empty, "html": page} for i, empty in enumerate(["", [], "  \n"])]
        assert _items(p, items) == items[:1]
    finally:
        p.close_spider()


def test_pipelines_of_one_process_share_a_store(tmp_path: Path) -> None:
    """Two spiders of one process naming one SIMSTORE_DB: the second was refused as locked."""
    db = str(tmp_path / "shared.db")
    first, second = pipeline(SIMSTORE_DB=db), pipeline(SIMSTORE_DB=db)
    first.open_spider()
    second.open_spider()
    try:
        item = {"url": "http://127.0.0.1/a", "text": ARTICLES[2]}
        assert _items(first, [item]) == [item]
        assert _items(second, [{"url": "http://127.0.0.1/b", "text": ARTICLES[2]}]) == []
    finally:
        first.close_spider()
    assert second.store is not None and len(second.store) == 1  # still open for the other
    second.close_spider()
    with simstore.Store(db) as store:  # closed by the last: not locked
        assert len(store) == 1
    with pytest.raises(simstore.InvalidArgumentError, match="SIMSTORE_K = -1"):
        pipeline(SIMSTORE_K=-1)
