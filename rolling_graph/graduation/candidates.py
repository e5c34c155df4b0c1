"""Graduation: which warm-graph nodes have proved themselves, the nightly job's time rules,
and the graduation-quality signal for ``rgraph stats``.

A node is a **candidate** when it is something a person would write in a ``CLAUDE.md`` — a
decision, a convention or preference, a correction, or a concept whose summary states a fact
(:data:`STATEMENT_KINDS`, :data:`FACT_KINDS`; never a bare file, command, code name, entity,
error, task, request or commit) — and all three criteria of docs/graduation.md hold
(configurable, see :class:`~rolling_graph.core.config.GraduationSettings`): it appeared in >= 3
sessions, its warm weight is >= 0.6, and it has >= 2 edges; and no newer node ``supersedes``
it. (Drafting then checks the sessions' journals: see :mod:`rolling_graph.graduation.drafts`.) Candidates are computed in SQL and exclude nodes that already have a
pending draft, an approved (or once approved, later deleted) flat memory, a duplicate
verdict, a draft even the template could not ground (e.g. a hedge in the label itself) or a
human rejection *for the node's current state* (``rg_node_hash``, see
``migrations/010_graduation.sql``): a rejected node comes back only after it changed.

Time rules use the settings' clock (:mod:`rolling_graph.core.clock`, freezegun-friendly), never SQL ``now()``.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any

from rolling_graph.core.config import GRADUATION_PRESETS, GraduationSettings, Settings
from rolling_graph.warm import db
from rolling_graph.warm.reconcile import project_id

if TYPE_CHECKING:
    from rolling_graph.warm.db import Connection

#: Flat-memory kinds, strongest first (corrections outrank everything).
MEMORY_KINDS: tuple[str, ...] = ("correction", "decision", "preference", "note")
#: Node kinds that graduate as what they are: a decision or convention, a correction, a preference.
STATEMENT_KINDS: tuple[str, ...] = ("decision", "correction", "preference")
#: Node kinds that graduate only as a fact: when their summary is a sentence of at least
#: :data:`FACT_MIN_WORDS` words (a bare name, "Warm graph store", states nothing).
FACT_KINDS: tuple[str, ...] = ("concept", "summary")
FACT_MIN_WORDS = 4


#: Named presets (``[graduation] preset = "strict"`` in config.toml); the settings live in
#: :mod:`rolling_graph.core.config`, read once with the rest (``settings.graduation``).
PRESETS = GRADUATION_PRESETS
DEFAULT = PRESETS["default"]


def seed_weight(kind: str, gs: GraduationSettings = DEFAULT) -> float:
    """Anchor weight by memory kind: correction > decision > preference > note."""
    return float(getattr(gs, f"weight_{kind}", gs.weight_note))


@dataclass(frozen=True)
class Candidate:
    project_id: int
    node_id: str


_CANDIDATES_SQL = """
SELECT n.project_id, n.id
FROM nodes n
CROSS JOIN LATERAL (
    SELECT count(*) AS edges FROM edges e
    WHERE e.project_id = n.project_id AND (e.source = n.id OR e.target = n.id)
) ec
WHERE n.project_id = ANY(%(pids)s)
  AND (n.kind = ANY(%(statements)s)
       OR (n.kind = ANY(%(facts)s)
           AND coalesce(array_length(regexp_split_to_array(btrim(coalesce(n.summary, '')), '[[:space:]]+'), 1), 0) >= %(fact_words)s
           AND btrim(coalesce(n.summary, '')) <> ''))
  AND n.session_count >= %(sessions)s AND n.weight >= %(weight)s AND ec.edges >= %(edges)s
  AND NOT (%(skip_superseded)s AND EXISTS (SELECT 1 FROM edges s WHERE s.project_id = n.project_id AND s.target = n.id
                                           AND s.relationship = 'supersedes'))
  AND NOT EXISTS (SELECT 1 FROM graduation_drafts d WHERE d.project_id = n.project_id AND d.node_id = n.id
                  AND (d.status IN ('pending', 'approved')
                       OR (d.status = 'duplicate' AND d.node_hash = rg_node_hash(n.project_id, n.id))))
  AND NOT EXISTS (SELECT 1 FROM graduation_drafts d WHERE d.project_id = n.project_id AND d.node_id = n.id
                  AND d.status = 'rejected' AND d.decided_by = 'grounding' AND d.backend = 'template'
                  AND d.node_hash = rg_node_hash(n.project_id, n.id))
  AND NOT EXISTS (SELECT 1 FROM flat_memories m WHERE m.project_id = n.project_id AND m.node_id = n.id)
  AND NOT EXISTS (SELECT 1 FROM seeded_anchors s WHERE s.project_id = n.project_id AND s.node_id = n.id)
  AND NOT EXISTS (SELECT 1 FROM graduation_rejections r WHERE r.project_id = n.project_id AND r.node_id = n.id
                  AND r.node_hash = rg_node_hash(n.project_id, n.id))
ORDER BY n.weight DESC, n.session_count DESC, n.project_id, n.id
LIMIT %(limit)s
"""


def project_ids(conn: Connection, root: str | None = None) -> list[int]:
    """One project (by root) or all of them."""
    if root is None:
        return [int(r[0]) for r in conn.execute("SELECT id FROM projects ORDER BY id")]

    pid = project_id(conn, root)
    return [pid] if pid is not None else []


def candidates(conn: Connection, pids: list[int], gs: GraduationSettings = DEFAULT, limit: int = 1000) -> list[Candidate]:
    """Nodes that meet all graduation criteria and are not already proposed, graduated or rejected."""
    if not pids:
        return []
    rows = conn.execute(
        _CANDIDATES_SQL,
        {"pids": pids, "statements": list(STATEMENT_KINDS), "facts": list(FACT_KINDS), "fact_words": FACT_MIN_WORDS,
         "sessions": gs.min_sessions, "weight": gs.min_weight, "edges": gs.min_edges,
         "skip_superseded": gs.skip_superseded, "limit": limit},
    ).fetchall()
    return [Candidate(int(r[0]), r[1]) for r in rows]


def node_hash(conn: Connection, pid: int, node_id: str) -> str | None:
    row = conn.execute("SELECT rg_node_hash(%s, %s)", (pid, node_id)).fetchone()
    return row[0] if row else None


# -- anchors at their floor -> archive review ------------------------------------------------


def track_floors(conn: Connection, pids: list[int], now: datetime, gs: GraduationSettings = DEFAULT) -> None:
    """Start the clock for anchors that sit at their floor; stop it for those above it."""
    conn.execute(
        "UPDATE nodes SET at_floor_since = %s WHERE project_id = ANY(%s) AND anchor AND at_floor_since IS NULL "
        "AND weight <= floor + %s",
        (now, pids, gs.floor_epsilon),
    )
    conn.execute(
        "UPDATE nodes SET at_floor_since = NULL WHERE project_id = ANY(%s) AND at_floor_since IS NOT NULL "
        "AND (NOT anchor OR weight > floor + %s)",
        (pids, gs.floor_epsilon),
    )


def queue_archive_reviews(conn: Connection, pids: list[int], now: datetime, gs: GraduationSettings = DEFAULT) -> int:
    """Queue anchors at their floor for ``archive_after_days`` or more; returns how many were new."""
    cutoff = now - timedelta(days=gs.archive_after_days)
    rows = conn.execute(
        "INSERT INTO archive_reviews (project_id, node_id, at_floor_since, queued_at) "
        "SELECT project_id, id, at_floor_since, %s FROM nodes "
        "WHERE project_id = ANY(%s) AND anchor AND at_floor_since IS NOT NULL AND at_floor_since <= %s "
        "AND NOT EXISTS (SELECT 1 FROM archive_reviews a WHERE a.project_id = nodes.project_id AND a.node_id = nodes.id "
        "                AND (a.status = 'pending' OR (a.status = 'kept' AND a.decided_at >= nodes.at_floor_since))) "
        "ON CONFLICT (project_id, node_id) WHERE status = 'pending' DO NOTHING RETURNING id",
        (now, pids, cutoff),
    ).fetchall()
    return len(rows)


def pending_archive_reviews(conn: Connection, pids: list[int]) -> list[dict[str, Any]]:
    rows = conn.execute(
        "SELECT a.id, a.project_id, a.node_id, n.label, n.weight, n.floor, a.at_floor_since, a.queued_at "
        "FROM archive_reviews a JOIN nodes n ON n.project_id = a.project_id AND n.id = a.node_id "
        "WHERE a.status = 'pending' AND a.project_id = ANY(%s) ORDER BY a.at_floor_since, a.id",
        (pids,),
    ).fetchall()
    keys = ("id", "project_id", "node_id", "label", "weight", "floor", "at_floor_since", "queued_at")
    return [dict(zip(keys, r, strict=True)) for r in rows]


# -- the 30-day quality signal ---------------------------------------------------------------


def record_kept(conn: Connection, pids: list[int], now: datetime, gs: GraduationSettings = DEFAULT) -> int:
    """Mark memories approved ``kept_after_days`` ago, never edited or deleted since, as kept."""
    rows = conn.execute(
        "INSERT INTO graduation_outcomes (memory_id, outcome, at) "
        f"SELECT m.id, 'kept', %s FROM flat_memories m WHERE m.project_id = ANY(%s) AND m.approved_at <= %s AND {_UNCHANGED} "
        "ON CONFLICT DO NOTHING RETURNING memory_id",
        (now, pids, make_window(now, gs), gs.kept_after_days),
    ).fetchall()
    return len(rows)


def outcome_counts(conn: Connection, pids: list[int], now: datetime, gs: GraduationSettings = DEFAULT) -> dict[str, Any]:
    """Counts for ``rgraph stats``; ``kept_share`` is kept-unchanged over memories old enough to judge."""
    drafts: dict[str, int] = {status: n for status, n in conn.execute(
        "SELECT status, count(*) FROM graduation_drafts WHERE project_id = ANY(%s) AND coalesce(decided_by, '') <> 'grounding' "
        "GROUP BY status",
        (pids,),
    ).fetchall()}
    outcomes: dict[str, int] = {outcome: n for outcome, n in conn.execute(
        "SELECT o.outcome, count(*) FROM graduation_outcomes o JOIN flat_memories m ON m.id = o.memory_id "
        "WHERE m.project_id = ANY(%s) GROUP BY o.outcome",
        (pids,),
    ).fetchall()}
    window = make_window(now, gs)
    judged, kept = db.one(conn.execute(
        f"SELECT count(*), count(*) FILTER (WHERE {_UNCHANGED}) "
        "FROM flat_memories m WHERE m.project_id = ANY(%s) AND m.approved_at <= %s",
        (gs.kept_after_days, pids, window),
    ))
    drafted = db.one(conn.execute(
        "SELECT count(DISTINCT (project_id, node_id)) FROM graduation_drafts WHERE project_id = ANY(%s)", (pids,)
    ))[0]
    return {
        "candidates": int(drafted) + len(candidates(conn, pids, gs)),
        "pending": int(drafts.get("pending", 0)),
        "approved": int(drafts.get("approved", 0)),
        "rejected": int(drafts.get("rejected", 0)),
        "duplicates": int(drafts.get("duplicate", 0)),
        "kept_30d": int(kept),
        "edited": int(outcomes.get("edited", 0)),
        "deleted": int(outcomes.get("deleted", 0)),
        "judged_30d": int(judged),
        "kept_share": round(kept / judged, 3) if judged else None,
    }


#: A memory ``m`` neither edited nor deleted within its first ``%s`` days (the kept window).
_UNCHANGED = ("NOT EXISTS (SELECT 1 FROM graduation_outcomes o WHERE o.memory_id = m.id"
              " AND o.outcome IN ('edited', 'deleted') AND o.at <= m.approved_at + make_interval(days => %s))")


def make_window(now: datetime, gs: GraduationSettings = DEFAULT) -> datetime:
    return now - timedelta(days=gs.kept_after_days)


def outcomes(settings: Settings, project_root: str | None = None) -> dict[str, Any]:
    """Graduation counts for ``rgraph stats`` (one project, or all). Empty when the warm graph is off."""
    if not settings.warm:
        return {}

    with db.connect(settings) as conn:
        return outcome_counts(conn, project_ids(conn, project_root), settings.clock.now(), settings.graduation)
