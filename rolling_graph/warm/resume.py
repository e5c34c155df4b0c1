"""Choosing what a new session gets back from the warm graph.

Candidates come from a few cheap, indexed legs (top by weight, by recency, by
cross-session frequency, by uses, by opening, the last focus's neighbourhood, and for
prompt pulls the nearest embeddings); :mod:`rolling_graph.warm.rank` fuses them with RRF.
``refresh_snapshot`` writes the per-project resume snapshot after every reconciliation:
what the last session left and the decisions in force first
(:mod:`rolling_graph.warm.startup`), then the ranked names; every node with its kind
and its durable facts, so the restore block's sections work for a new session too.
"""

from __future__ import annotations

from collections.abc import Container, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Any

from rolling_graph.core.clock import iso, utcnow
from rolling_graph.core.config import Settings
from rolling_graph.core.normalize import SEEN_IN_MAX
from rolling_graph.warm import db, notes, rank, snapshot, startup
from rolling_graph.warm.snapshot_write import write_snapshot

if TYPE_CHECKING:
    from rolling_graph.warm.db import Connection

#: How many nodes each cheap leg contributes to the candidate pool. Nodes alike in a leg's
#: column (a chain's first sessions: every node in one session, most used once or twice) go in
#: the order they were first seen, then by id: never by where their rows lie in the table,
#: which made two replays of the same sessions pull different pools.
PER_LEG = 100
NEIGHBOURHOOD_MAX = 400
#: The opening leg reads this many session rows per candidate it brings (the smallest
#: openings, over the project's index): sessions open with many of the same names.
OPENING_ROWS = 8

_NODE_COLUMNS = (
    "id, label, domain, kind, summary, confidence, weight, anchor, floor, first_seen, last_activated, session_count, activations, facts"
)
_NAMES = [c.strip() for c in _NODE_COLUMNS.split(",")]


def focus_hops(conn: Connection, pid: int, focus: Sequence[str], max_hops: int) -> dict[str, int]:
    """Hops from the focus nodes over warm edges (undirected), up to ``max_hops``."""
    if not focus:
        return {}
    rows = conn.execute(
        "WITH RECURSIVE walk(id, hops) AS ("
        " SELECT f, 0 FROM unnest(%s::text[]) AS f"
        " UNION"
        " SELECT CASE WHEN e.source = w.id THEN e.target ELSE e.source END, w.hops + 1"
        " FROM walk w JOIN edges e ON e.project_id = %s AND (e.source = w.id OR e.target = w.id)"
        " WHERE w.hops < %s)"
        " SELECT id, min(hops) FROM walk GROUP BY id ORDER BY min(hops), id LIMIT %s",
        (list(focus), pid, max_hops, NEIGHBOURHOOD_MAX),
    ).fetchall()
    return {r[0]: int(r[1]) for r in rows}


def candidates(
    conn: Connection,
    pid: int,
    *,
    focus: Sequence[str] = (),
    similarity: dict[str, float] | None = None,
    settings: rank.RankSettings = rank.RESUME,
    per_leg: int = PER_LEG,
) -> tuple[list[rank.Candidate], dict[str, dict[str, Any]]]:
    """The candidate pool for ranking, and each candidate's node row (as a dict)."""
    hops = focus_hops(conn, pid, focus, settings.max_hops)
    extra = sorted(set(hops) | set(similarity or {}))
    lately_leg = settings.uses_half_life_sessions > 0
    columns = ("weight", "last_activated", "session_count", *(("activations",) if settings.uses_leg else ()))
    rows = conn.execute(
        f"SELECT {_NODE_COLUMNS} FROM nodes WHERE project_id = %(p)s AND id IN ("
        + " UNION ".join(f"(SELECT id FROM nodes WHERE project_id = %(p)s ORDER BY {column} DESC, first_seen, id LIMIT %(n)s)"
                         for column in columns)
        + (" UNION (SELECT node_id FROM (SELECT node_id, opening FROM node_sessions WHERE project_id = %(p)s"
           " AND opening IS NOT NULL ORDER BY opening, node_id LIMIT %(m)s) o GROUP BY node_id ORDER BY min(opening), node_id LIMIT %(n)s)"
           if settings.opening_leg else "")
        + (f" UNION (SELECT node_id FROM ({_RECENT_USES} ORDER BY u DESC, x.node_id LIMIT %(n)s) r)" if lately_leg else "")
        + " UNION (SELECT unnest(%(x)s::text[])))",
        {"p": pid, "n": per_leg, "m": per_leg * OPENING_ROWS, "x": extra, "h": settings.uses_half_life_sessions},
    ).fetchall()
    by_id = {r[0]: dict(zip(_NAMES, r, strict=True)) for r in rows}
    lately = recent_uses(conn, pid, settings.uses_half_life_sessions, list(by_id)) if lately_leg else {}
    opening = _openings(conn, pid, list(by_id)) if settings.opening_leg else {}
    pool = [
        rank.Candidate(
            id=nid,
            weight=float(row["weight"]),
            last_activated=row["last_activated"],
            session_count=int(row["session_count"]),
            hops=hops.get(nid),
            similarity=(similarity or {}).get(nid),
            activations=int(row["activations"]),
            recent_uses=lately.get(nid, 0.0) if lately_leg else None,
            opening=opening.get(nid),
        )
        for nid, row in by_id.items()
    ]
    return pool, by_id


#: Each node's recent uses in project ``%(p)s`` (half-life ``%(h)s`` sessions): ``node_id, u``.
_RECENT_USES = (
    "WITH s AS (SELECT session_id, row_number() OVER (ORDER BY coalesce(last_active, last_reconciled_at) DESC, session_id) - 1"
    " AS age FROM sessions WHERE project_id = %(p)s) "
    "SELECT x.node_id, sum(x.activations * power(0.5, s.age / %(h)s::float8)) AS u FROM node_sessions x"
    " JOIN s ON s.session_id = x.session_id WHERE x.project_id = %(p)s GROUP BY x.node_id"
)


def recent_uses(conn: Connection, pid: int, half_life_sessions: float, ids: Sequence[str]) -> dict[str, float]:
    """The uses of each of ``ids`` over the project's sessions, a session's halved for every
    ``half_life_sessions`` of the project's sessions active after it (the latest counts in
    full): what the project's last few sessions kept using, which a new session goes on using
    (``../shared/corpus/entire-cli``: docs/measurements.md, "startup")."""
    if not ids:
        return {}
    rows = conn.execute(
        f"SELECT node_id, u FROM ({_RECENT_USES}) r WHERE node_id = ANY(%(ids)s)",
        {"p": pid, "h": float(half_life_sessions), "ids": list(ids)},
    ).fetchall()
    return {str(nid): float(u) for nid, u in rows}


def _openings(conn: Connection, pid: int, ids: list[str]) -> dict[str, int]:
    """Each node's best place in a session's discovery order (:func:`rank.openings`)."""
    return {nid: int(best) for nid, best in conn.execute(
        "SELECT node_id, min(opening) FROM node_sessions WHERE project_id = %s AND node_id = ANY(%s) AND opening IS NOT NULL "
        "GROUP BY node_id",
        (pid, ids),
    )}


def node_payload(row: dict[str, Any]) -> dict[str, Any]:
    out = {
        "id": row["id"],
        "label": row["label"],
        "domain": row["domain"],
        "kind": row["kind"],
        "confidence": row["confidence"],
        "weight": round(float(row["weight"]), 4),
        "anchor": bool(row["anchor"]),
        "floor": round(float(row["floor"]), 4),
        "first_seen": iso(row["first_seen"]),
        "warm_last_activated": iso(row["last_activated"]),
        "sessions": int(row["session_count"]),
    }
    if row.get("summary"):
        out["summary"] = row["summary"]
    if row.get("facts"):
        out["facts"] = row["facts"]
    return out


def seen_in(conn: Connection, pid: int, ids: list[str], per_node: int = SEEN_IN_MAX) -> dict[str, list[str]]:
    """The sessions that touched each node, latest first (``per_node`` of them): the
    provenance a pulled node carries into a session (``rgraph why`` names them)."""
    out: dict[str, list[str]] = {}
    for nid, sid in conn.execute(
        "SELECT node_id, session_id FROM (SELECT node_id, session_id, row_number() OVER "
        "(PARTITION BY node_id ORDER BY last_activated DESC, session_id) AS n FROM node_sessions "
        "WHERE project_id = %s AND node_id = ANY(%s)) x WHERE n <= %s ORDER BY node_id, n",
        (pid, ids, per_node),
    ):
        out.setdefault(str(nid), []).append(str(sid))
    return out


def edges_among(conn: Connection, pid: int, ids: Sequence[str], limit: int) -> list[dict[str, Any]]:
    rows = conn.execute(
        "SELECT source, relationship, target, strength FROM edges "
        "WHERE project_id = %s AND source = ANY(%s) AND target = ANY(%s) "
        "ORDER BY (relationship = 'supersedes') DESC, strength DESC, source, relationship, target LIMIT %s",
        (pid, list(ids), list(ids), limit),
    ).fetchall()
    return [{"source": s, "relationship": r, "target": t, "strength": round(float(st), 4)} for s, r, t, st in rows]


@dataclass
class ResumeInputs:
    """What a resume snapshot is ranked from: the last focus, the candidate pool (with each
    candidate's node row), what the last session left open, and which candidates something
    superseded."""

    focus: list[str]
    pool: list[rank.Candidate]
    rows: dict[str, dict[str, Any]]
    left: startup.LeftOpen
    hidden: set[str]


def resume_inputs(conn: Connection, pid: int, now: datetime) -> ResumeInputs:
    row = conn.execute("SELECT last_focus FROM projects WHERE id = %s", (pid,)).fetchone()
    focus = list(row[0]) if row else []
    pool, by_id = candidates(conn, pid, focus=focus)
    left = startup.left_open(conn, pid, now, _NODE_COLUMNS)
    hidden = startup.superseded_among(conn, pid, [c.id for c in pool])
    return ResumeInputs(focus, pool, by_id, left, hidden)


def snapshot_order(head: Sequence[str], ranked: Sequence[str], kinds: Mapping[str, str], hidden: Container[str],
                   max_nodes: int = snapshot.MAX_NODES) -> list[str]:
    """The snapshot's node ids: the head (what the last session left) first, then the
    ranked names, no request, task, error or decision among them and nothing superseded."""
    names = [nid for nid in ranked if kinds[nid] not in startup.NOT_NAMES and nid not in hidden]
    return list(dict.fromkeys([*head, *names]))[:max_nodes]


def build_snapshot(conn: Connection, pid: int, root: str, now: datetime | None = None, *, max_nodes: int = snapshot.MAX_NODES) -> dict[str, Any]:
    """The project's resume snapshot: what the last session left (:mod:`rolling_graph.warm.startup`)
    first, then the project's names ranked by RRF of weight, recency, cross-session
    frequency, uses, opening and hops from the last focus; superseded nodes only beside their successor."""
    now = now or utcnow()
    got = resume_inputs(conn, pid, now)
    left = got.left
    ranked = rank.rank(got.pool, now, rank.RESUME)
    order = snapshot_order(left.ids(), ranked, {nid: row["kind"] for nid, row in got.rows.items()}, got.hidden, max_nodes)
    rows = {**got.rows, **left.rows}
    seen = seen_in(conn, pid, order)
    total = int(db.one(conn.execute("SELECT count(*) FROM nodes WHERE project_id = %s", (pid,)))[0])
    return {
        "project": root,
        "generated_at": iso(now),
        "focus": got.focus,
        "last_session": left.session,
        "nodes": [{**node_payload(rows[nid]), **({"seen_in": seen[nid]} if nid in seen else {})} for nid in order],
        "edges": edges_among(conn, pid, order, snapshot.MAX_EDGES),
        "notes": notes.build_notes(conn, pid),  # what the tool-time notes draw from (rolling_graph.warm.notes)
        # Every node of the project is in it (each of ``order`` is one of the project's nodes):
        # a session that took it all has nothing left to pull (snapshot.holds_whole_project).
        "whole": len(order) == total,
    }


def refresh_snapshot(conn: Connection, settings: Settings, root: str) -> dict[str, Any] | None:
    """Rebuild and atomically write the project's resume snapshot."""
    row = conn.execute("SELECT id FROM projects WHERE root = %s", (root,)).fetchone()
    if row is None:
        return None
    snap = build_snapshot(conn, int(row[0]), root, settings.clock.now())
    conn.commit()
    write_snapshot(settings.home, root, snap, whole=snap["whole"] is True, settings=settings)
    return snap
