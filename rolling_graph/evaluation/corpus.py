"""Memory quality on real recorded sessions, without gold labels (``rgraph eval --transcripts``).

The measure is the corpus README's (``../shared/corpus/README.md``), implemented here once:

**Names.** File basenames — a path token ending in a source-file extension, lower-cased —
and code names — identifiers of 4–60 characters containing ``_`` or ``.`` or a
lower-to-upper camel step, lower-cased (:func:`names_in`). A name is *recalled* by a text
when it occurs, lower-cased, anywhere in it (:func:`recalled`).

**Touched.** The names of an event are those of what the session says there: its prompt
(UserPromptSubmit) or the string *values* of its tool input (PostToolUse; never the tool
schema's JSON keys such as ``file_path``, never escape artefacts), upstream redaction
placeholders (``redacted_*``) dropped; other events touch nothing (:func:`event_names`).
"Hook events" are the events a replay produces (:mod:`rolling_graph.replay.transcript`).

**Per compaction** (each ``SessionStart(compact)``; :func:`compaction_targets`):

1. *next-40*: names the 40 hook events after ``SessionStart(compact)`` touch that some
   event before the compaction touched — what the agent needed next;
2. *summary-dropped*: those of (1) that are not among the names of Claude's compaction
   summary (a name that only occurs inside a longer one there, ``tool_use`` in
   ``tool_use_id``, was dropped);
3. *summary names* (for information): names in the summary that an event before the
   compaction touched.

**Methods**, all cut to the same characters (3 a token: 800 tokens = 2,400 characters):
the graph's injected ``SessionStart(compact)`` block, produced at that budget by the real
hooks in an honest replay (offline probe, sync or async); and two naive lists of the names
touched so far, joined with ``", "`` — *frequent* (most often touched first) and *recent*
(most recently touched first): per event, not per mention — a name counts once for each
event that touched it, and its recency is the last such event; ties go to the name touched
first. *best list* is, per figure, the better of the two.

**Pooled** (:func:`pooled`): over all cells (compactions), names recalled / gold names, per
method, figure and budget; the *best list* is the one list with the higher pooled figure; a
*cell won* is one where the block's next-40 recall is at least the better list's in that
cell (cells with no gold name left out).

Everything above :func:`run_corpus_eval` is pure.
"""

from __future__ import annotations

import multiprocessing
import re
import shutil
import tempfile
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rolling_graph.replay.run import ReplayOptions, replay
from rolling_graph.replay.transcript import HookEvent, ParseStats, parse_transcripts

CHARS_PER_TOKEN = 3
BUDGETS = (800, 400)
MODES = ("sync", "async")
#: Hook events after ``SessionStart(compact)`` whose names count as "needed next".
NEXT_EVENTS = 40
FIGURES = ("next40", "dropped", "summary")
METHODS = ("graph", "frequent", "recent", "best")

#: Extensions that make a path token a source file.
SOURCE_EXTENSIONS = frozenset(
    """py pyi ipynb ex exs heex eex leex js jsx mjs cjs ts tsx vue svelte css scss sass less html htm
    json jsonl md mdx rst txt toml yaml yml ini cfg conf lock sh bash zsh fish sql rb erb go rs java
    kt kts scala swift c h cc cpp cxx hpp m mm cs fs php pl lua r jl dart elm erl hrl clj nim zig
    xml svg proto graphql gql tf dockerfile makefile gradle""".split()
)
_PATH_TOKEN = re.compile(r"[\w.@~+-]+(?:/[\w.@~+-]+)*")
#: An identifier, dotted parts included (``Enum.map``, ``socket.assigns.x``, ``fum.3``).
_IDENTIFIER = re.compile(r"\b[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z0-9_]+)*")
_CAMEL_STEP = re.compile(r"[a-z][A-Z]")
NAME_MIN, NAME_MAX = 4, 60


# ------------------------------------------------------------------ names
def names_in(text: str) -> list[str]:
    """The names in ``text``, lower-cased, in order of occurrence (repeats kept)."""
    found: list[str] = []
    for m in _PATH_TOKEN.finditer(text):
        token = m.group(0).rstrip(".")
        base = token.rsplit("/", 1)[-1]
        ext = base.rsplit(".", 1)[-1].lower() if "." in base else ""
        if ext in SOURCE_EXTENSIONS and base[: -len(ext) - 1]:
            found.append(base.lower())
    for m in _IDENTIFIER.finditer(text):
        ident = m.group(0)
        if NAME_MIN <= len(ident) <= NAME_MAX and ("_" in ident or "." in ident or _CAMEL_STEP.search(ident)):
            found.append(ident.lower())
    return found


def _strings(value: Any) -> Iterator[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for item in value.values():
            yield from _strings(item)
    elif isinstance(value, list):
        for item in value:
            yield from _strings(item)


def content_text(event: HookEvent) -> str:
    """What an event touches, as content: its prompt, or the string *values* of its tool input
    (no JSON keys such as ``file_path``/``old_string``, no ``\\n`` escape artefacts)."""
    payload = event.payload
    if event.hook_event_name == "UserPromptSubmit":
        return str(payload.get("prompt") or "")
    if event.hook_event_name == "PostToolUse":
        return "\n".join(_strings(payload.get("tool_input")))
    return ""


#: Names that are upstream redaction placeholders (``[REDACTED_EMAIL]``), not the session's.
PLACEHOLDER_PREFIXES = ("redacted_",)


def content_names(text: str) -> list[str]:
    return [n for n in names_in(text) if not n.startswith(PLACEHOLDER_PREFIXES)]


#: How names are counted: ``content``, what the session says (tool-input values, placeholders
#: dropped), as ``../shared/corpus/README.md`` defines it.
METRICS: dict[str, tuple[Callable[[HookEvent], str], Callable[[str], list[str]]]] = {
    "content": (content_text, content_names),
}


def event_names(events: Iterable[HookEvent], metric: str = "content") -> list[list[str]]:
    text_of, names_of = METRICS[metric]
    return [names_of(text_of(e)) for e in events]


def recalled(names: Iterable[str], text: str | None) -> set[str]:
    low = (text or "").lower()
    return {n for n in names if n in low}


def recall(names: set[str], text: str | None) -> float | None:
    return len(recalled(names, text)) / len(names) if names else None


# ------------------------------------------------------------------ the naive lists
def budget_chars(budget_tokens: int) -> int:
    return budget_tokens * CHARS_PER_TOKEN


def ranked_lists(touched: Sequence[Sequence[str]]) -> dict[str, list[str]]:
    """The names touched so far (one list per event, in order), each name once: *frequent*
    by the number of events that touched it, *recent* by the last event that touched it;
    ties in both go to the name touched first."""
    count: dict[str, int] = {}
    last: dict[str, int] = {}  # insertion order: first touched first
    for event, names in enumerate(touched):
        for name in dict.fromkeys(names):
            count[name] = count.get(name, 0) + 1
            last[name] = event
    return {"frequent": sorted(count, key=lambda n: -count[n]), "recent": sorted(last, key=lambda n: -last[n])}


def list_block(names: Sequence[str], budget_tokens: int) -> str:
    return ", ".join(names)[: budget_chars(budget_tokens)]


# ------------------------------------------------------------------ per compaction
@dataclass(frozen=True)
class Compaction:
    """What a memory should give back at one ``SessionStart(compact)``."""

    index: int  # the SessionStart(compact) event's index
    position: int  # its position in the event list
    summary: str
    touched: tuple[tuple[str, ...], ...]  # names per event before the compaction
    next40: frozenset[str]
    dropped: frozenset[str]
    summary_names: frozenset[str]

    def targets(self) -> dict[str, frozenset[str]]:
        return {"next40": self.next40, "dropped": self.dropped, "summary": self.summary_names}


def compaction_targets(events: Sequence[HookEvent], window: int = NEXT_EVENTS, metric: str = "content") -> list[Compaction]:
    """One :class:`Compaction` per ``SessionStart(compact)`` in ``events`` (one session),
    names counted the ``metric`` way (:data:`METRICS`)."""
    per_event = event_names(events, metric)
    names_of = METRICS[metric][1]
    out = []
    for pos, event in enumerate(events):
        if event.hook_event_name != "SessionStart" or event.payload.get("source") != "compact":
            continue
        touched = tuple(tuple(n) for n in per_event[:pos])
        seen = {n for names in touched for n in names}
        nxt = {n for names in per_event[pos + 1 : pos + 1 + window] for n in names} & seen
        summary = event.compact_summary or ""
        in_summary = set(names_of(summary))
        out.append(Compaction(event.index, pos, summary, touched, frozenset(nxt), frozenset(nxt - in_summary),
                              frozenset(in_summary & seen)))
    return out


def score(compaction: Compaction, text: str | None) -> dict[str, float | None]:
    return {figure: recall(set(names), text) for figure, names in compaction.targets().items()}


def hits(compaction: Compaction, text: str | None) -> dict[str, int]:
    """How many names of each figure ``text`` recalls."""
    return {figure: len(recalled(names, text)) for figure, names in compaction.targets().items()}


def baseline_scores(compaction: Compaction, budget_tokens: int) -> dict[str, dict[str, Any]]:
    """Scores of the frequent and recent lists (with their ``hits``) and of the better of the
    two in this cell, per figure."""
    lists = ranked_lists(compaction.touched)
    out: dict[str, dict[str, Any]] = {}
    for kind, names in lists.items():
        block = list_block(names, budget_tokens)
        out[kind] = {**score(compaction, block), "hits": hits(compaction, block)}
    out["best"] = {f: _best(out[k][f] for k in lists) for f in FIGURES}
    return out


def gaps(compaction: Compaction, text: str, budget_tokens: int, lists: dict[str, str] | None = None) -> dict[str, Any]:
    """Where the graph's block and the best list (by next-40) part, in next-40 names: those
    only the list recalls and those only the block does. ``lists``: :func:`baseline_blocks`
    of the compaction at this budget, when at hand."""
    lists = lists or baseline_blocks(compaction, budget_tokens)
    best = max(lists, key=lambda kind: (recall(set(compaction.next40), lists[kind]) or 0.0, kind == "recent"))
    block, listed = text[: budget_chars(budget_tokens)].lower(), lists[best].lower()
    return {"list": best,
            "list_only": sorted(n for n in compaction.next40 if n in listed and n not in block),
            "graph_only": sorted(n for n in compaction.next40 if n in block and n not in listed)}


def _best(values: Iterable[float | None]) -> float | None:
    known = [v for v in values if v is not None]
    return max(known) if known else None


def baseline_blocks(compaction: Compaction, budget_tokens: int) -> dict[str, str]:
    return {kind: list_block(names, budget_tokens) for kind, names in ranked_lists(compaction.touched).items()}


# ------------------------------------------------------------------ the I/O edge
def _round(value: float | None) -> float | None:
    return None if value is None else round(value, 4)


@dataclass(frozen=True)
class _Replay:
    """One honest replay to run: a session at one probe mode and budget."""

    path: str
    mode: str
    budget: int
    project: str | None
    home: str
    indices: tuple[int, ...]  # the SessionStart(compact) events whose blocks to keep


def _run_replay(job: _Replay) -> tuple[dict[int, str], float, list[str]]:
    """The injected block at each compaction, the replay's time, and any hook errors."""
    options = ReplayOptions(probe="offline", mode=job.mode, budget=job.budget, clock="transcript", project=job.project)
    result = replay([job.path], options=options, home=job.home)
    by_index = {r.index: r for r in result.records}
    blocks = {i: (by_index[i].injection or "") if i in by_index else "" for i in job.indices}
    errors = [f"{job.mode}@{job.budget} event {r.index} ({r.event}): {r.error}" for r in result.records if r.error][:5]
    return blocks, round(result.elapsed_s, 2), errors


def _run_all(jobs: Sequence[_Replay], workers: int) -> list[tuple[dict[int, str], float, list[str]]]:
    if workers <= 1 or len(jobs) <= 1:
        return [_run_replay(j) for j in jobs]

    with ProcessPoolExecutor(min(workers, len(jobs)), mp_context=multiprocessing.get_context("fork")) as pool:
        return list(pool.map(_run_replay, jobs))


def _session_report(path: Path, events: Sequence[HookEvent], compactions: Sequence[Compaction], budgets: Sequence[int],
                    modes: Sequence[str], runs: dict[tuple[str, int], tuple[dict[int, str], float, list[str]]]) -> dict[str, Any]:
    out = []
    for c in compactions:
        per_budget: dict[str, Any] = {}
        for budget in budgets:
            methods: dict[str, Any] = {}
            blocks: dict[str, str] = {}
            for mode in modes:
                text = runs[(mode, budget)][0][c.index]
                blocks[f"graph-{mode}"] = text
                # Every method gets the same characters: a block over budget is not rewarded for it.
                shown = text[: budget_chars(budget)]
                methods[f"graph-{mode}"] = {**{f: _round(v) for f, v in score(c, shown).items()}, "hits": hits(c, shown),
                                            "chars": len(text)}
            for kind, figures in baseline_scores(c, budget).items():
                methods[kind] = {f: (v if f == "hits" else _round(v)) for f, v in figures.items()}
            lists = baseline_blocks(c, budget)
            per_budget[str(budget)] = {"methods": methods, "blocks": {**blocks, **lists},
                                       "gaps": {name: gaps(c, text, budget, lists) for name, text in blocks.items()}}
        out.append({"index": c.index, "sizes": {f: len(s) for f, s in c.targets().items()}, "summary_chars": len(c.summary),
                    "budgets": per_budget})
    return {
        "transcript": str(path),
        "session": session_name(path, events),
        "events": len(events),
        "compactions": out,
        "replay_s": {f"{mode}@{budget}": run[1] for (mode, budget), run in runs.items()},
        "errors": [e for run in runs.values() for e in run[2]],
    }


def pooled(report: dict[str, Any]) -> dict[str, Any]:
    """The report's figures pooled over its cells: per budget and graph mode, for next-40 and
    summary-dropped, ``names recalled / gold names`` of the block and of each list, the best
    list (the list with the higher pooled figure), and the cells won (the block's next-40
    recall at least the better list's in that cell; cells with no gold name left out)."""
    out: dict[str, Any] = {"cells": sum(len(s["compactions"]) for s in report["sessions"])}
    for budget in map(str, report["budgets"]):
        per_mode: dict[str, Any] = {}
        for mode in report["modes"]:
            graph = f"graph-{mode}"
            got = {m: dict.fromkeys(("next40", "dropped"), 0) for m in (graph, "frequent", "recent")}
            gold = dict.fromkeys(("next40", "dropped"), 0)
            won = cells = 0
            for session in report["sessions"]:
                for compaction in session["compactions"]:
                    methods = compaction["budgets"][budget]["methods"]
                    for figure in gold:
                        gold[figure] += compaction["sizes"][figure]
                        for m in got:
                            got[m][figure] += methods[m]["hits"][figure]
                    if compaction["sizes"]["next40"]:
                        cells += 1
                        won += methods[graph]["hits"]["next40"] >= max(methods[k]["hits"]["next40"] for k in ("frequent", "recent"))
            figures: dict[str, Any] = {}
            for figure, n in gold.items():
                share = {m: round(got[m][figure] / n, 4) if n else None for m in got}
                best = max(("frequent", "recent"), key=lambda k: (share[k] or 0.0, k == "recent"))
                figures[figure] = {"graph": share[graph], "frequent": share["frequent"], "recent": share["recent"],
                                   "best": share[best], "best_list": best, "names": n}
            per_mode[mode] = {**figures, "cells_won": won, "cells": cells}
        out[budget] = per_mode
    return out


def session_name(path: str | Path, events: Sequence[HookEvent]) -> str:
    """How a report names a recorded session: its id, else (no event read) its file's stem."""
    return str(events[0].payload["session_id"]) if events else Path(path).stem


def skipped_lines(stats: ParseStats, any_event: bool) -> str | None:
    """What the parser could not read, said plainly (``None``: nothing): ``not a Claude Code
    transcript: 3 lines, 2 not JSON, …`` when no hook event came of the file, else ``2 of 90
    lines skipped: …``."""
    parts = [f"{n} {what}" for n, what in ((stats.bad_json, "not JSON"), (stats.not_object, "not a JSON object"),
                                         (stats.unknown_type, "of an unknown type")) if n]
    lines = f"{stats.lines} line{'s' if stats.lines != 1 else ''}"
    if not any_event:
        return "not a Claude Code transcript: " + ", ".join([lines, *parts]) if parts else f"not a Claude Code transcript: {lines}"
    if not parts:
        return None
    return f"{stats.bad_json + stats.not_object + stats.unknown_type} of {lines} skipped: " + ", ".join(parts)


def run_corpus_eval(paths: Sequence[Path], budgets: Sequence[int] = BUDGETS, modes: Sequence[str] = MODES,
                    project: str | None = None, home: Path | None = None, workers: int = 1) -> dict[str, Any]:
    """Replay each transcript (one session each, in throw-away state directories) honestly
    with the offline probe once per mode and budget — ``workers`` replays at a time — and
    score every compaction's restore block next to the naive lists. The state directories
    are deleted afterwards unless ``home`` says where to keep them."""
    started = time.perf_counter()
    base = home or Path(tempfile.mkdtemp(prefix="rgraph-eval-"))
    try:
        return _evaluate_all(paths, budgets, modes, project, base, workers, started, keep=home is not None)
    finally:
        if home is None:
            shutil.rmtree(base, ignore_errors=True)


def _evaluate_all(paths: Sequence[Path], budgets: Sequence[int], modes: Sequence[str], project: str | None, base: Path,
                  workers: int, started: float, keep: bool) -> dict[str, Any]:
    parsed = []
    jobs: list[_Replay] = []
    for n, path in enumerate(Path(p) for p in paths):
        stats = ParseStats()
        events = list(parse_transcripts([path], stats))
        compactions = compaction_targets(events)
        parsed.append((path, events, compactions, stats))
        indices = tuple(c.index for c in compactions)
        if indices:  # a session that never compacts has no cell: nothing to replay
            jobs += [_Replay(str(path), m, b, project, str(base / f"{n}-{path.stem}-{m}-{b}"), indices) for m in modes for b in budgets]
    results = iter(_run_all(jobs, workers))
    sessions = []
    for path, events, compactions, stats in parsed:
        runs = {(m, b): next(results) for m in modes for b in budgets} if compactions else {}
        sessions.append({**_session_report(path, events, compactions, budgets, modes, runs), "skipped": skipped_lines(stats, bool(events))})
    report = {"budgets": list(budgets), "modes": list(modes), "next_events": NEXT_EVENTS, "chars_per_token": CHARS_PER_TOKEN,
              "sessions": sessions, "elapsed_s": round(time.perf_counter() - started, 2), "home": str(base) if keep else None}
    report["pooled"] = pooled(report)
    return report
