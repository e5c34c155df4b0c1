"""How a graduation draft reads: a plain sentence that stands on its own in a ``CLAUDE.md``.

A flat memory is read by a person and by every future session, without the graph beside
it. So a draft states the decision, convention, correction or fact itself, with its reason
when the sessions gave one, and how often it came up::

    Use PostgreSQL for the warm store because it needs pgvector (decided in 3 sessions).

and never carries the graph into flat memory: no ``Related: … (edits)``, no edge verbs, no
node ids, weights or kinds, no ``<session>#<seq>`` references in the text (citations live
beside the text), and no hedges. :func:`style_problems` is the validator every draft passes
(the model's and the template's); :func:`template_sentence` is the offline wording.

Pure functions over plain values.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence

from rolling_graph.core.model import VERBS

HEDGES: tuple[str, ...] = ("maybe", "might", "probably", "perhaps", "possibly", "i think", "could be", "i guess", "not sure")
_HEDGE_RE = re.compile(r"\b(" + "|".join(re.escape(h).replace(r"\ ", r"\s+") for h in HEDGES) + r")\b", re.IGNORECASE)

_VERB_WORDS = "|".join(sorted({v.replace("_", "[_ ]") for v in VERBS}, key=len, reverse=True))
#: Graph vocabulary that means nothing in flat memory, each with what a reader would see.
JARGON: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("a 'Related:' list", re.compile(r"\brelated\s*:", re.IGNORECASE)),
    ("an edge verb in parentheses", re.compile(rf"\((?:{_VERB_WORDS})\)", re.IGNORECASE)),
    ("an edge arrow", re.compile(r"[—-]+\s*\w+\s*→|→")),
    ("an edge verb", re.compile(r"\b(?:depends_on|supersed(?:es|ed|ing)|informs|decides)\b", re.IGNORECASE)),
    ("a node kind as a label", re.compile(
        r"^\s*(?:decision|correction|preference|concept|entity|file|command|symbol|note|fact|convention)\s*:", re.IGNORECASE)),
    ("a weight", re.compile(r"\bweights?\s*[:=]?\s*[01](?:\.\d+)?\b", re.IGNORECASE)),
    ("graph bookkeeping", re.compile(
        r"\b(?:node[_ ]ids?|session[_ ]count|sessions_seen|\d+\s+edges?|activations?)\b", re.IGNORECASE)),
    ("an event reference", re.compile(r"[\w-]{2,}#\d+\b")),
)
#: Fewer words than this cannot state a decision or a fact on their own.
MIN_WORDS = 4
MAX_REASON = 140

#: What a reason clause starts with, in the sentence a decision was taken from.
_REASON_RE = re.compile(r"(?:(?<=\s)|^)(because|since|so that|given that)\s+|\s(?:[—–]|--)\s+", re.IGNORECASE)
_SENTENCE_END_RE = re.compile(r"(?<=[.!?])\s")
_WORD_RE = re.compile(r"[A-Za-z0-9][\w.+#-]*")
_FILLER = frozenset("the a an and or for with to of in on at is are be it its this that use using we our".split())
#: Opening verbs written lower-case inside a sentence (a name such as ``Exq`` keeps its case).
_VERBS_LOWER = frozenset("use keep store put run add move switch deploy host always never do call write send".split())
#: How each kind of memory came up, for "(decided in 3 sessions)".
_HOW = {"decision": "decided", "correction": "corrected", "preference": "stated", "note": "seen"}


# -- the validator ---------------------------------------------------------------------------


def hedges_in(text: str) -> list[str]:
    return sorted({m.group(1).lower() for m in _HEDGE_RE.finditer(text)})


def jargon_in(text: str, ids: Iterable[str] = ()) -> list[str]:
    """What graph vocabulary ``text`` carries (empty when none); ``ids``: node ids it must not name."""
    found = [what for what, pattern in JARGON if pattern.search(text)]
    low = text.lower()
    if any(_names_id(low, nid) for nid in ids):
        found.append("a node id")
    return found


def _names_id(low: str, nid: str) -> bool:
    """An id with a separator in it (``use-postgresql``), written as such in the text."""
    nid = nid.lower()
    if not any(sep in nid for sep in "-_:") or len(nid) < 6:
        return False
    return re.search(rf"(?<![\w./-]){re.escape(nid)}(?![\w/-])", low) is not None


def style_problems(text: str, ids: Iterable[str] = ()) -> list[str]:
    """Why ``text`` is not a plain, standalone, assertive sentence (empty when it is)."""
    problems: list[str] = []
    hedged = hedges_in(text)
    if hedged:
        problems.append("hedged: " + ", ".join(repr(h) for h in hedged))
    jargon = jargon_in(text, ids)
    if jargon:
        problems.append("graph jargon: " + ", ".join(jargon))
    stripped = text.strip()
    if stripped and len(_WORD_RE.findall(stripped)) < MIN_WORDS:
        problems.append(f"does not stand on its own (fewer than {MIN_WORDS} words)")
    if "…" in stripped or stripped.rstrip(".").endswith("..."):
        problems.append("cut off mid-phrase ('…')")
    return problems


# -- the offline wording ---------------------------------------------------------------------


def words(text: str) -> set[str]:
    return {w.lower().strip(".") for w in _WORD_RE.findall(text)} - _FILLER


def subject_of(label: str) -> str:
    """A node label as the opening of a sentence: one line, capitalised, no final stop."""
    text = " ".join(label.split()).strip(" .;:,")
    return text[:1].upper() + text[1:] if text else ""


def _first_sentence(text: str) -> str:
    return _SENTENCE_END_RE.split(" ".join(text.split()), maxsplit=1)[0].strip()


def restates(summary: str, label: str) -> bool:
    """Is ``summary`` the sentence ``label`` was taken from (most of the label's words in it)?"""
    want = words(label)
    return bool(want) and len(want & words(summary)) >= max(1, (2 * len(want) + 2) // 3)


def reason_in(summary: str | None, label: str) -> str | None:
    """The reason a sentence gives for its decision (``because it needs pgvector``), if any.

    Only a clause that says something the label does not: ``"Actually, not SQLite — use
    PostgreSQL instead"`` has a dash, but what follows it is the decision, not its reason.
    """
    if not summary:
        return None
    sentence = _first_sentence(summary)
    for m in _REASON_RE.finditer(sentence):
        marker = m.group(1)
        clause = sentence[m.end():].strip(" .;:,—–-")
        if not clause or hedges_in(clause):
            continue
        clause_words = words(clause)
        if not clause_words or len(clause_words & words(label)) * 2 >= len(clause_words):
            continue
        if len(clause) > MAX_REASON:
            clause = clause[:MAX_REASON].rsplit(" ", 1)[0].rstrip(" ,;:")
        return f"{marker.lower()} {clause}" if marker else f"— {clause}"
    return None


def _with_replaced(subject: str, replaced: Sequence[str]) -> str:
    """The subject and what it replaced: ``Use PostgreSQL for the warm store instead of
    SQLite``; unchanged when it already says so (``Use Bento instead of Resend``)."""
    if not replaced or re.search(r"\b(?:instead of|rather than|not)\b", subject, re.IGNORECASE):
        return subject
    old = subject_of(replaced[0]).split()
    new = subject.split()
    if old and new and old[0].lower() == new[0].lower():
        old = old[1:]  # the shared verb: "Use PostgreSQL …" replaces "Use SQLite …"
    said = {w.lower() for w in new}
    while len(old) > 1 and old[-1].lower() in said:
        old = old[:-1]  # what the subject says already: "… for the warm store"
    if not old or not words(" ".join(old)) - words(subject):
        return subject
    phrase = " ".join(old)
    if old[0].lower() in _VERBS_LOWER:
        phrase = phrase[:1].lower() + phrase[1:]
    if re.search(r"\binstead$", subject, re.IGNORECASE):
        return f"{subject} of {phrase}"
    return f"{subject} instead of {phrase}"


def template_sentence(kind: str, label: str, summary: str | None, sessions: int, replaced: Sequence[str] = ()) -> str:
    """The offline draft: the statement, what it replaced, its reason, how often it came up.

    ``kind`` is the memory kind (decision, correction, preference, note). A note (a fact)
    is its summary's first sentence when that states it, else the label.
    """
    how = f"({_HOW.get(kind, 'seen')} in {sessions} session{'s' if sessions != 1 else ''})"
    if kind == "note" and summary and len(_WORD_RE.findall(_first_sentence(summary))) >= MIN_WORDS:
        fact = subject_of(_first_sentence(summary))
        return f"{fact} {how}."
    subject = subject_of(label)
    text = _with_replaced(subject, replaced)
    reason = reason_in(summary, label)
    if reason:
        text = f"{text} {reason}"
    text = f"{text} {how}."
    if not reason and summary and not restates(summary, label):
        described = subject_of(_first_sentence(summary))
        if described and not hedges_in(described):
            text = f"{text} {described.rstrip('.')}."
    return text
