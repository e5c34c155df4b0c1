"""Finding and reading a session's hot graph for the inspection commands.

The I/O edge of ``rgraph show / why / expand / stats / view``: which session the user
means, its sidecar document and its journal. It prefers the lead's
:class:`rolling_graph.sidecar.SidecarStore` (locking, rebuild from the journal) and falls
back to reading the files directly, so inspection still works on a half-installed tree.

Session resolution, in order:

1. ``--session ID`` when given (an empty value, or an unexpanded
   ``${CLAUDE_SESSION_ID}``, counts as not given);
2. the most recently updated sidecar whose ``project`` is the project of the current
   directory (:func:`rolling_graph.project.project_root`);
3. the most recently updated sidecar of any project.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rolling_graph.config import ConfigError, Settings, load_settings
from rolling_graph.project import project_root


class InspectError(Exception):
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


def _store(settings: Settings) -> Any | None:
    try:
        from rolling_graph.sidecar import SidecarStore
    except ImportError:
        return None
    return SidecarStore(settings)


def validate_sid(sid: str) -> str:
    """Refuse ids that are not plain ids (path separators, ``..``, control characters)."""
    try:
        from rolling_graph.sidecar import validate_session_id
    except ImportError:
        validate_session_id = None
    if validate_session_id is not None:
        try:
            return str(validate_session_id(sid))
        except ValueError as exc:
            raise InspectError(f"invalid session id {sid!r}: {exc}") from exc
    bad = not sid or len(sid) > 128 or sid in {".", ".."} or any(ch in sid for ch in "/\\") or ".." in sid
    if bad or any(ord(ch) < 32 or ord(ch) == 127 for ch in sid):
        raise InspectError(f"invalid session id {sid!r}: use the plain id shown by `rgraph stats --all`")
    return sid


def graph_path(settings: Settings, sid: str) -> Path:
    return settings.sessions_dir / f"{sid}.graph.json"


def journal_path(settings: Settings, sid: str) -> Path:
    return settings.sessions_dir / f"{sid}.journal.jsonl"


def session_exists(settings: Settings, sid: str) -> bool:
    """A graph, a journal or hook state exists for ``sid`` (the hooks write state first)."""
    folder = settings.sessions_dir
    return any((folder / f"{sid}.{suffix}").is_file() for suffix in ("graph.json", "journal.jsonl", "state.json"))


def list_sessions(settings: Settings) -> list[str]:
    """Session ids, most recently updated first."""
    store = _store(settings)
    if store is not None and hasattr(store, "list_sessions"):
        return list(store.list_sessions())
    folder = settings.sessions_dir
    if not folder.is_dir():
        return []
    found = [(p.stat().st_mtime, p.name[: -len(".graph.json")]) for p in folder.glob("*.graph.json")]
    return [sid for _, sid in sorted(found, reverse=True)]


def load_document(settings: Settings, sid: str) -> dict[str, Any]:
    """The session's sidecar document (rebuilt from the journal by the store when corrupt)."""
    validate_sid(sid)
    if not session_exists(settings, sid):
        raise InspectError(
            f"no graph for session {sid} under {settings.sessions_dir}; `rgraph stats --all` lists sessions"
        )
    store = _store(settings)
    if store is not None:
        return dict(store.load(sid))
    try:
        doc = json.loads(graph_path(settings, sid).read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise InspectError(f"cannot read the graph of session {sid}: {exc}") from exc
    if not isinstance(doc, dict):
        raise InspectError(f"the graph of session {sid} is not a JSON object")
    try:  # hook state (gate, ledger, counters) lives beside the graph
        state = json.loads((settings.sessions_dir / f"{sid}.state.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        state = {}
    if isinstance(state, dict):
        doc.update({k: v for k, v in state.items() if k in ("gate", "ledger", "counters")})
    return doc


def load_journal(settings: Settings, sid: str) -> list[dict[str, Any]]:
    """Journal entries, oldest first; unreadable lines are skipped."""
    path = journal_path(settings, sid)
    try:
        from rolling_graph.journal import read_journal
    except ImportError:
        read_journal = None
    if read_journal is not None:
        return list(read_journal(path)) if path.exists() else []
    if not path.is_file():
        return []
    entries: list[dict[str, Any]] = []
    for line in path.read_text(encoding="utf-8", errors="replace").splitlines():
        try:
            entry = json.loads(line)
        except ValueError:
            continue
        if isinstance(entry, dict):
            entries.append(entry)
    return entries


def _doc_project(settings: Settings, sid: str) -> str | None:
    try:
        doc = json.loads(graph_path(settings, sid).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    project = doc.get("project") if isinstance(doc, dict) else None
    return project if isinstance(project, str) else None


def _is_unset(session: str | None) -> bool:
    return not session or not session.strip() or session.strip() in {"${CLAUDE_SESSION_ID}", "$CLAUDE_SESSION_ID"}


def resolve_session(
    settings: Settings,
    session: str | None,
    *,
    cwd: str | None = None,
    fallback_when_missing: bool = False,
) -> ResolvedSession:
    """Which session the user means (see the module docstring).

    ``fallback_when_missing`` is for the slash command: Claude Code passes the current
    session's id, which has no graph until the hooks have written one.
    """
    note = None
    if not _is_unset(session):
        sid = validate_sid(str(session).strip())
        if session_exists(settings, sid):
            return ResolvedSession(sid, "explicit")
        if not fallback_when_missing:
            raise InspectError(
                f"no graph for session {sid} under {settings.sessions_dir}; `rgraph stats --all` lists sessions"
            )
        note = f"session {sid} has no graph yet"
    sessions = list_sessions(settings)
    if not sessions:
        raise InspectError(
            f"no sessions under {settings.sessions_dir} yet; run `rgraph demo` or use Claude Code with the plugin"
        )
    root = project_root(cwd or os.getcwd())
    for sid in sessions:
        if _doc_project(settings, sid) == root:
            return ResolvedSession(sid, "project", note)
    return ResolvedSession(sessions[0], "latest", note)
