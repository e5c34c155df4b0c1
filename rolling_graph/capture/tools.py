"""A tool call, typed by its tool: what it says as text, the paths it names, its structured data.

:func:`parse_tool` reads one call (name, input, result) into its tool's class — :class:`Read`,
:class:`Edit`, :class:`MultiEdit`, :class:`Write`, :class:`NotebookEdit`, :class:`Bash`,
:class:`Search` (Grep, Glob), :class:`LS`, :class:`Task` (Task, Agent), :class:`TodoWrite`,
:class:`TaskCreate`, :class:`TaskUpdate`, :class:`AskUserQuestion`, :class:`ExitPlanMode`,
:class:`TaskOutput` (TaskOutput, BashOutput), or :class:`Other` for any other tool (an MCP
server's, the LSP tool, WebSearch) — with its :class:`Result`. :data:`TOOLS` is the one switch over tool names.

What a call says is derived from its class, in one place each: the event's text
(:meth:`ToolCall.text`), its paths (:attr:`ToolCall.paths`) and its structured ``data``
(:meth:`ToolCall.data`, shaped as :class:`rolling_graph.core.types.ToolData`): an Edit's old
and new strings, a TodoWrite's list, a TaskUpdate's status, the answers to an
AskUserQuestion, a background task's id and exit code — each cut to a bound. Shapes follow
Claude Code's ``sdk-tools.d.ts`` and the transcripts' ``toolUseResult``. The probe reads an
edit's whole input from the transcript through the same classes (:meth:`FileEdit.new_code`,
:meth:`FileEdit.old_code`).

Plain classes with ``__slots__`` and string operations: this runs in the hook on every tool
result (no ``re``, no ``json``, no ``dataclasses``, no ``typing`` at run time).
"""

from __future__ import annotations

from rolling_graph.capture.text import ERROR_WORDS, TEXT_MAX, as_text
from rolling_graph.core.model import TASK_STATUSES

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, ClassVar

    from rolling_graph.core.types import EditPair, ToolData

TODOS_MAX = 20
QUESTIONS_MAX = 4
EDITS_MAX = 6
#: The keys of a tool's input that name a file: the event's paths, whatever the tool.
PATH_KEYS = ("file_path", "path", "notebook_path")

#: The tools that change a file, and the one that reads one (one spelling each: everything
#: else names them by these).
EDIT, MULTI_EDIT, WRITE, NOTEBOOK_EDIT = "Edit", "MultiEdit", "Write", "NotebookEdit"
READ = "Read"


def _s(value: Any, limit: int) -> str:
    return value[:limit] if isinstance(value, str) else ""


def _cut(value: str | None, limit: int) -> str:
    """Code text within ``limit``, ending in ``…`` when it was cut (so the probe never
    takes the half of a name at the cut for a name)."""
    if value is None:
        return ""
    return value if len(value) <= limit else value[:limit] + "…"


def _d(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _str(value: Any) -> str | None:
    return value if isinstance(value, str) else None


def _count(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


# -- the result of a call ---------------------------------------------------------------------
class Result:
    """A tool's result: its output and error text, and whether it reports a failure.

    ``failed``: an error string (as transcripts record a failed call, ``"Error: Exit code
    2\\n…"``), or a result flagged ``is_error`` / ``interrupted``. ``flagged``: the flags
    alone. ``fields``: the result's own fields (``{}`` unless it is an object).
    """

    __slots__ = ("fields", "is_object", "output", "error", "flagged", "failed")

    def __init__(self, response: Any) -> None:
        self.is_object = isinstance(response, dict)
        self.fields = _d(response)
        self.output = self.error = ""
        self.flagged = self.failed = False
        if isinstance(response, dict):
            self.flagged = self.failed = bool(response.get("is_error")) or bool(response.get("interrupted"))
            self.output = as_text(response.get("stdout") or response.get("content") or response.get("output") or "", TEXT_MAX)
            self.error = as_text(response.get("stderr") or response.get("error") or "", TEXT_MAX)
        elif response is not None:
            self.output = as_text(response, TEXT_MAX)
            if isinstance(response, str):
                self.failed = response.lstrip()[:40].startswith(("Error: ", "Exit code ", "<tool_use_error>"))

    def text(self) -> str:
        """Output and error text together."""
        if self.error:
            return f"{self.output}\n{self.error}" if self.output else self.error
        return self.output


# -- the calls ----------------------------------------------------------------------------------
class ToolCall:
    """A tool call: its name, the paths its input names, its result; the base of every tool's
    class and the class of a tool this module does not know (its input is shown as JSON)."""

    __slots__ = ("name", "paths", "result", "line")
    #: Whether the event's text shows the tool's output (an edit's or a read's does not).
    shows_output: ClassVar[bool] = True
    #: Whether the output is a process's own report, so that error words in it mean the call
    #: failed (a shell command's, a background run's). Other tools' output is what they found
    #: or wrote (a grep's matching lines, a written file, a web page, a subagent's prose),
    #: where ``error:`` is just text: their failures come flagged, or as an error string.
    output_reports: ClassVar[bool] = False

    def __init__(self, name: str, tool_input: Any, response: Any) -> None:
        inp = _d(tool_input)
        self.name = name
        self.paths = [v for v in (inp.get(k) for k in PATH_KEYS) if isinstance(v, str)]
        self.result = Result(response)
        #: The first line of the event's text: how the input reads.
        self.line = self._line(inp, tool_input)
        self._parse(inp, self.result.fields)

    def _line(self, inp: dict[str, Any], tool_input: Any) -> str:
        return f"{self.name} {as_text(tool_input, 600)[:600]}"

    def _parse(self, inp: dict[str, Any], response: dict[str, Any]) -> None:
        """Read the tool's own fields from its input and its result (an object, or ``{}``)."""

    def _body(self) -> str:
        return ""

    def output(self) -> str:
        """The output the event's error flag reads."""
        return self.result.text()

    def text(self) -> tuple[str, bool]:
        """The event's text (the input line, an edit's new code, the output where shown),
        and whether the output reports an error."""
        out = self.output()
        parts = [self.line, self._body()]
        if out and self.shows_output:
            parts.append(out)
        text = "\n".join(p for p in parts if p)
        return text, self.result.failed or self._output_says_failed(out)

    def _output_says_failed(self, out: str) -> bool:
        """Whether the output, read for error words, reports a failure the flags do not."""
        if not self.output_reports:
            return False
        out = "\n" + out
        return any(word in out for word in ERROR_WORDS)

    def _fields(self) -> ToolData:
        return {}

    def data(self) -> ToolData:
        """The bounded, structured fields of the call (empty when there are none)."""
        data = self._fields()
        if self.result.failed:
            data["failed"] = True
        kept: ToolData = {k: v for k, v in data.items() if v not in ("", [], None)}  # type: ignore[assignment]
        return kept


class _Target(ToolCall):
    """A tool whose input line is its target: a file, a pattern or a directory."""

    __slots__ = ()

    def _line(self, inp: dict[str, Any], tool_input: Any) -> str:
        return f"{self.name} {as_text(inp.get('file_path') or inp.get('pattern') or inp.get('path'), 300)}"


class Read(_Target):
    """A file read: its path is the event; its contents are not (unless the read failed)."""

    __slots__ = ()
    shows_output = False

    def output(self) -> str:
        return "" if self.result.is_object and not self.result.flagged else self.result.text()


class LS(_Target):
    __slots__ = ()


class Search(_Target):
    """Grep and Glob: the pattern, the glob, and how many hits the result reports."""

    __slots__ = ("pattern", "glob", "hits")

    def _parse(self, inp: dict[str, Any], response: dict[str, Any]) -> None:
        self.pattern = _s(inp.get("pattern"), 200)
        self.glob = _s(inp.get("glob"), 100)
        files = response.get("mode") in (None, "files_with_matches")
        self.hits = _count(response.get("numFiles") if files else (response.get("numMatches") or response.get("numLines")))

    def _fields(self) -> ToolData:
        data: ToolData = {"pattern": self.pattern, "glob": self.glob}
        if self.hits is not None:
            data["hits"] = self.hits
        return data


def exit_may_hide_failure(command: str) -> bool:
    """Whether a shell line's exit status may not be its work's: ``go test ./... | tail -5``
    exits as ``tail`` does, ``make; echo done`` as ``echo``, a script as its last line. A
    command that exited 0 otherwise succeeded, whatever words its output holds (a ``git diff``
    of code that says ``error:``): Claude Code reports a non-zero exit as a failed call."""
    return "|" in command or ";" in command or "\n" in command.strip()


#: Commands whose output is what they show (a file, a diff, a log, matches), never a report of
#: their own: a line made of these alone failed only if its exit says so (``git show …:x.jsonl |
#: grep Edit | head`` printed a transcript's ``Error:``).
_SHOWS = frozenset(("cat", "head", "tail", "less", "more", "sed", "awk", "jq", "yq", "grep", "egrep", "rg", "cut", "sort",
                    "uniq", "wc", "tr", "echo", "printf", "ls", "find", "tree", "cd", "diff", "column", "nl", "xxd"))
_GIT_SHOWS = frozenset(("show", "diff", "log", "blame", "cat-file", "grep", "status", "ls-files", "ls-tree"))
_GH_SHOWS = frozenset(("diff", "view", "list"))


def _unquoted(command: str) -> str:
    """``command`` with each quoted span (``'a|b'``, ``"x; y"``) as one word ``Q``: what a
    pattern or a message holds separates no commands."""
    out: list[str] = []
    quote = ""
    for c in command:
        if quote:
            if c == quote:
                quote = ""
        elif c in "'\"":
            quote = c
            out.append("Q")
        else:
            out.append(c)
    return "".join(out)


def _shows_only(command: str) -> bool:
    """Whether every command of a shell line only shows something (:data:`_SHOWS`, ``git
    show``, ``gh pr diff``); no ``re``: the hook reads it for a command behind a pipe."""
    command = _unquoted(command)
    for sep in ("&&", "||", "|", ";", "\n"):
        command = command.replace(sep, "\0")
    for part in command.split("\0"):
        words = [w for w in part.split() if "=" not in w or w.startswith(("-", "'", '"'))]  # FOO=1 cmd
        if not words:
            continue
        name = words[0].rpartition("/")[2].lstrip("(")
        if name == "git":
            rest = words[1:]
            while rest and rest[0].startswith("-"):  # git -C <dir> -c <key=value> --no-pager show
                rest = rest[2:] if rest[0] in ("-C", "-c") else rest[1:]
            if not rest or rest[0] not in _GIT_SHOWS:
                return False
        elif name == "gh":
            if len(words) < 3 or words[2] not in _GH_SHOWS:
                return False
        elif name not in _SHOWS:
            return False
    return True


class Bash(ToolCall):
    """A shell command: the command line, its description, a background run's task id."""

    __slots__ = ("command", "description", "background")
    output_reports = True

    def _output_says_failed(self, out: str) -> bool:
        command = self.command
        return exit_may_hide_failure(command) and super()._output_says_failed(out) and not _shows_only(command)

    def _line(self, inp: dict[str, Any], tool_input: Any) -> str:
        return f"$ {as_text(inp.get('command'), 300)}"

    def _parse(self, inp: dict[str, Any], response: dict[str, Any]) -> None:
        self.command = _s(inp.get("command"), 1200)
        self.description = _s(inp.get("description"), 120)
        task = response.get("backgroundTaskId")
        #: A background run's task id (``"?"`` when it ran in the background without one).
        self.background = (_s(task, 40) or "?") if inp.get("run_in_background") is True or task else None

    def _fields(self) -> ToolData:
        data: ToolData = {"cmd": self.command, "desc": self.description}
        if self.background is not None:
            data["bg"] = self.background
        return data


class FileEdit(ToolCall):
    """A tool that changes a file (Edit, MultiEdit, Write, NotebookEdit): the file by the
    tool's own key and each change as ``(old code, new code)`` (``None``: not given as text).
    The event's text shows the new code's head, never the tool's output."""

    __slots__ = ("file", "changes", "body")
    shows_output = False
    #: The input key of the file.
    FILE_KEY: ClassVar[str] = "file_path"
    #: Most characters of each change's code the whole input gives (:meth:`new_code`).
    WHOLE: ClassVar[int] = 200_000
    #: Whether the call replaces code (an edit) rather than writing a file anew.
    REPLACES: ClassVar[bool] = False

    def _line(self, inp: dict[str, Any], tool_input: Any) -> str:
        return f"{self.name} {as_text(inp.get('file_path') or inp.get('notebook_path'), 300)}"

    def _parse(self, inp: dict[str, Any], response: dict[str, Any]) -> None:
        self.body = as_text(inp.get("new_string") or inp.get("content") or inp.get("new_source") or "", 600)[:600]
        self.file = _str(inp.get(self.FILE_KEY))
        self.changes = self._changes(inp)

    def _changes(self, inp: dict[str, Any]) -> list[tuple[str | None, str | None]]:
        return []

    def _body(self) -> str:
        return self.body

    def new_code(self) -> str:
        """The whole new code of the call (each change within :data:`WHOLE` characters)."""
        return "\n".join(new[: self.WHOLE] for _, new in self.changes if new is not None)

    def old_code(self) -> str:
        """The whole code the call replaces (``""`` for a tool that writes a file anew)."""
        return "\n".join(old[: self.WHOLE] for old, _ in self.changes if old is not None)


class Edit(FileEdit):
    __slots__ = ()
    REPLACES = True

    def _changes(self, inp: dict[str, Any]) -> list[tuple[str | None, str | None]]:
        return [(_str(inp.get("old_string")), _str(inp.get("new_string")))]

    def _fields(self) -> ToolData:
        old, new = self.changes[0]
        return {"old": _cut(old, 600), "new": _cut(new, 600)}


class MultiEdit(FileEdit):
    __slots__ = ()
    REPLACES = True
    #: Most edits of one call read (the probe reads this many from the transcript).
    EDITS_READ = 50
    WHOLE = 50_000

    def _changes(self, inp: dict[str, Any]) -> list[tuple[str | None, str | None]]:
        edits = inp.get("edits")
        return [(_str(_d(e).get("old_string")), _str(_d(e).get("new_string"))) for e in (edits if isinstance(edits, list) else [])[: self.EDITS_READ]]

    def _fields(self) -> ToolData:
        edits: list[EditPair] = [{"old": _cut(old, 300), "new": _cut(new, 300)} for old, new in self.changes[:EDITS_MAX]]
        return {"edits": edits}


class Write(FileEdit):
    __slots__ = ()

    def _changes(self, inp: dict[str, Any]) -> list[tuple[str | None, str | None]]:
        return [(None, _str(inp.get("content")))]

    def _fields(self) -> ToolData:
        return {"new": _cut(self.changes[0][1], 1500)}


class NotebookEdit(FileEdit):
    __slots__ = ()
    FILE_KEY = "notebook_path"

    def _changes(self, inp: dict[str, Any]) -> list[tuple[str | None, str | None]]:
        return [(None, _str(inp.get("new_source")))]

    def _fields(self) -> ToolData:
        return {"new": _cut(self.changes[0][1], 600)}


class TodoWrite(ToolCall):
    """The task list as written: ``[content, status]`` items (or as the result has it)."""

    __slots__ = ("todos",)

    def _parse(self, inp: dict[str, Any], response: dict[str, Any]) -> None:
        self.todos = _todos(inp.get("todos")) or _todos(response.get("newTodos"))

    def _fields(self) -> ToolData:
        return {"todos": self.todos}


def _todos(value: Any) -> list[list[str]]:
    out = []
    for item in value if isinstance(value, list) else []:
        item = _d(item)
        content, status = _s(item.get("content"), 160), item.get("status")
        if content and status in TASK_STATUSES:
            out.append([content, status])
        if len(out) >= TODOS_MAX:
            break
    return out


class TaskCreate(ToolCall):
    __slots__ = ("subject", "ref")

    def _parse(self, inp: dict[str, Any], response: dict[str, Any]) -> None:
        self.subject = _s(inp.get("subject"), 160)
        self.ref = _s(_d(response.get("task")).get("id"), 40)

    def _fields(self) -> ToolData:
        return {"subject": self.subject, "ref": self.ref}


class TaskUpdate(ToolCall):
    __slots__ = ("ref", "status", "subject")

    def _parse(self, inp: dict[str, Any], response: dict[str, Any]) -> None:
        self.ref = _s(inp.get("taskId"), 40)
        self.status = _s(inp.get("status"), 20)
        self.subject = _s(inp.get("subject"), 160)

    def _fields(self) -> ToolData:
        return {"ref": self.ref, "status": self.status, "subject": self.subject}


class AskUserQuestion(ToolCall):
    """The user's answers to Claude's questions: ``[header, question, answer]`` each."""

    __slots__ = ("answers",)

    def _parse(self, inp: dict[str, Any], response: dict[str, Any]) -> None:
        answers = _d(response.get("answers")) or _d(inp.get("answers"))
        questions = response.get("questions") if isinstance(response.get("questions"), list) else inp.get("questions")
        headers = {}
        for q in questions if isinstance(questions, list) else []:
            q = _d(q)
            if isinstance(q.get("question"), str):
                headers[q["question"]] = _s(q.get("header"), 40)
        self.answers: list[list[str]] = []
        for question, answer in answers.items():
            if isinstance(question, str) and isinstance(answer, str) and answer.strip():
                self.answers.append([headers.get(question, ""), question[:240], answer[:240]])
            if len(self.answers) >= QUESTIONS_MAX:
                break

    def _fields(self) -> ToolData:
        return {"qa": self.answers}


class ExitPlanMode(ToolCall):
    __slots__ = ("plan",)

    def _parse(self, inp: dict[str, Any], response: dict[str, Any]) -> None:
        self.plan = _s(inp.get("plan"), 2000)

    def _fields(self) -> ToolData:
        return {"plan": self.plan}


class Task(ToolCall):
    """A subagent's brief (Task, Agent)."""

    __slots__ = ("description", "agent", "prompt")

    def _parse(self, inp: dict[str, Any], response: dict[str, Any]) -> None:
        self.description = _s(inp.get("description"), 120)
        self.agent = _s(inp.get("subagent_type"), 40)
        self.prompt = _s(inp.get("prompt"), 1200)

    def _fields(self) -> ToolData:
        return {"desc": self.description, "agent": self.agent, "prompt": self.prompt}


class TaskOutput(ToolCall):
    """A background task's output (TaskOutput, BashOutput): its id, status, exit code."""

    __slots__ = ("ref", "status", "out", "description", "exit")
    output_reports = True

    def _parse(self, inp: dict[str, Any], response: dict[str, Any]) -> None:
        task = _d(response.get("task"))
        self.ref = _s(inp.get("task_id") or inp.get("bash_id") or task.get("task_id"), 40)
        self.status = _s(task.get("status"), 20)
        self.out = _s(task.get("output"), 100_000)[-1500:]
        self.description = _s(task.get("description"), 120)
        self.exit = _count(task.get("exitCode"))

    def _fields(self) -> ToolData:
        data: ToolData = {"ref": self.ref, "status": self.status, "out": self.out, "desc": self.description}
        if self.exit is not None:
            data["exit"] = self.exit
        return data


#: Keys of another tool's input that name a file: an MCP server's (``relative_path``,
#: ``uri``), the LSP tool's (``filePath``).
_OTHER_PATH_KEYS = frozenset((*PATH_KEYS, "filePath", "relative_path", "relativePath", "file", "filename", "fileName", "uri"))
#: Keys of another tool's input whose value picks how it runs (``goToDefinition``), never a name.
_OTHER_MODE_KEYS = frozenset(("operation", "action", "mode", "method", "type", "kind", "format", "output_mode", "status",
                              "model", "language", "subagent_type", "command"))
#: Most string values kept of another tool's input, and each one's length.
VALUES_MAX, VALUE_MAX = 8, 300


class Other(ToolCall):
    """A tool this module has no class of its own for: an MCP server's, the LSP tool,
    WebSearch, WebFetch. Its paths are the input's values under a key that names a file
    (``file://`` dropped); its string values, bounded, are what the probe reads names from,
    as from any other input (never its keys)."""

    __slots__ = ("values",)

    def _parse(self, inp: dict[str, Any], response: dict[str, Any]) -> None:
        paths = [v.removeprefix("file://") for k, v in inp.items() if k in _OTHER_PATH_KEYS and isinstance(v, str) and v.strip()]
        paths = [p for p in paths if "://" not in p]  # a web page's address is no file of the project
        self.paths = list(dict.fromkeys(paths))[:3]
        values: list[str] = []
        stack: list[Any] = [v for k, v in inp.items() if k not in _OTHER_MODE_KEYS]
        while stack and len(values) < VALUES_MAX:  # breadth first: the top level's values first
            item = stack.pop(0)
            if isinstance(item, str):
                if item.strip():
                    values.append(_cut(item, VALUE_MAX))
            elif isinstance(item, dict):
                stack.extend(list(item.values())[:20])
            elif isinstance(item, list):
                stack.extend(item[:20])
        self.values = values

    def _fields(self) -> ToolData:
        return {"values": self.values}


#: Tool name → its class: the one switch over tools. Any other tool is :class:`Other`.
TOOLS: dict[str, type[ToolCall]] = {
    READ: Read, "LS": LS, "Grep": Search, "Glob": Search, "Bash": Bash,
    EDIT: Edit, MULTI_EDIT: MultiEdit, WRITE: Write, NOTEBOOK_EDIT: NotebookEdit,
    "TodoWrite": TodoWrite, "TaskCreate": TaskCreate, "TaskUpdate": TaskUpdate, "AskUserQuestion": AskUserQuestion,
    "ExitPlanMode": ExitPlanMode, "Task": Task, "Agent": Task, "TaskOutput": TaskOutput, "BashOutput": TaskOutput,
}
#: The tools that change a file.
EDIT_TOOLS = frozenset(name for name, cls in TOOLS.items() if issubclass(cls, FileEdit))
#: The tools whose failure is itself what happened (a command that failed, a background run
#: that ended badly): their output is their own report. Any other tool's failed call did
#: nothing (a declined edit, a read of a missing file): the gate does not probe for it and
#: the probe folds nothing of it.
FAILURE_IS_NEWS = frozenset(name for name, cls in TOOLS.items() if cls.output_reports)


def parse_tool(name: str, tool_input: Any, response: Any = None) -> ToolCall:
    """One tool call, typed: its tool's class (:data:`TOOLS`), or :class:`Other`."""
    return TOOLS.get(name, Other)(name, tool_input, response)

