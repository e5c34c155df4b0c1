"""``rgraph``: the command line for Rolling Graph.

Every command prints one actionable line on a user error (exit 1) and keeps tracebacks
in ``$ROLLING_GRAPH_HOME/logs/``.
"""

from __future__ import annotations

import os
import shutil
import sys
import tempfile
from importlib import resources
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.table import Table

from rolling_graph.config import ConfigError, load_settings

app = typer.Typer(
    name="rgraph",
    help="Rolling Graph: a live, weighted concept-graph memory for Claude Code sessions.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)


#: Modules that add commands through ``register(app)``, in help order.
COMMAND_MODULES = ("rolling_graph.cli.replay", "rolling_graph.cli.show", "rolling_graph.cli.stats", "rolling_graph.cli.view", "rolling_graph.cli.eval", "rolling_graph.reconcile.cli", "rolling_graph.reconcile.graduation_cli")


def _register_all() -> None:
    import importlib
    import importlib.util

    for name in COMMAND_MODULES:
        if importlib.util.find_spec(name) is not None:
            importlib.import_module(name).register(app)


def demo_transcript() -> Path:
    """The bundled demo session (a transcript in Claude Code's JSONL format)."""
    return Path(str(resources.files("rolling_graph") / "data" / "demo_session.jsonl"))


@app.command("demo")
def demo(
    keep: Annotated[bool, typer.Option("--keep", help="Keep the demo's state directory and print its path.")] = False,
    budget: Annotated[int, typer.Option("--budget", help="LOD token budget for the demo.")] = 800,
) -> None:
    """Replay a bundled session through the real hooks; show the graph and the injections.

    Runs offline (no model, no database) in a throw-away state directory: your own
    sessions are not touched.
    """
    from rolling_graph.cli.render_views import render_text
    from rolling_graph.cli.replay import render_summary
    from rolling_graph.replay import ReplayOptions, replay

    console = Console()
    home = Path(tempfile.mkdtemp(prefix="rgraph-demo-"))
    try:
        console.rule("[bold]Rolling Graph demo[/bold]: a recorded session replayed through the hooks")
        options = ReplayOptions(probe="offline", mode="sync", budget=budget, clock="transcript", subprocess=False)
        result = replay([demo_transcript()], options=options, home=home)
        render_summary(result.summary(), console, result.records)
        sid = next(iter(result.final_docs), None)
        if sid is None:
            console.print("[red]the demo transcript produced no session[/red]")
            raise typer.Exit(1)
        console.rule("The session's graph (rgraph show)")
        console.print(render_text(result.final_docs[sid], title=f"Session {sid[:13]}"))
        injections = [r for r in result.records if r.injection]
        console.rule(f"What the model was told: {len(injections)} injections")
        for r in injections[:2] + injections[-1:]:
            console.print(f"[bold]event {r.index} · {r.event}{' · ' + r.source if r.source else ''} · ~{r.injected_tokens} tokens[/bold]")
            console.print(r.injection, markup=False, highlight=False)
        if keep:
            console.print(f"state kept in {home} (try: ROLLING_GRAPH_HOME={home} rgraph show --session {sid})")
    finally:
        if not keep:
            shutil.rmtree(home, ignore_errors=True)


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


@app.command("doctor")
def doctor(
    deep: Annotated[bool, typer.Option("--deep", help="Also measure the vector index's recall against exact search.")] = False,
    network: Annotated[bool, typer.Option("--network/--no-network", help="Check whether Ollama answers.")] = True,
) -> None:
    """Check the installation: settings, state directory, hooks, probe backend, database."""
    console = Console()
    try:
        settings = load_settings()
    except ConfigError as exc:
        console.print(f"[red]configuration: {exc}[/red]")
        raise typer.Exit(1) from exc
    rows: list[tuple[str, bool, str]] = [("settings", True, repr(settings))]
    try:
        settings.home.mkdir(parents=True, exist_ok=True)
        probe_file = settings.home / ".doctor"
        probe_file.write_text("ok")
        probe_file.unlink()
        rows.append(("state directory", True, str(settings.home)))
    except OSError as exc:
        rows.append(("state directory", False, f"{settings.home}: {exc}"))
    rows += _plugin_checks()
    from rolling_graph.probe.select import probe_doctor

    rows += probe_doctor(settings, check_network=network)
    from rolling_graph.reconcile.cli import doctor_report

    rows += doctor_report(settings, deep=deep)
    table = Table(title="rgraph doctor", title_justify="left")
    table.add_column("check")
    table.add_column("")
    table.add_column("detail", overflow="fold")
    for name, ok, detail in rows:
        table.add_row(name, "[green]ok[/green]" if ok else "[red]no[/red]", detail)
    console.print(table)
    if not all(ok for _, ok, _ in rows[:3]):
        raise typer.Exit(1)


_register_all()


def main() -> None:
    try:
        app()
    except ConfigError as exc:
        Console(stderr=True).print(f"[red]rgraph: {exc}[/red]")
        raise SystemExit(1) from exc


if __name__ == "__main__":
    main()
