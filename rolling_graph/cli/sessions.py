"""Finding and reading a session's hot graph for the inspection commands.

The I/O edge of ``rgraph show / why / expand / stats / view``: which session the user
means, its document and its journal, all read through
:class:`rolling_graph.store.sidecar.SidecarStore` (locking, rebuild from the journal).

Session resolution, in order:

1. ``--session ID`` when given (an empty value, or an unexpanded
   ``${CLAUDE_SESSION_ID}``, counts as not given);
2. the most recently updated session whose ``project`` is the project of the current
   directory (:func:`rolling_graph.store.project.project_root`);
3. the most recently updated session of any project.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import TYPE_CHECKING

from rolling_graph.core.config import ConfigError, Settings, load_settings
from rolling_graph.core.errors import UserError
from rolling_graph.core.ids import InvalidSessionId, validate_session_id
from rolling_graph.store.project import project_root
from rolling_graph.store.sidecar import SidecarStore

if TYPE_CHECKING:
    from rolling_graph.core.types import JournalEntry, SessionDoc


class InspectError(UserError):
    """A user-facing, one-line problem (no session, unknown node, bad id)."""


@dataclass(frozen=True)
class ResolvedSession:
    session_id: str
    #: Why this session was chosen: ``explicit``, ``project`` or ``latest``.
    how: str
    #: Set when an explicitly requested session had no graph and we fell back.
    note: str | None = None


def settings_or_error() -> Settings:
    try:
        return load_settings()
    except ConfigError as exc:
        raise InspectError(str(exc)) from exc


def store(settings: Settings) -> SidecarStore:
    return SidecarStore(settings)


def validate_sid(sid: str) -> str:
    """Refuse ids that are not plain ids (path separators, ``..``, control characters)."""
    try:
        return validate_session_id(sid)
    except InvalidSessionId as exc:
        raise InspectError(f"invalid session id {sid!r}: {exc}") from exc


def list_sessions(settings: Settings) -> list[str]:
    """Session ids, most recently updated first."""
    return store(settings).list_sessions()


def load_document(settings: Settings, sid: str) -> SessionDoc:
    """The session's document, graph and hook state (rebuilt from the journal when corrupt)."""
    sessions = store(settings)
    if not sessions.exists(validate_sid(sid)):
        raise InspectError(
            f"no graph for session {sid} under {settings.sessions_dir}; `rgraph sessions` lists them"
        )
    return sessions.load(sid)


def load_journal(settings: Settings, sid: str) -> list[JournalEntry]:
    """Journal entries, oldest first; unreadable lines are skipped."""
    return store(settings).read_journal(validate_sid(sid))


def _is_unset(session: str | None) -> bool:
    return not session or not session.strip() or session.strip() in {"${CLAUDE_SESSION_ID}", "$CLAUDE_SESSION_ID"}


def check_project_dir(project: str) -> None:
    """``--project PATH`` names a directory that exists: never fall back to another project."""
    if not os.path.isdir(project):
        raise InspectError(f"no directory {project}: --project takes a project's directory (leave it out for this one)")


def resolve_session(
    settings: Settings,
    session: str | None,
    *,
    cwd: str | None = None,
    project: str | None = None,
    fallback_when_missing: bool = False,
) -> ResolvedSession:
    """Which session the user means (see the module docstring).

    ``fallback_when_missing`` is for the slash command: Claude Code passes the current
    session's id, which has no graph until the hooks have written one.
    """
    sessions = store(settings)
    note = None
    if project is not None:  # named on purpose (--project): it exists, and only its sessions answer
        check_project_dir(project)
        cwd = project
    if not _is_unset(session):
        sid = validate_sid(str(session).strip())
        if sessions.exists(sid):
            return ResolvedSession(sid, "explicit")
        if not fallback_when_missing:
            raise InspectError(
                f"no graph for session {sid} under {settings.sessions_dir}; `rgraph sessions` lists them"
            )
        note = f"session {sid} has no graph yet"
    sids = sessions.list_sessions()
    if not sids:
        raise InspectError(
            f"no sessions under {settings.sessions_dir} yet; use Claude Code with the plugin "
            "(`rgraph demo` shows what it records, in a directory of its own)"
        )
    root = project_root(cwd or os.getcwd())
    # A session with nothing in its graph (a `claude -p "/rolling-graph:graph show"`, a greeting)
    # is no one's session to look at while one with a memory exists.
    latest = None
    for sid in sids:
        graph = sessions.load_graph(sid)
        if not graph.get("nodes"):
            continue
        latest = latest or sid
        if graph.get("project") == root:
            return ResolvedSession(sid, "project", note)
    if project is not None:  # another project's session is no answer to --project
        raise InspectError(
            f"no session of the project {root} under {settings.sessions_dir}; `rgraph sessions` lists every session with its project"
        )
    return ResolvedSession(latest or sids[0], "latest", note)
