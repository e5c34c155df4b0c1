"""Forget nodes of a project's warm graph (``rgraph forget``), and keep them forgotten.

A forgotten node is deleted with everything that hangs off it (its edges, per-session
contributions, vectors, graduation drafts), and remembered in ``forgotten_nodes`` with the
time. Reconciliation then drops a session's contribution of that node unless the session
touched it after that time (:func:`keep_remembered`): reconciling an old sidecar again, or a
session that pulled the node and never used it, does not bring it back; new work on the
same name does. The project's resume snapshot is rewritten at once.
"""

from __future__ import annotations

import json
from datetime import datetime
from typing import TYPE_CHECKING, Any

from rolling_graph.core.config import Settings
from rolling_graph.store.forget import named_ids
from rolling_graph.warm import resume, upsert

if TYPE_CHECKING:
    from rolling_graph.warm.db import Connection


def node_labels(conn: Connection, root: str, names: list[str]) -> dict[str, str]:
    """The nodes of project ``root`` that ``names`` could name (by id, or a label in any case):
    id -> label, for :func:`rolling_graph.store.forget.name_matches` to decide."""
    if not names:
        return {}
    return {str(nid): str(label) for nid, label in conn.execute(
        "SELECT n.id, n.label FROM nodes n JOIN projects p ON p.id = n.project_id "
        "WHERE p.root = %s AND (n.id = ANY(%s) OR lower(n.label) = ANY(%s))",
        (root, names, [n.lower() for n in names]),
    ).fetchall()}


def forget_nodes(conn: Connection, settings: Settings, root: str, names: list[str]) -> list[tuple[str, str, bool]]:
    """Forget the nodes of project ``root`` that ``names`` name: by id, or by a label as typed
    (:func:`rolling_graph.store.forget.named_ids`; a name that matches two nodes raises
    :class:`rolling_graph.store.forget.AmbiguousName` and nothing is forgotten). Returns
    ``(id, label, anchor)`` of each one forgotten (an anchor came from flat memory, and seeding
    brings it back while its memory is there). Commits; rewrites the snapshot."""
    return forget_ids(conn, settings, root, named_ids(names, node_labels(conn, root, names)))


def forget_ids(conn: Connection, settings: Settings, root: str, ids: list[str]) -> list[tuple[str, str, bool]]:
    """Forget exactly the nodes ``ids`` of project ``root`` (see :func:`forget_nodes`)."""
    if not ids:
        return []
    now = settings.clock.now()
    with conn.transaction():
        conn.execute(f"SELECT pg_advisory_xact_lock({upsert.PROJECT_LOCK})", (root,))  # not during a reconcile
        row = conn.execute("SELECT id FROM projects WHERE root = %s", (root,)).fetchone()
        if row is None:
            return []
        pid = int(row[0])
        saved = {nid: _saved_rows(conn, pid, nid) for nid in ids}  # as they were: --undo puts them back whole
        gone = conn.execute(
            "DELETE FROM nodes WHERE project_id = %s AND id = ANY(%s) RETURNING id, label, anchor", (pid, ids)
        ).fetchall()
        for nid, label, _anchor in gone:
            conn.execute(
                "INSERT INTO forgotten_nodes (project_id, node_id, label, forgotten_at, saved) VALUES (%s, %s, %s, %s, %s::jsonb) "
                "ON CONFLICT (project_id, node_id) DO UPDATE SET label = EXCLUDED.label, forgotten_at = EXCLUDED.forgotten_at, "
                "saved = EXCLUDED.saved",
                (pid, nid, label, now, json.dumps(saved.get(str(nid)), default=str)),
            )
    if gone:
        resume.refresh_snapshot(conn, settings, root)
    return [(str(nid), str(label), bool(anchor)) for nid, label, anchor in gone]


def purge_ids(conn: Connection, settings: Settings, root: str, ids: list[str]) -> tuple[list[tuple[str, str]], list[str]]:
    """Erase nodes of project ``root`` for good (``rgraph forget --purge``): their rows go with
    everything that hangs off them (contributions, edges, vectors, drafts), and
    ``forgotten_nodes`` keeps only the id and the time (no label, nothing to put back), so a
    reconcile of an old sidecar does not bring them back either. Nodes forgotten earlier
    lose their saved label and rows the same way. Returns ``(id, label)`` of the rows erased
    and the ids whose forgotten record was cleared. Commits; rewrites the snapshot."""
    if not ids:
        return [], []
    now = settings.clock.now()
    with conn.transaction():
        conn.execute(f"SELECT pg_advisory_xact_lock({upsert.PROJECT_LOCK})", (root,))
        row = conn.execute("SELECT id FROM projects WHERE root = %s", (root,)).fetchone()
        if row is None:
            return [], []
        pid = int(row[0])
        cleared = [str(nid) for (nid,) in conn.execute(
            "UPDATE forgotten_nodes SET label = NULL, saved = NULL WHERE project_id = %s AND node_id = ANY(%s) "
            "AND (label IS NOT NULL OR saved IS NOT NULL) RETURNING node_id", (pid, ids)
        ).fetchall()]
        gone = conn.execute("DELETE FROM nodes WHERE project_id = %s AND id = ANY(%s) RETURNING id, label", (pid, ids)).fetchall()
        for nid, _label in gone:
            conn.execute(
                "INSERT INTO forgotten_nodes (project_id, node_id, label, forgotten_at, saved) VALUES (%s, %s, NULL, %s, NULL) "
                "ON CONFLICT (project_id, node_id) DO UPDATE SET label = NULL, saved = NULL, forgotten_at = EXCLUDED.forgotten_at",
                (pid, nid, now),
            )
    if gone or cleared:
        resume.refresh_snapshot(conn, settings, root)
    return [(str(nid), str(label)) for nid, label in gone], cleared


def forgotten(conn: Connection, pid: int) -> dict[str, datetime]:
    """The project's forgotten node ids and when each was forgotten."""
    return {str(nid): at for nid, at in conn.execute("SELECT node_id, forgotten_at FROM forgotten_nodes WHERE project_id = %s", (pid,))}


def keep_remembered(nodes: list[dict[str, Any]], gone: dict[str, datetime]) -> list[dict[str, Any]]:
    """``nodes`` (as :func:`rolling_graph.warm.reconcile._clean_nodes` gives them) less
    those forgotten since this session last touched them."""
    if not gone:
        return nodes
    return [n for n in nodes if n["id"] not in gone or n["last_activated"] > gone[n["id"]]]


#: The rows that hang off a node, saved when it is forgotten: (table, the row's node columns).
_SAVED_TABLES = (
    ("node_sessions", ("node_id",)),
    ("edges", ("source", "target")),
    ("edge_sessions", ("source", "target")),
    ("node_embeddings", ("node_id",)),
)


def _saved_rows(conn: Connection, pid: int, nid: str) -> dict[str, Any] | None:
    """The node's row and the rows that hang off it, as JSON rows of their tables."""
    row = conn.execute("SELECT to_jsonb(n) FROM nodes n WHERE project_id = %s AND id = %s", (pid, nid)).fetchone()
    if row is None:
        return None
    saved: dict[str, Any] = {"nodes": [row[0]]}
    for table, columns in _SAVED_TABLES:
        where = " OR ".join(f"t.{c} = %s" for c in columns)
        saved[table] = [r[0] for r in conn.execute(
            f"SELECT to_jsonb(t) FROM {table} t WHERE t.project_id = %s AND ({where})", (pid, *[nid] * len(columns))
        )]
    return saved


def _restore(conn: Connection, pid: int, saved: dict[str, Any]) -> None:
    """Put back what :func:`_saved_rows` saved: rows that exist again by now (new work on the
    name, reconciled since) win, and an edge comes back only if both its ends are there (a
    node back by new work is then recomputed from the saved contributions and the new ones,
    as a reconcile computes it)."""
    for table in ("nodes", "node_sessions", "edges", "edge_sessions", "node_embeddings"):
        rows = [r for r in saved.get(table) or [] if isinstance(r, dict)]
        if not rows:
            continue
        guard = ""
        if table == "edges":
            guard = (" WHERE EXISTS (SELECT 1 FROM nodes n WHERE n.project_id = r.project_id AND n.id = r.source)"
                     " AND EXISTS (SELECT 1 FROM nodes n WHERE n.project_id = r.project_id AND n.id = r.target)")
        elif table == "edge_sessions":
            guard = (" WHERE EXISTS (SELECT 1 FROM edges e WHERE e.project_id = r.project_id AND e.source = r.source"
                     " AND e.relationship = r.relationship AND e.target = r.target)")
        conn.execute(
            f"INSERT INTO {table} SELECT r.* FROM jsonb_populate_recordset(NULL::{table}, %s::jsonb) r{guard} ON CONFLICT DO NOTHING",
            (json.dumps([dict(r, project_id=pid) for r in rows]),),
        )


def unforget_nodes(conn: Connection, root: str, ids: list[str]) -> list[str]:
    """Let project ``root``'s forgotten ``ids`` back, as they were when forgotten (their row,
    every session's contribution, edges and vectors; see :func:`_restore`), and their
    reconciles count again. A session reconciled while a node was forgotten had that node's
    contribution dropped: its next reconcile is due again. Returns the ids that were
    forgotten. Commits."""
    with conn.transaction():
        conn.execute(f"SELECT pg_advisory_xact_lock({upsert.PROJECT_LOCK})", (root,))  # not during a reconcile
        back = conn.execute(
            "DELETE FROM forgotten_nodes f USING projects p WHERE p.id = f.project_id AND p.root = %s AND f.node_id = ANY(%s) "
            "AND f.label IS NOT NULL RETURNING f.project_id, f.node_id, f.forgotten_at, f.saved",  # (purged: for good)
            (root, ids),
        ).fetchall()
        again: list[str] = []  # back by new work meanwhile: folded with the saved contributions
        for pid, nid, at, saved in back:
            if isinstance(saved, dict):
                if conn.execute("SELECT 1 FROM nodes WHERE project_id = %s AND id = %s", (pid, nid)).fetchone():
                    again.append(str(nid))
                _restore(conn, int(pid), saved)
            conn.execute(  # reconciled while it was forgotten: that session's contribution of it was dropped
                "UPDATE sessions SET journal_seq = 0 WHERE project_id = %s AND last_reconciled_at >= %s", (pid, at)
            )
        if again:
            upsert.recompute_nodes(conn, int(back[0][0]), again)
    return [str(nid) for _pid, nid, _at, _saved in back]


def forgotten_list(conn: Connection, root: str) -> list[tuple[str, str, datetime]]:
    """Project ``root``'s forgotten nodes: ``(id, label, when)``, newest first (a purged
    node's label is empty: only its id and time are kept)."""
    return [
        (str(nid), str(label or ""), at)
        for nid, label, at in conn.execute(
            "SELECT f.node_id, f.label, f.forgotten_at FROM forgotten_nodes f JOIN projects p ON p.id = f.project_id "
            "WHERE p.root = %s ORDER BY f.forgotten_at DESC, f.node_id",
            (root,),
        )
    ]
