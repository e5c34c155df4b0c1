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
if TYPE_CHECKING:
    from typing import Any

#: Module → the public names it defines (full module names: the import walk in
#: tests/test_import_layers.py reads them as this package's imports).
_BY_MODULE = {
    "rolling_graph.config": ("load_settings", "Settings", "ConfigError"),
    "rolling_graph.model": ("new_document", "make_node", "make_edge", "DOMAINS", "KINDS", "VERBS"),
    "rolling_graph.sidecar": ("SidecarStore",),
    "rolling_graph.ids": ("validate_session_id",),
    "rolling_graph.journal": ("read_journal",),
    "rolling_graph.patch": ("validate_ops", "PatchRejected"),
    "rolling_graph.probe.offline": ("OfflineProbe",),
    "rolling_graph.probe.runner": ("run_probe",),
    "rolling_graph.weights": ("strengthen", "weaken"),
    "rolling_graph.decay": ("decay_graph",),
    "rolling_graph.focus": ("focus_cluster",),
    "rolling_graph.render": ("render_lod", "estimate_tokens"),
    "rolling_graph.restore": ("restore_block",),
    "rolling_graph.redact": ("redact",),
    "rolling_graph.hook": ("handle_event",),
}
#: Public name → (module, attribute).
_EXPORTS = {name: (module, name) for module, names in _BY_MODULE.items() for name in names}
_EXPORTS["gate_check"] = ("rolling_graph.gate", "check")
_EXPORTS["rank_names"] = ("rolling_graph.rank_hot", "rank")
__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> Any:
    target = _EXPORTS.get(name)
    if target is None:
        raise AttributeError(f"module 'rolling_graph' has no attribute {name!r}")
    import importlib

    module_name, attr = target
    return getattr(importlib.import_module(module_name), attr)
