"""Writing the per-project resume snapshot (the warm graph's top branches, a small JSON file).

Every reconciliation writes ``$ROLLING_GRAPH_HOME/snapshots/<project_key>.json`` so the
SessionStart hook can build a fresh hot graph without opening a database connection. The
format, and the reading the hook does, live in the hot graph's :mod:`rolling_graph.warm.snapshot`.
"""

from __future__ import annotations

import contextlib
import json
import marshal
import os
from pathlib import Path
from typing import Any

from rolling_graph.store.atomic import FileLock, write_atomic, write_text_atomic
from rolling_graph.warm.snapshot import (
    SNAPSHOT_VERSION,
    notes_cache_file,
    notes_cache_key,
    seed_cache_file,
    seed_cache_key,
    seed_of,
    snapshot_file,
    whole_claim,
    whole_file,
)


def snapshot_path(home: str | os.PathLike[str], project_root: str) -> Path:
    return Path(snapshot_file(home, project_root))


def write_snapshot(home: str | os.PathLike[str], project_root: str, snapshot: dict[str, Any], *, whole: bool = False) -> Path:
    """Write atomically (:func:`rolling_graph.store.atomic.write_atomic`): a reader never sees half a snapshot.
    ``whole``: the snapshot holds every node of the project's warm graph (the claim a
    prompt-time pull is skipped on: :func:`rolling_graph.warm.snapshot.holds_whole_project`)."""
    path = snapshot_path(home, project_root)
    path.parent.mkdir(parents=True, exist_ok=True)
    payload = dict(snapshot, version=SNAPSHOT_VERSION, project=project_root)
    # The snapshot, its claim and its notes' cache are written together: one writer at a time.
    with FileLock(snapshot_file(home, project_root)[: -len(".json")] + ".lock"):
        drop_whole_claim(home, project_root)  # (a claim names the file it was made for: the old one is void anyway)
        text = json.dumps(payload, ensure_ascii=False, separators=(",", ":"))
        write_text_atomic(path, text)
        st = os.stat(path)
        made_from = [st.st_ino, st.st_size, st.st_mtime_ns]
        if whole:
            write_atomic(whole_file(home, project_root), json.dumps(whole_claim(st, project_root)).encode(), durable=False)
        # The tool-time notes' read cache, made from exactly this file (rolling_graph.warm.snapshot.read_notes).
        notes = snapshot.get("notes") if isinstance(snapshot.get("notes"), dict) else {}
        cache = marshal.dumps((notes_cache_key(), made_from, project_root, json.loads(json.dumps(notes))))
        write_atomic(notes_cache_file(home, project_root), cache, durable=False)
        # What a new session takes from it, checked once here rather than in every SessionStart
        # hook (rolling_graph.warm.snapshot.read_seed), from the file as a reader parses it.
        seed = seed_of(json.loads(text))
        write_atomic(seed_cache_file(home, project_root), marshal.dumps((seed_cache_key(), made_from, project_root, seed)), durable=False)
    return path


def drop_whole_claim(home: str | os.PathLike[str], project_root: str) -> None:
    """Withdraw the snapshot's claim to hold the whole warm graph. Every writer of the project's
    nodes calls it before its transaction commits: if it dies before it rewrites the snapshot,
    the snapshot it leaves claims nothing."""
    with contextlib.suppress(FileNotFoundError):
        os.unlink(whole_file(home, project_root))
