"""The Anthropic probe: Claude (Haiku by default) through the official ``anthropic`` SDK.

Imported only by the probe process (``import anthropic`` costs over a second): the SDK
is imported inside this module's functions, never at the top, and never by the hook.

One call per batch: temperature 0 where the API version still accepts it (see
:func:`sampling_kwargs`), the versioned system prompt, the bounded user
message from :mod:`rolling_graph.probe.prompting`, and one tool whose input schema is
``{rationale, patch}`` with ``tool_choice`` forcing it, so the answer arrives as JSON.
Rate limits (429), server errors (5xx), overload (529) and connections that fail are
retried with a short exponential backoff (our loop, the SDK's own retries are off,
so tests can inject the sleep); anything else, or running out of attempts, raises
:class:`ProbeFailed`. So does a body cut short or nested too deeply (see
:meth:`~rolling_graph.probe.base.ModelProbe.run`), charged the call's maximum cost, and a
timeout: the request may be billed although no answer came, so it is charged the call's
maximum and not retried.
"""

from __future__ import annotations

import inspect
import os
import time
from typing import TYPE_CHECKING, Any

from rolling_graph.core.config import Settings
from rolling_graph.probe.base import ModelProbe, ProbeResult, estimate_tokens, parse_answer
from rolling_graph.probe.errors import ProbeFailed, retry_delay
from rolling_graph.probe.prompting import PATCH_SCHEMA, PROMPT_VERSION, TOOL_NAME, build_user_message, system_prompt

if TYPE_CHECKING:
    from rolling_graph.core.types import PendingEvent, SessionDoc

_RETRY_STATUS = frozenset({408, 409, 429, 500, 502, 503, 504, 529})
_TOOL_DESCRIPTION = "Record the rationale and the RFC 6902 patch that updates the session graph."


def tool_definition() -> dict[str, Any]:
    return {"name": TOOL_NAME, "description": _TOOL_DESCRIPTION, "input_schema": PATCH_SCHEMA}


def make_client(settings: Settings, **kwargs: Any) -> Any:
    """An ``anthropic.Anthropic`` client with SDK retries off (we retry) and our timeout."""
    import anthropic

    if not os.environ.get("ANTHROPIC_API_KEY") and "api_key" not in kwargs:
        raise ProbeFailed("ANTHROPIC_API_KEY is not set", backend="anthropic")
    try:
        return anthropic.Anthropic(timeout=settings.probe.timeout_s, max_retries=0, **kwargs)
    except anthropic.AnthropicError as exc:
        raise ProbeFailed(f"cannot create client ({exc})", backend="anthropic") from exc


def sampling_kwargs(client: Any) -> dict[str, Any]:
    """``{"temperature": 0}`` where the SDK still takes it, else nothing.

    API version 2026-10-21 (sent by the 2.x SDK) removed the sampling parameters and
    answers 400 to any of them; older SDKs speak 2023-06-01 where temperature 0 is the
    way to ask for a deterministic answer. The forced tool schema constrains the shape
    of the answer either way.
    """
    try:
        params = inspect.signature(client.messages.create).parameters
    except (TypeError, ValueError, AttributeError):
        return {}
    return {"temperature": 0} if "temperature" in params else {}


def _retry_after(exc: Any) -> float | None:
    response = getattr(exc, "response", None)
    headers = getattr(response, "headers", None)
    if headers is None:
        return None
    for name, scale in (("retry-after-ms", 1000.0), ("retry-after", 1.0)):
        raw = headers.get(name)
        if raw is None:
            continue
        try:
            return float(raw) / scale
        except ValueError:
            continue
    return None


def _describe_status(status: int) -> str:
    return {
        400: "request rejected",
        401: "authentication failed (check ANTHROPIC_API_KEY)",
        403: "permission denied",
        404: "model not found",
        413: "request too large",
        429: "rate limited",
        529: "overloaded",
    }.get(status, "server error" if status >= 500 else "request failed")


class AnthropicProbe(ModelProbe):
    """A :class:`~rolling_graph.probe.base.ProbeBackend` backed by the Messages API."""

    name = "anthropic"
    default_attempts = 3
    #: The forced tool's definition and the message framing.
    overhead_tokens = 300

    def model_name(self, settings: Settings) -> str:
        return settings.probe.anthropic_model

    def make_client(self) -> Any:
        return make_client(self.settings)

    def request(self, events: list[PendingEvent], doc: SessionDoc) -> dict[str, Any]:
        """The keyword arguments of ``messages.create`` (everything that leaves the machine)."""
        return {
            "model": self.model,
            "max_tokens": self.bounds.max_output_tokens,
            "system": system_prompt(self.bounds),
            "messages": [{"role": "user", "content": build_user_message(events, doc, self.bounds)}],
            "tools": [tool_definition()],
            "tool_choice": {"type": "tool", "name": TOOL_NAME},
            "metadata": {"user_id": "rolling-graph"},
        }

    def _call(self, kwargs: dict[str, Any]) -> Any:
        import anthropic

        client = self._get_client()
        kwargs = {**kwargs, **sampling_kwargs(client)}
        last = "no attempt made"
        for attempt in range(self.max_attempts):
            retry_after: float | None = None
            try:
                return client.messages.create(**kwargs, timeout=self.settings.probe.timeout_s)
            except anthropic.APITimeoutError as exc:
                # The request was sent and may be billed in full even though no answer came:
                # charged the call's maximum (as the claude backend does), and not sent again
                # (each retry could be billed as well; the day's reservation covers one call).
                tokens_in, tokens_out = self._unread_charge
                raise ProbeFailed(
                    f"timed out after {self.settings.probe.timeout_s:g} s (charged its maximum, not retried)",
                    input_tokens=tokens_in, output_tokens=tokens_out, model=self.model, backend=self.name,
                ) from exc
            except anthropic.APIConnectionError as exc:
                last = f"connection failed ({type(exc.__cause__ or exc).__name__})"
            except anthropic.APIStatusError as exc:
                status = int(getattr(exc, "status_code", 0) or 0)
                last = f"{_describe_status(status)} ({status})"
                if status not in _RETRY_STATUS:
                    raise ProbeFailed(f"{last}", model=self.model, backend=self.name) from exc
                retry_after = _retry_after(exc)
            except anthropic.AnthropicError as exc:
                raise ProbeFailed(
                    f"{type(exc).__name__}: {str(exc)[:200]}", model=self.model, backend=self.name
                ) from exc
            if attempt + 1 < self.max_attempts:
                self._sleep(retry_delay(attempt, retry_after, base=self._backoff_base))
        raise ProbeFailed(f"{last} after {self.max_attempts} attempts", model=self.model, backend=self.name)

    def call(self, events: list[PendingEvent], doc: SessionDoc) -> ProbeResult:
        kwargs = self.request(events, doc)
        started = time.monotonic()
        estimate = estimate_tokens(kwargs["system"], kwargs["messages"][0]["content"]) + self.overhead_tokens
        self.charge_unread(estimate, kwargs["max_tokens"])  # a body we cannot read may still be billed
        response = self._call(kwargs)
        usage = getattr(response, "usage", None)
        tokens_in = int(getattr(usage, "input_tokens", 0) or 0)
        tokens_in += int(getattr(usage, "cache_read_input_tokens", 0) or 0)
        tokens_in += int(getattr(usage, "cache_creation_input_tokens", 0) or 0)
        tokens_out = int(getattr(usage, "output_tokens", 0) or 0)
        model = str(getattr(response, "model", None) or self.model)
        self.charge_unread(tokens_in, tokens_out)

        def failed(reason: str) -> ProbeFailed:
            return ProbeFailed(
                reason,
                input_tokens=tokens_in,
                output_tokens=tokens_out,
                model=model,
                backend=self.name,
            )

        answer: dict[str, Any] | str | None = None
        texts: list[str] = []
        for block in getattr(response, "content", None) or []:
            kind = getattr(block, "type", None)
            if kind == "tool_use" and getattr(block, "name", None) == TOOL_NAME:
                raw = getattr(block, "input", None)
                answer = raw if isinstance(raw, dict) else None
            elif kind == "text":
                texts.append(str(getattr(block, "text", "")))
        stop = getattr(response, "stop_reason", None)
        if stop == "max_tokens":
            raise failed(f"output: truncated at max_tokens ({self.bounds.max_output_tokens})")
        if answer is None:
            answer = "\n".join(texts)
        try:
            rationale, ops = parse_answer(answer, self.bounds)
        except ProbeFailed as exc:
            raise failed(exc.reason) from exc
        return ProbeResult(
            backend=self.name,
            rationale=rationale,
            patch=ops,
            model=model,
            input_tokens=tokens_in,
            output_tokens=tokens_out,
            extra={
                "prompt_version": PROMPT_VERSION,
                "stop_reason": stop,
                "latency_ms": round((time.monotonic() - started) * 1000),
            },
        )
