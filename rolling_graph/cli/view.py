"""``rgraph view``: write the session's graph as a self-contained HTML page (and open it)."""

from __future__ import annotations

import webbrowser
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console

from rolling_graph.cli.console import console, fail
from rolling_graph.cli.sessions import InspectError, load_document, load_journal, resolve_session, settings_or_error
from rolling_graph.cli.view_html import DEFAULT_LIMIT, render_html
from rolling_graph.core.config import Settings
from rolling_graph.store.atomic import write_text_atomic


def default_out(settings: Settings, sid: str) -> Path:
    return settings.home / "views" / f"{sid}.html"


def write_atomic(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    write_text_atomic(path, text)


def do_view(
    settings: Settings,
    session: str | None,
    out_file: Path | None,
    *,
    open_browser: bool = False,
    limit: int = DEFAULT_LIMIT,
    out: Console | None = None,
    fallback_when_missing: bool = False,
) -> Path:
    out = out or console()
    res = resolve_session(settings, session, fallback_when_missing=fallback_when_missing)
    doc = load_document(settings, res.session_id)
    page = render_html(doc, load_journal(settings, res.session_id), limit=limit)
    target = (out_file or default_out(settings, res.session_id)).expanduser()
    try:
        write_atomic(target, page)
    except OSError as exc:
        raise InspectError(f"cannot write {target}: {exc}") from exc
    shown = min(limit, len(doc.get("nodes") or {}))
    out.print(f"wrote {target} ({shown} nodes, session {res.session_id}); open it in any browser, it works offline")
    if open_browser and not webbrowser.open(target.resolve().as_uri()):
        out.print("[yellow]could not start a browser here; open the file by hand[/]")
    return target


def register(app: typer.Typer) -> None:
    """Add ``view`` to the ``rgraph`` app."""

    @app.command("view")
    def view_cmd(
        session: Annotated[
            str | None, typer.Option("--session", "-s", help="Session id (default: this project's latest).")
        ] = None,
        out_file: Annotated[
            Path | None,
            typer.Option("--out", "-o", help="HTML file to write (default: $ROLLING_GRAPH_HOME/views/<session>.html)."),
        ] = None,
        open_browser: Annotated[bool, typer.Option("--open", help="Open the page in the default browser.")] = False,
        limit: Annotated[
            int, typer.Option("--limit", min=1, help="Put at most this many nodes in the page (focus, then heaviest).")
        ] = DEFAULT_LIMIT,
    ) -> None:
        """Write a self-contained HTML page of the graph: focus and neighbours first, search, filters, verbs."""
        try:
            do_view(settings_or_error(), session, out_file, open_browser=open_browser, limit=limit)
        except InspectError as exc:
            raise fail(str(exc)) from None
