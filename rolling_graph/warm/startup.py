"""What a new session needs first from its project's warm graph, before any ranked name:
what the last session was doing and what it left open, and the decisions in force.

The resume snapshot (:func:`rolling_graph.warm.resume.build_snapshot`) puts these at
its head, in this order, so the restore block's sections have them for a ``startup`` too:

* **the last session's requests**, newest first (the block says "Last request");
* **its tasks**: those still pending or in progress, then a few it completed (their status
  is the warm graph's folded view, :mod:`rolling_graph.warm.warm_facts`);
* **its unresolved errors**;
* **decisions in force**, ranked by RRF (weight, recency, cross-session frequency, uses),
  each with the decisions it superseded, so the block names those only on its line. A
  decision that something superseded is never among them.

"The last session" is the one active most recently (``sessions.last_active``, its latest
node of its own), not the one reconciled last: ``rgraph recover`` may reconcile an old
session late. A node pulled into a session and never touched there is no contribution of
that session (:func:`rolling_graph.warm.upsert.upsert_nodes`), so what the last
session "touched" is what it did itself.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING, Any

from rolling_graph.core.model import INTENT_KINDS
from rolling_graph.warm import rank

if TYPE_CHECKING:
    from rolling_graph.warm.db import Connection

#: Kinds the snapshot brings in through the sections above only, never as ranked names.
NOT_NAMES = frozenset({"request", "task", "error", "summary", *INTENT_KINDS})


@dataclass(frozen=True)
class StartupSettings:
    """How many of each the snapshot's head holds."""

    requests: int = 3
    open_tasks: int = 12
    done_tasks: int = 3
    open_errors: int = 6
    decisions: int = 8
    superseded_per_decision: int = 2
    #: Decisions ranked: this many heaviest plus this many most recent.
    decision_pool: int = 30


DEFAULT = StartupSettings()


@dataclass
class LeftOpen:
    """The snapshot's head: ids in the order they go in, and their node rows."""

    session: str | None = None
    requests: list[str] = field(default_factory=list)
    tasks: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    decisions: list[str] = field(default_factory=list)
    superseded: list[str] = field(default_factory=list)
    rows: dict[str, dict[str, Any]] = field(default_factory=dict)

    def ids(self) -> list[str]:
        return list(dict.fromkeys([*self.requests, *self.tasks, *self.errors, *self.decisions, *self.superseded]))


def _select(columns: str) -> str:
    return ", ".join("n." + c.strip() for c in columns.split(","))


def _rows(cursor: Any, columns: str) -> list[dict[str, Any]]:
    names = [c.strip() for c in columns.split(",")]
    return [dict(zip(names, r, strict=False)) for r in cursor.fetchall()]


def last_session(conn: Connection, pid: int) -> str | None:
    row = conn.execute(
        "SELECT session_id FROM sessions WHERE project_id = %s "
        "ORDER BY coalesce(last_active, last_reconciled_at) DESC, last_reconciled_at DESC, session_id LIMIT 1",
        (pid,),
    ).fetchone()
    return str(row[0]) if row else None


def _facts(row: dict[str, Any]) -> dict[str, Any]:
    facts = row.get("facts")
    return facts if isinstance(facts, dict) else {}


def _last_session_items(conn: Connection, pid: int, sid: str, columns: str, s: StartupSettings, out: LeftOpen) -> None:
    rows = _rows(conn.execute(
        f"SELECT {_select(columns)} FROM node_sessions x JOIN nodes n ON n.project_id = x.project_id AND n.id = x.node_id "
        "WHERE x.project_id = %s AND x.session_id = %s AND n.kind IN ('request', 'task', 'error') "
        "ORDER BY x.last_activated DESC, n.last_activated DESC, n.id",
        (pid, sid),
    ), columns)
    done: list[str] = []
    for row in rows:
        kind, facts, nid = row["kind"], _facts(row), row["id"]
        if kind == "request" and len(out.requests) < s.requests:
            out.requests.append(nid)
        elif kind == "task" and facts.get("status") in ("pending", "in_progress") and len(out.tasks) < s.open_tasks:
            out.tasks.append(nid)
        elif kind == "task" and facts.get("status") == "completed" and len(done) < s.done_tasks:
            done.append(nid)
        elif kind == "error" and facts.get("state") == "open" and len(out.errors) < s.open_errors:
            out.errors.append(nid)
        else:
            continue
        out.rows[nid] = row
    out.tasks += done


def _decisions(conn: Connection, pid: int, now: datetime, columns: str, s: StartupSettings, out: LeftOpen) -> None:
    in_force = (
        f"SELECT {_select(columns)} FROM nodes n WHERE n.project_id = %(p)s AND n.kind = ANY(%(k)s) "
        "AND NOT EXISTS (SELECT 1 FROM edges e WHERE e.project_id = n.project_id AND e.target = n.id AND e.relationship = 'supersedes')"
    )
    rows = _rows(conn.execute(
        f"({in_force} ORDER BY n.weight DESC, n.id LIMIT %(n)s) UNION ({in_force} ORDER BY n.last_activated DESC, n.id LIMIT %(n)s)",
        {"p": pid, "k": list(INTENT_KINDS), "n": s.decision_pool},
    ), columns)
    by_id = {r["id"]: r for r in rows}
    pool = [rank.Candidate(id=r["id"], weight=float(r["weight"]), last_activated=r["last_activated"],
                           session_count=int(r["session_count"]), activations=int(r["activations"])) for r in by_id.values()]
    out.decisions = rank.rank(pool, now, rank.RESUME)[: s.decisions]
    out.rows.update({nid: by_id[nid] for nid in out.decisions})
    if not out.decisions:
        return
    olds: dict[str, list[str]] = {}
    for source, target in conn.execute(
        "SELECT source, target FROM edges WHERE project_id = %s AND relationship = 'supersedes' AND source = ANY(%s) "
        "ORDER BY strength DESC, last_activated DESC, target",
        (pid, out.decisions),
    ):
        kept = olds.setdefault(source, [])
        if len(kept) < s.superseded_per_decision:
            kept.append(target)
    out.superseded = list(dict.fromkeys(t for d in out.decisions for t in olds.get(d, [])))
    if out.superseded:
        found = _rows(conn.execute(f"SELECT {_select(columns)} FROM nodes n WHERE n.project_id = %s AND n.id = ANY(%s)",
                                   (pid, out.superseded)), columns)
        out.rows.update({r["id"]: r for r in found})
        out.superseded = [t for t in out.superseded if t in out.rows]


def left_open(conn: Connection, pid: int, now: datetime, columns: str, settings: StartupSettings = DEFAULT) -> LeftOpen:
    """The snapshot's head for project ``pid`` (``columns``: the node columns to read)."""
    out = LeftOpen(session=last_session(conn, pid))
    if out.session is not None:
        _last_session_items(conn, pid, out.session, columns, settings, out)
    _decisions(conn, pid, now, columns, settings, out)
    return out


def superseded_among(conn: Connection, pid: int, ids: Sequence[str]) -> set[str]:
    """Which of ``ids`` something superseded (never a current name)."""
    if not ids:
        return set()
    return {r[0] for r in conn.execute(
        "SELECT DISTINCT target FROM edges WHERE project_id = %s AND relationship = 'supersedes' AND target = ANY(%s)",
        (pid, list(ids)),
    )}
