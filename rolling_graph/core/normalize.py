"""Normalisation: a loaded graph or state file made to match :mod:`rolling_graph.core.types`, once.

A graph file may be hand-edited, foreign or older than this code, and a graph rebuilt from
the journal may hold nodes from older journal lines: :func:`normalize_graph` completes what
is incomplete and drops what is no node or edge, field by field, keeping what is there and
valid; :func:`normalize_state` does the same for the hook's state file, and
:func:`normalize_event` for a pending event as the probe takes it (from the state file or
the overflow file). Everything past here trusts the shapes.
"""

from __future__ import annotations

from rolling_graph.core.clock import now_iso
from rolling_graph.core.ids import is_node_id
from rolling_graph.core.model import (
    CONFIDENCE,
    DEFAULT_STRENGTH,
    DEFAULT_WEIGHT,
    DOMAINS,
    FILES_MAX,
    KINDS,
    LABEL_MAX,
    SCHEMA_VERSION,
    SOURCES_MAX,
    SUMMARY_MAX,
    VERBS,
    new_counters,
    new_gate_state,
    new_ledger,
)

TYPE_CHECKING = False  # avoid importing typing on the hook path
if TYPE_CHECKING:
    from collections.abc import Mapping
    from typing import Any, TypeVar

    from rolling_graph.core.types import Edge, GraphDoc, HookState, Ledger, Node, NodeFacts, PendingEvent, ToolData

    _Word = TypeVar("_Word", bound=str)

_NODE_FIELDS = frozenset(
    ("id", "label", "domain", "kind", "weight", "last_activated", "first_seen", "activations", "anchor", "floor", "confidence", "sources")
)
#: The earlier sessions a pulled node names (``seen_in``): enough for ``rgraph why``.
SEEN_IN_MAX = 3
_EDGE_FIELDS = frozenset(("source", "target", "relationship", "strength", "last_activated"))


def _unit(value: object, default: float) -> float:
    """A number in 0..1 (clamped), or ``default`` for anything that is not a number."""
    if isinstance(value, bool) or not isinstance(value, (int, float)) or value != value:
        return default
    return 0.0 if value < 0.0 else 1.0 if value > 1.0 else float(value)


def _str(value: object) -> str | None:
    return value if isinstance(value, str) and value else None


def _choice(value: object, allowed: tuple[_Word, ...], default: _Word) -> _Word:
    return value if isinstance(value, str) and value in allowed else default


def _strs(value: object, limit: int) -> list[str]:
    return [v for v in value if isinstance(v, str)][-limit:] if isinstance(value, list) else []


def normalize_facts(kind: str, raw: object) -> NodeFacts | None:
    """The facts of ``raw`` a node of ``kind`` may carry, each checked against its spec
    (:mod:`rolling_graph.core.facts`); the others dropped. None if none is left."""
    if not isinstance(raw, dict):
        return None
    from rolling_graph.core.facts import FactsRejected, allowed_keys, clean_value

    allowed = allowed_keys(kind, trusted=True)
    facts: NodeFacts = {}
    for key, value in raw.items():
        if key in allowed:
            try:
                facts[key] = clean_value(key, value)  # type: ignore[literal-required]  # a key of SPEC
            except FactsRejected:
                continue
    return facts or None


def normalize_node(nid: str, raw: Mapping[str, object], now: str | None = None) -> Node:
    """``raw`` as a complete node with id ``nid``: every field present and of its type,
    a missing weight :data:`DEFAULT_WEIGHT`; what is there and valid is kept."""
    stamp = _str(raw.get("last_activated")) or _str(raw.get("first_seen")) or now or now_iso()
    activations = raw.get("activations")
    node: Node = {
        "id": nid,
        "label": (_str(raw.get("label")) or nid)[:LABEL_MAX],
        "domain": _choice(raw.get("domain"), DOMAINS, "technical"),
        "kind": _choice(raw.get("kind"), KINDS, "concept"),
        "weight": _unit(raw.get("weight"), DEFAULT_WEIGHT),
        "last_activated": stamp,
        "first_seen": _str(raw.get("first_seen")) or stamp,
        "activations": activations if isinstance(activations, int) and not isinstance(activations, bool) and activations >= 0 else 0,
        "anchor": raw.get("anchor") is True,
        "floor": _unit(raw.get("floor"), 0.0),
        "confidence": _choice(raw.get("confidence"), CONFIDENCE, "inferred"),
        "sources": _strs(raw.get("sources"), SOURCES_MAX),
    }
    if summary := _str(raw.get("summary")):
        node["summary"] = summary[:SUMMARY_MAX]
    if "files" in raw:
        node["files"] = _strs(raw.get("files"), FILES_MAX)
    if superseded_by := _str(raw.get("superseded_by")):
        node["superseded_by"] = superseded_by
    if raw.get("pulled") is True:
        node["pulled"] = True
    if origin := _str(raw.get("origin")):
        node["origin"] = origin
    if seen_at := _str(raw.get("seen_at")):
        node["seen_at"] = seen_at[:40]
    if seen_in := [s[:80] for s in _strs(raw.get("seen_in"), SEEN_IN_MAX)]:
        node["seen_in"] = seen_in
    if (facts := normalize_facts(node["kind"], raw.get("facts"))) is not None:
        node["facts"] = facts
    return node


def normalize_edge(key: str, raw: Mapping[str, object], now: str | None = None) -> Edge | None:
    """``raw`` as a complete edge (its ends and verb from ``key`` where missing), or None
    when it names no two ends or a verb outside the vocabulary (:data:`~rolling_graph.core.model.VERBS`)."""
    parts = key.split("|")
    source = _str(raw.get("source")) or (parts[0] if len(parts) == 3 else None)
    target = _str(raw.get("target")) or (parts[2] if len(parts) == 3 else None)
    relationship = _str(raw.get("relationship")) or (parts[1] if len(parts) == 3 else None)
    if not (source and target and relationship and relationship in VERBS):
        return None
    return {
        "source": source,
        "target": target,
        "relationship": relationship,
        "strength": _unit(raw.get("strength"), DEFAULT_STRENGTH),
        "last_activated": _str(raw.get("last_activated")) or now or now_iso(),
    }


def normalize_graph(doc: Any, session_id: str) -> GraphDoc:
    """A graph made a :class:`~rolling_graph.core.types.GraphDoc`, in place: ``doc`` is a parsed
    graph file (any JSON object) or a graph rebuilt from the journal. Missing fields get
    their defaults, incomplete nodes and edges are completed (:func:`normalize_node`,
    :func:`normalize_edge`), values that are no node or edge go. Complete nodes and edges
    are kept as they are: one key-set test each."""
    raw: dict[str, Any] = doc
    checked: GraphDoc = doc  # once the checks below have run
    now = now_iso()
    nodes = raw.get("nodes")
    if not isinstance(nodes, dict):
        nodes = raw["nodes"] = {}
    for nid in [k for k, n in nodes.items() if not (isinstance(n, dict) and n.keys() >= _NODE_FIELDS and n["id"] == k)]:
        n = nodes[nid]
        if isinstance(n, dict) and is_node_id(nid):
            nodes[nid] = normalize_node(nid, n, now)
        else:
            del nodes[nid]
    edges = raw.get("edges")
    if not isinstance(edges, dict):
        edges = raw["edges"] = {}
    for key in [k for k, e in edges.items() if not (isinstance(e, dict) and e.keys() >= _EDGE_FIELDS)]:
        e = edges[key]
        edge = normalize_edge(key, e, now) if isinstance(e, dict) else None
        if edge is None:
            del edges[key]
        else:
            edges[key] = edge
    focus = raw.get("focus")
    raw["focus"] = [f for f in focus if isinstance(f, str)] if isinstance(focus, list) else []
    for field, default in (("journal_seq", 0), ("version", SCHEMA_VERSION)):
        if not isinstance(raw.get(field), int):
            raw[field] = default
    if not isinstance(raw.get("session_id"), str):
        raw["session_id"] = session_id
    if not isinstance(raw.get("project"), str):
        raw["project"] = None
    for field in ("created_at", "updated_at"):
        if not isinstance(raw.get(field), str):
            raw[field] = now
    return checked  # checked above, key by key


def normalize_state(raw: object) -> HookState:
    """A parsed state file as a :class:`~rolling_graph.core.types.HookState`: each part present
    with its defaults; a ledger in the older flat form (``{node id: fingerprint, "_seq",
    "_owed"}``) converted."""
    state = raw if isinstance(raw, dict) else {}
    gate = state.get("gate")
    counters = state.get("counters")
    return {
        "gate": {**new_gate_state(), **gate} if isinstance(gate, dict) else new_gate_state(),
        "ledger": _ledger(state.get("ledger")),
        "counters": {**new_counters(), **counters} if isinstance(counters, dict) else new_counters(),
    }


def _ledger(raw: object) -> Ledger:
    if not isinstance(raw, dict):
        return new_ledger()
    if isinstance(raw.get("told"), dict):
        told, seq, owed = raw["told"], raw.get("seq"), raw.get("owed")
    else:  # the older flat form
        told = {k: v for k, v in raw.items() if not k.startswith("_")}
        seq, owed = raw.get("_seq"), raw.get("_owed")
    return {
        "told": {k: v for k, v in told.items() if isinstance(k, str) and isinstance(v, str)},
        "seq": seq if isinstance(seq, int) else -1,
        "owed": [o for o in owed if isinstance(o, str)] if isinstance(owed, list) else [],
    }


# -- a pending event, as the probe takes it ------------------------------------------------------
_DATA_TEXT = frozenset(("old", "new", "pattern", "glob", "cmd", "desc", "bg", "subject", "ref", "status", "plan", "agent", "prompt", "out"))
_DATA_COUNTS = frozenset(("hits", "exit"))
#: List-valued keys whose items are rows of strings of one length.
_DATA_ROWS = {"todos": 2, "qa": 3}
_DATA_NAMES = frozenset(("names", "mentions", "values"))


def _rows(value: object, width: int) -> list[list[str]] | None:
    if not isinstance(value, list):
        return None
    return [row for row in value if isinstance(row, list) and len(row) == width and all(isinstance(x, str) for x in row)]


def normalize_tool_data(raw: object) -> ToolData:
    """A pending event's ``data`` as :class:`~rolling_graph.core.types.ToolData`: each known
    key with a value of its type (rows and lists keep their items that fit), the rest left out."""
    if not isinstance(raw, dict):
        return {}
    data: dict[str, Any] = {}
    for key, value in raw.items():
        if key in _DATA_TEXT:
            keep = isinstance(value, str)
        elif key in _DATA_COUNTS:
            keep = isinstance(value, int) and not isinstance(value, bool)
        elif key == "failed":
            keep = isinstance(value, bool)
        elif key in _DATA_ROWS:
            value = _rows(value, _DATA_ROWS[key])
            keep = value is not None
        elif key == "edits":
            keep = isinstance(value, list)
            if keep:
                value = [{"old": e["old"] if isinstance(e.get("old"), str) else "", "new": e["new"] if isinstance(e.get("new"), str) else ""}
                         for e in value if isinstance(e, dict)]
        elif key in _DATA_NAMES:
            keep = isinstance(value, list)
            if keep:
                value = [n for n in value if isinstance(n, str)]
        else:
            keep = False
        if keep:
            data[key] = value
    checked: ToolData = data  # type: ignore[assignment]  # checked above, key by key
    return checked


def normalize_event(raw: Mapping[str, object]) -> PendingEvent:
    """A pending event read back from a file as a :class:`~rolling_graph.core.types.PendingEvent`:
    every field of its type (a missing or wrong one gets its empty value), ``data`` by
    :func:`normalize_tool_data`. The store has refused an event without a string ``id`` and
    ``text`` (:mod:`rolling_graph.store.shape`)."""
    tool = raw.get("tool")
    event: PendingEvent = {
        "id": _str(raw.get("id")) or "e0",
        "event": _str(raw.get("event")) or "",
        "at": _str(raw.get("at")) or "",
        "text": raw["text"] if isinstance(raw.get("text"), str) else "",  # type: ignore[typeddict-item]  # str, just checked
        "tool": tool if isinstance(tool, str) else None,
        "paths": _strs(raw.get("paths"), 1000),
        "error": raw.get("error") is True,
        "reasons": _strs(raw.get("reasons"), 1000),
    }
    if "data" in raw:
        event["data"] = normalize_tool_data(raw["data"])
    for key in ("cwd", "transcript"):
        value = raw.get(key)
        if isinstance(value, str):
            event[key] = value
    for flag in ("paths_from_text", "subagent"):
        if raw.get(flag) is True:
            event[flag] = True
    return event
