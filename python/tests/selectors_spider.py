"""The example's waves spider, extracting fields with CSS selectors instead of passing the
HTML: the pipeline then reads the text, title and URL fields named by the settings."""

from __future__ import annotations

from typing import Any, Iterator

from pages.spiders.waves import WavesSpider


class SelectorsSpider(WavesSpider):
    name = "selectors"

    def parse_page(self, response: Any) -> Iterator[dict]:
        yield {
            "link": response.url,
            "headline": response.css("article h1::text").get(),
            "body": response.css("article p::text").getall(),
        }
