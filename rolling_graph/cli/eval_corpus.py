"""``rgraph eval --transcripts PATH...``: the corpus figures as a table (and the blocks), or
with ``--every N`` the points measure (:mod:`rolling_graph.evaluation.points`).

Rendering only; the measure is :mod:`rolling_graph.evaluation.corpus`.
"""

from __future__ import annotations

from typing import Any

from rich import box
from rich.console import Console
from rich.table import Table

from rolling_graph.evaluation.corpus import FIGURES

LABELS = {"frequent": "most frequent", "recent": "most recent", "best": "best list"}
EXPLAIN = (
    "next-40: names the 40 hook events after SessionStart(compact) touch that the session had touched before. "
    "dropped: those of them Claude's summary does not name. summary: names of the summary seen before the "
    "compaction (for information: echoing the summary scores here and helps nobody). Names are counted in what the "
    "session says (prompts and tool-input values). Every method gets the same characters (3 a token); chars: the "
    "graph block's length as injected. Pooled: names recalled over all compactions / gold names; best list: the list "
    "with the higher pooled figure; cells won: compactions where the block's next-40 recall is at least the better list's."
)
POOLED_FIGURES = ("next40", "dropped")


def render_pooled(report: dict[str, Any], console: Console) -> None:
    """The pooled figures: per budget and mode, the block next to both lists and the best list."""
    pooled = report.get("pooled") or {}
    table = Table(title=f"Pooled over {pooled.get('cells', 0)} compactions (offline probe, honest replay)", title_justify="left",
                  box=box.SIMPLE_HEAD, pad_edge=False, padding=(0, 1))
    for col, justify in (("tokens", "left"), ("figure", "left"), ("graph", "right"), ("freq.", "right"),
                         ("recent", "right"), ("best", "left"), ("÷best", "right"), ("names", "right"), ("won", "right")):
        table.add_column(col, justify=justify, no_wrap=True)  # type: ignore[arg-type]
    for budget in map(str, report["budgets"]):
        for mode in report["modes"]:
            entry = pooled.get(budget, {}).get(mode)
            if not entry:
                continue
            for n, figure in enumerate(POOLED_FIGURES):
                f = entry[figure]
                ratio = f"{f['graph'] / f['best']:.2f}" if f["graph"] is not None and f["best"] else "—"
                won = f"{entry['cells_won']}/{entry['cells']}" if n == 0 else ""
                table.add_row(f"{budget} {mode}" if n == 0 else "", "next-40" if figure == "next40" else figure,
                              f"[bold]{_pct(f['graph'])}[/bold]", _pct(f["frequent"]), _pct(f["recent"]),
                              "freq." if f["best_list"] == "frequent" else f["best_list"], ratio,
                              str(f["names"]), won)
            table.add_section()
    console.print(table)


def _pct(value: float | None) -> str:
    return "—" if value is None else f"{value:.2f}"


def _short(session: dict[str, Any]) -> str:
    return str(session["session"])[:8]


def render_corpus_report(report: dict[str, Any], console: Console, show_blocks: bool = False, cells: bool = False) -> None:
    if not any(s["compactions"] for s in report["sessions"]):
        one = len(report["sessions"]) == 1
        console.print(f"[yellow]no compaction in {'this session' if one else 'these sessions'} (--every 8 measures "
                      f"{'it' if one else 'them'} at every 8th event)[/yellow]")
    else:
        render_pooled(report, console)
    if cells:
        render_cells(report, console)
    console.print(f"[dim]{EXPLAIN}[/dim]")
    console.print(f"[dim]{len(report['sessions'])} sessions, replays {report['elapsed_s']:.1f} s[/dim]")
    for session in report["sessions"]:
        _print_skipped(session, console)
        for err in session["errors"]:
            console.print(f"[red]{_short(session)}: {err}[/red]")
    if show_blocks:
        render_blocks(report, console)


def render_cells(report: dict[str, Any], console: Console) -> None:
    """Every compaction's figures: the block and the lists, at each budget."""
    table = Table(title="Rolling Graph on recorded sessions (offline probe, honest replay)", title_justify="left",
                  box=box.SIMPLE_HEAD, pad_edge=False)
    for col, justify in (("session · compaction @ tokens", "left"), ("method", "left"), ("next-40", "right"),
                         ("dropped", "right"), ("summary", "right"), ("chars", "right")):
        table.add_column(col, justify=justify)  # type: ignore[arg-type]
    for session in report["sessions"]:
        for n, compaction in enumerate(session["compactions"], 1):
            sizes = compaction["sizes"]
            for budget, entry in compaction["budgets"].items():
                where = f"{_short(session)} #{n} @ {budget}"
                first = True
                for method, figures in entry["methods"].items():
                    label = LABELS.get(method, method.replace("graph-", "graph "))
                    bold = method.startswith("graph")
                    table.add_row(where if first else "", f"[bold]{label}[/bold]" if bold else label,
                                  *(_pct(figures.get(f)) for f in FIGURES), str(figures.get("chars", "")))
                    first = False
                table.add_row("", "[dim]names[/dim]", *(f"[dim]{sizes[f]}[/dim]" for f in FIGURES), "")
                table.add_section()
    console.print(table)


def render_blocks(report: dict[str, Any], console: Console) -> None:
    """Every graph block as injected, and the best list's opening, for a person to read."""
    for session in report["sessions"]:
        for n, compaction in enumerate(session["compactions"], 1):
            for budget, entry in compaction["budgets"].items():
                for method, text in entry["blocks"].items():
                    if not method.startswith("graph"):
                        continue
                    console.rule(f"{_short(session)} compaction #{n} · {method} @ {budget} tokens · {len(text)} chars")
                    console.print(text or "(nothing injected)", markup=False, highlight=False)
                    gap = entry.get("gaps", {}).get(method)
                    if gap:
                        console.print(f"[dim]next-40 names only the {LABELS.get(gap['list'], gap['list'])} list recalls: "
                                      f"{_names(gap['list_only'])}; only this block: {_names(gap['graph_only'])}[/dim]",
                                      highlight=False)
                recent = entry["blocks"].get("recent", "")
                console.rule(f"{_short(session)} compaction #{n} · most recent names @ {budget} (first 300 chars)")
                console.print(recent[:300] + ("…" if len(recent) > 300 else ""), markup=False, highlight=False)


def _names(names: list[str]) -> str:
    """``a, b, c``; ``none``."""
    from rich.markup import escape

    return escape(", ".join(names)) or "none"


POINTS_EXPLAIN = (
    "At every {nth} hook event (from the {first}th) the replay stops as if a compaction came there: the block "
    "SessionStart(compact) would inject is scored on the names the next {next} events touch that earlier events "
    "touched, next to the naive lists (most frequent, most recent names) in the same characters. better: the "
    "better list at each point, chosen after the fact; ≥ better: at how many points the block recalls at least as much. Names "
    "are counted in what the session says (prompts and tool-input values). Offline probe, sync mode."
)


def render_points_report(report: dict[str, Any], console: Console) -> None:
    """``rgraph eval --transcripts … --every N``: per session and over all, per metric and budget."""
    from rolling_graph.evaluation.points import FIRST_POINT

    table = Table(title=f"Rolling Graph at every {_nth(report['every'])} event of recorded sessions (mean next-40 recall)",
                  title_justify="left", box=box.SIMPLE_HEAD, pad_edge=False, collapse_padding=True)
    for col, justify in (("session", "left"), ("names", "left"), ("tokens", "right"), ("points", "right"), ("graph", "right"),
                         ("frequent", "right"), ("recent", "right"), ("better", "right"), ("≥ better", "right")):
        table.add_column(col, justify=justify)  # type: ignore[arg-type]
    rows = [(_short(s), {m: s["scored"][m]["mean"] for m in report["metrics"]}) for s in report["sessions"]]
    if len(rows) > 1:
        rows.append(("all", report["mean"]))
    for name, by_metric in rows:
        first = True
        for metric in report["metrics"]:
            for budget in report["budgets"]:
                m = by_metric[metric][str(budget)]
                figures = ("—",) * 5 if not m["points"] else (
                    f"[bold]{_pct(m['graph'])}[/bold]", _pct(m["frequent"]), _pct(m["recent"]), _pct(m["best"]), f"{m['at_least_best']}")
                table.add_row(f"[bold]{name}[/bold]" if first else "", metric, str(budget), str(m["points"]), *figures)
                first = False
        table.add_section()
    console.print(table)
    console.print(f"[dim]{POINTS_EXPLAIN.format(nth=_nth(report['every']), first=FIRST_POINT, next=report['next_events'])}[/dim]")
    console.print(f"[dim]{report['elapsed_s']:.1f} s[/dim]")
    for session in report["sessions"]:
        if _print_skipped(session, console):
            continue
        if not any(session["scored"][m]["points"] for m in report["metrics"]):
            console.print(f"[yellow]{_short(session)}: no point with {report['next_events']} events after it and enough names "
                          f"({session['events']} events)[/yellow]", highlight=False)


def _print_skipped(session: dict[str, Any], console: Console) -> bool:
    """Say what of a session's file the parser could not read; True if anything."""
    if session.get("skipped"):
        console.print(f"[yellow]{_short(session)}: {session['skipped']}[/yellow]", highlight=False)
    return bool(session.get("skipped"))


def _nth(n: int) -> str:
    """``1st``, ``2nd``, ``8th``, ``12th``, ``23rd``."""
    return f"{n}{'th' if 10 <= n % 100 <= 20 else {1: 'st', 2: 'nd', 3: 'rd'}.get(n % 10, 'th')}"
