"""``rgraph show``, ``rgraph why``, ``rgraph expand`` and ``rgraph slash`` (the ``/rolling-graph:graph`` command).

Thin shell: resolve the session, load the document and journal (:mod:`rolling_graph.cli.sessions`),
hand them to the pure renderers (:mod:`rolling_graph.cli.render_views`, :mod:`rolling_graph.cli.render_formats`), print.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from rich.console import Console

from rolling_graph.cli.console import console, fail
from rolling_graph.cli.render_formats import to_dot, to_json, to_mermaid
from rolling_graph.cli.render_views import (
    entry_touches,
    exact_node,
    provenance,
    render_branch,
    render_provenance,
    render_text,
    select,
    subdocument,
    suggestions,
)
from rolling_graph.cli.sessions import (
    InspectError,
    ResolvedSession,
    check_project_dir,
    load_document,
    load_journal,
    resolve_session,
    settings_or_error,
    store,
)
from rolling_graph.cli.stats import do_stats
from rolling_graph.cli.view import do_view
from rolling_graph.core.config import Settings
from rolling_graph.core.normalize import normalize_graph
from rolling_graph.store.forget import AmbiguousName
from rolling_graph.store.project import project_root
from rolling_graph.store.shape import damage_notes
from rolling_graph.warm import snapshot

if TYPE_CHECKING:
    from rolling_graph.core.types import GraphDoc, SessionDoc, Snapshot


class Format(StrEnum):
    text = "text"
    json = "json"
    mermaid = "mermaid"
    dot = "dot"


SESSION_HELP = "Session id (default: the project's most recently active session, else the latest)."
SLASH_SUBCOMMANDS = ("show", "expand", "why", "stats", "view")


def _origin(res: ResolvedSession) -> str:
    how = {"explicit": "", "project": " (this project's latest session)", "latest": " (latest session, any project)"}[
        res.how
    ]
    return f"{res.note + '; ' if res.note else ''}session {res.session_id}{how}"


def _capitalized(text: str) -> str:
    return text[:1].upper() + text[1:]


def unknown_node(doc: GraphDoc, name: str) -> InspectError:
    near = suggestions(doc, name)
    hint = f"; did you mean {', '.join(near)}?" if near else "; `rgraph show` lists the nodes"
    return InspectError(f"no domain or node named {name!r} in the graph{hint}")


def snapshot_document(snap: Snapshot) -> GraphDoc:
    """A resume snapshot (lists of nodes and edges) shaped like a sidecar document, and
    normalised like one (:func:`rolling_graph.core.normalize.normalize_graph`)."""
    nodes = {str(n["id"]): n for n in snap.get("nodes") or [] if isinstance(n, dict) and n.get("id")}
    edges = {
        f"{e.get('source')}|{e.get('relationship')}|{e.get('target')}": e
        for e in snap.get("edges") or []
        if isinstance(e, dict) and e.get("source") in nodes and e.get("target") in nodes
    }
    doc = {"session_id": "warm", "project": snap.get("project"), "updated_at": snap.get("updated_at"), "nodes": nodes, "edges": edges}
    return normalize_graph(doc, "warm")


def warm_document(settings: Settings, cwd: str | None = None) -> tuple[GraphDoc, str]:
    """The project's warm graph shaped like a sidecar document, and a title saying its source.

    From the database (:func:`rolling_graph.warm.read.warm_document`); while the
    database cannot be reached, from the project's resume snapshot, which every
    reconciliation writes (the warm graph's top branches).
    """
    from rolling_graph.warm import db, read  # the database driver loads only for --warm

    root = project_root(cwd or os.getcwd())
    try:
        return read.warm_document(settings, root), f"Warm graph · {root}"
    except LookupError as exc:
        raise InspectError(str(exc)) from exc
    except db.DatabaseUnavailable as exc:
        snap = snapshot.read_snapshot(settings.home_dir, root)
        if snap is None:
            raise InspectError(f"{exc}; and {root} has no resume snapshot yet") from exc
    except Exception as exc:  # the database is an edge: report it in one line
        raise InspectError(f"cannot read the warm graph: {exc}") from exc
    doc = snapshot_document(snap)
    return doc, f"Warm graph · {root} (database unavailable; resume snapshot: its top {len(doc['nodes'])} nodes)"


def do_show(
    settings: Settings,
    session: str | None,
    target: str | None,
    fmt: Format = Format.text,
    *,
    warm: bool = False,
    project: str | None = None,
    out: Console | None = None,
    fallback_when_missing: bool = False,
) -> None:
    """``project``: the project directory meant (default: the current directory's) — for the
    warm graph, and for choosing the session when none is named."""
    out = out or console()
    doc: GraphDoc
    if warm:
        if project is not None:
            check_project_dir(project)
        doc, title = warm_document(settings, project)
    else:
        res = resolve_session(settings, session, project=project, fallback_when_missing=fallback_when_missing)
        doc, title = load_document(settings, res.session_id), _capitalized(_origin(res))
        # What a repair of damaged session files could not restore: a warning, so on stderr (it
        # never lands in `rgraph show > file` or in a --format json document).
        for note in damage_notes(doc):
            sys.stderr.write(f"rgraph: {note}\n")
    sel = select(doc, target)
    if sel is None:
        raise unknown_node(doc, str(target))
    if fmt is Format.text:
        out.print(render_text(doc, sel, title=title))
        return
    sub = subdocument(doc, sel)
    renderer: Callable[[GraphDoc], str] = {Format.json: to_json, Format.mermaid: to_mermaid, Format.dot: to_dot}[
        fmt
    ]
    out.file.write(renderer(sub))


def _resolve_with_node(
    settings: Settings, session: str | None, node: str, fallback_when_missing: bool
) -> tuple[ResolvedSession, SessionDoc, str]:
    res = resolve_session(settings, session, fallback_when_missing=fallback_when_missing)
    doc = load_document(settings, res.session_id)
    nid = exact_node(doc, node)  # exact: an expansion may count as an activation
    if nid is None:
        raise unknown_node(doc, node)
    return res, doc, nid


def do_why(
    settings: Settings,
    session: str | None,
    node: str,
    *,
    out: Console | None = None,
    fallback_when_missing: bool = False,
) -> None:
    out = out or console()
    res = resolve_session(settings, session, fallback_when_missing=fallback_when_missing)
    doc = load_document(settings, res.session_id)
    journal = load_journal(settings, res.session_id)
    nid = exact_node(doc, node)
    if nid is None and any(e.get("kind") == "forget" and entry_touches(e, node) for e in journal):
        nid = node  # a node the user forgot (rgraph forget): in the journal, not the graph
    if nid is None:
        raise unknown_node(doc, node)
    out.print(f"[dim]{_origin(res)}[/]")
    out.print(render_provenance(doc, nid, provenance(journal, nid)))


def do_expand(
    settings: Settings,
    session: str | None,
    node: str,
    *,
    activate: bool = False,
    out: Console | None = None,
    fallback_when_missing: bool = False,
) -> None:
    """Print a node's branch. With ``activate`` (the /rolling-graph:graph command: the conversation asked
    for it, which the spec counts as a signal) the expansion is an activation: weight up,
    journaled. Without, it only reads."""
    out = out or console()
    res, doc, nid = _resolve_with_node(settings, session, node, fallback_when_missing)
    before = doc["nodes"][nid]["weight"]
    if activate:
        store(settings).activate(res.session_id, [nid], rationale="expanded by user")
        doc = load_document(settings, res.session_id)
        after = doc["nodes"][nid]["weight"] if nid in doc["nodes"] else 0.0
        note = f"[green]expanded: counted as an activation (weight {before:.2f} → {after:.2f}, journaled)[/]"
    else:
        note = f"[dim]read only: weight {before:.2f} unchanged (--activate counts an expansion as an activation)[/]"
    out.print(f"[dim]{_origin(res)}[/]")
    out.print(render_branch(doc, nid))
    out.print(note)


def _run(action: Callable[[], None]) -> None:
    try:
        action()
    except InspectError as exc:
        raise fail(str(exc)) from None


def slash_dispatch(
    settings: Settings, session: str | None, args: list[str], out: Console, *, activate: bool = False
) -> None:
    """``/rolling-graph:graph [show|expand|why|stats|view] ...`` as typed in Claude Code; ``activate``: an
    ``expand`` counts as an activation (plugin/commands/graph.md passes it)."""
    words = [w for a in args for w in a.split()]  # Claude Code may pass "$ARGUMENTS" as one word
    if not words or words[0] not in SLASH_SUBCOMMANDS:
        words = ["show", *words]
    sub, rest = words[0], words[1:]
    flags = {w for w in rest if w.startswith("--")}
    plain = [w for w in rest if not w.startswith("--")]
    fmt = next((Format(f[9:]) for f in flags if f.startswith("--format=") and f[9:] in Format.__members__), Format.text)
    if sub == "show":
        do_show(
            settings,
            session,
            " ".join(plain) or None,
            fmt,
            warm="--warm" in flags,
            out=out,
            fallback_when_missing=True,
        )
    elif sub in ("expand", "why"):
        if not plain:
            raise InspectError(f"usage: /rolling-graph:graph {sub} NODE (a node id or label from /rolling-graph:graph show)")
        if sub == "expand":
            do_expand(settings, session, " ".join(plain), activate=activate, out=out, fallback_when_missing=True)
        else:
            do_why(settings, session, " ".join(plain), out=out, fallback_when_missing=True)
    elif sub == "stats":
        do_stats(
            settings,
            session,
            all_sessions="--all" in flags,
            as_json="--json" in flags,
            out=out,
            fallback_when_missing=True,
        )
    else:
        do_view(settings, session, None, open_browser=False, out=out, fallback_when_missing=True)


def register(app: typer.Typer) -> None:
    """Add ``show``, ``why``, ``expand`` and ``slash`` to the ``rgraph`` app."""

    @app.command("show")
    def show_cmd(
        target: Annotated[
            str | None, typer.Argument(metavar="[DOMAIN|NODE]", help="A domain, or a node id/label to show its branch.")
        ] = None,
        session: Annotated[str | None, typer.Option("--session", "-s", help=SESSION_HELP)] = None,
        warm: Annotated[
            bool, typer.Option("--warm", help="Show the project's warm graph (PostgreSQL) instead.")
        ] = False,
        project: Annotated[Path | None, typer.Option(
            "--project", "-p", help="The project directory meant (default: the current directory's project): "
            "whose warm graph --warm shows, and whose latest session is shown when no --session is given.")] = None,
        fmt: Annotated[
            Format, typer.Option("--format", "-f", help="text (terminal), json, mermaid or dot.")
        ] = Format.text,
    ) -> None:
        """Show a session's graph: domains, focus, weights as bars, edges with their verbs."""
        where = str(project) if project is not None else None
        _run(lambda: do_show(settings_or_error(), session, target, fmt, warm=warm, project=where))

    @app.command("why")
    def why_cmd(
        node: Annotated[str, typer.Argument(help="Node id or label.")],
        session: Annotated[str | None, typer.Option("--session", "-s", help=SESSION_HELP)] = None,
    ) -> None:
        """Where a node came from: the journal's events, probe backend, rationale and time."""
        _run(lambda: do_why(settings_or_error(), session, node))

    @app.command("expand")
    def expand_cmd(
        node: Annotated[str, typer.Argument(help="Node id or label.")],
        session: Annotated[str | None, typer.Option("--session", "-s", help=SESSION_HELP)] = None,
        activate: Annotated[bool, typer.Option(
            "--activate", help="Count this expansion as an activation: the node's weight goes up, journaled "
            "(what /rolling-graph:graph expand does; without it, expand only reads).")] = False,
    ) -> None:
        """Print a node's branch in full; read only unless --activate."""
        _run(lambda: do_expand(settings_or_error(), session, node, activate=activate))

    @app.command(
        "slash",
        context_settings={"ignore_unknown_options": True, "allow_extra_args": True},
    )
    def slash_cmd(
        args: Annotated[
            list[str] | None,
            typer.Argument(help="What followed /rolling-graph:graph: show|expand|why|stats|view and their arguments."),
        ] = None,
        session: Annotated[
            str | None, typer.Option("--session", help="Claude Code's session id (may be empty).")
        ] = None,
        activate: Annotated[bool, typer.Option(
            "--activate", help="Let `expand` count as an activation (the /rolling-graph:graph command passes it: the "
            "conversation asked for the node).")] = False,
    ) -> None:
        """Entry point of the /rolling-graph:graph slash command in Claude Code.

        Problems are printed on stdout with exit 0: Claude Code embeds this output in the
        prompt, and the user should read what is wrong rather than a failed command.
        """
        out = console()
        try:
            slash_dispatch(settings_or_error(), session, list(args or []), out, activate=activate)
        except (InspectError, AmbiguousName) as exc:
            out.print(f"rgraph: {exc}", markup=False)
