"""The nightly graduation job (``rgraph graduate --nightly``) and its markdown review report.

One run, per project: read users' edits and deletions back from the memory files (quality
signal), record memories kept 30 days, refresh pending drafts whose node changed, draft new
candidates, start/stop the floor clock of anchors and queue archive review for those at
their floor six weeks or more. Idempotent and safe from cron or a systemd timer: a
session-level advisory lock lets one run at a time (a second one exits at once), and the
one-pending-draft-per-node index makes double proposals impossible even without it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rolling_graph.core.clock import iso
from rolling_graph.core.config import GraduationSettings, Settings
from rolling_graph.graduation import candidates as graduation
from rolling_graph.graduation import drafts, review
from rolling_graph.graduation.candidates import DEFAULT
from rolling_graph.graduation.provenance import Journals
from rolling_graph.store.atomic import write_atomic
from rolling_graph.warm import db, embeddings

if TYPE_CHECKING:
    from rolling_graph.warm.db import Connection

#: Candidates looked at per draft allowed: those their sessions' journals do not state are
#: passed over (the warm graph echoing a node into later sessions is no evidence).
CANDIDATE_POOL = 5
#: Advisory lock key: one graduation run at a time per database ("rgraph-g").
JOB_LOCK = 0x7267726170682D67


@dataclass
class JobSummary:
    projects: int = 0
    candidates: int = 0
    drafted: int = 0
    duplicates: int = 0
    refused: int = 0
    refreshed: int = 0
    archive_queued: int = 0
    kept: int = 0
    edited: int = 0
    deleted: int = 0
    pending: int = 0
    drafter: str = ""
    report: Path | None = None
    busy: bool = False
    notes: list[str] = field(default_factory=list)

    def line(self) -> str:
        if self.busy:
            return "graduate: another graduation run is in progress; nothing done"
        text = (f"graduate: {self.candidates} new candidates, {self.drafted} drafted, {self.duplicates} duplicates, "
                f"{self.refused} refused, {self.refreshed} refreshed, {self.pending} pending review, "
                f"{self.archive_queued} queued for archive review ({self.projects} projects, drafter {self.drafter})")
        return text + (f"; report: {self.report}" if self.report else "")


def run_job(
    conn: Connection, settings: Settings, pids: list[int], *, drafter: drafts.Drafter, embedder: embeddings.Embedder,
    gs: GraduationSettings = DEFAULT, now: datetime | None = None,
) -> JobSummary:
    """The whole job over ``pids``; ``conn`` must be in autocommit mode (each step commits)."""
    now = now or settings.clock.now()
    summary = JobSummary(projects=len(pids), drafter=drafter.name)
    if not db.one(conn.execute("SELECT pg_try_advisory_lock(%s)", (JOB_LOCK,)))[0]:
        summary.busy = True
        return summary
    try:
        for pid in pids:
            with conn.transaction():
                edited, deleted = review.sync_file_changes(conn, settings, pid, now)
                summary.edited += edited
                summary.deleted += deleted
                summary.kept += graduation.record_kept(conn, [pid], now, gs)
            for draft in review.pending_drafts(conn, [pid]):
                if review.is_stale(conn, draft):
                    with conn.transaction():
                        review.refresh(conn, settings, draft, drafter, embedder, gs, now)
                    summary.refreshed += 1
        journals = Journals(settings)  # each session's journal read once for all candidates
        for cand in graduation.candidates(conn, pids, gs, limit=gs.max_drafts_per_run * CANDIDATE_POOL):
            if summary.candidates >= gs.max_drafts_per_run:
                break
            with conn.transaction():
                record = drafts.draft_node(conn, settings, cand.project_id, cand.node_id, drafter, embedder, gs, now=now,
                                           journals=journals)
            if record is None or record.status == "unevidenced":
                continue
            summary.candidates += 1
            if record.status == "pending":
                summary.drafted += record.id is not None
            elif record.status == "duplicate":
                summary.duplicates += 1
            else:
                summary.refused += 1
            if record.problems:
                summary.notes.append(f"{cand.node_id}: " + "; ".join(record.problems))
        with conn.transaction():
            graduation.track_floors(conn, pids, now, gs)
            summary.archive_queued = graduation.queue_archive_reviews(conn, pids, now, gs)
        summary.pending = len(review.pending_drafts(conn, pids))
    finally:
        conn.execute("SELECT pg_advisory_unlock(%s)", (JOB_LOCK,))
    return summary


def default_report_path(settings: Settings, now: datetime) -> Path:
    return settings.home / "graduation" / f"review-{now.strftime('%Y-%m-%d')}.md"


def _when(value: Any) -> str:
    return iso(value) if isinstance(value, datetime) else str(value)


def draft_section(draft: dict[str, Any], ctx: drafts.NodeContext | None) -> list[str]:
    """One candidate's section: the draft, its provenance and the node's neighbourhood."""
    title = ctx.label if ctx else draft["node_id"]
    lines = [f"## Draft {draft['id']}: {title}", ""]
    lines.append(f"- node: `{draft['node_id']}` · kind: {draft['kind']} · status: {draft['status']} · drafted by {draft['backend']}"
                 + (f" ({draft['model']})" if draft.get("model") else ""))
    if ctx:
        lines.append(f"- weight {ctx.weight:.2f} · seen in {ctx.session_count} sessions · {len(ctx.neighbours)} edges")
    lines += ["", "> " + " ".join(str(draft["content"]).split()), ""]
    lines.append("Provenance:")
    lines += [f"- session `{s}`" for s in draft["sessions"]] or ["- (no sessions)"]
    events = {e.ref: e for e in ctx.events} if ctx else {}
    for ref in draft["events"]:
        e = events.get(ref)
        lines.append(f"- event `{ref}`" + (f" ({e.kind}): {e.rationale}" if e and e.rationale else ""))
    if ctx and ctx.neighbours:
        lines += ["", "Neighbourhood:"]
        for n in ctx.neighbours:
            arrow = f"{title} —{n.relationship}→ {n.label}" if n.direction == "out" else f"{n.label} —{n.relationship}→ {title}"
            lines.append(f"- {arrow} (strength {n.strength:.2f})")
    if draft.get("problems"):
        lines += ["", "Notes: " + "; ".join(draft["problems"])]
    lines += ["", f"Approve: `rgraph review --approve {draft['id']}` · reject: `rgraph review --reject {draft['id']}`", ""]
    return lines


def render_report(conn: Connection, settings: Settings, pids: list[int], summary: JobSummary, now: datetime,
                  gs: GraduationSettings = DEFAULT) -> str:
    lines = [f"# Graduation review — {now.strftime('%Y-%m-%d')}", "", summary.line(), ""]
    pending = review.pending_drafts(conn, pids)
    if not pending:
        lines += ["No drafts are waiting for review.", ""]
    for draft in pending:
        ctx = drafts.load_context(conn, settings, draft["project_id"], draft["node_id"], gs)
        lines += draft_section(draft, ctx)
    dups = conn.execute(
        "SELECT d.id, d.node_id, d.content, m.content, d.similarity FROM graduation_drafts d JOIN flat_memories m ON m.id = d.duplicate_of "
        "WHERE d.status = 'duplicate' AND d.project_id = ANY(%s) AND d.created_at = %s ORDER BY d.id",
        (pids, now),
    ).fetchall()
    if dups:
        lines += ["## Duplicates found tonight (not proposed)", ""]
        lines += [f"- draft {i} `{nid}` ≈ existing memory “{mem}” (similarity {sim:.2f})" for i, nid, _c, mem, sim in dups]
        lines.append("")
    archive = graduation.pending_archive_reviews(conn, pids)
    if archive:
        lines += ["## Archive review", "", f"Anchors at their floor for {gs.archive_after_days} days or more:", ""]
        lines += [f"- `{a['node_id']}` {a['label']} — weight {a['weight']:.2f} (floor {a['floor']:.2f}) since {_when(a['at_floor_since'])}"
                  for a in archive]
        lines.append("")
    conn.commit()
    return "\n".join(lines)


def write_report(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    write_atomic(str(path), text.encode("utf-8"))
    return path
