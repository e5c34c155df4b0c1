"""Input edge cases: unreadable input, lone surrogates, wrong-shaped files, a damaged journal, temp files.

Issue 17, item 5. Each case was found by an adversarial pass over the real hook and CLI:

* deeply nested JSON on stdin exited 0 and logged a ``RecursionError`` traceback; it is
  unreadable input: one line on stderr, exit 1;
* a prompt holding a lone surrogate escape (``"\\ud800"``) was dropped without a word (exit 0,
  nothing remembered); the surrogate becomes U+FFFD and the prompt is remembered;
* a graph or state file that parses but has the wrong shape (a weight that is a string,
  ``pending`` that is a string, counters that are strings) made every later hook fail
  silently; it is rebuilt from the journal, and what was lost is said (log, ``rgraph show``);
* a garbage line in the middle of the journal, with the graph deleted, made the session
  unrecoverable (``rgraph show`` failed); the valid entries are rebuilt and the loss is said;
* writes killed between their temp file and its rename left ``*.tmp.<pid>`` files forever;
  they are removed when a session starts and by ``rgraph recover``;
* a compaction summary line of the wrong shape (``message`` a string, a text block whose
  text is a number) raised in ``SessionStart(compact)``: the restore block was lost, a
  traceback logged. It is a summary with no text; the block is injected.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import prompt_payload, run_hook
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from rolling_graph.core.config import load_settings
from rolling_graph.store.journal import read_journal
from rolling_graph.store.sidecar import SidecarStore

RGRAPH = str(Path(sys.executable).with_name("rgraph"))


def hook_log(home: Path) -> str:
    log = home / "logs" / "hook.log"
    return log.read_text() if log.exists() else ""


def rgraph(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([RGRAPH, *args], capture_output=True, text=True, env=dict(os.environ), timeout=120)


def session_with_decisions(sid: str) -> SidecarStore:
    for text in ("Let's use Kafka for events.", "We decided to deploy on Render.", "Let's use Sentry for error tracking."):
        assert run_hook("user-prompt-submit", prompt_payload(sid, text)).returncode == 0
    return SidecarStore(load_settings())


# --- unreadable input --------------------------------------------------------------------------


@pytest.mark.parametrize("depth", [100_000, 300])
def test_deeply_nested_input_is_unreadable_input(depth: int, isolated_home: Path) -> None:
    """100,000 levels: past the parser's recursion limit; 300: parseable, past what we read."""
    raw = ('{"session_id": "deep", "prompt": "x", "tool_input": ' + "[" * depth + "]" * depth + "}").encode()
    proc = run_hook("user-prompt-submit", None, raw=raw)
    assert proc.returncode == 1
    lines = proc.stderr.decode().splitlines()
    assert len(lines) == 1 and lines[0].startswith("rgraph-hook: hook input") and "nested" in lines[0]
    assert proc.stdout == b""
    assert "Traceback" not in hook_log(isolated_home) and "RecursionError" not in hook_log(isolated_home)


# --- surrogates --------------------------------------------------------------------------------


def test_a_prompt_with_a_lone_surrogate_is_remembered_with_a_replacement_character(isolated_home: Path) -> None:
    raw = json.dumps(prompt_payload("sur", "Let's go with Pulsar\ud800 for events.")).encode()  # ensure_ascii: "\\ud800"
    assert b"\\ud800" in raw
    proc = run_hook("user-prompt-submit", None, raw=raw)
    assert proc.returncode == 0 and not proc.stderr
    assert "Traceback" not in hook_log(isolated_home)
    store = SidecarStore(load_settings())
    labels = [n["label"] for n in store.load("sur")["nodes"].values()]
    assert any("Pulsar\ufffd" in label for label in labels), labels
    store.journal_path("sur").read_bytes().decode("utf-8")  # the journal is valid UTF-8
    assert "\ufffd" in json.dumps(read_journal(store.journal_path("sur")), ensure_ascii=False)


def test_a_lone_surrogate_from_elsewhere_never_breaks_a_write(isolated_home: Path) -> None:
    """Text that did not come through the hook's input (a transcript line read by the probe)
    may still hold one: the journal and the state keep it as its JSON escape, valid UTF-8."""
    from rolling_graph.core.model import make_node

    store = SidecarStore(load_settings())
    node = make_node("Pulsar\udc80 topics", "technical", "concept")
    store.apply_ops("sur2", [{"op": "add", "path": f"/nodes/{node['id']}", "value": node}], kind="patch", rationale="r\ud800")
    with store.transaction("sur2", graph=False) as doc:
        doc["gate"]["pending"].append({"id": "e1", "event": "AssistantText", "at": "", "text": "x\ud800", "tool": None,
                                       "paths": [], "error": False, "reasons": []})
    for name in ("journal.jsonl", "graph.json", "state.json"):
        (isolated_home / "sessions" / f"sur2.{name}").read_bytes().decode("utf-8")
    assert store.load("sur2")["nodes"][node["id"]]["label"] == "Pulsar\udc80 topics"
    assert store.load_state("sur2")["gate"]["pending"][0]["text"] == "x\ud800"


# --- wrong-shaped files ------------------------------------------------------------------------


def _rewrite_state(store: SidecarStore, sid: str, change: object) -> None:
    path = store.state_path(sid)
    state = json.loads(path.read_text())
    change(state)  # type: ignore[operator]
    path.write_text(json.dumps(state))


@pytest.mark.parametrize(
    "damage",
    [
        lambda s: s["gate"].__setitem__("pending", "not a list"),
        lambda s: s["counters"].update({k: str(v) for k, v in s["counters"].items() if isinstance(v, int)}),
        lambda s: s["gate"].__setitem__("events_since_probe", "3"),
        lambda s: s["gate"]["pending"].append({"id": 7}),
    ],
    ids=["pending-a-string", "counters-strings", "gate-counter-a-string", "pending-event-wrong"],
)
def test_a_wrong_shaped_state_file_is_rebuilt_and_the_session_goes_on(damage: object, isolated_home: Path) -> None:
    store = session_with_decisions("state")
    events_before = store.load_state("state")["counters"]["events"]
    _rewrite_state(store, "state", damage)
    assert run_hook("user-prompt-submit", prompt_payload("state", "Let's use Pulsar for the queue.")).returncode == 0
    assert "Traceback" not in hook_log(isolated_home)
    doc = store.load("state")
    assert "use-pulsar-for-the-queue" in doc["nodes"]  # the hook after the damage worked
    assert doc["counters"]["events"] > events_before  # no event id reused
    ids = [i for e in read_journal(store.journal_path("state")) for i in e.get("event_ids") or []]
    assert len(ids) == len(set(ids))
    assert any("state file wrong-shaped" in n for n in doc["gate"]["damage"])
    assert "state file wrong-shaped" in rgraph("show", "--session", "state").stderr  # a warning: never in the shown graph
    assert "state file wrong-shaped" in (isolated_home / "logs" / "sidecar.log").read_text()


def test_a_graph_file_with_a_weight_that_is_a_string_is_rebuilt_from_the_journal(isolated_home: Path) -> None:
    store = session_with_decisions("weights")
    before = store.load("weights")["nodes"]
    path = store.graph_path("weights")
    graph = json.loads(path.read_text())
    graph["nodes"]["use-kafka-for-events"]["weight"] = "high"
    path.write_text(json.dumps(graph))
    path.with_name("weights.graph.cache").unlink(missing_ok=True)

    doc = store.load("weights")
    assert doc["nodes"]["use-kafka-for-events"]["weight"] == before["use-kafka-for-events"]["weight"]  # the journal's value
    assert set(doc["nodes"]) == set(before)
    assert run_hook("user-prompt-submit", prompt_payload("weights", "Let's use Pulsar for the queue.")).returncode == 0
    assert "use-pulsar-for-the-queue" in store.load("weights")["nodes"]
    shown = rgraph("show", "--session", "weights")
    assert shown.returncode == 0 and "graph file wrong-shaped (node use-kafka-for-events: weight is str)" in shown.stderr


# --- a damaged journal -------------------------------------------------------------------------


@pytest.mark.parametrize("garbage", ["{not json at all", '{"seq": 2, "kind": "patch", "ops": "zzz"}', "\x00\x00\x00"])
def test_a_garbage_line_in_the_journal_with_the_graph_deleted_keeps_the_valid_entries(garbage: str, isolated_home: Path) -> None:
    store = session_with_decisions("torn")
    path = store.journal_path("torn")
    lines = path.read_text().splitlines()
    assert len(lines) == 4  # init and three probe patches
    lines[1] = garbage  # the Kafka decision's entry
    path.write_text("\n".join(lines) + "\n")
    for suffix in ("graph.json", "graph.cache", "index.json"):
        path.with_name(f"torn.{suffix}").unlink(missing_ok=True)

    shown = rgraph("show", "--session", "torn")
    assert shown.returncode == 0, shown.stderr
    assert "Traceback" not in shown.stdout + shown.stderr
    assert "journal entries lost" in shown.stderr and "seq 2" in shown.stderr
    nodes = store.load("torn")["nodes"]
    assert {"deploy-on-render", "use-sentry-for-error-tracking"} <= set(nodes) and "use-kafka-for-events" not in nodes
    assert "journal entries lost" in (isolated_home / "logs" / "sidecar.log").read_text()
    # The session goes on: the next entry takes a new seq, and a rebuild gives the same graph.
    assert run_hook("user-prompt-submit", prompt_payload("torn", "Let's use Pulsar for the queue.")).returncode == 0
    seqs = [e["seq"] for e in read_journal(path)]
    assert len(seqs) == len(set(seqs)) and seqs[-1] == 5
    live = store.load("torn")
    path.with_name("torn.graph.json").unlink()
    path.with_name("torn.graph.cache").unlink(missing_ok=True)
    assert set(store.load("torn")["nodes"]) == set(live["nodes"])


# --- temp files --------------------------------------------------------------------------------


def _dead_pid() -> int:
    proc = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True, check=True)
    return int(proc.stdout)


def test_temp_files_of_killed_writers_are_removed_when_the_session_starts(isolated_home: Path) -> None:
    store = session_with_decisions("tmp")
    sessions = isolated_home / "sessions"
    dead, live = _dead_pid(), os.getpid()
    stale = [sessions / f"tmp.state.json.tmp.{dead}", sessions / f"tmp.graph.json.tmp.{dead}"]
    young = sessions / f"tmp.index.json.tmp.{live}"  # a live writer's, being written now
    other = sessions / f"other.state.json.tmp.{dead}"  # another session's: left to its own start
    for path in [*stale, young, other]:
        path.write_bytes(b"{")
    assert run_hook("session-start", {"session_id": "tmp", "cwd": "/home/dev/app", "source": "resume"}).returncode == 0
    assert not any(p.exists() for p in stale)
    assert young.exists() and other.exists()
    assert store.load("tmp")["nodes"]  # nothing else touched


def test_rgraph_recover_removes_every_stale_temp_file(isolated_home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from rolling_graph.replay.recover import recover

    session_with_decisions("rec")
    sessions = isolated_home / "sessions"
    dead = _dead_pid()
    old = sessions / f"rec.graph.json.tmp.{os.getpid()}"  # this pid is alive, but the file is an hour old
    left = [sessions / f"rec.state.json.tmp.{dead}", sessions / f"gone.journal.jsonl.tmp.{dead}", old]
    for path in left:
        path.write_bytes(b"{")
    os.utime(old, (os.path.getmtime(old) - 3600,) * 2)
    monkeypatch.setenv("ROLLING_GRAPH_DSN", "host=/nonexistent-rgraph-test port=1 connect_timeout=1")
    report = recover(load_settings(), quick=True)
    assert sorted(report.cleaned) == sorted(p.name for p in left)
    assert not any(p.exists() for p in left)
    assert report.database_down  # (the cleaning does not need the database)


# --- a compaction summary of the wrong shape ----------------------------------------------------


@pytest.mark.parametrize("summary", [
    {"message": "This session continues…"},
    {"message": {"role": "user", "content": [{"type": "text", "text": 5}, "text"]}},
    {"message": {"role": "user", "content": 7}},
])
def test_a_summary_line_of_the_wrong_shape_never_costs_the_restore_block(summary: dict, isolated_home: Path, tmp_path: Path) -> None:
    from rolling_graph.capture.compact_summary import latest_summary

    session_with_decisions("sum")
    transcript = tmp_path / "sum.jsonl"
    earlier = {"type": "user", "isCompactSummary": True, "message": {"role": "user", "content": "An earlier compaction's summary."}}
    transcript.write_text(json.dumps(earlier) + "\n" + json.dumps({"type": "user", "isCompactSummary": True, **summary}) + "\n")
    assert latest_summary(str(transcript)) == ""  # this compaction's summary, which says nothing: not the earlier one
    proc = run_hook("session-start", {"session_id": "sum", "cwd": "/home/dev/app", "source": "compact", "transcript_path": str(transcript)})
    assert proc.returncode == 0 and proc.stderr == b""
    context = json.loads(proc.stdout)["hookSpecificOutput"]["additionalContext"]
    assert "Kafka" in context and "Render" in context
    assert hook_log(isolated_home) == ""


def test_a_summary_of_text_blocks_is_their_text_joined() -> None:
    from rolling_graph.capture.compact_summary import summary_text

    line = {"isCompactSummary": True, "message": {"content": [{"type": "text", "text": "One."}, {"type": "image"}, {"type": "text", "text": "Two."}]}}
    assert summary_text(line) == "One.\nTwo."
    assert summary_text({"isCompactSummary": "yes", "message": {"content": "x"}}) is None  # only ``true`` marks a summary
    assert summary_text(["isCompactSummary"]) is None


# --- any tool call's shape -----------------------------------------------------------------------
_VALUE = st.recursive(
    st.none() | st.booleans() | st.integers(-5, 10**12) | st.floats() | st.text(max_size=30)
    | st.sampled_from(["/home/dev/app/lib/a.py", "def foo_bar():\n  pass", "mix test", "in_progress", "FAILED tests/test_a.py::test_b"]),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.sampled_from(
        ["file_path", "content", "old_string", "new_string", "edits", "command", "stdout", "stderr", "todos", "status", "subject",
         "taskId", "questions", "answers", "plan", "pattern", "filePath", "newTodos", "interrupted", "type", "text"]), inner, max_size=5),
    max_leaves=15)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(tool=st.sampled_from(["Edit", "Write", "MultiEdit", "Bash", "Read", "Grep", "Task", "TodoWrite", "TaskCreate", "TaskUpdate",
                             "AskUserQuestion", "ExitPlanMode", "mcp__x__y"]), tool_input=_VALUE, response=_VALUE)
def test_a_tool_call_of_any_shape_is_handled_without_raising(tool: str, tool_input: object, response: object, isolated_home: Path) -> None:
    from rolling_graph.hook import handle_event

    payload = {"session_id": "shapes", "transcript_path": "/nonexistent.jsonl", "cwd": "/home/dev/app", "hook_event_name": "PostToolUse",
               "tool_name": tool, "tool_input": tool_input, "tool_response": response, "tool_use_id": "toolu_1"}
    handle_event("post-tool-use", payload, load_settings())  # the offline probe runs in-process (sync): it must not raise either
    assert SidecarStore(load_settings()).load("shapes")["nodes"] is not None


def test_a_summary_row_appended_to_a_line_not_ended_is_the_summary(tmp_path: Path) -> None:
    from rolling_graph.capture.compact_summary import latest_summary

    transcript = tmp_path / "joined.jsonl"
    row = {"type": "user", "isCompactSummary": True, "message": {"role": "user", "content": "We moved the queue to Kafka."}}
    transcript.write_text(json.dumps({"type": "assistant", "message": {"content": []}}) + json.dumps(row) + "\n")
    assert latest_summary(str(transcript)) == "We moved the queue to Kafka."
