"""The block a project's next new session starts with, rendered by the snapshot's writer.

A new session (``SessionStart`` with ``startup`` or ``clear``) takes its project's resume
snapshot whole (:func:`rolling_graph.warm.snapshot.seed_ops`) and is told the restore block of
that graph: ranking and rendering it is ~7–10 ms of the hook, and its modules' imports a few
more, while the user waits for the session to open. What the block says is a function of the
snapshot alone, up to one condition on the clock:

* The seed's nodes are stamped a second apart from the hook's ``now`` (the snapshot's order,
  best first), its edges at ``now``: every age the ranking and the focus read is the same at
  any ``now``.
* A node's ``first_seen`` becomes ``min(snapshot's, stamp)``: the stamp when the node was first
  seen less than its place's seconds before ``now``. The block reads ``first_seen`` in one place
  only, the order of open tasks (:func:`rolling_graph.render.sections.add_tasks`, a pending task
  before a later one). Once ``now`` is at least :func:`valid_after` (the latest of each task's
  ``first_seen`` plus a second per place before it and one more), every task keeps its own, and
  the block is the same at any later ``now``. A new session started a minute after the last one
  ended takes the kept block unless a task of it was first seen seconds before.

So the snapshot's writer (:func:`rolling_graph.warm.snapshot_write.write_snapshot`, in the
worker, off the hook's path) renders the block once, for a new session at any ``now`` past
:func:`valid_after`, and leaves it beside the snapshot (``<project_key>.startup.cache``), with
the ids it shows. The hook (:func:`read`) takes it only when all of these hold, and otherwise
renders the block itself:

* it was made from the very snapshot file the session's seed came from (inode, size and
  mtime, as the seed's own cache: :func:`rolling_graph.warm.snapshot.read_seed_signed`);
* it was made by the code that would render it now (the files of every module the block's
  computation loads, :data:`CODE`), with the same render and decay settings, by this Python;
* the hook's ``now`` is at least :func:`valid_after`;
* the session is new and took the seed into an empty graph (the caller's part).

Derived, never fsynced; written or removed with every snapshot (a forgotten node's words do
not outlive the snapshot that held them).
"""

from __future__ import annotations

import os
import sys

TYPE_CHECKING = False
if TYPE_CHECKING:
    from datetime import datetime
    from typing import Any

    from rolling_graph.core.config import Settings
    from rolling_graph.warm.snapshot import Seed

#: The cache's part name beside the snapshot (:func:`rolling_graph.warm.snapshot_files.cache_file`).
PART = "startup"
#: Changes when the cache's layout does.
TAG = "rolling-graph-startup-block-2"
#: Every module (under ``rolling_graph``) whose code the block's computation loads: the seed's
#: merge, the journal's apply and the focus, the ranking and the rendering. An edit or an
#: upgrade of any of them makes every block kept before it stale. (``tests/warm/test_startup_block.py``
#: checks that the computation loads nothing else of ours.)
CODE = (
    "core/adjacency", "core/clock", "core/config", "core/decay", "core/filepaths", "core/focus", "core/ids", "core/jsonio",
    "core/lazyre", "core/model", "core/normalize", "core/vocabulary", "core/weights", "render/layout", "render/lod",
    "render/names", "render/rank", "render/restore", "render/sections", "render/view", "safety/sanitize", "store/journal",
    "core/errors", "store/graph_cache", "store/project", "warm/snapshot", "warm/snapshot_files", "warm/startup_block",
)
_PACKAGE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def key(settings: Settings) -> tuple[Any, ...]:
    """What names the code and the settings a block is made with (a stat of each of :data:`CODE`'s files)."""
    import marshal

    from rolling_graph.store.graph_cache import signatures

    files = signatures(os.path.join(_PACKAGE, *name.split("/")) + ".py" for name in CODE)
    return (TAG, marshal.version, *sys.version_info[:2], repr(settings.render), repr(settings.decay), *files)


#: The only kind whose ``first_seen`` the block reads (the order of open tasks).
READS_FIRST_SEEN = frozenset({"task"})


def valid_after(seed: Seed) -> str:
    """The earliest ``now`` (ISO 8601) from which a new session's block of ``seed`` is the same at
    every ``now``: for each task (:data:`READS_FIRST_SEEN`), its ``first_seen`` plus a second for
    each node stamped before it and one more (the seed stamps its ``i``-th node ``i`` seconds
    before ``now`` at most, so from then on the task keeps its own ``first_seen``); the latest
    of those. ``""`` when none has one (a node without one takes its stamp, whatever ``now`` is)."""
    from rolling_graph.core.clock import iso, parse_iso, seconds
    from rolling_graph.warm.snapshot import MAX_NODES, OPEN_STAMP

    latest = None
    for place, node in enumerate(seed[1][:MAX_NODES]):
        if node["first_seen"] == OPEN_STAMP:
            continue
        parsed = parse_iso(node["first_seen"])
        if parsed is None or iso(parsed) != node["first_seen"]:
            return OPEN_STAMP  # not a stamp of ours (compared with the hook's as text): never kept
        if node["kind"] in READS_FIRST_SEEN:
            holds = parsed + seconds(place + 1)
            latest = holds if latest is None or holds > latest else latest
    return iso(latest) if latest is not None else ""


def render(seed: Seed, settings: Settings, now: datetime) -> tuple[str, list[str]]:
    """The block (and the ids it shows) of a new session that takes ``seed`` at ``now``, computed
    as the ``SessionStart`` hook does: its first entry, the seed's ops applied through the
    journal's :func:`rolling_graph.store.journal.apply_entry`, then the ``startup`` restore block."""
    from rolling_graph.core.clock import iso
    from rolling_graph.core.model import new_graph
    from rolling_graph.render.restore import restore_block
    from rolling_graph.store.journal import apply_entry
    from rolling_graph.warm.snapshot import seed_ops

    at = iso(now)
    doc = new_graph("startup-block", seed[0], now)
    apply_entry(doc, {"kind": "init", "ops": [], "at": at, "seq": 1}, settings.decay)
    ops = seed_ops(doc, seed, now)
    if not ops:
        return "", []
    apply_entry(doc, {"kind": "resume", "ops": ops, "at": at, "seq": 2}, settings.decay)
    return restore_block(doc, settings.render, "startup")


def build(seed: Seed, settings: Settings, now: datetime) -> tuple[Any, ...] | None:
    """What the cache holds: ``(key, valid_after, text, shown)``, rendered at ``now`` or at
    :func:`valid_after` if that is later; None when no ``now`` makes the block the same."""
    from rolling_graph.core.clock import parse_iso
    from rolling_graph.warm.snapshot import OPEN_STAMP

    after = valid_after(seed)
    if after == OPEN_STAMP:
        return None
    start = parse_iso(after) if after else None
    text, shown = render(seed, settings, max(now, start) if start is not None else now)
    if not text:
        return None
    return (key(settings), after, text, shown)


def read(value: Any, settings: Settings, now: datetime) -> tuple[str, list[str]] | None:
    """The kept block and its ids from the cache's ``value`` (read from beside the snapshot file
    the seed came from), when it was made by this code with these settings and ``now`` is past
    its :func:`valid_after`; else None."""
    from rolling_graph.core.clock import iso

    if not (isinstance(value, tuple) and len(value) == 4):
        return None
    made_with, after, text, shown = value
    if not (isinstance(after, str) and isinstance(text, str) and text and isinstance(shown, list)
            and all(isinstance(nid, str) for nid in shown)):
        return None
    if iso(now) < after or made_with != key(settings):
        return None
    return text, shown
