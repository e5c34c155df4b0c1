"""`rgraph recover` rebuilds a session Claude Code recorded but we never saw, from its
transcript, and reconciles it (real embedded PostgreSQL)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
import warm_support as ws

from rolling_graph.replay.recover import recover
from rolling_graph.warm import db

pytestmark = pytest.mark.db
FIXTURE = Path(__file__).resolve().parents[2] / "fixtures" / "transcripts" / "reversals.jsonl"


def _session_id(path: Path) -> str:
    for line in path.read_text().splitlines():
        try:
            sid = json.loads(line).get("sessionId")
        except ValueError:
            continue
        if sid:
            return sid
    raise AssertionError("fixture has no sessionId")


def test_a_transcript_without_a_sidecar_is_rebuilt_and_reconciled(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    ws.pg_home()
    settings = ws.settings_for(tmp_path / "home", ws.fresh_dsn("rebuild"))
    monkeypatch.setenv("ROLLING_GRAPH_EMBEDDER", "lexical")
    sid = _session_id(FIXTURE)
    projects = tmp_path / "claude-projects"
    (projects / "-home-dev-src-notify").mkdir(parents=True)
    shutil.copy(FIXTURE, projects / "-home-dev-src-notify" / f"{sid}.jsonl")  # as Claude Code stores it

    report = recover(settings, projects_dir=projects)

    assert sid in report.rebuilt and not report.errors
    graph = json.loads((settings.sessions_dir / f"{sid}.graph.json").read_text())
    assert any(n["kind"] == "correction" for n in graph["nodes"].values())
    assert sid in report.reconciled
    with db.connect(settings) as conn:
        (count,) = conn.execute("SELECT count(*) FROM sessions WHERE session_id = %s", (sid,)).fetchone()
    assert count == 1
    assert recover(settings, projects_dir=projects).rebuilt == [], "a second run finds nothing to rebuild"
