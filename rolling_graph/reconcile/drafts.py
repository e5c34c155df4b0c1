"""Drafting a flat memory for a graduation candidate, held to grounding rules.

The draft is written from the node, its neighbourhood and its provenance: the sessions it
appeared in and the journal entries (``$ROLLING_GRAPH_HOME/sessions/<sid>.journal.jsonl``)
whose operations touched it, cited as ``"<session>#<seq>"``. Backends: Anthropic (official
SDK, ``settings.probe.anthropic_model``), Ollama (official client), or an offline template;
chosen by the probe's own logic (see :mod:`rolling_graph.reconcile.draft_backends`).

Grounding rules (:func:`grounding_problems`): a draft cites at least one of the node's
sessions and, when the node has journaled events, at least one of them, and cites nothing
else; it contains no hedges ("maybe", "might", "probably", ...). A model draft that breaks
them is kept as ``rejected`` (by ``grounding``) for the audit trail and replaced by the
template. Text is redacted before it is stored. A draft at least
``duplicate_similarity`` similar to an existing flat memory (same embedding model only)
is stored as ``duplicate`` of it, not proposed.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Protocol

from rolling_graph.config import Settings
from rolling_graph.model import utcnow
from rolling_graph.reconcile import embeddings
from rolling_graph.reconcile.graduation import DEFAULT, MEMORY_KINDS, GraduationSettings
from rolling_graph.redact import redact

HEDGES: tuple[str, ...] = ("maybe", "might", "probably", "perhaps", "possibly", "i think", "could be", "i guess", "not sure")
_HEDGE_RE = re.compile(r"\b(" + "|".join(re.escape(h).replace(r"\ ", r"\s+") for h in HEDGES) + r")\b", re.IGNORECASE)
CONTENT_MAX = 600
RATIONALE_MAX = 240


class DraftFailed(RuntimeError):
    """The model backend gave no usable draft (the template takes over)."""


@dataclass(frozen=True)
class EventRef:
    session_id: str
    seq: int
    kind: str
    rationale: str
    event_id: str | None = None
    at: str | None = None

    @property
    def ref(self) -> str:
        return f"{self.session_id}#{self.seq}"


@dataclass(frozen=True)
class Neighbour:
    direction: str  # "out" (node -> other) | "in" (other -> node)
    relationship: str
    node_id: str
    label: str
    strength: float


@dataclass(frozen=True)
class NodeContext:
    project_id: int
    project_root: str
    node_id: str
    label: str
    kind: str
    domain: str
    summary: str | None
    weight: float
    session_count: int
    node_hash: str
    neighbours: tuple[Neighbour, ...] = ()
    sessions: tuple[str, ...] = ()
    events: tuple[EventRef, ...] = ()

    def as_prompt(self) -> dict[str, Any]:
        return {
            "concept": {"label": self.label, "kind": self.kind, "domain": self.domain, "summary": self.summary,
                        "weight": round(self.weight, 2), "sessions_seen": self.session_count},
            "neighbours": [{"relationship": n.relationship, "direction": n.direction, "label": n.label} for n in self.neighbours],
            "sessions": list(self.sessions),
            "events": [{"id": e.ref, "kind": e.kind, "rationale": e.rationale} for e in self.events],
        }


@dataclass(frozen=True)
class Draft:
    content: str
    kind: str
    sessions: tuple[str, ...]
    events: tuple[str, ...]
    backend: str
    model: str | None = None
    problems: tuple[str, ...] = field(default=())


class Drafter(Protocol):
    name: str
    model: str | None

    def draft(self, ctx: NodeContext) -> Draft: ...


def memory_kind(node_kind: str) -> str:
    return node_kind if node_kind in MEMORY_KINDS else "note"


# -- provenance and neighbourhood --------------------------------------------------------------


def journal_events(settings: Settings, sessions: Sequence[str], node_id: str, limit: int) -> list[EventRef]:
    """Journal entries of ``sessions`` whose operations touched the node, most recent first."""
    from rolling_graph.journal import op_touches, read_journal
    from rolling_graph.sidecar import InvalidSessionId, SidecarStore, validate_session_id

    store = SidecarStore(settings)
    found: list[EventRef] = []
    for sid in sessions:
        try:
            path = store.journal_path(validate_session_id(sid))
        except InvalidSessionId:
            continue
        for entry in read_journal(path):
            if entry.get("kind") in ("rejected", "note"):
                continue
            if any(isinstance(op, dict) and op_touches(op, node_id) for op in entry.get("ops") or []):
                found.append(EventRef(
                    sid, int(entry["seq"]), str(entry.get("kind") or "patch"),
                    redact(str(entry.get("rationale") or ""))[:RATIONALE_MAX],
                    entry.get("event_id") if isinstance(entry.get("event_id"), str) else None,
                    entry.get("at") if isinstance(entry.get("at"), str) else None,
                ))
    found.sort(key=lambda e: (e.at or "", e.session_id, e.seq), reverse=True)
    return found[:limit]


def load_context(conn: Any, settings: Settings, pid: int, node_id: str, gs: GraduationSettings = DEFAULT) -> NodeContext | None:
    row = conn.execute(
        "SELECT p.root, n.label, n.kind, n.domain, n.summary, n.weight, n.session_count, rg_node_hash(n.project_id, n.id) "
        "FROM nodes n JOIN projects p ON p.id = n.project_id WHERE n.project_id = %s AND n.id = %s",
        (pid, node_id),
    ).fetchone()
    if row is None:
        return None
    neighbours = tuple(
        Neighbour(d, r, other, label, float(st))
        for d, r, other, label, st in conn.execute(
            "SELECT CASE WHEN e.source = %(n)s THEN 'out' ELSE 'in' END, e.relationship, o.id, o.label, e.strength "
            "FROM edges e JOIN nodes o ON o.project_id = e.project_id "
            " AND o.id = CASE WHEN e.source = %(n)s THEN e.target ELSE e.source END "
            "WHERE e.project_id = %(p)s AND (e.source = %(n)s OR e.target = %(n)s) ORDER BY e.strength DESC, o.id LIMIT 12",
            {"n": node_id, "p": pid},
        )
    )
    sessions = tuple(
        r[0] for r in conn.execute(
            "SELECT session_id FROM node_sessions WHERE project_id = %s AND node_id = %s ORDER BY last_activated, session_id",
            (pid, node_id),
        )
    )
    events = tuple(journal_events(settings, sessions, node_id, gs.events_per_draft))
    return NodeContext(pid, row[0], node_id, row[1], row[2], row[3], row[4], float(row[5]), int(row[6]), row[7],
                       neighbours, sessions, events)


# -- grounding ---------------------------------------------------------------------------------


def hedges_in(text: str) -> list[str]:
    return sorted({m.group(1).lower() for m in _HEDGE_RE.finditer(text)})


def grounding_problems(draft: Draft, ctx: NodeContext) -> list[str]:
    """Why the draft may not be proposed (empty when it follows the rules)."""
    problems: list[str] = []
    text = draft.content.strip()
    if not text:
        problems.append("empty draft")
    elif len(text) > CONTENT_MAX:
        problems.append(f"too long ({len(text)} > {CONTENT_MAX} characters)")
    hedged = hedges_in(text)
    if hedged:
        problems.append("hedged: " + ", ".join(repr(h) for h in hedged))
    known_sessions, known_events = set(ctx.sessions), {e.ref for e in ctx.events}
    if not draft.sessions:
        problems.append("cites no session")
    unknown = [s for s in draft.sessions if s not in known_sessions]
    if unknown:
        problems.append("cites unknown sessions: " + ", ".join(unknown[:3]))
    if known_events and not draft.events:
        problems.append("cites no journal event")
    unknown_events = [e for e in draft.events if e not in known_events]
    if unknown_events:
        problems.append("cites unknown events: " + ", ".join(unknown_events[:3]))
    if draft.kind not in MEMORY_KINDS:
        problems.append(f"unknown kind {draft.kind!r}")
    return problems


# -- backends ----------------------------------------------------------------------------------


def _sentence(text: str) -> str:
    text = text.strip().rstrip(".")
    return f"{text}." if text else ""


class TemplateDrafter:
    """Offline: a deterministic statement built from the node and its neighbourhood."""

    name = "template"
    model: str | None = None

    def draft(self, ctx: NodeContext) -> Draft:
        kind = memory_kind(ctx.kind)
        head = {"correction": "Correction", "decision": "Decision", "preference": "Preference"}.get(kind)
        parts = [_sentence(f"{head}: {ctx.label}" if head else ctx.label)]
        if ctx.summary:
            parts.append(_sentence(ctx.summary))
        superseded = [n.label for n in ctx.neighbours if n.relationship == "supersedes" and n.direction == "out"]
        if superseded:
            parts.append(_sentence("It replaces " + "; ".join(superseded[:3])))
        related = [f"{n.label} ({n.relationship.replace('_', ' ')})" for n in ctx.neighbours if n.relationship != "supersedes"]
        if related:
            parts.append(_sentence("Related: " + "; ".join(related[:4])))
        return Draft(" ".join(p for p in parts if p), kind, ctx.sessions, tuple(e.ref for e in ctx.events), self.name)


# -- duplicates and storage --------------------------------------------------------------------


def embed_memories(conn: Any, pid: int, embedder: embeddings.Embedder) -> int:
    """(Re-)embed the project's live memories that lack a vector of ``embedder``'s model.

    Vectors of two models are never compared, so after the embedder changes (Ollama came
    or went) the memories move to the current model before any duplicate check.
    """
    rows = conn.execute(
        "SELECT id, content FROM flat_memories WHERE project_id = %s AND deleted_at IS NULL "
        "AND (model IS DISTINCT FROM %s OR dim IS DISTINCT FROM %s OR embedding IS NULL)",
        (pid, embedder.model, embedder.dim),
    ).fetchall()
    if not rows:
        return 0
    vectors = embedder.embed([r[1] for r in rows])
    for (mid, _content), vec in zip(rows, vectors, strict=True):
        conn.execute(
            "UPDATE flat_memories SET embedding = %s::vector, model = %s, dim = %s WHERE id = %s",
            (embeddings.vector_literal(vec), embedder.model, embedder.dim, mid),
        )
    return len(rows)


def find_duplicate(conn: Any, pid: int, embedder: embeddings.Embedder, text: str) -> tuple[int, float] | None:
    """The most similar live flat memory of the project, compared within one embedding model."""
    [vec] = embedder.embed([text])
    dim = int(embedder.dim)
    row = conn.execute(
        f"SELECT id, 1 - (embedding::vector({dim}) <=> %s::vector({dim})) AS sim FROM flat_memories "
        "WHERE project_id = %s AND model = %s AND dim = %s AND deleted_at IS NULL AND embedding IS NOT NULL "
        "ORDER BY sim DESC, id LIMIT 1",
        (embeddings.vector_literal(vec), pid, embedder.model, dim),
    ).fetchone()
    return (int(row[0]), float(row[1])) if row else None


@dataclass(frozen=True)
class DraftRecord:
    id: int | None  # None when another run already holds a pending draft for the node
    node_id: str
    status: str
    backend: str
    problems: tuple[str, ...] = ()
    duplicate_of: int | None = None
    similarity: float | None = None


def _insert(conn: Any, ctx: NodeContext, d: Draft, status: str, now: datetime, **extra: Any) -> int | None:
    row = conn.execute(
        "INSERT INTO graduation_drafts (project_id, node_id, status, kind, content, sessions, events, node_hash, backend, model,"
        " problems, duplicate_of, similarity, replaces, created_at, decided_at, decided_by) "
        "VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s) "
        "ON CONFLICT (project_id, node_id) WHERE status = 'pending' DO NOTHING RETURNING id",
        (ctx.project_id, ctx.node_id, status, d.kind, d.content, list(d.sessions), list(d.events), ctx.node_hash, d.backend,
         d.model, list(d.problems), extra.get("duplicate_of"), extra.get("similarity"), extra.get("replaces"), now,
         now if status != "pending" else None, extra.get("decided_by")),
    ).fetchone()
    return int(row[0]) if row else None


def draft_node(
    conn: Any,
    settings: Settings,
    pid: int,
    node_id: str,
    drafter: Drafter,
    embedder: embeddings.Embedder,
    gs: GraduationSettings = DEFAULT,
    *,
    replaces: int | None = None,
    now: datetime | None = None,
) -> DraftRecord | None:
    """Draft, ground, de-duplicate and store one candidate (the caller commits). None if the node is gone."""
    now = now or utcnow()
    ctx = load_context(conn, settings, pid, node_id, gs)
    if ctx is None:
        return None
    template = TemplateDrafter()
    refused: list[str] = []
    try:
        draft = drafter.draft(ctx)
    except DraftFailed as exc:
        refused.append(str(exc))
        draft = template.draft(ctx)
    draft = Draft(redact(draft.content).strip(), draft.kind, draft.sessions, draft.events, draft.backend, draft.model)
    problems = grounding_problems(draft, ctx)
    if problems and draft.backend != template.name:
        bad = Draft(draft.content, draft.kind if draft.kind in MEMORY_KINDS else "note", draft.sessions, draft.events,
                    draft.backend, draft.model, tuple(problems))
        _insert(conn, ctx, bad, "rejected", now, decided_by="grounding")
        refused.append(f"{draft.backend} draft refused: " + "; ".join(problems))
        draft = template.draft(ctx)
        draft = Draft(redact(draft.content).strip(), draft.kind, draft.sessions, draft.events, draft.backend)
        problems = grounding_problems(draft, ctx)
    if problems:
        final = Draft(draft.content, draft.kind, draft.sessions, draft.events, draft.backend, draft.model, tuple(refused + problems))
        _insert(conn, ctx, final, "rejected", now, decided_by="grounding")
        return DraftRecord(None, node_id, "rejected", draft.backend, final.problems)
    draft = Draft(draft.content, draft.kind, draft.sessions, draft.events, draft.backend, draft.model, tuple(refused))
    embed_memories(conn, pid, embedder)
    dup = find_duplicate(conn, pid, embedder, draft.content)
    if dup is not None and dup[1] >= gs.duplicate_similarity:
        new_id = _insert(conn, ctx, draft, "duplicate", now, duplicate_of=dup[0], similarity=dup[1], replaces=replaces,
                         decided_by="similarity")
        return DraftRecord(new_id, node_id, "duplicate", draft.backend, draft.problems, dup[0], dup[1])
    new_id = _insert(conn, ctx, draft, "pending", now, replaces=replaces, similarity=dup[1] if dup else None)
    return DraftRecord(new_id, node_id, "pending", draft.backend, draft.problems, None, dup[1] if dup else None)
