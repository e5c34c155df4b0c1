"""Honest replay: a hook reads only the transcript Claude Code had written before its event.

A recorded transcript handed whole to every hook lets the memory read the future (the
tool result before PostToolUse returns, the prompt after the one being handled, the
summary of a later compaction). These tests capture what each hook could read at the
moment it ran.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

import rolling_graph.replay.run as replay_mod
from rolling_graph.replay.mirror import rebase
from rolling_graph.replay.run import ReplayOptions, replay
from rolling_graph.replay.transcript import parse_transcript

RECORDED = "/home/ada/src/shop"
SID = "5c0375b4-57a5-4f26-b12d-d022ee4e51b7"


def line(type_: str, ts: str, **extra: Any) -> dict[str, Any]:
    return {"type": type_, "sessionId": SID, "cwd": RECORDED, "timestamp": f"2026-11-24T10:{ts}Z", **extra}


def prompt(ts: str, text: str) -> dict[str, Any]:
    return line("user", ts, message={"role": "user", "content": text})


def tool_use(ts: str, tool_id: str, path: str) -> dict[str, Any]:
    block = {"type": "tool_use", "id": tool_id, "name": "Read", "input": {"file_path": f"{RECORDED}/{path}"}}
    return line("assistant", ts, message={"id": f"m-{tool_id}", "role": "assistant", "content": [block]})


def tool_result(ts: str, tool_id: str, text: str) -> dict[str, Any]:
    return line("user", ts, message={"role": "user", "content": [{"type": "tool_result", "tool_use_id": tool_id, "content": text}]},
                toolUseResult={"type": "text", "file": {"filePath": f"{RECORDED}/x", "content": text}})


def session(tmp_path: Path) -> Path:
    lines = [
        {"type": "file-history-snapshot", "messageId": "m0"},
        prompt("00:00", "PROMPT-ONE fix the invoice totals"),
        tool_use("00:01", "toolu_A", "billing/invoice.py"),
        tool_result("00:02", "toolu_A", "RESULT-A def total(): ..."),
        {**line("assistant", "00:03"), "message": {"id": "m-t", "role": "assistant", "content": [{"type": "text", "text": "Looked."}]}},
        line("system", "01:00", subtype="compact_boundary", content="Conversation compacted",
             compactMetadata={"trigger": "auto", "preTokens": 160000}),
        line("user", "01:00", isCompactSummary=True, message={"role": "user", "content": "SUMMARY-TEXT: fixing invoice totals"}),
        tool_use("01:05", "toolu_B", "billing/tax.py"),
        tool_result("01:06", "toolu_B", "RESULT-B def tax(): ..."),
        prompt("02:00", "PROMPT-TWO now the tax"),
        {**line("assistant", "02:01"), "message": {"id": "m-u", "role": "assistant", "content": [{"type": "text", "text": "Done."}]}},
    ]
    path = tmp_path / f"{SID}.jsonl"
    path.write_text("".join(json.dumps(x) + "\n" for x in lines), encoding="utf-8")
    return path


def seen_by_hooks(monkeypatch: pytest.MonkeyPatch, tmp_path: Path, options: ReplayOptions) -> list[tuple[str, dict[str, Any], str]]:
    """Replay the session; for each hook, (event, payload, the transcript text it could read)."""
    seen: list[tuple[str, dict[str, Any], str]] = []

    def spy(cli_event: str, payload: dict[str, Any], settings: Any = None) -> None:
        seen.append((cli_event, payload, Path(payload["transcript_path"]).read_text(encoding="utf-8")))

    monkeypatch.setattr(replay_mod, "handle_event", spy)
    replay([session(tmp_path)], options=options, home=tmp_path / "home")
    return seen


def test_a_hook_never_sees_lines_written_after_its_event(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    seen = seen_by_hooks(monkeypatch, tmp_path, ReplayOptions())
    events = [(e, p.get("source") or p.get("trigger") or p.get("tool_input", {}).get("file_path", "")) for e, p, _ in seen]
    assert [e for e, _ in events] == ["session-start", "user-prompt-submit", "post-tool-use", "pre-compact", "session-start",
                                      "post-tool-use", "stop", "user-prompt-submit", "stop", "session-end"]
    by = {i: text for i, (_, _, text) in enumerate(seen)}
    assert "PROMPT-ONE" not in by[1]  # the prompt is written after UserPromptSubmit
    assert "toolu_A" in by[2] and "RESULT-A" not in by[2]  # the call is there, its result not yet
    assert "compact_boundary" not in by[3]  # PreCompact runs before the compaction
    assert "SUMMARY-TEXT" in by[4] and "toolu_B" not in by[4]  # the summary is there, nothing after it
    assert by[4].rstrip("\n").splitlines()[-1].count("isCompactSummary") == 1
    assert "RESULT-B" not in by[5] and "PROMPT-TWO" not in by[6] and "PROMPT-TWO" not in by[7]
    assert by[9] == session(tmp_path).read_text(encoding="utf-8")  # SessionEnd: everything
    assert all(len(by[i]) <= len(by[i + 1]) and by[i + 1].startswith(by[i]) for i in range(len(seen) - 1))


def test_the_hooks_transcript_is_not_the_recording_and_is_gone_afterwards(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    seen = seen_by_hooks(monkeypatch, tmp_path, ReplayOptions())
    paths = {p["transcript_path"] for _, p, _ in seen}
    assert len(paths) == 1 and Path(next(iter(paths))) != session(tmp_path).resolve()
    assert not Path(next(iter(paths))).exists()  # a replay leaves no copy of the transcript behind
    assert not any(p.suffix == ".jsonl" and "transcripts" in str(p) for p in (tmp_path / "home").rglob("*"))


def test_the_real_session_start_hook_reads_the_summary_of_this_compaction_only(tmp_path: Path) -> None:
    """Two compactions: at the first, the hook must find the first summary, not the second."""
    base = session(tmp_path).read_text(encoding="utf-8").splitlines(keepends=True)
    second = [json.dumps(line("system", "03:00", subtype="compact_boundary", compactMetadata={"trigger": "auto"})) + "\n",
              json.dumps(line("user", "03:00", isCompactSummary=True, message={"role": "user", "content": "LATER-SUMMARY"})) + "\n"]
    path = tmp_path / "two.jsonl"
    path.write_text("".join(base + second), encoding="utf-8")
    from rolling_graph.capture.compact_summary import latest_summary

    found = []
    for event in parse_transcript(path):
        if event.payload.get("source") == "compact":
            assert event.compact_summary is not None
            found.append(event.compact_summary)
    assert found == ["SUMMARY-TEXT: fixing invoice totals", "LATER-SUMMARY"]
    # What the hook reads from an honest transcript at the first SessionStart(compact):
    first = next(e for e in parse_transcript(path) if e.payload.get("source") == "compact")
    honest = tmp_path / "honest.jsonl"
    honest.write_text("".join(base[: first.written]), encoding="utf-8")
    assert latest_summary(str(honest)) == "SUMMARY-TEXT: fixing invoice totals"
    assert latest_summary(str(path)) == "LATER-SUMMARY"  # what the whole recording would have said


def test_project_option_is_every_events_cwd_and_rebases_recorded_paths(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    project = tmp_path / "checkout"
    seen = seen_by_hooks(monkeypatch, tmp_path, ReplayOptions(project=str(project)))
    assert {p["cwd"] for _, p, _ in seen} == {str(project)}
    reads = [p["tool_input"]["file_path"] for e, p, _ in seen if e == "post-tool-use"]
    assert reads == [f"{project}/billing/invoice.py", f"{project}/billing/tax.py"]
    assert RECORDED not in seen[-1][2] and f"{project}/billing/tax.py" in seen[-1][2]


def test_without_a_project_the_recorded_cwd_is_kept(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    seen = seen_by_hooks(monkeypatch, tmp_path, ReplayOptions())
    assert {p["cwd"] for _, p, _ in seen} == {RECORDED}


def test_rebase_touches_only_whole_directory_prefixes() -> None:
    value = {"a": "/w/app/x.py", "b": ["/w/app", "/w/application/y.py", "see /w/app/z.py"], "n": 3}
    assert rebase(value, "/w/app", "/p") == {"a": "/p/x.py", "b": ["/p", "/w/application/y.py", "see /p/z.py"], "n": 3}


def test_async_replay_gives_probes_the_recorded_time_between_events(tmp_path: Path) -> None:
    """Async, the probe fired before the compaction has finished by SessionStart(compact):
    the recorded session spent a minute compacting."""
    result = replay([session(tmp_path)], options=ReplayOptions(mode="async"), home=tmp_path / "home")
    assert [r.error for r in result.records if r.error] == []
    compact = next(r for r in result.records if r.source == "compact")
    assert compact.injection and "invoice" in compact.injection.lower()


class _BusyStore:
    """A store whose probe stays busy for ``busy_polls`` checks."""

    def __init__(self, busy_polls: int) -> None:
        self.left = busy_polls

    def probe_running(self, sid: str) -> bool:
        self.left -= 1
        return self.left >= 0

    def load_state(self, sid: str) -> dict[str, Any]:
        return {"gate": {"probe_requested": False}}


def test_settle_waits_for_a_busy_probe_but_never_past_the_recorded_gap() -> None:
    import time

    store = _BusyStore(busy_polls=3)
    replay_mod._settle(store, SID, gap_s=5.0)
    assert store.left < 0  # waited until the probe was done
    forever = _BusyStore(busy_polls=10**9)
    t0 = time.monotonic()
    replay_mod._settle(forever, SID, gap_s=0.2)
    assert 0.2 <= time.monotonic() - t0 < 1.0  # the recorded session gave it 0.2 s
    t0 = time.monotonic()
    replay_mod._settle(forever, SID, gap_s=0.0)  # back-to-back events: no wait at all
    assert time.monotonic() - t0 < 0.05


def test_replay_command_takes_a_project_for_every_event(tmp_path: Path) -> None:
    import typer
    from typer.testing import CliRunner

    from rolling_graph.cli.replay import register

    app = typer.Typer()
    register(app)
    app.command("noop")(lambda: None)
    assert "--project" in CliRunner().invoke(app, ["replay", "--help"]).output
    project = tmp_path / "checkout"
    out = CliRunner().invoke(app, ["replay", str(session(tmp_path)), "--json", "--home", str(tmp_path / "h"), "--project", str(project)])
    assert out.exit_code == 0, out.output
    from rolling_graph.core.config import load_settings
    from rolling_graph.store.sidecar import SidecarStore

    doc = SidecarStore(load_settings({"ROLLING_GRAPH_HOME": str(tmp_path / "h")})).load(SID)
    assert doc["project"] == str(project)  # not the recorded /home/ada/src/shop
