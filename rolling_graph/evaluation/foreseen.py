"""Foreseen names: the memory *during* the work, as ``../shared/corpus/README.md`` defines it.

For a later session of a chain (replayed with the startup block, compaction blocks, prompt
notes and tool-time notes on, all served from the project's snapshot as in a real session):

* **known** names: touched by earlier sessions; **used**: the known names this session's
  prompts and tool inputs touch (names as :func:`rolling_graph.evaluation.corpus.names_in`
  finds them);
* a used name is **foreseen** when a text the memory injected at an event *before* the first
  event whose prompt, tool input or tool output contains the name holds it (substring);
* **notes** are the injections at ``UserPromptSubmit``, ``PostToolUse`` and
  ``PostToolUseFailure``. A note *surfaces* a known name when the name is among the names
  extracted from the note (:func:`rolling_graph.evaluation.corpus.names_in` of its text, not
  any known name that happens to be a substring of it), the startup block does not hold it
  and the session has not used or seen it at that event; **precision** is the share of the
  names surfaced (each once, at the first note) that the session uses within the
  :data:`NOTE_WINDOW` events after it; **cost** is note characters per 100 hook events;
* **baseline**: the earlier sessions' most frequent names, front-loaded at session start,
  in as many characters as the memory injected in the session in all; and the startup
  block alone.

Pure: :func:`session_foreseen` takes plain values; :func:`step_foreseen` reads them off a
replayed chain step. Pooled (:func:`pooled_foreseen`) over the sessions after the first
:data:`SKIP_FIRST`.
"""

from __future__ import annotations

import json
from collections.abc import Collection, Sequence
from dataclasses import dataclass
from typing import Any

from rolling_graph.evaluation import chain
from rolling_graph.evaluation.corpus import event_names, names_in, ranked_lists

NOTE_WINDOW = 40
#: Pooled over every session after the first ten of the chain.
SKIP_FIRST = 10
NOTE_EVENTS = ("UserPromptSubmit", "PostToolUse", "PostToolUseFailure")
#: Characters of a tool output searched for names the session has "seen".
OUTPUT_CHARS = 50_000


@dataclass(frozen=True)
class Injection:
    position: int  # the event's place in the session's event list
    kind: str  # "startup" | "block" (another SessionStart) | "note"
    text: str
    tool: bool = False  # a note at a tool result (PostToolUse, PostToolUseFailure), not a prompt


def first_seen(names: set[str], used: Sequence[Collection[str]], outputs: Sequence[str]) -> dict[str, int]:
    """Each name's first event whose input names it or whose output holds it (absent: never)."""
    out: dict[str, int] = {}
    left = set(names)
    for i, (event, output) in enumerate(zip(used, outputs, strict=True)):
        if not left:
            break
        hit = {n for n in left if n in event or n in output}
        for n in hit:
            out[n] = i
        left -= hit
    return out


@dataclass(frozen=True)
class Surfaced:
    """A known name a note surfaced: the note (its index among ``injections``) that surfaced
    it first, and whether the session used it within :data:`NOTE_WINDOW` events after."""

    note: int
    hit: bool


def surfaced_names(known: set[str], used: Sequence[Sequence[str]], outputs: Sequence[str],
                   injections: Sequence[Injection]) -> dict[str, Surfaced]:
    """The names the notes among ``injections`` surfaced (see the module's docstring), each
    at the first note that surfaced it, in the notes' order."""
    startup = next((i for i in injections if i.kind == "startup"), None)
    startup_text = startup.text.lower() if startup else ""
    named = {k: set(names_in(i.text)) & known for k, i in enumerate(injections) if i.kind == "note"}
    seen = first_seen({n for names in named.values() for n in names}, [set(e) for e in used], outputs)
    never = len(used) + 1
    out: dict[str, Surfaced] = {}
    for k, names in named.items():
        at = injections[k].position
        for n in sorted(names):
            if n in out or n in startup_text or seen.get(n, never) <= at:
                continue
            out[n] = Surfaced(k, any(n in event for event in used[at + 1 : at + 1 + NOTE_WINDOW]))
    return out


def session_foreseen(known: set[str], used: Sequence[Sequence[str]], outputs: Sequence[str], injections: Sequence[Injection],
                     frequent: Sequence[str]) -> dict[str, Any]:
    """The measures of one session (see the module's docstring). ``used``: the names each
    event's prompt or tool input touches; ``outputs``: each event's tool output, lower-cased;
    ``frequent``: the earlier sessions' names, most frequent first."""
    used_known = {n for event in used for n in event} & known
    low = [Injection(i.position, i.kind, i.text.lower(), i.tool) for i in injections]
    startup = next((i for i in low if i.kind == "startup"), None)
    start_at = startup.position if startup else 0
    notes = [i for i in low if i.kind == "note"]
    seen = first_seen(used_known, [set(e) for e in used], outputs)
    never = len(used) + 1

    def foreseen_by(texts: Sequence[Injection]) -> set[str]:
        return {n for n in used_known if any(i.position < seen.get(n, never) and n in i.text for i in texts)}

    total_chars = sum(len(i.text) for i in injections)
    baseline = ", ".join(frequent)[:total_chars].lower()
    surfaced = surfaced_names(known, used, outputs, injections)
    by_tool = [s for s in surfaced.values() if injections[s.note].tool]  # of those, the names a tool note surfaced
    return {
        "used": len(used_known),
        "memory": len(foreseen_by(low)),
        "startup": len(foreseen_by([startup] if startup else [])),
        "baseline": len(foreseen_by([Injection(start_at, "baseline", baseline)])),
        "surfaced": len(surfaced),
        "hits": sum(s.hit for s in surfaced.values()),
        "note_chars": sum(len(i.text) for i in notes),
        "tool_surfaced": len(by_tool),
        "tool_hits": sum(s.hit for s in by_tool),
        "tool_note_chars": sum(len(i.text) for i in notes if i.tool),
        "events": len(used),
        "injected_chars": total_chars,
    }


def _output_text(payload: dict[str, Any]) -> str:
    response = payload.get("tool_response")
    if response is None:
        return ""
    text = response if isinstance(response, str) else json.dumps(response, ensure_ascii=False)
    return text[:OUTPUT_CHARS].lower()


def step_foreseen(step: chain.ChainStep, known: set[str], earlier: Sequence[Sequence[str]], metric: str = "content") -> dict[str, Any]:
    """:func:`session_foreseen` of a replayed chain step; ``earlier``: the names per event of
    every earlier session (for the front-loaded baseline)."""
    events = list(step.recorded.events)
    position = {e.index: k for k, e in enumerate(events)}
    injections = []
    for r in step.replay.records:
        if not r.injection or r.index not in position:
            continue
        if r.event == "SessionStart":
            kind = "startup" if r.source == "startup" else "block"
        elif r.event in NOTE_EVENTS:
            kind = "note"
        else:
            continue
        injections.append(Injection(position[r.index], kind, r.injection, r.event != "UserPromptSubmit" and kind == "note"))
    used = event_names(events, metric)
    outputs = [_output_text(e.payload) for e in events]
    return session_foreseen(known, used, outputs, injections, ranked_lists(earlier)["frequent"])


def pooled_foreseen(rows: Sequence[dict[str, Any]], session_budget_chars: int) -> dict[str, Any]:
    """Pooled over ``rows`` (each :func:`session_foreseen`'s): shares of the used names
    foreseen by the memory, the startup block alone and the baseline, their ratios, the notes'
    precision and cost, and whether any session's notes exceeded ``session_budget_chars``."""
    used = sum(r["used"] for r in rows)
    events = sum(r["events"] for r in rows)
    surfaced = sum(r["surfaced"] for r in rows)

    def share(key: str) -> float | None:
        return round(sum(r[key] for r in rows) / used, 4) if used else None

    memory, startup, baseline = share("memory"), share("startup"), share("baseline")
    return {
        "sessions": len(rows), "used": used, "memory": memory, "startup": startup, "baseline": baseline,
        "vs_baseline": round(memory / baseline, 3) if memory is not None and baseline else None,
        "vs_startup": round(memory / startup, 3) if memory is not None and startup else None,
        "surfaced": surfaced, "precision": round(sum(r["hits"] for r in rows) / surfaced, 4) if surfaced else None,
        "note_chars_per_100_events": round(100 * sum(r["note_chars"] for r in rows) / events, 1) if events else None,
        "max_note_chars_in_a_session": max((r["note_chars"] for r in rows), default=0),
        # The tool-time notes alone (PostToolUse, PostToolUseFailure): their share of the above.
        "tool_surfaced": sum(r.get("tool_surfaced", 0) for r in rows),
        "tool_precision": (round(sum(r.get("tool_hits", 0) for r in rows) / tool_surfaced, 4) if (tool_surfaced := sum(
            r.get("tool_surfaced", 0) for r in rows)) else None),
        "tool_note_chars_per_100_events": round(100 * sum(r.get("tool_note_chars", 0) for r in rows) / events, 1) if events else None,
        "session_budget_chars": session_budget_chars,
    }
