"""Distance-from-focus decay with a time factor (docs/architecture.md, "Weights and decay").

The formula, applied once per probe cycle::

    new_weight = weight * (1 - decay_rate * distance_factor) * time_factor

read as follows (documented choices, tested in ``tests/core/test_decay.py``):

* ``distance_factor`` = hops from the focus cluster over edges in either direction,
  capped at ``max_hops``; a node with no path to the focus counts as ``max_hops``.
* The formula's key property — *recently activated nodes resist distance decay because their
  time factor has not eroded yet* — is made explicit: the distance term is scaled by
  ``1 - recency`` where ``recency = 2 ** (-age / half_life_hours)`` and ``age`` is the time
  since ``last_activated``. A node activated a moment ago loses nothing to distance.
* ``time_factor = 2 ** (-elapsed / time_half_life_hours)`` where ``elapsed`` is the wall
  time since the previous decay pass, so that any number of passes over a period
  compose to the same slow exponential decay (no dependence on how often probes run).
* Anchors never fall below their floor (0.2).
"""

from __future__ import annotations

from rolling_graph.core.clock import iso, parse_iso
from rolling_graph.core.weights import node_floor, round_w

TYPE_CHECKING = False
if TYPE_CHECKING:
    from datetime import datetime

    from rolling_graph.core.config import DecaySettings
    from rolling_graph.core.types import Edge, GraphDoc, Node


def hops_from(focus: list[str], nodes: dict[str, Node], edges: dict[str, Edge], cap: int) -> dict[str, int]:
    """Undirected hop distance of every node from the focus set, capped at ``cap``."""
    adjacency: dict[str, list[str]] = {}
    for edge in edges.values():
        s, t = edge["source"], edge["target"]
        if s in nodes and t in nodes:
            adjacency.setdefault(s, []).append(t)
            adjacency.setdefault(t, []).append(s)
    dist = {nid: cap for nid in nodes}
    # Breadth first, a hop at a time (plain lists: ``collections`` costs the hook its import).
    level = [nid for nid in focus if nid in nodes]
    for nid in level:
        dist[nid] = 0
    d = 1
    while level and d < cap:
        reached: list[str] = []
        for cur in level:
            for nxt in adjacency.get(cur, ()):
                if d < dist[nxt]:
                    dist[nxt] = d
                    reached.append(nxt)
        level, d = reached, d + 1
    return dist


def recency(last_activated: datetime | None, now: datetime, half_life_hours: float) -> float:
    """1.0 for a node activated now, halving every ``half_life_hours``."""
    if last_activated is None:
        return 0.0
    age_h = (now - last_activated).total_seconds() / 3600.0
    return halving(age_h, half_life_hours) if half_life_hours > 0 else 0.0


def halving(age_hours: float, half_life_hours: float) -> float:
    """``0.5 ** (age / half_life)`` for a positive half-life (a negative age counts as 0)."""
    return float(2.0 ** (-max(0.0, age_hours) / half_life_hours))


def decayed_weight(
    weight: float,
    hops: int,
    recency_value: float,
    elapsed_hours: float,
    settings: DecaySettings,
    floor: float = 0.0,
) -> float:
    """One decay step for one node (pure; see the module docstring)."""
    distance_factor = min(max(hops, 0), settings.max_hops)
    distance_term = 1.0 - settings.decay_rate * distance_factor * (1.0 - recency_value)
    time_factor = 2.0 ** (-max(0.0, elapsed_hours) / settings.time_half_life_hours)
    return float(max(floor, min(1.0, max(0.0, weight * distance_term * time_factor))))


def decay_graph(graph: GraphDoc, now: datetime, settings: DecaySettings) -> None:
    """Decay every node in place, relative to the current focus; records the pass time."""
    nodes = graph["nodes"]
    last = parse_iso(graph.get("last_decay_at"))
    elapsed_h = max(0.0, (now - last).total_seconds() / 3600.0) if last else 0.0
    dist = hops_from(graph["focus"], nodes, graph["edges"], settings.max_hops)
    for nid, node in nodes.items():
        rec = recency(parse_iso(node["last_activated"]), now, settings.half_life_hours)
        new = decayed_weight(node["weight"], dist.get(nid, settings.max_hops), rec, elapsed_h, settings, node_floor(node, settings))
        node["weight"] = round_w(new)
    graph["last_decay_at"] = iso(now)
