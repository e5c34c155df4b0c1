"""The hot graph document: the shape of a session's sidecar.

The sidecar is one JSON object per session. Probes address it with RFC 6902 JSON
Pointers, so its shape is deliberately flat and stable:

* ``/nodes/<id>``        — nodes keyed by slug id
* ``/edges/<key>``       — edges keyed by ``source|relationship|target`` (no list indices)
* ``/focus``             — the focus cluster (3–5 ids), recomputed by code, never by a model
* ``/gate``              — heuristic gate state and the batch of events awaiting a probe
* ``/ledger``            — what has been injected into the conversation already
* ``/counters``          — telemetry

Everything here is plain dicts and stdlib so the hook process stays fast; validation of
untrusted input (model output) lives in :mod:`rolling_graph.patch`.
"""

from __future__ import annotations

import os
import time

TYPE_CHECKING = False  # avoid importing typing (and datetime) on the hook path
if TYPE_CHECKING:
    from datetime import datetime
    from typing import Any

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
SUMMARY_MAX = 280
SOURCES_MAX = 8  # bounded provenance list inside a node; the journal holds the rest
ID_MAX = 64
FILES_MAX = 8

_SLUG_CHARS = frozenset("abcdefghijklmnopqrstuvwxyz0123456789")
_ID_BODY = _SLUG_CHARS | {"-"}


def is_node_id(value: object) -> bool:
    """``[a-z0-9][a-z0-9-]{0,63}``, checked without ``re`` (the SessionStart hook validates
    every snapshot node with it). Unlike a ``$``-anchored pattern, no trailing newline."""
    return isinstance(value, str) and 0 < len(value) <= ID_MAX and value[0] in _SLUG_CHARS and all(c in _ID_BODY for c in value)


# A node is a dict: id, label, domain, kind, weight, last_activated, first_seen,
# activations, anchor, floor, confidence, sources (bounded), optional summary, files,
# superseded_by, pulled/origin (from the warm graph).
# An edge is a dict: source, target, relationship, strength, last_activated.
Node = dict
Edge = dict


def utcnow() -> datetime:
    """Current time, timezone-aware (freezegun-friendly).

    ``ROLLING_GRAPH_NOW`` (ISO 8601) pins the clock for replays run as subprocesses.
    """
    from datetime import UTC, datetime

    pinned = os.environ.get("ROLLING_GRAPH_NOW")
    if pinned:
        parsed = parse_iso(pinned)
        if parsed is not None:
            return parsed
    return datetime.now(UTC)


def now_iso() -> str:
    """``utcnow()`` as an ISO string, without importing ``datetime`` (hook hot path)."""
    pinned = os.environ.get("ROLLING_GRAPH_NOW")
    if pinned:
        return iso(utcnow())
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


def edge_key(source: str, relationship: str, target: str) -> str:
    return f"{source}|{relationship}|{target}"


def new_document(session_id: str, project: str | None = None, now: datetime | None = None) -> dict[str, Any]:
    """An empty, valid sidecar document."""
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
        "gate": new_gate_state(),
        "ledger": {},
        "counters": new_counters(),
        "journal_seq": 0,
    }


def new_gate_state() -> dict[str, Any]:
    return {
        "events_since_probe": 0,
        "last_domain": None,
        "pending": [],  # bounded batch of events since the last probe (see gate.PENDING_MAX)
        "pending_reasons": [],
        "probe_requested": False,
    }


def new_counters() -> dict[str, Any]:
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
    weight: float = 0.5,
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


def make_edge(source: str, relationship: str, target: str, strength: float = 0.5, now: datetime | None = None) -> Edge:
    return {
        "source": source,
        "target": target,
        "relationship": relationship,
        "strength": strength,
        "last_activated": iso(now or utcnow()),
    }
