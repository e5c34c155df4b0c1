"""A graph's neighbourhoods: for each node, its edges as ``(verb, other, direction)``.

Rendering, the hook index and the injection ledger's fingerprints all read a node's
neighbours this way.
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterable

    from rolling_graph.core.types import Adjacency, GraphDoc


def adjacency(doc: GraphDoc, only: Iterable[str] | None = None) -> Adjacency:
    """node → [(verb, other, direction)] where direction is '>' (outgoing) or '<'.

    With ``only``, just those nodes' lists are built (one pass over the edges either way;
    the hook needs a handful of nodes' neighbourhoods, not the whole graph's).
    """
    adj: Adjacency = {}
    nodes = doc["nodes"]
    want = None if only is None else set(only)
    for e in doc["edges"].values():
        s, t = e["source"], e["target"]
        if want is not None and s not in want and t not in want:
            continue
        if s in nodes and t in nodes:
            v = e["relationship"]
            if want is None or s in want:
                adj.setdefault(s, []).append((v, t, ">"))
            if want is None or t in want:
                adj.setdefault(t, []).append((v, s, "<"))
    return adj
