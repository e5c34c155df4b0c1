"""Forget nodes of a project's warm graph (``rgraph forget``), and keep them forgotten.

A forgotten node is deleted with everything that hangs off it (its edges, per-session
contributions, vectors, graduation drafts), and remembered in ``forgotten_nodes`` with the
time. Reconciliation then drops a session's contribution of that node unless the session
touched it after that time (:func:`keep_remembered`): reconciling an old sidecar again, or a
session that pulled the node and never used it, does not bring it back; new work on the
same name does. The project's resume snapshot is rewritten at once.
"""

from __future__ import annotations

from datetime import datetime
from typing import TYPE_CHECKING, Any

from rolling_graph.core.config import Settings
from rolling_graph.store.forget import named_ids
from rolling_graph.warm import resume, upsert

if TYPE_CHECKING:
    from rolling_graph.warm.db import Connection


def forget_nodes(conn: Connection, settings: Settings, root: str, names: list[str]) -> list[tuple[str, str, bool]]:
    """Forget the nodes of project ``root`` that ``names`` name: by id, or by a label (any
    case) that one node alone has. Returns ``(id, label, anchor)`` of each one forgotten (an
    anchor came from flat memory, and seeding brings it back while its memory is there).
    Commits; rewrites the snapshot."""
    if not names:
        return []
    now = settings.clock.now()
    with conn.transaction():
        conn.execute(f"SELECT pg_advisory_xact_lock({upsert.PROJECT_LOCK})", (root,))  # not during a reconcile
        row = conn.execute("SELECT id FROM projects WHERE root = %s", (root,)).fetchone()
        if row is None:
            return []
        pid = int(row[0])
        labels: dict[str, str] = {nid: label for nid, label in conn.execute(
            "SELECT id, label FROM nodes WHERE project_id = %s AND (id = ANY(%s) OR lower(label) = ANY(%s))",
            (pid, names, [n.strip().lower() for n in names]),
        ).fetchall()}
        ids = named_ids(names, labels)
        gone = conn.execute(
            "DELETE FROM nodes WHERE project_id = %s AND id = ANY(%s) RETURNING id, label, anchor", (pid, ids)
        ).fetchall()
        for nid, label, _anchor in gone:
            conn.execute(
                "INSERT INTO forgotten_nodes (project_id, node_id, label, forgotten_at) VALUES (%s, %s, %s, %s) "
                "ON CONFLICT (project_id, node_id) DO UPDATE SET label = EXCLUDED.label, forgotten_at = EXCLUDED.forgotten_at",
                (pid, nid, label, now),
            )
    if gone:
        resume.refresh_snapshot(conn, settings, root)
    return [(str(nid), str(label), bool(anchor)) for nid, label, anchor in gone]


def forgotten(conn: Connection, pid: int) -> dict[str, datetime]:
    """The project's forgotten node ids and when each was forgotten."""
    return {str(nid): at for nid, at in conn.execute("SELECT node_id, forgotten_at FROM forgotten_nodes WHERE project_id = %s", (pid,))}


def keep_remembered(nodes: list[dict[str, Any]], gone: dict[str, datetime]) -> list[dict[str, Any]]:
    """``nodes`` (as :func:`rolling_graph.warm.reconcile._clean_nodes` gives them) less
    those forgotten since this session last touched them."""
    if not gone:
        return nodes
    return [n for n in nodes if n["id"] not in gone or n["last_activated"] > gone[n["id"]]]


def unforget_nodes(conn: Connection, root: str, ids: list[str]) -> list[str]:
    """Let project ``root``'s forgotten ``ids`` back: their reconciles count again. Returns
    the ids that were forgotten. Commits."""
    with conn.transaction():
        back = conn.execute(
            "DELETE FROM forgotten_nodes f USING projects p WHERE p.id = f.project_id AND p.root = %s AND f.node_id = ANY(%s) "
            "RETURNING f.node_id",
            (root, ids),
        ).fetchall()
    return [str(nid) for (nid,) in back]


def forgotten_list(conn: Connection, root: str) -> list[tuple[str, str, datetime]]:
    """Project ``root``'s forgotten nodes: ``(id, label, when)``, newest first."""
    return [
        (str(nid), str(label), at)
        for nid, label, at in conn.execute(
            "SELECT f.node_id, f.label, f.forgotten_at FROM forgotten_nodes f JOIN projects p ON p.id = f.project_id "
            "WHERE p.root = %s ORDER BY f.forgotten_at DESC, f.node_id",
            (root,),
        )
    ]
