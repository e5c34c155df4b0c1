"""A pending event read back from a file is made to fit its declared shape before the probe
trusts it (rolling_graph.core.normalize.normalize_event, normalize_tool_data).

The probe's extractors read an event's ``data`` as :class:`rolling_graph.core.types.ToolData`
(``data["todos"]`` rows of two strings, ``data.get("cmd", "")`` a string) and do not check it
again; the state file and the overflow file are files, which a hand edit, another program or
a bug can change.
"""

from __future__ import annotations

from conftest import prompt_payload

from rolling_graph import hook
from rolling_graph.core.config import load_settings
from rolling_graph.core.normalize import normalize_event, normalize_tool_data
from rolling_graph.probe import runner
from rolling_graph.store.sidecar import SidecarStore

DAMAGED = {"todos": [["Fix the parser", "in_progress"], "garbage", [1, 2], ["a", "b", "c"]], "cmd": 5, "failed": "yes", "hits": True,
           "exit": 2, "edits": [{"old": "a", "new": 3}, 7], "qa": "x", "names": ["parse", 4], "unknown": 1}


def test_damaged_tool_data_keeps_what_fits_its_declared_shape() -> None:
    assert normalize_tool_data(DAMAGED) == {"todos": [["Fix the parser", "in_progress"]], "exit": 2, "edits": [{"old": "a", "new": ""}],
                                            "names": ["parse"]}
    assert normalize_tool_data(["not", "a", "dict"]) == {}


def test_a_pending_event_as_the_hook_wrote_it_is_unchanged() -> None:
    event = {"id": "e3", "event": "PostToolUse", "at": "2026-11-26T10:00:00Z", "text": "$ pytest -q\n1 failed", "tool": "Bash",
             "paths": ["tests/test_x.py"], "error": True, "reasons": ["error"], "data": {"cmd": "pytest -q", "failed": True}, "cwd": "lib"}
    assert normalize_event(event) == event


def test_a_pending_event_missing_fields_gets_their_empty_values() -> None:
    assert normalize_event({"id": "e1", "event": "UserPromptSubmit", "text": "Use Redis.", "paths": [3, "a.py"], "error": "yes"}) == {
        "id": "e1", "event": "UserPromptSubmit", "at": "", "text": "Use Redis.", "tool": None, "paths": ["a.py"], "error": False, "reasons": []}


def test_a_queued_tool_event_with_damaged_data_is_folded_with_what_fits() -> None:
    settings = load_settings()
    store = SidecarStore(settings)
    hook.handle_event("user-prompt-submit", prompt_payload("n1", "Let's fix the parser."), settings)
    with store.transaction("n1", graph=False) as doc:
        doc["gate"]["pending"].append({"id": "e9", "event": "PostToolUse", "at": "2026-11-26T10:00:00Z", "text": "TodoWrite {}",
                                       "tool": "TodoWrite", "paths": [], "error": False, "reasons": [], "data": DAMAGED})  # type: ignore[typeddict-item]
        doc["gate"]["probe_requested"] = True
    assert runner.run_probe(settings, "n1") == 1
    task = store.load("n1")["nodes"]["task-fix-the-parser"]
    assert task["facts"]["status"] == "in_progress"
