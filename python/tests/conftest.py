"""Shared fixtures: the simstore command (for comparisons), the sample data, a local site."""

from __future__ import annotations

import functools
import http.server
import json
import os
import shutil
import subprocess
import threading
from pathlib import Path
from typing import Iterator

import pytest

REPO = Path(__file__).resolve().parents[2]
SAMPLE = REPO / "data" / "sample.jsonl"
SITE = Path(__file__).parent / "site"


def _cli_path() -> Path:
    """The `simstore` binary of `cargo build --release` (scripts/test builds it first)."""
    if os.environ.get("SIMSTORE_BIN"):
        return Path(os.environ["SIMSTORE_BIN"])
    target = Path(os.environ.get("CARGO_TARGET_DIR", REPO / "target"))
    if not target.is_absolute():
        target = REPO / target
    return target / "release" / "simstore"


@pytest.fixture(scope="session")
def cli() -> Path:
    path = _cli_path()
    if not path.exists():
        pytest.fail(f"{path} is missing: run `cargo build --release` first (scripts/test does), or set SIMSTORE_BIN")
    return path


def run_cli(cli: Path, db: Path, *args: str, check: bool = True) -> subprocess.CompletedProcess:
    """Runs `simstore --db DB ARGS...`; stdout and stderr as text."""
    proc = subprocess.run([str(cli), "--db", str(db), *args], capture_output=True, text=True, timeout=300)
    if check and proc.returncode not in (0, 1):
        raise AssertionError(f"simstore {' '.join(args)} exited {proc.returncode}: {proc.stderr}")
    return proc


@pytest.fixture(scope="session")
def sample() -> list:
    """The 300 records of data/sample.jsonl (Chinese and English, near-duplicate groups)."""
    with open(SAMPLE, encoding="utf-8") as f:
        return [json.loads(line) for line in f]


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: object) -> None:  # noqa: A002 - the base's name
        pass


@pytest.fixture()
def site_url() -> Iterator[str]:
    """The fixture site (python/tests/site) served on 127.0.0.1 at a free port."""
    handler = functools.partial(_QuietHandler, directory=str(SITE))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()
        thread.join()


@pytest.fixture()
def v1_store(tmp_path: Path) -> Path:
    """A copy of the committed format-v1 store (refused by this build)."""
    dest = tmp_path / "v1-store"
    shutil.copytree(REPO / "tests" / "fixtures" / "v1-store", dest)
    return dest
