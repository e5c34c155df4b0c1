"""Nothing is lost: database down at session end, a reconcile killed mid-way, crashed
sessions, and the embedded server started by two processes at once."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
import warm_support as ws

from rolling_graph.replay import recover
from rolling_graph.warm import db, server

pytestmark = pytest.mark.db

T0 = datetime(2026, 11, 1, tzinfo=UTC)
CLOSED_PORT_DSN = "postgresql://postgres@127.0.0.1:9/nothing?connect_timeout=2"
REPO = Path(__file__).resolve().parents[2]


dsn = ws.database("rcv")


def worker(home: Path, dsn: str, *args: str, slow_merge_s: float | None = None) -> subprocess.Popen[str]:
    """The warm-graph worker; with ``slow_merge_s`` its merge sleeps in its transaction, writes
    done (the fault is injected by tests/faults/slow_merge_worker.py, a wrapper)."""
    env = dict(os.environ, ROLLING_GRAPH_HOME=str(home), ROLLING_GRAPH_DSN=dsn, ROLLING_GRAPH_EMBEDDER="lexical")
    command = ([sys.executable, str(REPO / "tests" / "faults" / "slow_merge_worker.py"), str(slow_merge_s)] if slow_merge_s
               else [sys.executable, "-m", "rolling_graph.worker"])
    return subprocess.Popen([*command, *args], env=env, cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def node_ids(settings, project: str) -> set[str]:  # type: ignore[no-untyped-def]
    with db.connect(settings) as conn:
        return {r[0] for r in conn.execute(
            "SELECT n.id FROM nodes n JOIN projects p ON p.id = n.project_id WHERE p.root = %s", (project,))}


def test_database_down_at_session_end_is_queued_then_recovered(tmp_path: Path, dsn: str) -> None:
    project = str(tmp_path / "proj")
    doc = ws.hot_doc("down-1", project, [ws.node("Queued idea", 0.7, at=T0), ws.node("Second idea", 0.4, at=T0)],
                     [("queued-idea", "informs", "second-idea", 0.5)], at=T0, seq=3)
    ws.write_sidecar(tmp_path, doc)
    proc = worker(tmp_path, CLOSED_PORT_DSN, "reconcile", "--session", "down-1", "--trigger", "session-end")
    out, errout = proc.communicate(timeout=60)
    assert proc.returncode == 0, errout
    assert "queued" in json.loads(out.strip().splitlines()[-1])
    settings = ws.settings_for(tmp_path, dsn)
    assert len(recover.pending(settings)) == 1
    (tmp_path / "sessions" / "down-1.graph.json").unlink()  # even the sidecar is gone: the queue holds a copy

    report = recover.recover(settings, quick=True)
    assert report.queue_done == ["down-1"] and report.queue_left == 0 and not report.errors
    assert node_ids(settings, project) == {"queued-idea", "second-idea"}
    with db.connect(settings) as conn:
        assert conn.execute("SELECT trigger, journal_seq FROM reconciliations WHERE session_id = 'down-1'").fetchall() == [
            ("session-end", 3)]


def test_recover_while_database_down_keeps_the_queue(tmp_path: Path) -> None:
    settings = ws.settings_for(tmp_path, CLOSED_PORT_DSN)
    recover.enqueue(settings, "still-down", "session-end", ws.hot_doc("still-down", "/p", [], at=T0), "down")
    report = recover.recover(settings, quick=True)
    assert report.database_down and report.queue_left == 1


def test_killed_reconcile_leaves_the_warm_graph_as_before(tmp_path: Path, dsn: str) -> None:
    project = str(tmp_path / "proj")
    settings = ws.settings_for(tmp_path, dsn)
    first = ws.hot_doc("kill-1", project, [ws.node("Stable fact", 0.6, at=T0)], at=T0, seq=1)
    ws.write_sidecar(tmp_path, first)
    proc = worker(tmp_path, dsn, "reconcile", "--session", "kill-1", "--trigger", "manual")
    assert proc.wait(timeout=60) == 0
    with db.connect(settings) as conn:
        before = conn.execute("SELECT id, weight, session_count FROM nodes ORDER BY id").fetchall()
        vectors_before = conn.execute("SELECT node_id, content_hash FROM node_embeddings ORDER BY node_id").fetchall()

    later = ws.hot_doc("kill-1", project, [ws.node("Stable fact", 0.1, at=T0 + timedelta(hours=1)),
                                           ws.node("Half written", 0.9, at=T0 + timedelta(hours=1))], at=T0, seq=7)
    ws.write_sidecar(tmp_path, later)
    proc = worker(tmp_path, dsn, "reconcile", "--session", "kill-1", "--trigger", "session-end",
                  slow_merge_s=30)
    deadline = time.monotonic() + 30
    with db.connect(settings, autocommit=True) as conn:
        # wait until both its transactions hold their writes: the merge (sleeping), and the
        # vectors inserted alongside it (waiting for the merge on the project's advisory lock)
        while time.monotonic() < deadline:
            busy = ws.open_transactions(conn)
            if busy >= 2:
                break
            time.sleep(0.05)
        assert busy >= 2, "the worker never reached its transactions"
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=10)
        after = conn.execute("SELECT id, weight, session_count FROM nodes ORDER BY id").fetchall()
        vectors_after = conn.execute("SELECT node_id, content_hash FROM node_embeddings ORDER BY node_id").fetchall()
        sessions = conn.execute("SELECT journal_seq FROM sessions WHERE session_id = 'kill-1'").fetchall()
    assert after == before
    assert vectors_after == vectors_before
    assert sessions == [(1,)]
    report = recover.recover(settings, quick=True)  # the crash heals: the sidecar is ahead of the warm graph
    assert report.reconciled == ["kill-1"]
    assert node_ids(settings, project) == {"stable-fact", "half-written"}
    with db.connect(settings) as conn:
        missing = conn.execute("SELECT count(*) FROM nodes n LEFT JOIN node_embeddings e ON e.project_id = n.project_id "
                               "AND e.node_id = n.id WHERE e.node_id IS NULL").fetchone()[0]
    assert missing == 0


def test_recover_reconciles_sidecars_whose_journal_moved_on(tmp_path: Path, dsn: str) -> None:
    project = str(tmp_path / "proj")
    settings = ws.settings_for(tmp_path, dsn)
    ws.write_sidecar(tmp_path, ws.hot_doc("crash-a", project, [ws.node("Crashed work", 0.5, at=T0)], at=T0, seq=4))
    first = recover.recover(settings, quick=True)
    second = recover.recover(settings, quick=True)
    assert "crash-a" in first.reconciled
    assert "crash-a" not in second.reconciled
    assert "crashed-work" in node_ids(settings, project)


def test_recover_lists_recent_transcripts_without_a_sidecar(tmp_path: Path) -> None:
    settings = ws.settings_for(tmp_path, CLOSED_PORT_DSN)
    projects = tmp_path / "claude" / "projects" / "-home-ada-app"
    projects.mkdir(parents=True)
    (projects / "never-seen.jsonl").write_text("", encoding="utf-8")
    ws.write_sidecar(tmp_path, ws.hot_doc("seen", "/p", [], at=T0))
    (projects / "seen.jsonl").write_text("", encoding="utf-8")
    assert [p.stem for p in recover.orphan_transcripts(settings, tmp_path / "claude" / "projects")] == ["never-seen"]


def test_two_processes_starting_the_embedded_server_both_succeed() -> None:
    home = Path(tempfile.mkdtemp(prefix=f"rgst-{os.getpid()}-", dir="/tmp"))
    code = "import sys; from pathlib import Path; from rolling_graph.warm import server; print(server.ensure_running(Path(sys.argv[1])))"
    try:
        procs = [subprocess.Popen([sys.executable, "-c", code, str(home)], cwd=REPO, stdout=subprocess.PIPE,
                                  stderr=subprocess.PIPE, text=True) for _ in range(2)]
        outs = [p.communicate(timeout=90) for p in procs]
        assert [p.returncode for p in procs] == [0, 0], outs
        assert outs[0][0] == outs[1][0]
        assert all("XDG_RUNTIME_DIR" not in err for _, err in outs)
        status = db.status(ws.settings_for(home, None))
        assert status["ok"] and status["kind"] == "embedded"
        assert server.stop(home)
        assert server.running_info(home) is None
        assert db.status(ws.settings_for(home, None))["running"] is False
    finally:
        server.stop(home)
        shutil.rmtree(home, ignore_errors=True)


def test_a_reconcile_whose_postgresql_is_stopped_midway_is_queued_without_a_traceback(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 36, case 11: PostgreSQL gone during a reconcile left a traceback in the worker's
    log and no queued job (only ``recover`` found the session). Real embedded server, stopped
    between the nodes and the edges of the merge."""
    from rolling_graph import worker
    from rolling_graph.warm import upsert

    home = Path(tempfile.mkdtemp(prefix=f"rgkill-{os.getpid()}-", dir="/tmp"))
    try:
        (home / "config.toml").write_text("[db]\nidle_stop_s = 0\n")  # no watchdog
        settings = ws.settings_for(home, None)
        at = datetime(2026, 11, 1, tzinfo=UTC)
        doc = ws.hot_doc("killed-midway", str(tmp_path / "proj"), [ws.node("Use Dramatiq", 0.8, at=at, kind="decision")], at=at)
        ws.write_sidecar(home, doc)
        real = upsert.upsert_edges

        def stop_then_upsert(*args: object, **kwargs: object) -> int:
            server.stop(home)  # PostgreSQL goes away mid-transaction
            return real(*args, **kwargs)  # type: ignore[arg-type]

        monkeypatch.setattr(upsert, "upsert_edges", stop_then_upsert)
        assert worker.cmd_reconcile(settings, "killed-midway", "session-end") == 0

        out = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
        assert out["op"] == "reconcile" and "queued" in out and "went away during the reconcile" in out["reason"]
        assert [p.name.split("-", 1)[1] for p in recover.pending(settings)] == ["killed-midway-session-end.json"]
        monkeypatch.setattr(upsert, "upsert_edges", real)
        report = recover.recover(settings, quick=True)  # the next recover reconciles it
        assert report.queue_done == ["killed-midway"] and not recover.pending(settings)
    finally:
        server.stop(home)
        shutil.rmtree(home, ignore_errors=True)
