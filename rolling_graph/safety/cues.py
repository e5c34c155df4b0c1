"""Cues: a plain-string test of whether the own rules could match a text at all.

The hook stores every tool result in the session's state file until the probe takes it,
so what it stores must be redacted there too (issue 17) — but a tool result must not cost
the hook ``re`` (importing and compiling the rules costs ~10 ms, more than half a bare
interpreter's start). :func:`scrub` therefore runs :func:`may_hold_secret` first, with
``str`` operations only, and the own rules (:func:`rolling_graph.safety.rules.redact_secrets`)
only when it says yes.

The cues come from the rules (:data:`rolling_graph.safety.rules.RULES`): by default a
rule's cues are its own keywords, found in the lowercased text (which is exactly when the
rule takes part in :func:`redact_secrets`, so the default is sound by construction). For
the rules whose keywords occur in most code (``token``, ``key``, ``://``, ``sk``, ``s.``,
the always-on Discord rule), :data:`TIGHTER` names a cue closer to the rule's pattern: the
case it is written in, a word boundary, the assignment operator and value shape after a
credential word, the ``@`` of a URL's password. Each is a necessary condition of its
rule's pattern (``tests/safety/test_cues.py`` checks that every text a rule changes is
cued, on the secret corpus and the real sessions), so a text with no cue is one the own
rules would leave unchanged anyway.
"""

from __future__ import annotations

from rolling_graph.safety.private import redact_private
from rolling_graph.safety.rules import RULES, redact_secrets

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable

    #: (text, lowered text, index where the literal starts, its length) → the rule could match here.
    Check = Callable[[str, str, int, int], bool]

__all__ = ["TIGHTER", "cues", "may_hold_secret", "scrub"]

_WORDCHARS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_")
_SPACE = " \t\r\n\f\v"
_QUOTES = "\"'`"
_KEYCHARS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-.")
_CREDCHARS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789+/=_-~!@#%^&*")
_B64 = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789+/")
_HEX = frozenset("0123456789abcdefABCDEF")
_ALNUM = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789")


class Cue:
    """A literal that must occur (``case``: as written, else in the lowercased text) and
    an optional check at each place it occurs."""

    __slots__ = ("literal", "case", "check")

    def __init__(self, literal: str, case: bool = False, check: Check | None = None) -> None:
        self.literal, self.case, self.check = literal, case, check

    def __repr__(self) -> str:
        return f"Cue({self.literal!r})"


# -- checks at an occurrence ----------------------------------------------------------------
def _at_word_start(text: str, low: str, k: int, n: int) -> bool:
    return k == 0 or text[k - 1] not in _WORDCHARS


def _skip(text: str, i: int, chars: str | frozenset[str], limit: int) -> int:
    end = min(len(text), i + limit)
    while i < end and text[i] in chars:
        i += 1
    return i


def _then(op: str, space: bool = True) -> Check:
    """The literal, then (optional whitespace and) one of ``op``."""

    def check(text: str, low: str, k: int, n: int) -> bool:
        i = _skip(text, k + n, _SPACE, 40) if space else k + n
        return i < len(text) and text[i] in op

    return check


def _run_after(chars: frozenset[str], least: int) -> Check:
    """The literal, whitespace, then at least ``least`` characters of ``chars``."""

    def check(text: str, low: str, k: int, n: int) -> bool:
        i = _skip(text, k + n, _SPACE, 40)
        return i > k + n and _skip(text, i, chars, least) - i >= least

    return check


def _env_key(text: str, low: str, k: int, n: int) -> bool:
    """``SOME_TOKEN_NAME =`` (the env-secret rule's upper-case key and its ``=``)."""
    i = _skip(text, k + n, "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_", 200)
    i = _skip(text, i, " \t", 40)
    return i < len(text) and text[i] == "="


#: Words that make ``key`` a credential's name in the assignment rules (``api_key``, ``clientKey``).
_KEY_PREFIXES = ("api", "access", "private", "signing", "encryption", "master", "client", "auth", "session", "app", "account", "license",
                 "iam")


def _assigned(text: str, low: str, k: int, n: int) -> bool:
    """A credential word used as a key: more of the key, an operator (``=``, ``:``, ``:=``,
    ``=>``; or ``", "`` after a quoted key), then a value that could be a credential — a
    quoted one, any bare one after a password word, else a bare one of 16+ characters with
    two digits (the secret-assignment and password-assignment rules' shapes)."""
    word = low[k : k + n]
    if word == "key" and not low[max(0, k - 16) : k].rstrip("_-").endswith(_KEY_PREFIXES):
        return False
    i = _skip(text, k + n, _KEYCHARS, 40)
    quoted = i < len(text) and text[i] in "\"']"
    i = _skip(text, i + 1 if quoted else i, _SPACE, 40)
    if i >= len(text):
        return False
    c = text[i]
    if c == "," and quoted:
        i = _skip(text, i + 1, " \t", 40)
        return i < len(text) and text[i] in _QUOTES
    if c not in ":=":
        return False
    i = _skip(text, i + 1, "=>", 1)  # ``:=``, ``=>``
    i = _skip(text, i, " \t", 40)
    if i >= len(text):
        return False
    if text[i] in _QUOTES:
        return True
    if word in ("pass", "pwd") and _bare_password(text, i):
        return True
    end = _skip(text, i, _CREDCHARS, 16)
    return end - i >= 16 and sum(ch.isdigit() for ch in text[i : _skip(text, i, _CREDCHARS, 512)]) >= 2


_NOT_BARE = frozenset(" \t\r\n\f\v\"'`,;()[]{}<>.")


def _bare_password(text: str, i: int) -> bool:
    """``password = value`` unquoted: 3+ characters that do not end in a call, an
    attribute or an index (``getpass()``, ``args.password``)."""
    end = i
    stop = min(len(text), i + 128)
    while end < stop and text[end] not in _NOT_BARE:
        end += 1
    run = text[i:end]
    if len(run) < 3:
        return False
    after = text[end : end + 1]
    return any(not (c.isalnum() or c == "_") for c in run[3:]) or not after or after not in "(.["


def _prose(text: str, low: str, k: int, n: int) -> bool:
    """``password is …`` (the password-in-prose rule)."""
    i = _skip(low, k + n, "abcdefghijklmnopqrstuvwxyz", 10)
    j = _skip(low, i, _SPACE, 40)
    return j > i and low.startswith(("is", "was", "will be", "should be", "to"), j)


def _url_at(text: str, low: str, k: int, n: int) -> bool:
    """``scheme://user:password@`` or ``scheme://token@``: an ``@`` before any whitespace or ``/``."""
    i = k + n
    end = min(len(text), i + 400)
    while i < end:
        c = text[i]
        if c == "@":
            return True
        if c in _SPACE or c == "/":
            return False
        i += 1
    return False


def _hex_before(count: int) -> Check:
    def check(text: str, low: str, k: int, n: int) -> bool:
        return k >= count and all(c in _HEX for c in text[k - count : k])

    return check


def _vault_body(text: str, low: str, k: int, n: int) -> bool:
    """``s.`` + 24 letters and digits, not inside a longer name (the legacy Vault rule)."""
    if k and (text[k - 1] in _WORDCHARS or text[k - 1] == "."):
        return False
    body = text[k + n : k + n + 24]
    after = text[k + n + 24 : k + n + 25]
    return len(body) == 24 and all(c in _ALNUM for c in body) and not (after and (after in _WORDCHARS or after == "."))


def _line_has(*later: str) -> Check:
    """The literal, then one of ``later`` on the same line (command-line credentials)."""

    def check(text: str, low: str, k: int, n: int) -> bool:
        end = text.find("\n", k)
        line = text[k : end if end >= 0 else len(text)]
        return any(s in line for s in later)

    return check


def _within(span: int, *later: str) -> Check:
    """The literal, then one of ``later`` within ``span`` characters."""

    def check(text: str, low: str, k: int, n: int) -> bool:
        window = text[k : k + span]
        return any(s in window for s in later)

    return check


def _hex_after(count: int) -> Check:
    def check(text: str, low: str, k: int, n: int) -> bool:
        body = text[k + n : k + n + count]
        return len(body) == count and all(c in _HEX for c in body)

    return check


_TOKEN_RUN = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-.")


def _discord_shape(text: str) -> bool:
    """A Discord bot token's shape: a run of ``[\\w.-]`` that starts with ``M``/``N``/``O``
    and reads 24–28 characters, a dot, 6, a dot, 27–40 (only words of 59+ characters
    with two dots are looked at)."""
    for word in text.split():
        if len(word) < 59 or word.count(".") < 2:
            continue
        runs = "".join(c if c in _TOKEN_RUN else " " for c in word).split()
        for run in runs:
            parts = run.split(".")
            if len(parts) >= 3 and 24 <= len(parts[0]) <= 28 and parts[0][0] in "MNO" and len(parts[1]) == 6 and 27 <= len(parts[2]) <= 40:
                return True
    return False


def _alnum_run(prefix_len: int, least: int, first: frozenset[str] | None = None) -> Check:
    """The literal not inside a longer alphanumeric run (``first``: the character right
    after it is one of these), then at least ``least`` alphanumerics."""

    def check(text: str, low: str, k: int, n: int) -> bool:
        if k and text[k - 1] in _ALNUM:
            return False
        i = k + n
        if first is not None:
            if i >= len(text) or text[i] not in first:
                return False
            i += 1
        return _skip(text, i, _ALNUM, least) - i >= least

    return check


def _boundary(*literals: str) -> tuple[Cue, ...]:
    return tuple(Cue(s, True, _at_word_start) for s in literals)


_ASSIGN_WORDS = ("token", "secret", "pass", "pwd", "credential", "key")
_CLI_FLAGS = ("--pass", "--token", "--api", "--secret", "--client-secret", "--auth-token", "--access-token")

#: Rules (by name) whose keywords occur in most code, and the closer cues they get instead.
#: Every rule of the name must be covered by its cues.
TIGHTER: dict[str, tuple[Cue, ...]] = {
    "private-key": (Cue("-----BEGIN", True),),
    "jwt": _boundary("eyJ"),
    "database-url": (Cue("://", False, _url_at),),
    "url-password": (Cue("://", False, _url_at),),
    "url-token": (Cue("://", False, _url_at),),
    "openai-key": _boundary("sk-"),
    "twilio-api-key": _boundary("SK"),
    "twilio-auth-token": (Cue("AC", True, _hex_after(32)),),
    "artifactory-key": (Cue("AKC", True, _alnum_run(3, 60)), Cue("AP", True, _alnum_run(2, 40, frozenset("0123456789ABCDEF")))),
    "sendgrid-key": _boundary("SG."),
    "stripe-key": _boundary(*(f"{p}_{m}_" for p in ("sk", "rk", "pk") for m in ("live", "test"))),
    "mailchimp-key": (Cue("-us", True, _hex_before(32)),),
    "mailgun-key": (Cue("key-", True, _hex_after(32)),),
    "vault-token": (*_boundary("hvs.", "hvb.", "hvr."), *(Cue(p, True, _vault_body) for p in ("s.", "b.", "r."))),
    "discord-bot-token": (Cue("", True, None),),  # the whole-text shape below
    "env-secret": (),  # derived from its keywords, upper-cased: see cues()
    "password-assignment": tuple(Cue(w, False, _assigned) for w in _ASSIGN_WORDS),
    "secret-assignment": tuple(Cue(w, False, _assigned) for w in _ASSIGN_WORDS),
    "password-in-prose": (Cue("pass", False, _prose), Cue("pwd", False, _prose)),
    "basic-auth": (Cue("basic", False, _run_after(_B64, 8)),),
    "bearer-token": (Cue("bearer", False, _run_after(_B64 | frozenset("-._~"), 8)),),
    "api-key-header": tuple(Cue(s, False, _then(":")) for s in ("api-key", "-token", "subscription-key")),
    "cli-credential": (
        *(Cue(s) for s in _CLI_FLAGS),
        Cue("curl", True, _line_has(" -u", "\t-u", " --user", "\t--user")),
        Cue("mysql", True, _line_has(" -p", "\t-p")),
        Cue("mariadb", True, _line_has(" -p", "\t-p")),
        Cue("redis-cli", True, _line_has(" -a", "\t-a")),
        Cue("sshpass", True, _line_has(" -p", "\t-p")),
        Cue("echo", True, _within(600, "login", "auth")),  # (``echo\s+`` may cross lines)
    ),
}


def cues() -> tuple[tuple[Cue, ...], bool]:
    """Every rule's cues, deduplicated (and whether the Discord shape is checked)."""
    found: dict[tuple[str, bool, object], Cue] = {}
    whole_text = False
    for rule in RULES:
        if rule.name == "discord-bot-token":
            whole_text = True
            continue
        if rule.name == "env-secret":
            chosen: tuple[Cue, ...] = tuple(Cue(k.upper(), True, _env_key) for k in rule.keywords)
        elif rule.name in TIGHTER:
            chosen = TIGHTER[rule.name]
        else:
            chosen = tuple(Cue(k) for k in rule.keywords)
        for cue in chosen:
            found.setdefault((cue.literal, cue.case, cue.check), cue)
    return tuple(found.values()), whole_text


_CUES, _WHOLE_TEXT = cues()


def _cued(cue: Cue, text: str, low: str) -> bool:
    hay = text if cue.case else low
    k = hay.find(cue.literal)
    if cue.check is None:
        return k >= 0
    n = len(cue.literal)
    while k >= 0:
        if cue.check(text, low, k, n):
            return True
        k = hay.find(cue.literal, k + 1)
    return False


def may_hold_secret(text: str) -> bool:
    """Whether one of the own rules could match ``text`` (plain string scanning, no ``re``)."""
    if not text:
        return False
    low = text.lower()
    if any(_cued(cue, text, low) for cue in _CUES):
        return True
    return _WHOLE_TEXT and _discord_shape(text)


def scrub(text: str) -> str:
    """``<private>`` spans, then the own rules when a cue says they could match: what the
    hook stores of a tool event (the probe adds ``detect-secrets`` before any use)."""
    text = redact_private(text)
    return redact_secrets(text) if may_hold_secret(text) else text
