"""What the corpus benchmarks share: where ``../shared/corpus`` is, and the ``eval`` command."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import typer

from rolling_graph.cli.eval import register
from rolling_graph.warm import server

CORPUS = Path(os.environ.get("ROLLING_GRAPH_CORPUS") or Path(__file__).resolve().parent.parent.parent / "shared" / "corpus")


def run_eval(args: list[str], prog_name: str) -> None:
    """``rgraph eval ARGS`` (only the eval command, as the installed CLI would run it)."""
    server.exit_on_terminate()  # killed, it still stops the embedded server it started
    app = typer.Typer(add_completion=False)
    register(app)

    @app.callback()
    def _root() -> None:  # a group, so the command is addressed as `eval`
        pass

    app(["eval", *args], prog_name=prog_name)


#: Values of the tool schema's enums that the corpus measure reads as names: Grep's ``output_mode``
#: and a task's ``status``. ``--without-schema-values`` scores without them (gold names and the
#: lists alike), to show what the measure's figures owe them (docs/measurements.md, nineteenth pass).
SCHEMA_VALUES = frozenset({"files_with_matches", "in_progress"})


def without(events: tuple[tuple[str, ...], ...], names: frozenset[str]) -> tuple[tuple[str, ...], ...]:
    """Each event's names less ``names``."""
    return tuple(tuple(n for n in event if n not in names) for event in events)


def need(paths: list[Path], what: str) -> None:
    if not paths or any(not p.is_file() for p in paths):
        print(f"{what} (set ROLLING_GRAPH_CORPUS)", file=sys.stderr)
        raise SystemExit(1)
