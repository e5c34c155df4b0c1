"""The branch cache: a graph's nodes and their neighbourhoods one record each, for a prompt
that names a topic.

A prompt that names a node gets that node's branch, and any news since the last note
(:func:`rolling_graph.render.inject.prompt_context`): a few nodes, their links and their
neighbours' labels. Loading the whole graph for them costs the hook most of its time on a
big session (a 2,000-node graph: ~2.4 ms to rebuild its 5,000 dicts from the marshal cache,
~3 ms with the read). This cache keeps every node, and every node's adjacency list, as its
own :mod:`marshal` record, so the hook decodes only what it shows (~0.3 ms).

``<sid>.branches.cache`` is derived from the graph file like ``graph.cache``: never fsynced,
used only when it names the exact graph file on disk (inode, size, mtime), the journal
has not grown past that graph, and the same Python wrote it; else ignored, and the hook
loads the whole graph as it does without one. The processes that are not a hook write it
with the graph (the detached probe, reconciliation, the CLI), since building it costs a
2,000-node graph ~4 ms; a hook that writes the graph (``SessionStart`` merging a resume
snapshot, a probe in ``sync`` mode) leaves it stale until the next such write.
"""

from __future__ import annotations

import marshal

from rolling_graph.core.adjacency import adjacency

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterable
    from typing import Any

    from rolling_graph.core.types import Adjacency, GraphDoc, Node

#: Bumped when the records change shape: a cache of another tag is ignored.
TAG = "rolling-graph-branches-1"


def cache_key() -> tuple[str, int, int, int]:
    import sys

    return (TAG, marshal.version, *sys.version_info[:2])


def build(graph: GraphDoc, signature: tuple[int, int, int]) -> bytes:
    """The cache of ``graph`` (as written, its file's ``signature``): the graph's own fields,
    then one record per node and one adjacency list per node that has links."""
    header = {k: v for k, v in graph.items() if k not in ("nodes", "edges")}
    nodes = {nid: marshal.dumps(dict(node)) for nid, node in graph["nodes"].items()}
    links = {nid: marshal.dumps(adj) for nid, adj in adjacency(graph).items()}
    return marshal.dumps((cache_key(), signature, int(graph.get("journal_bytes", 0)), header, nodes, links))


class Branches:
    """A graph as the branch cache holds it: nodes and adjacency lists decoded on demand."""

    def __init__(self, header: dict[str, Any], nodes: dict[str, bytes], links: dict[str, bytes]) -> None:
        self.header, self.nodes, self.links = header, nodes, links

    def subset(self, ids: Iterable[str], linked: Iterable[str]) -> tuple[GraphDoc, Adjacency]:
        """A graph document holding the nodes ``ids`` and ``linked`` and the neighbours of
        ``linked``, with no edges, and the adjacency lists of ``linked`` (exactly what
        :func:`rolling_graph.core.adjacency.adjacency` gives for them on the whole graph)."""
        adj: Adjacency = {nid: marshal.loads(self.links[nid]) for nid in dict.fromkeys(linked) if nid in self.links}
        wanted = set(ids) | set(linked) | {other for pairs in adj.values() for _, other, _ in pairs}
        nodes: dict[str, Node] = {nid: marshal.loads(self.nodes[nid]) for nid in wanted if nid in self.nodes}
        doc: GraphDoc = {**self.header, "nodes": nodes, "edges": {}}  # type: ignore[typeddict-item]
        return doc, adj


def read(path: str, signature: tuple[int, int, int], journal_bytes: int) -> Branches | None:
    """The cache at ``path`` if it was built from exactly the graph file whose stat gives
    ``signature``, that graph is not behind a journal of ``journal_bytes``, and this Python
    wrote it; else None."""
    try:
        with open(path, "rb") as fh:
            key, sig, graph_journal, header, nodes, links = marshal.loads(fh.read())
    except (OSError, EOFError, ValueError, TypeError):
        return None
    if key != cache_key() or sig != signature or not isinstance(graph_journal, int) or graph_journal < journal_bytes:
        return None
    if not (isinstance(header, dict) and isinstance(nodes, dict) and isinstance(links, dict)):
        return None
    return Branches(header, nodes, links)
