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

import time
from collections.abc import Callable
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


class ModelProbe:
    """What the model backends share: settings, bounds, retry policy, a lazily made client.

    Subclasses name themselves and say which model setting, how many attempts by default
    and how to make their SDK client (imported only there, never by the hook process).
    """

    name = "model"
    default_attempts = 2

    def __init__(
        self,
        settings: Any,
        client: Any | None = None,
        *,
        bounds: Any | None = None,
        max_attempts: int | None = None,
        sleep: Callable[[float], None] = time.sleep,
        backoff_base: float = 1.0,
    ) -> None:
        from .prompting import DEFAULT_BOUNDS

        self.settings = settings
        self.model = self.model_name(settings)
        self.bounds = bounds or DEFAULT_BOUNDS
        self.max_attempts = max(1, self.default_attempts if max_attempts is None else max_attempts)
        self._sleep = sleep
        self._backoff_base = backoff_base
        self._client = client

    def model_name(self, settings: Any) -> str:  # pragma: no cover - overridden
        raise NotImplementedError

    def make_client(self) -> Any:  # pragma: no cover - overridden
        raise NotImplementedError

    def _get_client(self) -> Any:
        if self._client is None:
            self._client = self.make_client()
        return self._client


class ProbeBackend(Protocol):
    name: str

    def run(self, events: list[dict[str, Any]], doc: dict[str, Any]) -> ProbeResult:  # pragma: no cover
        ...
