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

#: The cache holds the graph as loaded (normalised), its edges apart (:func:`read`): a cache of
#: another layout carries another tag and is ignored.
TAG = "rolling-graph-graph-cache-3"


class EdgesNotRead(dict):  # type: ignore[type-arg]  # in a GraphDoc's place of dict[str, Edge]
    """A graph's ``edges`` when the reader asked for its nodes alone (:func:`read` with
    ``edges=False``): empty, and any read of it is a mistake, so it raises rather than tell
    "no edges". A document holding it is never written (:meth:`SessionFiles._write_graph`)."""

    def _refuse(self, *args: object, **kwargs: object) -> None:
        raise RuntimeError("the graph's edges were not read (graph_cache.read with edges=False)")

    __iter__ = __len__ = __contains__ = __getitem__ = get = keys = values = items = _refuse  # type: ignore[assignment]

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


def read(path: str, graph_stat: os.stat_result, *, edges: bool = True) -> GraphDoc | None:
    """The cached graph if it was made from exactly this graph file by this Python. ``edges=False``:
    its nodes alone, ``edges`` an :class:`EdgesNotRead` (the edges are a third of the file and
    ~40 % of its loading; the block after a compaction from a kept view reads none of them)."""
    import marshal

    try:
        with open(path, "rb") as fh:
            key, made_from, rest, edge_bytes = marshal.loads(fh.read())
        shaped = isinstance(rest, dict) and isinstance(edge_bytes, bytes)
        if key != _key() or made_from != signature(graph_stat) or not shaped:
            return None
        rest["edges"] = marshal.loads(edge_bytes) if edges else EdgesNotRead()
    except (OSError, EOFError, ValueError, TypeError):
        return None
    cached: GraphDoc = rest  # written by blob() from a normalised document
    return cached if not edges or isinstance(cached["edges"], dict) else None


def blob(graph: GraphDoc, made_from: Signature, *, share: bool = True) -> bytes:
    """The cache of ``graph``, written from the graph file ``made_from`` names: its edges in a
    marshalled part of their own (``share``: each part's equal strings as one object,
    :func:`shared_values`)."""
    import marshal

    rest: Any = {k: v for k, v in graph.items() if k != "edges"}
    edges: Any = graph["edges"]
    if share:
        rest, edges = shared_values(rest), shared_values(edges)
    return marshal.dumps((_key(), made_from, rest, marshal.dumps(edges)))


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
