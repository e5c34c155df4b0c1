"""Tool-call folding for the offline probe: tool events into nodes, edges and facts.

Deterministic, from each event's structured ``data`` (:mod:`rolling_graph.capture.tool_data`) and
its text. Here: files and code names, and the dispatch to the other concepts.

* **files** — Edit/MultiEdit/Write/NotebookEdit/Read: one node per file (id and label
  from the path relative to the project root), facts ``edits``/``writes``/``reads``,
  ``last_op``, ``what`` (the names an edit adds or changes); ``edits`` from the active task
* **code names** — what an edit or write defines and uses (with the whole input, read from
  the transcript by :mod:`.transcript_tail`), Grep patterns that find something, the
  code a subagent's brief (Task/Agent) quotes: ``symbol`` nodes; the files a brief lists
  are touched when the session already holds them
* commands, errors, commits and the tracker: :mod:`.offline_commands`; task lists,
  answers and plans: :mod:`.offline_tasks`
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

from rolling_graph.capture.entities import paths_in
from rolling_graph.core.filepaths import file_id, looks_like_file
from rolling_graph.probe import offline_commands as commands
from rolling_graph.probe import offline_tasks as tasks
from rolling_graph.probe.code_names import (
    NO_NAMES,
    code_names,
    defined_names,
    frequent_names,
    is_code_name,
    is_private_helper,
    pattern_names,
    quoted_names,
)
from rolling_graph.probe.proposal import Proposal, event_seq

if TYPE_CHECKING:
    from rolling_graph.core.types import PendingEvent

_EDIT_TOOLS = {"Edit": "edits", "MultiEdit": "edits", "NotebookEdit": "edits", "Write": "writes"}
NAMES_PER_EDIT = 12
NAMES_PER_WRITE = 30
EDGES_PER_EDIT = 4
#: A subagent's brief (Task/Agent): at most this many of its files and code names.
FILES_PER_BRIEF = 12
NAMES_PER_BRIEF = 8


def _join_names(names: list[str], previous: str | None) -> str:
    """``what`` of a file: the names edited, newest first, within 120 characters."""
    old = [n.strip("` ") for n in (previous or "").split(",") if n.strip("` ")]
    merged = list(dict.fromkeys([*names, *old]))
    text = ""
    for name in merged:
        piece = f"`{name}`"
        if len(text) + len(piece) + 2 > 120:
            break
        text = f"{text}, {piece}" if text else piece
    return text


def whole_text(text: str) -> str:
    """``text`` without a word cut in half at its end (the hook marks a cut with ``…``)."""
    return re.sub(r"[\w.@]*…$", "", text) if text.endswith("…") else text


def defined_in(tool: str, data: dict[str, Any]) -> list[str]:
    """The names an edit's or a write's new code defines (functions, types, modules)."""
    edits = data.get("edits", []) if tool == "MultiEdit" else [data]
    return [n for e in edits if isinstance(e, dict) for n in defined_names(whole_text(str(e.get("new") or "")), 15)]


def edit_names(tool: str, data: dict[str, Any]) -> list[str]:
    """The names an edit touched: what it defines, then code names it adds or removes."""
    pairs: list[tuple[str, str]] = []
    if tool == "MultiEdit":
        pairs = [(str(e.get("old") or ""), str(e.get("new") or "")) for e in data.get("edits", []) if isinstance(e, dict)]
    else:
        pairs = [(str(data.get("old") or ""), str(data.get("new") or ""))]
    names: list[str] = []
    for old, new in pairs:
        old, new = whole_text(old), whole_text(new)
        if tool == "Write":
            names += defined_names(new, 10) + frequent_names(new, 10)
            continue
        # What the edit defines or adds, and the definitions it changes inside; a name it
        # only removes is gone from the code and is no name to carry on.
        names += defined_names(new, 4) + [d for d in defined_names(old, 4) if d in new]
        names += [n for n in code_names(new) if n not in old]
        names += code_names(new, 4)
    return list(dict.fromkeys(names))


def _files(p: Proposal, event: PendingEvent, state: dict[str, Any], tool: str, data: dict[str, Any], seq: int | None) -> None:
    counter = _EDIT_TOOLS.get(tool, "reads")
    for raw in event.get("paths", [])[:3]:
        path = p.path(raw)
        fid = p.file(path) if path else None
        if not fid or not path:
            continue
        code = path.rpartition(".")[2].lower() not in NO_NAMES
        names: list[str] = []
        whole: list[str] = []
        if counter != "reads" and code:  # the whole input's names (from the transcript) first
            whole = [str(n) for n in data.get("names", []) if isinstance(n, str)] if isinstance(data.get("names"), list) else []
            names = list(dict.fromkeys(edit_names(tool, data) + whole))
        p.set(fid, **{counter: int(p.fact(fid, counter) or 0) + 1, "last_op": counter[:-1] if counter != "reads" else "read"})
        p.by(fid, "tool", seq)
        if counter == "reads":
            continue
        if names:
            p.set(fid, what=_join_names(names, p.fact(fid, "what")))
        p.edge(state.get("topic"), "edits", fid, 0.6)
        state.setdefault("edited", []).append(fid)
        cap = NAMES_PER_WRITE if tool == "Write" or len(whole) > 20 else NAMES_PER_EDIT  # a large edit is a rewrite
        defined = set(defined_in(tool, data))
        # A private helper (``_fill``) is among them only where the code defines or calls it.
        for i, name in enumerate([n for n in names if is_code_name(n) or is_private_helper(n)][:cap]):
            sid = p.node(name, "technical", "symbol")
            p.by(sid, "tool", seq)
            p.set(sid, **{"in": fid})  # its owner in the block's map of names: the file it was last edited in
            if name in defined and seq is not None:
                p.set(sid, **{"def": seq})
            if i < EDGES_PER_EDIT:  # the names the edit is about; the rest are only named
                p.edge(state.get("topic"), "edits", sid, 0.5)


def _search(p: Proposal, event: PendingEvent, state: dict[str, Any], tool: str, data: dict[str, Any], seq: int | None) -> None:
    pattern = str(data.get("pattern") or "")
    if tool == "Grep" and data.get("hits") != 0:  # a search that finds nothing names nothing in the code
        for name in pattern_names(pattern)[:3]:
            p.by(p.node(name, "technical", "symbol"), "tool", seq)
    elif looks_like_file(pattern) and not any(c in pattern for c in "*?[{"):
        path = p.path(pattern, event.get("cwd"))
        p.by(p.file(path) if path else None, "tool", seq)
    for raw in event.get("paths", [])[:1]:
        path = p.path(raw)
        if path and looks_like_file(path):
            p.by(p.file(path), "tool", seq)


def fold_tool(p: Proposal, event: PendingEvent, state: dict[str, Any]) -> None:
    """Fold one tool event into the proposal."""
    tool = str(event.get("tool") or "")
    raw = event.get("data")
    data = raw if isinstance(raw, dict) else {}
    seq = event_seq(event)
    if "<tool_use_error>" in str(event.get("text") or "")[:600]:
        return  # a call the harness refused or cancelled: nothing happened
    if tool in _EDIT_TOOLS or tool == "Read":
        _files(p, event, state, tool, data, seq)
    elif tool in ("Grep", "Glob"):
        _search(p, event, state, tool, data, seq)
    elif tool == "Bash":
        commands.fold_bash(p, event, state, seq)
    elif tool == "TodoWrite":
        tasks.fold_todos(p, state, data, seq)
    elif tool in ("TaskCreate", "TaskUpdate"):
        tasks.fold_task_tools(p, state, tool, data, seq)
    elif tool == "AskUserQuestion":
        tasks.fold_answers(p, state, data, seq)
    elif tool == "ExitPlanMode":
        tasks.fold_plan(p, state, data, seq)
    elif tool in ("Task", "Agent"):
        _brief(p, data, seq)
    elif tool in ("TaskOutput", "BashOutput"):
        status = str(data.get("status") or "")
        if status in ("completed", "failed", "killed"):
            exit_code = data.get("exit")
            failed = status != "completed" or (isinstance(exit_code, int) and exit_code != 0)
            commands.background_done(p, str(data.get("ref") or ""), str(data.get("out") or ""), failed, seq, state, final=True)


def _brief(p: Proposal, data: dict[str, Any], seq: int | None) -> None:
    """What the assistant asked a subagent to look at: the code names it quotes, and the
    files it lists that the session already holds. A file only a subagent was sent to read
    gets no node of its own: measured on ../shared/corpus, such files cost the next
    session's block room (the warm graph carries them) and brought little back."""
    text = f"{data.get('desc') or ''}\n{data.get('prompt') or ''}"
    for raw in paths_in(text)[:FILES_PER_BRIEF]:
        path = p.path(raw)
        if path and p.kind_of(file_id(path)) == "file":
            p.by(file_id(path), "assistant", seq)
    for name in quoted_names(text, NAMES_PER_BRIEF):  # (a code name is never a file's name)
        p.by(p.node(name, "technical", "symbol"), "assistant", seq)
