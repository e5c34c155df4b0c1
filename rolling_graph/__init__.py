"""Rolling Graph's hot graph: one session's weighted concept graph, kept beside Claude Code.

The public API at a glance (each name is imported on first use, so that the hook process,
which imports this package for every event, pays only for what it touches):

* Settings — :func:`load_settings`, :class:`Settings`, :class:`ConfigError`
* The document — :func:`new_document`, :func:`make_node`, :func:`make_edge`,
  :data:`DOMAINS`, :data:`KINDS`, :data:`VERBS`
* Storage — :class:`SidecarStore` (locked, atomic, journaled; rebuilt from the journal),
  :func:`validate_session_id`, :func:`read_journal`
* Untrusted proposals — :func:`validate_ops` (RFC 6902 in, effective ops out),
  :class:`PatchRejected`
* Deciding and extracting — :func:`gate_check` (the heuristic gate), :class:`OfflineProbe`,
  :func:`run_probe`
* Weights — :func:`strengthen`, :func:`weaken`, :func:`decay_graph`, :func:`focus_cluster`
* What the model sees — :func:`render_lod`, :func:`restore_block` (SessionStart's block),
  :func:`rank_names`, :func:`estimate_tokens`, :func:`redact`
* Hook entry — :func:`handle_event` (``rgraph-hook``'s logic, in-process)
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:  # the names' real types, for the type checker and a reader; never run
    from typing import Any

    from rolling_graph.capture.gate import check as gate_check
    from rolling_graph.core.config import ConfigError, Settings, load_settings
    from rolling_graph.core.decay import decay_graph
    from rolling_graph.core.focus import focus_cluster
    from rolling_graph.core.ids import validate_session_id
    from rolling_graph.core.model import DOMAINS, KINDS, VERBS, make_edge, make_node, new_document
    from rolling_graph.core.patch import PatchRejected, validate_ops
    from rolling_graph.core.weights import strengthen, weaken
    from rolling_graph.hook import handle_event
    from rolling_graph.probe.offline import OfflineProbe
    from rolling_graph.probe.runner import run_probe
    from rolling_graph.render.lod import estimate_tokens, render_lod
    from rolling_graph.render.rank import rank as rank_names
    from rolling_graph.render.restore import restore_block
    from rolling_graph.safety.redact import redact
    from rolling_graph.store.journal import read_journal
    from rolling_graph.store.sidecar import SidecarStore

#: Module → the public names it defines (full module names: the import walk in
#: tests/test_import_layers.py reads them as this package's imports).
_BY_MODULE = {
    "rolling_graph.core.config": ("load_settings", "Settings", "ConfigError"),
    "rolling_graph.core.model": ("new_document", "make_node", "make_edge", "DOMAINS", "KINDS", "VERBS"),
    "rolling_graph.store.sidecar": ("SidecarStore",),
    "rolling_graph.core.ids": ("validate_session_id",),
    "rolling_graph.store.journal": ("read_journal",),
    "rolling_graph.core.patch": ("validate_ops", "PatchRejected"),
    "rolling_graph.probe.offline": ("OfflineProbe",),
    "rolling_graph.probe.runner": ("run_probe",),
    "rolling_graph.core.weights": ("strengthen", "weaken"),
    "rolling_graph.core.decay": ("decay_graph",),
    "rolling_graph.core.focus": ("focus_cluster",),
    "rolling_graph.render.lod": ("render_lod", "estimate_tokens"),
    "rolling_graph.render.restore": ("restore_block",),
    "rolling_graph.safety.redact": ("redact",),
    "rolling_graph.hook": ("handle_event",),
}
#: Public name → (module, attribute).
_EXPORTS = {name: (module, name) for module, names in _BY_MODULE.items() for name in names}
_EXPORTS["gate_check"] = ("rolling_graph.capture.gate", "check")
_EXPORTS["rank_names"] = ("rolling_graph.render.rank", "rank")
__all__ = [
    "ConfigError",
    "DOMAINS",
    "KINDS",
    "OfflineProbe",
    "PatchRejected",
    "Settings",
    "SidecarStore",
    "VERBS",
    "decay_graph",
    "estimate_tokens",
    "focus_cluster",
    "gate_check",
    "handle_event",
    "load_settings",
    "make_edge",
    "make_node",
    "new_document",
    "rank_names",
    "read_journal",
    "redact",
    "render_lod",
    "restore_block",
    "run_probe",
    "strengthen",
    "validate_ops",
    "validate_session_id",
    "weaken",
]


def __getattr__(name: str) -> Any:
    target = _EXPORTS.get(name)
    if target is None:
        raise AttributeError(f"module 'rolling_graph' has no attribute {name!r}")
    import importlib

    module_name, attr = target
    return getattr(importlib.import_module(module_name), attr)
