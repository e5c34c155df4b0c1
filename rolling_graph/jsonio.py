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


_scan = _json.make_scanner(_Context()) if _json is not None else None


def loads(data: bytes | bytearray | str) -> Any:
    """Parse one JSON document (UTF-8 bytes or text). Raises ``ValueError`` when invalid."""
    if _scan is None:  # pragma: no cover
        import json

        return json.loads(data)
    text = data.decode("utf-8") if isinstance(data, (bytes, bytearray)) else data
    start = len(text) - len(text.lstrip(_WHITESPACE))
    try:
        obj, end = _scan(text, start)
    except StopIteration as exc:
        raise ValueError(f"JSON: expecting a value at character {exc.value}") from None
    except SystemError:
        # The accelerator reports syntax errors through ``json.decoder`` and, on 3.11,
        # only if that module is already loaded. Invalid input is rare: let ``json``
        # parse it again and raise its usual ValueError (JSONDecodeError).
        import json

        return json.loads(text)
    if text[end:].strip(_WHITESPACE):
        raise ValueError(f"JSON: extra data at character {end}")
    return obj


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
