"""The exceptions simstore raises.

Every error of the engine is a :class:`simstore.Error` (a subclass below names the kind), with
the engine's message: what was found and what to do. Errors about an argument are also
``ValueError``\\ s.
"""

from __future__ import annotations

__all__ = [
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


class Error(Exception):
    """Base class of every simstore error."""


class LockedError(Error):
    """Another process (or another open ``Store``) is writing the store: one writer at a time.
    Open it with ``read_only=True`` to query beside the writer."""


class NoStoreError(Error):
    """No store at the path, and none is created (``read_only=True``)."""


class NotAStoreError(Error):
    """The path holds something that is not a simstore store."""


class IncompatibleStoreError(Error):
    """The store was written by another format version or fingerprint spec than this build's
    (fingerprints of different specs are not comparable: re-import into a new store)."""


class CorruptStoreError(Error):
    """The stored data is damaged, or was left mid-way by a crash that only a writer can
    finish (``simstore repair``); or a following reader can no longer follow."""


class ReadOnlyError(Error):
    """A write on a store opened with ``read_only=True``."""


class ClosedError(Error):
    """A call on a closed ``Store``."""


class ForkedError(Error):
    """A call on a ``Store`` inherited through ``fork()`` (``os.fork``, a ``multiprocessing``
    worker of the fork start method): a store belongs to the process that opened it. Open
    the store after forking, in the child; or use the spawn/forkserver start method. The
    child never closes or writes the parent's store, whatever it does."""


class StorageError(Error, OSError):
    """The storage engine (RocksDB, Redis Cluster) or the file system failed."""


class InvalidArgumentError(Error, ValueError):
    """An argument the engine cannot use: an empty or too long id, a title over 64 KiB or a url
    over 8 KiB, a bad layout or store URL..."""


class InvalidFingerprintError(InvalidArgumentError):
    """Not a fingerprint: expected an int with 0 <= fp < 2**64, or exactly 16 hex digits."""


class KTooLargeError(InvalidArgumentError):
    """A distance k above the store's k_max (its tables answer k <= k_max exactly)."""


class EmptyDocumentError(InvalidArgumentError):
    """Nothing to fingerprint: the text and title are empty, or only punctuation."""
