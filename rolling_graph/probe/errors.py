"""Failure of a model probe, and the backoff rule for retrying one.

The runner catches :class:`ProbeFailed` and answers the batch with the offline probe,
journaling ``reason``. Tokens a failed call still consumed travel on the exception so
the cost counters stay honest.
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
    ) -> None:
        super().__init__(reason)
        self.reason = reason
        self.backend = backend
        self.input_tokens = input_tokens
        self.output_tokens = output_tokens
        self.model = model


def retry_delay(
    attempt: int, retry_after: float | None = None, *, base: float = BACKOFF_BASE_S, cap: float = BACKOFF_CAP_S
) -> float:
    """Seconds to wait before retry number ``attempt`` (0-based), never more than ``cap``."""
    if retry_after is not None and 0 <= retry_after <= cap:
        return retry_after
    return min(base * (2**attempt), cap)
