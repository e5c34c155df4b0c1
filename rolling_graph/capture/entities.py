"""Cheap text analysis shared by the gate and the offline probe (stdlib ``re`` only).

* named entities: file paths, code spans, CamelCase and snake_case names, capitalised
  names, known technology names
* domain classification into the four domains (``model.DOMAINS``) by keyword evidence
* decision and correction language, and the statement a decision makes
"""

from __future__ import annotations

import re

from rolling_graph.core.filepaths import looks_like_file
from rolling_graph.core.ids import slugify
from rolling_graph.core.lazyre import lazy
from rolling_graph.core.vocabulary import TECH

TYPE_CHECKING = False
if TYPE_CHECKING:

    from rolling_graph.core.types import Domain, NodeKind

_PATH_RE = lazy(r"(?<![\w/.\\-])(?:[A-Za-z]:|\.)\\(?:[\w.@-]+\\)*[\w@-][\w.@-]*\.[A-Za-z0-9]{1,8}\b"  # Windows: C:\app\x.py, .\x.py
                r"|(?<![\w/.\\-])(?:~?/)?(?:[\w.@-]+/)+[\w@-][\w.@-]*\.[A-Za-z0-9]{1,8}\b|(?<![\w/.\\-])[\w-]+\.(?:py|js|ts|tsx|jsx|rs|go|java|rb|md|json|toml|yaml|yml|sql|sh|css|html|txt|cfg|ini|lock)\b")
_CODE_RE = lazy(r"`([^`\n]{2,60})`")
_CAMEL_RE = lazy(r"\b[A-Z][a-z0-9]+(?:[A-Z][a-z0-9]*)+\b|\b[a-z]+(?:[A-Z][a-z0-9]+)+\b")
_SNAKE_RE = lazy(r"\b[a-z][a-z0-9]*(?:_[a-z0-9]+)+\b")
#: Capitalised words, runs of them ("Harbor Beta") and hyphenated ones ("Auto-Commit",
#: "Pre-commit": one name, not two).
_CAPS_RE = lazy(r"\b[A-Z][a-zA-Z0-9+#.]*[a-zA-Z0-9+#](?:-[A-Za-z][a-zA-Z0-9+#]*)*(?:\s+[A-Z][a-zA-Z0-9+#]+(?:-[A-Za-z][a-zA-Z0-9+#]*)*)*\b")
_WORD_RE = lazy(r"[a-z0-9][a-z0-9+#.-]*")
_TECH_WORD_RE = lazy(r"(?<![\w/.-])[A-Za-z0-9][A-Za-z0-9+#]*(?![\w/-])")
_SENTENCE_RE = lazy(r"(?<=[.!?;])\s+|\n+")
#: Letters of scripts written without spaces between words (Chinese, Japanese, Thai), Korean
#: (whose particles join the word before: ``parseConfig를``), and full-width forms and CJK
#: punctuation. To a regular expression they are word characters, so a name or path written
#: against them (``config.tsのloadConfig関数``) has no word boundary and was never found.
_SPACELESS_RE = lazy("[\u0e00-\u0eff\u1100-\u11ff\u3000-\u9fff\ua960-\ua97f\uac00-\ud7ff\uf900-\ufaff\uff00-\uffef\U00020000-\U0003ffff]+")
#: Their sentence ends as ours, with the space after them our sentences are split at.
_CJK_STOPS = str.maketrans({"。": ". ", "！": "! ", "？": "? ", "；": "; ", "．": ". "})
#: Function words of German, the one language that capitalises its nouns: a text with two
#: of them is German, and its capitalised words (``Funktion``, ``Die Datenbank Verbindung``)
#: are nouns, not names. (Words English shares, such as "die" and "mit", are left out.)
_GERMAN = frozenset(
    """der das und ist nicht für auf eine einen einem einer dem ich wir bitte auch oder wenn noch dann kann soll
    muss wird sind werden haben ein im zum zur diese dieser dieses aber nur alle wie warum weil dass schon hier
    jetzt gibt keine kein sollte würde""".split()
)

#: Capitalised words that are not names.
_STOP = frozenset(
    """I I'm I've I'll I'd A An The This That These Those It Its It's We We'll We're Let Let's Lets Please
    Can Could Would Should Will Shall May Might Must Do Does Did Don't Is Are Was Were Be Been Has Have Had
    What When Where Why How Who Which Yes No Not Ok OK Okay Also And But Or So Then Now Next First Second
    Finally Actually Wait Hmm Hi Hello Thanks Thank Sure Great Good Nice Cool Right Well Just Maybe Perhaps
    If Else For From To In On At By With Without About After Before Into Over Under Again Still Here There
    Use Using Add Fix Make Run Try Check Look Keep Change Update Remove Write Read Show Tell Give Go Going
    Done Today Tomorrow Yesterday Monday Tuesday Wednesday Thursday Friday Saturday Sunday My Our Your
    Their His Her You They He She Also Instead Scratch Revert Undo Note Important TODO FIXME NOTE Error
    Warning Traceback File Line None True False Null Important Critical""".split()
)

DOMAIN_WORDS: dict[Domain, frozenset[str]] = {
    "technical": frozenset(
        """code bug error function class module api database db schema query index test tests build compile
        deploy server endpoint migration refactor cache latency performance memory thread async type types
        config dependency library package import exception stack trace commit branch merge lint python
        json http request response sql table column docker container script cli hook hooks patch regex
        timeout retry queue worker file files parser tokenizer vector embedding implement implementation""".split()
    )
    | TECH,
    "project": frozenset(
        """project roadmap milestone deadline release launch sprint scope requirement requirements feature
        features customer customers client clients stakeholder priority priorities plan planning estimate
        budget team backlog ticket tickets issue issues spec design mvp beta v1 v2 goal goals ship shipping
        demo pricing market users user onboarding metrics okr quarter q1 q2 q3 q4 contract invoice""".split()
    ),
    "relationship": frozenset(
        """friend friends colleague colleagues manager boss partner wife husband girlfriend boyfriend mom dad
        mother father sister brother family cofounder co-founder mentor mentee relationship conflict
        conversation trust feedback meeting 1:1 one-on-one apologize apology argument upset angry happy
        together introduce introduced intro hire hiring fired""".split()
    ),
    "personal": frozenset(
        """i'm myself health sleep tired exercise gym run running diet weight vacation holiday hobby hobbies
        weekend birthday anniversary feel feeling feelings stress stressed anxious burnout learning guitar
        reading book books home apartment move moving doctor dentist therapy journal goal habit habits
        morning evening coffee cooking""".split()
    ),
}

DECISION_RE = lazy(
    r"\b(let'?s go with|let us go with|let'?s use|we(?:'ll| will) (?:go with|use)|i(?:'ve| have)? decided|we(?:'ve| have)? decided|"
    r"decided (?:to|on)|decision(?: is)?:|we (?:chose|picked)|the plan is|going with|we should (?:also )?(?:use|keep)|settled on|opt(?:ing)? for|"
    r"let'?s (?:set|rename|store|keep|stick with|switch|move|put|drop)|i'?d (?:go with|prefer)|"
    r"switch(?:ing)? to|standardi[sz]e on|from now on|always use|never use|we(?:'re| are) using)\b"
    # A sentence that opens with an imperative choice is a decision too: "Use a Lua script…".
    r"|(?:^|(?<=[.!?;] )|(?<=\n))(?:use|store|keep|put|host|deploy)\b(?= (?:the |a |an )?[\w./-]+)",
    re.IGNORECASE,
)
#: Verbs that end a decision phrase and are the decision's own ("let's rename X", "we should keep X").
_KEPT_VERBS = frozenset({"set", "rename", "store", "keep", "switch", "move", "put", "drop"})
#: Decision openers that are the decision's own verb (kept in the label).
_IMPERATIVES = frozenset({"use", "store", "keep", "put", "host", "deploy"})
CORRECTION_RE = lazy(
    r"(?:^|[\s,.;!(])(actually|wait|scratch that|not that|that'?s (?:wrong|not right)|no,|nope|"
    r"i meant|correction:|revert(?:ing)? (?:that|the)|change of plan|on second thought)(?=$|[\s,.;!:)—-])",
    re.IGNORECASE,
)
_LEAD_CORRECTION_RE = lazy(
    r"\s*(?:actually|wait|scratch that|not that|no|nope|correction|change of plan|on second thought|i meant|hmm)\b[\s,:;.!—-]*",
    re.IGNORECASE,
)
_NEGATED_RE = lazy(r"\b(?:not|don'?t use|no longer|drop|instead of|rather than|replace|avoid)\s+([\w+#-]+(?:\.[\w+#-]+)*(?:\s+\d[\w.:-]*)?)", re.IGNORECASE)
#: "keep SQLite out", "leave Redis out of it": the name between is turned away from.
_KEPT_OUT_RE = lazy(r"\b(?:keep|leave)\s+([\w+#-]+(?:\.[\w+#-]+)*)\s+out\b", re.IGNORECASE)
#: A correction marker that opens the sentence (``"Actually, use Y"``, ``"No, not X"``): the
#: offline probe's test for a correction. Mid-sentence, "actually" and "wait" are mere words
#: ("I actually got more details"); the gate's :data:`CORRECTION_RE` stays as broad as it was.
_OPENING_CORRECTION_RE = lazy(
    r"^\W*(?:(?:ok|okay|hmm|oh|ah|sorry|so|well)\b[\s,.!—-]*)?(?:actually|wait|scratch that|not that|that'?s (?:wrong|not right)|no,|nope|"
    r"i meant|correction:|revert(?:ing)? (?:that|the)|change of plan|on second thought)(?=$|[\s,.;!:)—-])",
    re.IGNORECASE,
)


def sentences(text: str) -> list[str]:
    return [s.strip() for s in _SENTENCE_RE.split(text) if s and s.strip()]


def words_apart(text: str) -> str:
    """``text`` with each run of letters of the scripts that write no spaces between words
    (:data:`_SPACELESS_RE`) as a comma between spaces, so that the names and paths written against
    them stand apart and two names a run separates are never read as one (``OrderServiceとRedis``);
    their full stops as ours. As it is when ASCII."""
    return text if text.isascii() else _SPACELESS_RE.sub(" , ", text.translate(_CJK_STOPS))


def _german(text: str) -> bool:
    return len(_GERMAN.intersection(text.lower().split())) >= 2


def paths_in(text: str, cwd: str | None = None) -> list[str]:
    """File paths in free text. A file name with a space (``módulo uno.py``) is one path when
    quoted in backticks, or when ``cwd`` holds it: never the phantom ``uno.py``. A path written
    against Chinese, Japanese or Korean text (``src/app.pyを``) is found (:func:`words_apart`)."""
    text = words_apart(text)
    found = []
    spans: list[tuple[int, int]] = []
    for m in _CODE_RE.finditer(text):
        span = m.group(1).strip()
        if " " in span and looks_like_file(span) and "\n" not in span and not span.startswith(("$", "-")) and len(span.split()) <= 4:
            found.append(span)
            spans.append(m.span())
    for m in _PATH_RE.finditer(text):
        p = m.group(0).rstrip(".")
        if "://" in text[max(0, m.start() - 8) : m.start() + 3] or any(a <= m.start() < b for a, b in spans):
            continue
        if cwd and m.start() > 1 and text[m.start() - 1] == " ":
            p = _spaced_name(text[: m.start() - 1], p, cwd)
        found.append(p)
    return list(dict.fromkeys(found))


def _spaced_name(before: str, name: str, cwd: str) -> str:
    """``name`` with the one or two words before it, when ``cwd`` holds a file of that name
    and none called ``name`` alone."""
    import os

    words = before.rsplit(None, 2)[-2:]
    if not words or os.path.exists(os.path.join(cwd, name)):
        return name
    for n in (1, 2):
        candidate = " ".join([*words[-n:], name]).lstrip("`'\"(")
        if len(words) >= n and os.path.exists(os.path.join(cwd, candidate)):
            return candidate
    return name


def _good_name(name: str) -> bool:
    return 2 <= len(name) <= 60 and not name.isdigit()


#: Placeholders and markers that look like names but are not: upstream redaction
#: (``/home/USER/``), Claude Code's interrupt marker, template words.
PLACEHOLDERS = frozenset({"USER", "USERNAME", "REDACTED", "HOME", "PATH", "TOKEN", "SECRET", "Request", "TODO"})


def names_in(text: str, *, caps: bool = True) -> list[tuple[str, NodeKind]]:
    """Named things in free text as ``(label, kind)``; files are left to :func:`paths_in`.

    ``caps=False`` leaves out capitalised words (the weakest evidence of a name): for text
    that is not the user's own, such as a compaction summary or the assistant's notes. A German
    sentence's capitalised words are its nouns, and are left out too; a name written against
    Chinese, Japanese or Korean text is found (:func:`words_apart`).
    """
    text = words_apart(text)
    caps = caps and not _german(text)
    out: dict[str, tuple[str, NodeKind]] = {}

    def put(label: str, kind: NodeKind) -> None:
        label = label.strip(" .,:;!?'\"()[]{}")
        # A file name is a file (the event's paths make its node), never an entity or a
        # symbol: "README.md" as an entity took the file node's id, and its path was refused.
        if _good_name(label) and label not in PLACEHOLDERS and not looks_like_file(label):
            out.setdefault(slugify(label), (label, kind))

    for m in _CODE_RE.finditer(text):
        span = m.group(1).strip()
        if " " not in span or len(span) <= 30:
            put(span, "symbol")
    for m in _CAMEL_RE.finditer(text):
        put(m.group(0), "entity" if m.group(0).lower() in TECH else "symbol")
    for m in _SNAKE_RE.finditer(text):
        put(m.group(0), "symbol")
    for sent in sentences(text) if caps else []:
        if sent.startswith("#"):
            continue  # a Markdown heading ("## Rules") names a section, not a thing
        for m in _CAPS_RE.finditer(sent):
            if sent[m.start() - 1 : m.start()] in _SEPARATORS or sent[m.end() : m.end() + 1] in _SEPARATORS:
                continue  # a directory of a path (C:\Users\ada\Projects\app, /srv/Billing/x.py), not a name
            raw = m.group(0).split()
            # "DO NOT", "IMPORTANT": a stop word shouted is still a stop word
            words = [w for w in raw if w not in _STOP and not (w.isupper() and w.capitalize() in _STOP)]
            if not words:
                continue
            sentence_initial = not sent[: m.start()].strip(" -*>•") and raw[0] == words[0]
            if sentence_initial and len(words) == 1 and words[0].lower() not in TECH and not _looks_like_name(words[0]):
                continue  # a capitalised first word of a sentence is usually just a word
            put(" ".join(words), "entity")
    for m in _TECH_WORD_RE.finditer(text):
        if m.group(0).lower() in TECH:
            put(m.group(0), "entity")  # as written: "Terraform", not "terraform"
    return list(out.values())


#: Path separators (an empty slice is in no tuple: the text's ends are not separators).
_SEPARATORS = ("/", "\\")


def _looks_like_name(word: str) -> bool:
    return any(c.isupper() for c in word[1:]) or any(c.isdigit() for c in word)


def classify_domain(text: str) -> tuple[Domain | None, float]:
    """The domain with most keyword evidence and the share of evidence it holds."""
    words = _WORD_RE.findall(text.lower())
    scores = {d: 0 for d in DOMAIN_WORDS}
    for w in words:
        for d, vocab in DOMAIN_WORDS.items():
            if w in vocab:
                scores[d] += 1
    total = sum(scores.values())
    if not total:
        return None, 0.0
    best = max(scores, key=lambda d: (scores[d], d == "technical"))
    return best, scores[best] / total


def has_decision(text: str) -> bool:
    return DECISION_RE.search(text) is not None


def has_correction(text: str) -> bool:
    return CORRECTION_RE.search(text) is not None


def opens_with_correction(sentence: str) -> bool:
    """Does ``sentence`` open with a correction marker ("Actually, …", "No, …", "Wait —")?"""
    return _OPENING_CORRECTION_RE.search(sentence) is not None


POSITIVE_RE = lazy(r"\b(?:use|go with|switch to|pick|choose|prefer|move to|stick with)\b", re.IGNORECASE)
#: "…not December 12, it's January 9": the replacement named by a copula, not a verb.
_COPULA_RE = lazy(r"\b(?:it'?s|it is|it will be|should be|make it|now)\s+", re.IGNORECASE)
_REASON_CUT_RE = lazy(r"[,;:(]|\s[—–]\s|\s(?:since|because|so|so that|which|but|and then)\s", re.IGNORECASE)
#: Verbs a decision label may start with; other gists get "Use " in front, so a decision
#: ("Use Render") never shares an id with the thing it is about ("Render").
_LEAD_VERBS = frozenset(
    """use deploy add write build move keep switch run ship store send put make drop remove replace rename
    split merge cache index migrate host adopt pick choose prefer stick start stop skip avoid never always
    call name go rewrite document test require support fall retry limit log set create delete include exclude treat
    extract update return show rename implement""".split()
)


#: How a wish opens, before the verb that states it: "let's set X to 1" → "set X to 1".
_LEAD_WISH_RE = lazy(r"^(?:(?:so|then|ok|okay|yes|yeah)[\s,]+)?(?:let'?s|let us|we should|i think we should|i'?d like to|we(?:'ll| will)|"
                     r"we need to|i want to|please)\s+(?=\w)", re.IGNORECASE)
#: A clause with its own verb: "the cache is Redis" is a sentence already.
_COPULA_CLAUSE_RE = lazy(r"^\S+(?:\s+\S+){0,3}\s+(?:is|are|will be|stays|remains|lives|goes)\s+\S", re.IGNORECASE)
_REJECTED_TAIL_RE = lazy(r",?\s*(?:not|instead of|rather than)\s+[\w.+#-]+(?=$|[\s,.;:!?])", re.IGNORECASE)


def statement(sentence: str, max_len: int = 90) -> str:
    """The gist of a decision or correction sentence, for a node label: a plain sentence.

    ``"Let's go with SQLite for the store, using X"`` → ``"Use SQLite for the store"``;
    ``"We decided: the cache is Redis, not memcached"`` → ``"The cache is Redis, not memcached"``;
    ``"Actually, not SQLite — use PostgreSQL instead."`` → ``"use PostgreSQL instead"``.
    """
    text = sentence.strip()
    positives = list(POSITIVE_RE.finditer(text)) if has_correction(text) else []
    m = DECISION_RE.search(text)
    negated = negated_terms(text) if has_correction(text) else []
    copula = _COPULA_RE.search(text) if negated and not positives and not m else None
    if copula:
        replacement = _REASON_CUT_RE.split(text[copula.end():].strip(" .,!;:-—"))[0].strip(" .,!;:-—")
        if replacement:
            label = f"{replacement} instead of {negated[0]}"
            return label if len(label) <= max_len else label[: max_len - 1] + "…"
    if positives and (not m or positives[-1].start() > m.start()):
        text = text[positives[-1].start() :]
    elif m:
        verb = m.group(0).lower().rsplit(" ", 1)[-1]
        if m.group(0).lower() in _IMPERATIVES:
            text = text[m.start() :]
        elif verb in _KEPT_VERBS:  # "let's set X to 1" → "set X to 1": the verb is the choice's own
            text = text[m.end() - len(verb) :]
        else:
            text = text[m.end() :]
    while True:  # leading "actually," / "wait —" / "scratch that:" markers
        lead = _LEAD_CORRECTION_RE.match(text)
        if not lead:
            break
        text = text[lead.end() :]
    for _ in range(3):
        text = re.sub(r"^(?:,|:|—|-|to\b|that\b|on\b|with\b|we\b|should\b)\s*", "", text, flags=re.IGNORECASE).strip()
    text = _LEAD_WISH_RE.sub("", text.strip(" .,!;:-—"), count=1)
    cut = _REASON_CUT_RE.search(text)
    if cut and cut.start() >= 3:
        rejected = _REJECTED_TAIL_RE.match(text, cut.start())  # ", not memcached" says what was turned away
        text = text[: rejected.end() if rejected else cut.start()].strip()
    text = re.split(r"(?<=[.!?])\s", text, maxsplit=1)[0].strip(" .,!;:-—")
    if text.endswith(")") and text.count(")") > text.count("("):
        text = text[:-1].rstrip(" .,!;:")  # "(I'd go with option 4 now)": the aside's own parenthesis
    if not text:
        text = sentence.strip(" .,!;:")
    first = text.split(" ", 1)[0].lower()
    if first not in _LEAD_VERBS and not _COPULA_CLAUSE_RE.search(text):
        text = f"Use {text}"  # "SQLite for the store" → "Use SQLite for the store"; "the cache is Redis" stays a sentence
    text = text[0].upper() + text[1:]
    if len(text) > max_len:
        text = text[: max_len - 1].rsplit(" ", 1)[0] + "…"
    return text


_FAILS_RE = lazy(
    r"\b([\w+#-]+(?:\.[\w+#-]+)*)\s+(?:won'?t|will not|doesn'?t|does not|can'?t|cannot|isn'?t going to)\s+(?:work|scale|hold up|cope|fit|handle|do)\b",
    re.IGNORECASE,
)


def negated_terms(sentence: str) -> list[str]:
    """Terms a correction turns away from.

    ``"not Resend, use Bento"`` → ``["Resend"]``; ``"SQLite won't hold up"`` → ``["SQLite"]``.
    """
    terms = [m.group(1).strip(" ,.") for m in _NEGATED_RE.finditer(sentence)]
    terms += [m.group(1).strip(" ,.") for m in _KEPT_OUT_RE.finditer(sentence)]
    terms += [m.group(1).strip(" ,.") for m in _FAILS_RE.finditer(sentence)]
    return terms


def keywords(text: str) -> set[str]:
    return {w for w in _WORD_RE.findall(text.lower()) if len(w) > 2 and w.capitalize() not in _STOP and w not in _COMMON}


_COMMON = frozenset("the and for with use using that this from into our your then than have will should".split())

