"""Weight arithmetic: pure functions. The model proposes; this code decides the numbers.

* activation (strengthen): ``w + (1 - w) * gain`` — approaches 1, never passes it
* weakening:               ``w * (1 - loss)``      — approaches 0, never below the floor
* anchors never drop below their floor (0.2 by default, from flat memory)
"""

from __future__ import annotations

import math

from rolling_graph.core.clock import iso
from rolling_graph.core.model import SOURCES_MAX

TYPE_CHECKING = False
if TYPE_CHECKING:
    from datetime import datetime

    from rolling_graph.core.config import DecaySettings
    from rolling_graph.core.types import GraphDoc, Node, PatchOp

#: Initial weight of a node by kind: intent outranks incidental names.
INITIAL_WEIGHT: dict[str, float] = {
    "request": 0.8,
    "correction": 0.8,
    "decision": 0.7,
    "preference": 0.6,
    "error": 0.5,
    "concept": 0.5,
    "entity": 0.5,
    "summary": 0.5,
    "symbol": 0.4,
    "file": 0.4,
    "command": 0.35,
    "task": 0.6,
    "commit": 0.35,
}


def clamp01(x: float) -> float:
    if not isinstance(x, (int, float)) or math.isnan(x):
        return 0.0
    return 0.0 if x < 0.0 else 1.0 if x > 1.0 else float(x)


def with_floor(weight: float, floor: float) -> float:
    return max(clamp01(floor), clamp01(weight))


def strengthen(weight: float, gain: float) -> float:
    return clamp01(weight + (1.0 - clamp01(weight)) * clamp01(gain))


def weaken(weight: float, loss: float, floor: float = 0.0) -> float:
    return with_floor(clamp01(weight) * (1.0 - clamp01(loss)), floor)


def node_floor(node: Node, settings: DecaySettings) -> float:
    if node["anchor"]:
        return max(node["floor"], settings.anchor_floor)
    return node["floor"]


def round_w(x: float) -> float:
    """Weights are stored to 4 decimals: stable JSON, identical rebuilds."""
    return round(clamp01(x), 4)


def activation_ops(
    doc: GraphDoc,
    node_ids: list[str],
    now: datetime,
    settings: DecaySettings,
    *,
    source: str | None = None,
) -> list[PatchOp]:
    """Effective ops that activate existing nodes: weight up, ``last_activated`` now."""
    ops: list[PatchOp] = []
    stamp = iso(now)
    for nid in dict.fromkeys(node_ids):
        node = doc["nodes"].get(nid)
        if node is None:
            continue
        base = f"/nodes/{nid}"
        ops.append({"op": "replace", "path": f"{base}/weight", "value": round_w(strengthen(node["weight"], settings.activation_gain))})
        ops.append({"op": "replace", "path": f"{base}/last_activated", "value": stamp})
        ops.append({"op": "replace", "path": f"{base}/activations", "value": node["activations"] + 1})
        if source:
            sources = [s for s in node["sources"] if s != source] + [source]
            ops.append({"op": "replace", "path": f"{base}/sources", "value": sources[-SOURCES_MAX:]})
    return ops
