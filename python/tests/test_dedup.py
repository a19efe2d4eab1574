"""`simstore.dedup` keeps what `simstore dedup FILE --output` keeps (which the Rust tests
check against a brute-force model), for every keep policy and every kind of input: texts,
dicts, JSONL and Parquet paths, a Hugging Face `datasets.Dataset`."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest

import simstore
from conftest import run_cli


def _records(sample: list) -> list[dict]:
    """The sample's records with a `ts` field (some missing) and a `body` text field."""
    r = random.Random(7)
    out = []
    for rec in sample:
        row = {"id": rec["id"], "body": rec["text"]}
        if r.random() < 0.8:
            row["ts"] = r.randint(1, 20)
        out.append(row)
    return out


def _cli_kept(cli: Path, tmp_path: Path, records: list[dict], keep: str) -> list[int]:
    path = tmp_path / "in.jsonl"
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records), encoding="utf-8")
    out = tmp_path / "kept.jsonl"
    run_cli(cli, tmp_path / "unused.db", "dedup", str(path), "--text-field", "body", "--keep", keep, "-o", str(out))
    kept_ids = [json.loads(line)["id"] for line in out.read_text(encoding="utf-8").splitlines()]
    index = {r["id"]: i for i, r in enumerate(records)}
    return [index[i] for i in kept_ids]


@pytest.mark.parametrize("keep", ["first", "longest", "newest:ts", "oldest:ts", "none"])
def test_dedup_keeps_what_the_cli_keeps(cli: Path, sample: list, tmp_path: Path, keep: str) -> None:
    records = _records(sample)
    want = _cli_kept(cli, tmp_path, records, keep)
    assert len(want) < len(records) - 50, "the sample has near-duplicate groups"
    assert simstore.dedup(records, "body", keep=keep) == want
    if keep in ("first", "longest", "none"):
        assert simstore.dedup([r["body"] for r in records], keep=keep) == want
    assert simstore.dedup(tmp_path / "in.jsonl", "body", keep=keep) == want


def test_policies_differ_on_the_sample(sample: list) -> None:
    records = _records(sample)
    kept = {keep: simstore.dedup(records, "body", keep=keep) for keep in ["first", "longest", "newest:ts", "none"]}
    assert len({tuple(v) for v in kept.values()}) == 4, "each policy keeps other records"
    assert set(kept["none"]) < set(kept["first"])


def test_rules_and_bad_arguments(sample: list) -> None:
    texts = [r["text"] for r in sample]
    plain = simstore.dedup(texts, k=0)
    assert len(plain) < len(texts), "exact copies are within 0 bits"
    assert len(simstore.dedup(texts, k=3, verify=0.9)) >= len(simstore.dedup(texts, k=3))
    assert simstore.dedup(["", None, "x"] + texts[:2]) [:3] == [0, 1, 2], "texts without words are kept"
    with pytest.raises(ValueError, match="keep='last'"):
        simstore.dedup(texts, keep="last")
    with pytest.raises(simstore.InvalidArgumentError):
        simstore.dedup(texts, verify=1.5)
    with pytest.raises(simstore.InvalidArgumentError):
        simstore.dedup(texts, quality="best")


def test_a_short_text_repeated_is_a_copy() -> None:
    texts = ["Click here", "Read more", "Click here", "Click there", "Read more about it", "Read more"]
    assert simstore.dedup(texts) == [0, 1, 3, 4]


def test_a_hugging_face_dataset_and_parquet_paths(cli: Path, sample: list, tmp_path: Path) -> None:
    datasets = pytest.importorskip("datasets", reason="datasets is installed by scripts/python-env")
    records = _records(sample)
    want = _cli_kept(cli, tmp_path, records, "newest:ts")
    ds = datasets.Dataset.from_list(records)
    kept = simstore.dedup(ds, "body", keep="newest:ts")
    assert isinstance(kept, datasets.Dataset)
    assert kept["id"] == [records[i]["id"] for i in want]
    ds.to_parquet(str(tmp_path / "in.parquet"))
    assert simstore.dedup(tmp_path / "in.parquet", "body", keep="newest:ts") == want


def _words(seed: int, n: int) -> list[str]:
    """`n` five-letter words of a xorshift stream of `seed` (as tests/dedup_exact.rs)."""
    mask = (1 << 64) - 1
    x = ((seed * 0x9E3779B97F4A7C15) & mask) | 1
    out = []
    for _ in range(n):
        word = ""
        for _ in range(5):
            x ^= (x << 13) & mask
            x ^= x >> 7
            x ^= (x << 17) & mask
            word += chr(ord("a") + x % 26)
        out.append(word)
    return out


def _pair(seed: int, k: int) -> list[str]:
    shared = _words(seed, 60)
    a = shared + _words(seed + 1_000_000, k)
    b = _words(seed + 2_000_000, k) + shared
    return [" ".join(a), " ".join(b)]


def test_pairs_near_the_threshold_are_decided_by_the_texts(cli: Path, tmp_path: Path) -> None:
    # The first pair's sketches agree (0.665) but its texts share 0.569 of their shingles;
    # the second's sketches disagree (0.554), its texts share 0.690: the texts decide.
    texts = _pair(9, 22) + _pair(27, 13)
    assert simstore.dedup(texts) == [0, 1, 2]
    records = [{"id": i, "text": t} for i, t in enumerate(texts)]
    path = tmp_path / "in.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    out = tmp_path / "kept.jsonl"
    run_cli(cli, tmp_path / "unused.db", "dedup", str(path), "-o", str(out))
    assert [json.loads(line)["id"] for line in out.read_text().splitlines()] == [0, 1, 2]


_LICENCE = (
    "# Licensed under the Apache License, Version 2.0; you may not use this file except in "
    "compliance with the License, which you may obtain from the project's website, and the "
    "software is distributed on an as is basis."
)


def _source(name: str, body: list[str]) -> str:
    return "\n".join([_LICENCE, f"def {name}(values, limit):"] + ["    " + line for line in body])


def test_files_the_cleaner_left_much_of_out_are_compared_whole(cli: Path, tmp_path: Path) -> None:
    # Each file's one long line is the licence: the cleaner keeps it alone, so the two files
    # have one sketch. Compared whole, they differ; the copy of the first is still dropped.
    a = _source("total", ["acc = 0", "for v in values:", "    if v > limit:", "        break", "    acc += v", "return acc"])
    b = _source("render", ["out = []", "for row in values[:limit]:", "    out += [str(row)]", "sep = ', '", "text = sep.join(out) or ''", "return text"])
    texts = [a, b, a.replace("acc += v", "acc = acc + v")]
    assert simstore.dedup(texts) == [0, 1]
    path = tmp_path / "code.jsonl"
    path.write_text("".join(json.dumps({"id": i, "text": t}) + "\n" for i, t in enumerate(texts)), encoding="utf-8")
    out = tmp_path / "kept.jsonl"
    run_cli(cli, tmp_path / "unused.db", "dedup", str(path), "-o", str(out))
    assert [json.loads(line)["id"] for line in out.read_text().splitlines()] == [0, 1]


_WORDS = ("harbour ferry storm nets gulls tide crane quay pier lamp rope sail mast hull keel oar market "
          "council school winter summer island bridge tower village farmer engine train station").split()


def _pages() -> list[dict]:
    """Four groups of five listing pages (one heading and intro a group, links of their
    own), then three articles and a copy of each under another site's chrome."""
    r = random.Random(3)
    phrase = lambda n: " ".join(r.choice(_WORDS) for _ in range(n))  # noqa: E731
    pages = []
    for g in range(4):
        heading = f"Section {phrase(2)}"
        intro = f"All the stories of the {phrase(3)} section, newest first, as our reporters filed them."
        for i in range(5):
            links = "".join(f"<li><a href='/s/{g}/{i}/{j}'>{phrase(5)}</a></li>" for j in range(15))
            html = f"<html><body><h1>{heading}</h1><p>{intro}</p><ul>{links}</ul></body></html>"
            pages.append({"id": f"list-{g}-{i}", "html": html})
    prose = lambda n: " ".join(f"the {r.choice(_WORDS)} of" for _ in range(n))  # noqa: E731
    for a in range(3):
        story = "".join(f"<p>{prose(12).capitalize()} a {phrase(3)}.</p>" for _ in range(4))
        for site in ("ledger", "hub"):
            html = (f"<html><head><title>Story {a}</title></head><body><nav><a href='/'>{site}</a></nav>"
                    f"<article><h1>Story {a}</h1>{story}</article><footer>{site} 2026</footer></body></html>")
            pages.append({"id": f"story-{a}-{site}", "html": html})
    return pages


def test_web_pages_are_compared_by_what_they_show(cli: Path, tmp_path: Path) -> None:
    pages = _pages()
    path = tmp_path / "pages.jsonl"
    path.write_text("".join(json.dumps(p) + "\n" for p in pages), encoding="utf-8")
    out = tmp_path / "kept.jsonl"
    run_cli(cli, tmp_path / "unused.db", "dedup", str(path), "-o", str(out))
    index = {p["id"]: i for i, p in enumerate(pages)}
    want = [index[json.loads(line)["id"]] for line in out.read_text(encoding="utf-8").splitlines()]
    # Every listing page and one copy of each story.
    assert want == list(range(20)) + [20, 22, 24], want
    assert simstore.dedup(pages, html_field="html") == want
    assert simstore.dedup(path, html_field="html") == want
    # A record's text, where it has one, is compared instead of its page.
    with_text = [dict(p, text="one and the same text for every record here") for p in pages]
    assert simstore.dedup(with_text, html_field="html") == [0]
    # The premise: by their main texts alone each group's pages are one.
    texts = [simstore.extract_page(p["html"])[1] for p in pages]
    assert simstore.dedup(texts[:20]) == [0, 5, 10, 15]


def test_mistakes_are_refused_not_kept_silently(sample: list, tmp_path: Path) -> None:
    records = _records(sample)
    path = tmp_path / "in.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    # A misnamed text field kept every record before.
    with pytest.raises(ValueError, match="none of the .* records has a text in 'text'"):
        simstore.dedup(path, "text")
    with pytest.raises(ValueError, match="has a text in 'nope'"):
        simstore.dedup(records, "nope")
    # Paths as str were deduplicated as two short texts.
    with pytest.raises(ValueError, match="pathlib.Path"):
        simstore.dedup([str(path), str(path)], "body")
    # A directory is read as the command line reads one.
    shards = tmp_path / "shards"
    shards.mkdir()
    (shards / "a.jsonl").write_text(path.read_text(encoding="utf-8"), encoding="utf-8")
    assert simstore.dedup(shards, "body") == simstore.dedup(path, "body")
    # Some records without text among others: kept, as the command line keeps them.
    mixed = records + [{"id": "no-text"}, {"id": "null", "body": None}]
    kept = simstore.dedup(mixed, "body")
    assert kept[-2:] == [len(records), len(records) + 1]
    datasets = pytest.importorskip("datasets", reason="datasets is installed by scripts/python-env")
    ds = datasets.Dataset.from_list(records)
    with pytest.raises(TypeError, match="pass one"):
        simstore.dedup(datasets.DatasetDict({"train": ds}), "body")
    with pytest.raises(KeyError, match="no column 'text'"):
        simstore.dedup(ds, "text")
    numbers = datasets.Dataset.from_dict({"body": list(range(10))})
    with pytest.raises(ValueError, match="found: int"):
        simstore.dedup(numbers, "body")


def test_more_mistakes_are_refused_and_odd_values_read(tmp_path: Path) -> None:
    """Input forms a trial found kept everything silently, and values it found refused."""
    a = "the same article, reposted on another site today, word for word, with nothing changed in it"
    b = "a different text about the weather in the mountains this week, with snow on the passes"
    # A misnamed --keep field chose by input order; NaN (pandas' missing value) was a value.
    with pytest.raises(ValueError, match="no record has a value in 'timestamp'"):
        simstore.dedup([{"text": a, "ts": 1}, {"text": a, "ts": 2}], keep="newest:timestamp")
    nan = float("nan")
    assert simstore.dedup([{"text": a, "ts": nan}, {"text": a, "ts": 1.0}, {"text": a, "ts": 2.0}],
                          keep="newest:ts") == [2]
    # bytes, or Paths mixed with str, were texts.
    with pytest.raises(ValueError, match="found: bytes"):
        simstore.dedup([a.encode(), a.encode(), b.encode()])
    with pytest.raises(TypeError, match="mixes paths"):
        simstore.dedup([tmp_path / "x.jsonl", "y.jsonl"])
    # A JSON array on a line was one record; a broken line a bare JSONDecodeError.
    array = tmp_path / "array.jsonl"
    array.write_text(json.dumps([{"text": a}, {"text": a}]) + "\n", encoding="utf-8")
    with pytest.raises(ValueError, match=r"array.jsonl:1: expected a JSON object"):
        simstore.dedup(array)
    broken = tmp_path / "broken.jsonl"
    broken.write_text(json.dumps({"text": a}) + "\n{\"text\": \n", encoding="utf-8")
    with pytest.raises(ValueError, match=r"broken.jsonl:2: invalid JSON"):
        simstore.dedup(broken)
    # A lone surrogate escape (half an emoji) aborted the whole dedup; read as U+FFFD.
    halves = tmp_path / "halves.jsonl"
    halves.write_text("".join(json.dumps({"text": t}) + "\n" for t in [a + " \ud83d", a + " \ud83d", b]),
                      encoding="utf-8")
    assert simstore.dedup(halves) == [0, 2]


def test_timestamps_are_kept_by_their_instants(cli: Path, tmp_path: Path) -> None:
    """ISO 8601 timestamps of other zones and precisions: ordered as instants, by the
    command line and by Python alike (as text, "…00Z" sorted after "…00.500Z")."""
    text = "the same article, reposted on another site today, word for word, with nothing changed in it"
    stamps = ["2024-01-01T00:00:00Z", "2024-01-01T00:00:00.500Z", "2024-01-01T10:00:00+05:00",
              "2024-01-01T06:00:00Z", "2024-01-01 13:00:00", "2024-01-01T12:00:00Z"]
    records = [{"id": f"r{i}", "body": text, "ts": s} for i, s in enumerate(stamps)]
    for keep, want in [("newest:ts", [4]), ("oldest:ts", [0])]:
        assert _cli_kept(cli, tmp_path, records, keep) == want, keep
        assert simstore.dedup(records, "body", keep=keep) == want, keep
    records = records[:2]  # half a second apart
    assert simstore.dedup(records, "body", keep="newest:ts") == _cli_kept(cli, tmp_path, records, "newest:ts") == [1]
