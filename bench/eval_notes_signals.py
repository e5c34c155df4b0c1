#!/usr/bin/env python3
"""What could foresee a session's next names: each signal's notes, scored as the notes are.

    python bench/eval_notes_signals.py reach DIR
    python bench/eval_notes_signals.py oracle DIR [--per100 N]
    python bench/eval_notes_signals.py cousage DIR [--min-confidence C] [--min-sessions M] [--per-trigger K] [--per100 N]
    python bench/eval_notes_signals.py sequence DIR [--window W] [--from-outputs] [--min-confidence C] ...
    python bench/eval_notes_signals.py prompt DIR [--sessions S] [--min-similarity X] [--room R] [--per100 N]

``DIR`` is a capture of ``bench/eval_notes_offline.py capture`` (the entire-cli chain replayed
through the real hooks). Every command keeps the capture's startup and compaction blocks, puts
*its own* notes where today's notes were, and prints the foreseen figures pooled over the
sessions after the first ten (:mod:`rolling_graph.evaluation.foreseen`: the share of the known
names used that the memory foresaw, the front-loaded list with the same characters, the notes'
precision and cost). Each signal sees only the sessions before the one it speaks in.

* ``reach``: where the known names a session uses are first met (the startup block, a prompt or
  tool input, a tool's output; in which tenth of the session), and the figures with no notes at
  all: the ratio to the front-loaded list that trimming notes could at best reach.
* ``oracle``: one note at the session's first event naming exactly the known names the session
  will go on to use and was not told, shortest first, in the characters today's notes spent in
  that session (``--per100``: that many per 100 events instead). What perfect foresight buys.
* ``cousage``: at an event, the names earlier sessions used *in the same session* as a name this
  event uses for the first time (confidence = sessions with both / sessions with the trigger).
* ``sequence``: the names earlier sessions first met within ``--window`` events after using the
  trigger (``--from-outputs``: a name first met in a tool's output is a trigger too).
* ``prompt``: at a prompt, the names of the earlier sessions whose prompts are most like it
  (TF-IDF cosine over their words), by summed similarity.

The figures are in ``docs/measurements.md`` (twenty-first pass). Not part of CI.
"""

from __future__ import annotations

import argparse
import json
import math
import re
import sys
from collections import Counter, defaultdict
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from corpus_cli import CORPUS
from eval_notes_offline import _load, blocks, replay_notes

from rolling_graph.evaluation import foreseen
from rolling_graph.evaluation.corpus import names_in, ranked_lists

FIGURES = ("sessions", "used", "memory", "startup", "baseline", "vs_baseline", "vs_startup", "surfaced", "precision",
           "note_chars_per_100_events")


@dataclass
class Session:
    """One later session as the capture holds it, with what the sessions before it knew."""

    used: list[list[str]]  # each event's names (prompt or tool input)
    outputs: list[str]  # each event's tool output, lower-cased
    blocks: list[foreseen.Injection]  # the startup and compaction blocks, as captured
    known: set[str]
    frequent: list[str]
    prompts: list[tuple[int, str]]  # (event position, text)

    @property
    def told(self) -> str:
        return " ".join(b.text.lower() for b in self.blocks)


def sessions(data: dict[str, Any]) -> Iterator[tuple[Session | None, dict[str, Any]]]:
    """Every session of the capture in chain order: a :class:`Session` for the later ones
    (``None`` for the first :data:`~rolling_graph.evaluation.foreseen.SKIP_FIRST`), and its raw
    record, which a signal learns from *after* the session has been scored."""
    prompts: dict[str, list[tuple[int, str]]] = defaultdict(list)
    for c in data["calls"]:
        if c["event"] == "UserPromptSubmit":
            prompts[c["sid"]].append((c["pos"], c["text"]))
    earlier: list[tuple[str, ...]] = []
    for p, s in enumerate(data["sessions"]):
        view = None
        if p >= foreseen.SKIP_FIRST:
            view = Session(s["used"], s["outputs"], blocks(s), {n for e in earlier for n in e},
                           ranked_lists(earlier)["frequent"], prompts.get(s["sid"], []))
        yield view, s | {"prompts": prompts.get(s["sid"], [])}
        earlier.extend(tuple(e) for e in s["used"])


def scored(view: Session, notes: Sequence[foreseen.Injection]) -> dict[str, Any]:
    return foreseen.session_foreseen(view.known, view.used, view.outputs, [*view.blocks, *notes], view.frequent)


def pooled(rows: Sequence[dict[str, Any]]) -> dict[str, Any]:
    figures = foreseen.pooled_foreseen(rows, 0)
    return {k: figures[k] for k in FIGURES}


# ------------------------------------------------------------------ the signals
@dataclass
class Speaker:
    """Notes under a session budget of ``per100`` characters per 100 events, each name once."""

    label: str
    per100: float
    notes: list[foreseen.Injection] = field(default_factory=list)
    chars: int = 0
    budget: int = 0
    said: str = ""

    def start(self, view: Session) -> None:
        self.notes, self.chars, self.said = [], 0, view.told
        self.budget = int(self.per100 * len(view.used) / 100)

    def say(self, position: int, names: Sequence[str], tool: bool = True) -> None:
        fresh = [n for n in dict.fromkeys(names) if n not in self.said]
        text = f"{self.label}: {', '.join(fresh)}"
        if fresh and self.chars + len(text) <= self.budget:
            self.notes.append(foreseen.Injection(position, "note", text, tool))
            self.chars += len(text)
            self.said += " " + text


def cousage(data: dict[str, Any], min_confidence: float, min_sessions: int, per_trigger: int, per100: float) -> list[dict[str, Any]]:
    sets: list[set[str]] = []
    rows = []
    speaker = Speaker("used with it before", per100)
    for view, raw in sessions(data):
        if view is not None:
            sessions_with: dict[str, list[int]] = defaultdict(list)
            for i, earlier in enumerate(sets):
                for n in earlier:
                    sessions_with[n].append(i)
            speaker.start(view)
            seen: set[str] = set()
            fired: set[str] = set()
            for k, names in enumerate(view.used):
                seen.update(names)
                new: list[str] = []
                for trigger in dict.fromkeys(names):
                    if trigger in fired or trigger not in sessions_with:
                        continue
                    fired.add(trigger)
                    together = Counter(m for i in sessions_with[trigger] for m in sets[i])
                    df = len(sessions_with[trigger])
                    ranked = sorted(((c / df, c, m) for m, c in together.items()
                                     if m != trigger and c >= min_sessions and c / df >= min_confidence), key=lambda t: (-t[0], -t[1], t[2]))
                    new += [m for _, _, m in ranked if m not in seen and m not in view.outputs[k]][:per_trigger]
                speaker.say(k, new)
                seen.update(names_in(view.outputs[k]))
            rows.append(scored(view, speaker.notes))
        sets.append({n for e in raw["used"] for n in e})
    return rows


def first_met(used: Sequence[Sequence[str]], outputs: Sequence[str]) -> dict[int, set[str]]:
    """The names a session used, by the event at which it first met each (input or output)."""
    at: dict[int, set[str]] = defaultdict(set)
    for n, j in foreseen.first_seen({n for e in used for n in e}, [set(e) for e in used], outputs).items():
        at[j].add(n)
    return at


def sequence(data: dict[str, Any], window: int, from_outputs: bool, min_confidence: float, min_sessions: int, per_trigger: int,
             per100: float) -> list[dict[str, Any]]:
    pairs: Counter[tuple[str, str]] = Counter()
    triggers: Counter[str] = Counter()
    rows = []
    speaker = Speaker("met next before", per100)
    for view, raw in sessions(data):
        if view is not None:
            follows: dict[str, list[tuple[float, int, str]]] = defaultdict(list)
            for (a, b), c in pairs.items():
                if c >= min_sessions and c / triggers[a] >= min_confidence:
                    follows[a].append((c / triggers[a], c, b))
            for ranked in follows.values():
                ranked.sort(key=lambda t: (-t[0], -t[1], t[2]))
            speaker.start(view)
            seen: set[str] = set()
            fired: set[str] = set()
            for k, names in enumerate(view.used):
                met = [*names, *(n for n in names_in(view.outputs[k]) if n not in seen)] if from_outputs else list(names)
                seen.update(names)
                seen.update(names_in(view.outputs[k]))
                new: list[str] = []
                for trigger in dict.fromkeys(met):
                    if trigger in fired:
                        continue
                    fired.add(trigger)
                    new += [b for _, _, b in follows.get(trigger, ()) if b not in seen][:per_trigger]
                speaker.say(k, new)
            rows.append(scored(view, speaker.notes))
        at = first_met(raw["used"], raw["outputs"])
        session_triggers: set[str] = set()
        session_pairs: set[tuple[str, str]] = set()
        for k, names in enumerate(raw["used"]):
            for a in set(names) | (at.get(k, set()) if from_outputs else set()):
                session_triggers.add(a)
                session_pairs.update((a, b) for j in range(k + 1, k + 1 + window) for b in at.get(j, ()) if b != a)
        triggers.update(session_triggers)
        pairs.update(session_pairs)
    return rows


_WORD = re.compile(r"[a-z][a-z0-9_]{2,}")
_STOP = frozenset("the and for that this with you are not but have what can from was when will all our out use its "
                  "into then than there here just also make sure should would could does did done been being".split())


def _vector(words: Counter[str], idf: dict[str, float], unseen: float) -> dict[str, float]:
    v = {w: (1 + math.log(c)) * idf.get(w, unseen) for w, c in words.items()}
    norm = math.sqrt(sum(x * x for x in v.values())) or 1.0
    return {w: x / norm for w, x in v.items()}


def prompt(data: dict[str, Any], top_sessions: int, min_similarity: float, room: int, per100: float) -> list[dict[str, Any]]:
    docs: list[tuple[Counter[str], set[str]]] = []  # each earlier session: its prompts' words, its names
    rows = []
    speaker = Speaker("earlier sessions like this one used", per100)
    for view, raw in sessions(data):
        if view is not None:
            df = Counter(w for words, _ in docs for w in words)
            idf = {w: math.log((len(docs) + 1) / (c + 1)) for w, c in df.items()}
            vectors = [_vector(words, idf, math.log(len(docs) + 1)) for words, _ in docs]
            speaker.start(view)
            seen: set[str] = set()
            done = 0
            for position, text in view.prompts:
                for k in range(done, position + 1):
                    seen.update(view.used[k])
                    seen.update(names_in(view.outputs[k]))
                done = position + 1
                q = _vector(Counter(w for w in _WORD.findall(text.lower()) if w not in _STOP), idf, math.log(len(docs) + 1))
                if len(q) < 3:
                    continue
                similar = sorted(((sum(q.get(w, 0.0) * x for w, x in d.items()), i) for i, d in enumerate(vectors)), reverse=True)
                score: Counter[str] = Counter()
                for similarity, i in similar[:top_sessions]:
                    if similarity >= min_similarity:
                        for n in docs[i][1]:
                            score[n] += similarity  # type: ignore[assignment]  # Counter of floats
                names: list[str] = []
                for n, _ in score.most_common():
                    if n in view.known and n not in seen and n not in speaker.said:
                        if len(", ".join([*names, n])) > room:
                            break
                        names.append(n)
                speaker.say(position, names, tool=False)
            rows.append(scored(view, speaker.notes))
        docs.append((Counter(w for _, text in raw["prompts"] for w in _WORD.findall(text.lower()) if w not in _STOP),
                     {n for e in raw["used"] for n in e}))
    return rows


def oracle(data: dict[str, Any], per100: float | None) -> list[dict[str, Any]]:
    # what today's notes spent in each later session, in order (only when that is the budget)
    today = iter([sum(len(i.text) for i in row[3] if i.kind == "note") for row in replay_notes(data)] if per100 is None else [])
    rows = []
    for view, _ in sessions(data):
        if view is None:
            continue
        budget = int(per100 * len(view.used) / 100) if per100 is not None else next(today)
        told = view.told
        first = foreseen.first_seen(view.known, [set(e) for e in view.used], view.outputs)
        will = sorted((n for n in {n for e in view.used for n in e} & view.known if first.get(n, 0) > 0 and n not in told),
                      key=lambda n: (len(n), n))
        names: list[str] = []
        for n in will:
            if len(", ".join([*names, n])) > budget:
                break
            names.append(n)
        notes = [foreseen.Injection(0, "note", ", ".join(names))] if names else []
        rows.append(scored(view, notes))
    return rows


def reach(data: dict[str, Any]) -> dict[str, Any]:
    where: Counter[str] = Counter()
    tenth: Counter[int] = Counter()
    rows = []
    for view, _ in sessions(data):
        if view is None:
            continue
        startup = next((b.text.lower() for b in view.blocks if b.kind == "startup"), "")
        used_known = {n for e in view.used for n in e} & view.known
        first = foreseen.first_seen(used_known, [set(e) for e in view.used], view.outputs)
        for n in used_known:
            if n in startup:
                where["in the startup block"] += 1
                continue
            j = first[n]
            where["first met in a prompt or tool input" if n in view.used[j] else "first met in a tool's output"] += 1
            tenth[min(9, 10 * j // max(1, len(view.used)))] += 1
        rows.append(scored(view, []))
    total = sum(tenth.values())
    return {"known names used": dict(where),
            "not in the startup block, by the tenth of the session where first met": {
                f"{10 * t}-{10 * t + 10}%": round(c / total, 3) for t, c in sorted(tenth.items())},
            "with no notes at all": pooled(rows)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("what", choices=("reach", "oracle", "cousage", "sequence", "prompt"))
    parser.add_argument("dir", type=Path, help="a capture of bench/eval_notes_offline.py")
    parser.add_argument("--per100", type=float, default=None, help="note characters per 100 events (default: the oracle "
                        "spends what today's notes spent in the session; the others 1,500, the issue's bar)")
    parser.add_argument("--min-confidence", type=float, default=0.2)
    parser.add_argument("--min-sessions", type=int, default=3)
    parser.add_argument("--per-trigger", type=int, default=3)
    parser.add_argument("--window", type=int, default=5)
    parser.add_argument("--from-outputs", action="store_true")
    parser.add_argument("--sessions", type=int, default=3, help="prompt: the most similar earlier sessions read")
    parser.add_argument("--min-similarity", type=float, default=0.2)
    parser.add_argument("--room", type=int, default=300, help="prompt: characters of names a note may hold")
    args = parser.parse_args()
    if not (args.dir / "capture.pkl").is_file():
        print(f"no capture in {args.dir}: run bench/eval_notes_offline.py capture {args.dir} (needs {CORPUS})", file=sys.stderr)
        raise SystemExit(1)
    data = _load(args.dir)
    per100 = 1500.0 if args.per100 is None else args.per100
    result: dict[str, Any]
    if args.what == "reach":
        result = reach(data)
    elif args.what == "oracle":
        result = pooled(oracle(data, args.per100))
    elif args.what == "cousage":
        result = pooled(cousage(data, args.min_confidence, args.min_sessions, args.per_trigger, per100))
    elif args.what == "sequence":
        result = pooled(sequence(data, args.window, args.from_outputs, args.min_confidence, args.min_sessions, args.per_trigger, per100))
    else:
        result = pooled(prompt(data, args.sessions, args.min_similarity, args.room, per100))
    print(json.dumps(result, indent=1))


if __name__ == "__main__":
    main()
