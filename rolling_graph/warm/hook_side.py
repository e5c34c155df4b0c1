"""The hook's side of the warm graph: resume from the snapshot file, the first prompt's
pull, and crash recovery — all without waiting on the database (workers run detached).

The warm graph's code (:mod:`rolling_graph.warm`) sits a layer above this one and is
never imported here: its work runs in another process, the installed command
:data:`WORKER` (declared in ``pyproject.toml``'s ``[project.scripts]``, the one place that
binds it to a module), which takes ``reconcile | finish | pull | recover`` arguments.
"""

from __future__ import annotations

import os

from rolling_graph.core.detach import spawn_later
from rolling_graph.store.sidecar import SidecarStore

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Container
    from datetime import datetime

    from rolling_graph.core.config import Settings
    from rolling_graph.core.types import NoteTable, SessionDoc
    from rolling_graph.warm.snapshot import Seed

#: The warm graph's detached worker: an installed command, not a module of this layer.
WORKER = "rgraph-worker"


def read_resume_seed(settings: Settings, project: str | None) -> Seed | None:
    """What a session takes from its project's resume snapshot (a file; no database): the
    snapshot's nodes and edges, checked (:func:`rolling_graph.warm.snapshot.read_seed`)."""
    from rolling_graph.warm import snapshot

    return snapshot.read_seed(settings.home_dir, project) if project else None


def read_new_session_seed(settings: Settings, project: str | None, now: datetime) -> tuple[Seed | None, tuple[str, list[str]] | None]:
    """:func:`read_resume_seed` for a new session (``startup``, ``clear``), and the block its
    snapshot's writer rendered for such a session, with the ids it shows, when it was made from
    the snapshot file the seed came from and holds at ``now``
    (:func:`rolling_graph.warm.startup_block.read`); else None as the block. The caller takes the
    block only if the seed went whole into an empty graph."""
    if not project:
        return None, None
    from rolling_graph.warm import snapshot

    seed, made_from = snapshot.read_seed_signed(settings.home_dir, project)
    if seed is None or made_from is None:
        return seed, None
    from rolling_graph.warm import startup_block
    from rolling_graph.warm.snapshot_files import read_cache

    return seed, startup_block.read(read_cache(settings.home_dir, project, startup_block.PART, made_from), settings, now)


def read_notes(settings: Settings, project: str | None) -> NoteTable:
    """What the project's tool-time notes draw from (the snapshot's ``notes``, read from the
    cache beside it: :func:`rolling_graph.warm.notes_cache.read_notes`; no database), or empty
    when notes are off or the project has no snapshot."""
    if not settings.render.notes or not project:
        return {}
    from rolling_graph.warm import notes_cache

    return notes_cache.read_notes(settings.home_dir, project)


def merge_snapshot(store: SidecarStore, doc: SessionDoc, seed: Seed, now: datetime, source: str = "startup") -> bool:
    """Bring the project's top warm branches (``seed``: :func:`read_resume_seed`) into ``doc``
    (held in a transaction); journaled. A new session takes the whole snapshot, a resumed one
    (which has its own graph) its first :data:`rolling_graph.warm.snapshot.RESUME_NODES`.
    Returns whether anything was added."""
    from rolling_graph.warm import snapshot

    if source == "resume":
        ops = snapshot.seed_ops(doc, seed, now, max_nodes=snapshot.RESUME_NODES, max_edges=snapshot.RESUME_EDGES)
    else:
        ops = snapshot.seed_ops(doc, seed, now)
    if ops:
        store.commit_ops(doc, ops, kind="resume", rationale="pulled from the warm graph's resume snapshot", backend="warm")
    return bool(ops)


#: Crash recovery on SessionStart runs at most this often (a cheap file stamp decides).
RECOVER_EVERY_S = 3600


def recovery_due(settings: Settings, sid: str) -> bool:
    """Is there anything the detached ``recover --quick`` could do, and has it not run in
    the last hour? Work queued on disk, or another session that changed since the last
    recover (a crash leaves one behind). Stamps when it says yes."""
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
    if not queued and not any(t > last for s, t in SidecarStore(settings).session_times().items() if s != sid):
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
    env = settings.child_env()
    spawn_later([WORKER], args, os.path.join(settings.home_dir, "logs", "rolling_graph.warm.log"), env)


def start_pull(settings: Settings, sid: str, prompt: str, project: str | None, have: Container[str] = ()) -> None:
    """First prompt of a session: rank the warm graph against it, detached (the worker
    merges what it finds into the hot graph for the next injection). ``have``: the hot
    graph's node ids; when they hold the project's whole warm graph there is nothing to pull."""
    if not settings.warm:
        return
    from rolling_graph.warm import snapshot

    if not snapshot.has_snapshot(settings.home_dir, project):
        return  # a project never reconciled has nothing in the warm graph to pull
    if snapshot.holds_whole_project(settings.home_dir, project, have):
        return  # the session took every warm node at its start (a pull would load psycopg for nothing)
    path = os.path.join(settings.home_dir, "tmp", f"{sid}.prompt.txt")
    os.makedirs(os.path.dirname(path), exist_ok=True)
    from rolling_graph.store.atomic import write_atomic

    write_atomic(path, prompt.encode("utf-8"), durable=False)  # already redacted and bounded
    spawn_worker(settings, ["pull", "--session", sid, "--prompt-file", path])
