"""``rgraph graduate | review | seed``: graduation into flat memory, the one-way door.

``register(app)`` adds the commands to the lead's typer app. Errors print one actionable
line and exit 1. ``graduate --nightly`` prints exactly one summary line (cron mails it).
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich.table import Table

from rolling_graph.cli.warm import console, err
from rolling_graph.core.config import Settings, load_settings
from rolling_graph.core.errors import UserError
from rolling_graph.store.project import project_root
from rolling_graph.warm import embeddings

if TYPE_CHECKING:
    from rolling_graph.warm.db import Connection


def _settings() -> tuple[Settings, Any]:
    settings = load_settings()  # a ConfigError reaches the CLI's one error handler
    return settings, settings.graduation


def _connect(settings: Settings) -> Any:
    from rolling_graph.warm import db

    return db.connect(settings, autocommit=True)  # DatabaseUnavailable: one line at the CLI's edge


def _root(project: Path | None) -> str | None:
    return project_root(str(project)) if project is not None else None


# -- graduate ---------------------------------------------------------------------------------


def graduate_cmd(
    nightly: Annotated[bool, typer.Option("--nightly", help="Unattended run (cron/systemd): one summary line, always a report.")] = False,
    report: Annotated[Path | None, typer.Option("--report", help="Write the markdown review report here.")] = None,
    project: Annotated[Path | None, typer.Option("--project", help="Only this project (a directory inside it).")] = None,
) -> None:
    """Find graduation candidates, draft their flat memories and queue archive reviews (idempotent)."""
    from rolling_graph.graduation import candidates as graduation
    from rolling_graph.graduation import draft_backends
    from rolling_graph.graduation import nightly as job

    settings, gs = _settings()
    drafter, _why = draft_backends.choose_drafter(settings)
    embedder = embeddings.get_embedder(settings)
    now = settings.clock.now()
    with _connect(settings) as conn:
        pids = graduation.project_ids(conn, _root(project))
        if project is not None and not pids:
            raise UserError(f"no warm graph for {_root(project)} yet: reconcile a session there first (`rgraph reconcile`)")
        summary = job.run_job(conn, settings, pids, drafter=drafter, embedder=embedder, gs=gs, now=now)
        if not summary.busy and (nightly or report is not None):
            path = report or job.default_report_path(settings, now)
            summary.report = job.write_report(path, job.render_report(conn, settings, pids, summary, now, gs))
        if not nightly and not summary.busy:
            _print_pending(conn, pids)
    console.print(summary.line(), highlight=False, soft_wrap=True)


def _print_pending(conn: Connection, pids: list[int]) -> None:
    from rolling_graph.graduation import candidates as graduation
    from rolling_graph.graduation import review

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


def _say(result: Any) -> None:
    from rolling_graph.graduation import review_prompt

    review_prompt.say(console, result)


def _embedder(settings: Settings) -> Any:
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
    from rolling_graph.graduation import candidates as graduation
    from rolling_graph.graduation import draft_backends, review

    if edit is not None and not text:
        raise UserError("--edit ID needs --text 'the memory as it should read'")
    settings, gs = _settings()
    with _connect(settings) as conn:
        pids = graduation.project_ids(conn, _root(project))
        for review_id, keep in ((keep_anchor, True), (archive, False)):
            if review_id is not None:
                if not review.decide_archive(conn, review_id, keep=keep, by=review.reviewer(settings), now=settings.clock.now()):
                    raise UserError(f"no pending archive review {review_id} (see `rgraph review --list`)")
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
            results.append(review.reject(conn, reject, reason=reason, by=review.reviewer(settings), now=settings.clock.now()))
        if all_approve:
            results += [review.approve(conn, settings, d["id"], drafter=drafter, embedder=embedder, gs=gs)
                        for d in review.pending_drafts(conn, pids)]
        if not results and not all_approve:
            from rolling_graph.graduation import review_prompt

            review_prompt.interactive(console, err, conn, settings, pids, gs, drafter, embedder)
            return
        for result in results:
            _say(result)
        if any(r.action == "approved" for r in results):
            from rolling_graph.graduation import review_prompt

            review_prompt.print_imports(console, conn, settings, pids)
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
    from rolling_graph.graduation import candidates as graduation
    from rolling_graph.graduation import seed
    from rolling_graph.warm.reconcile import ensure_project

    from_ = list(from_ or [])
    for path in from_:
        if not path.is_file():
            raise UserError(f"{path}: no such file")
    settings, gs = _settings()
    approved = approved or not from_
    now = settings.clock.now()
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
