"""The probe contract shared by every backend (offline, Anthropic, Ollama).

A probe reads the batch of events accumulated since the last probe plus the hot graph
and proposes RFC 6902 operations against the sidecar document, with a short rationale.
Proposals are untrusted: :mod:`rolling_graph.patch` validates them before anything is
applied, and weight arithmetic is always ours, never the model's.

A pending event (as stored in ``doc["gate"]["pending"]``) is a dict::

    {"id": "e17", "event": "UserPromptSubmit" | "PostToolUse" | "CompactSummary" | ...,
     "at": "2026-11-25T21:04:00Z", "text": "...(bounded)...", "tool": "Edit" | None,
     "paths": ["src/app.py"], "reasons": ["decision"]}
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Protocol


@dataclass
class ProbeResult:
    backend: str
    rationale: str
    patch: list[dict[str, Any]]
    model: str | None = None
    input_tokens: int = 0
    output_tokens: int = 0
    #: Set when a model backend failed and the offline probe answered instead.
    fallback_reason: str | None = None
    extra: dict[str, Any] = field(default_factory=dict)


class ProbeBackend(Protocol):
    name: str

    def run(self, events: list[dict[str, Any]], doc: dict[str, Any]) -> ProbeResult:  # pragma: no cover
        ...
