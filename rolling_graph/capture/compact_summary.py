"""Claude's compaction summary: the text of a transcript's ``isCompactSummary`` line.

Read by the ``SessionStart(compact)`` hook, from the transcript's tail, and by the
transcript parser (:mod:`rolling_graph.replay.transcript`), line by line. Transcript lines are
untrusted: a summary line of the wrong shape gives no text, never an exception (the hook
would lose the whole restore block to one odd line). The hook process loads this module:
nothing here is imported before it is needed.
"""

from __future__ import annotations

#: How much of the transcript's end the hook reads for the latest summary (it is the last
#: or nearly the last line when ``SessionStart(compact)`` runs).
TAIL_BYTES = 512 * 1024


def blocks_text(content: object) -> str:
    """The text of a message's content blocks that hold text, joined (``""`` if it is no list)."""
    if not isinstance(content, list):
        return ""
    return "\n".join(b["text"] for b in content if isinstance(b, dict) and isinstance(b.get("text"), str))


def summary_text(line: object) -> str | None:
    """The summary of an ``isCompactSummary`` line (a string, or the text blocks of a list,
    joined; ``""`` when it holds neither), ``None`` for any other line."""
    if not isinstance(line, dict) or line.get("isCompactSummary") is not True:
        return None
    message = line.get("message")
    content = message.get("content") if isinstance(message, dict) else None
    return content if isinstance(content, str) else blocks_text(content)


def latest_summary(transcript_path: object) -> str | None:
    """The latest compaction summary in the transcript at ``transcript_path`` (within its
    last :data:`TAIL_BYTES`; ``""`` if that line holds no text), ``None`` if there is none
    yet or the path is no regular file."""
    if not isinstance(transcript_path, str) or not transcript_path:
        return None
    from rolling_graph.core import jsonio
    from rolling_graph.store.userfile import read_tail

    tail = read_tail(transcript_path, TAIL_BYTES)  # a regular file's last bytes only (never /dev/zero, a FIFO)
    if tail is None:
        return None
    for raw in reversed(tail.splitlines()):
        if b"isCompactSummary" not in raw:
            continue
        for row in reversed(jsonio.documents(raw)):  # (a row appended to a line not ended: each)
            text = summary_text(row)
            if text is not None:
                return text
    return None
