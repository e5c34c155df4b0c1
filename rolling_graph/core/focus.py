"""The focus cluster: the 3–5 most active nodes of the session (docs/architecture.md, "Focus").

Activity is weight scaled by recency and by kind, so a heavy node nobody touched for a day
yields to the thing being worked on now, and a decision outranks the command that was
run most. Superseded nodes (the older side of a ``supersedes`` edge) and options a
correction rejected never sit in the focus: the newer decision does.
"""

from __future__ import annotations

from rolling_graph.core.clock import parse_iso
from rolling_graph.core.decay import recency
from rolling_graph.core.model import DECISION_KINDS

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Container
    from datetime import datetime

    from rolling_graph.core.config import DecaySettings
    from rolling_graph.core.types import Edge, GraphDoc, Node

#: A node joins the focus only if its activity is at least this share of the top one's.
RELATIVE_CUTOFF = 0.5
#: What a node is counts as much as how often it was touched: a decision is the session's
#: intent, a test command run sixty times is not.
KIND_FACTOR: dict[str, float] = {
    "correction": 1.0,
    "decision": 1.0,
    "preference": 0.95,
    "concept": 0.8,
    "entity": 0.8,
    "summary": 0.8,
    "symbol": 0.65,
    "error": 0.6,
    "file": 0.55,
    "command": 0.45,
}


def rejected_ids(nodes: dict[str, Node], edges: dict[str, Edge], old: Container[str]) -> set[str]:
    """Options a live decision or correction turned away from (``D|contradicts|X``);
    ``old``: :func:`superseded_by` of the same edges (the callers have it already)."""
    out = set()
    for key in edges:
        if "|contradicts|" in key:
            source, _, target = key.split("|")
            src = nodes.get(source)
            if src and src["kind"] in DECISION_KINDS and source not in old:
                out.add(target)
    return out


def superseded_by(edges: dict[str, Edge]) -> dict[str, list[str]]:
    """Which nodes are superseded, and by what: ``old id → [ids of the newer nodes]``.

    The one answer to the question (focus, renderer and the CLI's views ask it here).
    Edge keys are ``source|verb|target``: no need to open every edge.
    """
    out: dict[str, list[str]] = {}
    for key in edges:
        if "|supersedes|" in key:
            out.setdefault(key.rsplit("|", 1)[1], []).append(key.split("|", 1)[0])
    return out


def activity(node: Node, now: datetime, settings: DecaySettings) -> float:
    rec = recency(parse_iso(node["last_activated"]), now, settings.half_life_hours)
    return node["weight"] * (0.5 + 0.5 * rec) * KIND_FACTOR.get(node["kind"], 0.8)


def focus_cluster(graph: GraphDoc, now: datetime, settings: DecaySettings) -> list[str]:
    """Ids of the focus cluster, most active first (deterministic: ties broken by id)."""
    nodes = graph["nodes"]
    edges = graph["edges"]
    superseded = superseded_by(edges)
    old = superseded.keys() | rejected_ids(nodes, edges, superseded)
    ranked = sorted(
        ((activity(n, now, settings), nid) for nid, n in nodes.items() if nid not in old),
        key=lambda pair: (-pair[0], pair[1]),
    )
    if not ranked:
        return []
    top = ranked[0][0]
    chosen = [nid for score, nid in ranked[: settings.focus_max] if score >= top * RELATIVE_CUTOFF]
    if len(chosen) < settings.focus_min:
        chosen = [nid for _, nid in ranked[: settings.focus_min]]
    return chosen
