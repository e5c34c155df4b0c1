"""A compaction can come at any event: the corpus measure at every Nth event, not only at
the recorded compactions (``bench/eval_points.py``).

:mod:`rolling_graph.evaluation.corpus` scores the restore block at each ``SessionStart(compact)``
of a recorded session: the corpus's two sessions give two points, too few to choose a
ranking by (what is tuned to two points need not hold at a third). Here one honest replay
(offline probe, sync mode) pauses every ``every`` events; on a copy of its state directory
the pending batch is flushed as a ``PreCompact`` hook flushes it, and the session's graph is
kept. Each kept graph is then scored as if a compaction had come right there: the block
``SessionStart(compact)`` would inject at each budget (after a summary that names nothing,
:data:`POINT_SUMMARY`) against the names the next 40 events touch that earlier events
touched, next to the naive lists in the same characters. There is no summary, so there is
no summary-dropped figure; names are counted as :mod:`rolling_graph.evaluation.corpus` counts them
(in what the session says).

:func:`point_targets` and :func:`score_points` are pure; :func:`capture_graphs` replays.
"""

from __future__ import annotations

import multiprocessing
import os
import shutil
import tempfile
import time
from collections.abc import Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rolling_graph.core.config import RenderSettings, load_settings
from rolling_graph.evaluation.corpus import (
    BUDGETS,
    NEXT_EVENTS,
    budget_chars,
    event_names,
    list_block,
    ranked_lists,
    recall,
    session_name,
    skipped_lines,
)
from rolling_graph.hook import handle_event
from rolling_graph.render.restore import restore_block
from rolling_graph.replay.run import EventRecord, ReplayOptions, replay, replay_env
from rolling_graph.replay.transcript import HookEvent, ParseStats, parse_transcripts
from rolling_graph.store.sidecar import SidecarStore

#: The first point: fewer events than this have touched too little to rank.
FIRST_POINT = 30
#: A point whose next events touch fewer names seen before than this is not scored.
MIN_TARGETS = 5
#: The "summary" a point's block follows: the block takes its after-a-compaction form, and
#: the summary names nothing it could echo.
POINT_SUMMARY = "(no compaction summary at this point)"
LISTS = ("frequent", "recent")
#: How names are counted (:data:`rolling_graph.evaluation.corpus.METRICS`), the one a memory may
#: honestly carry first.
POINT_METRICS = ("content",)


@dataclass(frozen=True)
class Point:
    """What a memory should give back if a compaction came after the event at ``position``."""

    position: int
    touched: tuple[tuple[str, ...], ...]  # names per event up to and including it
    next40: frozenset[str]


def point_targets(per_event: Sequence[Sequence[str]], position: int, window: int = NEXT_EVENTS) -> Point:
    """The names events ``position + 1 …`` (``window`` of them) touch that an event up to
    ``position`` touched."""
    touched = tuple(tuple(names) for names in per_event[: position + 1])
    seen = {n for names in touched for n in names}
    following = {n for names in per_event[position + 1 : position + 1 + window] for n in names}
    return Point(position, touched, frozenset(following & seen))


def score_points(events: Sequence[HookEvent], graphs: dict[int, Any], budgets: Sequence[int] = BUDGETS,
                 metric: str = "content", render: RenderSettings | None = None) -> dict[str, Any]:
    """Each captured graph's block and the naive lists at each budget, per point, and their
    means over the points (``at_least_best``: the points where the block recalls at least
    the better list's share)."""
    render = render or RenderSettings()
    per_event = event_names(events, metric)
    rows: list[dict[str, Any]] = []
    for position, doc in sorted(graphs.items()):
        point = point_targets(per_event, position)
        if len(point.next40) < MIN_TARGETS:
            continue
        targets = set(point.next40)
        lists = ranked_lists(point.touched)
        row: dict[str, Any] = {"position": position, "targets": len(targets)}
        for budget in budgets:
            text = restore_block(doc, render, "compact", summary=POINT_SUMMARY, budget_tokens=budget)[0]
            figures = {"graph": recall(targets, text[: budget_chars(budget)]) or 0.0}
            figures.update({kind: recall(targets, list_block(lists[kind], budget)) or 0.0 for kind in LISTS})
            figures["best"] = max(figures[kind] for kind in LISTS)
            row[str(budget)] = {k: round(v, 4) for k, v in figures.items()}
        rows.append(row)
    return {"metric": metric, "points": rows, "mean": {str(b): mean_of([row[str(b)] for row in rows]) for b in budgets}}


def mean_of(cells: Sequence[dict[str, float]]) -> dict[str, Any]:
    """The points' mean figures (``None`` without a point) and ``at_least_best``: at how
    many the block recalls at least the better list's share."""
    return {**{m: round(sum(c[m] for c in cells) / len(cells), 4) if cells else None for m in ("graph", *LISTS, "best")},
            "points": len(cells), "at_least_best": sum(c["graph"] >= c["best"] for c in cells)}


def run_points_eval(paths: Sequence[str | os.PathLike[str]], every: int, budgets: Sequence[int] = BUDGETS,
                    metrics: Sequence[str] = POINT_METRICS, project: str | None = None, workers: int = 1) -> dict[str, Any]:
    """The points measure of each recorded session (:func:`capture_graphs`, one replay each,
    ``workers`` at a time) and over all of them: what ``rgraph eval --transcripts --every N``
    prints. A session with no compaction is measured too: this needs none."""
    if every < 1:
        raise ValueError(f"every must be at least 1, got {every}")
    started = time.perf_counter()
    jobs = [(os.fspath(path), every, tuple(budgets), tuple(metrics), project) for path in paths]
    if workers <= 1 or len(jobs) <= 1:
        sessions = [_session_points(job) for job in jobs]
    else:
        with ProcessPoolExecutor(min(workers, len(jobs)), mp_context=multiprocessing.get_context("fork")) as pool:
            sessions = list(pool.map(_session_points, jobs))
    overall = {m: {str(b): mean_of([p[str(b)] for s in sessions for p in s["scored"][m]["points"]]) for b in budgets} for m in metrics}
    return {"every": every, "budgets": list(budgets), "metrics": list(metrics), "next_events": NEXT_EVENTS, "sessions": sessions,
            "mean": overall, "elapsed_s": round(time.perf_counter() - started, 2)}


def _session_points(job: tuple[str, int, tuple[int, ...], tuple[str, ...], str | None]) -> dict[str, Any]:
    path, every, budgets, metrics, project = job
    stats = ParseStats()
    events, graphs = capture_graphs(path, every, project=project, stats=stats)
    return {"session": session_name(path, events), "transcript": path, "events": len(events), "scored": {m: score_points(events, graphs, budgets, m) for m in metrics},
            "skipped": skipped_lines(stats, bool(events))}


def capture_graphs(path: str | os.PathLike[str], every: int, first: int = FIRST_POINT,
                   project: str | None = None, stats: ParseStats | None = None) -> tuple[list[HookEvent], dict[int, Any]]:
    """Replay one recorded session honestly (offline probe, sync mode, in a throw-away state
    directory) and keep its graph at events ``first``, ``first + every``, … (positions in the
    event list), each after a ``PreCompact`` flush of what was pending, made on a copy so
    the replay goes on as if none had happened. Nothing is left running or on disk.
    ``stats``: what the parser could not read, counted there."""
    if every < 1:
        raise ValueError(f"every must be at least 1, got {every}")
    events = list(parse_transcripts([path], stats))
    options = ReplayOptions(probe="offline", mode="sync", clock="transcript", project=project)
    home = Path(tempfile.mkdtemp(prefix="rgraph-points-"))
    graphs: dict[int, Any] = {}
    position = -1

    def after_hook(record: EventRecord, payload: dict[str, Any]) -> None:
        nonlocal position
        position += 1
        if position >= first and (position - first) % every == 0 and record.event != "SessionStart":
            graphs[position] = _flushed_graph(home, options, payload, record.at)

    try:
        replay([path], options=options, home=home, after_hook=after_hook)
    finally:
        shutil.rmtree(home, ignore_errors=True)
    return events, graphs


def _flushed_graph(home: Path, options: ReplayOptions, payload: dict[str, Any], at: str | None) -> Any:
    """The session's graph after a ``PreCompact`` hook, run on a copy of ``home``."""
    scratch = Path(tempfile.mkdtemp(prefix="rgraph-point-"))
    try:
        state = scratch / "state"
        shutil.copytree(home, state)
        settings = load_settings({**os.environ, **replay_env(state, options)})
        settings = settings.at(at) if at else settings
        flush: dict[str, Any] = {k: payload[k] for k in ("session_id", "transcript_path", "cwd") if k in payload}
        flush.update(hook_event_name="PreCompact", trigger="auto", custom_instructions=None)
        handle_event("pre-compact", flush, settings)
        return SidecarStore(settings).load(str(payload["session_id"]))
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
