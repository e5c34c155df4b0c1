"""``rgraph eval``: score the project against gold-labelled fixtures and naive baselines.

Each fixture is replayed in-process (offline probe, sync, transcript clock) once per
budget; the table puts the project's numbers next to the baselines' (no memory, most
recent names, most frequent names, full graph dump) at the same token budget.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Any

import typer
from rich import box
from rich.console import Console
from rich.table import Table

from rolling_graph.evaluation import BASELINES, run_evaluation

SHORT = {"none": "none", "recent": "recent", "frequent": "frequent", "full_dump": "dump"}
def default_fixtures() -> Path:
    """The checkout's fixtures: under the current directory when run from a checkout
    (an installed package carries no fixtures), else beside the source tree."""
    here = Path.cwd() / "fixtures" / "transcripts"
    if here.is_dir():
        return here
    return Path(__file__).resolve().parent.parent / "fixtures" / "transcripts"


def _pct(value: float | None) -> str:
    return "—" if value is None else f"{value * 100:.0f}%"


def render_report(report: dict[str, Any], console: Console) -> None:
    table = Table(title="Rolling Graph vs baselines (same token budget)", title_justify="left", box=box.SIMPLE_HEAD, pad_edge=False)
    for col, justify in (("fixture @ budget", "left"), ("method", "left"), ("gate P", "right"), ("gate R", "right"),
                         ("probe/ev", "right"), ("final", "right"), ("restored", "right"), ("stale", "right"), ("tokens", "right")):
        table.add_column(col, justify=justify)  # type: ignore[arg-type]
    for row in report["rows"]:
        p = row["project"]
        table.add_row(f"{row['name']} @ {row['budget']}", "[bold]graph[/bold]", _pct(p["gate"]["precision"]), _pct(p["gate"]["recall"]),
                      f"{p['probe_rate']:.2f}", _pct(p["final_recall"]), _pct(p["survival_recall"]), _pct(p["stale_rate"]), str(p["cumulative_tokens"]))
        for kind in BASELINES:
            b = row["baselines"][kind]
            beaten = row["beats_on_survival"].get(kind)
            mark = "" if beaten is None else (" [green]✓[/green]" if beaten else " [red]✗[/red]")
            table.add_row("", SHORT[kind], "", "", "", _pct(b["final_recall"]), _pct(b["survival_recall"]) + mark, _pct(b["stale_rate"]),
                          str(b["cumulative_tokens"]))
        table.add_section()
    console.print(table)
    console.print("final: gold entities in the final graph (baselines: in their block at the end). restored: gold entities in the "
                  "SessionStart(compact|resume) injection. stale: superseded decisions shown there as current "
                  "(lower is better). tokens: cumulative injected. ✓/✗: the graph's restored recall is "
                  "strictly higher than this baseline's.")
    for row in report["rows"]:
        p = row["project"]
        notes = []
        if p["supersedes"]:
            found = sum(s["found"] for s in p["supersedes"])
            notes.append(f"supersedes edges {found}/{len(p['supersedes'])}")
        if p["final_missed"]:
            notes.append("missing from graph: " + ", ".join(p["final_missed"]))
        for s in p["survival"]:
            if s["missed"]:
                notes.append(f"not restored at event {s['index']} ({s['source']}, {s['tokens']} tokens): " + ", ".join(s["missed"]))
        if p["forbidden_leaks"]:
            notes.append(f"[red]secrets leaked: {len(p['forbidden_leaks'])}[/red]")
        by = ", ".join(f"{k} {_pct(v)}" for k, v in sorted(p["gate"]["by_trigger"].items()))
        notes.append(f"gate recall by trigger: {by}; false firings {p['gate']['fp']}")
        console.print(f"[bold]{row['name']} @ {row['budget']}[/bold]: " + "; ".join(notes))


def register(app: typer.Typer) -> None:
    @app.command("eval")
    def eval_command(
        budget: Annotated[list[int] | None, typer.Option("--budget", help="Token budget(s) to evaluate at (repeatable).")] = None,
        fixture: Annotated[list[str] | None, typer.Option("--fixture", help="Only these fixtures (by gold name; repeatable).")] = None,
        fixtures_dir: Annotated[Path | None, typer.Option("--fixtures-dir", help="Where the transcripts and *.gold.json live (default: ./fixtures/transcripts of a checkout).")] = None,
        as_json: Annotated[bool, typer.Option("--json", help="Print the full report as JSON.")] = False,
    ) -> None:
        """Gate precision/recall, probe rate, graph and post-compaction recall, tokens — next to naive baselines."""
        budgets = budget or [800, 400]
        fixtures_dir = fixtures_dir or default_fixtures()
        if not fixtures_dir.is_dir() or not any(fixtures_dir.glob("*.gold.json")):
            Console(stderr=True).print(f"[red]no *.gold.json fixtures in {fixtures_dir}; run fixtures/make_transcripts.py or pass --fixtures-dir[/red]")
            raise typer.Exit(1)
        report = run_evaluation(fixtures_dir, budgets, fixture or None)
        if as_json:
            typer.echo(json.dumps(report, indent=1))
            return
        render_report(report, Console())
