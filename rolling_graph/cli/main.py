"""``rgraph``: the command line for Rolling Graph.

Every command prints one actionable line on a user error (exit 1) and keeps tracebacks
in ``$ROLLING_GRAPH_HOME/logs/``.
"""

from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.table import Table

from rolling_graph.cli import demo as cli_demo
from rolling_graph.cli import eval as cli_eval
from rolling_graph.cli import forget as cli_forget
from rolling_graph.cli import graduation as graduation_cli
from rolling_graph.cli import replay as cli_replay
from rolling_graph.cli import session_list, show, stats, view
from rolling_graph.cli import warm as reconcile_cli
from rolling_graph.cli.console import Group, report
from rolling_graph.cli.help_display import tidy_help
from rolling_graph.core.config import Settings, load_settings
from rolling_graph.core.errors import RollingGraphError
from rolling_graph.probe.select import probe_doctor
from rolling_graph.store import adopt

app = typer.Typer(
    name="rgraph",
    help="Rolling Graph: a live, weighted concept-graph memory for Claude Code sessions.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    cls=Group,
)


def _print_version(value: bool) -> None:
    if value:
        from importlib.metadata import PackageNotFoundError, version

        try:
            typer.echo(f"rgraph {version('rolling-graph')}")
        except PackageNotFoundError:
            typer.echo("rgraph (not installed as a package)")
        raise typer.Exit()


@app.callback()
def _root(
    show_version: Annotated[
        bool, typer.Option("--version", help="Print the installed version and exit.", callback=_print_version, is_eager=True)
    ] = False,
) -> None:
    """Rolling Graph: a live, weighted concept-graph memory for Claude Code sessions."""


#: Modules that add commands through ``register(app)``, in help order.
COMMAND_MODULES = (cli_replay, show, cli_forget, session_list, stats, view, cli_eval, reconcile_cli, graduation_cli)


def _register_all() -> None:
    for module in COMMAND_MODULES:
        module.register(app)


@app.command("demo")
def demo(
    keep: Annotated[bool, typer.Option(
        "--keep", help="Keep the demo's state directory and print the command that shows it.")] = False,
    budget: Annotated[int, typer.Option("--budget", help="LOD token budget for the demo.")] = 800,
) -> None:
    """Replay a bundled session through the real hooks; show its prompts, every injection and the graph.

    Runs offline (no model, no database) in a throw-away state directory: your own
    sessions are not touched. With --keep the directory stays, to explore with rgraph show.
    """
    cli_demo.run_demo(Console(), keep=keep, budget=budget)


def _plugin_checks() -> list[tuple[str, bool, str]]:
    rows: list[tuple[str, bool, str]] = []
    hook = shutil.which("rgraph-hook")
    here = Path(sys.executable).with_name("rgraph-hook")
    if here.exists():
        rows.append(("hook command", True, f"{here} (runs {sys.executable} directly)"))
    elif hook:
        rows.append(("hook command", True, hook))
    else:
        rows.append(("hook command", False, "rgraph-hook is not installed next to this interpreter nor on PATH"))
    data = os.environ.get("CLAUDE_PLUGIN_DATA")
    if data:
        venv = Path(data) / "venv" / "bin" / "rgraph-hook"
        rows.append(("plugin environment", venv.exists(), str(venv) if venv.exists() else f"not bootstrapped yet ({venv} missing; see logs/bootstrap.log)"))
    return rows


def _state_dir_check(home: str) -> tuple[str, bool, str]:
    """Every process must use one state directory: adopt what an older version left in a
    plugin data directory (``~/.claude/plugins/data/rolling-graph*``), and say so."""
    found = adopt.plugin_data_dirs()
    data = os.environ.get("CLAUDE_PLUGIN_DATA")
    if data and adopt.has_state(data) and data not in found:
        found.append(data)
    moved: list[str] = []
    for directory in found:
        try:
            count = adopt.adopt(home, directory)
        except OSError as exc:
            return ("one state directory", False, f"{directory} holds sessions that could not be moved to {home}: {exc}")
        moved.append(f"{count} file(s) from {directory}")
    left = [d for d in found if adopt.has_state(d)]
    if left:
        return ("one state directory", False, f"{', '.join(left)} still hold state; move it into {home} by hand")
    detail = f"every process uses {home}" + (f"; adopted {', '.join(moved)}" if moved else "")
    return ("one state directory", True, detail)


def settings_summary(settings: Settings) -> str:
    """What the settings are, in words (never the object's repr)."""
    config = settings.home / "config.toml"
    source = f"{config}" if config.is_file() else f"defaults (no {config})"
    database = "a DSN you set" if settings.dsn else f"embedded PostgreSQL under {settings.home / 'pg'}"
    warm = f"warm graph on ({database})" if settings.warm else "warm graph off"
    return (f"{source}; {warm}; probe {settings.probe.backend}, {settings.probe.mode}; "
            f"budget {settings.render.budget_tokens} tokens")


#: Doctor rows that say whether an optional probe backend is available: "no" there is not a fault.
OPTIONAL_CHECKS = frozenset({"anthropic", "ollama", "claude"})


@app.command("doctor")
def doctor(
    deep: Annotated[bool, typer.Option("--deep", help="Also measure the vector index's recall against exact search.")] = False,
    network: Annotated[bool, typer.Option("--network/--no-network", help="Check whether Ollama answers.")] = True,
) -> None:
    """Check the installation: settings, state directory, hooks, probe backend, database."""
    console = Console()
    settings = load_settings()
    rows: list[tuple[str, bool, str]] = [("settings", True, settings_summary(settings))]
    try:
        settings.home.mkdir(parents=True, exist_ok=True)
        probe_file = settings.home / ".doctor"
        probe_file.write_text("ok")
        probe_file.unlink()
        rows.append(("state directory", True, str(settings.home)))
    except OSError as exc:
        rows.append(("state directory", False, f"{settings.home}: {exc}"))
    rows += _plugin_checks()
    rows.append(_state_dir_check(settings.home_dir))
    from rolling_graph.store import codecache

    rows.append(("hook code cache", True, codecache.describe()))
    rows += probe_doctor(settings, check_network=network)
    rows += reconcile_cli.doctor_report(settings, deep=deep)
    table = Table(title="rgraph doctor", title_justify="left")
    table.add_column("check")
    table.add_column("")
    table.add_column("detail", overflow="fold")
    for name, ok, detail in rows:
        mark = "[green]ok[/green]" if ok else ("[yellow]—[/yellow]" if name in OPTIONAL_CHECKS else "[red]no[/red]")
        table.add_row(name, mark, detail)
    console.print(table)
    failed = [name for name, ok, _ in rows if not ok and name not in OPTIONAL_CHECKS]
    if failed:
        Console(stderr=True).print(f"rgraph: doctor found problems: {', '.join(failed)}")
        raise typer.Exit(1)


_register_all()
tidy_help(app)  # flags without <bool>, lists by their element: one place for every command


def main() -> None:
    from rolling_graph.warm import server  # stdlib only: the driver comes with the first connection

    server.exit_on_terminate()  # a killed command still stops the servers it started
    try:
        app()
    except RollingGraphError as exc:  # raised outside a command (e.g. while parsing options)
        raise SystemExit(report(exc)) from None
    finally:
        # A command leaves nothing running that it did not find running (`db start` excepted).
        server.stop_started_here()


if __name__ == "__main__":
    main()
