"""The interactive ``rgraph review``: one draft at a time, with where it stands ("3 of 15"),
what it was drafted from, and on quit a summary and the ``@import`` line for ``CLAUDE.md``.

The decisions themselves (approve, edit, reject, skip, refresh) are :mod:`rolling_graph.graduation.review`'s;
this module only asks and shows.
"""

from __future__ import annotations

import os
import shlex
import subprocess
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import typer
from rich.console import Console
from rich.panel import Panel
from rich.table import Table

from rolling_graph.core.config import Settings
from rolling_graph.graduation import drafts, review

if TYPE_CHECKING:
    from rolling_graph.warm.db import Connection

EDITOR_HELP = "# Edit the memory above. Lines starting with '#' are ignored; an empty text skips the draft.\n"
CHOICES = "[a]pprove / [e]dit / [r]eject / [s]kip / [q]uit / [?] help"
#: What each answer does, printed for ``?`` (or anything that is not a choice) instead of guessing.
CHOICE_HELP = (
    "a  approve: the draft becomes a flat memory (exported to the import file) and an anchor\n"
    "e  edit: open $EDITOR on the draft, then approve what you saved (an empty text skips it)\n"
    "r  reject: the concept is not drafted again\n"
    "s  skip (Enter): leave the draft pending for a later review\n"
    "q  quit: stop here; what you skipped or did not see stays pending"
)
VALID_CHOICES = frozenset("aersq")


def read_choice(console: Console, ask: Callable[[], str]) -> str:
    """One of ``a e r s q``: ``?``, ``help`` or an answer that is no choice prints what each does
    and asks again (never taken as a skip)."""
    while True:
        answer = ask().strip().lower()
        if answer[:1] in VALID_CHOICES:
            return answer[:1]
        if answer not in ("?", "h", "help"):
            console.print(f"{answer!r} is not a choice.", highlight=False, markup=False)
        console.print(CHOICE_HELP, highlight=False, markup=False)


@dataclass
class Tally:
    """What one interactive review did, for the summary on quit."""

    total: int
    shown: int = 0
    approved: int = 0
    edited: int = 0
    rejected: int = 0
    skipped: int = 0

    def count(self, result: review.ReviewResult, *, edited: bool) -> None:
        if result.action == "approved":
            if edited:
                self.edited += 1
            else:
                self.approved += 1
        elif result.action == "rejected":
            self.rejected += 1
        elif result.action == "skipped":
            self.skipped += 1

    def line(self, still_pending: int) -> str:
        return (f"Reviewed {self.shown} of {self.total}: {self.approved} approved, {self.edited} edited, "
                f"{self.rejected} rejected, {self.skipped} skipped; {still_pending} still pending.")


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


def show_draft(console: Console, conn: Connection, settings: Settings, draft: dict[str, Any], gs: Any, where: str = "") -> None:
    """The draft as it would read in flat memory, its provenance and the node's neighbourhood."""
    ctx = drafts.load_context(conn, settings, draft["project_id"], draft["node_id"], gs)
    title = " · ".join(p for p in (where, draft["kind"], f"draft {draft['id']}") if p)
    detail = f"node {draft['node_id']}" + (f", weight {ctx.weight:.2f}, in {ctx.session_count} sessions" if ctx else "")
    console.print(Panel(draft["content"], title=title, subtitle=f"drafted by {draft['backend']}", expand=False))
    console.print(f"[dim]{detail}[/dim]", highlight=False)
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


def say(console: Console, result: review.ReviewResult) -> None:
    tail = f"; exported to {result.export_path}" if result.export_path else ""
    console.print(result.message + tail, highlight=False, soft_wrap=True)


def print_imports(console: Console, conn: Connection, settings: Settings, pids: list[int]) -> None:
    """The ``@import`` line each reviewed project's ``CLAUDE.md`` needs to load its memories."""
    rows = conn.execute("SELECT root FROM projects WHERE id = ANY(%s) ORDER BY id", (pids,)).fetchall()
    for (root,) in rows:
        hint = review.import_hint(settings, root)
        if hint:
            console.print(hint, highlight=False, soft_wrap=True, markup=False)


def _decide(console: Console, err: Console, conn: Connection, settings: Settings, draft: dict[str, Any], choice: str, gs: Any,
            drafter: Any, embedder: Any) -> tuple[review.ReviewResult | None, bool]:
    """One decision on ``draft``; ``(result, edited)`` — no result when the editor failed."""
    if choice == "a":
        return review.approve(conn, settings, draft["id"], drafter=drafter, embedder=embedder, gs=gs), False
    if choice == "e":
        try:
            text = open_editor(draft["content"])
        except OSError as exc:
            err.print(f"[red]cannot start the editor[/red] ({exc}); set $EDITOR — draft {draft['id']} left pending")
            return None, False
        if not text:
            return review.skip(draft["id"]), False
        result = review.edit(conn, settings, draft["id"], text, drafter=drafter, embedder=embedder, gs=gs)
        return result, " ".join(text.split()) != " ".join(str(draft["content"]).split())
    if choice == "r":
        return review.reject(conn, draft["id"], by=review.reviewer(settings), now=settings.clock.now()), False
    return review.skip(draft["id"]), False


def interactive(console: Console, err: Console, conn: Connection, settings: Settings, pids: list[int], gs: Any, drafter: Any,
                embedder: Any) -> Tally | None:
    """Review the pending drafts one by one; the tally (None when nothing was waiting)."""
    queue = review.pending_drafts(conn, pids)
    if not queue:
        console.print("No drafts are waiting for review. Run `rgraph graduate` to look for candidates.")
        return None
    tally = Tally(total=len(queue))
    while queue:
        draft = queue.pop(0)
        if review.is_stale(conn, draft):
            with conn.transaction():
                record = review.refresh(conn, settings, draft, drafter, embedder, gs)
            console.print(f"[yellow]node {draft['node_id']!r} changed after draft {draft['id']} was made; refreshed it[/yellow]")
            if record is None or record.id is None or record.status != "pending":
                tally.total -= 1
                continue
            draft = review.get_draft(conn, record.id) or draft
        tally.shown += 1
        show_draft(console, conn, settings, draft, gs, where=f"{tally.shown} of {tally.total}")
        choice = read_choice(console, lambda: str(typer.prompt(CHOICES, default="s")))
        if choice == "q":
            tally.shown -= 1
            break
        result, edited = _decide(console, err, conn, settings, draft, choice, gs, drafter, embedder)
        if result is None:
            continue
        tally.count(result, edited=edited)
        say(console, result)
        if result.action == "refreshed" and result.new_draft_id:
            fresh = review.get_draft(conn, result.new_draft_id)
            if fresh:
                tally.shown -= 1  # the same concept again, in its new wording
                queue.insert(0, fresh)
    console.print(tally.line(len(review.pending_drafts(conn, pids))), highlight=False)
    print_imports(console, conn, settings, pids)
    return tally
