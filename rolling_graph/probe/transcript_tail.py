"""The assistant's own words: its text from the transcript, since the last probe.

Hooks never see what Claude writes between tool calls — its plans, findings and choices.
The transcript has them, so the probe (a detached process, never the hook) reads the
transcript from where it stopped last time and adds each assistant text as an
``AssistantText`` event to its batch, in time order. The same read sees each edit's whole
input (the hook keeps only the head of a 10 kB Write): the code names in it are attached to
the matching tool event of the batch as ``data["names"]``, and every code name the input
uses, the code it replaces included, as ``data["mentions"]`` (:mod:`.offline_mentions`;
a name only the replaced code has is marked ``-name``).

Bounded and honest:

* at most :data:`MAX_READ` bytes a probe; a longer stretch is skipped to its last part
* only complete lines, and only lines stamped no later than the batch's last event: the
  probe never reads past the moment it stands for, even when the file already holds more
  (a replay of a finished recording), and the offset stops before such a line
* the transcript is untrusted text: lines that are not JSON objects are skipped, and
  the batch is redacted afterwards with everything else
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from rolling_graph.capture.events import bounded
from rolling_graph.capture.tools import EDIT_TOOLS, FileEdit, parse_tool
from rolling_graph.core import jsonio
from rolling_graph.core.filepaths import posix_path
from rolling_graph.probe.code_names import code_names, defined_names, file_names, frequent_names, module_paths
from rolling_graph.store.userfile import read_regular, regular_size

if TYPE_CHECKING:
    from rolling_graph.core.types import PendingEvent
    from rolling_graph.store.sidecar import SidecarStore

MAX_READ = 1 << 20
MAX_EVENTS = 30
EVENT_NAME = "AssistantText"


def _text_of(line: dict[str, Any]) -> str:
    message = line.get("message")
    content = message.get("content") if isinstance(message, dict) else None
    if not isinstance(content, list):
        return ""
    parts = [b.get("text") for b in content if isinstance(b, dict) and b.get("type") == "text" and isinstance(b.get("text"), str)]
    return "\n".join(p.strip() for p in parts if p and p.strip())


NAMES_PER_INPUT = 40
#: Most code names of one input kept as its mentions (a 10 kB Write uses 100–200).
MENTIONS_PER_INPUT = 200

#: ``(tool, path, names, mentions)`` of one edit in the transcript.
Edit = tuple[str, str, list[str], list[str]]


def _input_names(text: str) -> list[str]:
    """Code names of an edit's whole new code (``text``): what it defines, then what it uses most."""
    return list(dict.fromkeys(defined_names(text, 15) + frequent_names(text, NAMES_PER_INPUT)))[:NAMES_PER_INPUT]


def _input_mentions(call: FileEdit, text: str) -> list[str]:
    """Every code name an edit's whole input uses, in order: the new code's (``text``), then
    those only the code it replaces has (prefixed ``-``: touched, but gone from the code)."""
    new = module_paths(text) + code_names(text, MENTIONS_PER_INPUT) + file_names(text)
    if not call.REPLACES:
        return new
    seen = set(new)
    gone = [n for n in code_names(call.old_code(), MENTIONS_PER_INPUT) if n not in seen]
    return (new + ["-" + n for n in gone])[:MENTIONS_PER_INPUT]


def _edits_of(line: dict[str, Any]) -> list[Edit]:
    message = line.get("message")
    content = message.get("content") if isinstance(message, dict) else None
    out = []
    for block in content if isinstance(content, list) else []:
        tool = block.get("name") if isinstance(block, dict) and block.get("type") == "tool_use" else None
        if isinstance(tool, str) and tool in EDIT_TOOLS:  # (a name of the wrong type is no tool: never a key)
            call = parse_tool(tool, block.get("input"))
            if isinstance(call, FileEdit) and call.file:
                text = call.new_code()  # the new code, joined once for both
                out.append((tool, posix_path(call.file), _input_names(text), _input_mentions(call, text)))
    return out


def read_assistant_text(path: str, offset: int, until: str | None, *, align: bool = False,
                        edits: list[Edit] | None = None) -> tuple[list[tuple[str, str]], int]:
    """``([(timestamp, text), ...], new_offset)`` of assistant lines from ``offset``; the
    edits those lines request are appended to ``edits`` as ``(tool, path, names, mentions)``.

    ``until``: an ISO timestamp; the first line stamped later stops the read. ``align``:
    ``offset`` may fall inside a line (first sight of a file), which is then skipped.
    """

    size = regular_size(path)  # only a regular file, and only MAX_READ of it (never /dev/zero, a FIFO)
    if size is None:
        return [], offset
    if offset > size:
        offset = 0  # a new or truncated file
    got = read_regular(path, MAX_READ, max(offset, size - MAX_READ))
    if got is None:
        return [], offset
    chunk, start, _ = got
    pos = 0
    if start > offset or (align and start > 0):  # skipped ahead: drop the partial first line
        cut = chunk.find(b"\n")
        pos = cut + 1 if cut >= 0 else len(chunk)
    limit = (until or "")[:19]
    found: list[tuple[str, str]] = []
    while True:
        end = chunk.find(b"\n", pos)
        if end < 0:
            break  # an incomplete last line: read it next time
        raw = chunk[pos:end]
        # (a row appended to a line Claude Code did not end: both rows)
        rows = [(line, _stamp(line)) for line in (jsonio.documents(raw) if raw.strip() else ()) if isinstance(line, dict)]
        if limit and any(ts and ts[:19] > limit for _, ts in rows):
            break  # written after the moment this batch stands for: the whole line waits for the next
        for line, ts in rows:
            if line.get("type") == "assistant" and line.get("isSidechain") is not True:
                text = _text_of(line)
                if text:
                    found.append((ts, text))
                if edits is not None:
                    edits.extend(_edits_of(line))
        pos = end + 1
    return found[-MAX_EVENTS:], start + pos


def _stamp(line: dict[str, Any]) -> str:
    stamp = line.get("timestamp")
    return stamp if isinstance(stamp, str) else ""


def attach_names(batch: list[PendingEvent], edits: list[Edit]) -> None:
    """Give each edit's whole-input names and mentions to its tool event (same tool and
    path, in order)."""
    used: set[int] = set()
    for tool, path, names, mentions in edits:
        if not names and not mentions:
            continue
        for i, event in enumerate(batch):
            if i in used or event["tool"] != tool or event["event"] != "PostToolUse":
                continue
            paths = event["paths"]
            if paths and (path == paths[0] or path.endswith("/" + paths[0])):
                event["data"] = {**event.get("data", {}), "names": names, "mentions": mentions}
                used.add(i)
                break


def merge(batch: list[PendingEvent], texts: list[tuple[str, str]]) -> list[PendingEvent]:
    """The batch with assistant texts placed before the first event not earlier than them."""
    if not texts:
        return batch
    out: list[PendingEvent] = []
    i = 0
    for ts, text in texts:
        stamp = (ts[:19] + "Z") if ts else ""
        while i < len(batch) and stamp and batch[i]["at"][:19] < stamp[:19]:
            out.append(batch[i])
            i += 1
        anchor = batch[i]["id"] if i < len(batch) else (batch[-1]["id"] if batch else "e0")
        seq = str(anchor)[1:] if str(anchor)[1:].isdigit() else "0"
        out.append({"id": f"a{seq}", "event": EVENT_NAME, "at": stamp or (batch[-1]["at"] if batch else ""), "text": bounded(text),
                    "tool": None, "paths": [], "error": False, "reasons": []})
    out.extend(batch[i:])
    return out


def with_assistant_text(store: SidecarStore, sid: str, batch: list[PendingEvent]) -> list[PendingEvent]:
    """``batch`` with the assistant's text written since the last probe (offset kept in
    the gate state). Nothing changes when the transcript is unknown or unreadable."""
    if not batch:
        return batch
    with store.hook_transaction(sid, index="none") as view:  # the state alone: no graph parsed
        gate = view.state["gate"]
        path = gate.get("transcript")
        if not isinstance(path, str) or not path:
            return batch
        offset = gate.get("transcript_offset") if gate.get("transcript_for") == path else None
        align = not isinstance(offset, int) or offset < 0
        if align:

            size = regular_size(path)  # first sight of this file: start at its last stretch, not a resumed session's history
            if size is None:
                return batch
            offset = max(0, size - MAX_READ)
        until = max(e["at"] for e in batch)
        edits: list[Edit] = []
        texts, new_offset = read_assistant_text(path, int(offset or 0), until, align=align, edits=edits)
        gate["transcript_for"], gate["transcript_offset"] = path, new_offset
    batch = [dict(e) for e in batch]  # type: ignore[misc]
    attach_names(batch, edits)
    return merge(batch, texts)
