"""JSON for the hook process, without importing ``json``.

``import json`` imports ``re`` (and with it ``enum``, ``functools``, the regex compiler):
about 14 ms on a 2-core laptop, as much as the interpreter's own start, on every one of
a session's 150–240 tool results. Parsing and encoding are done by CPython's C
accelerator ``_json`` anyway; ``json`` only wraps it. This module calls the same
accelerator directly, with ``json``'s semantics (strict strings; ``NaN``/``Infinity``
accepted on input and written on output; non-ASCII written as is). Where ``_json`` is
missing (another interpreter) it falls back to ``json``.
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

try:
    import _json
except ImportError:  # pragma: no cover - not CPython
    _json = None  # type: ignore[assignment]

_WHITESPACE = " \t\n\r"


class _Context:
    """What ``_json.make_scanner`` reads from its context (as ``json.JSONDecoder`` has)."""

    strict = True
    object_hook = None
    object_pairs_hook = None
    parse_float = float
    parse_int = int
    parse_constant = float  # "NaN", "Infinity", "-Infinity"
    memo: dict[str, str] = {}


# (typeshed types the context as the scanner class itself; _Context has what the C code reads)
_scan = _json.make_scanner(_Context()) if _json is not None else None  # type: ignore[arg-type]


def loads(data: bytes | bytearray | str) -> Any:
    """Parse one JSON document (UTF-8 bytes or text). Raises ``ValueError`` when invalid,
    including a document nested too deeply to parse (never ``RecursionError``)."""
    if _scan is None:  # pragma: no cover
        import json

        return json.loads(data)
    text = data.decode("utf-8") if isinstance(data, (bytes, bytearray)) else data
    start = len(text) - len(text.lstrip(_WHITESPACE))
    try:
        obj, end = _scan(text, start)
    except StopIteration as exc:
        raise ValueError(f"JSON: expecting a value at character {exc.value}") from None
    except RecursionError:  # nested deeper than the interpreter's recursion limit: not ours to read
        raise ValueError("JSON: nested too deeply") from None
    except SystemError:
        # The accelerator reports syntax errors through ``json.decoder`` and, on 3.11,
        # only if that module is already loaded. Invalid input is rare: let ``json``
        # parse it again and raise its usual ValueError (JSONDecodeError).
        import json

        try:
            return json.loads(text)
        except RecursionError:
            raise ValueError("JSON: nested too deeply") from None
    if text[end:].strip(_WHITESPACE):
        raise ValueError(f"JSON: extra data at character {end}")
    return obj


def documents(data: bytes | bytearray | str) -> list[Any]:
    """Every JSON document of one line, in order: usually one, but Claude Code sometimes
    appends a row to a line it did not end (``{"type":"assistant",…}{"type":"summary",…}``).
    Stops at the first invalid document (what came before it is kept); ``[]`` when the first
    is invalid or the line is blank."""
    text = data.decode("utf-8", errors="replace") if isinstance(data, (bytes, bytearray)) else data
    try:
        return [loads(text)]
    except ValueError:
        pass
    out: list[Any] = []
    pos = len(text) - len(text.lstrip(_WHITESPACE))
    while pos < len(text):
        try:
            if _scan is None:  # pragma: no cover
                import json

                obj, end = json.JSONDecoder().raw_decode(text, pos)
            else:
                obj, end = _scan(text, pos)
        except (StopIteration, RecursionError, SystemError, ValueError):
            break
        out.append(obj)
        pos = end + len(text[end:]) - len(text[end:].lstrip(_WHITESPACE))
    return out


def deeper_than(obj: Any, limit: int) -> bool:
    """Whether ``obj`` nests lists and objects more than ``limit`` levels (walked without
    recursion, so any depth is safe to ask about)."""
    stack: list[tuple[Any, int]] = [(obj, 1)]
    while stack:
        value, depth = stack.pop()
        if depth > limit:
            return True
        if isinstance(value, dict):
            stack.extend((v, depth + 1) for v in value.values() if isinstance(v, (dict, list)))
        elif isinstance(value, list):
            stack.extend((v, depth + 1) for v in value if isinstance(v, (dict, list)))
    return False


def _fix(text: str) -> str:
    if text.isascii():
        return text
    return "".join("\ufffd" if "\ud800" <= c <= "\udfff" else c for c in text)


def replace_surrogates(obj: Any) -> Any:
    """``obj`` with every lone surrogate (``"\\ud800"`` in JSON text, which no UTF-8 file or
    database can hold) replaced by U+FFFD, in keys and values; walked without recursion."""
    if isinstance(obj, str):
        return _fix(obj)
    root = [obj]
    stack: list[Any] = [root]
    while stack:
        holder = stack.pop()
        items = list(holder.items()) if isinstance(holder, dict) else list(enumerate(holder))
        for key, value in items:
            if isinstance(value, str):
                holder[key] = _fix(value)
            elif isinstance(value, (dict, list)):
                stack.append(value)
            if isinstance(key, str) and not key.isascii() and _fix(key) != key:
                holder[_fix(key)] = holder.pop(key)
    return root[0]


def _no_default(obj: Any) -> Any:
    raise TypeError(f"Object of type {type(obj).__name__} is not JSON serializable")


_encoders: dict[Any, Any] = {}


def dumps(obj: Any, default: Callable[[Any], Any] | None = None) -> str:
    """Compact JSON text (``separators=(",", ":")``, ``ensure_ascii=False``)."""
    if _json is None:  # pragma: no cover
        import json

        return json.dumps(obj, ensure_ascii=False, separators=(",", ":"), default=default)
    encoder = _encoders.get(default)
    if encoder is None:
        # (markers, default, encoder, indent, key_separator, item_separator, sort_keys, skipkeys, allow_nan)
        encoder = _json.make_encoder(None, default or _no_default, _json.encode_basestring, None, ":", ",", False, False, True)
        _encoders[default] = encoder
    return "".join(encoder(obj, 0))
