"""The hook payload is read once, at the door, into a typed event (rolling_graph.capture.payload,
and a tool call into its tool's class: rolling_graph.capture.tools).

What the probe sees of each payload is pinned in ``test_event_pins.py``; here, the parser's
own promises: one class per tool, a field of the wrong type reads as absent, and an edit
gives the hook its head and the probe (reading the transcript) its whole input.
"""

from __future__ import annotations

import pytest

from rolling_graph.capture.payload import CompactSummary, Payload, Prompt, SessionStart, ToolResult, parse
from rolling_graph.capture.tools import (
    EDIT_TOOLS,
    TOOLS,
    Bash,
    Edit,
    FileEdit,
    MultiEdit,
    Other,
    Search,
    Task,
    TaskOutput,
    Write,
    parse_tool,
)


def test_each_tool_claude_code_names_has_its_class_and_any_other_is_read_by_its_values() -> None:
    for name in ("Read", "Edit", "MultiEdit", "Write", "NotebookEdit", "Bash", "Grep", "Glob", "LS", "TodoWrite", "TaskCreate",
                 "TaskUpdate", "AskUserQuestion", "ExitPlanMode", "Task", "Agent", "TaskOutput", "BashOutput"):
        assert type(parse_tool(name, {}, None)) is TOOLS[name], name
    assert type(parse_tool("Agent", {})) is Task and type(parse_tool("BashOutput", {})) is TaskOutput
    assert type(parse_tool("Grep", {})) is Search and type(parse_tool("Glob", {})) is Search
    unknown = parse_tool("mcp__github__get_issue", {"issue_number": 3}, [{"type": "text", "text": "Issue 3"}])
    assert type(unknown) is Other and unknown.data() == {} and unknown.paths == []
    assert unknown.text() == ('mcp__github__get_issue {"issue_number":3}\n[{"type":"text","text":"Issue 3"}]', False)  # its input as JSON


def test_another_tools_files_are_its_path_keys_and_its_names_come_from_its_values_never_its_keys() -> None:
    lsp = parse_tool("LSP", {"operation": "goToDefinition", "filePath": "/home/dev/app/src/cart.ts", "line": 12, "character": 5}, "ok")
    assert lsp.paths == ["/home/dev/app/src/cart.ts"]
    assert lsp.data() == {"values": ["/home/dev/app/src/cart.ts"]}  # the operation picks how it runs: no name
    symbol = parse_tool("mcp__serena__find_symbol", {"name_path": "OrderService/apply_discount", "relative_path": "src/orders.py",
                                                     "include_body": True, "options": {"depth": 1, "within": ["billing/proration.py"]}})
    assert symbol.paths == ["src/orders.py"]
    assert symbol.data() == {"values": ["OrderService/apply_discount", "src/orders.py", "billing/proration.py"]}
    resource = parse_tool("mcp__docs__read", {"uri": "file:///home/dev/app/README.md", "query": "x" * 400})
    assert resource.paths == ["/home/dev/app/README.md"] and len(resource.data()["values"][1]) == 301  # cut, marked "…"
    assert parse_tool("mcp__fetch__get", {"uri": "https://example.com/docs/index.html"}).paths == []  # a page, no file


def test_the_tools_that_change_a_file_are_named_once() -> None:
    assert sorted(EDIT_TOOLS) == ["Edit", "MultiEdit", "NotebookEdit", "Write"]
    assert all(issubclass(TOOLS[name], FileEdit) for name in EDIT_TOOLS)


@pytest.mark.parametrize(("event", "kind"), [("UserPromptSubmit", Prompt), ("PostToolUse", ToolResult), ("PostToolUseFailure", ToolResult),
                                              ("CompactSummary", CompactSummary), ("SessionStart", SessionStart), ("Stop", Payload),
                                              ("PreCompact", Payload), ("SessionEnd", Payload)])
def test_every_hook_event_parses_to_its_kind(event: str, kind: type[Payload]) -> None:
    parsed = parse(event, {"session_id": "s1", "cwd": "/home/dev/app", "transcript_path": "/tmp/s1.jsonl"})
    assert type(parsed) is kind and parsed.event == event
    assert (parsed.session_id, parsed.cwd, parsed.transcript_path) == ("s1", "/home/dev/app", "/tmp/s1.jsonl")


def test_a_field_of_the_wrong_type_reads_as_absent() -> None:
    start = parse("SessionStart", {"session_id": "s1", "cwd": 5, "transcript_path": ["x"], "source": {"a": 1}})
    assert isinstance(start, SessionStart)
    assert (start.cwd, start.transcript_path, start.source) == (None, None, "startup")
    call = parse_tool("Bash", {"command": ["ls"], "description": 3, "run_in_background": "yes"}, {"backgroundTaskId": 7})
    assert isinstance(call, Bash)
    assert (call.command, call.description, call.background) == ("", "", "?")  # an id that is no text: a background run without one


def test_a_failed_call_is_an_error_whose_text_is_the_error() -> None:
    failed = parse("PostToolUseFailure", {"session_id": "s1", "tool_name": "Bash", "tool_input": {"command": "npm test"},
                                          "error": "Command failed with exit code 1"})
    assert isinstance(failed, ToolResult)
    assert failed.call.text() == ("$ npm test\nError: Command failed with exit code 1", True)
    assert failed.call.data() == {"cmd": "npm test", "failed": True}


def test_an_edit_gives_the_hook_its_head_and_the_probe_its_whole_input() -> None:
    new = "def compute_total():\n" + "    total += 1\n" * 100
    edit = parse_tool("Edit", {"file_path": "lib/x.py", "old_string": "def compute():\n    pass", "new_string": new}, {})
    assert isinstance(edit, Edit)
    assert edit.file == "lib/x.py" and edit.new_code() == new and edit.old_code() == "def compute():\n    pass"
    head = edit.data()["new"]
    assert len(head) == 601 and head.endswith("…") and new.startswith(head[:-1])
    text, error = edit.text()
    assert text.startswith("Edit lib/x.py\ndef compute_total():") and not error


def test_a_multiedit_gives_each_change_and_a_write_replaces_nothing() -> None:
    edits = [{"old_string": f"old_{i}", "new_string": f"new_{i}"} for i in range(8)] + [None, {"old_string": 3}]
    multi = parse_tool("MultiEdit", {"file_path": "lib/y.py", "edits": edits})
    assert isinstance(multi, MultiEdit)
    assert multi.new_code() == "\n".join(f"new_{i}" for i in range(8))
    assert multi.old_code() == "\n".join(f"old_{i}" for i in range(8))
    assert multi.data() == {"edits": [{"old": f"old_{i}", "new": f"new_{i}"} for i in range(6)]}
    write = parse_tool("Write", {"file_path": "src/app.py", "content": "x = 1\n"}, {"type": "create"})
    assert isinstance(write, Write) and write.old_code() == "" and not write.REPLACES
    assert parse_tool("NotebookEdit", {"notebook_path": "nb.ipynb", "new_source": "import pandas"}).file == "nb.ipynb"  # type: ignore[attr-defined]


def test_a_read_is_its_path_unless_it_failed() -> None:
    ok = parse_tool("Read", {"file_path": "/home/dev/app/lib/x.py"}, {"type": "text", "file": {"content": "Error: in the file's text"}})
    assert ok.text() == ("Read /home/dev/app/lib/x.py", False) and ok.paths == ["/home/dev/app/lib/x.py"]
    missing = parse_tool("Read", {"file_path": "lib/missing.py"}, "<tool_use_error>File does not exist.</tool_use_error>")
    assert missing.text() == ("Read lib/missing.py", True) and missing.data() == {"failed": True}
