"""Dataset dedup in memory: which records of a corpus to keep.

>>> import simstore
>>> texts = ["the same article, reposted on another site today, word for word"] * 2 + ["another"]
>>> simstore.dedup(texts)                                                    # doctest: +SKIP
[0, 2]

The texts are fingerprinted in parallel and clustered as ``simstore dedup FILE`` clusters
them (the standard mode's verified rule by default; a record joins the nearest record it
duplicates among those kept before it, so clusters never chain), with the GIL released.
"""

from __future__ import annotations

import gzip
import json
import math
import os
import re
from typing import Any, Iterable, Optional, Sequence, Union

from ._simstore import _dedup

__all__ = ["dedup"]

Paths = Union[str, "os.PathLike[str]", Sequence[Union[str, "os.PathLike[str]"]]]


def dedup(
    data: Any,
    text_field: str = "text",
    *,
    html_field: Optional[str] = None,
    keep: str = "first",
    quality: str = "standard",
    k: Optional[int] = None,
    verify: Optional[float] = None,
) -> Any:
    """The records of ``data`` a dedup keeps.

    ``data``: a ``datasets.Dataset`` (returns the filtered ``Dataset``), a list of texts or
    of dicts (``text_field`` holds the text), or the path(s) of JSONL files (gzip'd or not)
    or Parquet files (with ``pyarrow``); the others return the kept indices, increasing (for
    paths: the records' positions across the files, in order).

    ``keep``: which record of a cluster survives: ``"first"`` (input order), ``"longest"``
    (text), ``"newest:FIELD"`` / ``"oldest:FIELD"`` (a field's value; a record without it
    comes last), ``"none"`` (every member of a cluster of two or more is dropped). Ties go
    to the earlier record.

    The rule: ``quality``'s (``"standard"`` or ``"high"``) as a dataset's (shingle sketches
    at least 0.6 similar, not a store's 0.3) over the pairs a store of that mode compares
    (within its reach under one of its tables' prefixes, or sharing a sketch band);
    ``k`` alone, fingerprints within ``k`` bits; ``verify``, within ``k`` (default 3)
    and shingle sketches at least ``verify`` similar. A pair whose sketches' estimate is
    within 0.19 of its threshold is decided by the exact similarity of the shingles of the
    two whole texts (every line), as ``simstore dedup FILE`` decides it; so is every pair
    of a text the cleaner left more than a tenth of out (source code, lists: lines it takes
    for a page's chrome), whose sketch describes only what is left. A record without text
    is kept.

    ``html_field``: the field (column) holding a record's web page, read where the record
    has no text in ``text_field``, as ``simstore dedup`` reads an ``"html"`` record: its
    title and main text are compared (``extract_page``), and what the reader left out of
    the text (link lists) counts as missed, so two listing pages under one intro, each
    with its own links, are not one page.

    Raises ``ValueError`` when no record has a text in ``text_field`` (or a page in
    ``html_field``) (a misnamed field
    would keep everything), or for a list of ``str`` that all name JSONL/Parquet files
    (pass ``pathlib.Path`` objects to read files), for a list of neither texts nor dicts
    (``bytes``: decode them), for a ``newest:``/``oldest:`` field no record has, and for a
    JSONL line that is not a JSON object (naming the file and line); ``KeyError`` for a
    dataset without the column; ``TypeError`` for a ``DatasetDict`` (pass one split) or a
    list mixing ``Path`` objects with other items. A NaN in the ``keep`` field is no value;
    a lone surrogate in a text is read as U+FFFD.
    """
    rule = (keep, quality, k, verify)
    dataset = _as_dataset(data)
    if dataset is not None:
        for name in (text_field, html_field):
            if name is not None and name not in dataset.column_names:
                raise KeyError(f"the dataset has no column {name!r} (its columns: {dataset.column_names})")
        texts = dataset[text_field]
        pages = dataset[html_field] if html_field is not None else None
        _some_text(texts, text_field, pages)
        return dataset.select(_kept(texts, pages, lambda f: dataset[f], rule))
    records = _records(data, text_field)
    column = lambda f: [r.get(f) if isinstance(r, dict) else None for r in records]  # noqa: E731
    texts = [r.get(text_field) if isinstance(r, dict) else r for r in records]
    pages = column(html_field) if html_field is not None else None
    _some_text(texts, text_field if any(isinstance(r, dict) for r in records) else None, pages)
    return _kept(texts, pages, column, rule)


def _some_text(texts: Sequence[Any], text_field: Optional[str], pages: Optional[Sequence[Any]] = None) -> None:
    """Refuses records none of which has a text in ``text_field`` (or a page), or a list
    none of whose items is a text (``text_field`` None): a misnamed field, a column of
    numbers or a list of ``bytes`` would otherwise keep every record, silently. Records
    without text among others with it are kept, as ``simstore dedup --output`` keeps them."""
    if pages is not None and any(isinstance(p, str) for p in pages):
        return
    if texts and not any(isinstance(t, str) for t in texts):
        found = ", ".join(sorted({type(t).__name__ for t in texts}))
        if text_field is None:
            raise ValueError(
                f"none of the {len(texts)} items is a text (str) or a record (dict) (found: {found}): "
                "pass texts, records, or the paths of record files (decode bytes first)"
            )
        raise ValueError(
            f"none of the {len(texts)} records has a text in {text_field!r} (found: {found}): "
            "name the field that holds each record's text"
        )


def _kept(texts, pages, column, rule) -> list[int]:
    """The kept indices of the records of ``texts`` (and, where one has none, ``pages``)."""
    keep, quality, k, verify = rule
    texts = [t if isinstance(t, str) else None for t in texts]
    if pages is not None:
        pages = [p if t is None and isinstance(p, str) else None for t, p in zip(texts, pages)]
    lengths = [len(t or p or "") for t, p in zip(texts, pages or [None] * len(texts))]
    order = _order(keep, lengths, column)
    return list(_dedup(texts, order, quality, k, verify, keep == "none", pages))


def _order(keep: str, lengths: Sequence[int], column) -> Optional[list[int]]:
    """The positions in the policy's order (stable: ties in input order), or None;
    ``lengths``: each record's text's (or page's)."""
    if keep in ("first", "none"):
        return None
    n = len(lengths)
    if keep == "longest":
        return sorted(range(n), key=lambda i: -lengths[i])
    policy, _, field = keep.partition(":")
    if policy not in ("newest", "oldest") or not field:
        raise ValueError(
            f"keep={keep!r}: expected first, longest, newest:FIELD, oldest:FIELD or none"
        )
    values = [None if _is_nan(v) else v for v in column(field)]
    present = [i for i in range(n) if values[i] is not None]
    missing = [i for i in range(n) if values[i] is None]
    if n > 0 and not present:
        raise ValueError(f"keep={keep!r}: no record has a value in {field!r} (a misnamed field would keep the first)")
    # A reversed sort keeps ties in input order too.
    present.sort(key=lambda i: _sort_key(values[i]), reverse=policy == "newest")
    return present + missing


def _is_nan(v: Any) -> bool:
    """A float NaN (pandas' and pyarrow's missing value): no value."""
    return isinstance(v, float) and math.isnan(v)


def _sort_key(v: Any) -> tuple[int, float, str]:
    """Numbers and ISO 8601 timestamps (as Unix seconds: instants, whatever their zone or
    precision; ``datetime``/``date`` values by their ISO form) before other strings, as
    the command line sorts them."""
    if isinstance(v, (int, float)) and not isinstance(v, bool):
        return (0, float(v), "")
    text = v if isinstance(v, str) else str(v)
    seconds = _timestamp_seconds(text)
    if seconds is not None:
        return (0, seconds, "")
    return (1, 0.0, text)


_TIMESTAMP = re.compile(
    r"(\d{4})-(\d{2})-(\d{2})(?:[Tt ](\d{2}):(\d{2})(?::(\d{2})([.,]\d+)?)?(?:([Zz])|([+-])(\d{2})(?::?(\d{2}))?)?)?"
)


def _timestamp_seconds(s: str) -> Optional[float]:
    """The instant an ISO 8601 timestamp names, in Unix seconds, as the command line reads
    one (a date, maybe a time, maybe a zone; none is UTC); None for any other string."""
    m = _TIMESTAMP.fullmatch(s.strip())
    if m is None:
        return None
    y, mo, d, h, mi, sec, frac, _z, sign, oh, om = m.groups()
    y, mo, d = int(y), int(mo), int(d)
    hours, minutes, seconds = int(h or 0), int(mi or 0), int(sec or 0)
    if not (1 <= mo <= 12 and 1 <= d <= 31 and hours <= 23 and minutes <= 59 and seconds <= 60):
        return None
    # Days since 1970-01-01 (Howard Hinnant's days_from_civil, as the command line counts).
    yy = y - 1 if mo <= 2 else y
    era = yy // 400
    yoe = yy - era * 400
    doy = (153 * (mo - 3 if mo > 2 else mo + 9) + 2) // 5 + d - 1
    days = era * 146_097 + yoe * 365 + yoe // 4 - yoe // 100 + doy - 719_468
    total = days * 86_400.0 + hours * 3600 + minutes * 60 + seconds
    if frac:
        total += float("0" + frac.replace(",", "."))
    if sign:
        offset = int(oh) * 3600 + int(om or 0) * 60
        total += -offset if sign == "+" else offset
    return total


def _as_dataset(data: Any) -> Any:
    """``data`` if it is a ``datasets.Dataset`` (without importing ``datasets``); a
    ``DatasetDict`` (whose iteration gives its split names) is refused."""
    cls = type(data)
    if cls.__module__.startswith("datasets") and cls.__name__ in ("DatasetDict", "IterableDatasetDict"):
        splits = ", ".join(repr(s) for s in data)
        raise TypeError(f"a {cls.__name__} holds splits ({splits}): pass one, e.g. data[{next(iter(data))!r}]")
    if cls.__name__ == "Dataset" and cls.__module__.startswith("datasets"):
        return data
    return None


def _records(data: Any, text_field: str) -> list[Any]:
    """The records of a list, or of the files named (a directory: its JSONL and Parquet
    files, in name order, as the command line reads one)."""
    if isinstance(data, (str, os.PathLike)):
        return [r for p in _files(os.fspath(data)) for r in _read(p, text_field)]
    if isinstance(data, (list, tuple)) and data and all(isinstance(p, os.PathLike) for p in data):
        return [r for d in data for p in _files(os.fspath(d)) for r in _read(p, text_field)]
    if isinstance(data, (list, tuple)) and any(isinstance(p, os.PathLike) for p in data):
        raise TypeError(
            "the list mixes paths (pathlib.Path) with other items: pass only Paths to read files, "
            "or only texts / records"
        )
    if isinstance(data, (list, tuple)) and len(data) > 0 and all(_names_a_file(t) for t in data):
        raise ValueError(
            "every text of the list names a JSONL or Parquet file: to read the files, pass "
            "pathlib.Path objects (a list of str is a list of texts)"
        )
    return list(data)


_RECORD_FILES = (".jsonl", ".jsonl.gz", ".ndjson", ".ndjson.gz", ".json", ".json.gz", ".parquet")


def _names_a_file(t: Any) -> bool:
    return isinstance(t, str) and t.endswith(_RECORD_FILES) and os.path.isfile(t)


def _files(path: str) -> list[str]:
    """``path``, or the record files of the directory it names, sorted."""
    if not os.path.isdir(path):
        return [path]
    found = sorted(
        os.path.join(root, f) for root, _, names in os.walk(path) for f in names if f.endswith(_RECORD_FILES)
    )
    if not found:
        raise ValueError(f"{path} holds no JSONL or Parquet file")
    return found


def _read(path: str, text_field: str) -> Iterable[dict]:
    """The records of one JSONL file (gzip'd or not) or Parquet file."""
    if path.endswith(".parquet"):
        import pyarrow.parquet as pq  # type: ignore[import-untyped]  # only for Parquet paths

        yield from pq.read_table(path).to_pylist()
        return
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rt", encoding="utf-8") as f:
        for number, line in enumerate(f, 1):
            if not line.strip():
                continue
            try:
                record = json.loads(line)
            except json.JSONDecodeError as e:
                raise ValueError(f"{path}:{number}: invalid JSON ({e}): a JSONL file holds one JSON object a line") from None
            if not isinstance(record, dict):
                raise ValueError(
                    f"{path}:{number}: expected a JSON object (a record), found {type(record).__name__}: "
                    "a JSONL file holds one record a line"
                )
            yield record
