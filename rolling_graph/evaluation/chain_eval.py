"""Cross-session memory on recorded sessions of one project (``rgraph eval --chain T1 T2 …``).

The sessions are replayed honestly, in time order, into a fresh warm graph
(:func:`rolling_graph.evaluation.chain.replay_chain`, offline probe, ``--project`` so that
worktrees are one project). For each later session the measure is the corpus README's
(names: :func:`rolling_graph.evaluation.corpus.names_in`):

* **target**: the names the session's first :data:`FIRST_EVENTS` hook events (after its
  ``SessionStart(startup)``) touch that some event of an earlier session touched — what the
  new session needed from before;
* **graph**: recall of the target by the block the real ``SessionStart(startup)`` hook
  injected (from the resume snapshot the earlier sessions' reconciles wrote), cut to the
  budget's characters (3 a token);
* **frequent / recent / best**: the earlier sessions' names touched so far, most frequent or
  most recent first, joined with ", ", in the same characters;
* **pooled** (:func:`pooled_chain`): over the later sessions, names recalled / names needed,
  for the block and each list; the best list is the list with the higher pooled figure.

Names are counted in what the sessions say (prompts and tool-input values), as ``rgraph eval
--transcripts`` counts them.

And whether the block states what the previous session was doing: its request (a request
node of its own, not one the snapshot handed it) and its open items (tasks pending or in
progress, errors still open).

And the memory *during* the work (:mod:`rolling_graph.evaluation.foreseen`): the share of
the known names a session used that the startup block, compaction blocks and notes foresaw,
next to the startup block alone and the front-loaded baseline, with the notes' precision
and cost, pooled over the sessions after the first ten (``report["foreseen"]``).

Each budget is its own chain, in its own state directory and database. Unless a DSN is
given, the database is an embedded server in a throw-away directory, stopped at the end.
"""

from __future__ import annotations

import re
import shutil
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rolling_graph.core.config import RenderSettings, Settings
from rolling_graph.core.ids import pointer_parts
from rolling_graph.evaluation import chain, foreseen
from rolling_graph.evaluation.corpus import (
    BUDGETS,
    CHARS_PER_TOKEN,
    budget_chars,
    event_names,
    list_block,
    ranked_lists,
    recall,
    recalled,
)
from rolling_graph.graduation.provenance import NOT_EVIDENCE, Journals, normalise
from rolling_graph.render.sections import MIN_SENTENCE_CHARS
from rolling_graph.replay.run import ReplayOptions
from rolling_graph.safety.sanitize import sentence_ends
from rolling_graph.warm import embeddings, server

#: Hook events of a new session (after its SessionStart) whose names count as "needed".
FIRST_EVENTS = 60
#: Characters of a label that must appear in the block for it to count as shown.
SHOWN_CHARS = 32
METHODS = ("graph", "frequent", "recent", "best")


# ------------------------------------------------------------------ targets (pure)
@dataclass(frozen=True)
class Later:
    """A later session of the chain: what it needed from the earlier ones."""

    position: int  # 1 for the second session
    session: str
    touched_before: tuple[tuple[str, ...], ...]  # names per event of every earlier session, in order
    target: frozenset[str]


def later_targets(sessions: Sequence[chain.Recorded], window: int = FIRST_EVENTS, metric: str = "content") -> list[Later]:
    """One :class:`Later` per session after the first, names counted the ``metric`` way
    (:data:`rolling_graph.evaluation.corpus.METRICS`)."""
    out: list[Later] = []
    before: list[tuple[str, ...]] = []
    for pos, rec in enumerate(sessions):
        names = [tuple(n) for n in event_names(rec.events, metric)]
        if pos:
            start = next((i + 1 for i, e in enumerate(rec.events) if e.hook_event_name == "SessionStart"), 0)
            seen = {n for event in before for n in event}
            needed = {n for event in names[start : start + window] for n in event} & seen
            out.append(Later(pos, rec.session_id, tuple(before), frozenset(needed)))
        before.extend(names)
    return out


def scores(later: Later, block: str, budget_tokens: int) -> dict[str, dict[str, Any]]:
    """Recall of the target by the graph's block and by the naive lists, same characters
    (``hits``: how many of the target each recalls)."""
    lists = ranked_lists(later.touched_before)
    shown = block[: budget_chars(budget_tokens)]
    out: dict[str, dict[str, Any]] = {"graph": {"recall": recall(set(later.target), shown), "hits": len(recalled(later.target, shown)),
                                                "chars": len(block)}}
    for kind, names in lists.items():
        listed = list_block(names, budget_tokens)
        out[kind] = {"recall": recall(set(later.target), listed), "hits": len(recalled(later.target, listed))}
    known = [v["recall"] for k, v in out.items() if k in lists and v["recall"] is not None]
    out["best"] = {"recall": max(known) if known else None}
    return out


def pooled_chain(rows: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """Names recalled over the later sessions / names they needed, for the block and each
    list; ``best``: the list with the higher pooled figure."""
    needed = sum(int(r["names"]) for r in rows)
    share = {m: round(sum(int(r["methods"][m]["hits"]) for r in rows) / needed, 4) if needed else None
             for m in ("graph", "frequent", "recent")}
    best = max(("frequent", "recent"), key=lambda k: (share[k] or 0.0, k == "recent"))
    return {**share, "best": share[best], "best_list": best, "names": needed, "sessions": len(rows)}


def shown(label: str, block: str) -> bool:
    """Does the block state ``label``: its opening, as the block may shorten it, or its first
    sentence when that is shorter (the block may cut a request after a whole sentence:
    ``Work on bead spotter-fum. …``)?"""
    want = normalise(label)[:SHOWN_CHARS]
    ends = [end for end in sentence_ends(want) if end >= MIN_SENTENCE_CHARS]
    want = want[: ends[0]] if ends else want
    want = want.rstrip(" .…")
    return bool(want) and want in normalise(block)


# ------------------------------------------------------------------ the previous session
def own_nodes(step: chain.ChainStep, settings: Settings) -> set[str]:
    """Nodes the session brought in itself (not handed to it by the resume snapshot)."""
    found: set[str] = set()
    for entry in Journals(settings).entries(step.recorded.session_id):
        if entry.get("kind") in NOT_EVIDENCE:
            continue
        for op in entry.get("ops") or []:
            parts = pointer_parts(op.get("path")) if isinstance(op, dict) else []
            if len(parts) == 2 and parts[0] == "nodes" and op.get("op") == "add":
                found.add(parts[1])
    return found


def open_items(step: chain.ChainStep, settings: Settings) -> dict[str, list[str]]:
    """The session's own requests (most recent first), what it left open and the tasks it
    completed, by label."""
    doc = step.doc()
    if doc is None:
        return {"requests": [], "open": [], "closed": []}
    own = own_nodes(step, settings)
    nodes: dict[str, dict[str, Any]] = {nid: dict(n) for nid, n in doc["nodes"].items() if nid in own}

    def recency(n: dict[str, Any]) -> tuple[int, str]:
        facts = n.get("facts") or {}
        return (int(facts.get("seq") or 0), str(n.get("last_activated") or ""))

    requests = [n["label"] for n in sorted((n for n in nodes.values() if n.get("kind") == "request"), key=recency, reverse=True)]
    still = [n for n in nodes.values()
             if (n.get("kind") == "task" and (n.get("facts") or {}).get("status") in ("pending", "in_progress"))
             or (n.get("kind") == "error" and (n.get("facts") or {}).get("state") == "open")]
    done = [n for n in nodes.values() if n.get("kind") == "task" and (n.get("facts") or {}).get("status") == "completed"]
    return {"requests": requests, "open": [n["label"] for n in sorted(still, key=recency, reverse=True)],
            "closed": [n["label"] for n in sorted(done, key=recency, reverse=True)]}


def shown_as_open(label: str, block: str) -> bool:
    """Does the block list ``label`` as a pending or in-progress task?"""
    want = re.escape(normalise(label)[:SHOWN_CHARS // 2])
    return bool(want) and re.search(rf"\[(?:pending|in progress)\]\s*{want}", normalise(block)) is not None


def previous_report(prev: chain.ChainStep, settings: Settings, block: str) -> dict[str, Any]:
    items = open_items(prev, settings)
    return {
        "session": prev.recorded.session_id,
        "requests": items["requests"][:5],
        "request_shown": bool(items["requests"]) and shown(items["requests"][0], block),
        "any_request_shown": any(shown(r, block) for r in items["requests"]),
        "open": items["open"][:12],
        "open_total": len(items["open"]),
        "open_shown": [o for o in items["open"] if shown(o, block)][:12],
        "closed_shown_as_open": [c for c in items["closed"] if shown_as_open(c, block)][:12],
    }


# ------------------------------------------------------------------ the I/O edge
def _startup_block(step: chain.ChainStep) -> str:
    rec = next((r for r in step.replay.records if r.event == "SessionStart" and r.source == "startup"), None)
    return (rec.injection or "") if rec else ""


def _chain_report(targets: Sequence[Later], steps: Sequence[chain.ChainStep], settings: Settings, budget: int) -> list[dict[str, Any]]:
    by_pos = {t.position: t for t in targets}
    out = []
    for pos, step in enumerate(steps):
        if pos == 0:
            continue
        block = _startup_block(step)
        target = by_pos[pos]
        lists = ranked_lists(target.touched_before)
        out.append({
            "session": step.recorded.session_id,
            "position": pos,
            "names": len(target.target),
            "methods": scores(target, block, budget),
            "blocks": {"graph": block, **{k: list_block(v, budget) for k, v in lists.items()}},
            "recalled": sorted(n for n in target.target if n in block[: budget_chars(budget)].lower()),
            "previous": previous_report(steps[pos - 1], settings, block),
            "foreseen": foreseen.step_foreseen(step, {n for event in target.touched_before for n in event}, target.touched_before),
            "errors": [f"event {r.index} ({r.event}): {r.error}" for r in step.replay.records if r.error][:5],
        })
    return out


def _session_budget_chars() -> int:
    render = RenderSettings()
    return int(render.note_session_tokens * render.chars_per_token)


def _databases(base: Path, budgets: Sequence[int], dsn: str | None) -> tuple[dict[int, str], Path | None]:
    """A DSN per budget: the given one (one budget only), else fresh databases on an embedded
    server started in ``base`` (returned, for stopping)."""
    if dsn is not None:
        if len(budgets) > 1:
            raise ValueError("with a DSN, measure one budget at a time (each chain needs an empty database)")
        return {budgets[0]: dsn}, None
    import psycopg

    home = base / "server"
    server.ensure_running(home)
    info = server.running_info(home)
    if info is None:
        raise RuntimeError(f"the embedded PostgreSQL under {home} did not start")
    out = {}
    with psycopg.connect(server.dsn_for(info, "postgres"), autocommit=True) as conn:
        for budget in budgets:
            conn.execute(f'CREATE DATABASE "chain_{int(budget)}"')
            out[budget] = server.dsn_for(info, f"chain_{int(budget)}")
    return out, home


def run_chain_eval(paths: Sequence[str | Path], budgets: Sequence[int] = BUDGETS, project: str | None = None, *,
                   mode: str = "sync", home: Path | None = None, dsn: str | None = None) -> dict[str, Any]:
    """Replay the sessions of ``paths`` (one project) in time order, once per budget, and
    score every later session's startup block. Throw-away state (and server) unless ``home``."""
    started = time.perf_counter()
    sessions = chain.in_time_order(paths)
    if len(sessions) < 2:
        raise ValueError("a chain needs at least two sessions of one project")
    targets = later_targets(sessions)
    base = home or Path(tempfile.mkdtemp(prefix="rgchain-", dir="/tmp"))
    pg_home: Path | None = None
    try:
        dsns, pg_home = _databases(base, budgets, dsn)
        per_budget: dict[str, list[dict[str, Any]]] = {}
        replay_s: dict[str, float] = {}
        for budget in budgets:
            t0 = time.perf_counter()
            settings = Settings(home=base / f"state-{budget}", dsn=dsns[budget], embedder="lexical")
            options = ReplayOptions(probe="offline", mode=mode, budget=budget, clock="transcript", project=project)
            steps = chain.replay_chain(sessions, settings, options, embedder=embeddings.LexicalEmbedder())
            per_budget[str(budget)] = _chain_report(targets, steps, settings, budget)
            replay_s[str(budget)] = round(time.perf_counter() - t0, 2)
    finally:
        if pg_home is not None:
            server.stop(pg_home)
        if home is None:
            shutil.rmtree(base, ignore_errors=True)
    return {
        "budgets": list(budgets), "first_events": FIRST_EVENTS, "chars_per_token": CHARS_PER_TOKEN, "mode": mode,
        "project": project,
        "sessions": [{"session": s.session_id, "transcript": str(s.path), "started": s.started, "events": len(s.events)}
                     for s in sessions],
        "later": per_budget, "pooled": {budget: pooled_chain(rows) for budget, rows in per_budget.items()},
        "foreseen": {budget: foreseen.pooled_foreseen([r["foreseen"] for r in rows if r["position"] >= foreseen.SKIP_FIRST],
                                                      _session_budget_chars()) for budget, rows in per_budget.items()},
        "replay_s": replay_s, "elapsed_s": round(time.perf_counter() - started, 2),
        "home": str(base) if home is not None else None,
    }
