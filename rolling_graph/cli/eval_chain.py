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
    "first, in the same characters ({c} a token). chars: the block's length as injected. Names are counted in what the "
    "sessions say (prompts and tool-input values). Pooled: names recalled over the later sessions / names they needed; "
    "best list: the list with the higher pooled figure."
)


def _pct(value: float | None) -> str:
    return "—" if value is None else f"{value:.2f}"


def _yes(flag: bool) -> str:
    return "[green]yes[/green]" if flag else "[red]no[/red]"


def render_chain_report(report: dict[str, Any], console: Console, show_blocks: bool = False, cells: bool = False) -> None:
    pooled = Table(title=f"Startup blocks over {len(report['sessions']) - 1} later sessions of one project, pooled "
                         "(offline probe, honest replay)", title_justify="left", box=box.SIMPLE_HEAD, pad_edge=False, padding=(0, 1))
    for col, justify in (("tokens", "left"), ("graph", "right"), ("freq.", "right"), ("recent", "right"), ("best", "left"),
                         ("÷best", "right"), ("names", "right")):
        pooled.add_column(col, justify=justify, no_wrap=True)  # type: ignore[arg-type]
    for budget, p in (report.get("pooled") or {}).items():
        ratio = f"{p['graph'] / p['best']:.2f}" if p["graph"] is not None and p["best"] else "—"
        pooled.add_row(budget, f"[bold]{_pct(p['graph'])}[/bold]", _pct(p["frequent"]), _pct(p["recent"]),
                       "freq." if p["best_list"] == "frequent" else p["best_list"], ratio, str(p["names"]))
    console.print(pooled)
    for budget, f in (report.get("foreseen") or {}).items():
        if not f["sessions"]:
            console.print(f"During the work @ {budget} tokens: not measured — it counts the sessions after the first ten, "
                          f"and this chain has {len(report['sessions'])}.", highlight=False, soft_wrap=True)
            continue
        console.print(
            f"During the work @ {budget} tokens, {f['sessions']} sessions after the first ten, {f['used']} known names used: "
            f"foreseen by the memory {_pct(f['memory'])}, the startup block alone {_pct(f['startup'])}, the front-loaded baseline "
            f"{_pct(f['baseline'])} (×{f['vs_baseline'] or 0:.2f} the baseline, ×{f['vs_startup'] or 0:.2f} the startup block); "
            f"notes' precision {_pct(f['precision'])} of {f['surfaced']} surfaced; notes cost {f['note_chars_per_100_events']} chars "
            f"per 100 events (most in a session {f['max_note_chars_in_a_session']}, session budget {f['session_budget_chars']}); "
            f"the tool-time notes alone: precision {_pct(f.get('tool_precision'))} of {f.get('tool_surfaced', 0)}, "
            f"{f.get('tool_note_chars_per_100_events')} chars per 100 events",
            highlight=False, soft_wrap=True)
    table = Table(title="Each later session", title_justify="left", box=box.SIMPLE_HEAD, pad_edge=False)
    for col, justify in (("new session @ tokens", "left"), ("method", "left"), ("recall", "right"), ("chars", "right")):
        table.add_column(col, justify=justify)  # type: ignore[arg-type]
    for budget, rows in report["later"].items() if cells else ():
        for row in rows:
            where = f"{row['session'][:8]} (#{row['position'] + 1}) @ {budget}"
            for n, (method, figures) in enumerate(row["methods"].items()):
                label = LABELS.get(method, method)
                table.add_row(where if n == 0 else "", f"[bold]{label}[/bold]" if method == "graph" else label,
                              _pct(figures.get("recall")), str(figures.get("chars", "")))
            table.add_row("", "[dim]names[/dim]", f"[dim]{row['names']}[/dim]", "")
            table.add_section()
    if cells:
        console.print(table)
    console.print(f"[dim]{EXPLAIN.format(n=report['first_events'], c=report['chars_per_token'])}[/dim]")
    for budget, rows in report["later"].items() if cells else ():
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


def chain_files(given: list[Path]) -> list[Path]:
    """The transcripts of a chain: files as given; a directory's ``*.jsonl`` in the order of its
    ``index.json`` (a list of ``{"file": …}`` in time order) when it has one, else all of them."""
    import json

    out: list[Path] = []
    for path in given:
        index = path / "index.json"
        if path.is_dir() and index.is_file():
            try:
                rows = json.loads(index.read_text(encoding="utf-8"))
                out += [path / str(row["file"]) for row in rows]
            except (ValueError, TypeError, KeyError) as exc:
                raise fail(f"{index} is not a list of {{\"file\": …}} rows ({type(exc).__name__}); fix it or remove it") from None
        elif path.is_dir():
            out += sorted(path.rglob("*.jsonl"))
        else:
            out.append(path)
    return out


def run_chain_command(given: list[Path], budgets: list[int], project: Path | None, modes: list[str] | None, *,
                      as_json: bool, show_blocks: bool, cells: bool = False) -> None:
    """The ``--chain`` branch of ``rgraph eval``: check the arguments, measure, print."""
    from rolling_graph.evaluation.chain_eval import run_chain_eval

    paths = chain_files(given)
    missing = [str(p) for p in paths if not p.is_file()]
    problem = (f"not a file: {', '.join(missing)}" if missing
               else "--chain needs at least two transcripts of one project" if len(paths) < 2
               else "with --chain, give one --mode: sync or async" if len(modes or []) > 1 or any(m not in ("sync", "async") for m in modes or [])
               else None)
    if problem:
        raise fail(problem)
    print_report(lambda: run_chain_eval(paths, budgets, str(project) if project else None, mode=(modes or ["sync"])[0]),
                 lambda report, console: render_chain_report(report, console, show_blocks, cells), as_json)
