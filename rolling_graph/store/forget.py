"""Forgetting in a session's graph (``rgraph forget``): the user removes nodes, and may put
them back.

Both are journaled like every change (:meth:`rolling_graph.store.sidecar.SidecarStore.commit_entry`):
a ``forget`` entry removes the nodes and every edge at either end, and keeps what it removed,
as it was, beside its ops (``removed``: data, never applied); an ``unforget`` entry adds
them back from there. A rebuild from the journal does the same. The warm graph's side is
:mod:`rolling_graph.warm.forget`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

from rolling_graph.core.errors import UserError

if TYPE_CHECKING:
    from collections.abc import Iterable

    from rolling_graph.core.types import Edge, JournalEntry, Node, PatchOp
    from rolling_graph.store.sidecar import SidecarStore


def forget(store: SidecarStore, sid: str, node_ids: list[str], *, rationale: str) -> list[str]:
    """Remove nodes, with every edge at either end, because the user said so; journaled
    (kind ``forget``), so a rebuild from the journal forgets them too. New activity may
    bring a name back as a new node. Returns the ids that existed and were removed."""
    with store.transaction(sid) as doc:
        found = [n for n in dict.fromkeys(node_ids) if n in doc["nodes"]]
        if found:
            gone = set(found)
            edges = {k: e for k, e in doc["edges"].items() if e.get("source") in gone or e.get("target") in gone}
            ops: list[PatchOp] = [{"op": "remove", "path": f"/edges/{_pointer(key)}"} for key in edges]
            ops += [{"op": "remove", "path": f"/nodes/{_pointer(nid)}"} for nid in found]
            store.commit_entry(doc, {
                "kind": "forget", "rationale": rationale, "event_id": None, "backend": "user", "reasons": ["forget"], "ops": ops,
                # What went, as it was: not applied (only ``ops`` change the graph), kept for ``unforget``.
                "removed": {"nodes": {nid: doc["nodes"][nid] for nid in found}, "edges": edges},
            })
    return found


class AmbiguousName(UserError):
    """A name that matches more than one node: refused, with the list, so nothing is
    removed, put back or shown that the user did not name."""

    def __init__(self, name: str, matches: Mapping[str, str]) -> None:
        self.name, self.matches = name, dict(matches)
        listed = ", ".join(f"{label} ({nid})" for nid, label in self.matches.items())
        super().__init__(f"{name!r} names more than one node: {listed}; give the id of the one meant")


def name_matches(name: str, labels: Mapping[str, str]) -> list[str]:
    """Every id ``name`` names among ``labels`` (id -> label): the id itself, and the nodes
    whose label is ``name`` as typed (or, when none is, equal ignoring case). The typed name
    is never slugified nor cut to a fragment: ``session.cwd`` never names ``session_cwd``."""
    hits = [name] if name in labels else []
    exact = [nid for nid, label in labels.items() if label == name and nid != name]
    if not hits and not exact:
        folded = name.casefold()
        exact = [nid for nid, label in labels.items() if label.casefold() == folded]
    return list(dict.fromkeys([*hits, *exact]))


def named_ids(names: list[str], labels: Mapping[str, str]) -> list[str]:
    """The ids ``names`` name among ``labels`` (:func:`name_matches`); a name that matches
    more than one node raises :class:`AmbiguousName` (forgetting is for good: never a guess)."""
    ids: list[str] = []
    for name in names:
        found = name_matches(name, labels)
        if len(found) > 1:
            raise AmbiguousName(name, {nid: labels[nid] for nid in found})
        ids += found
    return list(dict.fromkeys(ids))


def forgotten_records(entries: Iterable[JournalEntry]) -> tuple[dict[str, tuple[Node, str]], dict[str, Edge]]:
    """What the ``forget`` entries among ``entries`` removed: each node as it was with when
    (the last forget of it wins), and the edges."""
    nodes: dict[str, tuple[Node, str]] = {}
    edges: dict[str, Edge] = {}
    for entry in entries:
        removed = entry.get("removed") if entry.get("kind") == "forget" else None
        if isinstance(removed, dict):
            nodes.update({nid: (node, str(entry.get("at") or "")) for nid, node in (removed.get("nodes") or {}).items() if isinstance(node, dict)})
            edges.update({k: e for k, e in (removed.get("edges") or {}).items() if isinstance(e, dict)})
    return nodes, edges


def unforget(store: SidecarStore, sid: str, node_ids: list[str], *, rationale: str) -> list[str]:
    """Put back nodes :func:`forget` removed, as they were then, with their edges whose
    other end is in the graph; journaled (kind ``unforget``). A node in the graph again
    by now (new work on its name) is left as it is. Returns the ids put back."""
    removed_nodes, removed_edges = forgotten_records(store.read_journal(sid))
    with store.transaction(sid) as doc:
        back = [nid for nid in node_ids if nid in removed_nodes and nid not in doc["nodes"]]
        if back:
            present = set(doc["nodes"]) | set(back)
            ops: list[PatchOp] = [{"op": "add", "path": f"/nodes/{_pointer(nid)}", "value": removed_nodes[nid][0]} for nid in back]
            ops += [
                {"op": "add", "path": f"/edges/{_pointer(key)}", "value": edge}
                for key, edge in removed_edges.items()
                if key not in doc["edges"] and edge.get("source") in present and edge.get("target") in present
                and (edge.get("source") in back or edge.get("target") in back)
            ]
            store.commit_entry(
                doc, {"kind": "unforget", "rationale": rationale, "event_id": None, "backend": "user", "reasons": ["unforget"], "ops": ops}
            )
    return back


def _pointer(key: str) -> str:
    """One RFC 6901 pointer part: ``~`` and ``/`` escaped (an edge key may hold neither, but
    a pointer is only right escaped)."""
    return key.replace("~", "~0").replace("/", "~1")
