"""The hot graph document: the shape of a session's sidecar.

The sidecar is one JSON object per session. Probes address it with RFC 6902 JSON
Pointers, so its shape is deliberately flat and stable:

* ``/nodes/<id>``        — nodes keyed by slug id
* ``/edges/<key>``       — edges keyed by ``source|relationship|target`` (no list indices)
* ``/focus``             — the focus cluster (3–5 ids), recomputed by code, never by a model
* ``/gate``              — heuristic gate state and the batch of events awaiting a probe
* ``/ledger``            — what has been injected into the conversation already
* ``/counters``          — telemetry

Here: the vocabulary (domains, kinds, verbs, confidence), the size limits, and the
constructors of an empty document and of a node and an edge. Everything is plain dicts and
stdlib so the hook process stays fast; the shapes are declared for the type checker in
:mod:`rolling_graph.core.types`, and a loaded file is made to match them once, by
:func:`rolling_graph.core.normalize.normalize_graph` and :func:`~rolling_graph.core.normalize.normalize_state`.
Ids and slugs are :mod:`rolling_graph.core.ids`, timestamps :mod:`rolling_graph.core.clock`. Validation
of untrusted input (model output) lives in :mod:`rolling_graph.core.patch`.
"""

from __future__ import annotations

from rolling_graph.core.clock import iso, utcnow
from rolling_graph.core.ids import slugify

TYPE_CHECKING = False  # avoid importing typing (and datetime) on the hook path
if TYPE_CHECKING:
    from datetime import datetime

    from rolling_graph.core.types import (
        Confidence,
        Counters,
        Domain,
        Edge,
        GateState,
        GraphDoc,
        HookState,
        Ledger,
        Node,
        NodeKind,
        SessionDoc,
        Verb,
    )

SCHEMA_VERSION = 1

DOMAINS: tuple[Domain, ...] = ("relationship", "project", "technical", "personal")

#: What a node stands for. ``decision`` and ``correction`` carry the session's intent and
#: are what the ledger and the PostToolUse injection care about most.
KINDS: tuple[NodeKind, ...] = (
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

#: The kinds that state a choice: a decision, or a correction (a decision that reverses an
#: earlier one, which it ``supersedes``).
DECISION_KINDS: tuple[NodeKind, ...] = ("decision", "correction")
#: The kinds that carry the session's intent, what the restore block calls "decisions in
#: force": choices, and the user's preferences.
INTENT_KINDS: tuple[NodeKind, ...] = (*DECISION_KINDS, "preference")

#: The fixed edge vocabulary. There is deliberately no generic ``related_to``.
VERBS: tuple[Verb, ...] = (
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

#: A task's status as the task tools say it (TodoWrite's and TaskUpdate's words).
TASK_STATUSES: tuple[str, ...] = ("pending", "in_progress", "completed")
#: A task node's ``status`` fact: the tools' words, or ``dropped``: taken off the list
#: without being completed (a TodoWrite list that no longer holds it, TaskUpdate's
#: ``deleted``). A dropped task is neither open nor done; no block states it.
TASK_STATES: tuple[str, ...] = (*TASK_STATUSES, "dropped")

#: Typed confidence: how we came to hold a node. Corrections outrank everything.
CONFIDENCE: tuple[Confidence, ...] = ("asserted", "inferred", "observed", "correction")

LABEL_MAX = 120
#: The weight of a node that has none (a hand-edited or foreign file); normalisation applies it.
DEFAULT_WEIGHT = 0.5
DEFAULT_STRENGTH = 0.5
SUMMARY_MAX = 280
SOURCES_MAX = 8  # bounded provenance list inside a node; the journal holds the rest
FILES_MAX = 8


# A node and an edge are plain dicts shaped as rolling_graph.core.types.Node and .Edge.

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
    domain: Domain,
    kind: NodeKind = "concept",
    *,
    node_id: str | None = None,
    weight: float = DEFAULT_WEIGHT,
    now: datetime | None = None,
    confidence: Confidence = "inferred",
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


def make_edge(source: str, relationship: Verb, target: str, strength: float = DEFAULT_STRENGTH, now: datetime | None = None) -> Edge:
    return {
        "source": source,
        "target": target,
        "relationship": relationship,
        "strength": strength,
        "last_activated": iso(now or utcnow()),
    }
