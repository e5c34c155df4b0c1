"""SessionStart starts crash recovery only when there is something to recover."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from rolling_graph.core.config import load_settings
from rolling_graph.warm.hook_side import RECOVER_EVERY_S
from rolling_graph.warm.hook_side import recovery_due as _recovery_due


@pytest.fixture
def settings(isolated_home: Path, monkeypatch: pytest.MonkeyPatch):  # type: ignore[no-untyped-def]
    monkeypatch.setenv("ROLLING_GRAPH_WARM", "on")
    (isolated_home / "sessions").mkdir()
    return load_settings()


def test_a_fresh_install_has_nothing_to_recover(settings, isolated_home: Path) -> None:  # type: ignore[no-untyped-def]
    (isolated_home / "sessions" / "current.journal.jsonl").write_text("{}\n")
    assert not _recovery_due(settings, "current")


def test_another_sessions_changed_journal_starts_recovery_once_an_hour(settings, isolated_home: Path) -> None:  # type: ignore[no-untyped-def]
    (isolated_home / "sessions" / "crashed.journal.jsonl").write_text("{}\n")
    assert _recovery_due(settings, "current")
    assert not _recovery_due(settings, "current"), "stamped: not again within the hour"
    stamp = isolated_home / ".recover.stamp"
    old = time.time() - RECOVER_EVERY_S - 10
    os.utime(stamp, (old, old))
    assert _recovery_due(settings, "current"), "the crashed journal is newer than the last recover"


def test_work_queued_on_disk_starts_recovery(settings, isolated_home: Path) -> None:  # type: ignore[no-untyped-def]
    (isolated_home / "queue").mkdir()
    (isolated_home / "queue" / "s1.json").write_text("{}")
    assert _recovery_due(settings, "current")
