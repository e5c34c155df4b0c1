"""``rgraph replay TRANSCRIPT...``: run recorded sessions through the real hooks.

By default the replay is in-process, with the offline probe in sync mode, the clock
pinned to each transcript line's timestamp, and a fresh temporary state directory (so a
replay never mixes into your real sessions; ``--home`` chooses one). The replay is honest:
each hook's ``transcript_path`` holds only the lines Claude Code had written before its
event (:mod:`rolling_graph.replay.mirror`).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn
from rich.table import Table

from rolling_graph.cli.console import fail
from rolling_graph.replay.run import EventRecord, ReplayOptions, replay
from rolling_graph.replay.transcript import is_transcript, parse_transcripts

#: Show a progress bar from this many events on.
PROGRESS_FROM = 50
INJECTION_ROWS = 12


def count_events(paths: list[Path]) -> int:
    return sum(1 for _ in parse_transcripts(paths))


def gate_line(summary: dict[str, Any]) -> str:
    """How often the gate fired, and on what: an event can fire on several triggers at once."""
    reasons = sorted(summary["gate_reasons"].items(), key=lambda kv: -kv[1])
    fired = summary["gate_fired"]
    line = f"on {fired} event{'s' if fired != 1 else ''}"
    if reasons:
        triggers = sum(v for _, v in reasons)
        line += f"  ({triggers} triggers: {', '.join(f'{k} {v}' for k, v in reasons)})"
    return line


def render_summary(
    summary: dict[str, Any],
    console: Console,
    records: list[EventRecord] | None = None,
    show_events: bool = False,
    *,
    show_home: bool = True,
    show_injections: bool = True,
) -> None:
    """A readable rendering of :func:`rolling_graph.replay.run.summarize` output.

    ``show_home=False`` leaves out the state directory (the demo's is thrown away);
    ``show_injections=False`` the table of injections (the demo prints each in full).
    """
    head = Table.grid(padding=(0, 2))
    head.add_column(style="bold")
    head.add_column()
    kinds = ", ".join(f"{k} {v}" for k, v in summary["events_by_kind"].items())
    head.add_row("events", f"{summary['events']}  ({kinds})")
    head.add_row("gate fired", gate_line(summary))
    head.add_row("probes", f"{summary['probes']}  (rate {summary['probe_rate']:.2f} per prompt/tool event)")
    head.add_row(
        "injected", f"{len(summary['injections'])} injections, {summary['cumulative_injected_tokens']} tokens in total"
    )
    rate = summary.get("events_per_s")
    head.add_row("time", f"{summary['elapsed_s']:.2f} s" + (f"  ({rate} events/s)" if rate else ""))
    parse = summary["parse"]
    skipped = {
        k: parse[k]
        for k in ("bad_json", "not_object", "unknown_type", "sidechain", "orphan_results", "unanswered_tools")
        if parse.get(k)
    }
    if skipped:
        head.add_row("skipped lines", ", ".join(f"{k} {v}" for k, v in skipped.items()))
    if show_home:
        head.add_row("state dir", summary["home"])
    console.print(head)

    graphs = Table(title="Graph at the end", title_justify="left")
    for col in ("session", "nodes", "edges", "supersedes", "domains", "focus"):
        graphs.add_column(col)
    for sid, g in summary["graphs"].items():
        domains = ", ".join(f"{k} {v}" for k, v in sorted(g["domains"].items()))
        graphs.add_row(
            sid[:13], str(g["nodes"]), str(g["edges"]), str(g["supersedes"]), domains, ", ".join(g["focus"])[:60]
        )
    console.print(graphs)

    if summary["injections"] and show_injections:
        inj = Table(title="Injections", title_justify="left")
        for col in ("#", "event", "source", "tokens"):
            inj.add_column(col, justify="right" if col in ("#", "tokens") else "left")
        rows = summary["injections"]
        for row in rows[:INJECTION_ROWS]:
            inj.add_row(str(row["index"]), row["event"], str(row["source"] or ""), str(row["tokens"]))
        if len(rows) > INJECTION_ROWS:
            inj.add_row(
                "…", f"{len(rows) - INJECTION_ROWS} more", "", str(sum(r["tokens"] for r in rows[INJECTION_ROWS:]))
            )
        console.print(inj)
    if show_events and records:
        ev = Table(title="Events", title_justify="left")
        for col in ("#", "event", "what", "gate", "probe", "nodes", "inj"):
            ev.add_column(col)
        for r in records:
            ev.add_row(
                str(r.index),
                r.event,
                r.label[:50],
                ",".join(r.reasons) if r.fired else "",
                str(r.probes or ""),
                str(r.nodes),
                str(r.injected_tokens or ""),
            )
        console.print(ev)
    for err in summary["errors"]:
        console.print(f"[red]event {err['index']} ({err['event']}): {err['error']}[/red]")


def register(app: typer.Typer) -> None:
    @app.command("replay")
    def replay_command(
        transcripts: Annotated[
            list[Path],
            typer.Argument(metavar="TRANSCRIPT", show_default=False,
                           help="Claude Code transcript(s), JSONL; later files of a seen session replay as a resume."),
        ],
        use_subprocess: Annotated[
            bool, typer.Option("--subprocess", help="Run each event as a real `rgraph-hook EVENT` process.")
        ] = False,
        probe: Annotated[
            str, typer.Option("--probe", help="Probe backend: offline, auto, anthropic, ollama.")
        ] = "offline",
        budget: Annotated[
            int | None, typer.Option("--budget", help="LOD token budget (default: the configured one).")
        ] = None,
        sync: Annotated[
            bool,
            typer.Option(
                "--sync/--async", help="Wait for each probe (reproducible) or detach it as in a live session."
            ),
        ] = True,
        clock: Annotated[
            str, typer.Option("--clock", help="transcript: each event at its line's time; fixed: one instant.")
        ] = "transcript",
        as_json: Annotated[bool, typer.Option("--json", help="Print the summary as JSON.")] = False,
        home: Annotated[
            Path | None, typer.Option("--home", help="State directory (default: a fresh temporary one).")
        ] = None,
        events: Annotated[bool, typer.Option("--events", help="Also list every event.")] = False,
        warm: Annotated[bool, typer.Option("--warm/--no-warm", help="Let hooks reconcile into the warm graph (PostgreSQL) too.")] = False,
        project: Annotated[Path | None, typer.Option(
            "--project", help="The project directory these sessions belong to (their recorded directories need not exist "
            "here): every event's cwd, with the recorded directory rewritten to it in paths.")] = None,
    ) -> None:
        """Replay transcripts through the hooks and summarise gate firings, probes, graph and injections."""
        missing = [str(p) for p in transcripts if not p.is_file()]
        if missing:
            raise fail(f"not a file: {', '.join(missing)}")
        strangers = [str(p) for p in transcripts if not is_transcript(p)]
        if strangers:
            raise fail(f"not a Claude Code transcript: {', '.join(strangers)} (a transcript is a .jsonl file under "
                       "~/.claude/projects/<project>/, one JSON object a line)")
        if clock not in ("transcript", "fixed"):
            raise fail(f"--clock must be 'transcript' or 'fixed', not {clock!r}")
        options = ReplayOptions(
            probe=probe, mode="sync" if sync else "async", budget=budget, clock=clock, subprocess=use_subprocess,
            warm=warm, project=str(project) if project else None,
        )
        total = count_events(transcripts)
        try:
            if as_json or total < PROGRESS_FROM:
                result = replay(transcripts, options=options, home=home)
            else:
                with Progress(
                    TextColumn("replaying"),
                    BarColumn(),
                    MofNCompleteColumn(),
                    TimeRemainingColumn(),
                    console=Console(stderr=True),
                    transient=True,
                ) as bar:
                    task = bar.add_task("replay", total=total)
                    result = replay(transcripts, options=options, home=home, on_event=lambda _r: bar.advance(task))
        except ValueError as exc:  # a bad transcript or option: one actionable line
            raise fail(str(exc)) from exc
        summary = result.summary()
        if as_json:
            typer.echo(json.dumps(summary, indent=1))
            return
        render_summary(summary, Console(), result.records, events)
