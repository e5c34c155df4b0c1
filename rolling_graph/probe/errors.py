"""Failure of a model probe, and the backoff rule for retrying one.

The error model: :class:`ProbeFailed` is the only error a model backend lets out.
:meth:`rolling_graph.probe.base.ModelProbe.run` translates anything else a backend raises
(a body cut in half, a ``RecursionError`` on absurdly nested output, a bug) into it; the
runner catches it and answers the batch with the offline probe, journaling ``reason``.
Tokens a failed call still consumed travel on the exception so the caps stay honest; a
call whose usage cannot be read is charged its maximum (input estimate + output bound).
"""

from __future__ import annotations

#: Retry backoff: ``base * 2**attempt`` seconds, capped; a server's ``retry-after`` wins when smaller than the cap.
BACKOFF_BASE_S = 1.0
BACKOFF_CAP_S = 8.0


class ProbeFailed(Exception):
    """A model probe could not produce a usable answer for this batch.

    ``reason`` is a short, user-readable phrase without the backend's name (the runner
    journals ``f"{backend}: {reason}"``), e.g. ``"rate limited (429) after 3 attempts"`` or
    ``"output: truncated JSON"``. ``backend`` and ``model`` say who failed.
    """

    def __init__(
        self,
        reason: str,
        *,
        input_tokens: int = 0,
        output_tokens: int = 0,
        model: str | None = None,
        backend: str | None = None,
        cost_usd: float | None = None,
    ) -> None:
        super().__init__(reason)
        self.reason = reason
        self.backend = backend
        self.input_tokens = input_tokens
        self.output_tokens = output_tokens
        self.model = model
        #: Cost the provider reported for the failed call (the ``claude`` CLI does), if any.
        self.cost_usd = cost_usd


def retry_delay(
    attempt: int, retry_after: float | None = None, *, base: float = BACKOFF_BASE_S, cap: float = BACKOFF_CAP_S
) -> float:
    """Seconds to wait before retry number ``attempt`` (0-based), never more than ``cap``."""
    if retry_after is not None and 0 <= retry_after <= cap:
        return float(retry_after)
    return float(min(base * (2**attempt), cap))
