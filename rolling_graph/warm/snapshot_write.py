"""Writing the per-project resume snapshot (the warm graph's top branches, a small JSON file).

Every reconciliation writes ``$ROLLING_GRAPH_HOME/snapshots/<project_key>.json`` so the
SessionStart hook can build a fresh hot graph without opening a database connection. The
format, and the reading the hook does, live in the hot graph's :mod:`rolling_graph.warm.snapshot`.
"""

from __future__ import annotations

import contextlib
import json
import os
from pathlib import Path
from typing import Any

from rolling_graph.store.atomic import FileLock, write_atomic, write_text_atomic
from rolling_graph.warm.snapshot import (
    SNAPSHOT_VERSION,
    cache_blob,
    cache_file,
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
    # The snapshot, its claim and its caches are written together: one writer at a time.
    with FileLock(snapshot_file(home, project_root)[: -len(".json")] + ".lock"):
        drop_whole_claim(home, project_root)  # (a claim names the file it was made for: the old one is void anyway)
        text = json.dumps(payload, ensure_ascii=False, separators=(",", ":"))
        write_text_atomic(path, text)
        st = os.stat(path)
        if whole:
            write_atomic(whole_file(home, project_root), json.dumps(whole_claim(st, project_root)).encode(), durable=False)
        # Read caches made from exactly this file, as a reader parses it (rolling_graph.warm.snapshot):
        # what tool-time notes draw from, and what a new session takes (its nodes checked once
        # here rather than in every SessionStart hook).
        written = json.loads(text)
        notes = written.get("notes") if isinstance(written.get("notes"), dict) else {}
        write_atomic(cache_file(home, project_root, "notes"), cache_blob("notes", st, project_root, notes), durable=False)
        write_atomic(cache_file(home, project_root, "seed"), cache_blob("seed", st, project_root, seed_of(written)), durable=False)
    return path


def drop_whole_claim(home: str | os.PathLike[str], project_root: str) -> None:
    """Withdraw the snapshot's claim to hold the whole warm graph. Every writer of the project's
    nodes calls it before its transaction commits: if it dies before it rewrites the snapshot,
    the snapshot it leaves claims nothing."""
    with contextlib.suppress(FileNotFoundError):
        os.unlink(whole_file(home, project_root))
