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
from simstore.scrapy import SimstorePipeline

PROJECT = REPO / "examples" / "scrapy_project"
TESTS = Path(__file__).parent
MANIFEST = json.loads((SITE / "manifest.json").read_text(encoding="utf-8"))


def crawl(tmp_path: Path, site_url: str, *args: str) -> dict:
    """Runs a crawl of the site's waves (the publisher, then the mirror and the reposts);
    returns its stats, the kept items' URLs, the dropped pages and the store's path."""
    tmp_path.mkdir(parents=True, exist_ok=True)
    db, log, stats, kept = (tmp_path / n for n in ("pages.db", "crawl.log", "stats.json", "kept.jsonl"))
    waves = f"{site_url}/news/index.html;{site_url}/mirror/index.html,{site_url}/repost/index.html"
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(PROJECT), str(TESTS)]))
    cmd = [
        sys.executable, "-m", "scrapy", *args, "-a", f"waves={waves}",
        "-s", f"SIMSTORE_DB={db}", "-s", f"LOG_FILE={log}", "-s", f"STATS_JSON={stats}",
        "-s", 'EXTENSIONS={"crawl_stats.StatsToJson": 500}', "-s", "CONCURRENT_REQUESTS=16",
        "-s", "FEED_EXPORT_FIELDS=url,link", "-O", f"{kept}:jsonlines",
    ]
    proc = subprocess.run(cmd, cwd=PROJECT, env=env, capture_output=True, text=True, timeout=600)
    log_text = log.read_text(encoding="utf-8") if log.exists() else ""
    assert proc.returncode == 0, f"{proc.stderr}\n{log_text}"
    assert "Traceback" not in log_text, log_text
    dropped = {
        m["page"]: (m["kind"], m["of"], int(m["d"]))
        for m in re.finditer(r"Dropped: (?P<page>\S+) is an (?P<kind>exact|near) duplicate of (?P<of>\S+) "
                             r"\(distance (?P<d>\d+)\)", log_text)
    }
    items = [json.loads(line) for line in kept.read_text(encoding="utf-8").splitlines()]
    return {"stats": json.loads(stats.read_text(encoding="utf-8")), "kept": items, "dropped": dropped, "db": db}


def expected(site_url: str) -> tuple:
    originals = {site_url + p for p, e in MANIFEST.items() if e["role"] == "original"}
    copies = {site_url + p: (e["role"], site_url + e["of"]) for p, e in MANIFEST.items() if e["role"] != "original"}
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


def test_crawl_with_selector_fields(tmp_path: Path, site_url: str) -> None:
    """Fields extracted by the spider (other names, text as a list of paragraphs). Without
    the headline in the text, the edited headline of the harbour repost moves its fingerprint
    4 bits: found with SIMSTORE_K = 4 (in a store made with k_max 4), not with 3."""
    fields = ["-s", "SIMSTORE_TEXT_FIELD=body", "-s", "SIMSTORE_TITLE_FIELD=headline", "-s", "SIMSTORE_URL_FIELD=link"]
    result = crawl(tmp_path, site_url, "runspider", str(TESTS / "selectors_spider.py"), *fields,
                   "-s", "SIMSTORE_K=4", "-s", "SIMSTORE_K_MAX=4")
    check_crawl(result, site_url, "link", k=4)
    repost = f"{site_url}/repost/harbour-bike-lanes.html"
    assert result["dropped"][repost] == ("near", f"{site_url}/news/harbour-bike-lanes.html", 4)
    with simstore.Store(result["db"], read_only=True) as store:
        assert store.k_max == 4

    at_3 = crawl(tmp_path / "k3", site_url, "runspider", str(TESTS / "selectors_spider.py"), *fields)
    assert {item["link"] for item in at_3["kept"]} == expected(site_url)[0] | {repost}


def test_a_second_crawl_keeps_nothing_new(tmp_path: Path, site_url: str) -> None:
    """Re-crawling the site into the same store: every page repeats a stored one."""
    crawl(tmp_path, site_url, "crawl", "pages")
    again = crawl(tmp_path, site_url, "crawl", "pages")
    assert again["kept"] == [] and "simstore/new" not in again["stats"]
    assert again["stats"]["item_dropped_count"] == len(MANIFEST)


def test_pipeline_needs_a_store() -> None:
    with pytest.raises(NotConfigured, match="SIMSTORE_DB"):
        SimstorePipeline.from_crawler(get_crawler(settings_dict={}))
    p = SimstorePipeline.from_crawler(get_crawler(settings_dict={"SIMSTORE_DB": "x.db", "SIMSTORE_K": 2}))
    assert (p.db, p.k, p.id_field, p.text_field) == ("x.db", 2, "url", "text")
