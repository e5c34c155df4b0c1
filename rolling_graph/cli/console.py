"""Where the commands print, and how they fail: one handler at the CLI's edge.

Commands raise :class:`rolling_graph.core.errors.RollingGraphError` (or return ``fail(...)`` to
raise); :class:`Group`, the root command group of ``rgraph``, turns it into one line on stderr,
``rgraph: <what is wrong and what to do>``, and exit code 1. An unexpected exception becomes
``rgraph: internal error …`` the same way. The full detail (the traceback) goes to
``$ROLLING_GRAPH_HOME/logs/cli.log``; no traceback is ever printed.
"""

from __future__ import annotations

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
    else:
        first = " ".join(str(exc).split())[:300]
        where = f"; details in {logged}" if logged else ""
        message = f"internal error ({type(exc).__name__}: {first}){where}"
    sys.stdout.flush()
    sys.stderr.write(f"rgraph: {message}\n")
    sys.stderr.flush()
    return 1


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
