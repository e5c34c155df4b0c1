"""``rgraph forget``: remove what the memory should not hold, from the session's hot graph
and the project's warm graph, journaled and for good.

A wrong decision the extractor read into Claude's text, a file that does not matter: once
forgotten, a node leaves the session's graph (with its edges; the journal records who and
when, so ``rgraph why`` still tells it) and the project's warm graph, so no later block
shows it. Reconciling a sidecar that still holds it does not bring it back; only new work
on the same name does (:mod:`rolling_graph.reconcile.forget`).
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from rich.console import Console
from rich.markup import escape

from rolling_graph.cli.console import console, fail
from rolling_graph.cli.render_views import exact_node, suggestions
from rolling_graph.cli.sessions import InspectError, load_document, resolve_session, settings_or_error, store
from rolling_graph.config import Settings
from rolling_graph.project import project_root

if TYPE_CHECKING:
    from rolling_graph.types import GraphDoc

SESSION_HELP = "Session id (default: the current directory's project's latest session)."


def do_forget(
    settings: Settings, session: str | None, names: list[str], *, project: str | None = None,
    hot_only: bool = False, yes: bool = False, out: Console | None = None,
) -> None:
    out = out or console()
    warm = settings.warm and not hot_only
    try:
        res = resolve_session(settings, session, cwd=project)
    except InspectError:
        if session or not warm:
            raise
        res = None  # no session here: the warm graph alone
    if res is not None and res.how == "latest":  # another project's session: not what was meant
        if not warm:
            raise InspectError(f"no session of {project_root(project or str(Path.cwd()))}; name one with --session")
        res = None
    doc = load_document(settings, res.session_id) if res is not None else None
    root = project_root(project) if project else (doc.get("project") if doc else None) or project_root(str(Path.cwd()))
    found: dict[str, str] = {}  # hot node id -> label; never a fragment: forgetting is for good
    hot_names: set[str] = set()
    for name in names:
        nid = exact_node(doc, name) if doc is not None else None
        if doc is not None and nid is not None:
            found[nid] = doc["nodes"][nid]["label"]
            hot_names.add(name)
    places = [f"session {res.session_id}"] if res is not None else []
    places += [f"the warm graph of {root}"] if warm else []
    if not found and not warm:
        raise _not_found(names, places, doc)
    if not yes:
        if not interactive():
            raise InspectError("rgraph forget removes nodes for good: add --yes to confirm")
        what = ", ".join(f"{label} ({nid})" for nid, label in found.items()) if found else ", ".join(names)
        if not typer.confirm(f"Forget {what} from {' and '.join(places)}?", default=False):
            out.print("Nothing forgotten.")
            return
    hot_gone = store(settings).forget(res.session_id, list(found), rationale="forgotten by user (rgraph forget)") if found and res else []
    if hot_gone:
        out.print(f"Forgot in session {res.session_id if res else ''}: {escape(', '.join(f'{found[n]} ({n})' for n in hot_gone))} "
                  "(journaled; `rgraph why ID` tells it).")
    warm_gone = _forget_warm(settings, root, [*found, *names], out) if warm else []
    if not hot_gone and not warm_gone:
        raise _not_found(names, places, doc)
    if warm and not warm_gone:
        out.print(f"[dim]The warm graph of {escape(root)} held none of them.[/]")
    left = [n for n in names if n not in hot_names and not any(n == nid or n.lower() == label.lower() for nid, label in warm_gone)]
    if left:
        out.print(f"[yellow]Not found (or a label more than one node has: give the id): {escape(', '.join(left))}[/]")


def _not_found(names: list[str], places: list[str], doc: GraphDoc | None) -> InspectError:
    near = suggestions(doc, names[0]) if doc is not None else []
    hint = f"; did you mean {', '.join(near)}?" if near else "; `rgraph show` lists the nodes"
    return InspectError(f"no node named {names[0]!r} in {' nor in '.join(places)}{hint}")


def interactive() -> bool:
    """Whether a person can answer the confirmation (standard input is a terminal)."""
    return sys.stdin.isatty()


def _forget_warm(settings: Settings, root: str, names: list[str], out: Console) -> list[tuple[str, str]]:
    from rolling_graph.reconcile import db
    from rolling_graph.reconcile.forget import forget_nodes

    try:
        with db.connect(settings) as conn:
            gone = forget_nodes(conn, settings, root, names)
    except db.DatabaseUnavailable as exc:
        raise InspectError(f"the warm graph of {root} was not changed: {exc}; run this again once it can be reached") from exc
    if gone:
        out.print(f"Forgot in the warm graph of {escape(root)}: {escape(', '.join(f'{label} ({nid})' for nid, label, _ in gone))}; "
                  "its resume snapshot is rewritten.")
    for _, label, anchor in gone:
        if anchor:
            out.print(f"[yellow]{escape(label)} came from flat memory: delete its line in the memory file too, "
                      "or `rgraph seed` brings it back.[/]")
    return [(nid, label) for nid, label, _ in gone]


def register(app: typer.Typer) -> None:
    """Add ``forget`` to the ``rgraph`` app."""

    @app.command("forget")
    def forget_cmd(
        nodes: Annotated[list[str], typer.Argument(metavar="NODE", help="Node ids or labels (as `rgraph show` prints them).")],
        session: Annotated[str | None, typer.Option("--session", "-s", help=SESSION_HELP)] = None,
        project: Annotated[Path | None, typer.Option(
            "--project", "-p", help="The project directory meant (default: the session's, else the current directory's).")] = None,
        hot_only: Annotated[bool, typer.Option(
            "--hot-only", help="Only the session's hot graph: leave the project's warm graph as it is.")] = False,
        yes: Annotated[bool, typer.Option("--yes", "-y", help="Do not ask for confirmation.")] = False,
    ) -> None:
        """Remove nodes from the session's graph and the project's warm graph, for good.

        A node goes with its edges, and the session's journal records it (`rgraph why ID`). In the warm graph it is deleted and remembered as forgotten: reconciling a session that still holds it does not bring it back; only new work on the same name does.
        """
        try:
            do_forget(settings_or_error(), session, nodes, project=str(project) if project else None, hot_only=hot_only, yes=yes)
        except InspectError as exc:
            raise fail(str(exc)) from None
