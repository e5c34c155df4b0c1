"""Seeding: flat memories become anchor nodes of the warm graph.

Sources: approved flat memories (their own node becomes the anchor), and a user's own
markdown notes or ``CLAUDE.md`` bullets (one anchor per bullet). An anchor's seed weight
comes from its kind — correction 0.9 > decision 0.8 > preference 0.7 > note 0.6 (see
:class:`rolling_graph.core.config.GraduationSettings`) — and it never decays below its floor
(0.2). Seeding is idempotent: a node is keyed by its slug, weights and floors only move
up (``greatest``), and the warm weight is recomputed from contributions plus the seed
(:func:`rolling_graph.warm.upsert.recompute_nodes`), so running it twice changes nothing.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rolling_graph.core.config import GraduationSettings, Settings
from rolling_graph.core.ids import ID_MAX, slugify
from rolling_graph.core.model import LABEL_MAX, SUMMARY_MAX
from rolling_graph.graduation.candidates import DEFAULT, MEMORY_KINDS, seed_weight
from rolling_graph.safety.redact import redact
from rolling_graph.warm import db, embeddings, resume
from rolling_graph.warm.reconcile import embed_nodes
from rolling_graph.warm.snapshot_write import drop_whole_claim
from rolling_graph.warm.upsert import recompute_nodes

if TYPE_CHECKING:
    from rolling_graph.warm.db import Connection

_BULLET_RE = re.compile(r"^\s{0,6}(?:[-*+]|\d{1,3}[.)])\s+(?:\[[ xX]\]\s+)?(?P<text>\S.*)$")
_HEADING_RE = re.compile(r"^\s{0,3}#{1,6}\s+(?P<text>.+?)\s*#*\s*$")
_COMMENT_RE = re.compile(r"<!--.*?-->")
_PREFIX_RE = re.compile(r"^\s*(?:\*\*|__)?(?P<kind>corrections?|decisions?|decided|preferences?|prefer|notes?)\s*(?:\*\*|__)?\s*[:\-—]\s*", re.I)
_KIND_WORDS: dict[str, str] = {
    "correction": "correction", "corrections": "correction",
    "decision": "decision", "decisions": "decision", "decided": "decision",
    "preference": "preference", "preferences": "preference", "prefer": "preference",
    "note": "note", "notes": "note",
}
#: Words in a bullet that mark a correction when nothing else says what it is.
_CORRECTION_HINTS = re.compile(r"^\s*(?:never|don't|do not|not\b|actually|instead of|stop\b)", re.I)


@dataclass(frozen=True)
class Note:
    text: str
    kind: str


@dataclass(frozen=True)
class SeedResult:
    seeded: int


def _kind_from_heading(heading: str) -> str | None:
    for word in re.findall(r"[a-z]+", heading.lower()):
        if word in _KIND_WORDS:
            return _KIND_WORDS[word]
    return None


def parse_notes(text: str) -> list[Note]:
    """Bullets of a markdown file as notes; a heading or a ``Decision:`` prefix gives the kind."""
    notes: list[Note] = []
    section: str | None = None
    in_code = False
    for line in text.splitlines():
        if line.lstrip().startswith("```"):
            in_code = not in_code
            continue
        if in_code:
            continue
        heading = _HEADING_RE.match(line)
        if heading:
            section = _kind_from_heading(heading.group("text"))
            continue
        bullet = _BULLET_RE.match(line)
        if not bullet:
            continue
        body = _COMMENT_RE.sub("", bullet.group("text")).strip()
        if body.startswith("@") and " " not in body:  # an @import line, not a note
            continue
        prefix = _PREFIX_RE.match(body)
        kind = section
        if prefix:
            kind = _KIND_WORDS[prefix.group("kind").lower()]
        elif kind is None and _CORRECTION_HINTS.match(body):
            kind = "correction"
        if len(body) >= 3:
            notes.append(Note(body, kind or "note"))
    return notes


def note_id(text: str) -> str:
    """A note's node id: its slug, with a short hash when the slug had to be cut (no collisions)."""
    full = re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")
    if len(full) <= ID_MAX:
        return slugify(text)
    digest = hashlib.sha1(text.encode("utf-8")).hexdigest()[:8]
    return f"{full[:ID_MAX - 9].rstrip('-')}-{digest}"


def node_kind(memory_kind: str) -> str:
    """The warm node kind for a memory kind (a plain note is a concept)."""
    return memory_kind if memory_kind in ("correction", "decision", "preference") else "concept"


def upsert_anchor(
    conn: Connection, pid: int, node_id: str, text: str, kind: str, now: datetime, gs: GraduationSettings = DEFAULT,
    *, domain: str = "project",
) -> dict[str, Any]:
    """Make ``node_id`` an anchor (inserting it when new); returns the node for embedding.

    An existing node (a graduated one) keeps its own label and summary; it only becomes an
    anchor with its kind's seed weight."""
    text = redact(text).strip()
    label = text[:LABEL_MAX]
    summary = text[:SUMMARY_MAX] if len(text) > LABEL_MAX else None
    weight = seed_weight(kind, gs)
    confidence = "correction" if kind == "correction" else "observed"
    row = conn.execute(
        "INSERT INTO nodes AS n (project_id, id, label, domain, kind, summary, confidence, weight, seed_weight, anchor, floor,"
        " first_seen, last_activated, activations, session_count) "
        "VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, true, %s, %s, %s, 0, 0) "
        "ON CONFLICT (project_id, id) DO UPDATE SET anchor = true, floor = greatest(n.floor, EXCLUDED.floor),"
        " seed_weight = greatest(coalesce(n.seed_weight, 0), EXCLUDED.seed_weight),"
        " confidence = CASE WHEN EXCLUDED.confidence = 'correction' THEN 'correction' ELSE n.confidence END "
        "RETURNING n.label, n.summary",
        (pid, node_id, label, domain, node_kind(kind), summary, confidence, weight, weight, gs.anchor_floor, now, now),
    )
    label, summary = db.one(row)
    return {"id": node_id, "label": label, "summary": summary}


def _record(conn: Connection, pid: int, node_id: str, origin: str, source: str, kind: str, text: str, now: datetime) -> None:
    conn.execute(
        "INSERT INTO seeded_anchors (project_id, node_id, origin, source, kind, content_hash, seeded_at) "
        "VALUES (%s, %s, %s, %s, %s, %s, %s) ON CONFLICT (project_id, node_id) DO UPDATE SET "
        "kind = CASE WHEN array_position(%s::text[], EXCLUDED.kind) < array_position(%s::text[], seeded_anchors.kind) "
        "       THEN EXCLUDED.kind ELSE seeded_anchors.kind END",
        (pid, node_id, origin, source, kind, hashlib.sha1(text.encode()).hexdigest()[:16], now, list(MEMORY_KINDS), list(MEMORY_KINDS)),
    )


def seed_memories(
    conn: Connection, pid: int, now: datetime, gs: GraduationSettings = DEFAULT, memory_ids: list[int] | None = None
) -> list[dict[str, Any]]:
    """Anchor the project's live approved memories (or only ``memory_ids``); the caller commits."""
    sql = "SELECT id, node_id, kind, content FROM flat_memories WHERE project_id = %s AND deleted_at IS NULL"
    params: list[Any] = [pid]
    if memory_ids is not None:
        sql += " AND id = ANY(%s)"
        params.append(memory_ids)
    nodes = []
    for mid, node_id, kind, content in conn.execute(sql + " ORDER BY id", params).fetchall():
        nid = node_id or note_id(content)
        nodes.append(upsert_anchor(conn, pid, nid, content, kind, now, gs))
        _record(conn, pid, nid, "flat_memory", str(mid), kind, content, now)
    _recompute(conn, pid, [n["id"] for n in nodes])
    return nodes


def seed_notes(
    conn: Connection, pid: int, notes: list[Note], source: str, now: datetime, gs: GraduationSettings = DEFAULT
) -> list[dict[str, Any]]:
    """Anchor a user's markdown notes (the caller commits)."""
    nodes = []
    for note in notes:
        nid = note_id(redact(note.text))
        nodes.append(upsert_anchor(conn, pid, nid, note.text, note.kind, now, gs))
        _record(conn, pid, nid, "markdown", source, note.kind, note.text, now)
    _recompute(conn, pid, [n["id"] for n in nodes])
    return nodes


def _recompute(conn: Connection, pid: int, ids: list[str]) -> None:
    if ids:
        recompute_nodes(conn, pid, sorted(set(ids)))


def withdraw_whole_claim(conn: Connection, settings: Settings, pid: int) -> None:
    """Anchors are about to go into project ``pid`` (in the caller's transaction): its snapshot
    no longer claims to hold the whole warm graph until :func:`finish` rewrites it."""
    row = conn.execute("SELECT root FROM projects WHERE id = %s", (pid,)).fetchone()
    if row is not None:
        drop_whole_claim(settings.home, str(row[0]))


def finish(conn: Connection, settings: Settings, pid: int, nodes: list[dict[str, Any]], embedder: Any = None) -> None:
    """After the seeding transaction: embed the anchors and refresh the resume snapshot."""
    unique = list({n["id"]: n for n in nodes}.values())
    embed_nodes(conn, embedder or embeddings.get_embedder(settings), pid, unique)
    root = conn.execute("SELECT root FROM projects WHERE id = %s", (pid,)).fetchone()
    conn.commit()
    if root:
        resume.refresh_snapshot(conn, settings, root[0])


def seed_project(
    conn: Connection, settings: Settings, pid: int, now: datetime, gs: GraduationSettings = DEFAULT,
    *, approved: bool = True, files: list[Path] | None = None,
) -> SeedResult:
    """``rgraph seed``: approved memories and/or markdown files, in one transaction, then embed."""
    nodes: list[dict[str, Any]] = []
    with conn.transaction():
        withdraw_whole_claim(conn, settings, pid)
        if approved:
            nodes += seed_memories(conn, pid, now, gs)
        for path in files or []:
            nodes += seed_notes(conn, pid, parse_notes(path.read_text(encoding="utf-8")), str(path), now, gs)
    finish(conn, settings, pid, nodes)
    return SeedResult(len({n["id"] for n in nodes}))
