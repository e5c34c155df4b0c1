"""The offline probe: a deterministic, rule-based extractor (no network, no model).

It reads the batch of pending events and proposes RFC 6902 operations exactly as a model
would, so its output goes through the same validation (as ``trusted``: facts it folds
are deterministic). What it extracts:

* prompts: the user's **request**, short and in their words; decisions ("let's go with
  X") as ``decision`` nodes that ``decides`` the names they mention; corrections
  ("actually, use Y instead of X") as ``correction`` nodes that ``supersedes`` the earlier
  decision they reverse; named entities, code names and paths; the domain of each
* the assistant's text (read from the transcript by :mod:`.transcript_tail`): the code
  names it works with, and the choices it states ("I'll use X instead of Y")
* tool events (:mod:`.offline_tools`): files and what was done to them, code names,
  test and build commands with their outcome, errors open or resolved, the task list,
  answers to Claude's questions, plans, commits
* a compaction summary: code names, not its capitalised words; a choice only where it states
  one outright ("we chose X"), not a feature it lists nor a quote (it retells them)
* names the graph already holds are activated (weight signal 1.0), not re-added
* every name an event's input uses touches its node (:mod:`.offline_mentions`): ``seq``
  is the last event that used it, ``mentions`` how many did

Never from JSON keys, placeholders (``USER``), interrupt markers or harness files.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

from rolling_graph.capture.entities import (
    DECISION_RE,
    POSITIVE_RE,
    classify_domain,
    has_decision,
    keywords,
    names_in,
    negated_terms,
    opens_with_correction,
    sentences,
    statement,
)
from rolling_graph.core.filepaths import looks_like_file
from rolling_graph.core.ids import slugify
from rolling_graph.core.model import DECISION_KINDS
from rolling_graph.core.normalize import normalize_event
from rolling_graph.core.vocabulary import TECH, not_a_decision
from rolling_graph.probe import offline_commands as commands
from rolling_graph.probe import offline_mentions as mentions
from rolling_graph.probe import offline_tasks as tasks
from rolling_graph.probe import offline_tools as tools
from rolling_graph.probe.base import ProbeResult
from rolling_graph.probe.code_names import CODE_SPAN_RE, code_names, is_code_name
from rolling_graph.probe.proposal import MAX_OPS, FoldState, Proposal, event_seq

if TYPE_CHECKING:
    from rolling_graph.core.types import Domain, NodeKind, PendingEvent, SessionDoc

__all__ = ["MAX_OPS", "OfflineProbe"]

is_request = tasks.is_request  # what is a request: rolling_graph.probe.offline_tasks
_NOT_TYPED_RE = re.compile(
    r"<system-reminder>.*?</system-reminder>|\[Request interrupted by user[^\]]*\]|</?(?:command-[\w-]+|local-command-[\w-]+|bash-[\w-]+)>",
    re.DOTALL,
)
#: The assistant stating a choice (its narration — "Let me read the file" — is not one).
_ASSISTANT_DECISION_RE = re.compile(
    r"\b(?:I(?:'ll| will) (?:go with|use|keep|switch to)|I(?:'m| am) going with|I(?:'ve| have)? decided|decided to|I chose|"
    r"the (?:approach|fix|plan|solution) (?:is|will be)(?: simple)?\s*(?:to\b|:|[-—])|switch(?:ing)? to)",
    re.IGNORECASE,
)
#: What the assistant narrates rather than chooses: "I'll use the reviewer agent to review…",
#: "I'll switch to the main branch".
_ASSISTANT_NARRATION_RE = re.compile(
    r"\b(?:use (?:the |an? )?[\w-]+(?: [\w-]+)? (?:agent|tool|command|skill)s?\b|switch to (?:the )?[\w/.-]+ branch\b|use \S+ to (?:do|run|check|review|find|look|see|get|verify|read|search|explore|make)\b)",
    re.IGNORECASE,
)
#: An assistant correction that states no choice: "I was wrong." alone is no decision.
_ASSISTANT_CHOICE_RE = re.compile(r"\b(?:use|go with|switch to|keep|instead of|rather than|should be|the fix is)\b", re.IGNORECASE)
_ASSISTANT_LEAD_RE = re.compile(
    r"^.*?\b(?:I(?:'ll| will)|I(?:'m| am) going to|I(?:'ve| have)? decided to|decided to|I chose to|"
    r"the (?:approach|fix|plan|solution) (?:is|will be)(?: simple)?(?:\s*(?:to\b|:|[-—]))?)\s*",
    re.IGNORECASE,
)
_ASSISTANT_CORRECTION_RE = re.compile(r"\b(?:I was wrong|my mistake|I misread|that was (?:wrong|incorrect)|I had it backwards)\b", re.IGNORECASE)
_PATHISH_RE = re.compile(r"[^\s`]*/[^\s`]*")
NAMES_PER_TEXT = 4


def _rejected_names(p: Proposal, sentence: str, mentioned: list[str]) -> set[str]:
    """The slugs of the names ``sentence`` turns away from ("not X", "instead of X", "rather
    than X", "drop X", "keep X out"): only names (a node this sentence mentions, a known
    technology, a word with a capital or a digit), never "not sure" or "not use"."""
    out = set()
    for term in negated_terms(sentence):
        slug = slugify(term)
        named = any(m == slug or m.startswith(slug + "-") or slug.startswith(m + "-") for m in mentioned)
        if slug and (named or term.lower() in TECH or any(c.isupper() or c.isdigit() for c in term)):
            out.add(slug)
    return out


def _turned_away(m: str, rejected: set[str]) -> bool:
    return any(r == m or r.startswith(m + "-") or m.startswith(r + "-") for r in rejected)


def _chooses(p: Proposal, decision: str, slug: str) -> bool:
    """Does a live decision choose the name ``slug`` (it ``decides`` it, or its label names
    it and does not turn away from it)?"""
    if p.edge_exists(decision, "decides", slug):
        return True
    label = p.label_of(decision)
    named = re.search(rf"(?<![\w-]){re.escape(slug.replace('-', ' '))}(?![\w-])", slugify(label).replace("-", " ")) is not None
    return named and slug not in _rejected_names(p, label, [])


def _superseded_by(p: Proposal, sentence: str, new_id: str, rejected: set[str]) -> str | None:
    """Which live decision a correction reverses: one that chose a name it turns away from,
    else the one sharing most words with it."""
    live = [d for d in p.decisions() if d != new_id]
    if not live:
        return None
    for d in reversed(live):
        if any(_chooses(p, d, r) for r in rejected):
            return d
    if rejected:
        return None  # it turns away from names no live decision chose: it reverses none
    words = keywords(sentence)
    best, best_overlap = None, 0
    for d in reversed(live):
        if p.fact(d, "by") == "assistant":
            continue  # the assistant's own choices are reversed by name only, never by a shared word
        overlap = len(words & keywords(p.label_of(d)))
        if overlap > best_overlap:
            best, best_overlap = d, overlap
    if best:
        return best
    users = [d for d in live if p.fact(d, "by") != "assistant"]
    return users[-1] if users and opens_with_correction(sentence) and has_decision(sentence) else None


#: Words that say a choice is made, not what it is: "Switching to Bento" and "Use Bento" make one choice.
_CHOICE_WORDS = frozenset("use using used switch switching switched go going went keep keeping adopt pick choose chose prefer "
                          "stick move moving put store host deploy instead let's lets".split())


def _choice_words(label: str) -> set[str]:
    return keywords(label) - _CHOICE_WORDS


def _same_choice(p: Proposal, label: str, kind: str) -> str | None:
    """A live decision of ``kind`` that makes the choice ``label`` makes, one of the two
    worded more fully ("Use PostgreSQL" and "Use PostgreSQL for the orders table")."""
    mine = _choice_words(label)
    if not mine:
        return None
    for d in reversed(p.decisions()):
        if p.kind_of(d) != kind:
            continue
        theirs = _choice_words(p.label_of(d))
        if theirs and (mine <= theirs or theirs <= mine):
            return d
    return None


def _decision_node(p: Proposal, gist: str, domain: Domain, kind: NodeKind, sent: str) -> str | None:
    """The node of a decision or correction: a near-duplicate of a live one is that one (worded
    as the fuller of the two), else a new node."""
    same = _same_choice(p, gist, kind)
    if same:
        if len(_choice_words(gist)) > len(_choice_words(p.label_of(same))):
            p.relabel(same, gist)
        return p.node(p.label_of(same), domain, kind, nid=same)
    return p.node(gist, domain, kind, summary=sent[:280])


def _assistant_gist(sentence: str, limit: int = 90) -> str:
    """What the assistant chose, without its "I'll" and code quotes: ``"I'll keep X in `f`
    instead of Y."`` → ``"Keep X in f instead of Y"``."""
    text = sentence.replace("`", "")
    m = _ASSISTANT_LEAD_RE.search(text)
    if m:
        text = text[m.end() :]
    text = text.strip(" .:;—-")
    if text[:4].lower() == "not ":
        text = "Do not " + text[4:]  # "the solution is to NOT treat X as Y" → "Do not treat X as Y"
    if len(text) > limit:
        text = text[: limit - 1].rsplit(" ", 1)[0] + "…"
    return text[:1].upper() + text[1:] if text else sentence[:limit]


def _has_positive(sentence: str) -> bool:
    return has_decision(sentence) or POSITIVE_RE.search(sentence) is not None


#: Before a decision's words, what makes them no choice made here: a condition ("once we switch
#: to a new one"), someone else's story ("user decided to split it up").
_CONDITION_RE = re.compile(r"\b(?:once|when|whenever|if|after|before|until|unless)\b[^,.;:]*$|\b(?:user|he|she|they|someone)\s*$",
                           re.IGNORECASE)


_STATED_CHOICE_RE = re.compile(r"\b(?:we (?:chose|picked|decided)|decided (?:to|on)|settled on|going with|let'?s go with|the plan is)\b",
                               re.IGNORECASE)


def _not_a_choice_made(sentence: str) -> bool:
    m = DECISION_RE.search(sentence)
    return m is not None and _CONDITION_RE.search(sentence[: m.start()]) is not None


#: A correction that says in itself what it turns away from: "Actually, keep SQLite out entirely".
_SELF_CONTAINED_RE = re.compile(r"\b(?:keep|leave)\b.*\bout\b|\b(?:drop|avoid|remove)\b", re.IGNORECASE)


def _joined(text: str) -> list[str]:
    """Sentences, a correction joined to the replacement that follows it."""
    parts = sentences(text)
    joined: list[str] = []
    i = 0
    while i < len(parts):
        sent = parts[i]
        # "Actually, not Resend. Use Bento: ..." — a correction and its replacement.
        if (opens_with_correction(sent) and i + 1 < len(parts) and not _has_positive(sent)
                and not _SELF_CONTAINED_RE.search(sent)):
            sent = f"{sent} {parts[i + 1]}"
            i += 1
        joined.append(sent)
        i += 1
    return joined


def _statements(p: Proposal, text: str, state: FoldState, who: str, seq: int | None, *, caps: bool, echo: bool = False) -> None:
    """Decisions, corrections and names in someone's words. ``echo``: the text repeats
    what the conversation holds (a compaction summary): only code names and known
    technologies count, and the nodes it names are not activated by it.

    A name the sentence turns away from ("not X", "instead of X", "rather than X", "drop X",
    "keep X out") is a rejected option: the choice ``contradicts`` it, never ``decides`` it."""
    domain = classify_domain(text)[0] or state.domain or "project"
    state.domain = domain
    for sent in _joined(text):
        # A compaction summary retells the conversation: only a choice it states outright counts
        # ("we chose Terraform"), not a feature it lists ("allow switching to …") nor a quote.
        correction = opens_with_correction(sent) and not echo
        decision = has_decision(sent) and (not echo or _STATED_CHOICE_RE.search(sent) is not None)
        sdomain = classify_domain(sent)[0] or domain
        names = names_in(sent, caps=caps)
        if echo:
            names = [(label, kind) for label, kind in names if kind == "symbol" and is_code_name(label)]
        mentioned = [
            nid for label, kind in names
            if (nid := p.node(label, "technical" if kind == "symbol" else sdomain, kind, activate=not echo))
        ]
        for m in mentioned:
            p.by(m, who, seq)
        if decision and not correction and _not_a_choice_made(sent):
            decision = False
        if (correction or decision) and not_a_decision(statement(sent)):
            correction = decision = False  # a heading, a title, a fragment: no choice to remember
        rejected = _rejected_names(p, sent, mentioned)
        if correction and (decision or negated_terms(sent) or POSITIVE_RE.search(sent)):
            gist = statement(sent)
            nid = _decision_node(p, gist, sdomain, "correction", sent)
            p.by(nid, who, seq)
            old = _superseded_by(p, sent, nid or "", rejected) if nid else None
            if nid and old:
                p.edge(nid, "supersedes", old, 0.9)
                p.notes.append(f"correction {gist!r} supersedes {p.label_of(old)!r}")
            for m in mentioned:
                if m == old or p.kind_of(m) in DECISION_KINDS:
                    continue
                # "not Resend ... use Bento": Bento is decided, Resend is turned away from.
                p.edge(nid, "contradicts" if _turned_away(m, rejected) else "decides", m, 0.7)
            if nid:
                state.topic = nid
        elif decision:
            gist = statement(sent)
            nid = _decision_node(p, gist, sdomain, "decision", sent)
            p.by(nid, who, seq)
            for m in mentioned:
                if p.kind_of(m) not in DECISION_KINDS:
                    p.edge(nid, "contradicts" if _turned_away(m, rejected) else "decides", m, 0.7)
            if nid:
                p.notes.append(f"decision {gist!r}")
                state.topic = nid
        elif mentioned:
            topic = state.topic  # names mentioned together with the current topic inform it
            for m in mentioned[:4]:
                if topic and m != topic:
                    p.edge(m, "informs", topic, 0.4)


def typed_text(text: str) -> str:
    """What the user typed: system reminders, interrupt markers and command tags removed."""
    return _NOT_TYPED_RE.sub(" ", text).strip()


def _prompt(p: Proposal, event: PendingEvent, state: FoldState) -> None:
    raw = event["text"]
    seq = event_seq(event)
    if raw.lstrip().startswith("<task-notification>"):
        commands.notification(p, raw, event, state)  # a background command finished; not the user
        return
    text = typed_text(raw)
    if "<command-name>" in raw or not is_request(text):
        return  # a slash command, an acknowledgement, a greeting, a nudge to go on: no request
    label = tasks.gist(text)
    rid = p.node(label, "project", "request", summary=text[:280] if len(text) > len(label) else None, nid="req-" + slugify(label)[:59])
    p.by(rid, "user", seq)
    if rid:
        state.request = rid
        if not state.task:
            state.topic = rid
    if not state.structural:
        _statements(p, text, state, "user", seq, caps=True)
    for raw_path in event["paths"][:6]:
        path = p.path(raw_path)
        fid = p.mentioned_file(path) if path else None
        p.by(fid, "user", seq)
        if fid and state.topic and fid != state.topic:
            p.edge(state.topic, "depends_on", fid, 0.5)


def _summary(p: Proposal, event: PendingEvent, state: FoldState) -> None:
    """A compaction summary: its decisions, code names and paths, by the assistant."""
    text = typed_text(event["text"])
    _statements(p, text, state, "assistant", event_seq(event), caps=False, echo=True)
    for raw_path in event["paths"][:6]:
        path = p.path(raw_path)
        # a bare name is no path; a file the graph knows (``strategy/session.go`` said of
        # ``cmd/entire/cli/strategy/session.go``) is no new one
        if path and "/" in path and not p.known_file(path):
            p.by(p.file(path), "assistant", event_seq(event))


def _file_for_name(p: Proposal, name: str) -> str | None:
    """An existing file node that ``name`` (a path or a bare file name) refers to."""
    return next(iter(p.files_ending("/" + name.removeprefix("./"))), None)


def _assistant(p: Proposal, event: PendingEvent, state: FoldState) -> None:
    """The assistant's notes: the code names it works with and the choices it states."""
    text = event["text"]
    seq = event_seq(event)
    names: list[str] = []
    for span in CODE_SPAN_RE.findall(text):
        span = span.strip()
        if looks_like_file(span):
            fid = _file_for_name(p, span)
            if fid:
                p.node(p.label_of(fid), "technical", "file", nid=fid)
            continue
        names += code_names(span, 2)
    prose = _PATHISH_RE.sub(" ", text)  # a path's directories are no names of their own
    names += [label for label, kind in names_in(prose, caps=False) if kind == "symbol" and is_code_name(label)]
    for name in list(dict.fromkeys(names))[:NAMES_PER_TEXT]:
        p.by(p.node(name, "technical", "symbol"), "assistant", seq)
    said = [] if state.structural else sentences(text)
    for i, sent in enumerate(said):
        if len(sent) > 300 or sent.rstrip().endswith("?"):
            continue
        if any(opens_with_correction(later) for later in said[i + 1 : i + 3]):
            continue  # "I'll keep X. Actually, let me check first": taken back at once
        if (_ASSISTANT_CORRECTION_RE.search(sent) and _ASSISTANT_CHOICE_RE.search(sent)
                and not not_a_decision(_assistant_gist(sent))):
            nid = p.node(_assistant_gist(sent), "technical", "correction", summary=sent[:280], confidence="inferred")
            p.by(nid, "assistant", seq)
        elif (_ASSISTANT_DECISION_RE.search(sent) and not _ASSISTANT_NARRATION_RE.search(sent)
              and not not_a_decision(_assistant_gist(sent))):
            nid = p.node(_assistant_gist(sent), "technical", "decision", summary=sent[:280], confidence="inferred")
            p.by(nid, "assistant", seq)
            if nid:
                p.edge(nid, "decides", state.task, 0.5)
                p.notes.append(f"assistant decision {p.label_of(nid)!r}")


def _initial_state(p: Proposal, doc: SessionDoc) -> FoldState:
    """Where the batch starts: the task in progress, the last request, the live decision."""
    def latest(kind: NodeKind, **facts: Any) -> str | None:
        return p.find(kind, **facts)

    task = latest("task", status="in_progress")
    request = latest("request")
    focus = [f for f in doc.get("focus", []) if f in p.nodes and p.nodes[f].get("kind") not in ("file", "command", "error")]
    live = p.decisions()
    topic = task or (live[-1] if live else None) or (focus[0] if focus else None) or request
    return FoldState(topic=topic, task=task, request=request)


class OfflineProbe:
    """Deterministic extractor; the default backend when no model is reachable.

    ``structural=True`` folds only what code states exactly — tool calls (files, code
    names, commands, errors, tasks, commits), requests and answers in the user's words —
    and leaves judgement (decisions, corrections, concepts) to a model probe answering the
    same batch: the runner applies both.
    """

    name = "offline"

    def __init__(self, *, structural: bool = False) -> None:
        self.structural = structural

    def run(self, events: list[PendingEvent], doc: SessionDoc) -> ProbeResult:
        """The proposal for ``events`` on ``doc``. The events are made to fit their declared
        shape first (:func:`~rolling_graph.core.normalize.normalize_event`: a no-op for the
        runner's batch, which is so already; a caller's own events may leave fields out)."""
        events = [normalize_event(e) for e in events]
        p = Proposal(doc)
        state = _initial_state(p, doc)
        state.structural = self.structural
        for event in events:
            kind = event["event"]
            if kind == "UserPromptSubmit":
                _prompt(p, event, state)
            elif kind == "CompactSummary" and not self.structural:
                _summary(p, event, state)
            elif kind == "AssistantText":
                _assistant(p, event, state)
            elif kind == "PostToolUse":
                tools.fold_tool(p, event, state)
                if event["tool"] == "AskUserQuestion" and not self.structural:  # the answers are the user's words
                    for _, _, answer in event.get("data", {}).get("qa", []):
                        _statements(p, answer, state, "user", event_seq(event), caps=True)
        mentions.fold_mentions(p, events, typed_text)
        reasons = sorted({r for e in events for r in e.get("reasons", [])})
        rationale = "; ".join(p.notes[:4]) or f"{len(p.added)} new, {len(p.activated)} activated from {len(events)} events"
        if reasons:
            rationale = f"{rationale} (gate: {', '.join(reasons)})"
        return ProbeResult(backend=self.name, rationale=rationale[:500], patch=p.finish())
