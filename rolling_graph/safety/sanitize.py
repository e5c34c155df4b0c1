"""Untrusted text → one safe line: the single sanitiser of everything stored as a label
or shown to the model.

Labels, summaries and paths come from a model, a transcript or a hook payload. Whatever
reaches an injection or the graph goes through here (patch validation, the renderer, the
tool note's heading, the compact block, the CLI's views):

* C0 and C1 control characters and line/paragraph separators become spaces;
* invisible format characters are removed: bidi embeddings, overrides and isolates,
  zero-width spaces and joiners, the BOM, soft hyphens, and every other ``Cf`` character;
  Unicode tag characters (U+E0000–U+E007F, which can smuggle invisible text), private-use
  and unassigned code points too; a lone surrogate becomes U+FFFD;
* whitespace runs collapse to one space, and the line is cut to ``limit`` characters.

:func:`esc` adds HTML escaping, so no text can open or close the injected block's
delimiters. Nearly every label is plain printable text: ``str.isprintable()`` is False
for every character the slow path changes, so those skip it (the renderer escapes every
label it considers; ``unicodedata`` is loaded only for the rare label that needs it).
"""

from __future__ import annotations

#: Unicode categories removed outright: format (invisible), private use, unassigned.
_REMOVE = frozenset({"Cf", "Co", "Cn"})


def _strip_invisible(text: str) -> str:
    """The slow path: every non-printable character replaced or removed."""
    import unicodedata

    out = []
    for ch in text:
        if ch.isprintable():
            out.append(ch)
            continue
        cat = unicodedata.category(ch)
        if cat in _REMOVE or 0xE0000 <= ord(ch) <= 0xE007F:
            continue
        out.append("\ufffd" if cat == "Cs" else " ")  # Cc, Zl, Zp, Zs: a separator
    return "".join(out)


def one_line(text: object) -> str:
    """Untrusted text → one line of visible text, single-spaced (no bound, no escaping)."""
    s = text if isinstance(text, str) else str(text)
    if not s.isprintable():
        s = _strip_invisible(s)
    return " ".join(s.split())


def sentence_ends(text: str) -> list[int]:
    """Where the sentences of single-spaced ``text`` end: just past each ``.``, ``!`` or
    ``?`` that a space follows (``"Fix it. Then"`` → ``[7]``)."""
    return [i + 1 for i, ch in enumerate(text) if ch in ".!?" and text[i + 1 : i + 2] == " "]


def cut_at_word(text: str, limit: int, keep: int = 1) -> str:
    """``text`` within ``limit`` characters, ``…`` marking a cut: after its last whole word
    that fits (``mix credo lib/a.ex …``, never ``…/transcript_r``) when that keeps at least
    ``keep`` characters, else inside its first word."""
    if len(text) <= limit:
        return text
    if limit < 2:
        return text[:limit]
    cut = text[: limit - 1]
    if text[limit - 1] != " ":  # the cut falls inside a word: drop it
        whole = cut[: cut.rstrip().rfind(" ") + 1]
        if len(whole.rstrip()) >= keep:
            cut = whole
    return cut + "…"


def clean_line(text: object, limit: int) -> str:
    """What the graph stores: :func:`one_line`, at most ``limit`` characters."""
    return one_line(text)[:limit]


#: A cut label ends after its last whole word when that keeps this share of the limit
#: (``Implement debug JSON sidecar and …``, not ``… and e…``); else it is cut inside a word.
WORD_CUT_KEEP = 2 / 3


def esc(text: object, limit: int = 90) -> str:
    """Untrusted text → one bounded, HTML-escaped line for an injection (``…`` marks a cut,
    after a whole word when one ends late enough: :data:`WORD_CUT_KEEP`)."""
    s = one_line(text)
    if len(s) > limit:
        s = cut_at_word(s, limit, keep=max(1, int(limit * WORD_CUT_KEEP)))
    return s.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").replace('"', "&quot;")


#: What a wide character (Chinese, Japanese, Korean: East Asian Wide and Fullwidth) costs of a
#: budget counted in characters: about a token each to a real tokenizer, as three ASCII
#: characters are (``chars_per_token``). Without it a block in the user's Japanese ran to three
#: times its token budget.
WIDE_COST = 3


def _wide(c: str) -> bool:
    return ("\u1100" <= c <= "\u115f" or "\u2e80" <= c <= "\ua4cf" or "\uac00" <= c <= "\ud7a3" or "\uf900" <= c <= "\ufaff"
            or "\ufe30" <= c <= "\ufe4f" or "\uff00" <= c <= "\uff60" or "\uffe0" <= c <= "\uffe6" or "\U00020000" <= c <= "\U0003fffd")


def token_chars(text: str) -> int:
    """The characters of budget ``text`` takes: its length, a wide character counting
    :data:`WIDE_COST` (the length itself when ASCII)."""
    if text.isascii():
        return len(text)
    return len(text) + (WIDE_COST - 1) * sum(1 for c in text if c >= "\u1100" and _wide(c))


def cut_to_cost(text: str, limit: int) -> str:
    """``text`` within ``limit`` characters of budget (:func:`token_chars`), ``…`` marking a cut;
    ``""`` when not even one character and the mark fit."""
    if token_chars(text) <= limit:
        return text
    kept: list[str] = []
    used = 1  # the mark
    for c in text:
        used += WIDE_COST if c >= "\u1100" and _wide(c) else 1
        if used > limit:
            break
        kept.append(c)
    return "".join(kept).rstrip() + "…" if kept else ""
