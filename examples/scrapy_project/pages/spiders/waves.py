"""A spider that crawls its seeds in waves, trusted sources first.

Which copy of a page a deduplicating crawl keeps is the one it checks first. To keep the
publisher's originals rather than an aggregator's copies, crawl the publisher first: this
spider takes waves of seed pages (``-a waves="URL,URL;URL"``: waves separated by ``;``),
fetches every page linked from the first wave's seeds, and only when all of them have been
processed (Scrapy's ``spider_idle``) starts the next wave. Within a wave, pages are fetched
concurrently. Each page becomes an item ``{"url", "html"}``.
"""

from __future__ import annotations

from typing import Any, Iterator

import scrapy
from scrapy import signals
from scrapy.exceptions import DontCloseSpider


class WavesSpider(scrapy.Spider):
    name = "pages"

    def __init__(self, waves: str = "", *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.waves = [[u.strip() for u in w.split(",") if u.strip()] for w in waves.split(";")]
        self.waves = [w for w in self.waves if w]
        if not self.waves:
            raise ValueError('give the seeds: scrapy crawl pages -a waves="URL,URL;URL"')

    @classmethod
    def from_crawler(cls, crawler: Any, *args: Any, **kwargs: Any) -> "WavesSpider":
        spider = super().from_crawler(crawler, *args, **kwargs)
        crawler.signals.connect(spider.next_wave_when_idle, signal=signals.spider_idle)
        return spider

    async def start(self) -> Any:  # Scrapy >= 2.13
        for request in self._next_wave():
            yield request

    def start_requests(self) -> Iterator[scrapy.Request]:  # older Scrapy
        yield from self._next_wave()

    def _next_wave(self) -> list:
        if not self.waves:
            return []
        return [scrapy.Request(url, callback=self.parse_index) for url in self.waves.pop(0)]

    def next_wave_when_idle(self) -> None:
        requests = self._next_wave()
        if requests:
            for request in requests:
                self.crawler.engine.crawl(request)
            raise DontCloseSpider

    def parse_index(self, response: scrapy.http.Response) -> Iterator[scrapy.Request]:
        for href in response.css("a::attr(href)").getall():
            yield response.follow(href, callback=self.parse_page)

    def parse_page(self, response: scrapy.http.Response) -> Iterator[dict]:
        yield {"url": response.url, "html": response.text}
