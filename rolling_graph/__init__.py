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
* What the model sees — :func:`render_lod`, :func:`estimate_tokens`, :func:`redact`
* Hook entry — :func:`handle_event` (``rgraph-hook``'s logic, in-process)
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

_EXPORTS = {
    "load_settings": "config", "Settings": "config", "ConfigError": "config",
    "new_document": "model", "make_node": "model", "make_edge": "model",
    "DOMAINS": "model", "KINDS": "model", "VERBS": "model",
    "SidecarStore": "sidecar", "validate_session_id": "sidecar", "read_journal": "journal",
    "validate_ops": "patch", "PatchRejected": "patch",
    "gate_check": "gate:check", "OfflineProbe": "probe.offline", "run_probe": "probe.runner",
    "strengthen": "weights", "weaken": "weights", "decay_graph": "decay", "focus_cluster": "focus",
    "render_lod": "render", "estimate_tokens": "render", "redact": "redact",
    "handle_event": "hook",
}
__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> Any:
    target = _EXPORTS.get(name)
    if target is None:
        raise AttributeError(f"module 'rolling_graph' has no attribute {name!r}")
    module_name, _, attr = target.partition(":")
    import importlib

    module = importlib.import_module(f"{__name__}.{module_name}")
    return getattr(module, attr or name)
