"""The graph file's read cache (``<sid>.graph.cache``): the graph as loaded, in :mod:`marshal`
format, which this interpreter loads in about half the time of the JSON (a 2,000-node graph:
~9 ms against ~19 ms).

Derived, never fsynced, used only when it names the exact graph file on disk (inode, size,
mtime) and was written by the same Python; else ignored and the JSON is parsed. The hook
process loads this module when it reads or writes a graph: ``marshal`` and ``sys`` are
imported where they are used.
"""

from __future__ import annotations

import os

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterable
    from typing import Any

    from rolling_graph.core.types import GraphDoc

#: The cache holds the graph as loaded (normalised): a cache from before normalisation
#: carries another tag and is ignored.
TAG = "rolling-graph-graph-cache-2"

Signature = tuple[int, int, int]


def signature(st: os.stat_result) -> Signature:
    """What names one version of a file on disk: inode, size, mtime."""
    return (st.st_ino, st.st_size, st.st_mtime_ns)


def signatures(paths: Iterable[str]) -> list[tuple[str, int, int, int]]:
    """Each path with the :func:`signature` of the file there (zeros for none): what names the
    versions of several files, such as the modules whose code made a derived file."""
    out: list[tuple[str, int, int, int]] = []
    for path in paths:
        try:
            out.append((path, *signature(os.stat(path))))
        except OSError:
            out.append((path, 0, 0, 0))
    return out


def _key() -> tuple[str, int, int, int]:
    import marshal
    import sys

    return (TAG, marshal.version, *sys.version_info[:2])


def read(path: str, graph_stat: os.stat_result) -> GraphDoc | None:
    """The cached graph if it was made from exactly this graph file by this Python."""
    import marshal

    try:
        with open(path, "rb") as fh:
            key, made_from, graph = marshal.loads(fh.read())
    except (OSError, EOFError, ValueError, TypeError):
        return None
    cached: GraphDoc = graph  # written by blob() from a normalised document
    if key != _key() or made_from != signature(graph_stat) or not isinstance(graph, dict):
        return None
    return cached


def blob(graph: GraphDoc, made_from: Signature, *, share: bool = True) -> bytes:
    """The cache of ``graph``, written from the graph file ``made_from`` names (``share``: its
    equal strings as one object, :func:`shared_values`)."""
    import marshal

    cached: Any = shared_values(graph) if share else graph
    return marshal.dumps((_key(), made_from, cached))


def shared_values(value: Any, memo: dict[str, str] | None = None) -> Any:
    """``value`` (JSON-shaped) with equal strings as one object. :mod:`marshal`
    writes an object it has seen as a reference to it, so the cache of a graph whose nodes
    share kinds, domains and timestamps is a third smaller and loads a third faster (a
    2,000-node graph: ~5 ms -> ~3.5 ms, which a prompt naming a node waits for). Scalars are
    taken inline and only containers recurse: half the time of a call per value."""
    share = ({} if memo is None else memo).setdefault

    def walk(v: Any) -> Any:
        t = type(v)
        if t is dict:
            return {share(k, k) if type(k) is str else k: share(x, x) if type(x) is str else x if type(x) in _SCALARS else walk(x) for k, x in v.items()}
        if t is list:
            return [share(x, x) if type(x) is str else x if type(x) in _SCALARS else walk(x) for x in v]
        return share(v, v) if t is str else v

    return walk(value)


#: Values taken as they are (``bool`` is a type of its own to ``type()``).
_SCALARS = (int, float, bool, type(None))
