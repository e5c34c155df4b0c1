"""The Ollama probe: a local model through the official ``ollama`` client.

Same prompt, same parsing and same error model as the Anthropic probe; the answer is
constrained by passing the answer's JSON schema as ``format``. The host comes from
``settings.probe.ollama_host`` (``OLLAMA_HOST`` wins, see :mod:`rolling_graph.core.config`).
The client is imported inside this module only, by the probe process.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any

from rolling_graph.core.config import Settings
from rolling_graph.probe.base import ModelProbe, ProbeResult, estimate_tokens, parse_answer
from rolling_graph.probe.errors import ProbeFailed, retry_delay
from rolling_graph.probe.prompting import PATCH_SCHEMA, PROMPT_VERSION, build_user_message, system_prompt

if TYPE_CHECKING:
    from rolling_graph.core.types import PendingEvent, SessionDoc

_RETRY_STATUS = frozenset({429, 500, 502, 503, 504})


def make_client(settings: Settings, **kwargs: Any) -> Any:
    import ollama

    return ollama.Client(host=settings.probe.ollama_host, timeout=settings.probe.timeout_s, **kwargs)


class OllamaProbe(ModelProbe):
    """A :class:`~rolling_graph.probe.base.ProbeBackend` backed by Ollama's ``/api/chat``."""

    name = "ollama"
    #: The ``format`` schema and the chat template's framing.
    overhead_tokens = 300

    def model_name(self, settings: Settings) -> str:
        return settings.probe.ollama_model

    def make_client(self) -> Any:
        return make_client(self.settings)

    def request(self, events: list[PendingEvent], doc: SessionDoc) -> dict[str, Any]:
        """The keyword arguments of ``Client.chat`` (everything that leaves the machine)."""
        return {
            "model": self.model,
            "messages": [
                {"role": "system", "content": system_prompt(self.bounds)},
                {"role": "user", "content": build_user_message(events, doc, self.bounds)},
            ],
            "format": PATCH_SCHEMA,
            "options": {"temperature": 0, "num_predict": self.bounds.max_output_tokens},
            "stream": False,
        }

    def _call(self, kwargs: dict[str, Any]) -> Any:
        import httpx
        import ollama

        client = self._get_client()
        host = self.settings.probe.ollama_host
        last = "no attempt made"
        for attempt in range(self.max_attempts):
            try:
                return client.chat(**kwargs)
            except ollama.ResponseError as exc:
                status = int(getattr(exc, "status_code", 0) or 0)
                if status == 404:
                    raise ProbeFailed(
                        f"model {self.model!r} not found at {host} (run `ollama pull {self.model}`)",
                        model=self.model,
                        backend=self.name,
                    ) from exc
                last = f"error {status}: {str(getattr(exc, 'error', exc))[:160]}"
                if status not in _RETRY_STATUS:
                    raise ProbeFailed(f"{last}", model=self.model, backend=self.name) from exc
            except httpx.TimeoutException:
                last = f"timed out after {self.settings.probe.timeout_s:g} s"
            except (ConnectionError, httpx.TransportError) as exc:
                raise ProbeFailed(
                    f"not reachable at {host} ({type(exc).__name__})", model=self.model, backend=self.name
                ) from exc
            # Anything else (a body cut short, pydantic refusing it) is turned into
            # ProbeFailed by ModelProbe.run, charged the call's maximum.
            if attempt + 1 < self.max_attempts:
                self._sleep(retry_delay(attempt, base=self._backoff_base))
        raise ProbeFailed(f"{last} after {self.max_attempts} attempts", model=self.model, backend=self.name)

    def call(self, events: list[PendingEvent], doc: SessionDoc) -> ProbeResult:
        kwargs = self.request(events, doc)
        started = time.monotonic()
        messages = kwargs["messages"]
        estimate = estimate_tokens(messages[0]["content"], messages[1]["content"]) + self.overhead_tokens
        self.charge_unread(estimate, self.bounds.max_output_tokens)
        response = self._call(kwargs)
        tokens_in = int(getattr(response, "prompt_eval_count", 0) or 0)
        tokens_out = int(getattr(response, "eval_count", 0) or 0)
        model = str(getattr(response, "model", None) or self.model)
        self.charge_unread(tokens_in, tokens_out)
        message = getattr(response, "message", None)
        content = str(getattr(message, "content", "") or "")
        done_reason = getattr(response, "done_reason", None)
        try:
            if done_reason == "length":
                raise ProbeFailed(f"output: truncated at num_predict ({self.bounds.max_output_tokens})")
            rationale, ops = parse_answer(content, self.bounds)
        except ProbeFailed as exc:
            raise ProbeFailed(
                exc.reason,
                input_tokens=tokens_in,
                output_tokens=tokens_out,
                model=model,
                backend=self.name,
            ) from exc
        return ProbeResult(
            backend=self.name,
            rationale=rationale,
            patch=ops,
            model=model,
            input_tokens=tokens_in,
            output_tokens=tokens_out,
            extra={
                "prompt_version": PROMPT_VERSION,
                "done_reason": done_reason,
                "latency_ms": round((time.monotonic() - started) * 1000),
            },
        )
