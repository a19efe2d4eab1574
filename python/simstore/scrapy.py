"""A Scrapy item pipeline that drops (or tags) pages already crawled — exact or near duplicates.

Enable it in the project's settings::

    ITEM_PIPELINES = {"simstore.scrapy.SimstorePipeline": 300}
    SIMSTORE_DB = "pages.db"          # a store path (created if missing) or redis://… URL

Each item's page text goes through :meth:`simstore.Store.check_and_insert`: a new page is
stored and the item passes on; a page with the same words as a stored one (an exact
duplicate) or a near duplicate of one is dropped (:class:`scrapy.exceptions.DropItem`,
naming the page it repeats) — or, with ``SIMSTORE_ON_DUPLICATE = "tag"``, passed on with
the fields ``duplicate_of`` (the stored page's id), ``duplicate_kind`` (``"exact"`` or
``"near"``), ``duplicate_distance`` (Hamming bits) and ``duplicate_similarity`` (of the
shingle sketches, 0 to 1; None for a page stored as a fingerprint), for later pipelines to
decide (a ``scrapy.Item`` class must declare them; a dict item takes them as they are). A
tagged duplicate is still not stored. What counts as a near duplicate is, by default, the store's
quality mode (``simstore init --quality``, or ``SIMSTORE_QUALITY`` for a store the pipeline
creates): every stored page within the tables' k_max, and pages up to 12 bits away (high:
14) whose texts' shingle sketches agree — the answer ``simstore query`` and ``simstore serve`` give.
``SIMSTORE_K`` and ``SIMSTORE_VERIFY`` override it, as ``k`` and ``verify`` of
``check_and_insert`` do. Settings:

================================  ==========  ===============================================
``SIMSTORE_DB``                   (required)  the store: a directory, or a Redis Cluster URL
``SIMSTORE_K``                    the mode    near duplicate: within K bits (<= k_max)
                                              instead of the store's quality mode
``SIMSTORE_VERIFY``               the mode    near duplicate: within ``SIMSTORE_K`` (default
                                              k_max) and sketch similarity >= T (0..1)
``SIMSTORE_QUALITY``              standard    the quality mode of a store the pipeline
                                              creates: ``standard`` or ``high``
``SIMSTORE_K_MAX``                the mode's  k_max of a store it creates (3 in either
                                              mode; raised to ``SIMSTORE_K`` if larger)
``SIMSTORE_EXPECTED_DOCS``        1,000,000   sizes the tables of a store it creates
``SIMSTORE_TEXT_FIELD``           "text"      the item field with the page's main text
``SIMSTORE_TITLE_FIELD``          "title"     the field with its title (optional)
``SIMSTORE_URL_FIELD``            "url"       the field with its URL (stored with it)
``SIMSTORE_ID_FIELD``             the URL     the field naming the page in the store
``SIMSTORE_HTML_FIELD``           "html"      used when the item has no text (none, or only
                                              whitespace): the raw
                                              page, reduced to title and main text by
                                              :func:`simstore.extract_page`; what it
                                              left out (link lists) is passed too, so
                                              listing pages of one intro stay apart
``SIMSTORE_ON_DUPLICATE``         "drop"      ``drop`` a duplicate's item, or ``tag`` it
                                              and pass it on
================================  ==========  ===============================================

The quality mode, k_max and table sizes only matter when the pipeline creates the store; an
existing store keeps its own. A ``SIMSTORE_K`` above an existing store's k_max stops the
crawl when the spider opens (:class:`simstore.KTooLargeError`).

A dropped duplicate is logged at Scrapy's ``DEFAULT_DROPITEM_LOG_LEVEL`` (a warning unless
set): set it to ``"INFO"``, as the example project does, so that a crawl of many duplicates
does not print a warning for each.

Counters in the crawl's stats: ``simstore/new``, ``simstore/exact``, ``simstore/near``, and
``simstore/no_text`` / ``simstore/no_id`` for items passed on unchecked, each with a
warning the first time: an item with neither a text in ``SIMSTORE_TEXT_FIELD`` nor a page
in ``SIMSTORE_HTML_FIELD`` (a title alone is never compared: one site-wide title would make
every page a duplicate of the first), or without an id (``SIMSTORE_ID_FIELD``, else
``SIMSTORE_URL_FIELD``).

Several pipelines of one process (two spiders of one ``CrawlerProcess``) naming the same
``SIMSTORE_DB`` share one open store, closed when the last of them closes.

Concurrency: Scrapy calls pipelines in its reactor thread. The check runs in the reactor's
thread pool (``deferToThread``), and the engine releases the GIL, so fingerprinting and the
store's writes overlap with downloading and parsing, several items at once. That is safe
because ``check_and_insert`` is atomic: of concurrent copies of one page, exactly one is
stored, and every check sees every page stored before it.
"""

from __future__ import annotations

import logging
import threading
from typing import Any, Callable, Literal, Optional, cast

try:
    from itemadapter import ItemAdapter
    from scrapy.exceptions import DropItem, NotConfigured
    from scrapy.utils.defer import maybe_deferred_to_future
    from twisted.internet.threads import deferToThread
except ImportError as _missing:  # Scrapy is an optional dependency
    raise ImportError(f"simstore.scrapy needs Scrapy (pip install 'simstore[scrapy]'): {_missing}") from _missing

from . import CheckResult, EmptyDocumentError, Error, InvalidArgumentError, KTooLargeError, Store, extract_page
from ._simstore import QUALITY_K_MAX

__all__ = ["SimstorePipeline", "TAG_FIELDS"]

_STATS = {"new": "simstore/new", "exact_duplicate": "simstore/exact", "near_duplicate": "simstore/near"}
_KINDS = {"exact_duplicate": "exact", "near_duplicate": "near"}
_ON_DUPLICATE = ("drop", "tag")
TAG_FIELDS = ("duplicate_of", "duplicate_kind", "duplicate_distance", "duplicate_similarity")
"""The fields a tagged duplicate gets (``SIMSTORE_ON_DUPLICATE = "tag"``)."""

logger = logging.getLogger(__name__)


class SimstorePipeline:
    """Drops (or tags, ``on_duplicate="tag"``) items whose page is an exact or near
    duplicate of one already stored; stores the others. See the module's documentation for
    the settings."""

    def __init__(
        self,
        db: str,
        *,
        k: Optional[int] = None,
        verify: Optional[float] = None,
        quality: Optional[str] = None,
        k_max: Optional[int] = None,
        expected_docs: Optional[int] = None,
        text_field: str = "text",
        title_field: str = "title",
        url_field: str = "url",
        id_field: Optional[str] = None,
        html_field: str = "html",
        on_duplicate: str = "drop",
        stats: Any = None,
    ) -> None:
        if on_duplicate not in _ON_DUPLICATE:
            raise InvalidArgumentError(f"SIMSTORE_ON_DUPLICATE = {on_duplicate!r}: use drop or tag")
        if quality is not None and quality not in QUALITY_K_MAX:
            raise InvalidArgumentError(f"SIMSTORE_QUALITY = {quality!r}: use standard or high")
        for name, value in (("SIMSTORE_K", k), ("SIMSTORE_K_MAX", k_max), ("SIMSTORE_EXPECTED_DOCS", expected_docs)):
            if value is not None and value < 0:
                raise InvalidArgumentError(f"{name} = {value}: expected a whole number >= 0")
        if verify is not None and not 0.0 <= verify <= 1.0:
            raise InvalidArgumentError(f"SIMSTORE_VERIFY = {verify}: a sketch similarity between 0 and 1")
        self.db = db
        self.k = k
        self.verify = verify
        self.quality = cast(Optional[Literal["standard", "high"]], quality)  # checked above
        self.k_max = _k_max(k_max, k, quality)
        self.expected_docs = expected_docs
        self.text_field = text_field
        self.title_field = title_field
        self.url_field = url_field
        self.id_field = id_field or url_field
        self.html_field = html_field
        self.on_duplicate = on_duplicate
        self.stats = stats
        self.store: Optional[Store] = None
        self._warned: set[str] = set()

    @classmethod
    def from_crawler(cls, crawler: Any) -> "SimstorePipeline":
        s = crawler.settings
        db = s.get("SIMSTORE_DB")
        if not db:
            raise NotConfigured("SimstorePipeline needs SIMSTORE_DB (a store path or redis:// URL)")
        expected = s.getint("SIMSTORE_EXPECTED_DOCS", 0)
        return cls(
            str(db),
            k=_setting(s, "SIMSTORE_K", int),
            verify=_setting(s, "SIMSTORE_VERIFY", float),
            quality=s.get("SIMSTORE_QUALITY") or None,
            k_max=_setting(s, "SIMSTORE_K_MAX", int),
            expected_docs=expected or None,
            text_field=s.get("SIMSTORE_TEXT_FIELD", "text"),
            title_field=s.get("SIMSTORE_TITLE_FIELD", "title"),
            url_field=s.get("SIMSTORE_URL_FIELD", "url"),
            id_field=s.get("SIMSTORE_ID_FIELD"),
            html_field=s.get("SIMSTORE_HTML_FIELD", "html"),
            on_duplicate=str(s.get("SIMSTORE_ON_DUPLICATE") or "drop").lower(),
            stats=crawler.stats,
        )

    def open_spider(self, spider: Any = None) -> None:
        store = _open_shared(self.db, k_max=self.k_max, quality=self.quality, expected_docs=self.expected_docs)
        k_max = store.k_max
        if self.k is not None and self.k > k_max:
            _close_shared(self.db)
            raise KTooLargeError(
                f"SIMSTORE_K = {self.k} is above the k_max of {self.db} ({k_max}): use a smaller "
                "SIMSTORE_K, or leave it unset for the store's quality mode"
            )
        self.store = store
        logger.info("simstore: %s (quality %s, k_max %d); near duplicates: %s; duplicates %s",
                    self.db, store.quality, k_max, self._rule(),
                    "dropped" if self.on_duplicate == "drop" else "tagged and passed on")

    def _rule(self) -> str:
        """The rule the checks apply, in words (for the log)."""
        if self.k is None and self.verify is None:
            return "the store's quality mode"
        within = f"within {self.k} bits" if self.k is not None else "within k_max"
        return within if self.verify is None else f"{within}, sketch similarity >= {self.verify}"

    def close_spider(self, spider: Any = None) -> None:
        if self.store is not None:
            _close_shared(self.db)
            self.store = None

    async def process_item(self, item: Any, spider: Any = None) -> Any:
        page = self._page(ItemAdapter(item))
        if page is None:
            return item
        try:
            result, similarity = await maybe_deferred_to_future(deferToThread(self._check_and_compare, *page))
        except EmptyDocumentError:
            # Only punctuation or stop-word-free symbols: nothing to compare; passed on.
            self._inc("simstore/no_text")
            return item
        self._inc(_STATS[result.status])
        if result.status == "new":
            return item
        kind = _KINDS[result.status]
        if self.on_duplicate == "drop":
            article = "an" if kind == "exact" else "a"
            raise DropItem(f"{page[0]} is {article} {kind} duplicate of {result.of} (distance {result.distance})")
        _tag(item, (result.of, kind, result.distance, similarity))
        return item

    def _page(self, item: ItemAdapter) -> Optional[tuple]:
        """(id, text, title, url, left_out) of an item, or None (counted, and said once)
        when it cannot be checked; ``left_out`` is what the HTML reader left out of the
        text of an item given as HTML (None for one given as text). A text of whitespace
        alone is no text; a title alone is not compared."""
        url = _str(item.get(self.url_field))
        page_id = _str(item.get(self.id_field))
        text = _str(item.get(self.text_field))
        title = _str(item.get(self.title_field))
        html = item.get(self.html_field)
        left_out = None
        if not (text or "").strip():
            text = None
            if html is not None and len(html) > 0:
                extracted_title, text, left_out = extract_page(html, left_out=True)
                title = title or extracted_title
        if not page_id:
            self._unchecked("simstore/no_id", f"items without an id (no {self.id_field!r} field) are passed on unchecked")
            return None
        if not (text or "").strip():
            self._unchecked(
                "simstore/no_text",
                f"items without a text in {self.text_field!r} or a page in {self.html_field!r} are passed on "
                "unchecked (set SIMSTORE_TEXT_FIELD / SIMSTORE_HTML_FIELD to the item's fields)",
            )
            return None
        return page_id, text, title, url, left_out

    def _unchecked(self, key: str, why: str) -> None:
        """Counts an item passed on unchecked; warns the first time for each reason."""
        self._inc(key)
        if key not in self._warned:
            self._warned.add(key)
            logger.warning("simstore: %s (counted in %s)", why, key)

    def _check(
        self, page_id: str, text: str, title: Optional[str], url: Optional[str], left_out: Optional[str] = None
    ) -> CheckResult:
        """Runs in a thread of the reactor's pool; the engine releases the GIL."""
        if self.store is None:
            raise Error("SimstorePipeline.process_item before open_spider (or after close_spider)")
        return self.store.check_and_insert(
            page_id, text, title=title, url=url, k=self.k, verify=self.verify, left_out=left_out
        )

    def _check_and_compare(
        self, page_id: str, text: str, title: Optional[str], url: Optional[str], left_out: Optional[str] = None
    ) -> tuple[CheckResult, Optional[float]]:
        """:meth:`_check`, and for a duplicate to tag its sketch similarity to the page it
        repeats (in the same thread of the pool)."""
        result = self._check(page_id, text, title, url, left_out)
        if self.on_duplicate != "tag" or result.of is None or self.store is None:
            return result, None
        return result, self.store.similarity(result.of, text, title=title)

    def _inc(self, key: str) -> None:
        if self.stats is not None:
            self.stats.inc_value(key)


_SHARED: dict[str, list[Any]] = {}  # path: [the Store, how many pipelines hold it]
_SHARED_LOCK = threading.Lock()


def _open_shared(db: str, **options: Any) -> Store:
    """The store ``db`` opened once per process for every pipeline that names it (a store
    has one writer: a second ``Store`` of one path would be refused as locked)."""
    with _SHARED_LOCK:
        entry = _SHARED.get(db)
        if entry is None:
            entry = _SHARED[db] = [Store(db, **options), 0]
        entry[1] += 1
        return cast(Store, entry[0])


def _close_shared(db: str) -> None:
    """Closes ``db``'s store when the last pipeline that opened it lets go."""
    with _SHARED_LOCK:
        entry = _SHARED.get(db)
        if entry is None:
            return
        entry[1] -= 1
        if entry[1] == 0:
            del _SHARED[db]
            entry[0].close()


def _tag(item: Any, values: tuple) -> None:
    """Sets the :data:`TAG_FIELDS` of a duplicate's item; a clear error when its class does
    not declare them."""
    adapter = ItemAdapter(item)
    name = TAG_FIELDS[0]
    try:
        for name, value in zip(TAG_FIELDS, values):
            adapter[name] = value
    except KeyError:
        raise InvalidArgumentError(
            f"SIMSTORE_ON_DUPLICATE = 'tag': the item class {type(item).__name__} does not declare "
            f"the field {name!r}; "
            f"declare {', '.join(TAG_FIELDS)} (or yield dicts)"
        ) from None


def _k_max(k_max: Optional[int], k: Optional[int], quality: Optional[str]) -> Optional[int]:
    """The k_max to create a store with: ``k_max`` if given, else None (the mode's own
    layout); raised to ``k`` when that is larger than it (or than the mode's k_max)."""
    mode = QUALITY_K_MAX[quality or "standard"]
    if k_max is None and (k is None or k <= mode):
        return None
    return max(k_max if k_max is not None else mode, k if k is not None else 0)


def _setting(settings: Any, name: str, kind: Callable[[Any], Any]) -> Any:
    """An optional setting as ``kind`` (int, float); None when unset or empty."""
    value = settings.get(name)
    if value is None or value == "":
        return None
    try:
        return kind(value)
    except (TypeError, ValueError):
        raise InvalidArgumentError(f"{name} = {value!r}: expected a number") from None


def _str(value: Any) -> Optional[str]:
    """A field as str: a list of strings (as selectors return) joined by newlines."""
    if value is None:
        return None
    if isinstance(value, (list, tuple)):
        return "\n".join(str(v) for v in value)
    return str(value)
