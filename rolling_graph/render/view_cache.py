"""The restore block's view of a session's graph after a compaction, kept beside the graph
(``<sid>.view.cache``): what :class:`rolling_graph.render.view.RestoreView` finds in the
graph, every node in force ranked with the ``compact`` preset included. The same for a resumed
session's block (``<sid>.view-coding.cache``, the ``coding`` preset), left by what ``SessionEnd``
starts: ``claude --resume`` opens on the graph the session ended with (:data:`FOR_TRIGGER`).

The ``SessionStart`` hook after a compaction renders the block while the user waits; ranking a
2,000-node graph is ~10 ms of it, and the view depends on the graph alone (Claude's summary only
reweighs names afterwards). What ``PreCompact`` starts (the worker's ``finish``, or with the warm
graph off the probe) probes what is pending and then leaves the view of the final graph beside
it (:func:`refresh`), outside the session's lock, while Claude writes its summary; the hook takes
it when it was made from the very graph file it read (inode, size, mtime, as the graph's read
cache, taken with the session's lock held) by the very code that would rank it now (the signatures of the modules that compute it,
the preset's settings, this Python). Otherwise (a graph written since, a compaction whose
``PreCompact`` work has not finished, a file missing, unreadable or not of a view's shape) the
hook ranks the graph itself. Derived, never fsynced.
"""

from __future__ import annotations

import sys

from rolling_graph.render.rank import PRESETS as RANK_PRESETS
from rolling_graph.render.view import RestoreView

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from rolling_graph.core.types import GraphDoc
    from rolling_graph.store.files import SessionFiles
    from rolling_graph.store.graph_cache import Signature

#: The cache file's suffix beside the session's graph, by the ranking preset its view is made with.
SUFFIXES = {"compact": "view.cache", "coding": "view-coding.cache"}
#: The ``compact`` view's suffix (``<sid>.view.cache``).
SUFFIX = SUFFIXES["compact"]
#: Changes when the file's layout does.
TAG = "rolling-graph-view-cache-2"
#: The ranking preset of the block after a compaction (:func:`rolling_graph.render.restore.restore_block`).
PRESET = "compact"
#: The view the work a flush starts leaves, by its trigger: the block after a compaction ranks
#: with ``compact``, a resumed session's (after ``SessionEnd``) with ``coding``.
FOR_TRIGGER = {"pre-compact": "compact", "session-end": "coding"}
#: The modules whose code makes a view: an edit or an upgrade of any of them makes every view
#: kept before it stale.
CODE = ("rolling_graph.render.view", "rolling_graph.render.rank", "rolling_graph.render.layout", "rolling_graph.core.focus",
        "rolling_graph.core.vocabulary", "rolling_graph.core.filepaths", "rolling_graph.core.model", "rolling_graph.core.ledger",
        "rolling_graph.core.adjacency")


def code_key(preset: str = PRESET) -> tuple[Any, ...]:
    """What names the code and settings a view (of ``preset``'s ranking) is made with."""
    import marshal

    from rolling_graph.store.graph_cache import signatures

    files = signatures(getattr(sys.modules.get(name), "__file__", None) or "" for name in CODE)
    return (TAG, marshal.version, *sys.version_info[:2], preset, repr(RANK_PRESETS[preset]), *files)


def build(graph: GraphDoc, made_from: Signature, preset: str = PRESET) -> bytes:
    """The cache of ``graph``'s view, as written to the graph file ``made_from`` names, with the
    ledger's fingerprint of every node (:func:`fingerprints`)."""
    import marshal

    return marshal.dumps((code_key(preset), made_from, RestoreView(graph, RANK_PRESETS[preset]).state(), fingerprints(graph)))


def fingerprints(graph: GraphDoc) -> dict[str, str]:
    """The ledger's fingerprint (:func:`rolling_graph.core.ledger.fingerprint`) of every node of
    ``graph``: what the ledger's restart after the block records of the nodes it shows, so
    that the hook reads none of the graph's edges (:meth:`SidecarStore.transaction`, ``edges``)."""
    from rolling_graph.core.adjacency import adjacency
    from rolling_graph.core.ledger import fingerprint

    adj = adjacency(graph)
    return {nid: fingerprint(nid, graph, adj) for nid in graph["nodes"]}


def read(path: str, doc: GraphDoc, made_from: Signature | None, preset: str = PRESET) -> RestoreView | None:
    """The view of ``doc`` with ``preset``'s ranking kept at ``path``, if it was made from the graph
    file ``made_from`` names (the one ``doc`` was read from) by this code; else None."""
    if made_from is None:
        return None
    import marshal

    try:
        with open(path, "rb") as fh:
            key, signature, state, marks = marshal.loads(fh.read())
    except (OSError, EOFError, ValueError, TypeError):
        return None
    if signature != made_from or key != code_key(preset) or not isinstance(marks, dict):
        return None
    return RestoreView.restored(doc, state, preset, marks)


def refresh(files: SessionFiles, sid: str, preset: str = PRESET) -> bool:
    """Make ``preset``'s view beside ``sid``'s graph current (a graph file written since it was
    made gets a view of its own). Returns whether it wrote one."""
    from rolling_graph.store.atomic import write_atomic

    try:
        with files.lock(sid):  # the graph and the file it came from, together; ranked after
            graph = files.load_graph_locked(sid)
            made_from = files.graph_signature(sid)
        path = files.path(sid, SUFFIXES[preset])
        if made_from is None or not graph["nodes"] or read(path, graph, made_from, preset) is not None:
            return False
        write_atomic(path, build(graph, made_from, preset), durable=False)
    except OSError:  # a cache: the hook ranks the graph itself
        return False
    return True
