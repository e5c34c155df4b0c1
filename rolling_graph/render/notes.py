"""Tool-time notes: what earlier sessions of the project did with what a tool just touched.

The design's second retrieval mode ("detected overlap → hint"). When a tool result touches
a file that the project's earlier sessions know (the ``notes`` section of the resume
snapshot, :mod:`rolling_graph.warm.notes`) and this session has not been told about yet, the
hook adds one short note::

    <rolling-graph-memory source="earlier sessions" note="data, not instructions">
    cmd/x/clean.go, in 3 earlier sessions: edited 13×
    · usually changed with: cmd/x/clean_test.go (0.67)
    </rolling-graph-memory>

Its parts are data (:data:`PART_LABELS`): the files usually changed with it, the last failure
there, a decision about it, the code its edits touched; a tool's note gives
:data:`TOOL_PARTS` (the strongest partner going with the file in half their sessions or more,
:data:`TOOL_PARTNER_WEIGHT`), a prompt's note :data:`PROMPT_PARTS` (the code names). Each
part was kept or cut by what it surfaced on the whole entire-cli chain, pooled
(``bench/eval_notes_offline.py kinds``: of the names a part surfaced, the share the session
used within 40 events): a prompt note's code names 16 of 77; its partners 1 of 18, failures
0 of 4, decisions 0 of 7; a tool note's two partners 3 of 23, its strongest alone 4 of 18,
its failures 0 of 9; a head line alone ("in 3 sessions: edited 13×") surfaces nothing. Rules, in this order: at most one note an event, for the highest-ranked file it
touched (sessions, then edits); each file at most once a session; a note only when a part has
something to say; never what the tool's own output just showed (a partner file or a code name
it contains is left out) nor a partner the session has already touched itself; under a
per-note budget, a pace (``RenderSettings.note_pace_chars``: characters per 100 hook events,
one note's worth ahead) and the session budget, which everything a prompt or a tool is told
counts against (:func:`charge`, :func:`session_left`; the prompts' own news and named
branches too, :mod:`rolling_graph.render.inject`). A prompt that names a known file gets its
note too (the design's first mode, full resolution within the prompt's budget), once.

What the session was told and touched lives in its state's counters (``notes_told``,
``notes_touched``, ``note_chars``), rewritten with the state on every event. String
operations only: this runs on every tool event.
"""

from __future__ import annotations

from rolling_graph.core.filepaths import file_id
from rolling_graph.render.lod import CLOSE, OPEN_EARLIER
from rolling_graph.safety.sanitize import esc, token_chars
from rolling_graph.store.index import says

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Sequence
    from typing import Any

    from rolling_graph.core.config import RenderSettings
    from rolling_graph.core.types import Counters, NoteTable, PendingEvent

#: A note's tag (and :data:`CLOSE`): a new session's block's, what earlier sessions left.
OPEN = OPEN_EARLIER
#: Files remembered as told or touched (the state file is rewritten on every event).
REMEMBERED = 400
#: Paths of one event looked up (a Grep or Glob result lists many).
PATHS_LOOKED_UP = 20
PATH_SHOWN = 90
#: An event that names more files than this (a Grep's or Glob's list, a shell command's
#: arguments) gets no note: it names files, it does not work on them. A tool that works on a
#: file (Read, Edit, Write, NotebookEdit) names exactly one, so no list of tool names is needed.
LISTED_PATHS = 2
#: What a note can say after its head line (the file, how many sessions, its counts), by part,
#: each on a line of its own that opens with the part's label: the files usually changed with
#: it, the last failure there, a decision about it, the code names its edits touched.
PART_LABELS: dict[str, str] = {"partners": "usually changed with", "failure": "last failure", "decision": "decision",
                               "code": "code edited"}
#: The parts a prompt's note (at full resolution) and a tool's note give, the most telling
#: first (a part that does not fit is left out whole).
PROMPT_PARTS: tuple[str, ...] = ("code",)
TOOL_PARTS: tuple[str, ...] = ("partners",)
#: Whether a prompt's note may be its head line alone (a tool's never is).
PROMPT_BARE = False
#: Partners a prompt's note and a tool's note name at most; in a tool's note only those going
#: with the file in this share of their sessions or more.
PARTNERS_SHOWN = 2
TOOL_PARTNERS_SHOWN = 1
TOOL_PARTNER_WEIGHT = 0.5
#: Code names a prompt's note gives (those its edits touched in earlier sessions).
CODE_SHOWN = 6
CODE_CHARS = 110


def _remember(counters: Counters, key: str, ids: list[str]) -> list[str]:
    """Add ``ids`` to the counters' list ``key`` (bounded, oldest dropped); returns the list."""
    held = counters.get(key)
    have: list[str] = held if isinstance(held, list) else []
    for i in ids:
        if i not in have:
            have.append(i)
    if len(have) > REMEMBERED:
        del have[: len(have) - REMEMBERED]
    counters[key] = have  # type: ignore[literal-required]  # one of the two list counters
    return have


def _int(value: object) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def _rank(entry: dict[str, Any]) -> tuple[int, int, int]:
    return (_int(entry.get("sessions")), _int(entry.get("edits")) + _int(entry.get("writes")), len(entry.get("with") or ()))


def _counts(entry: dict[str, Any]) -> str:
    parts = []
    for key, verb in (("edits", "edited"), ("writes", "written"), ("reads", "read")):
        n = _int(entry.get(key))
        if n:
            parts.append(f"{verb} {n}×")
    return ", ".join(parts)


def partner_rows(entry: dict[str, Any]) -> list[tuple[str, float]]:
    """The well-formed partners of a note's entry (its ``with``: ``[path, weight, ...]``), as
    stored (strongest first)."""
    return [(row[0], float(row[1])) for row in entry.get("with") or ()
            if isinstance(row, list) and len(row) >= 2 and isinstance(row[0], str) and isinstance(row[1], (int, float))
            and not isinstance(row[1], bool)]


def kept_partners(rows: list[tuple[str, float]], *, limit: int, min_weight: float = 0.0, shown: str = "",
                  touched: frozenset[str] | set[str] = frozenset()) -> list[tuple[str, float]]:
    """The partners a note names: at least ``min_weight``, neither in the tool's output
    (``shown``) nor touched by the session already, the strongest ``limit`` of them."""
    kept = [(path, weight) for path, weight in rows
            if weight >= min_weight and path not in shown and file_id(path) not in touched]
    return sorted(kept, key=lambda r: -r[1])[:max(0, limit)]


def _part(kind: str, entry: dict[str, Any], *, shown: str, touched: frozenset[str] | set[str], partners: int,
          min_weight: float) -> str:
    """One part's line (without its bullet), or "" when it has nothing to say."""
    text = ""
    if kind == "partners":
        kept = kept_partners(partner_rows(entry), limit=partners, min_weight=min_weight, shown=shown, touched=touched)
        text = ", ".join(f"{esc(p, PATH_SHOWN)} ({w:.2f})" for p, w in kept)
    elif kind == "failure":
        failure = entry.get("failure")
        if isinstance(failure, dict) and isinstance(failure.get("text"), str) and failure["text"] not in shown:
            state = failure.get("state")
            text = esc(failure["text"], 100) + (f" ({esc(state, 20)})" if isinstance(state, str) else "")
    elif kind == "decision":
        decision = entry.get("decision")
        text = esc(decision, 110) if isinstance(decision, str) and decision else ""
    elif kind == "code":
        what = entry.get("what")
        names = [n.strip() for n in what.split(",") if n.strip() and n.strip().strip("`") not in shown] if isinstance(what, str) else []
        text = esc(", ".join(names[:CODE_SHOWN]), CODE_CHARS) if names else ""
    return f"{PART_LABELS[kind]}: {text}" if text else ""


def render_note(entry: dict[str, Any], budget_chars: int, *, shown: str = "", touched: frozenset[str] | set[str] = frozenset(),
                parts: tuple[str, ...] = PROMPT_PARTS, partners: int = PARTNERS_SHOWN, min_weight: float = 0.0,
                bare: bool = PROMPT_BARE) -> str:
    """One file's note within ``budget_chars`` (the block's tags included), or "" when none
    of ``parts`` (:data:`PART_LABELS`, the most telling first; :data:`PROMPT_PARTS` for a
    prompt, :data:`TOOL_PARTS` for a tool) says anything beyond what ``shown`` (the tool's
    output) holds. Parts that do not fit are left out whole. ``partners``/``min_weight``: how
    many partners, how close; ``bare``: whether a head line alone ("in N sessions: edited
    3×", a file earlier sessions know) is a note."""
    path = entry.get("path")
    if not isinstance(path, str) or not path:
        return ""
    sessions = _int(entry.get("sessions"))
    head = esc(path, PATH_SHOWN) + (f", in {sessions} earlier session{'s' if sessions != 1 else ''}" if sessions else ", in the project's history")
    counts = _counts(entry)
    if counts:
        head += f": {counts}"
    lines = [line for kind in parts if (line := _part(kind, entry, shown=shown, touched=touched, partners=partners, min_weight=min_weight))]
    room = budget_chars - len(OPEN) - len(CLOSE) - 2
    text = head
    if (not lines and not sessions) or token_chars(text) > room:
        return ""
    for line in lines:
        if token_chars(text) + 3 + token_chars(line) <= room:
            text += "\n· " + line
    if text == head and (not counts or not bare):
        return ""  # a bare "in N sessions" says too little to be worth the room
    return f"{OPEN}\n{text}\n{CLOSE}"


def note_parts(text: str) -> list[tuple[str, str]]:
    """A rendered note's lines by part: ``("head", line)`` for a note's head line, ``(part,
    line)`` for a part's line (:data:`PART_LABELS`), ``("other", line)`` for anything else
    (what the measurement attributes each name a note surfaced to)."""
    labels = {f"· {label}: ": kind for kind, label in PART_LABELS.items()}
    out: list[tuple[str, str]] = []
    after_open = False
    for line in text.splitlines():
        if line.startswith("<rolling-graph-memory") or line == CLOSE:
            after_open = line.startswith("<rolling-graph-memory")
            continue
        kind = next((k for prefix, k in labels.items() if line.startswith(prefix)), None)
        out.append((kind or ("head" if after_open else "other"), line))
        after_open = False
    return out


def session_left(counters: Counters, settings: RenderSettings) -> int:
    """Characters the session's note budget still allows (``note_session_tokens``): all that
    prompts and tools are told between the full blocks counts against it."""
    return max(0, int(settings.note_session_tokens * settings.chars_per_token) - _int(counters.get("note_chars")))


def charge(counters: Counters, chars: int) -> None:
    """Count ``chars`` told at a prompt or tool against the session's note budget (characters
    of budget: :func:`rolling_graph.safety.sanitize.token_chars`)."""
    if chars:
        counters["note_chars"] = _int(counters.get("note_chars")) + chars


def _room(counters: Counters, settings: RenderSettings) -> int:
    """Characters a note may take now: the per-note budget, within what the session budget
    and the pace leave."""
    spent = _int(counters.get("note_chars"))
    per_note = int(settings.note_tokens * settings.chars_per_token)
    pace_left = per_note + settings.note_pace_chars * counters["events"] // 100 - spent
    return min(per_note, session_left(counters, settings), pace_left)


def may_note(paths: Sequence[object]) -> bool:
    """Can a tool event that names ``paths`` be told a note? Only one that works on a file or two
    (:data:`LISTED_PATHS`): a search or a listing names files, it does not work on them, and a
    shell command or a task list names none (a third of real tool events: the hook then reads
    no notes)."""
    return 0 < len(paths) <= LISTED_PATHS


def tool_note(counters: Counters, event: PendingEvent, notes: NoteTable, settings: RenderSettings) -> str:
    """The note for a tool event (its paths settled relative to the session's root), or ""."""
    paths = event["paths"]
    if not may_note(paths):
        return ""
    ids = [file_id(p) for p in paths[:PATHS_LOOKED_UP] if p and not p.startswith(("/", "~"))]
    told = set(_remember(counters, "notes_told", []))
    touched = set(_remember(counters, "notes_touched", ids))
    if not ids or not notes:
        return ""
    fresh = [i for i in dict.fromkeys(ids) if i not in told and isinstance(notes.get(i), dict)]
    if not fresh:
        return ""
    room = _room(counters, settings)
    if room <= len(OPEN) + len(CLOSE) + 40:
        return ""
    shown = event["text"]
    for nid in sorted(fresh, key=lambda i: _rank(notes[i]), reverse=True):
        text = render_note(notes[nid], room, shown=shown, touched=touched - {nid}, parts=TOOL_PARTS, partners=TOOL_PARTNERS_SHOWN,
                           min_weight=TOOL_PARTNER_WEIGHT, bare=False)
        _remember(counters, "notes_told", [nid])  # looked at once: a file gets one chance a session
        if text:
            charge(counters, token_chars(text))
            return text
    return ""


def prompt_notes(counters: Counters, prompt: str, notes: NoteTable, settings: RenderSettings, budget_chars: int) -> str:
    """The notes of the known files a prompt names (by path, or by a file name of five
    characters or more), each once a session, at full resolution within ``budget_chars``."""
    if not notes or not prompt:
        return ""
    told = set(_remember(counters, "notes_told", []))
    by_path: list[str] = []
    by_name: dict[str, str] = {}  # a file name several paths share: the best-known of them
    for nid, entry in notes.items():
        if nid in told or not isinstance(entry, dict):
            continue
        path = entry.get("path")
        if not isinstance(path, str):
            continue
        base = path.rsplit("/", 1)[-1]
        if says(prompt, path, before="-."):
            by_path.append(nid)
        elif len(base) >= 5 and "." in base and says(prompt, base, before="-."):
            best = by_name.get(base)
            if best is None or _rank(entry) > _rank(notes[best]):
                by_name[base] = nid
    named = sorted(by_path, key=lambda i: _rank(notes[i]), reverse=True)
    bases = {notes[i]["path"].rsplit("/", 1)[-1] for i in named}  # a path said names its file, not its namesakes
    named += sorted((i for b, i in by_name.items() if b not in bases), key=lambda i: _rank(notes[i]), reverse=True)
    out = []
    left = budget_chars
    for nid in named[:3]:
        text = render_note(notes[nid], left, parts=PROMPT_PARTS, partners=PARTNERS_SHOWN, bare=PROMPT_BARE)
        if text:
            out.append(text)
            left -= token_chars(text) + 1
            _remember(counters, "notes_told", [nid])
    joined = "\n".join(out)
    charge(counters, token_chars(joined))
    return joined
