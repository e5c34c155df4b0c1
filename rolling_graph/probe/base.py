"""The probe contract shared by every backend (offline, Anthropic, Ollama, Claude Code).

A probe reads the batch of events accumulated since the last probe plus the hot graph
and proposes RFC 6902 operations against the sidecar document, with a short rationale.
Proposals are untrusted: :mod:`rolling_graph.core.patch` validates them before anything is
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
from typing import TYPE_CHECKING, Any, Protocol

from rolling_graph.probe.errors import ProbeFailed
from rolling_graph.probe.prompting import DEFAULT_BOUNDS, build_user_message, parse_output, system_prompt

if TYPE_CHECKING:
    from rolling_graph.core.config import Settings
    from rolling_graph.core.types import PendingEvent, SessionDoc
    from rolling_graph.probe.prompting import PromptBounds

#: UTF-8 bytes per token assumed when estimating a request's input before sending it.
#: Conservative on purpose (English prose runs near 4, CJK text near 3 bytes a token).
BYTES_PER_TOKEN = 3
#: Longest model answer we try to parse (characters); a real one is a few thousand.
MAX_ANSWER_CHARS = 100_000


def estimate_tokens(*texts: str) -> int:
    """An upper-leaning token estimate for ``texts`` (no tokenizer, no network)."""
    return sum(len(t.encode("utf-8", "replace")) for t in texts) // BYTES_PER_TOKEN + 1


def parse_answer(answer: str | dict[str, Any] | None, bounds: PromptBounds) -> tuple[str, list[dict[str, Any]]]:
    """:func:`~rolling_graph.probe.prompting.parse_output`, bounded: an oversized or absurdly
    nested answer is a failed probe with a reason, never a ``RecursionError``."""

    if isinstance(answer, str) and len(answer) > MAX_ANSWER_CHARS:
        raise ProbeFailed(f"output: {len(answer):,} characters, over the bound of {MAX_ANSWER_CHARS:,}")
    try:
        return parse_output(answer, bounds)
    except RecursionError as exc:
        raise ProbeFailed("output: nested too deeply to parse") from exc


def describe_unexpected(exc: BaseException) -> str:
    """A short reason for an exception a backend did not expect (journaled, shown by ``rgraph why``)."""
    import json

    if isinstance(exc, json.JSONDecodeError):
        return f"response: body is not valid JSON, cut short? ({exc.msg} at {exc.pos})"
    if isinstance(exc, RecursionError):
        return "response: nested too deeply to parse"
    return f"{type(exc).__name__}: {str(exc)[:160]}"


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
    #: Cost the provider reported for this call (the ``claude`` CLI does); else estimated from tokens.
    cost_usd: float | None = None


class ModelProbe:
    """What the model backends share: settings, bounds, retry policy, a lazily made client,
    the cost bound of one call, and the error model.

    Subclasses name themselves, say which model setting, how many attempts by default and
    how to make their SDK client (imported only there, never by the hook process), and
    implement :meth:`call`. :meth:`run` lets only :class:`~rolling_graph.probe.errors.ProbeFailed`
    out: anything else a backend raises becomes one, charged what the call may have cost.
    """

    name = "model"
    default_attempts = 2
    #: Requests of one batch that may be billed (retries after unbilled errors excluded).
    billed_requests = 1
    #: Tokens the backend adds around our prompt, per request (its own framing).
    overhead_tokens = 0

    def __init__(
        self,
        settings: Settings,
        client: Any | None = None,
        *,
        bounds: PromptBounds | None = None,
        max_attempts: int | None = None,
        sleep: Callable[[float], None] = time.sleep,
        backoff_base: float = 1.0,
    ) -> None:

        self.settings = settings
        self.model = self.model_name(settings)
        self.bounds = bounds or DEFAULT_BOUNDS
        self.max_attempts = max(1, self.default_attempts if max_attempts is None else max_attempts)
        self._sleep = sleep
        self._backoff_base = backoff_base
        self._client = client
        self._unread_charge: tuple[int, int] = (0, 0)

    def model_name(self, settings: Settings) -> str:  # pragma: no cover - overridden
        raise NotImplementedError

    def make_client(self) -> Any:  # pragma: no cover - overridden
        raise NotImplementedError

    def _get_client(self) -> Any:
        if self._client is None:
            self._client = self.make_client()
        return self._client

    def input_texts(self, events: list[PendingEvent], doc: SessionDoc) -> list[str]:
        """The texts one request carries: the system prompt and the bounded user message."""

        return [system_prompt(self.bounds), build_user_message(events, doc, self.bounds)]

    def max_call_tokens(self, events: list[PendingEvent], doc: SessionDoc) -> int:
        """The most this batch's call can cost in tokens, input and output, every billed
        request included: what the caps are checked against before the call is made."""
        per_request = estimate_tokens(*self.input_texts(events, doc)) + self.overhead_tokens
        return self.billed_requests * (per_request + self.bounds.max_output_tokens)

    def charge_unread(self, input_tokens: int, output_tokens: int) -> None:
        """What the call in progress is charged if it fails before its usage can be read."""
        self._unread_charge = (int(input_tokens), int(output_tokens))

    def call(self, events: list[PendingEvent], doc: SessionDoc) -> ProbeResult:  # pragma: no cover - overridden
        raise NotImplementedError

    def run(self, events: list[PendingEvent], doc: SessionDoc) -> ProbeResult:
        """Propose a patch for ``events``; every failure is a ``ProbeFailed``."""

        self._unread_charge = (0, 0)
        try:
            return self.call(events, doc)
        except ProbeFailed as exc:
            exc.backend = exc.backend or self.name
            exc.model = exc.model or self.model
            raise
        except Exception as exc:  # the error model: nothing else leaves a model backend
            tokens_in, tokens_out = self._unread_charge
            raise ProbeFailed(
                describe_unexpected(exc),
                input_tokens=tokens_in,
                output_tokens=tokens_out,
                model=self.model,
                backend=self.name,
            ) from exc


class ProbeBackend(Protocol):
    name: str

    def run(self, events: list[PendingEvent], doc: SessionDoc) -> ProbeResult:  # pragma: no cover
        ...
