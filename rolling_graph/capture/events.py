"""Hook payloads → compact pending events (the probe's input batch).

Everything in a payload is untrusted: values are coerced to strings and bounded (head and
tail kept, with an elision marker). ``<private>`` spans leave every field (text, paths,
structured data, ``cwd`` and the transcript path) here, before any cut, by plain string
scanning. Prompts also go through the own secret rules here
(:func:`rolling_graph.safety.redact.redact_fast`); tool results and paths go through them when a
plain-string cue says one could match (:func:`rolling_graph.safety.cues.scrub`), so a tool
result with no credential shape costs the hook no regular expression. The probe redacts
every field of every event in full (own rules and ``detect-secrets``) before a model sees
it or anything is journaled (see :func:`redact_batch`).
"""

from __future__ import annotations

from rolling_graph.core import jsonio

TYPE_CHECKING = False
if TYPE_CHECKING:
    from datetime import datetime
    from typing import Any

    from rolling_graph.core.types import PendingEvent

#: Characters of text kept per event (head and tail).
TEXT_MAX = 2400
PATHS_MAX = 12
_PATH_KEYS = ("file_path", "path", "notebook_path")
#: What marks a line of tool output as reporting an error. One list: the event's ``error``
#: flag and the gate's error signature (:func:`first_error_line`) both read it.
ERROR_WORDS = ("Traceback (most recent call last)", "Error:", "error:", "Exception:", "FAILED", "fatal:", "panicked at")


def _iso(dt: datetime) -> str:
    from rolling_graph.core.clock import iso

    return iso(dt)


def redact_batch(events: list[PendingEvent]) -> list[PendingEvent]:
    """Redacted copies of pending events: what a probe may see and the journal may keep.

    Events marked ``paths_from_text`` (a compaction summary) get their paths here, from the
    redacted text: the SessionStart hook that queued them skips the entity grammar.
    """
    from rolling_graph.safety.private import map_strings

    out: list[PendingEvent] = []
    for e in events:
        event: PendingEvent = {**e, "text": redact(e["text"]), "paths": [redact(p) for p in e["paths"]]}
        if "data" in e:
            event["data"] = map_strings(e["data"], redact)
        if event.pop("paths_from_text", False):
            from rolling_graph.capture.entities import paths_in

            event["paths"] = list(dict.fromkeys([*event["paths"], *paths_in(event["text"])]))[:PATHS_MAX]
        out.append(event)
    return out


#: How far a cut may move back (head) or forward (tail) to fall on whitespace.
_SNAP = 120


def bounded(text: str, limit: int = TEXT_MAX) -> str:
    """Head and tail of ``text`` within ``limit``. ``<private>`` spans go before the cut (a
    span whose opening tag fell in the elided middle would send its tail), and the cut
    moves back to whitespace nearby, so a token is dropped whole rather than halved."""
    if len(text) <= limit:
        return text
    from rolling_graph.safety.private import redact_private

    text = redact_private(text)
    if len(text) <= limit:
        return text
    head, tail = limit * 2 // 3, limit // 3
    snap = min(_SNAP, tail // 4)
    cut_head = max(text.rfind(c, head - snap, head) for c in " \n\t")
    cut_tail = [i for i in (text.find(c, len(text) - tail, len(text) - tail + snap) for c in " \n\t") if i >= 0]
    head_end = cut_head if cut_head > 0 else head
    tail_start = min(cut_tail) if cut_tail else len(text) - tail
    return f"{text[:head_end]}\n[… {tail_start - head_end} chars elided …]\n{text[tail_start:]}"


def redact(text: str) -> str:
    """Everything (the probe's side): ``<private>``, own rules, ``detect-secrets``."""
    from rolling_graph.safety.redact import redact as _redact

    return _redact(text)


def redact_fast(text: str) -> str:
    """What the hook can afford for a prompt: ``<private>`` and the own rules (no library)."""
    from rolling_graph.safety.redact import redact_fast as _redact_fast

    return _redact_fast(text)


def _as_text(value: Any, limit: int) -> str:
    """``value`` as text of about ``limit * 4`` characters at most. What is cut is scrubbed
    first (:func:`rolling_graph.safety.cues.scrub`): a cut through a long token (a 1Password
    service account token is ~900 characters) would leave a tail no rule recognises."""
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
    from rolling_graph.safety.cues import scrub

    return scrub(text)


def _tool_text(tool: str, tool_input: Any, response: Any) -> tuple[str, bool]:
    inp = tool_input if isinstance(tool_input, dict) else {}
    parts: list[str] = []
    is_error = False
    if tool == "Bash":
        parts.append(f"$ {_as_text(inp.get('command'), 300)}")
    elif tool in ("Edit", "MultiEdit", "Write", "NotebookEdit"):
        parts.append(f"{tool} {_as_text(inp.get('file_path') or inp.get('notebook_path'), 300)}")
        body = inp.get("new_string") or inp.get("content") or inp.get("new_source") or ""
        parts.append(_as_text(body, 600)[:600])
    elif tool in ("Read", "Glob", "Grep", "LS"):
        parts.append(f"{tool} {_as_text(inp.get('file_path') or inp.get('pattern') or inp.get('path'), 300)}")
    else:
        parts.append(f"{tool} {_as_text(tool_input, 600)[:600]}")
    out = ""
    if isinstance(response, dict):
        is_error = bool(response.get("is_error")) or bool(response.get("interrupted"))
        out = _as_text(response.get("stdout") or response.get("content") or response.get("output") or "", TEXT_MAX)
        err = _as_text(response.get("stderr") or response.get("error") or "", TEXT_MAX)
        if err:
            out = f"{out}\n{err}" if out else err
        if tool in ("Read",) and not is_error:
            out = ""  # file contents are not events; the path is
    elif response is not None:
        out = _as_text(response, TEXT_MAX)
    if out and tool not in ("Edit", "MultiEdit", "Write", "NotebookEdit", "Read"):
        parts.append(out)
    text = "\n".join(p for p in parts if p)
    if any(word in out for word in ERROR_WORDS):
        is_error = True
    return text, is_error


def first_error_line(text: str) -> str | None:
    """The first line of a tool result that reports an error, stripped. A Python
    traceback's header yields to the line that names the exception (the header is the same
    for every traceback, so it would make every failure look like the last one)."""
    header = None
    for line in text.splitlines():
        if any(word in line for word in ERROR_WORDS):
            if not line.startswith("Traceback ("):
                return line.strip()
            header = header or line.strip()
    return header


def event_from_payload(event_name: str, payload: dict[str, Any], event_id: str, at: str | datetime) -> PendingEvent:
    """A pending event for the probe, from one hook payload (``at``: ISO string or datetime).

    A tool event keeps its paths as the tool named them and the payload's ``cwd``: the gate
    makes them relative to the session's root (:func:`rolling_graph.capture.gate.settle_paths`).
    Its ``data`` holds the structured fields the probe folds (:mod:`rolling_graph.capture.tool_data`).
    ``PostToolUseFailure`` (a failed call: ``error`` instead of ``tool_response``) is a tool
    event whose result is that error.
    """
    tool = None
    is_error = False
    paths: list[str] = []
    data: dict[str, Any] = {}
    if event_name in ("PostToolUse", "PostToolUseFailure"):
        from rolling_graph.capture.tool_data import tool_data

        tool = str(payload.get("tool_name") or "tool")[:60]
        response = payload.get("tool_response")
        if event_name == "PostToolUseFailure":
            response = "Error: " + _as_text(payload.get("error") or "tool call failed", TEXT_MAX)
        text, is_error = _tool_text(tool, payload.get("tool_input"), response)
        data = tool_data(tool, payload.get("tool_input"), response)
        is_error = is_error or bool(data.get("failed"))
        inp = payload.get("tool_input")
        if isinstance(inp, dict):
            for key in _PATH_KEYS:
                if isinstance(inp.get(key), str):
                    paths.append(inp[key])
        # <private> spans leave every field here, before any cut, and so does what the own
        # rules find where a plain-string cue says they could (``re`` only then); the probe
        # adds the library (redact_batch) before any use.
        from rolling_graph.safety.cues import scrub
        from rolling_graph.safety.private import map_strings

        text = bounded(scrub(text))
        paths = [scrub(p) for p in paths]
        data = map_strings(data, scrub)
        event_name = "PostToolUse"
    else:
        text = _as_text(payload.get("prompt") or payload.get("text") or "", TEXT_MAX)
        if event_name == "CompactSummary":  # once per compaction, read by the probe: paths found there
            # The same redaction, cue-gated (rolling_graph.safety.cues): a summary with no
            # cue of a secret costs SessionStart no ``re`` (~5 ms of a 12 ms interpreter).
            from rolling_graph.safety.cues import scrub

            return {**_event(event_id, event_name, at, bounded(scrub(text)), None, [], False), "paths_from_text": True}
        text = bounded(redact_fast(text))  # redact first: a cut must not split a secret or a <private> span
        from rolling_graph.capture.entities import paths_in

        paths.extend(paths_in(text))
    event = _event(event_id, event_name, at, text, tool, paths, is_error)
    if data:
        event["data"] = data
    cwd, transcript = payload.get("cwd"), payload.get("transcript_path")
    if (isinstance(cwd, str) and cwd) or (isinstance(transcript, str) and transcript):
        from rolling_graph.safety.cues import scrub  # paths are stored too: <private> spans and secrets leave them

        if isinstance(cwd, str) and cwd:
            event["cwd"] = scrub(cwd[:4000])[:1000]
        if isinstance(transcript, str) and transcript:
            event["transcript"] = scrub(transcript[:4000])[:1000]
    return event


def _event(event_id: str, event_name: str, at: str | datetime, text: str, tool: str | None, paths: list[str], error: bool) -> PendingEvent:
    return {
        "id": event_id,
        "event": event_name,
        "at": at if isinstance(at, str) else _iso(at),
        "text": text,
        "tool": tool,
        "paths": list(dict.fromkeys(paths))[:PATHS_MAX],
        "error": error,
        "reasons": [],
    }
