"""``rgraph eval --chain T1 T2 …``: the cross-session figures as a table (and the blocks).

Rendering only; the measure is :mod:`rolling_graph.evaluation.chain_eval`.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from rich import box
from rich.console import Console
from rich.table import Table

from rolling_graph.cli.console import fail, print_report

LABELS = {"graph": "graph (startup block)", "frequent": "most frequent", "recent": "most recent", "best": "best list"}
EXPLAIN = (
    "recall: of the names a new session's first {n} hook events use that earlier sessions of the project used, the share "
    "its SessionStart(startup) block holds; the naive lists are the earlier sessions' names, most frequent or most recent "
    "first, in the same characters ({c} a token). chars: the block's length as injected. (content): the same figures with "
    "names counted in what the sessions say (tool-input values, not the tool schema's JSON keys like file_path/old_string, "
    "no escape artefacts or redaction placeholders), for every method alike."
)


def _pct(value: float | None) -> str:
    return "—" if value is None else f"{value:.2f}"


def _yes(flag: bool) -> str:
    return "[green]yes[/green]" if flag else "[red]no[/red]"


def render_chain_report(report: dict[str, Any], console: Console, show_blocks: bool = False) -> None:
    order = ", ".join(f"{s['session'][:8]} ({s['started'][:16]}, {s['events']} events)" for s in report["sessions"])
    table = Table(title=f"Rolling Graph across sessions of one project (offline probe, honest replay): {order}",
                  title_justify="left", box=box.SIMPLE_HEAD, pad_edge=False)
    for col, justify in (("new session @ tokens", "left"), ("method", "left"), ("recall", "right"), ("chars", "right")):
        table.add_column(col, justify=justify)  # type: ignore[arg-type]
    for budget, rows in report["later"].items():
        for row in rows:
            where = f"{row['session'][:8]} (#{row['position'] + 1}) @ {budget}"
            for n, (method, figures) in enumerate(row["methods"].items()):
                label = LABELS.get(method, method)
                table.add_row(where if n == 0 else "", f"[bold]{label}[/bold]" if method == "graph" else label,
                              _pct(figures.get("recall")), str(figures.get("chars", "")))
            table.add_row("", "[dim]names[/dim]", f"[dim]{row['names']}[/dim]", "")
            content = row.get("content") or {}
            for method in ("graph", "best"):
                if method in content.get("methods", {}):
                    label = "graph" if method == "graph" else LABELS[method]
                    table.add_row("", f"[italic]{label} (content)[/italic]", _pct(content["methods"][method].get("recall")), "")
            if content:
                table.add_row("", "[dim]content names[/dim]", f"[dim]{content['names']}[/dim]", "")
            table.add_section()
    console.print(table)
    console.print(f"[dim]{EXPLAIN.format(n=report['first_events'], c=report['chars_per_token'])}[/dim]")
    for budget, rows in report["later"].items():
        for row in rows:
            prev = row["previous"]
            request = prev["requests"][0] if prev["requests"] else "(none)"
            console.print(
                f"{row['session'][:8]} @ {budget}: previous session's request shown {_yes(prev['request_shown'])} "
                f"— “{request[:90]}”; its open items shown {len(prev['open_shown'])} of {prev['open_total']}"
                + (f"; [yellow]{len(prev['closed_shown_as_open'])} completed tasks shown as open[/yellow]"
                   if prev["closed_shown_as_open"] else ""),
                highlight=False, soft_wrap=True)
            for err in row["errors"]:
                console.print(f"[red]{row['session'][:8]} @ {budget}: {err}[/red]")
    times = ", ".join(f"{b} tokens {s:.1f} s" for b, s in report["replay_s"].items())
    console.print(f"[dim]chains replayed: {times}; total {report['elapsed_s']:.1f} s[/dim]")
    if show_blocks:
        render_blocks(report, console)


def render_blocks(report: dict[str, Any], console: Console) -> None:
    """Every startup block as injected, and the opening of the best naive list, for a person to read."""
    for budget, rows in report["later"].items():
        for row in rows:
            text = row["blocks"]["graph"]
            console.rule(f"{row['session'][:8]} SessionStart(startup) @ {budget} tokens · {len(text)} chars")
            console.print(text or "(nothing injected)", markup=False, highlight=False)
            frequent = row["blocks"].get("frequent", "")
            console.rule(f"{row['session'][:8]} most frequent earlier names @ {budget} (first 300 chars)")
            console.print(frequent[:300] + ("…" if len(frequent) > 300 else ""), markup=False, highlight=False)


def run_chain_command(paths: list[Path], budgets: list[int], project: Path | None, modes: list[str] | None, *,
                      as_json: bool, show_blocks: bool) -> None:
    """The ``--chain`` branch of ``rgraph eval``: check the arguments, measure, print."""
    from rolling_graph.evaluation.chain_eval import run_chain_eval

    missing = [str(p) for p in paths if not p.is_file()]
    problem = (f"not a file: {', '.join(missing)}" if missing
               else "--chain needs at least two transcripts of one project" if len(paths) < 2
               else "with --chain, give one --mode: sync or async" if len(modes or []) > 1 or any(m not in ("sync", "async") for m in modes or [])
               else None)
    if problem:
        raise fail(problem)
    print_report(lambda: run_chain_eval(paths, budgets, str(project) if project else None, mode=(modes or ["sync"])[0]),
                 lambda report, console: render_chain_report(report, console, show_blocks), as_json)
