"""Stable keys for what a session hands the warm graph: a file by its path relative to its
worktree's top level, whichever worktree or clone of the project it was touched in.

The hot graph keys new files that way already (:mod:`rolling_graph.core.filepaths`). A sidecar
written before it did (a session in flight at the upgrade, or one ``rgraph recover`` finds
later) keys a file under its absolute path; :func:`rekey_files` re-keys such nodes by the
session's roots (its worktree top level, kept in the gate state, and its project root) and
merges two nodes that turn out to be one file. Code names, decisions and commands are keyed
by their normalised text when they are made (:func:`rolling_graph.core.ids.slugify`,
:func:`rolling_graph.core.ids.name_id`), so they need nothing here.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

from rolling_graph.core.filepaths import file_id, file_label

if TYPE_CHECKING:
    from rolling_graph.core.types import Edge, FactIntKey, Node, NodeFacts

#: The counts of a file that two nodes of it add up.
_COUNTS: tuple[FactIntKey, ...] = ("edits", "writes", "reads")


def _relative(path: str, roots: list[str]) -> str | None:
    for root in roots:
        prefix = root.rstrip("/") + "/"
        if path.startswith(prefix) and len(path) > len(prefix):
            return path[len(prefix) :]
    return None


def doc_roots(doc: Mapping[str, object]) -> list[str]:
    """The directories a session's absolute paths are relative to: its worktree's top level
    (the gate's ``root``), then its project root; longest first."""
    gate = doc.get("gate")  # a whole session's document has one; a graph's has not
    roots = [r for r in (gate.get("root") if isinstance(gate, dict) else None, doc.get("project")) if isinstance(r, str) and r.startswith("/")]
    return sorted(set(roots), key=len, reverse=True)


def file_moves(nodes: Mapping[str, Node], roots: list[str]) -> dict[str, tuple[str, str]]:
    """``old id → (new id, relative path)`` for file nodes keyed by an absolute path under a root."""
    moves: dict[str, tuple[str, str]] = {}
    if not roots:
        return moves
    for nid, node in nodes.items():
        if node["kind"] != "file":
            continue
        path = node.get("facts", {}).get("path", node["label"])
        if not path.startswith("/"):
            continue
        rel = _relative(path, roots)
        if rel and file_id(rel) != nid:
            moves[nid] = (file_id(rel), rel)
    return moves


def _merge(kept: Node, other: Node) -> Node:
    """Two hot nodes of one file as one: the more recent one's text, the larger weight, the
    activations added, the wider span of time, the larger counts."""
    newer, older = (other, kept) if other["last_activated"] > kept["last_activated"] else (kept, other)
    out: Node = {**older, **newer}
    out["weight"] = max(kept["weight"], other["weight"])
    out["activations"] = kept["activations"] + other["activations"]
    out["first_seen"] = min(kept["first_seen"], other["first_seen"])
    out["sources"] = list(dict.fromkeys([*kept["sources"], *other["sources"]]))[-8:]
    facts: NodeFacts = {**older.get("facts", {}), **newer.get("facts", {})}
    for key in _COUNTS:
        counts = [count for f in (kept.get("facts", {}), other.get("facts", {})) if (count := f.get(key)) is not None]
        if counts:
            facts[key] = sum(counts)
    firsts = [f["first"] for f in (kept.get("facts", {}), other.get("facts", {})) if isinstance(f.get("first"), int)]
    if firsts:
        facts["first"] = min(firsts)  # the session's first event naming either
    if facts:
        out["facts"] = facts
    return out


def rekey_files(nodes: dict[str, Node], edges: dict[str, Edge], roots: list[str]) -> tuple[dict[str, Node], dict[str, Edge]]:
    """``nodes`` and ``edges`` (a hot doc's, not changed) with files keyed by relative path."""
    moves = file_moves(nodes, roots)
    if not moves:
        return nodes, edges
    out_nodes: dict[str, Node] = {}
    for nid, node in nodes.items():
        if nid in moves:
            new_id, rel = moves[nid]
            facts: NodeFacts = {**node.get("facts", {}), "path": rel[:300]}
            node = {**node, "id": new_id, "label": file_label(rel), "facts": facts}
            nid = new_id
        out_nodes[nid] = _merge(out_nodes[nid], node) if nid in out_nodes else node
    out_edges: dict[str, Edge] = {}
    for edge in edges.values():
        source = moves.get(edge["source"], (edge["source"], ""))[0]
        target = moves.get(edge["target"], (edge["target"], ""))[0]
        if source == target:
            continue
        moved: Edge = {**edge, "source": source, "target": target}
        new_key = f"{source}|{edge['relationship']}|{target}"
        if new_key in out_edges:
            moved["strength"] = max(out_edges[new_key]["strength"], edge["strength"])
        out_edges[new_key] = moved
    return out_nodes, out_edges
