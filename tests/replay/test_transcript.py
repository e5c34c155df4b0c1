"""The transcript parser against our fixtures and against malformed and odd transcripts."""

from __future__ import annotations

import json
import subprocess
import sys
import tracemalloc
from pathlib import Path
from typing import Any

import pytest

from rolling_graph.replay.transcript import HookEvent, ParseStats, first_session_id, parse_transcript, parse_transcripts

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures"
TRANSCRIPTS = FIXTURES / "transcripts"
MAIN = ["tool_heavy", "four_domains", "reversals", "resumed", "secrets"]


def gold(name: str) -> dict[str, Any]:
    return json.loads((TRANSCRIPTS / f"{name}.gold.json").read_text(encoding="utf-8"))


def events_of(name: str, stats: ParseStats | None = None) -> list[HookEvent]:
    return list(parse_transcripts([TRANSCRIPTS / f for f in gold(name)["transcripts"]], stats))


def kinds(events: list[HookEvent]) -> list[str]:
    return [e.hook_event_name for e in events]


def write_lines(path: Path, lines: list[Any]) -> Path:
    path.write_text("".join((x if isinstance(x, str) else json.dumps(x)) + "\n" for x in lines), encoding="utf-8")
    return path


def user(content: Any, **extra: Any) -> dict[str, Any]:
    return {"type": "user", "sessionId": "s-1", "cwd": "/w", "timestamp": "2026-11-24T10:00:00Z",
            "message": {"role": "user", "content": content}, **extra}


def tool_use(tool_id: str, name: str = "Bash", **extra: Any) -> dict[str, Any]:
    return {"type": "assistant", "sessionId": "s-1", "cwd": "/w", "timestamp": "2026-11-24T10:00:01Z",
            "message": {"id": "msg_1", "role": "assistant", "content": [{"type": "tool_use", "id": tool_id, "name": name, "input": {"command": "ls"}}]},
            **extra}


def result(tool_id: str, text: str = "ok", **extra: Any) -> dict[str, Any]:
    return user([{"type": "tool_result", "tool_use_id": tool_id, "content": text}], **extra)


@pytest.mark.parametrize("name", MAIN)
def test_fixture_parses_to_the_gold_event_sequence(name: str) -> None:
    g = gold(name)
    events = events_of(name)
    assert [(e.index, e.hook_event_name) for e in events] == [(ev["index"], ev["event"]) for ev in g["events"]]
    for event, expected in zip(events, g["events"], strict=True):
        if expected["event"] == "UserPromptSubmit":
            assert event.payload["prompt"].startswith(expected["snippet"])
        elif expected["event"] == "PostToolUse":
            assert event.payload["tool_name"] == expected["tool"]
        elif expected["event"] == "SessionStart":
            assert event.payload["source"] == expected["source"]
        elif expected["event"] == "PreCompact":
            assert event.payload["trigger"] == expected["trigger"]


def test_tool_heavy_fixture_is_the_size_the_issue_asks_for() -> None:
    stats = ParseStats()
    events = events_of("tool_heavy", stats)
    assert sum(e.hook_event_name == "PostToolUse" for e in events) >= 150
    assert stats.compactions == 1 and stats.sidechain > 0
    assert sum(e.hook_event_name == "UserPromptSubmit" for e in events_of("four_domains")) >= 60


@pytest.mark.parametrize("name", MAIN + ["odd_malformed", "odd_orphans", "odd_kinds"])
def test_every_payload_carries_the_hook_contract_fields(name: str) -> None:
    files = gold(name)["transcripts"] if name in MAIN else [f"{name}.jsonl"]
    for event in parse_transcripts([TRANSCRIPTS / f for f in files]):
        p = event.payload
        assert {"session_id", "transcript_path", "cwd", "hook_event_name"} <= p.keys()
        assert p["hook_event_name"] == event.hook_event_name
        assert Path(p["transcript_path"]).is_absolute()
        if event.hook_event_name == "PostToolUse":
            assert {"tool_name", "tool_input", "tool_response", "tool_use_id"} <= p.keys()


def test_tool_response_is_the_structured_tool_use_result() -> None:
    post = [e for e in events_of("tool_heavy") if e.hook_event_name == "PostToolUse"]
    read = next(e for e in post if e.payload["tool_name"] == "Read")
    assert read.payload["tool_response"]["file"]["filePath"] == read.payload["tool_input"]["file_path"]
    assert all(e.payload["tool_use_id"].startswith("toolu_") for e in post)


def test_timestamps_ride_beside_the_payload_in_order() -> None:
    events = events_of("reversals")
    stamps = [e.timestamp for e in events]
    assert all(stamps) and stamps == sorted(stamps)
    assert all("timestamp" not in e.payload for e in events)


def test_lines_that_are_not_json_objects_are_skipped_not_fatal() -> None:
    stats = ParseStats()
    events = list(parse_transcript(TRANSCRIPTS / "odd_malformed.jsonl", stats=stats))
    assert kinds(events) == ["SessionStart", "UserPromptSubmit", "UserPromptSubmit", "PostToolUse", "Stop", "UserPromptSubmit", "SessionEnd"]
    assert [e.payload["prompt"] for e in events if e.hook_event_name == "UserPromptSubmit"] == [
        "first prompt after a byte order mark", "second prompt", "prompt after invalid bytes"]
    assert stats.bad_json == 3 and stats.not_object == 2


def test_a_row_appended_to_a_line_not_ended_is_read_with_it(tmp_path: Path) -> None:
    """Claude Code now and then writes a row onto the end of the previous one (five lines of
    the shared corpus: an assistant's text followed by a title summary): both rows count."""
    base = {"sessionId": "s1", "cwd": "/r/app", "version": "2.1.0"}
    rows = [{**base, "type": "user", "uuid": "u1", "timestamp": "2026-11-25T21:00:00Z", "message": {"role": "user", "content": "fix the parser"}},
            {**base, "type": "assistant", "uuid": "a1", "timestamp": "2026-11-25T21:00:01Z",
             "message": {"role": "assistant", "content": [{"type": "tool_use", "id": "t1", "name": "Read", "input": {"file_path": "/r/app/p.py"}}]}},
            {**base, "type": "user", "uuid": "u2", "timestamp": "2026-11-25T21:00:02Z",
             "message": {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1", "content": "x = 1"}]}}]
    path = tmp_path / "joined.jsonl"
    path.write_text(json.dumps(rows[0]) + "\n" + json.dumps(rows[1]) + json.dumps(rows[2]) + "\n", encoding="utf-8")
    stats = ParseStats()
    events = list(parse_transcript(path, stats=stats))
    assert [e.hook_event_name for e in events if e.hook_event_name in ("UserPromptSubmit", "PostToolUse")] == ["UserPromptSubmit", "PostToolUse"]
    assert stats.joined == 1 and stats.bad_json == 0


def test_orphan_duplicate_and_unanswered_tool_calls_fire_nothing() -> None:
    stats = ParseStats()
    events = list(parse_transcript(TRANSCRIPTS / "odd_orphans.jsonl", stats=stats))
    assert kinds(events) == ["SessionStart", "UserPromptSubmit", "PostToolUse", "Stop", "UserPromptSubmit", "SessionEnd"]
    assert events[2].payload["tool_response"] == {"stdout": "make: Nothing to be done", "stderr": ""}
    assert (stats.orphan_results, stats.duplicate_results, stats.unanswered_tools) == (1, 1, 1)


def test_meta_command_interrupt_and_summary_lines_are_not_prompts() -> None:
    stats = ParseStats()
    events = list(parse_transcript(TRANSCRIPTS / "odd_kinds.jsonl", stats=stats))
    prompts = [e.payload["prompt"] for e in events if e.hook_event_name == "UserPromptSubmit"]
    assert prompts == ["a prompt given as blocks", "last prompt"]
    assert stats.unknown_type == 1


def test_sidechain_lines_fire_no_main_session_hooks() -> None:
    events = list(parse_transcript(TRANSCRIPTS / "odd_kinds.jsonl"))
    assert not any("subagent" in json.dumps(e.payload) or "toolu_side" in json.dumps(e.payload) for e in events)
    heavy = events_of("tool_heavy")
    assert any(e.payload.get("tool_name") == "Task" for e in heavy)
    assert not any("Find every place that constructs" in e.payload.get("prompt", "") for e in heavy)


def test_compact_boundary_fires_precompact_then_session_start_compact() -> None:
    events = list(parse_transcript(TRANSCRIPTS / "odd_kinds.jsonl"))
    pairs = [(e.hook_event_name, e.payload.get("trigger") or e.payload.get("source")) for e in events]
    assert pairs[2:4] == [("PreCompact", "auto"), ("SessionStart", "compact")]
    assert ("PreCompact", "manual") in pairs
    i = pairs.index(("PreCompact", "manual"))
    assert pairs[i + 1] == ("SessionStart", "compact")


def test_stop_fires_after_answered_turns_but_not_after_an_interrupt_or_mid_turn_compaction() -> None:
    events = list(parse_transcript(TRANSCRIPTS / "odd_kinds.jsonl"))
    assert kinds(events) == ["SessionStart", "UserPromptSubmit", "PreCompact", "SessionStart", "PostToolUse", "Stop",
                             "PreCompact", "SessionStart", "UserPromptSubmit", "SessionEnd"]
    assert [e.hook_event_name for e in parse_transcript(TRANSCRIPTS / "odd_kinds.jsonl", stop_events=False)].count("Stop") == 0
    heavy = events_of("four_domains")
    prompts = sum(e.hook_event_name == "UserPromptSubmit" for e in heavy)
    assert sum(e.hook_event_name == "Stop" for e in heavy) == prompts


def test_second_sitting_of_a_session_starts_as_resume(tmp_path: Path) -> None:
    events = events_of("resumed")
    starts = [e.payload["source"] for e in events if e.hook_event_name == "SessionStart"]
    assert starts == ["startup", "resume"]
    assert len({e.payload["session_id"] for e in events}) == 1
    assert first_session_id(TRANSCRIPTS / "resumed_b.jsonl") == first_session_id(TRANSCRIPTS / "resumed_a.jsonl")


def test_transcript_without_conversation_lines_yields_nothing(tmp_path: Path) -> None:
    empty = tmp_path / "empty.jsonl"
    empty.write_text("", encoding="utf-8")
    only_meta = write_lines(tmp_path / "meta.jsonl", [{"type": "summary", "summary": "x"}, "garbage"])
    assert list(parse_transcript(empty)) == []
    assert list(parse_transcript(only_meta)) == []


def test_session_id_falls_back_to_the_file_name(tmp_path: Path) -> None:
    path = write_lines(tmp_path / "abc-123.jsonl", [{"type": "user", "message": {"content": "hello"}}])
    events = list(parse_transcript(path))
    assert {e.payload["session_id"] for e in events} == {"abc-123"}
    assert events[0].payload["cwd"] == "/"


def test_wrongly_typed_fields_are_tolerated(tmp_path: Path) -> None:
    path = write_lines(tmp_path / "t.jsonl", [
        user("ok"),
        {"type": "assistant", "sessionId": 7, "message": {"content": [{"type": "tool_use", "id": 5, "name": None}]}},
        {"type": "assistant", "message": {"content": "just text"}},
        tool_use("t1", name=None),  # type: ignore[arg-type]
        result("t1"),
        {"type": "system", "subtype": "compact_boundary", "compactMetadata": "not a dict"},
        user([{"type": "tool_result"}]),
    ])
    events = list(parse_transcript(path))
    assert kinds(events) == ["SessionStart", "UserPromptSubmit", "PostToolUse", "PreCompact", "SessionStart", "Stop", "SessionEnd"]
    assert events[2].payload["tool_name"] == "unknown"


def test_multi_megabyte_transcript_is_streamed(tmp_path: Path) -> None:
    big = "x" * 4000
    lines: list[Any] = [user("start")]
    for i in range(1200):
        lines += [tool_use(f"t{i}"), result(f"t{i}", big)]
    path = write_lines(tmp_path / "big.jsonl", lines)
    assert path.stat().st_size > 4_000_000
    tracemalloc.start()
    count = sum(1 for e in parse_transcript(path) if e.hook_event_name == "PostToolUse")
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    assert count == 1200
    assert peak < 1_500_000  # a few lines at a time, never the whole file


def test_fixture_generator_is_deterministic(tmp_path: Path) -> None:
    subprocess.run([sys.executable, str(FIXTURES / "make_transcripts.py"), str(tmp_path)], check=True, capture_output=True)
    for path in sorted(TRANSCRIPTS.glob("*.json*")):
        assert (tmp_path / path.name).read_bytes() == path.read_bytes(), path.name


@pytest.mark.parametrize("name", MAIN)
def test_gold_labels_are_consistent(name: str) -> None:
    g = gold(name)
    keys = {e["key"] for e in g["entities"]}
    assert set(g["decisions"]) <= keys
    assert all({s["newer"], s["older"]} <= keys for s in g["supersedes"])
    assert all(set(s["entities"]) <= keys for s in g["survival"])
    triggers = {"new_entity", "domain_shift", "decision", "correction", "dead_man"}
    assert all(set(x["triggers"]) <= triggers and x["triggers"] for x in g["gate"])
    by_index = {ev["index"]: ev for ev in g["events"]}
    assert all(by_index[x["index"]]["event"] in ("UserPromptSubmit", "PostToolUse") for x in g["gate"])


def test_written_lines_and_compaction_summary_ride_beside_the_payload(tmp_path: Path) -> None:
    path = write_lines(tmp_path / "c.jsonl", [
        user("go"),  # line 1
        tool_use("t1"),  # 2
        result("t1"),  # 3
        {"type": "system", "subtype": "compact_boundary", "sessionId": "s-1", "timestamp": "2026-11-24T10:05:00Z"},  # 4
        user("SUMMARY", isCompactSummary=True),  # 5
        {"type": "system", "subtype": "compact_boundary", "sessionId": "s-1", "timestamp": "2026-11-24T10:09:00Z"},  # 6: no summary follows
    ])
    events = list(parse_transcript(path))
    got = [(e.hook_event_name, e.written, e.compact_summary) for e in events]
    assert got == [("SessionStart", 0, None), ("UserPromptSubmit", 0, None), ("PostToolUse", 2, None), ("PreCompact", 3, None),
                   ("SessionStart", 5, "SUMMARY"), ("PreCompact", 5, None), ("SessionStart", 6, None), ("Stop", 6, None), ("SessionEnd", 6, None)]
    pre = events[3]
    assert pre.timestamp == "2026-11-24T10:00:00Z"  # when the compaction began: the line before the boundary
    assert events[4].timestamp == "2026-11-24T10:05:00Z"
