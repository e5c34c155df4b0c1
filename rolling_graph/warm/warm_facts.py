"""Node facts in the warm graph: what of a hot node's facts outlives its session, and how
two sessions' facts fold into one.

A hot node's facts (:mod:`rolling_graph.core.facts`) are the session's own; the warm graph keeps
the durable ones, so a new session's startup block can say what was left open:

* kept: a file's ``path`` (relative to its worktree), counts (``edits``, ``writes``,
  ``reads``, ``runs``), ``last_op`` and ``what``; a command's ``outcome`` and ``result``; an
  error's ``state`` and ``from``; a task's ``status`` and tracker ``ref``; a commit's
  ``ref``; who brought the node in (``by``);
* dropped: ``seq`` and ``first`` (one session's event counters mean nothing in another;
  ``first`` orders the session's files for co-access, :mod:`rolling_graph.warm.coaccess`), ``mentions``
  (a session's own count: the warm ``activations`` column sums each session's uses, the
  larger of its activations and its mentions), a command's ``ref`` (a background run's
  id, gone with its session) and a code name's ``removed`` (an event counter too).

Folding (pure, and the same whichever of two sessions is reconciled first): counts take
the larger (a session's counts only grow, and a session that pulled the node from the warm
graph carries the earlier count on; a sum would count that twice); ``by`` the strongest
(user over assistant over tool); every other fact the newer view's (by the node's
``last_activated``), an older view's where the newer has none. Text is redacted with the
full redactor (the warm graph outlives the session); :func:`rolling_graph.core.normalize.normalize_facts`
bounds every value, and the column holds at most 2,048 bytes (migration 005).
"""

from __future__ import annotations

import json
from datetime import datetime
from typing import Any

from rolling_graph.core.normalize import normalize_facts
from rolling_graph.safety.redact import redact

COUNT_KEYS = ("edits", "writes", "reads", "runs")
_BY_RANK = {"tool": 0, "assistant": 1, "user": 2}
#: Facts that belong to one session only.
SESSION_ONLY: dict[str, frozenset[str]] = {"*": frozenset({"seq", "first", "mentions"}), "command": frozenset({"ref"}),
                                           "symbol": frozenset({"removed"})}
_TEXT_KEYS = ("path", "what", "result", "from", "ref")
#: The column's bound (migration 005); a fold that would exceed it keeps the newer view only.
MAX_BYTES = 2048


def durable(kind: str, raw: object) -> dict[str, Any] | None:
    """The facts of a hot node worth keeping across sessions, cleaned and redacted (None: none)."""
    facts = normalize_facts(kind, raw)
    if not facts:
        return None
    drop = SESSION_ONLY["*"] | SESSION_ONLY.get(kind, frozenset())
    out: dict[str, Any] = {k: v for k, v in facts.items() if k not in drop}
    for key in _TEXT_KEYS:
        if isinstance(out.get(key), str):
            out[key] = redact(out[key])
    return out or None


def fold(
    current: dict[str, Any] | None, current_at: datetime | None, incoming: dict[str, Any] | None, incoming_at: datetime
) -> dict[str, Any] | None:
    """Two views of a node's facts as one (see the module's docstring)."""
    if not current:
        return dict(incoming) if incoming else None
    if not incoming:
        return dict(current)
    newer, older = (incoming, current) if current_at is None or incoming_at >= current_at else (current, incoming)
    out = {**older, **newer}
    for key in COUNT_KEYS:
        values = [v for v in (older.get(key), newer.get(key)) if isinstance(v, int)]
        if values:
            out[key] = max(values)
    bys = [b for b in (older.get("by"), newer.get("by")) if b in _BY_RANK]
    if bys:
        out["by"] = max(bys, key=lambda b: _BY_RANK[b])
    return out if len(encode(out) or "") <= MAX_BYTES else dict(newer)


def encode(facts: dict[str, Any] | None) -> str | None:
    """As the ``facts`` column stores it (JSON text, cast to jsonb by the query)."""
    return json.dumps(facts, ensure_ascii=False, sort_keys=True, separators=(",", ":")) if facts else None


def same(hot: dict[str, Any] | None, warm: dict[str, Any] | None) -> bool:
    """Do a node's durable facts in the hot graph say what the warm graph says already?"""
    return (hot or {}) == (warm or {})
