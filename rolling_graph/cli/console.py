"""Where the commands print, and how they fail: one handler at the CLI's edge.

Commands raise :class:`rolling_graph.core.errors.RollingGraphError` (or return ``fail(...)`` to
raise); :class:`Group`, the root command group of ``rgraph``, turns it into one line on stderr,
``rgraph: <what is wrong and what to do>``, and exit code 1. An unexpected exception becomes
``rgraph: internal error …`` the same way. The full detail (the traceback) goes to
``$ROLLING_GRAPH_HOME/logs/cli.log``; no traceback is ever printed.
"""

from __future__ import annotations

import errno
import json
import os
import sys
import time
import traceback
from collections.abc import Callable
from typing import Any

import typer
from rich.console import Console
from typer.core import TyperGroup

from rolling_graph.core.config import default_home
from rolling_graph.core.errors import RollingGraphError, UserError

#: typer's own control flow (``Exit``, ``Abort``, usage errors) passes through untouched.
_CLICK_FLOW = (typer.Exit, typer.Abort, typer.TyperException)


def console() -> Console:
    """Rich output; when piped (or embedded by Claude Code) long lines are not hard-wrapped."""
    tty = sys.stdout.isatty()
    width = int(os.environ.get("COLUMNS", "0") or 0) or (None if tty else 160)
    return Console(width=width, highlight=False, soft_wrap=not tty)


def fail(message: str) -> UserError:
    """The error for a command that cannot do what it was asked; ``raise fail(...)``."""
    return UserError(message)


def print_report(run: Callable[[], dict[str, Any]], render: Callable[[dict[str, Any], Console], None], as_json: bool) -> None:
    """Measure (``run``) and print the report as JSON or through ``render``; a
    ``ValueError`` from the measure is a configuration error: one actionable line."""
    try:
        found = run()
    except ValueError as exc:
        raise fail(str(exc)) from exc
    if as_json:
        typer.echo(json.dumps(found, indent=1))
    else:
        render(found, Console())


def log_path() -> str:
    return os.path.join(default_home(), "logs", "cli.log")


def _log(argv: list[str]) -> str | None:
    """Append the current exception to ``logs/cli.log``; returns its path, or None if it failed."""
    path = log_path()
    try:
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "a", encoding="utf-8") as fh:
            stamp = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
            fh.write(f"--- {stamp} rgraph {' '.join(argv)}\n{traceback.format_exc()}\n")
    except OSError:
        return None
    return path


def report(exc: BaseException) -> int:
    """Print ``exc`` as the one ``rgraph:`` line on stderr, log the detail; returns the exit code."""
    logged = _log(sys.argv[1:])
    if isinstance(exc, RollingGraphError):
        message = " ".join(str(exc).split()) or type(exc).__name__
    elif isinstance(exc, OSError):
        message = os_error_line(exc)
    else:
        first = " ".join(str(exc).split())[:300]
        where = f"; details in {logged}" if logged else ""
        message = f"internal error ({type(exc).__name__}: {first}){where}"
    sys.stdout.flush()
    sys.stderr.write(f"rgraph: {message}\n")
    sys.stderr.flush()
    return 1


_NO_WRITE = {errno.EACCES, errno.EPERM, errno.EROFS}
_UNREACHABLE = {errno.ECONNREFUSED, errno.ECONNRESET, errno.EHOSTUNREACH, errno.ENETUNREACH, errno.ETIMEDOUT}


def os_error_line(exc: OSError) -> str:
    """One line with the cause and the fix for an error of the machine (a file the state
    directory cannot hold, a service that does not answer), never "internal error"."""
    first = " ".join((exc.strerror or str(exc) or type(exc).__name__).split())[:200]
    path = exc.filename
    home = default_home()
    if isinstance(exc, ConnectionError) or exc.errno in _UNREACHABLE:
        return (f"a service did not answer ({' '.join(str(exc).split())[:200] or first}): if it is Ollama, start it "
                "(`ollama serve`) or choose another backend (ROLLING_GRAPH_PROBE, config.toml); `rgraph doctor` checks each one")
    if path is None:
        return f"{first}; `rgraph doctor` checks the installation"
    if exc.errno in _NO_WRITE:
        return (f"cannot write {path}: {first}; make the state directory {home} writable, "
                "or set ROLLING_GRAPH_HOME to a directory you can write")
    if exc.errno == errno.ENOSPC:
        return f"no space left to write {path}; free some space on that disk, or set ROLLING_GRAPH_HOME to another disk"
    if exc.errno in (errno.ENOTDIR, errno.ENOENT, errno.EEXIST):
        return (f"{first}: {path}; the state directory {home} (ROLLING_GRAPH_HOME) must be a directory you can write "
                "(`rgraph doctor` checks it)")
    return f"{first}: {path}; `rgraph doctor` checks the state directory {home}"


class Group(TyperGroup):
    """The root command group: the one place errors become what a user sees."""

    def invoke(self, ctx: Any) -> Any:
        try:
            return super().invoke(ctx)
        except _CLICK_FLOW:
            raise
        except BrokenPipeError:  # `rgraph … | head`: the reader left; say nothing more
            with open(os.devnull, "w") as null:
                os.dup2(null.fileno(), sys.stdout.fileno())
            raise typer.Exit(1) from None
        except Exception as exc:  # noqa: BLE001 - the CLI's edge: every error ends here
            raise typer.Exit(report(exc)) from None
