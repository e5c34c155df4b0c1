"""Tool results recorded in the background (``"async": true``): nothing is lost.

Claude Code does not wait for a PostToolUse or PostToolUseFailure hook, so the hooks of quick
tool calls in a row run at the same time, and a session that ends while one still runs sends it
SIGTERM (SIGKILL 1.5 s later, 2.1.332). Every run takes the session's lock for its
read-modify-write of the state (an atomic rename under ``flock``), so concurrent runs serialise
and none overwrites another's event; the launcher ignores SIGTERM for these events, so a run
the session's end interrupts still finishes its write. The events are numbered in the order the
runs take the lock, which for runs that overlap need not be the order of the tool calls.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time
from pathlib import Path

from claude_harness import PLUGIN_DIR
from conftest import HOOK, tool_payload

from rolling_graph.core.config import load_settings
from rolling_graph.hook import EVENTS
from rolling_graph.store.sidecar import SidecarStore

SID = "3f1c2a9e-0b7d-4e51-9a43-6d2f8c0e1b57"
LAUNCHER = str(PLUGIN_DIR / "hooks" / "run")


def start_tool_hooks(count: int, event: str = "post-tool-use") -> list[subprocess.Popen[bytes]]:
    """``count`` launcher runs for ``count`` tool calls, all started before any is waited for."""
    env = {**os.environ, "ROLLING_GRAPH_HOOK": HOOK, "ROLLING_GRAPH_PROBE_MODE": "async"}
    procs = []
    for i in range(count):
        payload = tool_payload(SID, "Bash", {"command": f"echo step {i}"}, {"stdout": f"step {i}\n"})
        payload["tool_use_id"] = f"toolu_{i:03d}"
        payload["hook_event_name"] = EVENTS[event]
        proc = subprocess.Popen([LAUNCHER, event], stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)
        assert proc.stdin is not None
        proc.stdin.write(json.dumps(payload).encode())
        proc.stdin.close()
        proc.stdin = None  # (written in full: communicate() only reads)
        procs.append(proc)
    return procs


def recorded_commands(store: SidecarStore) -> list[str]:
    state = store.load_state(SID)
    assert not os.path.exists(store.overflow_path(SID))
    return [str(event["text"]) for event in state["gate"]["pending"]]


def wait_all(procs: list[subprocess.Popen[bytes]]) -> None:
    for proc in procs:
        _, err = proc.communicate(timeout=120)
        assert err == b"", err
        assert proc.returncode in (0, -signal.SIGTERM), proc.returncode


def test_many_tool_results_recorded_at_once_all_land_in_the_state(isolated_home: Path) -> None:
    store = SidecarStore(load_settings())
    # A probe "already running" (its lock held): the hooks leave the batch to it, so every event stays pending.
    with store.probe_lock(SID) as held:
        assert held.acquired
        procs = start_tool_hooks(24)
        wait_all(procs)
        assert all(proc.returncode == 0 for proc in procs)
    counters = store.load_state(SID)["counters"]
    assert counters["tool_events"] == 24 and counters["events"] == 24
    commands = sorted(text.splitlines()[0] for text in recorded_commands(store))
    assert commands == sorted(f"$ echo step {i}" for i in range(24)), "each tool call once"
    ids = [event["id"] for event in store.load_state(SID)["gate"]["pending"]]
    assert sorted(ids, key=lambda e: int(e[1:])) == [f"e{n}" for n in range(1, 25)], "each run numbered once, none twice"
    assert [e["kind"] for e in store.read_journal(SID)] == ["init"], "the session was created once"


def test_tool_results_interrupted_by_the_session_end_still_land(isolated_home: Path) -> None:
    store = SidecarStore(load_settings())
    with store.probe_lock(SID) as held:
        assert held.acquired
        procs = start_tool_hooks(8, "post-tool-use-failure")
        time.sleep(0.05)  # the launchers have set their trap; the interpreters are starting
        for proc in procs:
            proc.send_signal(signal.SIGTERM)
        wait_all(procs)
        assert all(proc.returncode == 0 for proc in procs), "SIGTERM is ignored"
    assert store.load_state(SID)["counters"]["tool_events"] == 8
    assert sorted(text.splitlines()[0] for text in recorded_commands(store)) == sorted(f"$ echo step {i}" for i in range(8))
