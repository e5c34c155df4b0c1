"""Where a project's resume snapshot lies, and its read caches beside it: their names, their
blobs, and how one is read.

The snapshot (``$ROLLING_GRAPH_HOME/snapshots/<project_key>.json``) is the warm graph's part
that hooks read without a database (:mod:`rolling_graph.warm.snapshot`, its format). Its writer
(:mod:`rolling_graph.warm.snapshot_write`) leaves beside it a read cache of each part a hook
reads often (``<project_key>.<part>.cache``, :mod:`marshal`): the tool-time notes
(:mod:`rolling_graph.warm.notes_cache`), the seed of a pull and a new session's block. A cache
names the very snapshot file it was made from (inode, size, mtime): one made from another file
is not read. Kept apart from the format so that a tool event's hook, which reads only the
notes, loads no more than this and the notes' reader.
"""

from __future__ import annotations

import os

from rolling_graph.store.project import project_key

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

#: The layout of each part's cached value, where it is not the first (``notes``: one marshalled
#: entry per file, :mod:`rolling_graph.warm.notes_cache`). A cache of another layout is not read.
LAYOUTS = {"notes": 2}


def snapshot_file(home: str | os.PathLike[str], project_root: str) -> str:
    return os.path.join(os.fspath(home), "snapshots", f"{project_key(project_root)}.json")


def cache_file(home: str | os.PathLike[str], project_root: str, part: str) -> str:
    """The read cache of one part of the snapshot (``notes``:
    :func:`rolling_graph.warm.notes_cache.read_notes`; ``seed``:
    :func:`rolling_graph.warm.snapshot.read_seed`; ``startup``: a new session's block,
    :mod:`rolling_graph.warm.startup_block`), which its writer leaves beside it (:mod:`marshal`)."""
    return snapshot_file(home, project_root)[: -len(".json")] + f".{part}.cache"


def cache_blob(part: str, st: os.stat_result, project_root: str, value: Any) -> bytes:
    """What :func:`cache_file` holds: ``value``, made from the snapshot file whose ``os.stat`` is ``st``."""
    import marshal

    return marshal.dumps((_cache_key(part), signature(st), project_root, value))


def _cache_key(part: str, layout: int | None = None) -> tuple[str, int, int, int]:
    import marshal
    import sys

    return (f"rgraph-{part}-{layout or LAYOUTS.get(part, 1)}", marshal.version, *sys.version_info[:2])


def signature(st: os.stat_result) -> list[int]:
    """What names one snapshot file (its caches say which one they were made from)."""
    return [st.st_ino, st.st_size, st.st_mtime_ns]


def read_cache(home: str | os.PathLike[str], project_root: str, part: str, made_from: list[int], layout: int | None = None) -> Any:
    """The cached ``part`` when its cache was made from exactly the snapshot file ``made_from``
    names (:func:`signature`), in this part's layout (:data:`LAYOUTS`; ``layout``: in that one
    instead), and is this user's own and writable by no one else; else None."""
    import marshal

    try:
        with open(cache_file(home, project_root, part), "rb") as fh:
            own = os.fstat(fh.fileno())
            if (hasattr(os, "getuid") and own.st_uid != os.getuid()) or own.st_mode & 0o022:
                return None
            key, signature_of, project, value = marshal.loads(fh.read())
    except (OSError, EOFError, ValueError, TypeError):
        return None
    if key != _cache_key(part, layout) or made_from != signature_of or project != project_root:
        return None
    return value
