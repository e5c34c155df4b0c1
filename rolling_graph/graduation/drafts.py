"""Drafting a flat memory for a graduation candidate, held to grounding and wording rules.

The draft is written from the node, its neighbourhood and its provenance: the journal
entries (``$ROLLING_GRAPH_HOME/sessions/<sid>.journal.jsonl``) that actually state it,
cited as ``"<session>#<seq>"``, and the sessions they are in
(:mod:`rolling_graph.graduation.provenance`). Backends: Anthropic (official SDK,
``settings.probe.anthropic_model``), Ollama (official client), or an offline template;
chosen by the probe's own logic (see :mod:`rolling_graph.graduation.draft_backends`).

A node is drafted only when its own sessions (not the warm graph's echo of it) brought it up
in at least ``min_sessions`` sessions and one journal entry states it.

Rules (:func:`grounding_problems`): a draft cites at least one session and one journal
event, all of them entries that contain the node's subject, and nothing else; it reads as
a plain sentence that stands on its own in a ``CLAUDE.md``, without hedges ("maybe",
"might", ...) or graph jargon ("Related: …", edge verbs, node ids, weights: see
:mod:`rolling_graph.graduation.wording`). A model draft that breaks them is kept as
``rejected`` (by ``grounding``) for the audit trail and replaced by the template. Text is
redacted before it is stored. A draft at least ``duplicate_similarity`` similar to an
existing flat memory (same embedding model only) is stored as ``duplicate`` of it, not
proposed.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING, Any, Protocol

from rolling_graph.core.config import GraduationSettings, Settings
from rolling_graph.graduation import wording
from rolling_graph.graduation.candidates import DEFAULT, MEMORY_KINDS
from rolling_graph.graduation.provenance import EventRef, Journals
from rolling_graph.safety.redact import redact
from rolling_graph.warm import embeddings

if TYPE_CHECKING:
    from rolling_graph.warm.db import Connection

__all__ = ["HEDGES", "Draft", "DraftFailed", "DraftRecord", "Drafter", "EventRef", "NodeContext", "TemplateDrafter",
           "draft_node", "grounding_problems", "hedges_in", "load_context", "memory_kind"]

HEDGES = wording.HEDGES
hedges_in = wording.hedges_in
CONTENT_MAX = 600


class DraftFailed(RuntimeError):
    """The model backend gave no usable draft (the template takes over)."""


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
    #: Sessions with a journal entry that states the node (the only sessions a draft may cite).
    sessions: tuple[str, ...] = ()
    #: Entries that state it, most recent first, at most ``events_per_draft``.
    events: tuple[EventRef, ...] = ()
    #: Sessions whose own work added or activated the node (the warm graph's echo excluded).
    appeared_in: tuple[str, ...] = ()

    @property
    def replaced(self) -> list[str]:
        """Labels of what this node ``supersedes`` (said in words: "instead of …")."""
        return [n.label for n in self.neighbours if n.relationship == "supersedes" and n.direction == "out"]

    def neighbour_ids(self) -> list[str]:
        return [self.node_id, *(n.node_id for n in self.neighbours)]

    def as_prompt(self) -> dict[str, Any]:
        """What a model drafter sees: the statement in the session's words, what it replaced,
        what it is about, and the entries that state it — no weights, ids or edge verbs, so
        none of them can leak into the memory."""
        about = [n.label for n in self.neighbours if n.relationship != "supersedes"]
        return {
            "statement": {"text": self.label, "kind": memory_kind(self.kind), "as_said": self.summary},
            "replaces": self.replaced,
            "about": list(dict.fromkeys(about))[:8],
            "stated_in_sessions": len(self.sessions),
            "sessions": list(self.sessions),
            "events": [{"id": e.ref, "what": e.rationale} for e in self.events],
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


def load_context(conn: Connection, settings: Settings, pid: int, node_id: str, gs: GraduationSettings = DEFAULT,
                 journals: Journals | None = None) -> NodeContext | None:
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
    evidence = (journals or Journals(settings)).evidence(sessions, node_id, row[1])
    return NodeContext(pid, row[0], node_id, row[1], row[2], row[3], row[4], float(row[5]), int(row[6]), row[7],
                       neighbours, evidence.sessions, evidence.events[: gs.events_per_draft], evidence.appeared_in)


# -- grounding ---------------------------------------------------------------------------------


def grounding_problems(draft: Draft, ctx: NodeContext) -> list[str]:
    """Why the draft may not be proposed (empty when it follows the rules)."""
    problems: list[str] = []
    text = draft.content.strip()
    if not text:
        problems.append("empty draft")
    elif len(text) > CONTENT_MAX:
        problems.append(f"too long ({len(text)} > {CONTENT_MAX} characters)")
    problems += wording.style_problems(text, ctx.neighbour_ids()) if text else []
    known_sessions, known_events = set(ctx.sessions), {e.ref for e in ctx.events}
    if not draft.sessions:
        problems.append("cites no session")
    unknown = [s for s in draft.sessions if s not in known_sessions]
    if unknown:
        problems.append("cites sessions that do not state it: " + ", ".join(unknown[:3]))
    if not draft.events:
        problems.append("cites no journal event")
    unknown_events = [e for e in draft.events if e not in known_events]
    if unknown_events:
        problems.append("cites events that do not state it: " + ", ".join(unknown_events[:3]))
    if draft.kind not in MEMORY_KINDS:
        problems.append(f"unknown kind {draft.kind!r}")
    return problems


# -- the offline backend -----------------------------------------------------------------------


class TemplateDrafter:
    """Offline: the statement as a plain sentence, what it replaced, its reason when the
    session gave one, and how often it came up (:func:`rolling_graph.graduation.wording.template_sentence`)."""

    name = "template"
    model: str | None = None

    def draft(self, ctx: NodeContext) -> Draft:
        kind = memory_kind(ctx.kind)
        text = wording.template_sentence(kind, ctx.label, ctx.summary, len(ctx.sessions), ctx.replaced)
        return Draft(text, kind, ctx.sessions, tuple(e.ref for e in ctx.events), self.name)


# -- duplicates and storage --------------------------------------------------------------------


def embed_memories(conn: Connection, pid: int, embedder: embeddings.Embedder) -> int:
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


def find_duplicate(conn: Connection, pid: int, embedder: embeddings.Embedder, text: str) -> tuple[int, float] | None:
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


def _insert(conn: Connection, ctx: NodeContext, d: Draft, status: str, now: datetime, **extra: Any) -> int | None:
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
    conn: Connection,
    settings: Settings,
    pid: int,
    node_id: str,
    drafter: Drafter,
    embedder: embeddings.Embedder,
    gs: GraduationSettings = DEFAULT,
    *,
    replaces: int | None = None,
    now: datetime | None = None,
    journals: Journals | None = None,
) -> DraftRecord | None:
    """Draft, ground, de-duplicate and store one candidate (the caller commits). None if the node is gone.

    A node its own sessions brought up fewer than ``min_sessions`` times, or that no journal
    entry states, is not drafted (status ``unevidenced``, nothing stored): the warm graph
    handing a node back to a session is no evidence that the session cared about it.
    """
    now = now or settings.clock.now()
    ctx = load_context(conn, settings, pid, node_id, gs, journals)
    if ctx is None:
        return None
    if len(ctx.appeared_in) < gs.min_sessions or not ctx.events:
        why = f"brought up in {len(ctx.appeared_in)} sessions, stated in {len(ctx.sessions)}"
        return DraftRecord(None, node_id, "unevidenced", "", (why,))
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
