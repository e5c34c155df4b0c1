"""The focus cluster: the 3–5 most active nodes of the session (the spec, decision 8).

Activity is weight scaled by recency, so a heavy node nobody touched for a day yields to
the thing being worked on now. Superseded nodes (the older side of a ``supersedes`` edge)
never sit in the focus: the newer decision does.
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


def superseded_ids(edges: dict[str, Any]) -> set[str]:
    # Edge keys are "source|verb|target": no need to open every edge.
    return {k.rsplit("|", 1)[1] for k in edges if "|supersedes|" in k}


def activity(node: dict[str, Any], now: datetime, settings: DecaySettings) -> float:
    rec = recency(parse_iso(node.get("last_activated")), now, settings.half_life_hours)
    return float(node.get("weight", 0.0)) * (0.5 + 0.5 * rec)


def focus_cluster(graph: dict[str, Any], now: datetime, settings: DecaySettings) -> list[str]:
    """Ids of the focus cluster, most active first (deterministic: ties broken by id)."""
    nodes = graph.get("nodes", {})
    old = superseded_ids(graph.get("edges", {}))
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
