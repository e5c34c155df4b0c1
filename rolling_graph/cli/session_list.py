"""``rgraph sessions``: every session with a hot graph, newest first.

One row a session (id, project, started, last activity, nodes, events), in the order of
:meth:`rolling_graph.store.sidecar.SidecarStore.list_sessions` — the one listing the other commands
resolve sessions from. "Started" is the time of the session's first journal entry (the
hook's clock); "last activity" is when any of its files last changed (the listing's order).
"""

from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import Annotated, Any, TypedDict

import typer
from rich.table import Table

from rolling_graph.cli.console import console
from rolling_graph.cli.render_views import clean
from rolling_graph.cli.sessions import settings_or_error, store
from rolling_graph.core import jsonio
from rolling_graph.core.clock import parse_iso
from rolling_graph.core.config import Settings
from rolling_graph.store.sidecar import SidecarStore


class SessionRow(TypedDict):
    session_id: str
    project: str | None
    started: str | None
    last_activity: str
    nodes: int
    events: int


def _first_entry(sessions: SidecarStore, sid: str) -> dict[str, Any]:
    """The journal's first (init) entry, read without parsing the rest of the journal."""
    try:
        with open(sessions.journal_path(sid), "rb") as fh:
            entry = jsonio.loads(fh.readline())
    except (OSError, ValueError, UnicodeDecodeError):
        return {}
    return entry if isinstance(entry, dict) else {}


def _iso(value: object) -> str | None:
    parsed = parse_iso(value) if isinstance(value, str) else None
    return parsed.strftime("%Y-%m-%dT%H:%M:%SZ") if parsed is not None else None


def session_rows(settings: Settings) -> list[SessionRow]:
    """Every session of the state directory, most recently active first."""
    sessions = store(settings)
    times = sessions.session_times()
    rows: list[SessionRow] = []
    for sid in sessions.list_sessions():
        try:
            graph = sessions.load_graph(sid)
            counters = sessions.load_state(sid)["counters"]
        except (OSError, ValueError):  # a session whose files vanished or are refused
            continue
        first = _first_entry(sessions, sid)
        project = first.get("project") or graph.get("project")
        mtime = datetime.fromtimestamp(times.get(sid, 0.0), UTC)
        rows.append({
            "session_id": sid,
            "project": project if isinstance(project, str) else None,
            "started": _iso(first.get("at")) or _iso(graph.get("created_at")),
            "last_activity": mtime.strftime("%Y-%m-%dT%H:%M:%SZ"),
            "nodes": len(graph.get("nodes") or {}),
            "events": int(counters.get("events") or 0),
        })
    return rows


def _when(iso: str | None) -> str:
    return iso.replace("T", " ")[:16] if iso else "—"


def render_rows(rows: list[SessionRow]) -> Table:
    table = Table(title="Sessions, most recently active first (times UTC)", title_justify="left")
    for col in ("session", "project", "started", "last activity", "nodes", "events"):
        table.add_column(col, justify="right" if col in ("nodes", "events") else "left",
                         no_wrap=col in ("session", "started", "last activity"))
    for row in rows:
        table.add_row(row["session_id"], clean(row["project"] or "—", 200), _when(row["started"]),
                      _when(row["last_activity"]), str(row["nodes"]), str(row["events"]))
    return table


def register(app: typer.Typer) -> None:
    @app.command("sessions")
    def sessions_cmd(
        as_json: Annotated[bool, typer.Option("--json", help="Print the list as JSON.")] = False,
    ) -> None:
        """List the sessions with a graph: id, project, started, last activity, nodes, events; newest first."""
        settings = settings_or_error()
        rows = session_rows(settings)
        if as_json:
            typer.echo(json.dumps(rows, indent=1))
            return
        out = console()
        if not rows:
            out.print(f"no sessions under {settings.sessions_dir} yet; use Claude Code with the plugin "
                      "(`rgraph demo --keep` makes a demo session in a state directory of its own)", markup=False)
            return
        out.print(render_rows(rows))
        out.print("[dim]rgraph show --session ID shows one; rgraph stats --session ID its telemetry.[/]")
