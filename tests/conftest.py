"""Shared test set-up: every test gets its own state directory and a quiet environment.

Nothing a test does touches ``~/.claude``; the probe is offline and synchronous unless a
test says otherwise, and hooks start no warm-graph work unless a test turns it on.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parent.parent
HOOK = str(Path(sys.executable).with_name("rgraph-hook"))


#: Where this run's embedded servers live: pytest's base temp (added at start) and directories
#: named with this process's pid (``/tmp/rgpg-<pid>-…``: short, for the server's socket).
OUR_SERVER_ROOTS: list[str] = [f"/tmp/{prefix}-{os.getpid()}-" for prefix in ("rgpg", "rgst", "rgsv", "rgkill")] + [f"/tmp/rgidle-{os.getpid()}/"]


def ours(data_dir: str) -> bool:
    return any(data_dir.startswith(root) for root in OUR_SERVER_ROOTS)


def running_postmasters() -> dict[int, str]:
    """``{pid: data directory}`` of every embedded PostgreSQL postmaster (``…/pg``) here."""
    out = subprocess.run(["ps", "-ww", "-eo", "pid=,args="], capture_output=True, text=True, check=False).stdout
    found: dict[int, str] = {}
    for line in out.splitlines():
        pid, _, args = line.strip().partition(" ")
        parts = args.split()
        if parts and parts[0].endswith("postgres") and "-D" in parts[:-1]:
            data_dir = parts[parts.index("-D") + 1]
            if data_dir.rstrip("/").endswith("/pg"):  # ours: $ROLLING_GRAPH_HOME/pg
                found[int(pid)] = data_dir
    return found


@pytest.fixture(scope="session", autouse=True)
def no_database_server_outlives_the_suite(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """Every embedded PostgreSQL the suite starts is stopped by the test that started it.

    At the end, any server of this run still running is stopped here and the run fails.
    (Only this run's: other test runs on the machine keep theirs.)"""
    OUR_SERVER_ROOTS.append(str(tmp_path_factory.getbasetemp()))
    before = {pid for pid, data_dir in running_postmasters().items() if ours(data_dir)}
    yield
    shared = sys.modules.get("warm_support")
    if shared is not None:
        shared.stop_shared_server()
    deadline = time.monotonic() + 10  # detached reconciles may still be shutting theirs down
    while (left := {pid: d for pid, d in running_postmasters().items() if pid not in before and ours(d)}) and time.monotonic() < deadline:
        time.sleep(0.5)
    for data_dir in left.values():
        from rolling_graph.warm import server

        server.stop(Path(data_dir).parent)
    if left:
        pytest.fail(f"{len(left)} PostgreSQL server(s) started by the tests were still running: {sorted(left.values())}")


@pytest.fixture(autouse=True)
def isolated_home(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> Path:
    home = tmp_path_factory.mktemp("rghome")
    monkeypatch.setenv("ROLLING_GRAPH_HOME", str(home))
    monkeypatch.setenv("ROLLING_GRAPH_PROBE", "offline")
    monkeypatch.setenv("ROLLING_GRAPH_PROBE_MODE", "sync")
    monkeypatch.setenv("ROLLING_GRAPH_WARM", "off")
    for var in ("ROLLING_GRAPH_BUDGET_TOKENS", "ROLLING_GRAPH_DSN", "ROLLING_GRAPH_NOW", "CLAUDE_PLUGIN_DATA", "ANTHROPIC_API_KEY"):
        monkeypatch.delenv(var, raising=False)
    return home


def run_hook(event: str, payload: Any, env: dict[str, str] | None = None, raw: bytes | None = None, timeout: float = 60) -> subprocess.CompletedProcess[bytes]:
    """Run the real ``rgraph-hook`` console script as Claude Code would."""
    data = raw if raw is not None else json.dumps(payload).encode()
    return subprocess.run([HOOK, event], input=data, capture_output=True, env=env or dict(os.environ), timeout=timeout)


def prompt_payload(sid: str, prompt: str, cwd: str = "/home/dev/app", **extra: Any) -> dict[str, Any]:
    return {"session_id": sid, "transcript_path": f"/tmp/{sid}.jsonl", "cwd": cwd, "hook_event_name": "UserPromptSubmit", "prompt": prompt, **extra}


def tool_payload(sid: str, tool: str, tool_input: dict[str, Any], response: Any = None, cwd: str = "/home/dev/app") -> dict[str, Any]:
    return {
        "session_id": sid, "transcript_path": f"/tmp/{sid}.jsonl", "cwd": cwd, "hook_event_name": "PostToolUse",
        "tool_name": tool, "tool_input": tool_input, "tool_response": response if response is not None else {}, "tool_use_id": "toolu_1",
    }


def context_of(output: dict[str, Any] | None) -> str:
    if not output:
        return ""
    return str(output.get("hookSpecificOutput", {}).get("additionalContext", ""))
