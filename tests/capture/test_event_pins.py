"""What the probe sees of a hook payload is pinned: the same payload, the same pending event.

The pending event (text, paths, error flag, structured ``data``, ``cwd``, transcript path)
is what the probe folds and a model reads; any change to it changes what the graph learns.
:data:`PINS` (``event_pins.json``, written once from the code as it was before the payload
got its typed parser) holds the events of three sets of payloads:

* a table of named payloads, one or more per tool and per odd shape, kept in full so a
  difference reads as a diff;
* every prompt and tool result of the fixture transcripts and the demo session, as the
  replay turns them into hook payloads (a digest each);
* a few thousand payloads generated from a fixed seed: known and unknown tools, inputs and
  results of every type at every key the parser reads, long texts, error words, secrets,
  ``<private>`` spans (a digest each).

To re-pin after a change that is meant to change what the probe sees (say why in the
commit): ``python tests/capture/test_event_pins.py --write``.
"""

from __future__ import annotations

import hashlib
import json
import random
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "fixtures"))

from make_secret_corpus import build_secrets  # noqa: E402

from rolling_graph.capture.events import event_from_payload  # noqa: E402
from rolling_graph.replay.transcript import parse_transcripts  # noqa: E402

PINS = Path(__file__).with_name("event_pins.json")
AT = "2026-11-26T10:00:00Z"
GENERATED = 3000
SEED = 20261127

Case = tuple[str, dict[str, Any]]


def _tool(tool: Any, tool_input: Any, response: Any = None, **extra: Any) -> Case:
    payload = {"session_id": "pin", "cwd": "/home/dev/app", "transcript_path": "/tmp/pin.jsonl", "tool_name": tool,
               "tool_input": tool_input, "tool_response": response, **extra}
    return "PostToolUse", payload


LONG = "".join(f"line {i}: value = compute({i}) # note\n" for i in range(400))  # ~14 kB
PRIVATE = "before <private>hunter2 is the password</private> after"
AWS = "aws_access_key_id = AKIA" + "IOSFODNN7EXAMPLE"

TABLE: dict[str, Case] = {
    "read": _tool("Read", {"file_path": "/home/dev/app/lib/x.py"}, {"type": "text", "file": {"content": "x = 1"}}),
    "read_failed": _tool("Read", {"file_path": "/home/dev/app/missing.py"}, {"is_error": True, "content": "File does not exist."}),
    "read_offset": _tool("Read", {"file_path": "lib/x.py", "offset": 10, "limit": 20}, "<tool_use_error>File does not exist.</tool_use_error>"),
    "edit": _tool("Edit", {"file_path": "/home/dev/app/lib/x.py", "old_string": "def f():\n    return 1", "new_string": "def f():\n    return compute_total(2)"},
                  {"filePath": "/home/dev/app/lib/x.py", "structuredPatch": []}),
    "edit_long": _tool("Edit", {"file_path": "lib/x.py", "old_string": LONG, "new_string": LONG + "tail_name()"}, {}),
    "edit_not_applied": _tool("Edit", {"file_path": "lib/x.py", "old_string": "a", "new_string": "b"},
                              "Error: String to replace not found in file."),
    "multiedit": _tool("MultiEdit", {"file_path": "lib/y.py", "edits": [{"old_string": f"old_{i}", "new_string": f"new_{i}()"} for i in range(9)]}, {}),
    "multiedit_odd_edits": _tool("MultiEdit", {"file_path": "lib/y.py", "edits": [1, None, {"old_string": 5}, {"new_string": "ok"}]}, None),
    "multiedit_edits_not_a_list": _tool("MultiEdit", {"file_path": "lib/y.py", "edits": {"old_string": "a"}}, {}),
    "write": _tool("Write", {"file_path": "/home/dev/app/src/app.py", "content": LONG}, {"type": "create"}),
    "write_empty": _tool("Write", {"file_path": "src/__init__.py", "content": ""}, {}),
    "notebook": _tool("NotebookEdit", {"notebook_path": "/home/dev/app/nb.ipynb", "new_source": "import pandas as pd"}, {}),
    "bash": _tool("Bash", {"command": "pytest -q tests/test_x.py", "description": "Run the tests"},
                  {"stdout": "2 failed, 56 passed in 3.1s", "stderr": "", "interrupted": False}),
    "bash_traceback": _tool("Bash", {"command": "python -c 'import x'"},
                            {"stdout": "", "stderr": "Traceback (most recent call last):\n  File \"<string>\", line 1\nModuleNotFoundError: No module named 'x'"}),
    "bash_background": _tool("Bash", {"command": "npm run dev", "run_in_background": True}, {"stdout": "", "backgroundTaskId": "bash_7"}),
    "bash_background_no_id": _tool("Bash", {"command": "sleep 100", "run_in_background": True}, {}),
    "bash_exit_code": _tool("Bash", {"command": "false"}, "Error: Exit code 1\n"),
    "bash_interrupted": _tool("Bash", {"command": "make"}, {"stdout": "building", "interrupted": True}),
    "bash_long_output": _tool("Bash", {"command": "cat big.log"}, {"stdout": LONG, "stderr": LONG[:500]}),
    "bash_secret": _tool("Bash", {"command": f"echo '{AWS}' >> ~/.aws/credentials"}, {"stdout": AWS}),
    "bash_private": _tool("Bash", {"command": f"echo {PRIVATE}"}, {"stdout": PRIVATE}),
    "bash_command_not_text": _tool("Bash", {"command": ["ls", "-la"]}, {"stdout": "x"}),
    "grep_files": _tool("Grep", {"pattern": "def compute_total", "path": "lib", "glob": "*.py"},
                        {"mode": "files_with_matches", "numFiles": 3, "filenames": ["a.py", "b.py", "c.py"]}),
    "grep_content": _tool("Grep", {"pattern": "TODO", "output_mode": "content"}, {"mode": "content", "numLines": 12, "content": "a.py:1: TODO"}),
    "grep_count": _tool("Grep", {"pattern": "x"}, {"mode": "count", "numMatches": 0, "numLines": 4}),
    "grep_nothing": _tool("Grep", {"pattern": "nowhere_name"}, {"mode": "files_with_matches", "numFiles": 0}),
    "grep_hits_bool": _tool("Grep", {"pattern": "x"}, {"numFiles": True}),
    "glob": _tool("Glob", {"pattern": "**/*.ex", "path": "/home/dev/app/lib"}, {"filenames": ["lib/a.ex"], "numFiles": 1}),
    "ls": _tool("LS", {"path": "/home/dev/app"}, "- app/\n  - lib/"),
    "todowrite": _tool("TodoWrite", {"todos": [{"content": f"Step {i}", "status": ["pending", "in_progress", "completed"][i % 3], "activeForm": "x"}
                                               for i in range(25)]}, {"oldTodos": [], "newTodos": []}),
    "todowrite_from_response": _tool("TodoWrite", {"todos": "garbage"}, {"newTodos": [{"content": "Fix it", "status": "completed"},
                                                                                     {"content": "Odd", "status": "blocked"}]}),
    "taskcreate": _tool("TaskCreate", {"subject": "Add the regression test", "description": "..."}, {"task": {"id": "7", "subject": "x"}}),
    "taskupdate": _tool("TaskUpdate", {"taskId": "7", "status": "completed", "subject": "Add the regression test"}, {"success": True}),
    "ask": _tool("AskUserQuestion", {"questions": [{"question": "Which database?", "header": "DB", "options": []},
                                                   {"question": "Deploy where?", "header": "Hosting"}]},
                 {"questions": [{"question": "Which database?", "header": "Database"}], "answers": {"Which database?": "PostgreSQL",
                                                                                                    "Deploy where?": "Fly", "Empty?": " "}}),
    "ask_answers_in_input": _tool("AskUserQuestion", {"questions": [{"question": "Q?", "header": "H"}], "answers": {"Q?": "A"}}, "User answered"),
    "plan": _tool("ExitPlanMode", {"plan": "# Plan: rework billing\n\n1. Move `prorate_amount` into `apply_plan_change`"}, {"plan": "x"}),
    "task": _tool("Task", {"description": "Find the callers", "subagent_type": "Explore", "prompt": "Look at lib/billing/*.ex and `prorate`"},
                  {"content": [{"type": "text", "text": "Found 3 callers"}], "totalTokens": 100}),
    "agent": _tool("Agent", {"description": "Review", "prompt": "Review src/app.py"}, "done"),
    "taskoutput": _tool("TaskOutput", {"task_id": "bash_7"}, {"task": {"task_id": "bash_7", "status": "completed", "exitCode": 1,
                                                                       "output": LONG, "description": "npm run dev"}}),
    "bashoutput": _tool("BashOutput", {"bash_id": "bash_9"}, {"task": {"status": "running", "exitCode": True}}),
    "webfetch": _tool("WebFetch", {"url": "https://example.com", "prompt": "summarise"}, {"result": "ok", "code": 200}),
    "mcp": _tool("mcp__github__get_issue", {"owner": "o", "repo": "r", "issue_number": 3}, [{"type": "text", "text": "Issue 3"}]),
    "unknown_path_keys": _tool("Weird", {"path": "a/b.py", "file_path": 3, "notebook_path": "n.ipynb"}, None),
    "input_not_a_dict": _tool("Bash", ["ls"], {"stdout": "x"}),
    "input_a_string": _tool("Custom", "raw input", "raw output"),
    "input_missing": ("PostToolUse", {"session_id": "pin", "tool_name": "Read"}),
    "tool_name_missing": _tool(None, {"file_path": "x.py"}, {}),
    "tool_name_long": _tool("T" * 100, {}, {}),
    "tool_name_not_text": _tool(7, {"command": "ls"}, {}),
    "response_a_number": _tool("Bash", {"command": "ls"}, 42),
    "response_a_list": _tool("Bash", {"command": "ls"}, ["a", {"b": 1}]),
    "response_error_key": _tool("Bash", {"command": "ls"}, {"error": "Permission denied", "output": "partial"}),
    "response_fatal": _tool("Bash", {"command": "git push"}, {"stdout": "", "stderr": "fatal: not a git repository"}),
    "failure": ("PostToolUseFailure", {"session_id": "pin", "cwd": "/home/dev/app", "tool_name": "Bash", "tool_input": {"command": "npm test"},
                                       "error": "Command failed with exit code 1"}),
    "failure_no_error": ("PostToolUseFailure", {"session_id": "pin", "tool_name": "Edit", "tool_input": {"file_path": "a.py", "new_string": "x"}}),
    "failure_error_dict": ("PostToolUseFailure", {"session_id": "pin", "tool_name": "Read", "tool_input": {"file_path": "a.py"}, "error": {"m": 1}}),
    "cwd_private": _tool("Read", {"file_path": "x.py"}, {}, cwd=f"/home/dev/{PRIVATE}"),
    "cwd_not_text": _tool("Read", {"file_path": "x.py"}, {}, cwd=5, transcript_path=None),
    "cwd_long": _tool("Read", {"file_path": "x.py"}, {}, cwd="/" + "d" * 5000, transcript_path="/t/" + "x" * 5000),
    "path_secret": _tool("Read", {"file_path": f"/tmp/{AWS}.txt"}, {}),
    "prompt": ("UserPromptSubmit", {"session_id": "pin", "cwd": "/home/dev/app", "transcript_path": "/tmp/pin.jsonl",
                                    "prompt": "Let's use PostgreSQL for lib/store.py instead of SQLite."}),
    "prompt_secret": ("UserPromptSubmit", {"session_id": "pin", "prompt": f"my key: {AWS} and {PRIVATE}"}),
    "prompt_long": ("UserPromptSubmit", {"session_id": "pin", "prompt": LONG}),
    "prompt_text_key": ("UserPromptSubmit", {"session_id": "pin", "text": "from the text key: see src/a.py"}),
    "prompt_not_text": ("UserPromptSubmit", {"session_id": "pin", "prompt": {"a": [1, 2]}}),
    "prompt_empty": ("UserPromptSubmit", {"session_id": "pin"}),
    "compact_summary": ("CompactSummary", {"text": f"This session continues. We edited lib/a.ex and src/b.py. {AWS}"}),
    "compact_summary_long": ("CompactSummary", {"text": LONG + PRIVATE}),
}


def _secrets() -> list[str]:
    return [s["line"] for s in build_secrets()[:40]]


def generated(n: int = GENERATED, seed: int = SEED) -> Iterator[Case]:
    """``n`` payloads from a fixed seed: every key the parser reads, with values of every type."""
    rng = random.Random(seed)
    secrets = _secrets()
    words = ["Error: boom", "FAILED tests/x.py::t", "fatal: no", "panicked at 'x'", "Exception: y", "ok", "1 passed in 0.1s",
             "Traceback (most recent call last):\n  x\nValueError: bad", "<tool_use_error>no</tool_use_error>", "Exit code 2", ""]

    def text() -> str:
        pick = rng.random()
        if pick < 0.25:
            return rng.choice(words)
        if pick < 0.35:
            return rng.choice(secrets)
        if pick < 0.45:
            return PRIVATE
        if pick < 0.55:
            return LONG[: rng.choice([1300, 3000, 9000, 14000])]
        if pick < 0.65:
            return f"/home/dev/app/lib/mod_{rng.randint(0, 9)}.py"
        if pick < 0.7:
            return "ünïcode \u200b zero-width \u202e bidi"
        return " ".join(rng.choice(["compute_total", "x", "BillingPeriod", "lib/a.ex", "`name`", "see", "def f():"]) for _ in range(rng.randint(0, 12)))

    def value(depth: int = 0) -> Any:
        pick = rng.random()
        if pick < 0.55:
            return text()
        if pick < 0.62:
            return rng.choice([0, 1, -3, 2**40])
        if pick < 0.67:
            return rng.choice([True, False])
        if pick < 0.72:
            return None
        if pick < 0.76:
            return 1.5
        if depth < 2 and pick < 0.88:
            return [value(depth + 1) for _ in range(rng.randint(0, 4))]
        if depth < 2:
            return {rng.choice(KEYS): value(depth + 1) for _ in range(rng.randint(0, 4))}
        return text()

    def record(keys: list[str]) -> dict[str, Any]:
        return {k: value(1) for k in rng.sample(keys, rng.randint(0, min(len(keys), 6)))}

    def edits() -> Any:
        if rng.random() < 0.2:
            return value()
        return [record(["old_string", "new_string"]) if rng.random() < 0.8 else value(2) for _ in range(rng.randint(0, 9))]

    def todos() -> Any:
        if rng.random() < 0.2:
            return value()
        return [{"content": text(), "status": rng.choice(["pending", "in_progress", "completed", "blocked", 3])} if rng.random() < 0.85
                else value(2) for _ in range(rng.randint(0, 24))]

    def questions() -> Any:
        return [{"question": rng.choice(["Q1?", "Q2?", text()]), "header": rng.choice(["H", text(), 5])} if rng.random() < 0.8 else value(2)
                for _ in range(rng.randint(0, 5))]

    def answers() -> Any:
        if rng.random() < 0.2:
            return value()
        return {rng.choice(["Q1?", "Q2?", "Q3?", "Q4?", "Q5?", "Q6?"]): rng.choice([text(), " ", 3]) for _ in range(rng.randint(0, 6))}

    def task() -> Any:
        if rng.random() < 0.2:
            return value()
        out = record(["id", "task_id", "status", "output", "description"])
        if rng.random() < 0.6:
            out["exitCode"] = rng.choice([0, 1, 2, True, "1", None])
        if rng.random() < 0.5:
            out["status"] = rng.choice(["completed", "failed", "running", "killed"])
        return out

    special = {"edits": edits, "todos": todos, "questions": questions, "answers": answers, "task": task, "newTodos": todos}
    tools = ["Read", "Edit", "MultiEdit", "Write", "NotebookEdit", "Bash", "Grep", "Glob", "LS", "TodoWrite", "TaskCreate",
             "TaskUpdate", "AskUserQuestion", "ExitPlanMode", "Task", "Agent", "TaskOutput", "BashOutput", "WebFetch",
             "mcp__x__y", "Skill", "", None, 3]

    def filled(keys: list[str]) -> dict[str, Any]:
        out = {}
        for k in rng.sample(keys, rng.randint(0, len(keys))):
            out[k] = special[k]() if k in special else value(1)
        return out

    for _ in range(n):
        kind = rng.random()
        if kind < 0.12:
            yield "UserPromptSubmit", {"session_id": "pin", "prompt": value() if rng.random() < 0.9 else None,
                                       **({"text": value()} if rng.random() < 0.2 else {}),
                                       **({"cwd": value()} if rng.random() < 0.7 else {}),
                                       **({"transcript_path": value()} if rng.random() < 0.5 else {})}
            continue
        if kind < 0.15:
            yield "CompactSummary", {"text": value()}
            continue
        tool = rng.choice(tools)
        if rng.random() < 0.08:
            tool_input: Any = value()
        else:
            tool_input = filled(INPUT_KEYS)
        if rng.random() < 0.15:
            response: Any = value()
        else:
            response = filled(RESPONSE_KEYS)
            for flag in ("is_error", "interrupted"):
                if rng.random() < 0.1:
                    response[flag] = rng.choice([True, False, 1, "yes"])
            if rng.random() < 0.2:
                response["mode"] = rng.choice([None, "files_with_matches", "content", "count"])
            for key in ("numFiles", "numMatches", "numLines"):
                if rng.random() < 0.15:
                    response[key] = rng.choice([0, 3, True, "4", None])
        payload: dict[str, Any] = {"session_id": "pin", "tool_name": tool, "tool_input": tool_input, "tool_response": response}
        if rng.random() < 0.8:
            payload["cwd"] = value() if rng.random() < 0.3 else "/home/dev/app"
        if rng.random() < 0.6:
            payload["transcript_path"] = value() if rng.random() < 0.3 else "/tmp/x.jsonl"
        failure = rng.random() < 0.1
        if failure and rng.random() < 0.8:
            payload["error"] = value()
        yield ("PostToolUseFailure" if failure else "PostToolUse"), payload


KEYS = ["file_path", "path", "content", "stdout", "text", "status", "id"]
INPUT_KEYS = ["file_path", "path", "notebook_path", "command", "description", "run_in_background", "pattern", "glob", "old_string",
              "new_string", "content", "new_source", "edits", "todos", "subject", "taskId", "status", "questions", "answers", "plan",
              "subagent_type", "prompt", "task_id", "bash_id"]
RESPONSE_KEYS = ["stdout", "stderr", "content", "output", "error", "backgroundTaskId", "newTodos", "task", "answers", "questions"]


#: Where the repository stands in a fixture's ``transcript_path``, so the pins hold in any
#: checkout (the replay names each transcript by its absolute path).
CHECKOUT = "/checkout"


def transcript_cases() -> Iterator[Case]:
    paths = sorted((ROOT / "fixtures" / "transcripts").glob("*.jsonl")) + [ROOT / "rolling_graph" / "data" / "demo_session.jsonl"]
    for event in parse_transcripts(paths):
        if event.hook_event_name in ("UserPromptSubmit", "PostToolUse", "PostToolUseFailure"):
            payload = dict(event.payload)
            where = Path(str(payload["transcript_path"]))
            payload["transcript_path"] = f"{CHECKOUT}/{where.relative_to(ROOT).as_posix()}"
            yield event.hook_event_name, payload


def pending(case: Case, i: int) -> dict[str, Any]:
    name, payload = case
    event: dict[str, Any] = dict(event_from_payload(name, json.loads(json.dumps(payload)), f"e{i}", AT))
    return event


def digest(event: dict[str, Any]) -> str:
    return hashlib.sha256(json.dumps(event, sort_keys=True).encode()).hexdigest()[:16]


def current() -> dict[str, Any]:
    return {
        "table": {name: pending(case, i) for i, (name, case) in enumerate(TABLE.items())},
        "transcripts": [digest(pending(case, i)) for i, case in enumerate(transcript_cases())],
        "generated": [digest(pending(case, i)) for i, case in enumerate(generated())],
    }


def _pins() -> dict[str, Any]:
    pins: dict[str, Any] = json.loads(PINS.read_text(encoding="utf-8"))
    return pins


def test_the_named_payloads_give_the_pinned_events() -> None:
    pins = _pins()["table"]
    assert set(pins) == set(TABLE)
    for i, (name, case) in enumerate(TABLE.items()):
        assert pending(case, i) == pins[name], name


def test_the_fixture_transcripts_give_the_pinned_events() -> None:
    pins = _pins()["transcripts"]
    got = [digest(pending(case, i)) for i, case in enumerate(transcript_cases())]
    assert len(got) == len(pins) > 400
    assert [i for i, (a, b) in enumerate(zip(got, pins, strict=True)) if a != b] == []


def test_generated_payloads_of_every_shape_give_the_pinned_events() -> None:
    pins = _pins()["generated"]
    cases = list(generated())
    assert len(cases) == len(pins) == GENERATED
    wrong = [i for i, case in enumerate(cases) if digest(pending(case, i)) != pins[i]]
    assert wrong == [], f"{len(wrong)} differ; the first: {cases[wrong[0]] if wrong else None}"


if __name__ == "__main__":
    if sys.argv[1:] == ["--write"]:
        PINS.write_text(json.dumps(current(), indent=1, sort_keys=True, ensure_ascii=True) + "\n", encoding="utf-8")
        print(f"wrote {PINS}")
