"""A failure's line and its id: one rule for the gate and the probe.

:func:`error_line` is the first *meaningful* line of a failed tool's output (the exception,
the failing test, the diagnostic at a place; never ``Error: Exit code 2``), and
:func:`error_id` the node id of that line. The gate (:func:`rolling_graph.capture.gate.error_signature`)
asks whether a failure is news by the same id the probe gives its error node
(:func:`rolling_graph.probe.offline_commands.error_node`), so the same test failing again is
known for what it is, and two different failures are two.

The patterns compile on first use (:mod:`rolling_graph.core.lazyre`): the hook loads this
module for a tool result that reports a failure, and ``re`` only then.
"""

from __future__ import annotations

from rolling_graph.core.ids import slugify
from rolling_graph.core.lazyre import IGNORECASE, lazy

_GENERIC_RE = lazy(
    r"^(?:Error:\s*)?(?:Exit code \d+|Command (?:failed|exited) with (?:exit|non-zero status) code \d+|tool call failed)\s*$"
    r"|^Traceback \(most recent call last\):?$|^\s*(?:at |File \"|hint:|warning:|==>|Compiling |Generated |Running |Getting extensions)"
    r"|^[\s.\-=*┃│└─╭╰~^]*$"
    r"|^# [\w.-]+(?:/[\w.-]+)*(?: \[[\w./ -]+\])?$"  # Go's header over a package's build errors: # entire.io/cli/cmd
    r"|^ERROR task failed\s*$",  # a task runner's summary (mise): what failed is above it
    IGNORECASE,
)
#: A task runner's name before each line of its task's output (mise: ``[lint:go] cmd/x.go:3:1: …``).
_TASK_PREFIX_RE = lazy(r"^\[[a-z][\w:.-]*\] ")
_EXCEPTION_RES = [
    lazy(r"\*\* \((\w+(?:\.\w+)*)\)\s*(.+)"),  # Elixir: ** (RuntimeError) message
    lazy(r"^\s*(?:[\w.]+\.)?(\w+(?:Error|Exception|Failure))(?::\s*(.+)|$)"),  # Python/JS/Java
    lazy(r"\[ERROR\]\s*(.+)"),  # esbuild
    lazy(r"^\s*(?:ERROR|error)(?:\[\w+\]|\s+TS\d+)?:\s*(.+)"),  # rustc, tsc, compilers
    lazy(r"^\s*fatal:\s*(.+)"),  # git
    lazy(r"panicked at (.+)"),
    # A compiler's or a linter's diagnostic at a place: Go, gcc, clang, tsc --pretty false
    lazy(r"^\s*[\w./-]+\.\w+:\d+:\d+:\s*(.+)"),
    # A type checker's error at a place: mypy's `a.py:41: error:`, pyright's `a.py:3:5 - error:`, tsc's `a.ts(3,5): error TS2304:`
    lazy(r"^\s*[\w./-]+\.\w+(?::\d+(?::\d+)?(?::| -)|\(\d+,\d+\):)\s*error\b"),
]
_TEST_FAIL_RES = [
    lazy(r"^\s*\d+\) test (.+)"),  # ExUnit
    lazy(r"^(?:FAILED|ERROR) (\S+)"),  # pytest
    lazy(r"--- FAIL: (\S+)"),  # go
    lazy(r"^FAIL\s+[\w./-]+\s+(?:[\d.]+s|\[[\w ]+\])\s*$"),  # go: the package that failed (a TestMain's, a panic's)
    lazy(r"^\s*● (.+)"),  # jest
    lazy(r"^\s*(?:×|✗|✕) (.+)"),  # vitest, mocha
]
#: A linter's closing count (golangci-lint: ``3 issues:`` over ``* nilerr: 2`` and ``* unparam: 1``):
#: what failed when a ``| tail`` cut the findings above it.
_ISSUES_RE = lazy(r"^(\d+) issues?:$")
_ISSUE_COUNT_RE = lazy(r"^\* ([\w-]+): \d+$")
#: The caret under a quoted source line (``^``, indented as the column it points at).
_CARET_RE = lazy(r"^\s*\^\s*$")
_SAYS_FAILED_RE = lazy(r"\b(?:error|failed|failure|cannot|could not|unable|not found|denied|refused|invalid)\b", IGNORECASE)
_AT_PATH_RE = lazy(r"^[\w./-]+/(?=[\w.-]+\.\w+(?::\d+:\d+:|:\d+(?::\d+)?(?::| -)\s*error\b|\(\d+,\d+\):))")


def _clean(line: str) -> str:
    return " ".join(line.replace("\u2503", " ").split()).strip(" :")


def error_line(text: str) -> str | None:
    """The first meaningful line of a failure: the exception, else the failing test, else a
    linter's closing count, else the first line that says error or failed, else the first line
    that is not boilerplate. Generic lines (``Error: Exit code 2``, a traceback header, progress
    output) and the source line a diagnostic quotes above its caret never."""
    if "\\n" in text.split("\n", 1)[0]:
        text = text.replace("\\n", "\n")
    lines = [ln for ln in text.splitlines()[:400] if ln.strip()]
    if lines and lines[0].startswith("$ "):
        lines = lines[1:]
    if any(ln.startswith("[") for ln in lines):
        lines = [_TASK_PREFIX_RE.sub("", ln, count=1) for ln in lines]
    # A source line a caret points into is the code a diagnostic quotes, not what went wrong.
    quoted = {i for i in range(len(lines) - 1) if "^" in lines[i + 1] and _CARET_RE.match(lines[i + 1])}
    meaningful = [ln for i, ln in enumerate(lines) if i not in quoted and not _GENERIC_RE.search(ln)]
    for patterns in (_EXCEPTION_RES, _TEST_FAIL_RES):
        for line in meaningful:
            for pattern in patterns:
                if pattern.search(line):
                    return _at_file(_clean(line))[:160]
    summary = _lint_summary(meaningful)
    if summary:
        return summary
    rest = [ln for ln in (_strip_error(_clean(ln)) for ln in meaningful) if ln]
    for i, line in enumerate(rest):
        if _SAYS_FAILED_RE.search(line):
            # "Pre-commit validation failed:" heads the line that says what failed.
            if lines and (line.endswith(("failed", "error", "errors")) or _raw_ends_colon(lines, line)) and i + 1 < len(rest):
                return f"{line}: {rest[i + 1]}"[:160]
            return line[:160]
    return rest[0][:160] if rest else None


def _lint_summary(lines: list[str]) -> str | None:
    """``3 lint issues: nilerr, unparam`` from a linter's closing count, when its findings are not
    in the output (cut by ``| tail``); None where there is no such count."""
    for i, line in enumerate(lines):
        found = _ISSUES_RE.match(line.strip())
        if found:
            linters = [m.group(1) for ln in lines[i + 1 :] if (m := _ISSUE_COUNT_RE.match(ln.strip()))]
            if linters:
                n = int(found.group(1))
                return f"{n} lint issue{'s' if n != 1 else ''}: {', '.join(linters)}"[:160]
    return None


def _at_file(line: str) -> str:
    """A diagnostic by its file's name (``push_common.go:33:15: undefined: X``, ``a.ts(3,5):
    error TS2304: …``): the directories are the file node's; the label keeps room for what
    went wrong."""
    return _AT_PATH_RE.compiled().sub("", line, count=1)


def _strip_error(line: str) -> str:
    return line[7:].strip() if line.startswith("Error: ") else line


def _raw_ends_colon(lines: list[str], cleaned: str) -> bool:
    return any(_strip_error(_clean(ln)) == cleaned and ln.rstrip().endswith(":") for ln in lines)


def error_id(line: str) -> str:
    """A stable node id for an error line (digits blurred: ``line 12`` and ``line 13`` of
    one failure are one error)."""
    return "err-" + slugify("".join("#" if c.isdigit() else c for c in line)[:100])[:60]
