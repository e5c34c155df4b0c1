"""Secrets found with Yelp's ``detect-secrets``, with ids and content hashes let through.

Runs in the detached processes only (the probe, the warm-graph worker, the CLI): the
library takes ~150 ms to import, more than the hook's whole budget. The text has already
been through the own rules (:mod:`rolling_graph.safety.rules`), whose markers this pass
leaves alone.

What is used from the library, and how (``bench/bench_redact.py`` measures each part):

* its provider patterns (``RegexBasedDetector.denylist``), matched here with ``finditer``:
  the library reports only a pattern's first group as the secret (``ghp`` for a GitHub
  token), which is right for flagging a line and wrong for masking one, so the whole match
  is masked, or the value group of the patterns that include their key;
* its keyword detector (``password = "..."`` in many languages' syntax) in both its
  quoted and its config-file (unquoted) forms;
* its entropy detectors (quoted base64 above 4.5 bits, quoted hex above 3.0), and its
  heuristic filters (templates, ``$VAR``, indirect references, sequences, UUIDs).

Never the library's ``analyze_line``/``scan_line``: they can call the provider to verify a
token (a network request) and they apply no entropy limit to unquoted strings.

Entropy detectors flag git hashes, UUIDs and content hashes, which are ids, not secrets,
where they appear as ids: a value is let through when it has the shape of one (hex of a
git or SHA length, a UUID) and its key or prefix names an id or a hash (``commit``,
``sha256:``, ``integrity``, ``checksum``, ``session_id`` …) or nothing names it a secret,
and when it is part of a path. A value under a key that names a secret (``token``,
``password``) is masked whatever its shape: an ``.npmrc`` token may be a UUID.
"""

from __future__ import annotations

import re
from typing import Any

__all__ = ["available", "find_secrets", "redact_with_library"]

MARK = "[REDACTED:{}]"

#: Library plugins not used: an IP address is not a credential, and the rest are handled
#: here in their own way (keyword and entropy detectors below).
_SKIPPED = {"Public IP (ipv4)", "Secret Keyword", "Base64 High Entropy String", "Hex High Entropy String"}
#: Plugins whose patterns include the key: mask their value group, not the whole match.
_VALUE_GROUP = {
    "Basic Auth Credentials",
    "AWS Access Key",
    "Cloudant Credentials",
    "IBM Cloud IAM Key",
    "IBM COS HMAC Credentials",
    "SoftLayer Credentials",
    "NPM tokens",
}
#: Lengths of hex ids: short and full git SHA-1, MD5, SHA-1, SHA-256, SHA-512.
_HEX_ID_LENGTHS = frozenset({*range(7, 13), 32, 40, 64, 128})
_HEX = frozenset("0123456789abcdefABCDEF")
#: Words of a key that name an id or a hash (``toolUseID``, ``x-request-id``, ``sha256``).
_ID_WORDS = frozenset(
    "id ids uuid guid sha sha1 sha256 sha512 hash hashes digest checksum integrity commit rev revision etag oid "
    "ref parent tree blob head nonce fingerprint version build request trace span session message event".split()
)
_KEY_WORD = re.compile(r"[A-Z]?[a-z]+|[A-Z]+(?![a-z])|\d+")
#: Ids with a type prefix: Anthropic (``toolu_01…``, ``msg_01…``, ``req_011…``), OpenAI, Stripe objects.
_ID_PREFIX = re.compile(
    r"^(?:toolu|srvtoolu|msg|req|agent_msg|chatcmpl|call|run|thread|asst|file|batch|evt|cus|sub|pi|ch|in|prod|price|acct|txn)_"
    r"[A-Za-z0-9]{8,}$"
)
_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_.]*")
_LITERALS = frozenset({"", "none", "null", "nil", "true", "false", "undefined", "nan"})
#: The keyword detector runs only on lines holding one of these (its own denylist's stems).
_KEYWORD_HINTS = ("key", "pass", "pwd", "secret", "contras")
_LINE_MAX = 20_000
_SECRET_WORDS = re.compile(
    r"token|secret|passw|pwd|passphrase|credential|api_?key|apikey|private_?key|auth(?!or)|bearer|signature|cookie",
    re.IGNORECASE,
)
_HASH_PREFIX = re.compile(r"(?:sha(?:1|224|256|384|512)|md5|h1|blake2b?)[:=\-]$|@sha256:$|#$", re.IGNORECASE)
_UUID = re.compile(r"^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$", re.IGNORECASE)
_KEY_BEFORE = re.compile(r"([A-Za-z_][A-Za-z0-9_.\-]*)[\\\"'\]]*\s*(?::=|=>|[:=])[\s\[\\\"'`@]*$")


class _Detectors:
    """The library's plugins, instantiated once per process."""

    def __init__(self) -> None:
        from detect_secrets.core.plugins.util import get_mapping_from_secret_type_to_class
        from detect_secrets.filters import heuristic
        from detect_secrets.plugins.base import RegexBasedDetector
        from detect_secrets.plugins.high_entropy_strings import Base64HighEntropyString, HexHighEntropyString
        from detect_secrets.plugins.keyword import (
            CONFIG_DENYLIST_REGEX_TO_GROUP,
            QUOTES_REQUIRED_DENYLIST_REGEX_TO_GROUP,
            KeywordDetector,
        )

        # Each provider pattern scans the whole text on its own: joined into one
        # alternation they lose their literal-prefix search and run 4x slower.
        self.patterns: list[tuple[str, re.Pattern[str], bool]] = []
        plugins: dict[str, Any] = get_mapping_from_secret_type_to_class()
        for name, cls in sorted(plugins.items()):
            if name in _SKIPPED or not issubclass(cls, RegexBasedDetector):
                continue
            for pattern in cls().denylist:
                self.patterns.append((name, pattern, name in _VALUE_GROUP and pattern.groups > 0))
        self.keyword = KeywordDetector()
        self.keyword_forms = (QUOTES_REQUIRED_DENYLIST_REGEX_TO_GROUP, CONFIG_DENYLIST_REGEX_TO_GROUP)
        self.entropy = ((Base64HighEntropyString(), 4.5), (HexHighEntropyString(), 3.0))
        self.heuristic = heuristic


_DETECTORS: _Detectors | None = None
_UNAVAILABLE = False


def _detectors() -> _Detectors | None:
    global _DETECTORS, _UNAVAILABLE
    if _DETECTORS is None and not _UNAVAILABLE:
        try:
            _DETECTORS = _Detectors()
        except ImportError:  # a broken install: the own rules still ran
            _UNAVAILABLE = True
    return _DETECTORS


def available() -> bool:
    """Whether ``detect-secrets`` could be loaded (``rgraph doctor`` can say so)."""
    return _detectors() is not None


def _is_hexish(value: str) -> bool:
    return bool(value) and all(c in _HEX for c in value)


def _key_before(line: str, start: int) -> str:
    found = _KEY_BEFORE.search(line, max(0, start - 80), start)
    return found.group(1) if found else ""


def _words(key: str) -> set[str]:
    """``parentToolUseID`` → {parent, tool, use, id}; ``x-request-id`` → {x, request, id}."""
    return {w.lower() for w in _KEY_WORD.findall(key)}


def _in_path(line: str, start: int, end: int) -> bool:
    """The value sits inside a path or a file name (``…/index-4f3a9c2b.js``, ``.git/objects/ab/…``)."""
    before = line[start - 1] if start > 0 else ""
    after = line[end] if end < len(line) else ""
    if before == "/" or after == "/":
        return True
    return after == "." and end + 1 < len(line) and line[end + 1].isalpha() and before in "-_."


def is_id(value: str, line: str, start: int, end: int) -> bool:
    """``value`` (at ``line[start:end]``) has the shape of an id or a content hash and
    nothing on the line names it a secret."""
    key = _key_before(line, start)
    if key and _SECRET_WORDS.search(key):
        return False
    if _in_path(line, start, end) or _UUID.match(value) or _ID_PREFIX.match(value):
        return True
    if _HASH_PREFIX.search(line[max(0, start - 12) : start]):
        return True
    if key and _words(key) & _ID_WORDS:
        return True
    if _is_hexish(value) and len(value) in _HEX_ID_LENGTHS:
        # A bare hex id (git log, sha256sum output, a lockfile checksum): a secret only
        # when the text before it on the line names one.
        return not _SECRET_WORDS.search(line[:start])
    return False


def _code_like(value: str, line: str) -> bool:
    """A keyword detector's value that is code, not a credential: a call, or a bare
    identifier (``password == confirm_password``)."""
    if "(" in value or ")" in value:
        return True
    bare = value.strip().rstrip(",;:")
    if bare.lower() in _LITERALS:
        return True
    quoted = any(f"{q}{value}{q}" in line for q in "\"'`")
    return not quoted and bool(_IDENTIFIER.fullmatch(bare)) and sum(c.isdigit() for c in bare) < 2


def _filtered(d: _Detectors, value: str, line: str) -> bool:
    """The library's own heuristics say this is not a secret."""
    h = d.heuristic
    return (
        "[REDACTED" in value
        or h.is_sequential_string(value)
        or h.is_templated_secret(value)
        or h.is_prefixed_with_dollar_sign(value)
        or h.is_not_alphanumeric_string(value)
    )


def _line_candidates(d: _Detectors, line: str) -> list[tuple[str, str]]:
    """(kind, value) from the keyword and entropy detectors, before the id check."""
    found: list[tuple[str, str]] = []
    low = line.lower()
    if any(hint in low for hint in _KEYWORD_HINTS) and not d.heuristic.is_indirect_reference(line):
        for form in d.keyword_forms:
            for value in d.keyword.analyze_string(line, denylist_regex_to_group=form):
                if isinstance(value, str) and len(value) >= 4 and not _code_like(value, line):
                    found.append((d.keyword.secret_type, value))
    if '"' in line or "'" in line:
        for plugin, limit in d.entropy:
            for value in plugin.analyze_string(line):
                if isinstance(value, str) and len(value) >= 16 and plugin.calculate_shannon_entropy(value) > limit:
                    found.append((plugin.secret_type, value))
    return [(kind, value) for kind, value in found if not _filtered(d, value, line)]


def find_secrets(text: str) -> list[tuple[int, int, str]]:
    """Spans ``(start, end, kind)`` of the secrets the library finds in ``text``."""
    d = _detectors()
    if d is None or not text.strip():
        return []
    spans: list[tuple[int, int, str]] = []
    for name, pattern, value_group in d.patterns:
        for m in pattern.finditer(text):
            start, end = m.span(1) if value_group and m.group(1) else m.span()
            if end > start and "[REDACTED" not in text[start:end]:
                spans.append((start, end, name))
    offset = 0
    for line in text.split("\n"):
        for kind, value in _line_candidates(d, line) if len(line) <= _LINE_MAX else ():
            at = line.find(value)
            while at >= 0:
                end = at + len(value)
                if kind == d.keyword.secret_type and not (_is_hexish(value) or _UUID.match(value)) or not is_id(value, line, at, end):
                    spans.append((offset + at, offset + end, kind))
                at = line.find(value, end)
        offset += len(line) + 1
    return spans


def _label(kind: str) -> str:
    return "-".join(kind.lower().replace("(", "").replace(")", "").split())


def redact_with_library(text: str) -> str:
    """Mask what the library finds (in text the own rules have been over)."""
    if not text or _detectors() is None:
        return text
    spans = sorted(find_secrets(text))
    if not spans:
        return text
    merged: list[list[Any]] = []
    for start, end, kind in spans:
        if merged and start < merged[-1][1]:
            merged[-1][1] = max(merged[-1][1], end)
        else:
            merged.append([start, end, kind])
    pieces, pos = [], 0
    for start, end, kind in merged:
        pieces.append(text[pos:start])
        pieces.append(MARK.format(_label(kind)))
        pos = end
    pieces.append(text[pos:])
    return "".join(pieces)
