"""The focus cluster: the 3–5 most active nodes of the session (the spec, decision 8).

Activity is weight scaled by recency and by kind, so a heavy node nobody touched for a day
yields to the thing being worked on now, and a decision outranks the command that was
run most. Superseded nodes (the older side of a ``supersedes`` edge) and options a
correction rejected never sit in the focus: the newer decision does.
"""

from __future__ import annotations

from .decay import recency
from .model import parse_iso

TYPE_CHECKING = False
if TYPE_CHECKING:
    from datetime import datetime
    from typing import Any

    from .config import DecaySettings

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


def rejected_ids(nodes: dict[str, Any], edges: dict[str, Any], old: set[str]) -> set[str]:
    """Options a live decision or correction turned away from (``D|contradicts|X``);
    ``old``: :func:`superseded_ids` of the same edges (the callers have it already)."""
    out = set()
    for key in edges:
        if "|contradicts|" in key:
            source, _, target = key.split("|")
            src = nodes.get(source)
            if src and src.get("kind") in ("decision", "correction") and source not in old:
                out.add(target)
    return out


def superseded_ids(edges: dict[str, Any]) -> set[str]:
    # Edge keys are "source|verb|target": no need to open every edge.
    return {k.rsplit("|", 1)[1] for k in edges if "|supersedes|" in k}


def activity(node: dict[str, Any], now: datetime, settings: DecaySettings) -> float:
    rec = recency(parse_iso(node.get("last_activated")), now, settings.half_life_hours)
    return float(node.get("weight", 0.0)) * (0.5 + 0.5 * rec) * KIND_FACTOR.get(str(node.get("kind")), 0.8)


def focus_cluster(graph: dict[str, Any], now: datetime, settings: DecaySettings) -> list[str]:
    """Ids of the focus cluster, most active first (deterministic: ties broken by id)."""
    nodes = graph.get("nodes", {})
    edges = graph.get("edges", {})
    superseded = superseded_ids(edges)
    old = superseded | rejected_ids(nodes, edges, superseded)
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
