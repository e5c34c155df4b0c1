"""Tool-time notes: what earlier sessions did with the file a tool just touched, told once,
within budgets, never repeating what the tool's output showed."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from conftest import context_of, prompt_payload, tool_payload

from rolling_graph.core.config import RenderSettings, load_settings, replace
from rolling_graph.core.filepaths import file_id
from rolling_graph.core.model import new_counters
from rolling_graph.hook import handle_event
from rolling_graph.render.notes import (
    PART_LABELS,
    TOOL_PARTNER_WEIGHT,
    TOOL_PARTNERS_SHOWN,
    TOOL_PARTS,
    render_note,
    tool_note,
)
from rolling_graph.warm.snapshot_write import write_snapshot

PARSER: dict[str, Any] = {
    "path": "src/parser.py", "sessions": 3, "edits": 7, "reads": 2, "what": "`parse_expr`, `Token`",
    "with": [["tests/test_parser.py", 0.8, 3], ["src/lexer.py", 0.5, 2]],
    "failure": {"text": "tests/test_parser.py::test_nested FAILED", "state": "resolved", "from": "pytest"},
    "decision": "Parse with a Pratt parser, not recursive descent",
}
NOTES = {file_id("src/parser.py"): PARSER, file_id("README.md"): {"path": "README.md", "sessions": 1}}


def event(paths: list[str], text: str = "", tool: str = "Read") -> dict[str, Any]:
    return {"id": "e1", "event": "PostToolUse", "at": "", "text": text, "tool": tool, "paths": paths, "error": False, "reasons": []}


def test_a_note_says_what_earlier_sessions_did_and_what_goes_with_the_file() -> None:
    text = render_note(PARSER, 600, parts=tuple(PART_LABELS))  # every part a note can give
    assert text.startswith('<rolling-graph-memory source="earlier sessions"')
    assert "src/parser.py, in 3 earlier sessions: edited 7×, read 2×" in text
    assert "code edited: `parse_expr`, `Token`" in text
    assert "usually changed with: tests/test_parser.py (0.80), src/lexer.py (0.50)" in text
    assert "last failure: tests/test_parser.py::test_nested FAILED (resolved)" in text
    assert "decision: Parse with a Pratt parser" in text


def test_a_prompts_note_gives_the_code_names_only() -> None:
    # Measured on the entire-cli chain (bench/eval_notes_offline.py kinds): a prompt note's
    # partners, failures and decisions surfaced names the session used at 0-0.1.
    text = render_note(PARSER, 600)
    assert "code edited: `parse_expr`, `Token`" in text
    assert "usually changed with" not in text and "last failure" not in text and "decision" not in text
    assert render_note({**PARSER, "what": None}, 600) == ""  # the head line alone is no note


def test_a_note_never_repeats_what_the_tool_output_showed_nor_what_the_session_touched() -> None:
    text = render_note(PARSER, 600, shown="def parse_expr(): ...\nimport src/lexer.py", touched={file_id("tests/test_parser.py")})
    assert "parse_expr" not in text and "src/lexer.py" not in text and "tests/test_parser.py (0.80)" not in text
    assert "`Token`" in text


@pytest.mark.parametrize("budget", [120, 200, 300, 600])
def test_a_note_stays_within_its_budget(budget: int) -> None:
    text = render_note(PARSER, budget)
    assert len(text) <= budget


def test_a_file_known_only_by_name_gets_no_note() -> None:
    assert render_note({"path": "README.md", "sessions": 0}, 600) == ""


def test_each_file_gets_one_note_a_session_and_the_best_ranked_first() -> None:
    counters = new_counters()
    counters["events"] = 10
    settings = RenderSettings()
    first = tool_note(counters, event(["README.md", "src/parser.py"]), NOTES, settings)
    assert "src/parser.py" in first.splitlines()[1]
    assert tool_note(counters, event(["src/parser.py"]), NOTES, settings) == ""
    assert counters["note_chars"] == len(first)


def test_notes_stop_at_the_session_budget_and_keep_to_the_pace() -> None:
    many = {file_id(f"src/m{i}.py"): {**PARSER, "path": f"src/m{i}.py"} for i in range(40)}
    settings = replace(RenderSettings(), note_session_tokens=300, note_pace_chars=100_000)
    counters = new_counters()
    counters["events"] = 1000
    spent = sum(len(tool_note(counters, event([f"src/m{i}.py"]), many, settings)) for i in range(40))
    assert 0 < spent <= 300 * settings.chars_per_token
    paced = new_counters()
    paced["events"] = 1  # one note's worth ahead of the pace, no more
    slow = replace(RenderSettings(), note_pace_chars=10)
    told = [tool_note(paced, event([f"src/m{i}.py"]), many, slow) for i in range(5)]
    assert sum(1 for t in told if t) == 1


def test_a_tool_note_names_what_goes_with_the_file_or_says_nothing() -> None:
    # A tool note gives a name the session has not met: its closest partner. Counts alone, a
    # weak partner (under TOOL_PARTNER_WEIGHT), a failure or a decision's prose are no reason
    # to speak.
    weak = {"path": "src/a.py", "sessions": 4, "edits": 9, "with": [["src/b.py", 0.3, 2]], "decision": "Keep a.py small"}
    assert render_note(weak, 600, parts=TOOL_PARTS, partners=TOOL_PARTNERS_SHOWN, min_weight=TOOL_PARTNER_WEIGHT, bare=False) == ""
    assert "Keep a.py small" in render_note(weak, 600, parts=("decision",))  # a part a note may be asked for
    text = render_note(PARSER, 600, parts=TOOL_PARTS, partners=TOOL_PARTNERS_SHOWN, min_weight=TOOL_PARTNER_WEIGHT, bare=False)
    assert "usually changed with: tests/test_parser.py (0.80)" in text and "src/lexer.py" not in text  # the strongest only
    assert "decision" not in text and "code edited" not in text and "last failure" not in text
    assert render_note({**PARSER, "with": [], "failure": None}, 600, parts=TOOL_PARTS, partners=TOOL_PARTNERS_SHOWN, min_weight=TOOL_PARTNER_WEIGHT, bare=False) == ""


def test_what_prompts_are_told_counts_against_the_session_budget() -> None:
    from rolling_graph.render.notes import charge, session_left

    counters = new_counters()
    counters["events"] = 1000
    settings = replace(RenderSettings(), note_session_tokens=100)
    assert session_left(counters, settings) == 300
    charge(counters, 250)  # a prompt's own news, say
    assert session_left(counters, settings) == 50
    assert tool_note(counters, event(["src/parser.py"]), NOTES, settings) == ""  # no room left for a note
    charge(counters, 100)
    assert session_left(counters, settings) == 0


def test_a_prompt_gets_the_notes_of_the_files_it_names_as_a_whole() -> None:
    from rolling_graph.render.notes import prompt_notes

    notes = {file_id(p): {**PARSER, "path": p, "sessions": n} for p, n in [
        ("src/workflow_test.py", 5), ("src/a/hooks.py", 2), ("src/b/hooks.py", 6), ("src/c/hooks.py", 1)]}

    def told(prompt: str) -> list[str]:
        counters = new_counters()
        text = prompt_notes(counters, prompt, notes, RenderSettings(), 10_000)
        return [line.split(",")[0] for line in text.splitlines() if line.startswith("src/")]

    assert told("why does manual_workflow_test.py fail?") == []  # the tail of a longer name names nothing
    assert told("why does workflow_test.py fail?") == ["src/workflow_test.py"]
    assert told("look at hooks.py") == ["src/b/hooks.py"]  # a name three files share: the best-known one
    assert told("look at src/a/hooks.py") == ["src/a/hooks.py"]  # a path names its file, not its namesakes
    # Written against Japanese, Chinese or Korean text (no space before the next word): still named.
    assert told("workflow_test.pyが失敗する理由は?") == ["src/workflow_test.py"]
    assert told("请看src/a/hooks.py的错误") == ["src/a/hooks.py"]
    assert told("manual_workflow_test.py를 봐줘") == []


# -- through the hook, from the project's snapshot file ------------------------------------
def _snapshot(home: Path, project: str) -> None:
    write_snapshot(home, project, {"generated_at": "2026-11-27T00:00:00Z", "nodes": [], "edges": [], "notes": NOTES})


def _tool(sid: str, project: Path, rel: str, response: Any = None) -> str:
    payload = tool_payload(sid, "Read", {"file_path": str(project / rel)}, response or {"file": {"content": "x = 1"}}, cwd=str(project))
    return context_of(handle_event("post-tool-use", payload, load_settings()))


def test_the_hook_tells_a_files_history_once_from_the_snapshot(tmp_path: Path, isolated_home: Path) -> None:
    project = tmp_path / "app"
    (project / ".git").mkdir(parents=True)
    _snapshot(isolated_home, str(project))
    first = _tool("notes-1", project, "src/parser.py")
    assert "src/parser.py, in 3 earlier sessions" in first
    assert "usually changed with: tests/test_parser.py" in first
    assert "code edited" not in first  # a tool note leaves it out; a prompt's note has it
    assert _tool("notes-1", project, "src/parser.py") == ""
    # A prompt that names a known file gets its note (once) too.
    handle = handle_event("user-prompt-submit", prompt_payload("notes-2", "What changed in src/parser.py lately?", cwd=str(project)),
                          load_settings())
    assert "src/parser.py, in 3 earlier sessions" in context_of(handle)
    assert "code edited: `parse_expr`" in context_of(handle)
    assert "src/parser.py, in 3 earlier sessions" not in _tool("notes-2", project, "src/parser.py")


def test_a_tool_event_that_names_no_file_never_reads_the_notes(tmp_path: Path, isolated_home: Path,
                                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    from rolling_graph.store.sidecar import SidecarStore
    from rolling_graph.warm import notes_cache

    project = tmp_path / "app"
    (project / ".git").mkdir(parents=True)
    _snapshot(isolated_home, str(project))
    reads: list[str] = []
    real = notes_cache.read_notes
    monkeypatch.setattr(notes_cache, "read_notes", lambda home, root: reads.append(root) or real(home, root))

    def run(tool: str, tool_input: dict[str, Any]) -> str:
        payload = tool_payload("quiet-1", tool, tool_input, {"stdout": "ok"}, cwd=str(project))
        return context_of(handle_event("post-tool-use", payload, load_settings()))

    assert run("Bash", {"command": "go test ./...", "description": "run the tests"}) == ""
    assert run("TodoWrite", {"todos": [{"content": "parse src/parser.py", "status": "pending"}]}) == ""
    edit = {"file_path": str(project / "src/parser.py"), "old_string": "a", "new_string": "b"}
    assert "src/parser.py, in 3 earlier sessions" in run("Edit", edit)
    assert reads == [str(project)], "read once: for the edit of a file, not for the shell command nor the task list"
    # What the session recorded of them is what reading the notes would have recorded.
    counters = SidecarStore(load_settings()).load_state("quiet-1")["counters"]
    assert counters["notes_told"] == [file_id("src/parser.py")]
    assert "src/parser.py, in 3 earlier sessions" in _tool("quiet-2", project, "src/parser.py")
    assert len(reads) == 2


def test_notes_can_be_turned_off(tmp_path: Path, isolated_home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    project = tmp_path / "app"
    (project / ".git").mkdir(parents=True)
    _snapshot(isolated_home, str(project))
    monkeypatch.setenv("ROLLING_GRAPH_NOTES", "off")
    assert _tool("notes-off", project, "src/parser.py") == ""


def test_a_search_that_lists_many_files_gets_no_note() -> None:
    counters = new_counters()
    counters["events"] = 10
    listing = event(["src/parser.py", "src/a.py", "src/b.py"], tool="Grep")
    assert tool_note(counters, listing, NOTES, RenderSettings()) == ""
    assert "src/parser.py" in tool_note(counters, event(["src/parser.py"], tool="Grep"), NOTES, RenderSettings())


def test_a_sessions_prompts_and_tools_are_never_told_more_than_its_note_budget(tmp_path: Path, isolated_home: Path,
                                                                                monkeypatch: pytest.MonkeyPatch) -> None:
    from rolling_graph.store.sidecar import SidecarStore

    project = tmp_path / "app"
    (project / ".git").mkdir(parents=True)
    many = {file_id(f"src/m{i}.py"): {**PARSER, "path": f"src/m{i}.py"} for i in range(30)}
    write_snapshot(isolated_home, str(project), {"generated_at": "2026-11-27T00:00:00Z", "nodes": [], "edges": [], "notes": many})
    monkeypatch.setenv("ROLLING_GRAPH_PROBE_MODE", "sync")
    config = isolated_home / "config.toml"
    config.write_text("[render]\nnote_session_tokens = 200\nnote_pace_chars = 100000\n", encoding="utf-8")
    told = 0
    for i in range(30):
        prompt = f"Let's go with Redis for cache {i}; look at src/m{i}.py and the FooBar{i} handler."
        told += len(context_of(handle_event("user-prompt-submit", prompt_payload("budget-1", prompt, cwd=str(project)), load_settings())))
        told += len(_tool("budget-1", project, f"src/m{(i + 7) % 30}.py"))
    assert 0 < told <= 200 * 3
    assert SidecarStore(load_settings()).load_state("budget-1")["counters"]["note_chars"] == told


# -- the parts of a note, as data ------------------------------------------------------------
def test_partner_rows_are_the_well_formed_rows_of_an_entry() -> None:
    from rolling_graph.render.notes import partner_rows

    entry = {"with": [["a.py", 0.8, 3], ["b.py", 1], "junk", ["c.py"], [3, 0.5], ["d.py", True], ["e.py", 0.25, 2]]}
    assert partner_rows(entry) == [("a.py", 0.8), ("b.py", 1.0), ("e.py", 0.25)]
    assert partner_rows({}) == [] and partner_rows({"with": None}) == []


def test_kept_partners_are_the_strongest_close_ones_not_shown_nor_touched() -> None:
    from rolling_graph.render.notes import kept_partners

    rows = [("src/b.py", 0.4), ("src/a.py", 0.9), ("src/c.py", 0.6), ("src/d.py", 0.7)]
    assert kept_partners(rows, limit=2) == [("src/a.py", 0.9), ("src/d.py", 0.7)]
    assert kept_partners(rows, limit=1, min_weight=0.5, shown="import src/a.py") == [("src/d.py", 0.7)]
    assert kept_partners(rows, limit=3, min_weight=0.5, touched={file_id("src/d.py")}) == [("src/a.py", 0.9), ("src/c.py", 0.6)]
    assert kept_partners(rows, limit=0) == []


def test_a_notes_parts_are_data_the_measurement_reads_back() -> None:
    from rolling_graph.render.notes import PART_LABELS, note_parts

    text = render_note(PARSER, 600, parts=("code", "partners"))
    kinds = [k for k, _ in note_parts(text)]
    assert kinds == ["head", "code", "partners"]  # in the order asked for
    assert "decision" not in text and "last failure" not in text
    assert note_parts("news: `foo_bar` changed") == [("other", "news: `foo_bar` changed")]
    assert set(PART_LABELS) >= {"partners", "failure", "decision", "code"}
    # A prompt's note may be its head alone (bare); a tool's is not.
    counts_only = {"path": "src/a.py", "sessions": 2, "edits": 3}
    assert render_note(counts_only, 600, bare=True) and not render_note(counts_only, 600)
