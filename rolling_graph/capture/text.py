"""Untrusted values as bounded text: what a hook payload's fields read as.

:func:`as_text` turns any JSON value of a payload into text within a bound; :data:`TEXT_MAX`
is the bound of an event's text; :data:`ERROR_WORDS` the words that mark a command's output
as reporting a failure. Shared by the payload's events (:mod:`rolling_graph.capture.payload`),
the tools' calls (:mod:`rolling_graph.capture.tools`) and the pending events
(:mod:`rolling_graph.capture.events`); no imports but our JSON encoder (the hook loads this
on every event) and, when a long value is cut, the scrubber.
"""

from __future__ import annotations

from rolling_graph.core import jsonio

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

#: Characters of text kept per event (head and tail; :func:`rolling_graph.capture.events.bounded`).
TEXT_MAX = 2400
#: What a test run's or a task runner's output says when it failed and no count says so: Go's
#: test and build failures (``--- FAIL: TestX``, ``FAIL\tpkg [build failed]``), which say none
#: of the generic words, and mise's ``ERROR task failed``. Read with a newline before the text
#: (the ``FAIL\t`` line may be its first). A passing run prints none of them.
RUN_FAILED_WORDS = ("--- FAIL", "\nFAIL\t", "[build failed]", "[setup failed]", "ERROR task failed")
#: What marks a command's output as reporting a failure: the event's ``error`` flag
#: (:meth:`rolling_graph.capture.tools.ToolCall.text`) reads it, and the probe's reading of a
#: command whose exit status a pipe hid (``go test ./... | tail``) starts from it.
ERROR_WORDS = ("Traceback (most recent call last)", "Error:", "error:", "Exception:", "FAILED", "fatal:", "panicked at",
               *RUN_FAILED_WORDS)


def as_text(value: Any, limit: int) -> str:
    """Any JSON value as text: a string as it is (its head and tail past ``4 × limit``),
    anything else as JSON within ``4 × limit`` characters, nothing as ``""``. What is cut is
    scrubbed first (:func:`rolling_graph.safety.cues.scrub`): a cut through a long token (a
    1Password service account token is ~900 characters) would leave a tail no rule recognises."""
    if value is None:
        return ""
    if not isinstance(value, str):
        try:
            dumped = str(jsonio.dumps(value, default=str))
        except (TypeError, ValueError):
            dumped = str(value)
        return _scrub(dumped)[: limit * 4] if len(dumped) > limit * 4 else dumped
    if len(value) > limit * 4:  # keep the end too: a test run's summary is its last line
        value = _scrub(value)
        return f"{value[: limit * 2]}\n[…]\n{value[-limit * 2 :]}"
    return value


def _scrub(text: str) -> str:
    # Imported when a value is cut, not on every event (the hook's import budget).
    from rolling_graph.safety.cues import scrub

    return scrub(text)
