"""Expiry and the retention policy from Python: ages, times, last-seen tracking, errors."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

import simstore

PAGE = "the same page crawled twice under two addresses, word for word, every line of it"


def test_expire_by_stored_and_by_seen(tmp_path: Path) -> None:
    with simstore.Store(tmp_path / "s.db") as store:
        assert store.retention() == {"retain_secs": None, "by": "stored", "track_seen": False}
        policy = store.set_retention(track_seen=True, retain="90d", by="seen")
        assert policy == {"retain_secs": 90 * 86400, "by": "seen", "track_seen": True}
        assert store.check_and_insert("a", PAGE).status == "new"
        store.insert_fingerprint("b", "0f3a5c7e9b1d2f40")
        first = store.get("a")
        assert first is not None and first.seen == first.time
        time.sleep(1.1)
        assert store.check_and_insert("c", PAGE).of == "a"
        refreshed = store.get("a")
        assert refreshed is not None and refreshed.seen > refreshed.time == first.time
        # By last-seen time (the policy's), "a" is fresh and "b" is not.
        assert store.expire(older_than=0, dry_run=True)["expired"] == 1
        assert len(store) == 2
        report = store.expire(before=refreshed.seen)
        assert (report["expired"], report["by"], report["full_scan"]) == (1, "seen", False)
        assert "b" not in store and "a" in store
        # By stored time, "a" is old too.
        assert store.expire(older_than="0s", by="stored")["expired"] == 1
        assert len(store) == 0
        assert store.expire(before="2001-01-01T00:00:00Z")["expired"] == 0
        assert store.set_retention(keep_all=True)["retain_secs"] is None


def test_bad_expiry_arguments_are_refused(tmp_path: Path) -> None:
    with simstore.Store(tmp_path / "s.db") as store:
        for kwargs in [{}, {"older_than": "1d", "before": 5}, {"older_than": "soon"},
                       {"older_than": -1}, {"before": "yesterday"}, {"older_than": 1, "by": "first"}]:
            with pytest.raises(simstore.InvalidArgumentError):
                store.expire(**kwargs)
        with pytest.raises(simstore.InvalidArgumentError):
            store.set_retention(retain="ninety days")


def test_backup_and_restore(tmp_path: Path) -> None:
    with simstore.Store(tmp_path / "s.db") as store:
        store.insert("a", PAGE)
        first = store.backup(tmp_path / "backups")
        store.insert_fingerprint("b", "0f3a5c7e9b1d2f40")
        second = store.backup(tmp_path / "backups", keep=1)
        store.delete("b")
        store.compact()
        assert len(store) == 1
        assert second["id"] == first["id"] + 1 and second["files"] > 0
    assert [b["id"] for b in simstore.list_backups(tmp_path / "backups")] == [second["id"]]
    assert simstore.restore(tmp_path / "backups", tmp_path / "r.db")["id"] == second["id"]
    with simstore.Store(tmp_path / "r.db", read_only=True) as restored:
        assert len(restored) == 2 and restored.get("a") is not None and "b" in restored
    with pytest.raises(simstore.Error):
        simstore.restore(tmp_path / "backups", tmp_path / "r.db")  # exists
    with pytest.raises(simstore.Error):
        simstore.restore(tmp_path / "nothing", tmp_path / "x.db")
