"""Read a project's warm graph back, shaped like a hot sidecar document.

For ``rgraph show --warm`` and ``rgraph view --warm``: the same renderers then serve both
graphs. Bounded: the heaviest ``limit`` nodes and the edges among them.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from rolling_graph.core.clock import iso
from rolling_graph.core.config import Settings
from rolling_graph.core.ids import edge_key
from rolling_graph.core.model import SCHEMA_VERSION
from rolling_graph.core.normalize import normalize_graph
from rolling_graph.warm import db

if TYPE_CHECKING:
    from rolling_graph.core.types import GraphDoc

DEFAULT_LIMIT = 500


def warm_document(settings: Settings, project_root: str, limit: int = DEFAULT_LIMIT) -> GraphDoc:
    """The project's warm graph as a sidecar-shaped document (``session_id`` is ``warm``).

    Raises ``rolling_graph.warm.db.DatabaseUnavailable`` when the database cannot be reached, and
    ``LookupError`` when the project has never been reconciled.
    """
    with db.connect(settings) as conn:
        row = conn.execute("SELECT id, last_focus FROM projects WHERE root = %s", (project_root,)).fetchone()
        if row is None:
            raise LookupError(f"{project_root} has no warm graph yet (no session of it was reconciled)")
        pid, last_focus = row
        nodes: dict[str, Any] = {}
        for nid, label, domain, kind, summary, confidence, weight, anchor, floor, first_seen, last_activated, activations, sessions in conn.execute(
            """SELECT id, label, domain, kind, summary, confidence, weight, anchor, floor, first_seen,
                      last_activated, activations, session_count
               FROM nodes WHERE project_id = %s ORDER BY weight DESC, id LIMIT %s""",
            (pid, limit),
        ):
            node = {
                "id": nid, "label": label, "domain": domain, "kind": kind, "weight": round(float(weight), 4),
                "last_activated": iso(last_activated), "first_seen": iso(first_seen), "activations": activations,
                "anchor": anchor, "floor": float(floor), "confidence": confidence, "sessions": sessions, "sources": [],
            }
            if summary:
                node["summary"] = summary
            nodes[nid] = node
        edges: dict[str, Any] = {}
        for source, verb, target, strength, last_activated in conn.execute(
            """SELECT source, relationship, target, strength, last_activated FROM edges
               WHERE project_id = %s AND source = ANY(%s) AND target = ANY(%s)""",
            (pid, list(nodes), list(nodes)),
        ):
            edges[edge_key(source, verb, target)] = {
                "source": source, "target": target, "relationship": verb,
                "strength": round(float(strength), 4), "last_activated": iso(last_activated),
            }
    doc = {
        "version": SCHEMA_VERSION,
        "session_id": "warm",
        "project": project_root,
        "nodes": nodes,
        "edges": edges,
        "focus": [f for f in (last_focus or []) if f in nodes],
        "journal_seq": 0,
    }
    return normalize_graph(doc, "warm")
