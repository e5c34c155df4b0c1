"""Writing the per-project resume snapshot (the warm graph's top branches, a small JSON file).

Every reconciliation writes ``$ROLLING_GRAPH_HOME/snapshots/<project_key>.json`` so the
SessionStart hook can build a fresh hot graph without opening a database connection. The
format, and the reading the hook does, live in the hot graph's :mod:`rolling_graph.warm.snapshot`.
"""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path
from typing import Any

from rolling_graph.warm.snapshot import SNAPSHOT_VERSION, snapshot_file


def snapshot_path(home: str | os.PathLike[str], project_root: str) -> Path:
    return Path(snapshot_file(home, project_root))


def write_snapshot(home: str | os.PathLike[str], project_root: str, snapshot: dict[str, Any]) -> Path:
    """Write atomically (temp file + rename): a reader never sees half a snapshot."""
    path = snapshot_path(home, project_root)
    path.parent.mkdir(parents=True, exist_ok=True)
    payload = dict(snapshot, version=SNAPSHOT_VERSION, project=project_root)
    fd, tmp = tempfile.mkstemp(prefix=".snap-", suffix=".json", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            json.dump(payload, handle, ensure_ascii=False, separators=(",", ":"))
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return path
