"""Type stubs of the native module ``simstore._simstore`` (the Rust extension)."""

import os
from typing import Any, Iterable, Iterator, Literal, Mapping, Optional, Sequence, Union, final, overload

from ._types import Fingerprint

__all__ = [
    "CheckResult",
    "K_MAX_DEFAULT",
    "Match",
    "QUALITY_K_MAX",
    "SPEC",
    "Store",
    "StoredDocument",
    "_dedup",
    "_parse_fingerprint",
    "extract_page",
    "fingerprint",
    "list_backups",
    "restore",
]

_FingerprintLike = Union[int, str]
"""A fingerprint argument: an int (0 <= fp < 2**64; a ``Fingerprint`` is one) or 16 hex digits."""

_Query = Union[str, int, Mapping[str, Any]]
"""A query of ``Store.query_batch``: a text, a fingerprint, or {"text", "title"} / {"fp"}."""

SPEC: str
"""The fingerprint spec of this build (a store remembers its own and refuses another)."""

K_MAX_DEFAULT: int

QUALITY_K_MAX: dict[str, int]
"""The k_max of a store created in each quality mode: {"standard": 3, "high": 3}."""

@final
class Match:
    """A stored document within the asked distance of a query."""

    @property
    def id(self) -> str: ...
    @property
    def distance(self) -> int: ...
    @property
    def fp(self) -> Fingerprint: ...
    @property
    def title(self) -> Optional[str]: ...
    @property
    def url(self) -> Optional[str]: ...

@final
class CheckResult:
    """What ``Store.check_and_insert`` found and did."""

    @property
    def status(self) -> Literal["new", "exact_duplicate", "near_duplicate"]: ...
    @property
    def of(self) -> Optional[str]: ...
    @property
    def distance(self) -> Optional[int]: ...
    @property
    def fp(self) -> Fingerprint: ...
    @property
    def replaced(self) -> bool: ...
    @property
    def is_new(self) -> bool: ...

@final
class StoredDocument:
    """A stored document (from ``Store.get``)."""

    @property
    def id(self) -> str: ...
    @property
    def fp(self) -> Fingerprint: ...
    @property
    def title(self) -> Optional[str]: ...
    @property
    def url(self) -> Optional[str]: ...
    @property
    def length(self) -> int: ...
    @property
    def time(self) -> int: ...
    @property
    def seen(self) -> int: ...

@final
class Store:
    """A persistent store of SimHash fingerprints; a context manager; shareable by threads.

    It belongs to the process that opened it: in a child of ``fork()`` (``os.fork``, a
    ``multiprocessing`` worker of the fork start method) every call raises
    ``simstore.ForkedError`` and the child never writes, flushes or closes the parent's
    store. Open the store after forking, in the child; or use the spawn/forkserver start
    method.
    """

    def __new__(
        cls,
        path_or_url: Union[str, "os.PathLike[str]"],
        *,
        k_max: Optional[int] = None,
        quality: Optional[Literal["standard", "high"]] = None,
        expected_docs: Optional[int] = None,
        read_only: bool = False,
        sync_writes: bool = False,
    ) -> "Store": ...
    @property
    def path(self) -> str: ...
    @property
    def k_max(self) -> int: ...
    @property
    def quality(self) -> Literal["standard", "high"]: ...
    @property
    def read_only(self) -> bool: ...
    @property
    def closed(self) -> bool: ...
    def close(self) -> None:
        """Closes the store and releases its lock (a no-op when closed). Calls in progress in
        other threads finish first (close waits for them with the GIL released; calls made
        meanwhile raise ``ClosedError``), so when it returns the same path can be opened
        again. Raises ``ForkedError`` in a forked child (which leaves the store alone)."""
    def __enter__(self) -> "Store": ...
    def __exit__(self, *args: object) -> bool: ...
    def insert(
        self,
        id: str,
        text: str,
        *,
        title: Optional[str] = None,
        url: Optional[str] = None,
        left_out: Optional[str] = None,
    ) -> Literal["inserted", "replaced"]: ...
    def insert_fingerprint(
        self, id: str, fp: _FingerprintLike, *, title: Optional[str] = None, url: Optional[str] = None
    ) -> Literal["inserted", "replaced"]: ...
    def check_and_insert(
        self,
        id: str,
        text: str,
        *,
        title: Optional[str] = None,
        url: Optional[str] = None,
        k: Optional[int] = None,
        verify: Optional[float] = None,
        left_out: Optional[str] = None,
    ) -> CheckResult: ...
    def query(
        self,
        text: Optional[str] = None,
        *,
        fp: Optional[_FingerprintLike] = None,
        title: Optional[str] = None,
        k: Optional[int] = None,
        limit: Optional[int] = None,
        verify: Optional[float] = None,
        left_out: Optional[str] = None,
    ) -> list[Match]: ...
    def query_batch(
        self, queries: Iterable[_Query], *, k: Optional[int] = None, limit: Optional[int] = None
    ) -> list[list[Match]]: ...
    def get(self, id: str) -> Optional[StoredDocument]: ...
    def delete(self, id: str) -> bool: ...
    def delete_many(self, ids: Sequence[str]) -> list[bool]:
        """Deletes the documents ``ids`` and their table entries in one change set: on
        RocksDB either every one that is stored goes or (on an error) none does. Returns,
        for each id in order, whether it was stored (an id listed twice: ``False`` the
        second time)."""
    def similarity(self, id: str, text: str, *, title: Optional[str] = None) -> Optional[float]:
        """How much of ``text``'s wording (with ``title``) the stored document ``id`` shares:
        the similarity (0 to 1) of their shingle sketches, the measure ``verify`` and the
        quality modes threshold. None when ``id`` is not stored or either side has no
        sketch (a document stored as a fingerprint)."""
    def ids(self, *, from_seq: int = 0, chunk: int = 10000) -> Iterator[str]:
        """The stored ids in insertion order, read ``chunk`` at a time (the GIL released
        for each chunk), as ``simstore ids``. See ``export`` for what a long iteration
        sees of writes made meanwhile."""
    def export(self, *, from_seq: int = 0, chunk: int = 10000) -> Iterator[dict[str, Any]]:
        """Every stored document as a dict, in insertion order, read ``chunk`` at a time
        (the GIL released for each chunk): ``seq``, ``id``, ``fp`` (a ``Fingerprint``),
        ``title``, ``url``, ``length``, ``time``, ``seen``, ``content_hash`` (32 hex
        digits) and ``sketch`` (bytes), ``None`` where the document has none: the fields
        of ``simstore export``. Each chunk resumes after the last document read (pass its
        ``seq + 1`` as ``from_seq`` to resume an interrupted export): a document replaced
        meanwhile by another fingerprint comes again under its new ``seq``, documents
        stored meanwhile come at the end. On a Redis Cluster store each chunk lists the
        store's ids anew: use a large ``chunk`` (or ``simstore export``) there."""
    def stats(self) -> dict[str, Any]: ...
    def check(self) -> dict[str, Any]: ...
    def dedup(self, k: Optional[int] = None) -> list[list[str]]: ...
    def expire(
        self,
        *,
        older_than: Union[str, int, None] = None,
        before: Union[str, int, None] = None,
        by: Optional[str] = None,
        dry_run: bool = False,
    ) -> dict[str, Any]: ...
    def retention(self) -> dict[str, Any]: ...
    def compact(self) -> None: ...
    def backup(self, dest: Union[str, os.PathLike[str]], *, keep: Optional[int] = None) -> dict[str, int]: ...
    def set_retention(
        self,
        *,
        retain: Union[str, int, None] = None,
        keep_all: bool = False,
        track_seen: Optional[bool] = None,
        by: Optional[str] = None,
    ) -> dict[str, Any]: ...
    def flush(self) -> None: ...
    def __len__(self) -> int: ...
    def __contains__(self, key: str, /) -> bool: ...

def fingerprint(text: str, title: Optional[str] = None) -> Fingerprint: ...
@overload
def extract_page(
    html: Union[str, bytes], *, charset: Optional[str] = None, left_out: Literal[False] = False
) -> tuple[Optional[str], str]: ...
@overload
def extract_page(
    html: Union[str, bytes], *, charset: Optional[str] = None, left_out: Literal[True]
) -> tuple[Optional[str], str, str]: ...
def _parse_fingerprint(text: str) -> int: ...
def _dedup(
    texts: list[Optional[str]],
    order: Optional[list[int]] = None,
    quality: str = "standard",
    k: Optional[int] = None,
    verify: Optional[float] = None,
    keep_none: bool = False,
    pages: Optional[list[Optional[str]]] = None,
) -> list[int]: ...
def restore(
    backup: Union[str, os.PathLike[str]], path: Union[str, os.PathLike[str]], *, id: Optional[int] = None
) -> dict[str, int]: ...
def list_backups(dest: Union[str, os.PathLike[str]]) -> list[dict[str, int]]: ...
