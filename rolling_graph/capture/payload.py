"""The hook payload, typed once at the door.

Claude Code sends each hook event as a JSON object (``session_id``, ``cwd``,
``transcript_path``, and per event ``prompt``, ``tool_name``/``tool_input``/``tool_response``,
``source`` …); every value in it is untrusted and any field may be missing or of another
type. :func:`parse` reads one payload, once, into a typed event:

* :class:`Prompt` (UserPromptSubmit) and :class:`CompactSummary` (Claude's compaction
  summary, queued by SessionStart): the text;
* :class:`ToolResult` (PostToolUse, PostToolUseFailure): the call, typed by its tool
  (:mod:`rolling_graph.capture.tools`: a class per tool, and what its text, paths and
  structured data are);
* :class:`SessionStart`, and :class:`Payload` for the other session events (Stop,
  PreCompact, SessionEnd).

Nothing past here reads the payload's dict. Plain classes with ``__slots__`` and string
operations: this runs in the hook on every event (no ``re``, no ``json``, no ``dataclasses``,
no ``typing`` at run time); the tools' classes load only for a tool result.
"""

from __future__ import annotations

from rolling_graph.capture.text import TEXT_MAX, as_text

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from rolling_graph.capture.tools import ToolCall

def _str(value: Any) -> str | None:
    return value if isinstance(value, str) else None


# -- the events -------------------------------------------------------------------------------
class Payload:
    """What every hook event carries and we read: the session, its ``cwd`` and transcript
    (each ``None`` when absent or not a string). Stop, PreCompact and SessionEnd are this."""

    __slots__ = ("event", "session_id", "cwd", "transcript_path")

    def __init__(self, event: str, raw: dict[str, Any]) -> None:
        self.event = event
        self.session_id: Any = raw.get("session_id")  # validated by rolling_graph.core.ids.validate_session_id
        self.cwd = _str(raw.get("cwd"))
        self.transcript_path = _str(raw.get("transcript_path"))


class SessionStart(Payload):
    """SessionStart: ``source`` is ``startup``, ``resume``, ``clear``, ``compact`` (or ``fork``)."""

    __slots__ = ("source",)

    def __init__(self, event: str, raw: dict[str, Any]) -> None:
        super().__init__(event, raw)
        source = raw.get("source")
        self.source = source if isinstance(source, str) else "startup"


class Prompt(Payload):
    """UserPromptSubmit: what the user typed (``text`` too, for a payload built by hand)."""

    __slots__ = ("text",)

    def __init__(self, event: str, raw: dict[str, Any]) -> None:
        super().__init__(event, raw)
        self.text = as_text(raw.get("prompt") or raw.get("text") or "", TEXT_MAX)


class CompactSummary(Payload):
    """Claude's compaction summary, read from the transcript and queued for the probe."""

    __slots__ = ("text",)

    def __init__(self, event: str, raw: dict[str, Any]) -> None:
        super().__init__(event, raw)
        self.text = as_text(raw.get("prompt") or raw.get("text") or "", TEXT_MAX)


class ToolResult(Payload):
    """PostToolUse, and PostToolUseFailure (a failed call: ``error`` instead of a
    ``tool_response``; the same tool event to us, its result being that error).
    ``subagent``: a subagent called the tool (Claude Code's ``agent_id``, absent for the
    main thread)."""

    __slots__ = ("call", "subagent")

    def __init__(self, event: str, raw: dict[str, Any]) -> None:
        super().__init__(event, raw)
        self.subagent = bool(_str(raw.get("agent_id")))
        response = raw.get("tool_response")
        if event == "PostToolUseFailure":
            response = "Error: " + as_text(raw.get("error") or "tool call failed", TEXT_MAX)
        from rolling_graph.capture.tools import parse_tool

        self.call: ToolCall = parse_tool(str(raw.get("tool_name") or "tool")[:60], raw.get("tool_input"), response)


def parse(event: str, raw: dict[str, Any]) -> Payload:
    """One hook payload (``event``: Claude Code's ``hook_event_name``, or ``CompactSummary``)."""
    if event in ("PostToolUse", "PostToolUseFailure"):
        return ToolResult(event, raw)
    if event == "UserPromptSubmit":
        return Prompt(event, raw)
    if event == "CompactSummary":
        return CompactSummary(event, raw)
    if event == "SessionStart":
        return SessionStart(event, raw)
    return Payload(event, raw)
