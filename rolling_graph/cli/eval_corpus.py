"""``rgraph eval --transcripts PATH...``: the corpus figures as a table (and the blocks).

Rendering only; the measure is :mod:`rolling_graph.corpus_eval`.
"""

from __future__ import annotations

from typing import Any

from rich import box
from rich.console import Console
from rich.table import Table

from rolling_graph.corpus_eval import FIGURES

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
            table.add_row(_short(session), "[dim]no compaction in this session[/dim]", "", "", "", "")
            table.add_section()
    console.print(table)
    console.print(f"[dim]{EXPLAIN}[/dim]")
    times = "; ".join(f"{_short(s)} " + ", ".join(f"{k} {v:.1f} s" for k, v in s["replay_s"].items()) for s in report["sessions"])
    console.print(f"[dim]replays: {times}; total {report['elapsed_s']:.1f} s[/dim]")
    for session in report["sessions"]:
        if session.get("skipped"):
            console.print(f"[yellow]{_short(session)}: {session['skipped']}[/yellow]", highlight=False)
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
