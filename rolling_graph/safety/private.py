"""``<private>`` spans: the user's own way to keep text out of memory, read tolerantly.

A user who writes ``<private>`` means it, however it is typed, so the tag is recognised
with any spacing (``< private >``, ``<private\\n>``), any case, attributes
(``<private reason="x">``), backslash-escaped whitespace (a tag inside JSON text reads
``<private\\n>`` with a literal backslash) and nesting: the outermost pair wins, so an
inner ``</private>`` does not end the span early. An opening tag with no matching close
hides everything to the end of the text, and so does an opening tag that never reaches
its ``>``. ``<private/>`` is an empty span. Words that merely start with ``private``
(``<privateKey>``, ``<private-notes>``) are not the tag.

Plain string scanning, no ``re``: the hook runs this on every tool result before the
text is shortened (a span whose opening tag fell in an elided middle would otherwise
send its tail).
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

__all__ = ["PRIVATE_MARK", "map_strings", "redact_private"]

PRIVATE_MARK = "[REDACTED:private]"

_WORD = "private"
_SPACE = " \t\n\r\f\v"
#: Backslash escapes that stand for whitespace in JSON- or shell-quoted text.
_ESCAPED_SPACE = "ntrfv"
#: How far a tag may stretch between ``<`` and ``private`` and from ``private`` to ``>``.
_NEAR = 64
_ATTRS_MAX = 2000


def _skip_space_back(low: str, k: int) -> int:
    """Index of the last character before ``k`` that is not (escaped) whitespace, or -1."""
    stop = max(-1, k - 1 - _NEAR)
    i = k - 1
    while i > stop:
        c = low[i]
        if c in _SPACE:
            i -= 1
        elif c in _ESCAPED_SPACE and i > 0 and low[i - 1] == "\\":
            i -= 2
        else:
            return i
    return -1


def _tag_end(low: str, k: int) -> tuple[int, bool]:
    """From just after ``private``: (index after the closing ``>``, self-closing?).

    Attribute values in quotes may hold ``>``. No ``>`` within reach: the tag runs to the end.
    """
    n = len(low)
    quote = ""
    last = ""
    stop = min(n, k + _ATTRS_MAX)
    i = k
    while i < stop:
        c = low[i]
        if quote:
            if c == quote:
                quote = ""
        elif c in "\"'":
            quote = c
        elif c == ">":
            return i + 1, last == "/"
        if c not in _SPACE:
            last = c
        i += 1
    return n, False


def _next_tag(low: str, start: int) -> tuple[int, int, str] | None:
    """The next ``<private …>`` or ``</private>`` at or after ``start``: (begin, end, kind).

    ``kind`` is ``"open"``, ``"close"`` or ``"empty"`` (``<private/>``).
    """
    n = len(low)
    k = low.find(_WORD, start)
    while k >= 0:
        after = low[k + len(_WORD)] if k + len(_WORD) < n else ">"
        if after in _SPACE or after in ">/\\":
            i = _skip_space_back(low, k)
            if i >= start and low[i] == "<":
                end, empty = _tag_end(low, k + len(_WORD))
                return i, end, "empty" if empty else "open"
            if i >= 0 and low[i] == "/":
                j = _skip_space_back(low, i)
                if j >= 0 and low[j] == "<" and j >= start:
                    end, _ = _tag_end(low, k + len(_WORD))
                    return j, end, "close"
        k = low.find(_WORD, k + 1)
    return None


def redact_private(text: str) -> str:
    """Replace every outermost ``<private>`` span (tags included) with ``[REDACTED:private]``."""
    if not text:
        return text
    low = text.lower()
    if _WORD not in low:
        return text
    out: list[str] = []
    pos = 0
    n = len(text)
    while pos < n:
        tag = _next_tag(low, pos)
        while tag is not None and tag[2] == "close":  # a stray close outside any span: leave it
            tag = _next_tag(low, tag[1])
        if tag is None:
            break
        begin, end, kind = tag
        depth = 0 if kind == "empty" else 1
        while depth:
            inner = _next_tag(low, end) if end < n else None
            if inner is None:
                end = n  # unclosed: private to the end
                break
            end = inner[1]
            depth += {"open": 1, "close": -1}.get(inner[2], 0)
        out.append(text[pos:begin])
        out.append(PRIVATE_MARK)
        pos = end
    if not out:
        return text
    out.append(text[pos:])
    return "".join(out)


def map_strings(value: Any, fn: Callable[[str], str]) -> Any:
    """``value`` with ``fn`` applied to every string in it (lists and dict values, nested;
    keys and other types unchanged): how a structured field is redacted."""
    if isinstance(value, str):
        return fn(value)
    if isinstance(value, list):
        return [map_strings(v, fn) for v in value]
    if isinstance(value, dict):
        return {k: map_strings(v, fn) for k, v in value.items()}
    return value
