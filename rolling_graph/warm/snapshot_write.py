"""Writing the per-project resume snapshot (the warm graph's top branches, a small JSON file).

Every reconciliation writes ``$ROLLING_GRAPH_HOME/snapshots/<project_key>.json`` so the
SessionStart hook can build a fresh hot graph without opening a database connection. The
format, and the reading the hook does, live in the hot graph's :mod:`rolling_graph.warm.snapshot`.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rolling_graph.store.atomic import FileLock, write_atomic, write_text_atomic
from rolling_graph.warm import notes_cache, startup_block
from rolling_graph.warm.snapshot import SNAPSHOT_VERSION, seed_of, whole_claim, whole_file
from rolling_graph.warm.snapshot_files import cache_blob, cache_file, snapshot_file

if TYPE_CHECKING:
    from rolling_graph.core.config import Settings
    from rolling_graph.warm.snapshot import Seed


def snapshot_path(home: str | os.PathLike[str], project_root: str) -> Path:
    return Path(snapshot_file(home, project_root))


def write_snapshot(
    home: str | os.PathLike[str], project_root: str, snapshot: dict[str, Any], *, whole: bool = False, settings: Settings | None = None
) -> Path:
    """Write atomically (:func:`rolling_graph.store.atomic.write_atomic`): a reader never sees half a snapshot.
    ``whole``: the snapshot holds every node of the project's warm graph (the claim a
    prompt-time pull is skipped on: :func:`rolling_graph.warm.snapshot.holds_whole_project`).
    ``settings``: the block a new session of the project will be told is rendered now, with
    these settings, and kept beside the snapshot (:mod:`rolling_graph.warm.startup_block`);
    without them any block kept for an earlier snapshot is removed."""
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
        write_atomic(cache_file(home, project_root, notes_cache.PART), notes_cache.blob(st, project_root, notes), durable=False)
        seed = seed_of(written)
        write_atomic(cache_file(home, project_root, "seed"), cache_blob("seed", st, project_root, seed), durable=False)
        _keep_startup_block(home, project_root, st, seed, settings)
    return path


def _keep_startup_block(home: str | os.PathLike[str], project_root: str, st: os.stat_result, seed: Seed, settings: Settings | None) -> None:
    """Render the block of the project's next new session and keep it beside the snapshot file
    ``st`` names (:mod:`rolling_graph.warm.startup_block`), or remove the one kept before when
    there is none to keep. A block that fails to render is not kept: the hook renders its own."""
    path = cache_file(home, project_root, startup_block.PART)
    block = None
    if settings is not None:
        try:
            block = startup_block.build(seed, settings, settings.clock.now())
        except Exception:  # a cache: the snapshot is written, and the hook renders the block itself
            logging.getLogger(__name__).exception("the next session's block was not kept for %s", project_root)
    if block is None:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(path)
        return
    write_atomic(path, cache_blob(startup_block.PART, st, project_root, block), durable=False)


def drop_whole_claim(home: str | os.PathLike[str], project_root: str) -> None:
    """Withdraw the snapshot's claim to hold the whole warm graph. Every writer of the project's
    nodes calls it before its transaction commits: if it dies before it rewrites the snapshot,
    the snapshot it leaves claims nothing."""
    with contextlib.suppress(FileNotFoundError):
        os.unlink(whole_file(home, project_root))
