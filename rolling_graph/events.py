"""Hook payloads → compact pending events (the probe's input batch).

Everything in a payload is untrusted: values are coerced to strings and bounded (head and
tail kept, with an elision marker). Prompts are redacted here. Tool results, most of a
session's events, are recorded as they are, in the session's 0600 state file beside
Claude Code's own transcript of the same text. The probe redacts every event before a
model sees it or anything is journaled (see :func:`redact_batch`), so a tool result costs
the hook no regular expression at all.
"""

from __future__ import annotations

from . import jsonio

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

#: Characters of text kept per event (head and tail).
TEXT_MAX = 2400
PATHS_MAX = 12
_PATH_KEYS = ("file_path", "path", "notebook_path")
_ERROR_MARKERS = ("Traceback (most recent call last)", "Error:", "error:", "FAILED", "panicked at", "Exception:", "fatal:")


def _iso(dt: Any) -> str:
    from .model import iso

    return iso(dt)


def redact_batch(events: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Redacted copies of pending events: what a probe may see and the journal may keep.

    Events marked ``paths_from_text`` (a compaction summary) get their paths here, from the
    redacted text: the SessionStart hook that queued them skips the entity grammar.
    """
    out = []
    for e in events:
        event = dict(e, text=redact(str(e.get("text") or "")))
        if event.pop("paths_from_text", False):
            from .entities import paths_in

            event["paths"] = list(dict.fromkeys([*event.get("paths", []), *paths_in(event["text"])]))[:PATHS_MAX]
        out.append(event)
    return out


def bounded(text: str, limit: int = TEXT_MAX) -> str:
    if len(text) <= limit:
        return text
    head, tail = limit * 2 // 3, limit // 3
    return f"{text[:head]}\n[… {len(text) - head - tail} chars elided …]\n{text[-tail:]}"


def redact(text: str) -> str:
    from .redact import redact as _redact

    return _redact(text)


def _as_text(value: Any, limit: int) -> str:
    if value is None:
        return ""
    if isinstance(value, str):
        return value[: limit * 4]
    try:
        return jsonio.dumps(value, default=str)[: limit * 4]
    except (TypeError, ValueError):
        return str(value)[: limit * 4]


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
    if any(marker in out for marker in _ERROR_MARKERS):
        is_error = True
    return text, is_error


def event_from_payload(event_name: str, payload: dict[str, Any], event_id: str, at: Any) -> dict[str, Any]:
    """A pending event for the probe, from one hook payload (``at``: ISO string or datetime)."""
    tool = None
    is_error = False
    paths: list[str] = []
    if event_name == "PostToolUse":
        tool = str(payload.get("tool_name") or "tool")[:60]
        text, is_error = _tool_text(tool, payload.get("tool_input"), payload.get("tool_response"))
        inp = payload.get("tool_input")
        if isinstance(inp, dict):
            for key in _PATH_KEYS:
                if isinstance(inp.get(key), str):
                    paths.append(inp[key])
        text = bounded(text)  # redacted by the probe (redact_batch) before any use
    else:
        text = _as_text(payload.get("prompt") or payload.get("text") or "", TEXT_MAX)
        text = bounded(redact(text))  # redact first: a cut must not split a secret or a <private> span
        if event_name == "CompactSummary":  # once per compaction, read by the probe: paths found there
            return {**_event(event_id, event_name, at, text, None, [], False), "paths_from_text": True}
        from .entities import paths_in

        paths.extend(paths_in(text))
    cwd = payload.get("cwd")
    if isinstance(cwd, str) and cwd:
        prefix = cwd.rstrip("/") + "/"
        paths = [p[len(prefix):] if p.startswith(prefix) else p for p in paths]
    return _event(event_id, event_name, at, text, tool, paths, is_error)


def _event(event_id: str, event_name: str, at: Any, text: str, tool: str | None, paths: list[str], error: bool) -> dict[str, Any]:
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
