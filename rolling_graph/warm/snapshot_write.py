"""Writing the per-project resume snapshot (the warm graph's top branches, a small JSON file).

Every reconciliation writes ``$ROLLING_GRAPH_HOME/snapshots/<project_key>.json`` so the
SessionStart hook can build a fresh hot graph without opening a database connection. The
format, and the reading the hook does, live in the hot graph's :mod:`rolling_graph.warm.snapshot`.
"""

from __future__ import annotations

import json
import marshal
import os
from pathlib import Path
from typing import Any

from rolling_graph.store.atomic import write_atomic, write_text_atomic
from rolling_graph.warm.snapshot import SNAPSHOT_VERSION, notes_cache_file, notes_cache_key, snapshot_file


def snapshot_path(home: str | os.PathLike[str], project_root: str) -> Path:
    return Path(snapshot_file(home, project_root))


def write_snapshot(home: str | os.PathLike[str], project_root: str, snapshot: dict[str, Any]) -> Path:
    """Write atomically (:func:`rolling_graph.store.atomic.write_atomic`): a reader never sees half a snapshot."""
    path = snapshot_path(home, project_root)
    path.parent.mkdir(parents=True, exist_ok=True)
    payload = dict(snapshot, version=SNAPSHOT_VERSION, project=project_root)
    write_text_atomic(path, json.dumps(payload, ensure_ascii=False, separators=(",", ":")))
    # The tool-time notes' read cache, made from exactly this file (rolling_graph.warm.snapshot.read_notes).
    st = os.stat(path)
    notes = snapshot.get("notes") if isinstance(snapshot.get("notes"), dict) else {}
    cache = marshal.dumps((notes_cache_key(), [st.st_ino, st.st_size, st.st_mtime_ns], project_root, json.loads(json.dumps(notes))))
    write_atomic(notes_cache_file(home, project_root), cache, durable=False)
    return path
