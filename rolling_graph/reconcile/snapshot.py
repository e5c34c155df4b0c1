"""Per-project resume snapshot: the warm graph's top branches, as a small JSON file.

Every reconciliation writes ``$ROLLING_GRAPH_HOME/snapshots/<project_key>.json`` so the
SessionStart hook can build a fresh hot graph without opening a database connection.
The hook process imports this module, so reading imports nothing heavy: the C JSON codec
through :mod:`rolling_graph.jsonio` and ``os.path`` (``json``, ``pathlib`` and
``tempfile`` cost the hook ~30 ms of imports); the writer imports what it needs.
"""

from __future__ import annotations

import os

from rolling_graph import jsonio
from rolling_graph.model import DOMAINS, KINDS, LABEL_MAX, SUMMARY_MAX, VERBS, edge_key, is_node_id, iso
from rolling_graph.project import project_key

TYPE_CHECKING = False
if TYPE_CHECKING:
    from datetime import datetime
    from pathlib import Path
    from typing import Any

SNAPSHOT_VERSION = 1
#: Bounds on what a snapshot holds and what one resume may add to a hot graph.
MAX_NODES = 40
MAX_EDGES = 80


def snapshot_file(home: str | os.PathLike[str], project_root: str) -> str:
    return os.path.join(os.fspath(home), "snapshots", f"{project_key(project_root)}.json")


def snapshot_path(home: str | os.PathLike[str], project_root: str) -> Path:
    from pathlib import Path

    return Path(snapshot_file(home, project_root))


def read_snapshot(home: str | os.PathLike[str], project_root: str) -> dict[str, Any] | None:
    """The project's snapshot, or None when absent, unreadable or for another project."""
    try:
        with open(snapshot_file(home, project_root), "rb") as fh:
            data = jsonio.loads(fh.read())
    except (OSError, ValueError, UnicodeDecodeError):
        return None
    if not isinstance(data, dict) or data.get("project") != project_root or data.get("version") != SNAPSHOT_VERSION:
        return None
    if not isinstance(data.get("nodes"), list) or not isinstance(data.get("edges"), list):
        return None
    return data


def write_snapshot(home: str | os.PathLike[str], project_root: str, snapshot: dict[str, Any]) -> Path:
    """Write atomically (temp file + rename): a reader never sees half a snapshot."""
    import json
    import tempfile
    from pathlib import Path

    path = snapshot_path(home, project_root)
    path.parent.mkdir(parents=True, exist_ok=True)
    payload = dict(snapshot, version=SNAPSHOT_VERSION, project=project_root)
    fd, tmp = tempfile.mkstemp(prefix=".snap-", suffix=".json", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            json.dump(payload, handle, ensure_ascii=False, separators=(",", ":"))
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return path


def _clean_node(raw: dict[str, Any], now: datetime) -> dict[str, Any] | None:
    node_id = raw.get("id")
    if not is_node_id(node_id):
        return None
    domain = raw.get("domain") if raw.get("domain") in DOMAINS else "technical"
    kind = raw.get("kind") if raw.get("kind") in KINDS else "concept"
    try:
        weight = min(1.0, max(0.0, float(raw.get("weight", 0.3))))
        floor = min(1.0, max(0.0, float(raw.get("floor", 0.0))))
    except (TypeError, ValueError):
        return None
    label = str(raw.get("label") or node_id)[:LABEL_MAX]
    stamp = iso(now)
    node: dict[str, Any] = {
        "id": node_id,
        "label": label,
        "domain": domain,
        "kind": kind,
        "weight": round(weight, 4),
        # Pulled into this session now: the hot graph's time decay starts from here.
        "last_activated": stamp,
        "first_seen": str(raw.get("first_seen") or stamp),
        "activations": 0,
        "anchor": bool(raw.get("anchor", False)),
        "floor": round(floor, 4),
        "confidence": raw.get("confidence") if raw.get("confidence") in ("asserted", "inferred", "observed", "correction") else "inferred",
        "sources": [],
        "pulled": True,
        "origin": "warm",
    }
    summary = raw.get("summary")
    if isinstance(summary, str) and summary:
        node["summary"] = summary[:SUMMARY_MAX]
    return node


def snapshot_ops(
    doc: dict[str, Any], snapshot: dict[str, Any], now: datetime, *, max_nodes: int = MAX_NODES, max_edges: int = MAX_EDGES
) -> list[dict[str, Any]]:
    """RFC 6902 ``add`` ops for the snapshot's nodes and edges the hot doc lacks.

    Nodes keep the snapshot's order (best first), marked ``"pulled": true, "origin":
    "warm"``; an edge is added only when both ends are in the doc or added here. The
    caller applies them with ``SidecarStore.apply_ops(..., kind="resume"|"pull")``.
    """
    have_nodes = set((doc.get("nodes") or {}).keys())
    have_edges = set((doc.get("edges") or {}).keys())
    if doc.get("project") and snapshot.get("project") and doc["project"] != snapshot["project"]:
        return []
    ops: list[dict[str, Any]] = []
    added: set[str] = set()
    for raw in snapshot.get("nodes") or []:
        if len(added) >= max_nodes:
            break
        if not isinstance(raw, dict):
            continue
        node = _clean_node(raw, now)
        if node is None or node["id"] in have_nodes or node["id"] in added:
            continue
        ops.append({"op": "add", "path": f"/nodes/{node['id']}", "value": node})
        added.add(node["id"])
    known = have_nodes | added
    edges_added = 0
    for raw in snapshot.get("edges") or []:
        if edges_added >= max_edges:
            break
        if not isinstance(raw, dict):
            continue
        source, relationship, target = raw.get("source"), raw.get("relationship"), raw.get("target")
        if source not in known or target not in known or relationship not in VERBS or source == target:
            continue
        key = edge_key(source, relationship, target)
        if key in have_edges:
            continue
        try:
            strength = min(1.0, max(0.0, float(raw.get("strength", 0.5))))
        except (TypeError, ValueError):
            continue
        value = {"source": source, "target": target, "relationship": relationship, "strength": round(strength, 4), "last_activated": iso(now)}
        ops.append({"op": "add", "path": f"/edges/{key}", "value": value})
        have_edges.add(key)
        edges_added += 1
    return ops
