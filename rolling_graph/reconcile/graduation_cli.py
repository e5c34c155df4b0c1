"""``rgraph graduate | review | seed``: graduation into flat memory, the one-way door.

``register(app)`` adds the commands to the lead's typer app. Errors print one actionable
line and exit 1. ``graduate --nightly`` prints exactly one summary line (cron mails it).
"""

from __future__ import annotations

import os
import shlex
import subprocess
import tempfile
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.panel import Panel
from rich.table import Table

from rolling_graph.config import ConfigError, Settings, load_settings
from rolling_graph.model import utcnow
from rolling_graph.reconcile.cli import _fail, console, err

EDITOR_HELP = "# Edit the memory above. Lines starting with '#' are ignored; an empty text skips the draft.\n"


def _settings() -> tuple[Settings, Any]:
    from rolling_graph.reconcile.graduation import load_graduation_settings

    try:
        settings = load_settings()
        return settings, load_graduation_settings(settings)
    except ConfigError as exc:
        _fail(str(exc))
        raise  # unreachable


def _connect(settings: Settings) -> Any:
    from rolling_graph.reconcile import db

    try:
        return db.connect(settings, autocommit=True)
    except db.DatabaseUnavailable as exc:
        _fail(f"{exc} — start it with `rgraph db start` or set ROLLING_GRAPH_DSN")


def _root(project: Path | None) -> str | None:
    from rolling_graph.project import project_root

    return project_root(str(project)) if project is not None else None


# -- graduate ---------------------------------------------------------------------------------


def graduate_cmd(
    nightly: Annotated[bool, typer.Option("--nightly", help="Unattended run (cron/systemd): one summary line, always a report.")] = False,
    report: Annotated[Path | None, typer.Option("--report", help="Write the markdown review report here.")] = None,
    project: Annotated[Path | None, typer.Option("--project", help="Only this project (a directory inside it).")] = None,
) -> None:
    """Find graduation candidates, draft their flat memories and queue archive reviews (idempotent)."""
    from rolling_graph.reconcile import draft_backends, embeddings, graduation
    from rolling_graph.reconcile import nightly as job

    settings, gs = _settings()
    drafter, _why = draft_backends.choose_drafter(settings)
    embedder = embeddings.get_embedder(settings)
    now = utcnow()
    with _connect(settings) as conn:
        pids = graduation.project_ids(conn, _root(project))
        if project is not None and not pids:
            _fail(f"no warm graph for {_root(project)} yet: reconcile a session there first (`rgraph reconcile`)")
        summary = job.run_job(conn, settings, pids, drafter=drafter, embedder=embedder, gs=gs, now=now)
        if not summary.busy and (nightly or report is not None):
            path = report or job.default_report_path(settings, now)
            summary.report = job.write_report(path, job.render_report(conn, settings, pids, summary, now, gs))
        if not nightly and not summary.busy:
            _print_pending(conn, pids)
    console.print(summary.line(), highlight=False, soft_wrap=True)


def _print_pending(conn: Any, pids: list[int]) -> None:
    from rolling_graph.reconcile import graduation, review

    pending = review.pending_drafts(conn, pids)
    if pending:
        table = Table(title="Drafts waiting for review", show_lines=False)
        for col in ("id", "node", "kind", "draft"):
            table.add_column(col)
        for d in pending:
            table.add_row(str(d["id"]), d["node_id"], d["kind"], d["content"])
        console.print(table)
    archive = graduation.pending_archive_reviews(conn, pids)
    if not pending and not archive:
        console.print("Nothing is waiting for review.")
    if archive:
        table = Table(title="Anchors queued for archive review")
        for col in ("id", "node", "label", "at floor since"):
            table.add_column(col)
        for a in archive:
            table.add_row(str(a["id"]), a["node_id"], a["label"], str(a["at_floor_since"])[:10])
        console.print(table)


# -- review -----------------------------------------------------------------------------------


def open_editor(text: str) -> str:
    """``$VISUAL``/``$EDITOR`` on a temp file holding ``text``; the edited text, comments removed."""
    editor = os.environ.get("VISUAL") or os.environ.get("EDITOR") or "vi"
    fd, name = tempfile.mkstemp(prefix="rgraph-memory-", suffix=".md")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(text.rstrip() + "\n\n" + EDITOR_HELP)
        subprocess.run([*shlex.split(editor), name], check=False)
        edited = Path(name).read_text(encoding="utf-8")
    finally:
        Path(name).unlink(missing_ok=True)
    return "\n".join(line for line in edited.splitlines() if not line.lstrip().startswith("#")).strip()


def show_draft(conn: Any, settings: Settings, draft: dict[str, Any], gs: Any) -> None:
    """The draft, its provenance and the node's neighbourhood."""
    from rolling_graph.reconcile import drafts

    ctx = drafts.load_context(conn, settings, draft["project_id"], draft["node_id"], gs)
    title = f"draft {draft['id']} · {draft['kind']} · node {draft['node_id']}"
    if ctx:
        title += f" · weight {ctx.weight:.2f}, {ctx.session_count} sessions"
    console.print(Panel(draft["content"], title=title, subtitle=f"drafted by {draft['backend']}", expand=False))
    events = {e.ref: e for e in ctx.events} if ctx else {}
    prov = Table(title="Provenance", show_header=False, box=None)
    for sid in draft["sessions"]:
        prov.add_row("session", sid)
    for ref in draft["events"]:
        e = events.get(ref)
        prov.add_row("event", ref + (f" ({e.kind}) {e.rationale}" if e else ""))
    console.print(prov)
    if ctx and ctx.neighbours:
        hood = Table(title="Neighbourhood", box=None)
        for col in ("relationship", "node", "strength"):
            hood.add_column(col)
        for n in ctx.neighbours:
            rel = f"{n.relationship} →" if n.direction == "out" else f"← {n.relationship}"
            hood.add_row(rel, n.label, f"{n.strength:.2f}")
        console.print(hood)
    if draft.get("problems"):
        console.print(f"[yellow]notes:[/yellow] {'; '.join(draft['problems'])}")


def _interactive(conn: Any, settings: Settings, pids: list[int], gs: Any, drafter: Any, embedder: Any) -> None:
    from rolling_graph.reconcile import review

    queue = review.pending_drafts(conn, pids)
    if not queue:
        console.print("No drafts are waiting for review. Run `rgraph graduate` to look for candidates.")
        return
    while queue:
        draft = queue.pop(0)
        if review.is_stale(conn, draft):
            with conn.transaction():
                record = review.refresh(conn, settings, draft, drafter, embedder, gs)
            console.print(f"[yellow]node {draft['node_id']!r} changed after draft {draft['id']} was made; refreshed it[/yellow]")
            if record is None or record.id is None or record.status != "pending":
                continue
            draft = review.get_draft(conn, record.id) or draft
        show_draft(conn, settings, draft, gs)
        choice = typer.prompt("[a]pprove / [e]dit / [r]eject / [s]kip / [q]uit", default="s").strip().lower()[:1]
        if choice == "q":
            break
        if choice == "a":
            result = review.approve(conn, settings, draft["id"], drafter=drafter, embedder=embedder, gs=gs)
        elif choice == "e":
            try:
                text = open_editor(draft["content"])
            except OSError as exc:
                err.print(f"[red]cannot start the editor[/red] ({exc}); set $EDITOR — draft {draft['id']} left pending")
                continue
            result = review.edit(conn, settings, draft["id"], text, drafter=drafter, embedder=embedder, gs=gs) if text else review.skip(draft["id"])
        elif choice == "r":
            result = review.reject(conn, draft["id"])
        else:
            result = review.skip(draft["id"])
        _say(result)
        if result.action == "refreshed" and result.new_draft_id:
            fresh = review.get_draft(conn, result.new_draft_id)
            if fresh:
                queue.insert(0, fresh)


def _say(result: Any) -> None:
    tail = f"; exported to {result.export_path}" if result.export_path else ""
    console.print(result.message + tail, highlight=False, soft_wrap=True)


def _embedder(settings: Settings) -> Any:
    from rolling_graph.reconcile import embeddings

    return embeddings.get_embedder(settings)


def review_cmd(
    project: Annotated[Path | None, typer.Option("--project", help="Only this project (a directory inside it).")] = None,
    approve: Annotated[int | None, typer.Option("--approve", help="Approve draft ID.")] = None,
    reject: Annotated[int | None, typer.Option("--reject", help="Reject draft ID (not proposed again unless the node changes).")] = None,
    edit: Annotated[int | None, typer.Option("--edit", help="Approve draft ID with --text as its wording.")] = None,
    text: Annotated[str | None, typer.Option("--text", help="The memory text for --edit.")] = None,
    all_approve: Annotated[bool, typer.Option("--all-approve", help="Approve every pending draft (stale ones are refreshed, not approved).")] = False,
    list_: Annotated[bool, typer.Option("--list", help="List pending drafts and archive reviews.")] = False,
    reason: Annotated[str | None, typer.Option("--reason", help="Why, for --reject.")] = None,
    keep_anchor: Annotated[int | None, typer.Option("--keep-anchor", help="Archive review ID: keep the anchor (its floor clock restarts).")] = None,
    archive: Annotated[int | None, typer.Option("--archive", help="Archive review ID: archive the anchor (it stops being an anchor).")] = None,
) -> None:
    """Review drafted flat memories: interactive with no flags, or scripted."""
    from rolling_graph.reconcile import draft_backends, graduation, review

    if edit is not None and not text:
        _fail("--edit ID needs --text 'the memory as it should read'")
    settings, gs = _settings()
    with _connect(settings) as conn:
        pids = graduation.project_ids(conn, _root(project))
        for review_id, keep in ((keep_anchor, True), (archive, False)):
            if review_id is not None:
                if not review.decide_archive(conn, review_id, keep=keep):
                    _fail(f"no pending archive review {review_id} (see `rgraph review --list`)")
                console.print(f"archive review {review_id}: {'anchor kept' if keep else 'anchor archived'}")
        if keep_anchor is not None or archive is not None:
            return
        if list_:
            _print_pending(conn, pids)
            return
        only_reject = reject is not None and approve is None and edit is None and not all_approve
        drafter = None if only_reject else draft_backends.choose_drafter(settings)[0]
        embedder = None if only_reject else _embedder(settings)  # chosen once: "auto" asks Ollama over HTTP
        results: list[review.ReviewResult] = []
        if approve is not None:
            results.append(review.approve(conn, settings, approve, drafter=drafter, embedder=embedder, gs=gs))
        if edit is not None:
            results.append(review.edit(conn, settings, edit, text or "", drafter=drafter, embedder=embedder, gs=gs))
        if reject is not None:
            results.append(review.reject(conn, reject, reason=reason))
        if all_approve:
            results += [review.approve(conn, settings, d["id"], drafter=drafter, embedder=embedder, gs=gs)
                        for d in review.pending_drafts(conn, pids)]
        if not results and not all_approve:
            _interactive(conn, settings, pids, gs, drafter, embedder)
            return
    for result in results:
        _say(result)
    ok = {"approved", "rejected"} | ({"refreshed"} if all_approve else set())
    if any(r.action not in ok for r in results):
        raise typer.Exit(1)


# -- seed -------------------------------------------------------------------------------------


def seed_cmd(
    project: Annotated[Path | None, typer.Option("--project", help="The project to seed (default: the current directory's).")] = None,
    from_: Annotated[list[Path] | None, typer.Option("--from", help="A markdown file of notes or a CLAUDE.md (repeatable).")] = None,
    approved: Annotated[bool, typer.Option("--approved", help="Seed approved flat memories (default when no --from).")] = False,
) -> None:
    """Import flat memories as anchor nodes of the warm graph (idempotent)."""
    from rolling_graph.project import project_root
    from rolling_graph.reconcile import graduation, seed
    from rolling_graph.reconcile.reconcile import ensure_project

    from_ = list(from_ or [])
    for path in from_:
        if not path.is_file():
            _fail(f"{path}: no such file")
    settings, gs = _settings()
    approved = approved or not from_
    now = utcnow()
    with _connect(settings) as conn:
        if from_ or project is not None:
            root = project_root(str(project) if project is not None else None)
            with conn.transaction():
                pids = [ensure_project(conn, root)]
        else:
            pids = graduation.project_ids(conn, None)
        total = 0
        for pid in pids:
            total += seed.seed_project(conn, settings, pid, now, gs, approved=approved, files=list(from_)).seeded
    console.print(f"seed: {total} anchor nodes in {len(pids)} project(s)", highlight=False)


def register(app: typer.Typer) -> None:
    app.command("graduate")(graduate_cmd)
    app.command("review")(review_cmd)
    app.command("seed")(seed_cmd)
