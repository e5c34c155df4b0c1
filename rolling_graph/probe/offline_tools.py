"""Tool-call folding for the offline probe: tool events into nodes, edges and facts.

Deterministic, from each event's structured ``data`` (:class:`rolling_graph.core.types.ToolData`,
made by :meth:`rolling_graph.capture.tools.ToolCall.data` and taken by the probe through
:func:`rolling_graph.core.normalize.normalize_event`) and its text. Here: files and code names, and the dispatch to the other concepts.

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
from typing import TYPE_CHECKING

from rolling_graph.capture.entities import paths_in
from rolling_graph.capture.tools import EDIT_TOOLS, FAILURE_IS_NEWS, MULTI_EDIT, READ, TOOLS, WRITE
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
    other_names,
    pattern_names,
    quoted_names,
)
from rolling_graph.probe.proposal import FoldState, Proposal, event_seq

if TYPE_CHECKING:
    from rolling_graph.core.types import PendingEvent, ToolData

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


def edit_pairs(tool: str, data: ToolData) -> list[tuple[str, str]]:
    """``(old code, new code)`` of each change an edit's ``data`` holds (the heads the hook kept)."""
    if tool == MULTI_EDIT:
        return [(e["old"], e["new"]) for e in data.get("edits", [])]
    return [(data.get("old", ""), data.get("new", ""))]


def defined_in(tool: str, data: ToolData) -> list[str]:
    """The names an edit's or a write's new code defines (functions, types, modules)."""
    return [n for _, new in edit_pairs(tool, data) for n in defined_names(whole_text(new), 15)]


def edit_names(tool: str, data: ToolData) -> list[str]:
    """The names an edit touched: what it defines, then code names it adds or removes."""
    names: list[str] = []
    for old, new in edit_pairs(tool, data):
        old, new = whole_text(old), whole_text(new)
        if tool == WRITE:
            names += defined_names(new, 10) + frequent_names(new, 10)
            continue
        # What the edit defines or adds, and the definitions it changes inside; a name it
        # only removes is gone from the code and is no name to carry on.
        names += defined_names(new, 4) + [d for d in defined_names(old, 4) if d in new]
        names += [n for n in code_names(new) if n not in old]
        names += code_names(new, 4)
    return list(dict.fromkeys(names))


def _files(p: Proposal, event: PendingEvent, state: FoldState, tool: str, data: ToolData, seq: int | None) -> None:
    counter = "writes" if tool == WRITE else "edits" if tool in EDIT_TOOLS else "reads"
    for raw in event["paths"][:3]:
        path = p.path(raw)
        fid = p.file(path) if path else None
        if not fid or not path:
            continue
        code = path.rpartition(".")[2].lower() not in NO_NAMES
        names: list[str] = []
        whole: list[str] = []
        if counter != "reads" and code:  # the whole input's names (from the transcript) first
            whole = data.get("names", [])
            names = list(dict.fromkeys(edit_names(tool, data) + whole))
        p.set(fid, **{counter: int(p.fact(fid, counter) or 0) + 1, "last_op": counter[:-1] if counter != "reads" else "read"})
        p.by(fid, "tool", seq)
        if counter == "reads":
            continue
        if names:
            p.set(fid, what=_join_names(names, p.fact(fid, "what")))
        p.edge(state.topic, "edits", fid, 0.6)
        state.edited.append(fid)
        cap = NAMES_PER_WRITE if tool == WRITE or len(whole) > 20 else NAMES_PER_EDIT  # a large edit is a rewrite
        defined = set(defined_in(tool, data))
        # A private helper (``_fill``) is among them only where the code defines or calls it.
        for i, name in enumerate([n for n in names if is_code_name(n) or is_private_helper(n)][:cap]):
            sid = p.node(name, "technical", "symbol")
            p.by(sid, "tool", seq)
            p.set(sid, **{"in": fid})  # its owner in the block's map of names: the file it was last edited in
            if name in defined and seq is not None:
                p.set(sid, **{"def": seq})
            if i < EDGES_PER_EDIT:  # the names the edit is about; the rest are only named
                p.edge(state.topic, "edits", sid, 0.5)


def _search(p: Proposal, event: PendingEvent, state: FoldState, tool: str, data: ToolData, seq: int | None) -> None:
    pattern = data.get("pattern", "")
    if tool == "Grep" and data.get("hits") != 0:  # a search that finds nothing names nothing in the code
        for name in pattern_names(pattern)[:3]:
            p.by(p.node(name, "technical", "symbol"), "tool", seq)
    elif looks_like_file(pattern) and not any(c in pattern for c in "*?[{"):
        path = p.path(pattern, event.get("cwd"))
        p.by(p.file(path) if path else None, "tool", seq)
    for raw in event["paths"][:1]:
        path = p.path(raw)
        if path and looks_like_file(path):
            p.by(p.file(path), "tool", seq)


#: Most new code names one call of another tool (an MCP server's, WebSearch) adds, as a search does.
NAMES_PER_OTHER = 3


def _other(p: Proposal, event: PendingEvent, data: ToolData, seq: int | None) -> None:
    """A tool without a class of its own: the files its input names (the LSP tool's
    ``filePath``, an MCP server's ``relative_path``), touched like a search's; the first code
    names of its values (a symbol looked up, a query's API names)."""
    for raw in event["paths"][:3]:  # (already relative to the root: the gate settled them)
        path = p.path(raw)
        if path and looks_like_file(path):
            p.by(p.file(path), "tool", seq)
    for name in other_names(data.get("values", []), NAMES_PER_OTHER):
        p.by(p.node(name, "technical", "symbol"), "tool", seq)


def fold_tool(p: Proposal, event: PendingEvent, state: FoldState) -> None:
    """Fold one tool event into the proposal."""
    tool = event["tool"] or ""
    data = event.get("data", {})
    seq = event_seq(event)
    if "<tool_use_error>" in event["text"][:600] or (event["error"] and tool not in FAILURE_IS_NEWS):
        # a call the harness refused, the user turned down or that failed: nothing happened
        # (a declined edit changed nothing, a failed read read nothing, a declined plan is none)
        return
    if tool in EDIT_TOOLS or tool == READ:
        _files(p, event, state, tool, data, seq)
    elif tool in ("Grep", "Glob"):
        _search(p, event, state, tool, data, seq)
    elif tool == "Bash":
        commands.fold_bash(p, event, state, seq)
    elif tool == "TodoWrite":
        tasks.fold_todos(p, state, data, seq, subagent=event.get("subagent", False))
    elif tool in ("TaskCreate", "TaskUpdate"):
        tasks.fold_task_tools(p, state, tool, data, seq)
    elif tool == "AskUserQuestion":
        tasks.fold_answers(p, state, data, seq)
    elif tool == "ExitPlanMode":
        tasks.fold_plan(p, state, data, seq)
    elif tool in ("Task", "Agent"):
        _brief(p, data, seq)
    elif tool not in TOOLS:  # an MCP server's, the LSP tool, WebSearch: the files and names its input says
        _other(p, event, data, seq)
    elif tool in ("TaskOutput", "BashOutput"):
        status = data.get("status", "")
        if status in ("completed", "failed", "killed"):
            exit_code = data.get("exit")
            failed = status != "completed" or (exit_code is not None and exit_code != 0)
            commands.background_done(p, data.get("ref", ""), data.get("out", ""), failed, seq, state, final=True)


def _brief(p: Proposal, data: ToolData, seq: int | None) -> None:
    """What the assistant asked a subagent to look at: the code names it quotes, and the
    files it lists that the session already holds. A file only a subagent was sent to read
    gets no node of its own: measured on ../shared/corpus, such files cost the next
    session's block room (the warm graph carries them) and brought little back."""
    text = f"{data.get('desc', '')}\n{data.get('prompt', '')}"
    for raw in paths_in(text)[:FILES_PER_BRIEF]:
        path = p.path(raw)
        if path and p.kind_of(file_id(path)) == "file":
            p.by(file_id(path), "assistant", seq)
    for name in quoted_names(text, NAMES_PER_BRIEF):  # (a code name is never a file's name)
        p.by(p.node(name, "technical", "symbol"), "assistant", seq)
