"""Shared test set-up: every test gets its own state directory and a quiet environment.

Nothing a test does touches ``~/.claude``; the probe is offline and synchronous unless a
test says otherwise, and hooks start no warm-graph work unless a test turns it on.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parent.parent
HOOK = str(Path(sys.executable).with_name("rgraph-hook"))


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
