"""The hook I/O contract, through the real ``rgraph-hook`` process."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from conftest import prompt_payload, run_hook, tool_payload

SID = "5c0375b4-57a5-4f26-b12d-d022ee4e51b7"

EVENT_PAYLOADS = {
    "session-start": {"session_id": SID, "transcript_path": "/tmp/t.jsonl", "cwd": "/tmp", "hook_event_name": "SessionStart", "source": "startup"},
    "user-prompt-submit": prompt_payload(SID, "Let's go with PostgreSQL for the warm store."),
    "post-tool-use": tool_payload(SID, "Edit", {"file_path": "/tmp/src/db.py", "old_string": "a", "new_string": "b"}, {"filePath": "/tmp/src/db.py"}),
    "pre-compact": {"session_id": SID, "transcript_path": "/tmp/t.jsonl", "cwd": "/tmp", "hook_event_name": "PreCompact", "trigger": "auto", "custom_instructions": ""},
    "stop": {"session_id": SID, "transcript_path": "/tmp/t.jsonl", "cwd": "/tmp", "hook_event_name": "Stop", "stop_hook_active": False},
    "session-end": {"session_id": SID, "transcript_path": "/tmp/t.jsonl", "cwd": "/tmp", "hook_event_name": "SessionEnd", "reason": "exit"},
}
NAMES = {"session-start": "SessionStart", "user-prompt-submit": "UserPromptSubmit", "post-tool-use": "PostToolUse"}


@pytest.mark.parametrize("event", list(EVENT_PAYLOADS))
def test_every_event_exits_zero_with_valid_output(event: str) -> None:
    proc = run_hook(event, EVENT_PAYLOADS[event])
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr == b""
    if proc.stdout:
        out = json.loads(proc.stdout)
        assert "additionalContext" not in out, "a top-level additionalContext is silently dropped by Claude Code"
        spec = out["hookSpecificOutput"]
        assert spec["hookEventName"] == NAMES[event]
        assert 0 < len(spec["additionalContext"]) <= 10_000


def test_prompt_with_a_decision_is_remembered_and_told_back() -> None:
    run_hook("session-start", EVENT_PAYLOADS["session-start"])
    proc = run_hook("user-prompt-submit", prompt_payload(SID, "For the queue, let's go with Redis streams."))
    assert proc.returncode == 0
    context = json.loads(proc.stdout)["hookSpecificOutput"]["additionalContext"]
    assert "[decision] Use Redis streams" in context
    graph = json.loads((Path(os.environ["ROLLING_GRAPH_HOME"]) / "sessions" / f"{SID}.graph.json").read_text())
    assert graph["nodes"]["use-redis-streams"]["kind"] == "decision"


@pytest.mark.parametrize("event", list(EVENT_PAYLOADS))
def test_unknown_extra_fields_are_ignored(event: str) -> None:
    payload = dict(EVENT_PAYLOADS[event], permission_mode="default", future_field={"nested": [1, 2]}, agent_id=None)
    proc = run_hook(event, payload)
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr == b""


@pytest.mark.parametrize("event", list(EVENT_PAYLOADS))
def test_missing_optional_fields_are_tolerated(event: str) -> None:
    proc = run_hook(event, {"session_id": SID})
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr == b""


@pytest.mark.parametrize(
    ("raw", "reason"),
    [
        (b"", b"empty"),
        (b"   \n", b"empty"),
        (b"{not json", b"not JSON"),
        (b"\xff\xfe\x00garbage", b"not JSON"),
        (b"[1, 2, 3]", b"expected an object"),
        (b'"a string"', b"expected an object"),
        (b'{"session_id": 42}', b"session_id"),
        (b'{"cwd": "/tmp"}', b"session_id"),
        (b'{"session_id": "ok-id", "prompt": ["not", "a", "string"]}', b"prompt"),
        (b'{"session_id": "ok-id", "cwd": 7}', b"cwd"),
    ],
)
def test_malformed_input_is_refused_with_one_line_and_exit_1(raw: bytes, reason: bytes) -> None:
    proc = run_hook("user-prompt-submit", None, raw=raw)
    assert proc.returncode == 1
    assert proc.stdout == b""
    assert reason in proc.stderr
    assert proc.stderr.count(b"\n") == 1, "one line, no traceback"
    assert b"Traceback" not in proc.stderr


def test_huge_input_is_refused_without_reading_it_all() -> None:
    raw = b'{"session_id": "x", "prompt": "' + b"a" * (17 * 1024 * 1024) + b'"}'
    proc = run_hook("user-prompt-submit", None, raw=raw)
    assert proc.returncode == 1
    assert b"larger than" in proc.stderr
    assert b"Traceback" not in proc.stderr


def test_large_but_valid_tool_output_is_handled() -> None:
    payload = tool_payload(SID, "Bash", {"command": "cat big.log"}, {"stdout": "line\n" * 400_000, "stderr": ""})
    proc = run_hook("post-tool-use", payload)
    assert proc.returncode == 0, proc.stderr


@pytest.mark.parametrize("bad", ["../../etc/passwd", "a/b", "..", "sess\nion", "x" * 129, "", "-leading-dash", "nul\x00byte", "tab\tid"])
def test_path_like_or_control_character_session_ids_are_refused(bad: str, isolated_home: Path) -> None:
    proc = run_hook("user-prompt-submit", prompt_payload(bad, "hello"))
    assert proc.returncode == 1
    assert b"session id" in proc.stderr
    assert not (isolated_home / "sessions").exists() or not any((isolated_home / "sessions").iterdir())
    assert not Path("/etc/passwd.graph.json").exists()


def test_unknown_event_name_is_refused() -> None:
    proc = run_hook("post-tool-use-typo", EVENT_PAYLOADS["stop"])
    assert proc.returncode == 1
    assert b"expected one EVENT" in proc.stderr


def test_help_explains_the_command() -> None:
    proc = run_hook("--help", None, raw=b"")
    assert proc.returncode == 0
    assert b"user-prompt-submit" in proc.stdout and b"ROLLING_GRAPH_HOME" in proc.stdout


def test_internal_failure_is_logged_silently_with_exit_0(isolated_home: Path) -> None:
    (isolated_home / "sessions").write_text("a file where the sessions directory should be")
    proc = run_hook("user-prompt-submit", prompt_payload(SID, "Let's go with PostgreSQL."))
    assert proc.returncode == 0
    assert proc.stdout == b"" and proc.stderr == b""
    log = (isolated_home / "logs" / "hook.log").read_text()
    assert "rgraph-hook user-prompt-submit failed" in log and "Traceback" in log


def test_bad_configuration_is_logged_in_one_line_and_the_session_goes_on(isolated_home: Path) -> None:
    env = dict(os.environ, ROLLING_GRAPH_BUDGET_TOKENS="lots")
    proc = run_hook("user-prompt-submit", prompt_payload(SID, "hi"), env=env)
    assert (proc.returncode, proc.stdout, proc.stderr) == (0, b"", b"")
    log = (isolated_home / "logs" / "hook.log").read_text()
    assert "configuration: ROLLING_GRAPH_BUDGET_TOKENS='lots'" in log and "Traceback" not in log


def test_hook_never_exits_2_even_on_garbage() -> None:
    for event in [*EVENT_PAYLOADS, "nonsense"]:
        for raw in (b"", b"null", b"{}", b'{"session_id": "../x"}', os.urandom(64)):
            assert run_hook(event, None, raw=raw).returncode in (0, 1)


def test_a_broken_install_fails_open_without_a_traceback(tmp_path: Path, isolated_home: Path) -> None:
    # A half-upgraded environment: `rolling_graph` itself cannot be imported.
    broken = tmp_path / "broken" / "rolling_graph"
    broken.mkdir(parents=True)
    (broken / "__init__.py").write_text("raise ImportError('half-upgraded')\n")
    env = dict(os.environ, PYTHONPATH=str(broken.parent))
    proc = run_hook("user-prompt-submit", prompt_payload(SID, "hi"), env=env)

    assert (proc.returncode, proc.stdout, proc.stderr) == (0, b"", b"")
    assert "half-upgraded" in (isolated_home / "logs" / "hook.log").read_text()
