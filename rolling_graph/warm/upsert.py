"""Write one session's cleaned nodes and edges into the warm graph (the caller's transaction).

A warm node's weight (an edge's strength) is a pure function of every session's
contribution (:mod:`rolling_graph.warm.merge`). The merge reads the *other* sessions'
contributions first, folds in this session's view in Python, and then writes each table
once: one ``INSERT … ON CONFLICT`` for nodes, their contributions, edges and theirs. The
earlier shape (insert, then read everything back, then ``UPDATE`` every row again) cost a
second write of every row, about 450 ms of a 2,000-node reconcile. Arrays are sent in
binary (``%b``): psycopg dumps 3,000 timestamps in 2 ms that way and in ~25 ms as text.

The caller holds the project's advisory lock, so no other reconcile of the project runs
meanwhile; existing node rows are also locked ``FOR UPDATE`` before they are read, because
seeding and review write nodes (anchor, floor, seed weight) without that lock.
"""

from __future__ import annotations

import struct
from datetime import datetime
from typing import TYPE_CHECKING, Any

from rolling_graph.warm import merge, warm_facts

if TYPE_CHECKING:
    from rolling_graph.warm.db import Connection

_REAL = struct.Struct("f")

#: The advisory-lock key of one project (``%s``: its root). A reconcile holds it exclusively
#: for its merge; the vectors inserted alongside take it shared to wait for the merge's end.
PROJECT_LOCK = "hashtext('rgraph-project:' || %s)"


def as_real(value: float) -> float:
    """``value`` as PostgreSQL stores it in a ``real`` column (single precision).

    This session's contribution is folded in before it is stored; rounding it as the column
    will keep it means a later recompute from the stored rows gives the same weight.
    """
    return float(_REAL.unpack(_REAL.pack(value))[0])


def _node_contributions(
    conn: Connection, pid: int, node_ids: list[str], exclude_session: str | None
) -> tuple[dict[str, list[merge.Contribution]], dict[str, int]]:
    contributions: dict[str, list[merge.Contribution]] = {}
    activations: dict[str, int] = {}
    for nid, sid, weight, last, acts in conn.execute(
        "SELECT node_id, session_id, weight, last_activated, activations FROM node_sessions "
        "WHERE project_id = %s AND node_id = ANY(%b) AND session_id IS DISTINCT FROM %s",
        (pid, node_ids, exclude_session),
    ):
        contributions.setdefault(nid, []).append(merge.Contribution(sid, weight, last))
        activations[nid] = activations.get(nid, 0) + acts
    return contributions, activations


def upsert_nodes(
    conn: Connection, pid: int, sid: str, seq: int, nodes: list[dict[str, Any]], policy: merge.MergePolicy
) -> set[str]:
    """Merge ``nodes`` (one session's view) into the project; returns the ids that were new.

    A node marked ``untouched`` (pulled from the warm graph, never touched in the session)
    whose facts say what the warm graph says is left out: counting it would make every
    pulled node one session more frequent each time it is handed out. Facts fold as
    :func:`rolling_graph.warm.warm_facts.fold` says.
    """
    if not nodes:
        return set()
    ids = [n["id"] for n in nodes]
    existing: dict[str, tuple[float | None, datetime, bool, float, str, Any, datetime]] = {
        r[0]: r[1:]
        for r in conn.execute(
            "SELECT id, seed_weight, first_seen, anchor, floor, confidence, facts, last_activated FROM nodes "
            "WHERE project_id = %s AND id = ANY(%b) ORDER BY id FOR UPDATE",
            (pid, ids),
        )
    }
    nodes = [n for n in nodes if not (n.get("untouched") and n["id"] in existing
                                      and warm_facts.same(n.get("facts"), existing[n["id"]][5]))]
    if not nodes:
        return set()
    ids = [n["id"] for n in nodes]
    others, other_acts = _node_contributions(conn, pid, ids, sid)
    weights, counts, acts, confidences, facts = [], [], [], [], []
    for n in nodes:
        mine = merge.Contribution(sid, as_real(n["weight"]), n["last_activated"])
        contributions = [*others.get(n["id"], []), mine]
        row = existing.get(n["id"])
        if row is None:
            seed_weight, seed_time, anchor, floor, confidence = None, None, n["anchor"], n["floor"], None
            warm, warm_at = None, None
        else:
            seed_weight, first_seen, anchor, floor, confidence, warm, warm_at = row
            seed_time, anchor, floor = min(first_seen, n["first_seen"]), anchor or n["anchor"], max(floor, n["floor"])
        weights.append(merge.node_weight(contributions, seed_weight=seed_weight, seed_time=seed_time, anchor=anchor,
                                         floor=floor, policy=policy))
        counts.append(len(contributions))
        acts.append(other_acts.get(n["id"], 0) + n["activations"])
        confidences.append(merge.merge_confidence(confidence, n["confidence"]))  # the stronger kind wins
        facts.append(warm_facts.encode(warm_facts.fold(warm, warm_at, n.get("facts"), n["last_activated"])))

    col = {k: [n[k] for n in nodes] for k in ("label", "domain", "kind", "summary", "anchor", "floor", "first_seen",
                                               "last_activated", "activations", "weight", "sources")}
    conn.execute(
        "INSERT INTO nodes AS w (project_id, id, label, domain, kind, summary, confidence, weight, anchor, floor, first_seen,"
        " last_activated, activations, session_count, facts) "
        "SELECT %s, i, l, d, k, s, c, wt, a, f, fs, la, ac, sc, fa::jsonb FROM unnest(%b::text[], %b::text[], %b::text[], %b::text[],"
        " %b::text[], %b::text[], %b::real[], %b::bool[], %b::real[], %b::timestamptz[], %b::timestamptz[], %b::int[], %b::int[],"
        " %b::text[]) AS u(i, l, d, k, s, c, wt, a, f, fs, la, ac, sc, fa) "
        "ON CONFLICT (project_id, id) DO UPDATE SET "
        " label = CASE WHEN EXCLUDED.last_activated >= w.last_activated THEN EXCLUDED.label ELSE w.label END,"
        " domain = CASE WHEN EXCLUDED.last_activated >= w.last_activated THEN EXCLUDED.domain ELSE w.domain END,"
        " kind = CASE WHEN EXCLUDED.last_activated >= w.last_activated THEN EXCLUDED.kind ELSE w.kind END,"
        " summary = CASE WHEN EXCLUDED.last_activated >= w.last_activated THEN coalesce(EXCLUDED.summary, w.summary)"
        " ELSE coalesce(w.summary, EXCLUDED.summary) END,"
        " confidence = EXCLUDED.confidence, weight = EXCLUDED.weight, activations = EXCLUDED.activations,"
        " session_count = EXCLUDED.session_count, anchor = w.anchor OR EXCLUDED.anchor, floor = greatest(w.floor, EXCLUDED.floor),"
        " first_seen = least(w.first_seen, EXCLUDED.first_seen), last_activated = greatest(w.last_activated, EXCLUDED.last_activated),"
        " facts = EXCLUDED.facts, updated_at = now()",
        (pid, ids, col["label"], col["domain"], col["kind"], col["summary"], confidences, weights, col["anchor"], col["floor"],
         col["first_seen"], col["last_activated"], acts, counts, facts),
    )
    conn.execute(
        "INSERT INTO node_sessions (project_id, node_id, session_id, weight, activations, first_seen, last_activated, sources,"
        " journal_seq, opening) "
        "SELECT %s, n, %s, wt, a, f, l, CASE WHEN s = '' THEN '{}'::text[] ELSE string_to_array(s, chr(31)) END, %s, o "
        "FROM unnest(%b::text[], %b::real[], %b::int[], %b::timestamptz[], %b::timestamptz[], %b::text[], %b::int[])"
        " AS t(n, wt, a, f, l, s, o) "
        "ON CONFLICT (project_id, node_id, session_id) DO UPDATE SET weight = EXCLUDED.weight, activations = EXCLUDED.activations,"
        " first_seen = least(node_sessions.first_seen, EXCLUDED.first_seen), last_activated = EXCLUDED.last_activated,"
        " sources = EXCLUDED.sources, journal_seq = EXCLUDED.journal_seq, opening = EXCLUDED.opening",
        (pid, sid, seq, ids, col["weight"], col["activations"], col["first_seen"], col["last_activated"],
         [chr(31).join(s) for s in col["sources"]], [n.get("opening") for n in nodes]),
    )
    return {nid for nid in ids if nid not in existing}


def recompute_nodes(conn: Connection, pid: int, node_ids: list[str], policy: merge.MergePolicy = merge.DEFAULT_POLICY) -> None:
    """Recompute warm weight, session count and activations of ``node_ids`` from their stored contributions
    (after seeding changes a node's seed weight, anchor or floor)."""
    meta = {
        r[0]: r[1:]
        for r in conn.execute(
            "SELECT id, seed_weight, first_seen, anchor, floor FROM nodes WHERE project_id = %s AND id = ANY(%s)", (pid, node_ids)
        )
    }
    contributions, activations = _node_contributions(conn, pid, node_ids, None)
    ids, weights, counts, acts_out = [], [], [], []
    for nid, (seed_weight, first_seen, anchor, floor) in meta.items():
        cs = contributions.get(nid, [])
        ids.append(nid)
        weights.append(merge.node_weight(cs, seed_weight=seed_weight, seed_time=first_seen, anchor=anchor, floor=floor, policy=policy))
        counts.append(len(cs))
        acts_out.append(activations.get(nid, 0))
    conn.execute(
        "UPDATE nodes SET weight = t.w, session_count = t.c, activations = t.a "
        "FROM unnest(%b::text[], %b::real[], %b::int[], %b::int[]) AS t(i, w, c, a) WHERE project_id = %s AND id = t.i",
        (ids, weights, counts, acts_out, pid),
    )


def upsert_edges(conn: Connection, pid: int, sid: str, seq: int, edges: list[dict[str, Any]], policy: merge.MergePolicy) -> int:
    """Merge ``edges`` by ``(source, relationship, target)``; returns how many were new."""
    if not edges:
        return 0
    s = [e["source"] for e in edges]
    r = [e["relationship"] for e in edges]
    t = [e["target"] for e in edges]
    st = [e["strength"] for e in edges]
    la = [e["last_activated"] for e in edges]
    others: dict[tuple[str, str, str], list[merge.Contribution]] = {}
    for es, er, et, esid, strength, last in conn.execute(
        "SELECT x.source, x.relationship, x.target, x.session_id, x.strength, x.last_activated "
        "FROM unnest(%b::text[], %b::text[], %b::text[]) AS u(s, r, t) JOIN edge_sessions x "
        "ON x.project_id = %s AND x.source = u.s AND x.relationship = u.r AND x.target = u.t WHERE x.session_id <> %s",
        (s, r, t, pid, sid),
    ):
        others.setdefault((es, er, et), []).append(merge.Contribution(esid, strength, last))
    strengths, counts = [], []
    for e in edges:
        contributions = [*others.get((e["source"], e["relationship"], e["target"]), []),
                         merge.Contribution(sid, as_real(e["strength"]), e["last_activated"])]
        strengths.append(merge.edge_strength(e["relationship"], contributions, policy))
        counts.append(len(contributions))
    inserted = conn.execute(
        "INSERT INTO edges AS e (project_id, source, relationship, target, strength, first_seen, last_activated, session_count) "
        "SELECT %s, s, r, t, st, la, la, c FROM unnest(%b::text[], %b::text[], %b::text[], %b::real[], %b::timestamptz[], %b::int[])"
        " AS u(s, r, t, st, la, c) "
        "ON CONFLICT (project_id, source, relationship, target) DO UPDATE SET strength = EXCLUDED.strength,"
        " session_count = EXCLUDED.session_count, last_activated = greatest(e.last_activated, EXCLUDED.last_activated) "
        "RETURNING (xmax = 0)",
        (pid, s, r, t, strengths, la, counts),
    ).fetchall()
    conn.execute(
        "INSERT INTO edge_sessions (project_id, source, relationship, target, session_id, strength, last_activated, journal_seq) "
        "SELECT %s, s, r, t, %s, st, la, %s FROM unnest(%b::text[], %b::text[], %b::text[], %b::real[], %b::timestamptz[]) AS u(s, r, t, st, la) "
        "ON CONFLICT (project_id, source, relationship, target, session_id) DO UPDATE SET strength = EXCLUDED.strength,"
        " last_activated = EXCLUDED.last_activated, journal_seq = EXCLUDED.journal_seq",
        (pid, sid, seq, s, r, t, st, la),
    )
    return sum(1 for row in inserted if row[0])
