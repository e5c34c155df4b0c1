"""The ids of the hot graph: session ids (file names under ``sessions/``), node ids (slugs)
and edge keys (``source|relationship|target``).

All checked and built without ``re``: the hook slugifies file paths on every tool result and
validates a session id on every event.
"""

from __future__ import annotations

from rolling_graph.core.errors import RollingGraphError

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import TypeGuard

# -- session ids --------------------------------------------------------------------------------
_ID_FIRST = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789")
_ID_CHARS = _ID_FIRST | frozenset("_.-")


def is_session_id(sid: str) -> bool:
    """``[A-Za-z0-9][A-Za-z0-9_.-]{0,127}`` and no ``..`` (checked without ``re``)."""
    return 0 < len(sid) <= 128 and sid[0] in _ID_FIRST and all(c in _ID_CHARS for c in sid) and ".." not in sid


class InvalidSessionId(RollingGraphError, ValueError):
    """The session id is not a plain id (path separators, ``..``, control chars, too long)."""


def validate_session_id(sid: object) -> str:
    if not isinstance(sid, str) or not is_session_id(sid):
        shown = repr(sid)[:40]
        raise InvalidSessionId(f"refusing session id {shown}: expected letters, digits, '-', '_' or '.' (at most 128)")
    return sid


# -- node ids and edge keys ---------------------------------------------------------------------
ID_MAX = 64

_SLUG_CHARS = frozenset("abcdefghijklmnopqrstuvwxyz0123456789")
_ID_BODY = _SLUG_CHARS | {"-"}


def is_node_id(value: object) -> TypeGuard[str]:
    """``[a-z0-9][a-z0-9-]{0,63}``, checked without ``re`` (the SessionStart hook validates
    every snapshot node with it). Unlike a ``$``-anchored pattern, no trailing newline."""
    return isinstance(value, str) and 0 < len(value) <= ID_MAX and value[0] in _SLUG_CHARS and all(c in _ID_BODY for c in value)


def slugify(label: str) -> str:
    """Stable node id from a label: ``"Use PostgreSQL!"`` -> ``"use-postgresql"``."""
    # (No regex: the hook slugifies file paths on every tool result and must not pay for
    # importing ``re``.) Every run of characters outside [a-z0-9] becomes one "-".
    low = label.lower()
    spaced = "".join(c if c in _SLUG_CHARS else " " for c in low)
    slug = "-".join(spaced.split())
    if not low.isascii() and _beyond_latin(low):
        # Letters of a script beyond Latin (Chinese, Japanese, Korean, Cyrillic) leave no trace
        # in the ASCII slug: every such request would be one node ("node"), every such file of a
        # directory one file (``src/設定.py`` and ``src/接続.py`` both "src-py"). Its hash first,
        # so that a cut at any length keeps it; a Latin label (``módulo uno.py``) is as it was.
        from zlib import crc32

        slug = f"u{crc32(low.encode('utf-8', 'surrogatepass')):08x}" + (f"-{slug}" if slug else "")
    if len(slug) > ID_MAX:
        slug = slug[:ID_MAX].rstrip("-")
    return slug or "node"


def _beyond_latin(low: str) -> bool:
    """Does ``low`` hold a letter of a script beyond Latin (past U+024F)?"""
    return any(c > "\u024f" and c.isalpha() for c in low)


def name_id(name: str) -> str:
    """Node id of a code name: its slug, with a dot kept as ``-dot-`` so ``session.cwd`` and
    ``session_cwd`` stay two names; a leading ``@``/``:`` and an arity (``name/2``) dropped."""
    core = name.lstrip("@:")
    head, slash, arity = core.rpartition("/")
    if slash and arity.isdigit() and head:
        core = head
    return slugify(core.replace(".", " dot "))


def edge_key(source: str, relationship: str, target: str) -> str:
    return f"{source}|{relationship}|{target}"


def pointer_parts(path: object) -> list[str]:
    """An RFC 6901 JSON pointer's unescaped parts (``[]`` for anything else)."""
    if not isinstance(path, str) or not path.startswith("/"):
        return []
    return [p.replace("~1", "/").replace("~0", "~") for p in path[1:].split("/")]
