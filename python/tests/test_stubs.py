"""The type stubs (simstore/_simstore.pyi) match the extension: mypy's stubtest compares
every name, signature and class of the built module with them."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path


def test_stubs_match_the_extension(tmp_path: Path) -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "mypy.stubtest", "simstore"],
        capture_output=True, text=True, timeout=300, cwd=Path(__file__).parents[1],
        env=dict(os.environ, MYPY_CACHE_DIR=str(tmp_path / "mypy-cache")),
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
