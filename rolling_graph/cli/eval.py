"""``rgraph eval``: score the project against gold-labelled fixtures and naive baselines.

Each fixture is replayed in-process (offline probe, sync, transcript clock) once per
budget; the table puts the project's numbers next to the baselines' (no memory, most
recent names, most frequent names, full graph dump) at the same token budget.

With ``--transcripts PATH...`` it measures real recorded sessions instead, without gold
labels: the corpus figures of :mod:`rolling_graph.evaluation.corpus` for the graph's restore
block after each compaction, in sync and async probe mode, next to the naive name lists;
with ``--every N`` as if a compaction came at every Nth event (:mod:`rolling_graph.evaluation.points`).
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console
from rich.table import Table

from rolling_graph.cli.console import fail, print_report
from rolling_graph.cli.eval_corpus import render_corpus_report
from rolling_graph.evaluation.corpus import MODES, run_corpus_eval
from rolling_graph.evaluation.fixtures import BASELINES, run_evaluation

SHORT = {"none": "none", "recent": "recent", "frequent": "frequent", "full_dump": "dump"}
#: The directory holding the ``rolling_graph`` package: a checkout's root when installed from
#: one in editable mode, ``site-packages`` when installed (which carries no fixtures).
SOURCE_ROOT = Path(__file__).resolve().parents[2]
#: Outside a checkout (an installed package carries no fixtures): one clause, and the command to run.
NO_FIXTURES = "no fixtures to score here: measure your own sessions with `rgraph eval --transcripts ~/.claude/projects/<project>/`"


def default_fixtures() -> Path | None:
    """A checkout's ``fixtures/transcripts``: under the current directory, else beside the
    source tree of an editable install; None when neither has one (an installed package
    carries no fixtures)."""
    for root in (Path.cwd(), SOURCE_ROOT):
        here = root / "fixtures" / "transcripts"
        if here.is_dir() and (root / "rolling_graph").is_dir():
            return here
    return None


def _pct(value: float | None) -> str:
    return "—" if value is None else f"{value * 100:.0f}%"


def render_report(report: dict[str, Any], console: Console) -> None:
    # Each fixture and budget heads its group on a line of its own, so no label is cut to fit
    # 80 columns (no box lines between the columns: they took the room).
    table = Table(title="Rolling Graph vs baselines (same token budget)", title_justify="left", box=None, pad_edge=False,
                  header_style="bold underline")
    for col, justify in (("method", "left"), ("gate P", "right"), ("gate R", "right"), ("probe/ev", "right"),
                         ("final", "right"), ("restored", "right"), ("stale", "right"), ("tokens", "right")):
        table.add_column(col, justify=justify, no_wrap=True)  # type: ignore[arg-type]
    for row in report["rows"]:
        p = row["project"]
        table.add_row(f"[bold]{row['name']} @ {row['budget']}[/bold]")
        table.add_row("  graph", _pct(p["gate"]["precision"]), _pct(p["gate"]["recall"]), f"{p['probe_rate']:.2f}",
                      _pct(p["final_recall"]), _pct(p["survival_recall"]), _pct(p["stale_rate"]), str(p["cumulative_tokens"]))
        for kind in BASELINES:
            b = row["baselines"][kind]
            beaten = row["beats_on_survival"].get(kind)
            mark = "" if beaten is None else (" [green]✓[/green]" if beaten else " [red]✗[/red]")
            table.add_row(f"  {SHORT[kind]}", "", "", "", _pct(b["final_recall"]), _pct(b["survival_recall"]) + mark,
                          _pct(b["stale_rate"]), str(b["cumulative_tokens"]))
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
        transcripts: Annotated[list[Path] | None, typer.Option(
            "--transcripts", help="Measure these recorded sessions (JSONL files, one session each, or directories, read "
            "recursively; no gold needed) instead of the fixtures: names recalled after each compaction by the graph and "
            "by naive name lists, pooled over all compactions.")] = None,
        more: Annotated[list[Path] | None, typer.Argument(metavar="TRANSCRIPT", help="More transcripts for --transcripts.",
                                                          show_default=False)] = None,
        mode: Annotated[list[str] | None, typer.Option("--mode", help="With --transcripts: probe mode(s), sync and/or async (default both).")] = None,
        project: Annotated[Path | None, typer.Option("--project", help="With --transcripts: the project directory the sessions belong to; every "
                                                     "replayed event's cwd (the recorded one need not exist here).")] = None,
        show_blocks: Annotated[bool, typer.Option("--show-blocks", help="With --transcripts: print every restore block as injected, with the next-40 names only the best list recalls and those only the block does.")] = False,
        cells: Annotated[bool, typer.Option("--cells", help="With --transcripts: print the figures of every compaction (cell) too, not only pooled.")] = False,
        jobs: Annotated[int, typer.Option("--jobs", min=1, help="With --transcripts: replays run at a time.")] = 2,
        every: Annotated[int | None, typer.Option(
            "--every", min=1, help="With --transcripts: instead of at each compaction, measure as if one came at every Nth "
            "hook event (offline probe, sync): many points per session, and sessions without a compaction count too.")] = None,
        chain: Annotated[list[Path] | None, typer.Option(
            "--chain", help="Measure these recorded sessions of ONE project (files, or a directory: in the order of its "
            "index.json if it has one), replayed in time order into a fresh warm graph: names each later session's "
            "SessionStart(startup) block recalls, next to naive name lists, pooled (--cells: each session). Use --project "
            "to map their worktrees to one project.")] = None,
    ) -> None:
        """Gate precision/recall, probe rate, graph and post-compaction recall, tokens — next to naive baselines.

        With --transcripts FILE.jsonl... or DIR...: over every compaction of real recorded sessions, the next-40 and summary-dropped names recall of the graph's restore block (sync and async) and of the naive name lists, pooled, with the best list and the cells won, at each budget (--cells: each compaction too). Add --every N to measure as if a compaction came at every Nth event instead. With --chain DIR (an index.json in time order) or FILES: each later session's startup block."""
        budgets = budget or [800, 400]
        if every is not None:
            if chain or not (transcripts or more):
                raise fail("--every measures recorded sessions: give them with --transcripts FILE.jsonl...")
            if show_blocks or "async" in (mode or []):
                raise fail("--every replays each session once, in sync probe mode, and prints means: "
                           "--show-blocks and --mode async apply to the compaction measure (without --every)")
        if chain:
            from rolling_graph.cli.eval_chain import run_chain_command

            run_chain_command([*chain, *(more or [])], budgets, project, mode, as_json=as_json, show_blocks=show_blocks, cells=cells)
            return
        given = [*(transcripts or []), *(more or [])]
        paths = [f for p in given for f in (sorted(p.rglob("*.jsonl")) if p.is_dir() else [p])]
        if given:
            missing = [str(p) for p in given if not p.is_file() and not p.is_dir()]
            missing += [f"{p} (no *.jsonl in it)" for p in given if p.is_dir() and not any(p.rglob("*.jsonl"))]
            problem = (f"not a file: {', '.join(missing)}" if missing
                       else "--mode must be sync or async" if any(m not in MODES for m in mode or [])
                       else "give the transcripts after --transcripts" if not transcripts else None)
            if problem:
                raise fail(problem)
            if every is not None:
                from rolling_graph.cli.eval_corpus import render_points_report
                from rolling_graph.evaluation.points import run_points_eval

                print_report(lambda: run_points_eval(paths, every, budgets, project=str(project) if project else None, workers=jobs),
                             render_points_report, as_json)
                return
            print_report(lambda: run_corpus_eval(paths, budgets, tuple(dict.fromkeys(mode or MODES)), str(project) if project else None,
                                                 workers=jobs),
                         lambda report, console: render_corpus_report(report, console, show_blocks, cells), as_json)
            return
        fixtures_dir = fixtures_dir or default_fixtures()
        if fixtures_dir is None:
            raise fail(NO_FIXTURES)
        if not fixtures_dir.is_dir() or not any(fixtures_dir.glob("*.gold.json")):
            raise fail(f"no *.gold.json fixtures in {fixtures_dir}; run fixtures/make_transcripts.py there, pass "
                       "--fixtures-dir DIR, or measure recorded sessions with --transcripts FILE.jsonl...")
        print_report(lambda: run_evaluation(fixtures_dir, budgets, fixture or None), render_report, as_json)
