"""simstore: near-duplicate detection for crawlers, in-process.

A persistent store of 64-bit SimHash fingerprints (Rust, on RocksDB or a Redis Cluster):
store every fetched page through one atomic call, and learn whether it repeats a page you
already have.

>>> import simstore
>>> with simstore.Store("pages.db") as store:                          # doctest: +SKIP
...     store.check_and_insert("https://e.com/a", "今天北京的天气很好……", title="北京天气").status
'new'

- :class:`Store`: the store (``check_and_insert``, ``insert``, ``query``, ``get``...).
- :func:`fingerprint`, :class:`Fingerprint`: fingerprints without a store.
- :func:`extract_page`: a web page's title and main text, as simstore reads HTML.
- :func:`dedup`: the records of a dataset (a ``datasets.Dataset``, texts, files) to keep.
- :func:`restore`, :func:`list_backups`: the backups ``Store.backup`` takes.
- :mod:`simstore.errors`: the exceptions (all :class:`Error`).
- :mod:`simstore.scrapy`: the Scrapy item pipeline (``pip install simstore[scrapy]``).
"""

from __future__ import annotations

from . import errors
from ._simstore import (
    SPEC,
    CheckResult,
    Match,
    Store,
    StoredDocument,
    extract_page,
    fingerprint,
    list_backups,
    restore,
)
from ._types import Fingerprint
from .dedup import dedup
from .errors import (
    ClosedError,
    CorruptStoreError,
    EmptyDocumentError,
    Error,
    ForkedError,
    IncompatibleStoreError,
    InvalidArgumentError,
    InvalidFingerprintError,
    KTooLargeError,
    LockedError,
    NoStoreError,
    NotAStoreError,
    ReadOnlyError,
    StorageError,
)

__version__ = "0.1.0"

__all__ = [
    "SPEC",
    "CheckResult",
    "Fingerprint",
    "Match",
    "Store",
    "StoredDocument",
    "dedup",
    "extract_page",
    "fingerprint",
    "list_backups",
    "restore",
    "errors",
    "Error",
    "LockedError",
    "NoStoreError",
    "NotAStoreError",
    "IncompatibleStoreError",
    "CorruptStoreError",
    "ReadOnlyError",
    "ClosedError",
    "ForkedError",
    "StorageError",
    "InvalidArgumentError",
    "InvalidFingerprintError",
    "KTooLargeError",
    "EmptyDocumentError",
]
