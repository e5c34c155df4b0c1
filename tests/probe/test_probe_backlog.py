"""Events that arrive while the model hangs are kept and folded, never dropped unseen.

Issue 17, item 6. With the probe's model hanging (timeout 5 s), 40 of 80 Edit events were
dropped from the batch (the queue was cut at 40) and only 12 of the 80 edited files reached
the graph. Now the queue keeps what arrives while a probe runs (bounded, in the state file);
the next probe folds what is past one model batch offline and sends the newest to the model.
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from typing import Any

import pytest
from conftest import run_hook, tool_payload
from probe_support import serving

from rolling_graph.core.config import load_settings
from rolling_graph.core.filepaths import file_id
from rolling_graph.store.journal import read_journal
from rolling_graph.store.sidecar import SidecarStore

EDITS = 80


@pytest.fixture
def hanging_model() -> Iterator[tuple[str, list[float]]]:
    """A Messages API on 127.0.0.1 that accepts every request and never answers in time."""
    stop = threading.Event()
    arrived: list[float] = []

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:  # noqa: N802 - http.server's naming
            arrived.append(time.monotonic())
            self.rfile.read(int(self.headers.get("content-length", 0)))
            stop.wait(60)  # the probe's timeout is far shorter

        def log_message(self, *args: Any) -> None:
            pass

    try:
        with serving(Handler) as url:
            yield url, arrived
    finally:
        stop.set()  # release the hanging handlers before the server waits for them


def assert_every_edit_applied_once(store: SidecarStore, sid: str, paths: list[str]) -> list[dict[str, Any]]:
    """Every edited file is in the graph, and each edit event (``e1`` … ``eN``) reached a
    probe's patch exactly once: none dropped, none applied twice. Returns the journal."""
    doc = store.load(sid)
    missing = [p for p in paths if file_id(p) not in doc["nodes"]]
    assert not missing, f"{len(missing)} of {len(paths)} edited files missing from the graph: {missing[:5]}"
    entries = read_journal(store.journal_path(sid))
    applied = [i for e in entries if e.get("kind") == "patch" and not str(e.get("rationale", "")).startswith("tool events folded")
               for i in e.get("event_ids") or [] if i.startswith("e")]
    assert sorted(applied, key=lambda i: int(i[1:])) == [f"e{i}" for i in range(1, len(paths) + 1)]
    return entries


def _wait(predicate: Any, timeout: float) -> bool:
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if predicate():
            return True
        time.sleep(0.2)
    return False


def test_edits_made_while_the_model_hangs_all_reach_the_graph(
    isolated_home: Path, tmp_path: Path, hanging_model: tuple[str, list[float]]
) -> None:
    url, arrived = hanging_model
    (isolated_home / "config.toml").write_text("[probe]\ntimeout_s = 1.0\n")
    project = tmp_path / "app"
    project.mkdir()
    env = dict(
        os.environ, ROLLING_GRAPH_PROBE="anthropic", ROLLING_GRAPH_PROBE_MODE="async",
        ANTHROPIC_API_KEY="sk-ant-api03-test-key-not-real", ANTHROPIC_BASE_URL=url,
    )
    sid = "hang-1"
    paths = [f"src/module_{i:02d}.py" for i in range(EDITS)]
    for path in paths:
        edit = {"file_path": str(project / path), "old_string": "a = 1", "new_string": "a = 2"}
        proc = run_hook("post-tool-use", tool_payload(sid, "Edit", edit, {"filePath": str(project / path)}, cwd=str(project)), env=env)
        assert proc.returncode == 0 and not proc.stderr, proc.stderr
    assert run_hook("stop", {"session_id": sid, "cwd": str(project), "hook_event_name": "Stop"}, env=env).returncode == 0

    store = SidecarStore(load_settings())

    def settled() -> bool:
        gate = store.load_state(sid)["gate"]
        return not store.probe_running(sid) and not gate["pending"] and not gate.get("inflight")

    assert _wait(settled, 180), store.load_state(sid)["gate"]
    assert arrived, "the model was asked (and hung)"
    entries = assert_every_edit_applied_once(store, sid, paths)
    assert "dropped" not in store.load_state(sid)["gate"]
    assert any("timed out" in str(e.get("fallback_reason", "")) for e in entries)  # the model hung, the batch was folded offline


SPILL_EDITS = 120
SMALL_QUEUE = 50


def _edit_payload(sid: str, project: Path, path: str) -> dict[str, Any]:
    edit = {"file_path": str(project / path), "old_string": "a = 1", "new_string": "a = 2"}
    return tool_payload(sid, "Edit", edit, {"filePath": str(project / path)}, cwd=str(project))


def test_past_the_queue_bound_events_wait_on_disk_and_all_reach_the_graph(
    isolated_home: Path, tmp_path: Path, hanging_model: tuple[str, list[float]], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The queue's hard bound reached while a probe holds the session (its model hangs):
    what is past the bound goes to the overflow file, the next probe folds it offline first,
    and every edited file reaches the graph, each event applied once, none dropped."""
    from rolling_graph.capture import gate
    from rolling_graph.hook import handle_event
    from rolling_graph.probe.runner import run_probe

    url, arrived = hanging_model
    (isolated_home / "config.toml").write_text("[probe]\ntimeout_s = 1.0\n")
    for name, value in (("ROLLING_GRAPH_PROBE", "anthropic"), ("ROLLING_GRAPH_PROBE_MODE", "async"),
                        ("ANTHROPIC_API_KEY", "sk-ant-api03-test-key-not-real"), ("ANTHROPIC_BASE_URL", url)):
        monkeypatch.setenv(name, value)
    monkeypatch.setattr(gate, "QUEUE_MAX", SMALL_QUEUE)  # (400 in production: the same path, reached sooner)
    project = tmp_path / "app"
    project.mkdir()
    settings = load_settings()
    store = SidecarStore(settings)
    sid = "spill-1"
    paths = [f"lib/part_{i:03d}.py" for i in range(SPILL_EDITS)]
    with store.probe_lock(sid) as lock:  # a probe runs (and hangs): the hooks only queue
        assert lock.acquired
        for path in paths:
            handle_event("post-tool-use", _edit_payload(sid, project, path), settings)
    state = store.load_state(sid)
    assert len(state["gate"]["pending"]) == SMALL_QUEUE and "dropped" not in state["gate"]
    assert "spilled" not in state["gate"]  # never kept in the state file
    with open(store.overflow_path(sid), "rb") as fh:
        assert len(fh.read().splitlines()) == SPILL_EDITS - SMALL_QUEUE

    run_probe(settings, sid)
    assert not os.path.exists(store.overflow_path(sid))
    gate_state = store.load_state(sid)["gate"]
    assert not gate_state["pending"] and not gate_state.get("inflight") and "dropped" not in gate_state
    assert arrived, "the model was asked (and hung)"
    entries = assert_every_edit_applied_once(store, sid, paths)
    assert any("kept on disk" in str(e.get("fallback_reason", "")) for e in entries)
    assert not any(e.get("kind") == "note" and "dropped" in str(e.get("rationale")) for e in entries)


def test_past_the_overflow_files_bound_events_are_dropped_counted_and_journaled(
    isolated_home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from rolling_graph.capture import gate
    from rolling_graph.hook import handle_event
    from rolling_graph.probe.runner import run_probe
    from rolling_graph.store import sidecar

    monkeypatch.setenv("ROLLING_GRAPH_PROBE_MODE", "async")
    monkeypatch.setattr(gate, "QUEUE_MAX", 10)
    monkeypatch.setattr(sidecar, "OVERFLOW_MAX_BYTES", 4000)  # a few events' worth
    project = tmp_path / "app"
    project.mkdir()
    settings = load_settings()
    store = SidecarStore(settings)
    sid = "spill-2"
    with store.probe_lock(sid):
        for i in range(40):
            handle_event("post-tool-use", _edit_payload(sid, project, f"src/m_{i:02d}.py"), settings)
    kept = len(Path(store.overflow_path(sid)).read_bytes().splitlines())
    assert 0 < kept < 30 and os.path.getsize(store.overflow_path(sid)) <= 4000
    dropped = store.load_state(sid)["gate"]["dropped"]
    assert dropped == 30 - kept
    run_probe(settings, sid)
    notes = [e for e in read_journal(store.journal_path(sid)) if e.get("kind") == "note"]
    assert any(f"{dropped} queued events were dropped" in str(e.get("rationale")) for e in notes)
    assert "dropped" not in store.load_state(sid)["gate"]
