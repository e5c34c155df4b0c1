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

from rolling_graph.capture.payload import CompactSummary, Prompt, ToolResult, parse
from rolling_graph.capture.text import TEXT_MAX

TYPE_CHECKING = False
if TYPE_CHECKING:
    from datetime import datetime
    from typing import Any

    from rolling_graph.core.types import PendingEvent

PATHS_MAX = 12


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


def event_from_payload(event_name: str, payload: dict[str, Any], event_id: str, at: str | datetime) -> PendingEvent:
    """A pending event for the probe, from one hook payload (``at``: ISO string or datetime):
    :func:`pending_event` of the payload parsed (:func:`rolling_graph.capture.payload.parse`)."""
    parsed = parse(event_name, payload)
    if not isinstance(parsed, (ToolResult, CompactSummary, Prompt)):
        parsed = Prompt(event_name, payload)  # (another event's text is read as a prompt's)
    return pending_event(parsed, event_id, at)


def pending_event(event: ToolResult | Prompt | CompactSummary, event_id: str, at: str | datetime) -> PendingEvent:
    """A pending event for the probe, from one parsed hook event.

    A tool event keeps its paths as the tool named them and the payload's ``cwd``: the gate
    makes them relative to the session's root (:func:`rolling_graph.capture.gate.settle_paths`).
    Its ``data`` holds the structured fields the probe folds (:meth:`rolling_graph.capture.tools.ToolCall.data`).
    A failed call (``PostToolUseFailure``) is a tool event whose result is its error.
    """
    if isinstance(event, ToolResult):
        call = event.call
        text, is_error = call.text()
        data = call.data()
        # <private> spans leave every field here, before any cut, and so does what the own
        # rules find where a plain-string cue says they could (``re`` only then); the probe
        # adds the library (redact_batch) before any use.
        from rolling_graph.safety.cues import scrub
        from rolling_graph.safety.private import map_strings

        pending = _event(event_id, "PostToolUse", at, bounded(scrub(text)), call.name, [scrub(p) for p in call.paths],
                         is_error)
        data = map_strings(data, scrub)
        if data:
            pending["data"] = data
        if event.subagent:
            pending["subagent"] = True
    elif isinstance(event, CompactSummary):  # once per compaction, read by the probe: paths found there
        # The same redaction, cue-gated (rolling_graph.safety.cues): a summary with no
        # cue of a secret costs SessionStart no ``re`` (~5 ms of a 12 ms interpreter).
        from rolling_graph.safety.cues import scrub

        return {**_event(event_id, event.event, at, bounded(scrub(event.text)), None, [], False), "paths_from_text": True}
    else:
        text = bounded(redact_fast(event.text))  # redact first: a cut must not split a secret or a <private> span
        from rolling_graph.capture.entities import paths_in

        pending = _event(event_id, event.event, at, text, None, paths_in(text, event.cwd or None), False)
    cwd, transcript = event.cwd, event.transcript_path
    if cwd or transcript:
        from rolling_graph.safety.cues import scrub  # paths are stored too: <private> spans and secrets leave them

        if cwd:
            pending["cwd"] = scrub(cwd[:4000])[:1000]
        if transcript:
            pending["transcript"] = scrub(transcript[:4000])[:1000]
    return pending


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
