"""The hook's side of the warm graph: resume from the snapshot file, the first prompt's
pull, and crash recovery — all without waiting on the database (workers run detached).
"""

from __future__ import annotations

import os

from . import jsonio
from .detach import spawn_later

TYPE_CHECKING = False
if TYPE_CHECKING:
    from datetime import datetime
    from typing import Any

    from .config import Settings
    from .sidecar import SidecarStore


def project_of(store: SidecarStore, sid: str) -> str | None:
    """The session's project, from its journal's first (init) entry: no graph parse."""
    try:
        with open(store._path(sid, "journal.jsonl"), "rb") as fh:
            first = fh.readline()
        entry = jsonio.loads(first)
    except (OSError, ValueError, UnicodeDecodeError):
        return None
    return entry.get("project") if isinstance(entry, dict) else None


def read_resume_snapshot(settings: Settings, project: str | None) -> dict[str, Any] | None:
    """The resume snapshot of the session's project (a file; no database)."""
    if not project:
        return None
    from rolling_graph.reconcile.snapshot import read_snapshot

    return read_snapshot(settings.home_dir, project)


def merge_snapshot(store: SidecarStore, doc: dict[str, Any], snapshot: dict[str, Any], now: datetime) -> bool:
    """Bring the project's top warm branches into ``doc`` (held in a transaction); journaled.
    Returns whether anything was added."""
    from rolling_graph.reconcile.snapshot import snapshot_ops

    ops = snapshot_ops(doc, snapshot, now)
    if ops:
        store.commit_ops(doc, ops, kind="resume", rationale="pulled from the warm graph's resume snapshot", backend="warm")
    return bool(ops)


#: Crash recovery on SessionStart runs at most this often (a cheap file stamp decides).
RECOVER_EVERY_S = 3600


def recovery_due(settings: Settings, sid: str) -> bool:
    """Is there anything the detached ``recover --quick`` could do, and has it not run in
    the last hour? Work queued on disk, or another session whose journal changed since
    the last recover (a crash leaves one behind). Stamps when it says yes."""
    import time

    stamp = os.path.join(settings.home_dir, ".recover.stamp")
    try:
        last = os.stat(stamp).st_mtime
    except FileNotFoundError:
        last = 0.0
    if time.time() - last < RECOVER_EVERY_S:
        return False
    try:
        queued = any(name.endswith(".json") for name in os.listdir(os.path.join(settings.home_dir, "queue")))
    except OSError:
        queued = False
    changed = False
    if not queued:
        sessions = os.path.join(settings.home_dir, "sessions")
        try:
            for name in os.listdir(sessions):
                if name.endswith(".journal.jsonl") and name != f"{sid}.journal.jsonl" and os.stat(os.path.join(sessions, name)).st_mtime > last:
                    changed = True
                    break
        except OSError:
            pass
    if not (queued or changed):
        return False
    try:
        with open(stamp, "w"):
            pass
    except OSError:
        return False
    return True


def spawn_worker(settings: Settings, args: list[str]) -> None:
    """Start the warm-graph worker detached, if the warm graph is on."""
    if not settings.warm:
        return
    env = dict(os.environ, ROLLING_GRAPH_HOME=settings.home_dir)
    spawn_later("rolling_graph.reconcile.worker", args, os.path.join(settings.home_dir, "logs", "rolling_graph.reconcile.log"), env)


def has_snapshot(settings: Settings, project: str | None) -> bool:
    if not project:
        return False
    from rolling_graph.reconcile.snapshot import snapshot_file

    return os.path.exists(snapshot_file(settings.home_dir, project))


def start_pull(settings: Settings, sid: str, prompt: str, project: str | None) -> None:
    """First prompt of a session: rank the warm graph against it, detached (the worker
    merges what it finds into the hot graph for the next injection)."""
    if not settings.warm or not has_snapshot(settings, project):
        return  # a project never reconciled has nothing in the warm graph to pull
    path = os.path.join(settings.home_dir, "tmp", f"{sid}.prompt.txt")
    os.makedirs(os.path.dirname(path), exist_ok=True)
    from .atomic import write_atomic

    write_atomic(path, prompt.encode("utf-8"), durable=False)  # already redacted and bounded
    spawn_worker(settings, ["pull", "--session", sid, "--prompt-file", path])
