"""The hot graph document: the shape of a session's sidecar.

The sidecar is one JSON object per session. Probes address it with RFC 6902 JSON
Pointers, so its shape is deliberately flat and stable:

* ``/nodes/<id>``        — nodes keyed by slug id
* ``/edges/<key>``       — edges keyed by ``source|relationship|target`` (no list indices)
* ``/focus``             — the focus cluster (3–5 ids), recomputed by code, never by a model
* ``/gate``              — heuristic gate state and the batch of events awaiting a probe
* ``/ledger``            — what has been injected into the conversation already
* ``/counters``          — telemetry

Everything here is plain dicts and stdlib so the hook process stays fast; the shapes are
declared for the type checker in :mod:`rolling_graph.types`, and a loaded file is made to
match them once, by :func:`normalize_graph` and :func:`normalize_state`. Validation of
untrusted input (model output) lives in :mod:`rolling_graph.patch`.
"""

from __future__ import annotations

import time

TYPE_CHECKING = False  # avoid importing typing (and datetime) on the hook path
if TYPE_CHECKING:
    from collections.abc import Mapping
    from datetime import datetime
    from typing import Any, TypeGuard

    from .types import (
        Counters,
        Edge,
        GateState,
        GraphDoc,
        HookState,
        Ledger,
        Node,
        NodeFacts,
        SessionDoc,
    )

SCHEMA_VERSION = 1

DOMAINS: tuple[str, ...] = ("relationship", "project", "technical", "personal")

#: What a node stands for. ``decision`` and ``correction`` carry the session's intent and
#: are what the ledger and the PostToolUse injection care about most.
KINDS: tuple[str, ...] = (
    "concept",
    "entity",
    "file",
    "symbol",
    "command",
    "error",
    "decision",
    "correction",
    "preference",
    "summary",
    "request",  # what the user asked, short, in their words; also answers to Claude's questions
    "task",  # a task-list item: TodoWrite, TaskCreate/TaskUpdate, a tracker CLI (bd)
    "commit",  # a git commit made in the session
)

#: The fixed edge vocabulary. There is deliberately no generic ``related_to``.
VERBS: tuple[str, ...] = (
    "blocks",
    "informs",
    "contradicts",
    "extends",
    "supersedes",
    "depends_on",
    "edits",
    "tests",
    "decides",
)

#: Typed confidence: how we came to hold a node. Corrections outrank everything.
CONFIDENCE: tuple[str, ...] = ("asserted", "inferred", "observed", "correction")

LABEL_MAX = 120
#: The weight of a node that has none (a hand-edited or foreign file); normalisation applies it.
DEFAULT_WEIGHT = 0.5
DEFAULT_STRENGTH = 0.5
SUMMARY_MAX = 280
SOURCES_MAX = 8  # bounded provenance list inside a node; the journal holds the rest
ID_MAX = 64
FILES_MAX = 8

_SLUG_CHARS = frozenset("abcdefghijklmnopqrstuvwxyz0123456789")
_ID_BODY = _SLUG_CHARS | {"-"}


def is_node_id(value: object) -> TypeGuard[str]:
    """``[a-z0-9][a-z0-9-]{0,63}``, checked without ``re`` (the SessionStart hook validates
    every snapshot node with it). Unlike a ``$``-anchored pattern, no trailing newline."""
    return isinstance(value, str) and 0 < len(value) <= ID_MAX and value[0] in _SLUG_CHARS and all(c in _ID_BODY for c in value)


# A node and an edge are plain dicts shaped as rolling_graph.types.Node and .Edge.

def utcnow() -> datetime:
    """The system clock, timezone-aware (freezegun-friendly). Code that has settings asks
    ``settings.clock`` instead (:mod:`rolling_graph.clock`), which a replay may pin."""
    from datetime import UTC, datetime

    return datetime.now(UTC)


def now_iso() -> str:
    """:func:`utcnow` as an ISO string, without importing ``datetime`` (hook hot path)."""
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())


def iso(dt: datetime) -> str:
    from datetime import UTC

    return dt.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def parse_iso(text: str | None) -> datetime | None:
    if not text:
        return None
    from datetime import UTC, datetime

    try:
        dt = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        return None
    return dt if dt.tzinfo else dt.replace(tzinfo=UTC)


def slugify(label: str) -> str:
    """Stable node id from a label: ``"Use PostgreSQL!"`` -> ``"use-postgresql"``."""
    # (No regex: the hook slugifies file paths on every tool result and must not pay for
    # importing ``re``.) Every run of characters outside [a-z0-9] becomes one "-".
    spaced = "".join(c if c in _SLUG_CHARS else " " for c in label.lower())
    slug = "-".join(spaced.split())
    if len(slug) > ID_MAX:
        slug = slug[:ID_MAX].rstrip("-")
    return slug or "node"


def name_id(name: str) -> str:
    """Node id of a code name: its slug, with a dot kept as ``-dot-`` so ``session.cwd`` and
    ``session_cwd`` stay two names; a leading ``@``/``:`` and an arity (``name/2``) dropped."""
    core = name.lstrip("@:")
    head, slash, arity = core.rpartition("/")
    if slash and arity.isdigit() and head:
        core = head
    return slugify(core.replace(".", " dot "))


def edge_key(source: str, relationship: str, target: str) -> str:
    return f"{source}|{relationship}|{target}"


def new_graph(session_id: str, project: str | None = None, now: datetime | None = None) -> GraphDoc:
    """An empty graph document (the graph file's part of a session)."""
    stamp = iso(now or utcnow())
    return {
        "version": SCHEMA_VERSION,
        "session_id": session_id,
        "project": project,
        "created_at": stamp,
        "updated_at": stamp,
        "nodes": {},
        "edges": {},
        "focus": [],
        "journal_seq": 0,
    }


def new_document(session_id: str, project: str | None = None, now: datetime | None = None) -> SessionDoc:
    """An empty, valid session document (graph and hook state)."""
    return {**new_graph(session_id, project, now), **new_state()}


def new_state() -> HookState:
    return {"gate": new_gate_state(), "ledger": new_ledger(), "counters": new_counters()}


def new_ledger() -> Ledger:
    return {"told": {}, "seq": -1, "owed": []}


def new_gate_state() -> GateState:
    return {
        "events_since_probe": 0,
        "last_domain": None,
        "pending": [],  # bounded batch of events since the last probe (see gate.PENDING_MAX)
        "pending_reasons": [],
        "probe_requested": False,
    }


def new_counters() -> Counters:
    return {
        "events": 0,
        "prompts": 0,
        "tool_events": 0,
        "gate_fired": 0,
        "gate_reasons": {},
        "probes": 0,
        "probes_by_backend": {},
        "probe_tokens_in": 0,
        "probe_tokens_out": 0,
        "patches_rejected": 0,
        "injections": 0,
        "injected_tokens": 0,
    }


def make_node(
    label: str,
    domain: str,
    kind: str = "concept",
    *,
    node_id: str | None = None,
    weight: float = DEFAULT_WEIGHT,
    now: datetime | None = None,
    confidence: str = "inferred",
    anchor: bool = False,
    floor: float = 0.0,
    summary: str | None = None,
    source: str | None = None,
) -> Node:
    stamp = iso(now or utcnow())
    node: Node = {
        "id": node_id or slugify(label),
        "label": label[:LABEL_MAX],
        "domain": domain,
        "kind": kind,
        "weight": weight,
        "last_activated": stamp,
        "first_seen": stamp,
        "activations": 1,
        "anchor": anchor,
        "floor": floor,
        "confidence": confidence,
        "sources": [source] if source else [],
    }
    if summary:
        node["summary"] = summary[:SUMMARY_MAX]
    return node


def make_edge(source: str, relationship: str, target: str, strength: float = DEFAULT_STRENGTH, now: datetime | None = None) -> Edge:
    return {
        "source": source,
        "target": target,
        "relationship": relationship,
        "strength": strength,
        "last_activated": iso(now or utcnow()),
    }


# -- normalisation: a loaded file made to match rolling_graph.types, once -------------------
_NODE_FIELDS = frozenset(
    ("id", "label", "domain", "kind", "weight", "last_activated", "first_seen", "activations", "anchor", "floor", "confidence", "sources")
)
_EDGE_FIELDS = frozenset(("source", "target", "relationship", "strength", "last_activated"))


def _unit(value: object, default: float) -> float:
    """A number in 0..1 (clamped), or ``default`` for anything that is not a number."""
    if isinstance(value, bool) or not isinstance(value, (int, float)) or value != value:
        return default
    return 0.0 if value < 0.0 else 1.0 if value > 1.0 else float(value)


def _str(value: object) -> str | None:
    return value if isinstance(value, str) and value else None


def _choice(value: object, allowed: tuple[str, ...], default: str) -> str:
    return value if isinstance(value, str) and value in allowed else default


def _strs(value: object, limit: int) -> list[str]:
    return [v for v in value if isinstance(v, str)][-limit:] if isinstance(value, list) else []


def normalize_facts(kind: str, raw: object) -> NodeFacts | None:
    """The facts of ``raw`` a node of ``kind`` may carry, each checked against its spec
    (:mod:`rolling_graph.facts`); the others dropped. None if none is left."""
    if not isinstance(raw, dict):
        return None
    from .facts import FactsRejected, allowed_keys, clean_value

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
    if (facts := normalize_facts(node["kind"], raw.get("facts"))) is not None:
        node["facts"] = facts
    return node


def normalize_edge(key: str, raw: Mapping[str, object], now: str | None = None) -> Edge | None:
    """``raw`` as a complete edge (its ends and verb from ``key`` where missing), or None
    when it names no two ends."""
    parts = key.split("|")
    source = _str(raw.get("source")) or (parts[0] if len(parts) == 3 else None)
    target = _str(raw.get("target")) or (parts[2] if len(parts) == 3 else None)
    relationship = _str(raw.get("relationship")) or (parts[1] if len(parts) == 3 else None)
    if not (source and target and relationship):
        return None
    return {
        "source": source,
        "target": target,
        "relationship": relationship,
        "strength": _unit(raw.get("strength"), DEFAULT_STRENGTH),
        "last_activated": _str(raw.get("last_activated")) or now or now_iso(),
    }


def normalize_graph(doc: Any, session_id: str) -> GraphDoc:
    """A graph made a :class:`~rolling_graph.types.GraphDoc`, in place: ``doc`` is a parsed
    graph file (any JSON object) or a graph rebuilt from the journal. Missing fields get
    their defaults, incomplete nodes and edges are completed (:func:`normalize_node`,
    :func:`normalize_edge`), values that are no node or edge go. Complete nodes and edges
    are kept as they are: one key-set test each."""
    raw: dict[str, Any] = doc
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
    return doc  # checked above, key by key


def normalize_state(raw: object) -> HookState:
    """A parsed state file as a :class:`~rolling_graph.types.HookState`: each part present
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
