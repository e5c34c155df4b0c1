"""`rgraph replay --warm` reconciles the replayed session into the warm graph (PostgreSQL);
without it, a replay leaves the warm graph alone."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest
import warm_support as ws
from typer.testing import CliRunner

from rolling_graph.cli.demo import demo_transcript
from rolling_graph.core.config import load_settings
from rolling_graph.store.sidecar import SidecarStore

pytestmark = pytest.mark.db

SID = "c41d8e2a-7f3b-4a95-b6e0-5d9c2a18f7b4"  # the demo session's id

dsn = ws.database("replaywarm")


def reconciliations(dsn: str) -> list[tuple[str, int]]:
    return [(str(t), int(s)) for t, s in ws.rows(ws.settings_for(Path("/nonexistent"), dsn),
                                                 "SELECT trigger, journal_seq FROM reconciliations WHERE session_id = %s ORDER BY id", SID)]


def test_replay_warm_reconciles_the_session_into_the_warm_graph(tmp_path: Path, dsn: str, monkeypatch: pytest.MonkeyPatch) -> None:
    from rolling_graph.cli.main import app

    monkeypatch.setenv("ROLLING_GRAPH_DSN", dsn)  # the shared test server: this test starts none of its own
    monkeypatch.setenv("ROLLING_GRAPH_EMBEDDER", "lexical")
    cold = CliRunner().invoke(app, ["replay", "--home", str(tmp_path / "cold"), "--json", str(demo_transcript())])
    assert cold.exit_code == 0, cold.output
    time.sleep(1.0)  # a worker wrongly started would have begun by now
    assert reconciliations(dsn) == [], "without --warm a replay never touches the warm graph"

    home = tmp_path / "warm"
    result = CliRunner().invoke(app, ["replay", "--warm", "--home", str(home), "--json", str(demo_transcript())])
    assert result.exit_code == 0, result.output
    final_seq = SidecarStore(load_settings({"ROLLING_GRAPH_HOME": str(home)})).load_graph(SID)["journal_seq"]
    deadline = time.monotonic() + 60  # the hooks start the reconcile workers detached (PreCompact, SessionEnd)
    while time.monotonic() < deadline and (workers_of(home) or merged_seq(dsn) != final_seq):
        time.sleep(0.2)
    assert not workers_of(home), "the detached workers finished"
    assert merged_seq(dsn) == final_seq  # everything the session journaled is in the warm graph
    done = reconciliations(dsn)
    assert done and {t for t, _ in done} <= {"pre-compact", "session-end"}, done
    [(nodes,)] = ws.rows(ws.settings_for(home, dsn), "SELECT count(*) FROM node_sessions WHERE session_id = %s", SID)
    assert nodes > 20


def merged_seq(dsn: str) -> int | None:
    found = ws.rows(ws.settings_for(Path("/nonexistent"), dsn), "SELECT journal_seq FROM sessions WHERE session_id = %s", SID)
    return int(found[0][0]) if found else None


def workers_of(home: Path) -> list[int]:
    """Processes started with ``home`` as their state directory (the detached workers)."""
    marker = f"ROLLING_GRAPH_HOME={home}".encode()
    pids = []
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit() or int(proc.name) == os.getpid():
            continue
        try:
            environ = (proc / "environ").read_bytes().split(b"\0")
        except OSError:
            continue
        if marker in environ:
            pids.append(int(proc.name))
    return pids
