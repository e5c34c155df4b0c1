"""The structured part of a tool event: what the probe folds into facts.

A tool event's ``text`` is for reading (and for a model probe); its ``data`` keeps the
few input and result fields the offline probe folds deterministically — an Edit's old and
new strings, a TodoWrite's list, a TaskUpdate's status, the answers to an AskUserQuestion,
a background task's id and exit code — each cut to a bound. Shapes follow Claude Code's
``sdk-tools.d.ts`` and the transcripts' ``toolUseResult``; anything else is ignored.

Plain dict and string operations: this runs in the hook on every tool call (no ``re``,
no ``json``). Nothing here is trusted: every value is checked for its type.
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

TODOS_MAX = 20
QUESTIONS_MAX = 4
EDITS_MAX = 6


def _s(value: Any, limit: int) -> str:
    return value[:limit] if isinstance(value, str) else ""


def _cut(value: Any, limit: int) -> str:
    """Code text within ``limit``, ending in ``…`` when it was cut (so the probe never
    takes the half of a name at the cut for a name)."""
    if not isinstance(value, str):
        return ""
    return value if len(value) <= limit else value[:limit] + "…"


def _d(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def failed(response: Any) -> bool:
    """A tool result that reports failure: an error string (as transcripts record a failed
    call, ``"Error: Exit code 2\\n…"``), or a dict flagged ``is_error`` / ``interrupted``."""
    if isinstance(response, str):
        head = response.lstrip()[:40]
        return head.startswith(("Error: ", "Exit code ", "<tool_use_error>"))
    if isinstance(response, dict):
        return bool(response.get("is_error")) or bool(response.get("interrupted"))
    return False


def _todos(value: Any) -> list[list[str]]:
    out = []
    for item in value if isinstance(value, list) else []:
        item = _d(item)
        content, status = _s(item.get("content"), 160), item.get("status")
        if content and status in ("pending", "in_progress", "completed"):
            out.append([content, status])
        if len(out) >= TODOS_MAX:
            break
    return out


def _answers(inp: dict[str, Any], response: Any) -> list[list[str]]:
    resp = _d(response)
    answers = _d(resp.get("answers")) or _d(inp.get("answers"))
    questions = resp.get("questions") if isinstance(resp.get("questions"), list) else inp.get("questions")
    headers = {}
    for q in questions if isinstance(questions, list) else []:
        q = _d(q)
        if isinstance(q.get("question"), str):
            headers[q["question"]] = _s(q.get("header"), 40)
    out = []
    for question, answer in answers.items():
        if isinstance(question, str) and isinstance(answer, str) and answer.strip():
            out.append([headers.get(question, ""), question[:240], answer[:240]])
        if len(out) >= QUESTIONS_MAX:
            break
    return out


def tool_data(tool: str, tool_input: Any, response: Any) -> dict[str, Any]:
    """The bounded, structured fields of one tool call (empty when there are none)."""
    inp = _d(tool_input)
    data: dict[str, Any] = {}
    if tool == "Edit":
        data = {"old": _cut(inp.get("old_string"), 600), "new": _cut(inp.get("new_string"), 600)}
    elif tool == "MultiEdit":
        raw_edits = inp.get("edits")
        edits = raw_edits if isinstance(raw_edits, list) else []
        data = {"edits": [{"old": _cut(_d(e).get("old_string"), 300), "new": _cut(_d(e).get("new_string"), 300)} for e in edits[:EDITS_MAX]]}
    elif tool == "Write":
        data = {"new": _cut(inp.get("content"), 1500)}
    elif tool == "NotebookEdit":
        data = {"new": _cut(inp.get("new_source"), 600)}
    elif tool in ("Grep", "Glob"):
        data = {"pattern": _s(inp.get("pattern"), 200), "glob": _s(inp.get("glob"), 100)}
        resp = _d(response)
        hits = resp.get("numFiles") if resp.get("mode") in (None, "files_with_matches") else (resp.get("numMatches") or resp.get("numLines"))
        if isinstance(hits, int) and not isinstance(hits, bool):
            data["hits"] = hits
    elif tool == "Bash":
        data = {"cmd": _s(inp.get("command"), 1200), "desc": _s(inp.get("description"), 120)}
        if inp.get("run_in_background") is True or _d(response).get("backgroundTaskId"):
            data["bg"] = _s(_d(response).get("backgroundTaskId"), 40) or "?"
    elif tool == "TodoWrite":
        data = {"todos": _todos(inp.get("todos")) or _todos(_d(response).get("newTodos"))}
    elif tool == "TaskCreate":
        data = {"subject": _s(inp.get("subject"), 160), "ref": _s(_d(_d(response).get("task")).get("id"), 40)}
    elif tool == "TaskUpdate":
        data = {"ref": _s(inp.get("taskId"), 40), "status": _s(inp.get("status"), 20), "subject": _s(inp.get("subject"), 160)}
    elif tool == "AskUserQuestion":
        data = {"qa": _answers(inp, response)}
    elif tool == "ExitPlanMode":
        data = {"plan": _s(inp.get("plan"), 2000)}
    elif tool in ("Task", "Agent"):
        data = {"desc": _s(inp.get("description"), 120), "agent": _s(inp.get("subagent_type"), 40),
                "prompt": _s(inp.get("prompt"), 1200)}
    elif tool in ("TaskOutput", "BashOutput"):
        task = _d(_d(response).get("task"))
        code = task.get("exitCode")
        data = {"ref": _s(inp.get("task_id") or inp.get("bash_id") or task.get("task_id"), 40), "status": _s(task.get("status"), 20),
                "out": _s(task.get("output"), 100_000)[-1500:], "desc": _s(task.get("description"), 120)}
        if isinstance(code, int) and not isinstance(code, bool):
            data["exit"] = code
    if failed(response):
        data["failed"] = True
    return {k: v for k, v in data.items() if v not in ("", [], None)}
