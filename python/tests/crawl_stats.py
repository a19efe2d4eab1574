"""A Scrapy extension for the crawl tests: writes the crawl's stats as JSON when the spider
closes, to the file named by the STATS_JSON setting."""

from __future__ import annotations

import json
from typing import Any

from scrapy import signals


class StatsToJson:
    def __init__(self, crawler: Any) -> None:
        self.crawler = crawler
        self.path = crawler.settings.get("STATS_JSON")
        crawler.signals.connect(self.spider_closed, signal=signals.spider_closed)

    @classmethod
    def from_crawler(cls, crawler: Any) -> "StatsToJson":
        return cls(crawler)

    def spider_closed(self, spider: Any, reason: str) -> None:
        stats = dict(self.crawler.stats.get_stats())
        stats["finish_reason"] = reason
        with open(self.path, "w", encoding="utf-8") as f:
            json.dump(stats, f, default=str)
