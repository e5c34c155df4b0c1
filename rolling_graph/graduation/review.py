"""Review, the one-way door: approve, edit, reject or skip a drafted flat memory.

Each action runs in its own transaction. Before approval the draft is checked against
the node's current state (``rg_node_hash``): when the node changed since drafting, the
draft is marked ``stale``, a fresh one is drafted, and the result says so — nothing is
approved until a human has seen the refreshed text. Approval writes the flat memory
(content, embedding tagged with model and dimension, provenance, who and when), anchors
its node in the warm graph, and re-exports the project's memory file; rejection adds the
node's current state to the rejected set.

The export, ``$ROLLING_GRAPH_HOME/memory/<project_key>.md``, holds exactly the approved,
live memories, one bullet each, tagged ``<!-- rg:<id> ... -->`` (plus any untagged bullets
the user added, kept as written at the end). Users may edit or delete tagged bullets: before every export those changes are read back (content updated, outcome
``edited``/``deleted`` recorded for the 30-day quality signal), so a user's edit is never
overwritten.
"""

from __future__ import annotations

import getpass
import re
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rolling_graph.core.clock import utcnow
from rolling_graph.core.config import GraduationSettings, Settings
from rolling_graph.graduation import drafts, seed
from rolling_graph.graduation.candidates import DEFAULT, MEMORY_KINDS, node_hash
from rolling_graph.safety.redact import redact
from rolling_graph.store.atomic import write_atomic
from rolling_graph.store.project import project_key
from rolling_graph.warm import db, embeddings

if TYPE_CHECKING:
    from rolling_graph.warm.db import Connection

_DRAFT_COLUMNS = ("id", "project_id", "node_id", "status", "kind", "content", "sessions", "events", "node_hash",
                  "backend", "model", "problems", "duplicate_of", "similarity", "replaces", "created_at")
_LINE_RE = re.compile(r"^\s*[-*]\s+(?P<text>.*?)\s*<!--\s*rg:(?P<id>\d+)\b[^>]*-->\s*$")
_USER_BULLET_RE = re.compile(r"^\s*(?:[-*+]|\d{1,3}[.)])\s+\S")
OWN_HEADING = "Your own notes (kept as written)"
_HEADINGS = {"correction": "Corrections", "decision": "Decisions", "preference": "Preferences", "note": "Notes"}


@dataclass(frozen=True)
class ReviewResult:
    action: str  # approved | rejected | skipped | refreshed | not-pending | missing
    draft_id: int
    message: str
    memory_id: int | None = None
    new_draft_id: int | None = None
    export_path: Path | None = None


def clean_text(text: str) -> str:
    """One line, no HTML comment markers: what the memory file can hold and read back unchanged."""
    return " ".join(text.replace("<!--", " ").replace("-->", " ").split())


def reviewer(settings: Settings | None = None) -> str:
    """Who is approving: ``settings.reviewer`` (``$ROLLING_GRAPH_REVIEWER``), else the login name."""
    if settings is not None and settings.reviewer:
        return settings.reviewer

    try:
        return getpass.getuser()
    except (KeyError, OSError):
        return "unknown"


def get_draft(conn: Connection, draft_id: int, *, lock: bool = False) -> dict[str, Any] | None:
    row = conn.execute(
        f"SELECT {', '.join(_DRAFT_COLUMNS)} FROM graduation_drafts WHERE id = %s{' FOR UPDATE' if lock else ''}", (draft_id,)
    ).fetchone()
    return dict(zip(_DRAFT_COLUMNS, row, strict=True)) if row else None


def pending_drafts(conn: Connection, pids: list[int]) -> list[dict[str, Any]]:
    rows = conn.execute(
        f"SELECT {', '.join(_DRAFT_COLUMNS)} FROM graduation_drafts WHERE status = 'pending' AND project_id = ANY(%s) "
        "ORDER BY project_id, id",
        (pids,),
    ).fetchall()
    return [dict(zip(_DRAFT_COLUMNS, r, strict=True)) for r in rows]


def is_stale(conn: Connection, draft: dict[str, Any]) -> bool:
    """Did the node change (materially) since the draft was made?"""
    return bool(node_hash(conn, draft["project_id"], draft["node_id"]) != draft["node_hash"])


def refresh(
    conn: Connection, settings: Settings, draft: dict[str, Any], drafter: drafts.Drafter, embedder: embeddings.Embedder,
    gs: GraduationSettings = DEFAULT, now: datetime | None = None,
) -> drafts.DraftRecord | None:
    """Retire a stale draft and draft the node afresh (inside the caller's transaction)."""
    now = now or settings.clock.now()
    conn.execute(
        "UPDATE graduation_drafts SET status = 'stale', decided_at = %s, decided_by = 'node changed' WHERE id = %s",
        (now, draft["id"]),
    )
    return drafts.draft_node(conn, settings, draft["project_id"], draft["node_id"], drafter, embedder, gs,
                             replaces=draft["id"], now=now)


def _refreshed(conn: Connection, settings: Settings, draft: dict[str, Any], drafter: drafts.Drafter | None,
               embedder: embeddings.Embedder, gs: GraduationSettings, now: datetime) -> ReviewResult:
    record = refresh(conn, settings, draft, drafter or drafts.TemplateDrafter(), embedder, gs, now)
    new_id = record.id if record else None
    status = record.status if record else "gone"
    if new_id is not None and status == "pending":
        message = (f"node {draft['node_id']!r} changed after draft {draft['id']} was made: refreshed as draft {new_id}; "
                   "review the new text and approve it")
    else:
        message = f"node {draft['node_id']!r} changed after draft {draft['id']} was made; the refreshed draft is {status}"
    return ReviewResult("refreshed", draft["id"], message, new_draft_id=new_id)


def approve(
    conn: Connection, settings: Settings, draft_id: int, *, by: str | None = None, text: str | None = None,
    drafter: drafts.Drafter | None = None, embedder: embeddings.Embedder | None = None,
    gs: GraduationSettings = DEFAULT, now: datetime | None = None,
) -> ReviewResult:
    """Approve a pending draft (``text`` replaces it: an edit). A stale draft is refreshed instead."""
    now = now or settings.clock.now()
    embedder = embedder or embeddings.get_embedder(settings)
    with conn.transaction():
        draft, refusal = _pending_draft(conn, draft_id)
        if draft is None:
            return refusal  # type: ignore[return-value]
        if is_stale(conn, draft):
            return _refreshed(conn, settings, draft, drafter, embedder, gs, now)
        content = clean_text(redact(text if text is not None else draft["content"]))
        if not content:
            return ReviewResult("skipped", draft_id, "empty text: nothing approved")
        edited = text is not None and content != clean_text(draft["content"])
        [vec] = embedder.embed([content])
        memory_id = db.one(conn.execute(
            "INSERT INTO flat_memories (project_id, node_id, draft_id, kind, content, embedding, model, dim, sessions, events,"
            " approved_by, approved_at, edited_in_review) VALUES (%s, %s, %s, %s, %s, %s::vector, %s, %s, %s, %s, %s, %s, %s) "
            "RETURNING id",
            (draft["project_id"], draft["node_id"], draft_id, draft["kind"], content, embeddings.vector_literal(vec),
             embedder.model, embedder.dim, draft["sessions"], draft["events"], by or reviewer(settings), now, edited),
        ))[0]
        conn.execute(
            "UPDATE graduation_drafts SET status = 'approved', decided_at = %s, decided_by = %s WHERE id = %s",
            (now, by or reviewer(settings), draft_id),
        )
        seed.withdraw_whole_claim(conn, settings, draft["project_id"])
        nodes = seed.seed_memories(conn, draft["project_id"], now, gs, [int(memory_id)])
    seed.finish(conn, settings, draft["project_id"], nodes, embedder)
    path = export_project(conn, settings, draft["project_id"], now)
    verb = "approved (edited)" if edited else "approved"
    return ReviewResult("approved", draft_id, f"draft {draft_id} {verb} as memory {memory_id}", int(memory_id), export_path=path)


def _pending_draft(conn: Connection, draft_id: int) -> tuple[dict[str, Any] | None, ReviewResult | None]:
    """The draft, locked, if it is still pending; else why it cannot be decided."""
    draft = get_draft(conn, draft_id, lock=True)
    if draft is None:
        return None, ReviewResult("missing", draft_id, f"no draft {draft_id}")
    if draft["status"] != "pending":
        return None, ReviewResult("not-pending", draft_id, f"draft {draft_id} is {draft['status']}, not pending")
    return draft, None


def edit(conn: Connection, settings: Settings, draft_id: int, text: str, **kw: Any) -> ReviewResult:
    """Approve the reviewer's own wording of the draft."""
    return approve(conn, settings, draft_id, text=text, **kw)


def reject(conn: Connection, draft_id: int, *, by: str | None = None, reason: str | None = None, now: datetime | None = None) -> ReviewResult:
    """Reject a pending draft; the node is not proposed again until it changes."""
    now = now or utcnow()
    who = by or reviewer()
    with conn.transaction():
        draft, refusal = _pending_draft(conn, draft_id)
        if draft is None:
            return refusal  # type: ignore[return-value]
        conn.execute(
            "UPDATE graduation_drafts SET status = 'rejected', decided_at = %s, decided_by = %s WHERE id = %s", (now, who, draft_id)
        )
        # The state the draft was made from, and the node's state now (the reviewer may have
        # rejected a draft that went stale meanwhile: the concept, not just the text, is refused).
        current = node_hash(conn, draft["project_id"], draft["node_id"])
        for state in dict.fromkeys(h for h in (draft["node_hash"], current) if h):
            conn.execute(
                "INSERT INTO graduation_rejections (project_id, node_id, node_hash, draft_id, rejected_by, rejected_at, reason) "
                "VALUES (%s, %s, %s, %s, %s, %s, %s) ON CONFLICT (project_id, node_id, node_hash) DO NOTHING",
                (draft["project_id"], draft["node_id"], state, draft_id, who, now, reason),
            )
    return ReviewResult("rejected", draft_id, f"draft {draft_id} rejected; {draft['node_id']!r} will not be proposed again unless it changes")


def skip(draft_id: int) -> ReviewResult:
    return ReviewResult("skipped", draft_id, f"draft {draft_id} left pending")


# -- export ----------------------------------------------------------------------------------


def memory_path(settings: Settings, root: str) -> Path:
    return settings.home / "memory" / f"{project_key(root)}.md"


def import_line(settings: Settings, root: str) -> str:
    """The line that makes Claude Code load the project's memory file: ``@~/.claude/…/<key>.md``."""
    path = memory_path(settings, root)
    home = Path.home()
    shown = f"~/{path.relative_to(home)}" if path.is_relative_to(home) else str(path)
    return f"@{shown}"


def import_hint(settings: Settings, root: str) -> str | None:
    """What to add to ``CLAUDE.md`` for the project's memories to load (None: no memory file yet).

    Says so when the project's ``CLAUDE.md`` or the user's ``~/.claude/CLAUDE.md`` already
    imports the file."""
    path = memory_path(settings, root)
    if not path.is_file():
        return None
    line = import_line(settings, root)
    project_md, user_md = Path(root) / "CLAUDE.md", Path.home() / ".claude" / "CLAUDE.md"
    for md in (project_md, user_md):
        try:
            text = md.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            continue
        if line in text.split() or f"@{path}" in text.split():
            return f"{md} already imports the approved memories ({line})."
    return f"To load the approved memories in Claude Code, add this line to {project_md}:\n{line}"


def _short(ref: str) -> str:
    sid, _, seq = ref.partition("#")
    return f"{sid[:8]}#{seq}" if seq else sid[:8]


def user_bullets(text: str) -> list[str]:
    """Bullets the user added to the memory file themselves (no rg tag): kept on re-export."""
    return [line.rstrip() for line in text.splitlines() if _USER_BULLET_RE.match(line) and not _LINE_RE.match(line)]


def render_export(root: str, memories: list[dict[str, Any]], own: list[str] | None = None) -> str:
    """The memory file: a header and one tagged bullet per memory, grouped by kind."""
    lines = [
        f"# Project memory: {Path(root).name or root}",
        "",
        f"<!-- Rolling Graph flat memory for {root}: approved with `rgraph review`. Edit or delete bullets freely; "
        "changes are read back before the next export. Keep the rg:<id> tags. -->",
    ]
    for kind in MEMORY_KINDS:
        group = [m for m in memories if m["kind"] == kind]
        if not group:
            continue
        lines += ["", f"## {_HEADINGS[kind]}", ""]
        for m in group:
            text = " ".join(str(m["content"]).split())
            cites = f"sessions={','.join(_short(s) for s in m['sessions'][:4])}"
            if m["events"]:
                cites += f" events={','.join(_short(e) for e in m['events'][:4])}"
            lines.append(f"- {text} <!-- rg:{m['id']} {cites} -->")
    if own:
        lines += ["", f"## {OWN_HEADING}", "", *own]
    return "\n".join(lines) + "\n"


def parse_export(text: str) -> dict[int, str]:
    """``{memory id: bullet text}`` of a memory file (untagged lines are the user's own)."""
    found: dict[int, str] = {}
    for line in text.splitlines():
        match = _LINE_RE.match(line)
        if match:
            found[int(match.group("id"))] = " ".join(match.group("text").split())
    return found


def sync_file_changes(conn: Connection, settings: Settings, pid: int, now: datetime) -> tuple[int, int]:
    """Read the user's edits and deletions back from the memory file; returns ``(edited, deleted)``."""
    root = db.one(conn.execute("SELECT root FROM projects WHERE id = %s", (pid,)))[0]
    path = memory_path(settings, root)
    if not path.is_file():
        return 0, 0
    in_file = parse_export(path.read_text(encoding="utf-8"))
    edited = deleted = 0
    rows = conn.execute(
        "SELECT id, content FROM flat_memories WHERE project_id = %s AND deleted_at IS NULL AND exported_at IS NOT NULL", (pid,)
    ).fetchall()
    for mid, content in rows:
        if mid not in in_file:
            conn.execute("UPDATE flat_memories SET deleted_at = %s WHERE id = %s", (now, mid))
            conn.execute("INSERT INTO graduation_outcomes (memory_id, outcome, at) VALUES (%s, 'deleted', %s) ON CONFLICT DO NOTHING", (mid, now))
            deleted += 1
        elif in_file[mid] != " ".join(str(content).split()):
            conn.execute("UPDATE flat_memories SET content = %s, edited_at = %s WHERE id = %s", (redact(in_file[mid]), now, mid))
            conn.execute(
                "INSERT INTO graduation_outcomes (memory_id, outcome, at, detail) VALUES (%s, 'edited', %s, %s) ON CONFLICT DO NOTHING",
                (mid, now, str(content)[:200]),
            )
            edited += 1
    return edited, deleted


def export_project(conn: Connection, settings: Settings, pid: int, now: datetime | None = None) -> Path:
    """Write exactly the project's approved, live memories to its markdown file (atomic)."""
    now = now or settings.clock.now()
    with conn.transaction():
        sync_file_changes(conn, settings, pid, now)
        root = db.one(conn.execute("SELECT root FROM projects WHERE id = %s", (pid,)))[0]
        previous = memory_path(settings, root)
        own = user_bullets(previous.read_text(encoding="utf-8")) if previous.is_file() else []
        rows = conn.execute(
            "SELECT id, kind, content, sessions, events FROM flat_memories WHERE project_id = %s AND deleted_at IS NULL "
            "ORDER BY approved_at, id",
            (pid,),
        ).fetchall()
        memories = [dict(zip(("id", "kind", "content", "sessions", "events"), r, strict=True)) for r in rows]
        path = memory_path(settings, root)
        path.parent.mkdir(parents=True, exist_ok=True)
        write_atomic(str(path), render_export(root, memories, own).encode("utf-8"))
        conn.execute("UPDATE flat_memories SET exported_at = %s WHERE id = ANY(%s)", (now, [m["id"] for m in memories]))
    return path


def decide_archive(conn: Connection, review_id: int, *, keep: bool, by: str | None = None, now: datetime | None = None) -> bool:
    """Close an archive review: keep the anchor (clock restarts) or archive it (no longer an anchor)."""
    now = now or utcnow()
    with conn.transaction():
        row = conn.execute(
            "UPDATE archive_reviews SET status = %s, decided_at = %s, decided_by = %s WHERE id = %s AND status = 'pending' "
            "RETURNING project_id, node_id",
            ("kept" if keep else "archived", now, by or reviewer(), review_id),
        ).fetchone()
        if row is None:
            return False
        if keep:
            conn.execute("UPDATE nodes SET at_floor_since = NULL WHERE project_id = %s AND id = %s", row)
        else:
            conn.execute("UPDATE nodes SET anchor = false, floor = 0, at_floor_since = NULL WHERE project_id = %s AND id = %s", row)
    return True
