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
    "compaction (for information: echoing the summary scores here and helps nobody). Every method gets the same "
    "characters (3 a token); chars: the graph block's length as injected. (content): the same figures with names counted in what "
    "the session says (tool-input values, not the tool schema's JSON keys like file_path/old_string, no escape artefacts or "
    "redaction placeholders), for every method alike."
)


def _pct(value: float | None) -> str:
    return "—" if value is None else f"{value:.2f}"


def _short(session: dict[str, Any]) -> str:
    return str(session["session"])[:8]


def render_corpus_report(report: dict[str, Any], console: Console, show_blocks: bool = False) -> None:
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
                content = entry.get("content") or {}
                for method in ("graph-sync", "graph-async", "best"):
                    if method in content:
                        label = LABELS.get(method, method.replace("graph-", "graph "))
                        table.add_row("", f"[italic]{label} (content)[/italic]", *(_pct(content[method].get(f)) for f in FIGURES), "")
                if content:
                    csizes = compaction.get("content_sizes", {})
                    table.add_row("", "[dim]content names[/dim]", *(f"[dim]{csizes.get(f, '')}[/dim]" for f in FIGURES), "")
                table.add_section()
        if not session["compactions"]:
            table.add_row(_short(session), "[dim]no compaction in this session (--every 8 measures it at every 8th event)[/dim]",
                          "", "", "", "")
            table.add_section()
    console.print(table)
    console.print(f"[dim]{EXPLAIN}[/dim]")
    times = "; ".join(f"{_short(s)} " + ", ".join(f"{k} {v:.1f} s" for k, v in s["replay_s"].items()) for s in report["sessions"])
    console.print(f"[dim]replays: {times}; total {report['elapsed_s']:.1f} s[/dim]")
    for session in report["sessions"]:
        _print_skipped(session, console)
        for err in session["errors"]:
            console.print(f"[red]{_short(session)}: {err}[/red]")
    if show_blocks:
        render_blocks(report, console)


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
                                      f"{_names(gap['list_only'])}; only this block: {_names(gap['graph_only'])} "
                                      "(* not counted by the content measure: a tool-schema key, an escape artefact or a placeholder)[/dim]",
                                      highlight=False)
                recent = entry["blocks"].get("recent", "")
                console.rule(f"{_short(session)} compaction #{n} · most recent names @ {budget} (first 300 chars)")
                console.print(recent[:300] + ("…" if len(recent) > 300 else ""), markup=False, highlight=False)


def _names(side: list[dict[str, Any]]) -> str:
    """``a, b*, c`` (``*``: not a name the content measure counts); ``none``."""
    from rich.markup import escape

    return escape(", ".join(f"{g['name']}{'' if g['content'] else '*'}" for g in side)) or "none"


POINTS_EXPLAIN = (
    "At every {nth} hook event (from the {first}th) the replay stops as if a compaction came there: the block "
    "SessionStart(compact) would inject is scored on the names the next {next} events touch that earlier events "
    "touched, next to the naive lists (most frequent, most recent names) in the same characters. better: the "
    "better list at each point, chosen after the fact; ≥ better: at how many points the block recalls at least as much. content: names in what "
    "the session says (tool-input values); readme: the corpus README's count (JSON keys of the tool schema included). "
    "Offline probe, sync mode."
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
