"""The per-project resume snapshot, as the hook reads it: the warm graph's top branches.

Every reconciliation writes ``$ROLLING_GRAPH_HOME/snapshots/<project_key>.json``
(:mod:`rolling_graph.warm.snapshot_write` is the writer) so that the SessionStart hook can
start a session from the warm graph without a database connection. This module owns the
format: what a valid one looks like, and the journal ops that bring its nodes and edges into
a hot graph (where the file and its read caches lie: :mod:`rolling_graph.warm.snapshot_files`;
the tool-time notes' reader: :mod:`rolling_graph.warm.notes_cache`). It runs in the hook process, so it imports nothing
heavy: the C JSON codec through :mod:`rolling_graph.core.jsonio` and ``os.path`` (``json``,
``pathlib`` and ``tempfile`` cost the hook ~30 ms of imports).
"""

from __future__ import annotations

import os

from rolling_graph.core import jsonio
from rolling_graph.core.clock import iso, seconds
from rolling_graph.core.ids import edge_key, is_node_id
from rolling_graph.core.model import LABEL_MAX, SUMMARY_MAX, VERBS
from rolling_graph.core.normalize import normalize_node
from rolling_graph.safety.sanitize import clean_line
from rolling_graph.warm.snapshot_files import read_cache, signature, snapshot_file

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Container
    from datetime import datetime
    from typing import Any

    from rolling_graph.core.types import Edge, GraphDoc, Node, PatchOp, Snapshot, Verb

    #: A snapshot edge as a pull takes it: ``(source, relationship, target, strength)``.
    SeedEdge = tuple[str, Verb, str, float]
    #: What a pull takes from a snapshot (:func:`seed_of`): its project, nodes and edges, checked.
    Seed = tuple[str | None, list[Node], list[SeedEdge]]

SNAPSHOT_VERSION = 1
#: Bounds on what a snapshot holds, and what a new session (``startup``, ``clear``) takes
#: from it: enough for the restore block's names to fill an 800-token budget.
MAX_NODES = 400
MAX_EDGES = 200
#: What one resume may add to a session's hot graph (it has its own nodes already).
RESUME_NODES = 40
RESUME_EDGES = 80


def has_snapshot(home: str | os.PathLike[str], project_root: str | None) -> bool:
    if not project_root:
        return False
    return os.path.exists(snapshot_file(home, project_root))


def whole_file(home: str | os.PathLike[str], project_root: str) -> str:
    """The snapshot's claim to hold the project's whole warm graph (beside the snapshot; see
    :func:`holds_whole_project`)."""
    return snapshot_file(home, project_root)[: -len(".json")] + ".whole"


def whole_claim(st: os.stat_result, project_root: str) -> dict[str, Any]:
    """What the claim file holds: the snapshot file it was made for (inode, size, mtime), and the project."""
    return {"project": project_root, "snapshot": signature(st)}


def holds_whole_project(home: str | os.PathLike[str], project_root: str | None, have: Container[str]) -> bool:
    """Does a session whose hot graph holds the node ids ``have`` hold every node of the
    project's warm graph? Then a prompt-time pull cannot add anything.

    Yes only when the writer claimed, for exactly the snapshot file now in place, that it
    holds the whole warm graph (the claim file: :mod:`rolling_graph.warm.snapshot_write`;
    every merge into the warm graph removes it before it commits, and every rewrite of the
    snapshot replaces the file the claim names), and every node of the snapshot is in
    ``have``. A missing, unreadable or foreign snapshot or claim: no."""
    if not project_root:
        return False
    try:
        st = os.stat(snapshot_file(home, project_root))
        with open(whole_file(home, project_root), "rb") as fh:
            claim = jsonio.loads(fh.read())
    except (OSError, ValueError, UnicodeDecodeError):
        return False
    if claim != whole_claim(st, project_root):
        return False
    snap = read_snapshot(home, project_root)
    if snap is None:
        return False
    return all(isinstance(n, dict) and isinstance(n.get("id"), str) and n["id"] in have for n in snap["nodes"])


def read_snapshot(home: str | os.PathLike[str], project_root: str) -> Snapshot | None:
    """The project's snapshot, or None when absent, unreadable or for another project.
    Its nodes and edges are checked one by one when merged (:func:`snapshot_ops`)."""
    try:
        with open(snapshot_file(home, project_root), "rb") as fh:
            data: Snapshot = jsonio.loads(fh.read())
    except (OSError, ValueError, UnicodeDecodeError):
        return None
    if not isinstance(data, dict) or data.get("project") != project_root or data.get("version") != SNAPSHOT_VERSION:
        return None
    if not isinstance(data.get("nodes"), list) or not isinstance(data.get("edges"), list):
        return None
    return data


#: What a snapshot node's stamps are while it waits to be pulled (:func:`seed_of`): later than
#: every stamp, so the pull's own stamp wins (``min``) wherever the snapshot gave none.
OPEN_STAMP = "9999-12-31T23:59:59Z"


def _clean_node(raw: dict[str, Any]) -> Node | None:
    """A snapshot node as a hot-graph node (:func:`rolling_graph.core.normalize.normalize_node`: the
    one set of defaults), its stamps left open (:data:`OPEN_STAMP`): the pull stamps it, and its
    time decay starts from there. Its facts come along (a file's edit counts, a task's status),
    except ``seq`` and ``first``: the event counters of another session would outrank this one's."""
    node_id = raw.get("id")
    if not is_node_id(node_id):
        return None
    # When and in which sessions the warm graph last saw it: the block and ``rgraph why`` say
    # where a line from an earlier session comes from.
    seen = {"seen_at": raw.get("warm_last_activated"), "seen_in": raw.get("seen_in")}
    node = normalize_node(node_id, {**raw, **seen}, OPEN_STAMP)
    if "facts" in node:
        node["facts"].pop("seq", None)
        node["facts"].pop("first", None)
        if not node["facts"]:
            del node["facts"]
    node["label"] = clean_line(node["label"], LABEL_MAX) or node_id  # stored as a label: the one sanitiser
    if "seen_in" in node:
        node["seen_in"] = [sid for sid in (clean_line(s, 80) for s in node["seen_in"]) if sid]
        if not node["seen_in"]:
            del node["seen_in"]
    if "summary" in node:
        node["summary"] = clean_line(node["summary"], SUMMARY_MAX)
        if not node["summary"]:
            del node["summary"]
    node.update({"weight": round(node["weight"], 4), "floor": round(node["floor"], 4), "last_activated": OPEN_STAMP,
                 "first_seen": min(node["first_seen"], OPEN_STAMP), "activations": 0, "sources": [], "pulled": True, "origin": "warm"})
    return node


def seed_of(snapshot: Snapshot) -> Seed:
    """What a pull can take from ``snapshot``, checked one by one: ``(project, nodes, edges)`` —
    its valid nodes as hot-graph nodes in the snapshot's order, stamps open (:func:`_clean_node`),
    and its valid edges as ``(source, relationship, target, strength)``. The same for every
    session (:func:`seed_ops` takes what a session lacks, and stamps it), so the snapshot's
    writer keeps it beside the snapshot (:func:`read_seed`)."""
    nodes = [node for raw in snapshot.get("nodes") or [] if isinstance(raw, dict) and (node := _clean_node(raw)) is not None]
    edges: list[SeedEdge] = []
    for raw in snapshot.get("edges") or []:
        if not isinstance(raw, dict):
            continue
        source, relationship, target = raw.get("source"), raw.get("relationship"), raw.get("target")
        if not (isinstance(source, str) and isinstance(target, str) and isinstance(relationship, str)):
            continue
        if relationship not in VERBS or source == target:
            continue
        try:
            strength = min(1.0, max(0.0, float(raw.get("strength", 0.5))))
        except (TypeError, ValueError):
            continue
        edges.append((source, relationship, target, round(strength, 4)))
    project = snapshot.get("project")
    return (project if isinstance(project, str) else None, nodes, edges)


def read_seed(home: str | os.PathLike[str], project_root: str) -> Seed | None:
    """The seed of the project's snapshot (:func:`seed_of`), or None without a valid snapshot.
    From the cache its writer leaves beside it when that was made from exactly this snapshot
    file and is this user's own (not writable by others): a new session's SessionStart then
    neither parses nor checks the snapshot's 400 nodes again (~7 ms on the reference machine).
    Else from the snapshot itself."""
    return read_seed_signed(home, project_root)[0]


def read_seed_signed(home: str | os.PathLike[str], project_root: str) -> tuple[Seed | None, list[int] | None]:
    """:func:`read_seed`, and the :func:`signature` of the snapshot file the seed's cache was
    made from (the other caches made from that file go with this seed); None as the signature
    when the seed was parsed from the snapshot itself."""
    try:
        st = os.stat(snapshot_file(home, project_root))
    except OSError:
        return None, None
    made_from = signature(st)
    seed = read_cache(home, project_root, "seed", made_from)
    if isinstance(seed, tuple) and len(seed) == 3 and seed[0] == project_root and isinstance(seed[1], list) and isinstance(seed[2], list):
        return seed, made_from
    snap = read_snapshot(home, project_root)
    return (seed_of(snap) if snap is not None else None), None


def snapshot_ops(
    doc: GraphDoc, snapshot: Snapshot, now: datetime, *, max_nodes: int = MAX_NODES, max_edges: int = MAX_EDGES
) -> list[PatchOp]:
    """RFC 6902 ``add`` ops for the snapshot's nodes and edges the hot doc lacks (:func:`seed_ops`
    of its :func:`seed_of`)."""
    return seed_ops(doc, seed_of(snapshot), now, max_nodes=max_nodes, max_edges=max_edges)


def seed_ops(doc: GraphDoc, seed: Seed, now: datetime, *, max_nodes: int = MAX_NODES, max_edges: int = MAX_EDGES) -> list[PatchOp]:
    """RFC 6902 ``add`` ops for the seed's nodes and edges the hot doc lacks.

    Nodes keep the snapshot's order (best first), marked ``"pulled": true, "origin":
    "warm"``, and are stamped a second apart in that order (the first ``now``): the hot
    graph's recency then keeps the warm graph's ranking, and the restore block names the
    last session's request first. An edge is added only when both ends are in the doc or
    added here. The caller applies them with ``SidecarStore.apply_ops(..., kind="resume"|"pull")``.
    """
    project, nodes, edges = seed
    if doc["project"] and project and doc["project"] != project:
        return []
    have_nodes = set(doc["nodes"])
    have_edges = set(doc["edges"])
    ops: list[PatchOp] = []
    added: set[str] = set()
    second = seconds(1)
    for cleaned in nodes:
        if len(added) >= max_nodes:
            break
        node_id = cleaned["id"]
        if node_id in have_nodes or node_id in added:
            continue
        stamp = iso(now - second * len(added))
        # (The graph gets a copy of each value as the journal applies it: the seed stays as it is.)
        node: Node = {**cleaned, "last_activated": stamp, "first_seen": min(cleaned["first_seen"], stamp)}
        ops.append({"op": "add", "path": f"/nodes/{node_id}", "value": node})
        added.add(node_id)
    known = have_nodes | added
    edges_added = 0
    stamp = iso(now)
    for source, relationship, target, strength in edges:
        if edges_added >= max_edges:
            break
        if source not in known or target not in known:
            continue
        key = edge_key(source, relationship, target)
        if key in have_edges:
            continue
        value: Edge = {"source": source, "target": target, "relationship": relationship, "strength": strength, "last_activated": stamp}
        ops.append({"op": "add", "path": f"/edges/{key}", "value": value})
        have_edges.add(key)
        edges_added += 1
    return ops
