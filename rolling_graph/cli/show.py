"""``rgraph show``, ``rgraph why``, ``rgraph expand`` and ``rgraph slash`` (the ``/graph`` command).

Thin shell: resolve the session, load the document and journal (:mod:`rolling_graph.cli.sessions`),
hand them to the pure renderers (:mod:`rolling_graph.cli.render_views`, :mod:`rolling_graph.cli.render_formats`), print.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from enum import StrEnum
from typing import Annotated, Any

import typer
from rich.console import Console

from rolling_graph.cli.render_formats import to_dot, to_json, to_mermaid
from rolling_graph.cli.render_views import (
    provenance,
    render_branch,
    render_provenance,
    render_text,
    resolve_node,
    select,
    subdocument,
    suggestions,
)
from rolling_graph.cli.sessions import (
    InspectError,
    ResolvedSession,
    load_document,
    load_journal,
    resolve_session,
    settings_or_error,
)
from rolling_graph.config import Settings
from rolling_graph.project import project_root


class Format(StrEnum):
    text = "text"
    json = "json"
    mermaid = "mermaid"
    dot = "dot"


SESSION_HELP = "Session id (default: the project's most recently active session, else the latest)."
SLASH_SUBCOMMANDS = ("show", "expand", "why", "stats", "view")


def console() -> Console:
    """Rich output; when piped (or embedded by Claude Code) long lines are not hard-wrapped."""
    tty = sys.stdout.isatty()
    width = int(os.environ.get("COLUMNS", "0") or 0) or (None if tty else 160)
    return Console(width=width, highlight=False, soft_wrap=not tty)


def fail(message: str) -> typer.Exit:
    Console(stderr=True, highlight=False).print(f"[bold red]rgraph:[/] {message}", markup=True, soft_wrap=True)
    return typer.Exit(code=1)


def _origin(res: ResolvedSession) -> str:
    how = {"explicit": "", "project": " (this project's latest session)", "latest": " (latest session, any project)"}[
        res.how
    ]
    return f"{res.note + '; ' if res.note else ''}session {res.session_id}{how}"


def _capitalized(text: str) -> str:
    return text[:1].upper() + text[1:]


def unknown_node(doc: dict[str, Any], name: str) -> InspectError:
    near = suggestions(doc, name)
    hint = f"; did you mean {', '.join(near)}?" if near else "; `rgraph show` lists the nodes"
    return InspectError(f"no domain or node named {name!r} in the graph{hint}")


def snapshot_document(snapshot: dict[str, Any]) -> dict[str, Any]:
    """A resume snapshot (lists of nodes and edges) shaped like a sidecar document."""
    nodes = {str(n["id"]): n for n in snapshot.get("nodes") or [] if isinstance(n, dict) and n.get("id")}
    edges = {
        f"{e.get('source')}|{e.get('relationship')}|{e.get('target')}": e
        for e in snapshot.get("edges") or []
        if isinstance(e, dict) and e.get("source") in nodes and e.get("target") in nodes
    }
    return {
        "session_id": "warm",
        "project": snapshot.get("project"),
        "updated_at": snapshot.get("updated_at"),
        "nodes": nodes,
        "edges": edges,
        "focus": [],
    }


def warm_document(settings: Settings, cwd: str | None = None) -> tuple[dict[str, Any], str]:
    """The project's warm graph shaped like a sidecar document, and a title saying its source.

    Prefers ``rolling_graph.reconcile.read.warm_document`` (the database); without it, the per-project
    resume snapshot that every reconciliation writes (the warm graph's top branches).
    """
    root = project_root(cwd or os.getcwd())
    try:
        from rolling_graph.reconcile.read import warm_document as read_warm
    except ImportError:
        read_warm = None
    if read_warm is not None:
        try:
            return dict(read_warm(settings, root)), f"Warm graph · {root}"
        except Exception as exc:  # the database is an edge: report it in one line
            raise InspectError(f"cannot read the warm graph: {exc}") from exc
    try:
        from rolling_graph.reconcile.snapshot import read_snapshot
    except ImportError:
        read_snapshot = None
    snapshot = read_snapshot(settings.home, root) if read_snapshot is not None else None
    if snapshot is None:
        raise InspectError(
            f"the warm graph reader (rolling_graph.reconcile.read.warm_document) is not available in this install and {root} has no resume snapshot yet"
        )
    doc = snapshot_document(snapshot)
    return doc, f"Warm graph · {root} (resume snapshot: its top {len(doc['nodes'])} nodes)"


def do_show(
    settings: Settings,
    session: str | None,
    target: str | None,
    fmt: Format = Format.text,
    *,
    warm: bool = False,
    out: Console | None = None,
    fallback_when_missing: bool = False,
) -> None:
    out = out or console()
    if warm:
        doc, title = warm_document(settings)
    else:
        res = resolve_session(settings, session, fallback_when_missing=fallback_when_missing)
        doc, title = load_document(settings, res.session_id), _capitalized(_origin(res))
    sel = select(doc, target)
    if sel is None:
        raise unknown_node(doc, str(target))
    if fmt is Format.text:
        out.print(render_text(doc, sel, title=title))
        return
    sub = subdocument(doc, sel)
    renderer: Callable[[dict[str, Any]], str] = {Format.json: to_json, Format.mermaid: to_mermaid, Format.dot: to_dot}[
        fmt
    ]
    out.file.write(renderer(sub))


def _resolve_with_node(
    settings: Settings, session: str | None, node: str, fallback_when_missing: bool
) -> tuple[ResolvedSession, dict[str, Any], str]:
    res = resolve_session(settings, session, fallback_when_missing=fallback_when_missing)
    doc = load_document(settings, res.session_id)
    nid = resolve_node(doc, node)
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
    res, doc, nid = _resolve_with_node(settings, session, node, fallback_when_missing)
    rows = provenance(load_journal(settings, res.session_id), nid)
    out.print(f"[dim]{_origin(res)}[/]")
    out.print(render_provenance(doc, nid, rows))


def do_expand(
    settings: Settings,
    session: str | None,
    node: str,
    *,
    out: Console | None = None,
    fallback_when_missing: bool = False,
) -> None:
    out = out or console()
    res, doc, nid = _resolve_with_node(settings, session, node, fallback_when_missing)
    before = float(doc.get("nodes", {}).get(nid, {}).get("weight", 0.0) or 0.0)
    from rolling_graph.sidecar import SidecarStore

    # The spec's escape hatch: an expansion counts as an activation (weight up, journaled).
    SidecarStore(settings).activate(res.session_id, [nid], rationale="expanded by user")
    doc = load_document(settings, res.session_id)
    after = float(doc.get("nodes", {}).get(nid, {}).get("weight", 0.0) or 0.0)
    note = f"[green]expanded: counted as an activation (weight {before:.2f} → {after:.2f}, journaled)[/]"
    out.print(f"[dim]{_origin(res)}[/]")
    out.print(render_branch(doc, nid))
    out.print(note)


def _run(action: Callable[[], None]) -> None:
    try:
        action()
    except InspectError as exc:
        raise fail(str(exc)) from None


def slash_dispatch(settings: Settings, session: str | None, args: list[str], out: Console) -> None:
    """``/graph [show|expand|why|stats|view] ...`` as typed in Claude Code."""
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
            raise InspectError(f"usage: /graph {sub} NODE (a node id or label from /graph show)")
        runner = do_expand if sub == "expand" else do_why
        runner(settings, session, " ".join(plain), out=out, fallback_when_missing=True)
    elif sub == "stats":
        from rolling_graph.cli.stats import do_stats

        do_stats(
            settings,
            session,
            all_sessions="--all" in flags,
            as_json="--json" in flags,
            out=out,
            fallback_when_missing=True,
        )
    else:
        from rolling_graph.cli.view import do_view

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
        fmt: Annotated[
            Format, typer.Option("--format", "-f", help="text (terminal), json, mermaid or dot.")
        ] = Format.text,
    ) -> None:
        """Show a session's graph: domains, focus, weights as bars, edges with their verbs."""
        _run(lambda: do_show(settings_or_error(), session, target, fmt, warm=warm))

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
    ) -> None:
        """Print a node's branch in full; counts as an activation (weight up, journaled)."""
        _run(lambda: do_expand(settings_or_error(), session, node))

    @app.command(
        "slash",
        context_settings={"ignore_unknown_options": True, "allow_extra_args": True},
    )
    def slash_cmd(
        args: Annotated[
            list[str] | None,
            typer.Argument(help="What followed /graph: show|expand|why|stats|view and their arguments."),
        ] = None,
        session: Annotated[
            str | None, typer.Option("--session", help="Claude Code's session id (may be empty).")
        ] = None,
    ) -> None:
        """Entry point of the /graph slash command in Claude Code.

        Problems are printed on stdout with exit 0: Claude Code embeds this output in the
        prompt, and the user should read what is wrong rather than a failed command.
        """
        out = console()
        try:
            slash_dispatch(settings_or_error(), session, list(args or []), out)
        except InspectError as exc:
            out.print(f"rgraph: {exc}", markup=False)
