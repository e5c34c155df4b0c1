"""Mentions: every name an event uses touches the node that holds it.

The extractors (:mod:`.offline_tools`, :mod:`.offline`) add what an event is *about* — the
file an edit changed, the names it defines, the command a run tested — each under a cap.
But a session keeps naming what it works on: an edit's ``old_string`` quotes the function
it changes, a test command names the test file, a Write uses the helpers it calls. Without
those mentions a node's ``seq`` (last touch) and counts say when it was *added*, not when
it was last *used*, and the restore block ranks a name the agent used a minute ago below
one it read an hour ago.

A file name the new code quotes (a test's ``"lib/foo.ex"``, a fixture it loads) is such a
name too, unless it is a project file's (that file is touched by its path, where an event
opens, runs or edits it) or a stylesheet's, a page's or a text file's.

So, after the extractors, each event's names are matched against the graph's code names
and files (a file by its name or its path) and every node an event names gets that event
as its ``seq`` (when later) and one more ``mentions``. An edit or write also adds, under a
cap, code names its new code uses that the graph does not hold yet (a rewrite's helpers:
what the agent will call next).

A code name only the code an edit replaces has is touched too (the edit quoted it; the
function it called may well stay), and gets that event as its ``removed`` fact
(:func:`rolling_graph.render.rank.is_removed`) until a later event uses it again: the restore
block leaves out such a name when it belongs to a superseded decision. A directory of a
path an event names that is a code name itself (``spotter_web`` in
``lib/spotter_web/live/x.ex``: the package the file belongs to) is touched too, and an edit
or write of the project's code adds it: nearly every input of a session names it.

Names come only from what the event's input says: tool inputs, prompts, commands,
patterns — never JSON keys, and never a tool's output.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from rolling_graph.capture.tools import EDIT_TOOLS, WRITE
from rolling_graph.core.filepaths import file_id, looks_like_file
from rolling_graph.core.ids import name_id
from rolling_graph.probe.code_names import (
    NO_NAMES,
    code_names,
    file_names,
    is_code_name,
    module_paths,
    other_names,
    pattern_names,
)
from rolling_graph.probe.offline_tools import edit_pairs, whole_text
from rolling_graph.probe.proposal import Proposal, event_seq

if TYPE_CHECKING:
    from collections.abc import Callable

    from rolling_graph.core.types import PendingEvent

#: Most names of one event matched against the graph.
NAMES_PER_EVENT = 200
#: Most new code names one edit or write adds from its mentions (beyond what
#: :mod:`.offline_tools` already added): the names the code it changes uses, the replaced
#: code's included (what the agent was reading there; docs/measurements.md, "Issue 34"). A
#: probe adds at most ``MAX_NODES_PER_PROBE`` nodes in all (:mod:`.proposal`).
NEW_PER_EDIT = 60
NEW_PER_WRITE = 90
#: Tools whose event text opens with their input as plain text (rolling_graph.capture.events).
_LINE_TOOLS = frozenset({"Bash", "Read", "Glob", "LS"})


def _input_line(text: str) -> str:
    """The input part of a tool event's text: its first line (``$ mix test …``,
    ``Read lib/app.ex``); the rest is the tool's output."""
    return text.split("\n", 1)[0]


def event_names(event: PendingEvent, typed: Callable[[str], str] = str) -> tuple[list[str], set[str]]:
    """``(code names, new-code names)`` an event's input uses; the second is what an
    edit's new code holds (candidates for new nodes), empty for anything else. ``typed``:
    a prompt's text as the user typed it (system reminders and markers removed)."""
    kind = event["event"]
    text = event["text"]
    data = event.get("data", {})
    if kind == "PostToolUse":  # (a failed call's event too: rolling_graph.capture.events)
        tool = event["tool"] or ""
        if tool in EDIT_TOOLS:
            whole = data.get("mentions", [])
            if whole:  # the transcript's whole input, read by the probe
                new = [n for n in whole if not n.startswith("-")]
                gone = [n[1:] for n in whole if n.startswith("-")]
            else:  # no transcript: the heads of the new and the replaced code the hook kept
                pairs = edit_pairs(tool, data)
                new_code = "\n".join(whole_text(new) for _, new in pairs)
                old_code = "\n".join(whole_text(old) for old, _ in pairs)
                new = module_paths(new_code) + code_names(new_code, NAMES_PER_EVENT) + file_names(new_code)
                kept = set(new)
                gone = [n for n in code_names(old_code, NAMES_PER_EVENT) if n not in kept]
            return list(dict.fromkeys(new + gone))[:NAMES_PER_EVENT], set(new)
        if tool == "Grep":
            pattern = data.get("pattern") or _input_line(text)
            return pattern_names(pattern) + module_paths(pattern.replace("\\.", ".")), set()
        if tool == "ExitPlanMode" and data.get("plan"):  # the plan the user approved names what comes next
            return code_names(data["plan"], NAMES_PER_EVENT), set()
        if tool == "Bash" and data.get("cmd"):
            return code_names(data["cmd"], NAMES_PER_EVENT) + module_paths(data["cmd"]), set()
        if tool in ("Task", "Agent"):  # what the assistant asked a subagent to look at
            return code_names(f"{data.get('desc', '')}\n{data.get('prompt', '')}", NAMES_PER_EVENT), set()
        if tool in _LINE_TOOLS:  # ``$ mix test test/x_test.exs``, ``Glob lib/**/*.ex``
            return code_names(_input_line(text), NAMES_PER_EVENT), set()
        if data.get("values"):  # a tool without a class (MCP, WebSearch): its input's values, never its keys
            return other_names(data["values"], NAMES_PER_EVENT), set()
        return [], set()  # other tools' text is their input as JSON: keys are no names
    if kind == "UserPromptSubmit":
        return code_names(typed(text), NAMES_PER_EVENT), set()
    return [], set()


def fold_mentions(p: Proposal, events: list[PendingEvent], typed: Callable[[str], str] = str) -> None:
    """Touch every node each event names (``seq``, ``mentions``); add new code names an
    edit's code uses (new or replaced), under :data:`NEW_PER_EDIT` / :data:`NEW_PER_WRITE`;
    a code name an edit or write of one project file uses gets that file as its owner
    (``facts.in``)."""
    files = _files_by_name(p)
    for event in events:
        seq = event_seq(event)
        names, new = event_names(event, typed)
        touched: set[str] = set()
        paths = [path for raw in event["paths"][:6] if (path := p.path(raw))]
        # New names only from the project's code: not from a stylesheet's or a page's words,
        # nor from the harness's own files (a plan file: its path is no project path).
        code = bool(paths) and all(path.rpartition(".")[2].lower() not in NO_NAMES for path in paths)
        cap = 0 if not code else NEW_PER_WRITE if event["tool"] == WRITE else NEW_PER_EDIT
        edit = event["tool"] in EDIT_TOOLS
        owner = file_id(paths[0]) if edit and code and len(paths) == 1 and p.kind_of(file_id(paths[0])) == "file" else None
        for path in paths:
            if p.kind_of(file_id(path)) == "file":
                touched.add(file_id(path))
            touched.update(_package_dirs(p, path, create=edit and code))
        for name in names:
            if looks_like_file(name) and (name.lower() in files or name.rpartition(".")[2].lower() in NO_NAMES):
                continue  # a quoted project file, a page's or a stylesheet's: no name of its own
            nid = name_id(name)
            if not p.exists(nid) and cap > 0:
                added = p.node(name, "technical", "symbol", activate=False)
                if added:
                    cap -= 1
            if not p.exists(nid) or p.kind_of(nid) != "symbol":
                continue
            touched.add(nid)
            if owner:  # its owner in the block's map of names: the file whose edit last used it
                p.set(nid, **{"in": owner})
            if edit and name not in new and seq is not None:  # quoted, and taken out here
                p.set(nid, removed=seq)
        for name in _file_names(event, typed):
            touched.update(files.get(name, ()))
        for nid in touched:
            p.by(nid, "tool", seq)
            p.set(nid, mentions=int(p.fact(nid, "mentions") or 0) + 1)


def _package_dirs(p: Proposal, path: str, create: bool) -> list[str]:
    """The code-name nodes of ``path``'s directories that are code names themselves
    (``lib/spotter_web/live/x.ex`` → ``spotter_web``: the package the file belongs to),
    added when ``create`` (an edit or write of the project's code) and missing."""
    ids = []
    for part in path.split("/")[:-1]:
        if not is_code_name(part):
            continue
        nid = name_id(part)
        if create and not p.exists(nid):
            p.node(part, "technical", "symbol", activate=False)
        if p.exists(nid) and p.kind_of(nid) == "symbol":
            ids.append(nid)
    return ids


def _file_names(event: PendingEvent, typed: Callable[[str], str]) -> list[str]:
    """File names (lower-cased) the input part of an event names: ``mix test
    test/x_test.exs`` names ``x_test.exs``."""
    text = event["text"]
    if event["event"] == "UserPromptSubmit":
        line = typed(text)
    elif event["event"] == "PostToolUse" and event["tool"] in _LINE_TOOLS:
        line = _input_line(text)
    else:
        return []
    return [w.strip(".,;:()'\"`").rpartition("/")[2].lower() for w in line.split() if "." in w]


def _files_by_name(p: Proposal) -> dict[str, list[str]]:
    """File name (lower-cased) → the file nodes with that name."""
    out_: dict[str, list[str]] = {}
    for nid in p.of_kind("file"):
        path = str(p.fact(nid, "path") or p.label_of(nid))
        out_.setdefault(path.rpartition("/")[2].lower(), []).append(nid)
    return out_
