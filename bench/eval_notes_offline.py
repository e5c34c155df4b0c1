#!/usr/bin/env python3
"""The notes' figures in seconds: replay the chain once, then score note selections offline.

    python bench/eval_notes_offline.py capture DIR [--budget 800] [--sessions N]
    python bench/eval_notes_offline.py score DIR [--set NAME=VALUE ...]
    python bench/eval_notes_offline.py kinds DIR [--set NAME=VALUE ...]

``capture`` replays ``../shared/corpus/entire-cli`` (its ``index.json`` order; the first
``--sessions`` only if given) exactly as ``bench/eval_chain.py`` does (sync, offline probe, one
warm graph in an embedded PostgreSQL, stopped at the end) and keeps in ``DIR`` what the notes
drew on: every prompt and tool event's paths, text and hook counter, what the hot graph told
at it (the prompt's news and named branches, a tool's decision note), each session's
injections, names used and outputs, and the project's snapshot after every session (what the
next one's notes read). It prints the foreseen figures of the run (as ``rgraph eval --chain``).

``score`` runs the *current* :mod:`rolling_graph.render.notes` again over the capture (the
tool notes and prompt notes chosen afresh, the hot graph's text as captured, everything
charged against the session budget as :func:`rolling_graph.render.inject.speak` does) and
prints the same figures, pooled over the sessions after the first ten: change a rule in
``render/notes.py``, score again. What the hot graph tells at a prompt (``prompt_context``)
is replayed as captured: changing it needs a new capture.

``kinds`` scores the same way and prints, for each part of a note that surfaced a name
(:data:`rolling_graph.render.notes.PART_LABELS` of a prompt's or a tool's note, its head line,
or the hot graph's own text at a prompt: its news and the branches it names), the names it
surfaced and how many the session used within 40 events (precision by part), and the
characters each kind of text cost. ``--set`` changes a constant of
:mod:`rolling_graph.render.notes` for the run (``--set PROMPT_PARTS=code --set
TOOL_PARTNERS_SHOWN=1``; a ``*_PARTS`` value is a comma-separated list, ``-`` for none), and
``--drop-hot named|news|all`` leaves the hot graph's named branches, its news or both out of
the prompts' text, to try cuts before making them. Not part of CI.
"""

from __future__ import annotations

import argparse
import json
import pickle
import shutil
import sys
import tempfile
from pathlib import Path
from typing import Any

from corpus_cli import CORPUS

from rolling_graph.cli.eval_chain import chain_files
from rolling_graph.core.config import RenderSettings, Settings
from rolling_graph.core.model import new_counters
from rolling_graph.core.types import HookOutput, PendingEvent
from rolling_graph.evaluation import chain, chain_eval, foreseen
from rolling_graph.evaluation.corpus import event_names, names_in, ranked_lists
from rolling_graph.hook import handle_event
from rolling_graph.render import inject
from rolling_graph.render import notes as rn
from rolling_graph.replay import run as run_mod
from rolling_graph.replay.run import ReplayOptions
from rolling_graph.warm import embeddings, server
from rolling_graph.warm.snapshot_files import snapshot_file

PROJECT = "/tmp/entire-cli"
FIGURES = ("memory", "startup", "baseline", "vs_baseline", "vs_startup", "surfaced", "precision", "note_chars_per_100_events",
           "max_note_chars_in_a_session", "tool_precision", "tool_note_chars_per_100_events")


def resume_pool(settings: Settings, root: str, generated_at: str | None) -> dict[str, Any] | None:
    """What the resume snapshot was ranked from after a session
    (:func:`rolling_graph.warm.resume.resume_inputs`), so that ``bench/eval_startup_offline.py
    --legs`` can rank it again: the candidate pool, the node rows as the snapshot holds them,
    the snapshot's head, the superseded ids, the clock."""
    from rolling_graph.core.clock import parse_iso
    from rolling_graph.warm import db, resume

    now = parse_iso(generated_at)
    if now is None:
        return None
    with db.connect(settings, start=False) as conn:
        row = conn.execute("SELECT id FROM projects WHERE root = %s", (root,)).fetchone()
        if row is None:
            return None
        got = resume.resume_inputs(conn, int(row[0]), now)
    return {"now": now, "pool": got.pool, "rows": {nid: resume.node_payload(r) for nid, r in {**got.rows, **got.left.rows}.items()},
            "left": got.left.ids(), "hidden": got.hidden}


def capture(out: Path, budget: int, limit: int | None) -> None:
    import psycopg

    out.mkdir(parents=True, exist_ok=True)
    sessions = chain.in_time_order(chain_files([CORPUS / "entire-cli"]))[:limit]
    targets = chain_eval.later_targets(sessions)
    where: dict[str, Any] = {"sid": None, "pos": -1}
    calls: list[dict[str, Any]] = []
    told: dict[str, str] = {}
    handle, speak, prompt_context, tool_context = handle_event, inject.speak, inject.prompt_context, inject.tool_context

    def on_handle(event: str, payload: dict[str, Any], settings: Settings | None = None) -> HookOutput | None:
        if payload.get("session_id") != where["sid"]:
            where["sid"], where["pos"] = payload.get("session_id"), -1
        where["pos"] += 1
        return handle(event, payload, settings)

    def on_prompt(*args: Any, **kw: Any) -> str:
        told["delta"] = prompt_context(*args, **kw)
        return told["delta"]

    def on_tool(*args: Any, **kw: Any) -> str:
        told["tool"] = tool_context(*args, **kw)
        return told["tool"]

    def on_speak(view: Any, event_name: str, event: Any, settings: Settings, notes: Any = None) -> str:
        told.clear()
        text = speak(view, event_name, event, settings, notes)
        calls.append({"sid": where["sid"], "pos": where["pos"], "event": event_name, "paths": list(event["paths"]), "text": event["text"],
                      "events": view.state["counters"]["events"], "delta": told.get("delta", ""), "tool": told.get("tool", "")})
        return text

    # The replay calls run_mod's own binding of handle_event (imported there, not re-exported).
    vars(run_mod)["handle_event"] = on_handle
    inject.speak, inject.prompt_context, inject.tool_context = on_speak, on_prompt, on_tool
    server.exit_on_terminate()  # killed, it still stops the server below
    base = Path(tempfile.mkdtemp(prefix="rgnotes-", dir="/tmp"))
    home = base / "server"
    try:
        server.ensure_running(home)
        info = server.running_info(home)
        assert info is not None
        with psycopg.connect(server.dsn_for(info, "postgres"), autocommit=True) as conn:
            conn.execute('CREATE DATABASE "notes"')
        settings = Settings(home=base / "state", dsn=server.dsn_for(info, "notes"), embedder="lexical")
        options = ReplayOptions(probe="offline", mode="sync", budget=budget, clock="transcript", project=PROJECT)
        snapshots: list[str | None] = []
        pools: list[dict[str, Any] | None] = []

        def on_step(step: chain.ChainStep) -> None:
            path = Path(snapshot_file(settings.home, PROJECT))
            snapshots.append(path.read_text(encoding="utf-8") if path.exists() else None)
            pools.append(resume_pool(settings, PROJECT, json.loads(snapshots[-1])["generated_at"] if snapshots[-1] else None))
            print(len(snapshots), step.recorded.session_id, flush=True)

        steps = chain.replay_chain(sessions, settings, options, embedder=embeddings.LexicalEmbedder(), on_step=on_step)
        rows = chain_eval._chain_report(targets, steps, settings, budget)
    finally:
        server.stop(home)
        shutil.rmtree(base, ignore_errors=True)
    pooled = foreseen.pooled_foreseen([r["foreseen"] for r in rows if r["position"] >= foreseen.SKIP_FIRST], chain_eval._session_budget_chars())
    kept = [{"sid": s.recorded.session_id, "index": [e.index for e in s.recorded.events], "used": event_names(s.recorded.events, "content"),
             "outputs": [foreseen._output_text(e.payload) for e in s.recorded.events],
             "records": [(r.index, r.event, r.source, r.injection) for r in s.replay.records]} for s in steps]
    with open(out / "capture.pkl", "wb") as fh:
        pickle.dump({"sessions": kept, "calls": calls, "snapshots": snapshots, "pools": pools, "budget": budget}, fh)
    print(json.dumps({k: pooled[k] for k in FIGURES}, indent=1))


#: A session as scored: (known, used, outputs, injections, each injection's parts, frequent).
Scored = tuple[set[str], list[list[str]], list[str], list[foreseen.Injection], list[list[tuple[str, str]]], list[str]]


def hot_parts(text: str, where: str) -> list[tuple[str, str]]:
    """The hot graph's text at a prompt (``where`` = "prompt") or a tool, by part: a prompt's
    news and the branches it names (after "You named:")."""
    out: list[tuple[str, str]] = []
    named = False
    for line in text.splitlines():
        named = named or line.startswith("You named:")
        out.append((f"{where}:hot-named" if named else f"{where}:hot", line))
    return out


def _drop_hot(parts: list[tuple[str, str]], drop: str) -> list[tuple[str, str]]:
    if drop == "all":
        return []
    if drop == "named":
        kept = [(k, line) for k, line in parts if not k.endswith("hot-named")]
    elif drop == "news":
        kept = [(k, line) for k, line in parts if k.endswith("hot-named")]
    else:
        return parts
    # A heading with nothing under it goes too.
    return kept if any(not line.startswith(("New in this", "You named:")) and line.strip() for _, line in kept) else []


def blocks(session: dict[str, Any]) -> list[foreseen.Injection]:
    """A captured session's startup and compaction blocks, at their events' places."""
    position = {ix: k for k, ix in enumerate(session["index"])}
    return [foreseen.Injection(position[ix], "startup" if src == "startup" else "block", text)
            for ix, ev, src, text in session["records"] if text and ev == "SessionStart" and ix in position]


def replay_notes(data: dict[str, Any], drop_hot: str = "") -> list[Scored]:
    """Every later session's injections, the notes chosen afresh by the current rules."""
    settings = RenderSettings(budget_tokens=data["budget"])
    calls: dict[str, list[dict[str, Any]]] = {}
    for c in data["calls"]:
        calls.setdefault(c["sid"], []).append(c)
    out: list[Scored] = []
    earlier: list[tuple[str, ...]] = []
    for p, s in enumerate(data["sessions"]):
        if p >= foreseen.SKIP_FIRST:
            snap = data["snapshots"][p - 1]
            notes = (json.loads(snap).get("notes") or {}) if snap else {}
            injections = blocks(s)
            parts: list[list[tuple[str, str]]] = [[] for _ in injections]
            counters = new_counters()  # the notes read only events, note_chars, notes_told and notes_touched
            for c in calls.get(s["sid"], []):
                counters["events"] = c["events"]
                if c["event"] == "UserPromptSubmit":  # as inject.speak: the hot graph's text first, then the notes
                    left = rn.session_left(counters, settings)
                    hot = _drop_hot(hot_parts(c["delta"], "prompt"), drop_hot)
                    delta = "\n".join(line for _, line in hot)
                    text = delta if len(delta) <= left else ""
                    rn.charge(counters, len(text))
                    room = min(int(settings.budget_tokens * settings.chars_per_token), left) - len(text) - (1 if text else 0)
                    extra = rn.prompt_notes(counters, c["text"], notes, settings, room) if notes else ""
                    text = f"{text}\n{extra}" if text and extra else text or extra
                    part = ([*hot] if len(delta) <= left else []) + [(f"prompt:{k}", line) for k, line in rn.note_parts(extra)]
                else:
                    text = c["tool"]
                    rn.charge(counters, len(text))
                    # tool_note reads only the event's paths and text; the rest completes a PendingEvent.
                    tool_event: PendingEvent = {"id": "", "event": c["event"], "at": "", "text": c["text"], "tool": None, "paths": c["paths"],
                                                "error": False, "reasons": []}
                    note = rn.tool_note(counters, tool_event, notes if not text else {}, settings)
                    part = hot_parts(text, "tool") if text else [(f"tool:{k}", line) for k, line in rn.note_parts(note)]
                    text = text or note
                if text:
                    injections.append(foreseen.Injection(c["pos"], "note", text, c["event"] != "UserPromptSubmit"))
                    parts.append(part)
            known = {n for event in earlier for n in event}
            out.append((known, s["used"], s["outputs"], injections, parts, ranked_lists(earlier)["frequent"]))
        earlier.extend(tuple(e) for e in s["used"])
    return out


def _load(out: Path) -> dict[str, Any]:
    with open(out / "capture.pkl", "rb") as fh:
        data: dict[str, Any] = pickle.load(fh)
    return data


def score(out: Path, drop_hot: str = "") -> dict[str, Any]:
    rows = [foreseen.session_foreseen(known, used, outputs, injections, frequent)
            for known, used, outputs, injections, _, frequent in replay_notes(_load(out), drop_hot)]
    return foreseen.pooled_foreseen(rows, chain_eval._session_budget_chars())


def kinds(out: Path, drop_hot: str = "") -> dict[str, dict[str, float]]:
    """Names surfaced, hits, precision and characters by the part of a note that said them."""
    table: dict[str, dict[str, float]] = {}

    def row(kind: str) -> dict[str, float]:
        return table.setdefault(kind, {"surfaced": 0, "hits": 0, "chars": 0})

    for known, used, outputs, injections, parts, _ in replay_notes(_load(out), drop_hot):
        for k, injection in enumerate(injections):
            if injection.kind == "note":
                for kind, line in parts[k]:
                    row(kind)["chars"] += len(line) + 1
        for name, found in foreseen.surfaced_names(known, used, outputs, injections).items():
            kind = next((kd for kd, line in parts[found.note] if name in names_in(line)), "unattributed")
            row(kind)["surfaced"] += 1
            row(kind)["hits"] += found.hit
    for r in table.values():
        r["precision"] = round(r["hits"] / r["surfaced"], 3) if r["surfaced"] else 0.0
    return dict(sorted(table.items()))


def _set(assignments: list[str]) -> None:
    """``NAME=VALUE``: a constant of :mod:`rolling_graph.render.notes` for this run."""
    for a in assignments:
        name, _, value = a.partition("=")
        current = getattr(rn, name)  # an unknown name fails here
        new: Any
        if isinstance(current, tuple):
            new = tuple(v for v in value.split(",") if v and v != "-")
            unknown = set(new) - set(rn.PART_LABELS)
            if unknown:
                raise SystemExit(f"{name}: no such part {sorted(unknown)} (parts: {sorted(rn.PART_LABELS)})")
        elif isinstance(current, bool):
            new = value.lower() in ("1", "true", "yes", "on")
        elif isinstance(current, int):
            new = int(value)
        else:
            new = float(value)
        setattr(rn, name, new)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("what", choices=("capture", "score", "kinds"))
    parser.add_argument("dir", type=Path)
    parser.add_argument("--budget", type=int, default=800)
    parser.add_argument("--sessions", type=int, default=None)
    parser.add_argument("--set", action="append", default=[], metavar="NAME=VALUE")
    parser.add_argument("--drop-hot", choices=("named", "news", "all"), default="")
    args = parser.parse_args()
    if not (CORPUS / "entire-cli" / "index.json").is_file():
        print(f"no entire-cli chain in the corpus {CORPUS} (set ROLLING_GRAPH_CORPUS)", file=sys.stderr)
        raise SystemExit(1)
    _set(args.set)
    if args.what == "capture":
        capture(args.dir, args.budget, args.sessions)
    elif args.what == "kinds":
        for kind, r in kinds(args.dir, args.drop_hot).items():
            print(f"{kind:22} surfaced {int(r['surfaced']):4}  hits {int(r['hits']):4}  precision {r['precision']:.3f}  chars {int(r['chars']):7}")
        pooled = score(args.dir, args.drop_hot)
        print(json.dumps({k: pooled[k] for k in FIGURES}, indent=1))
    else:
        pooled = score(args.dir, args.drop_hot)
        print(json.dumps({k: pooled[k] for k in FIGURES}, indent=1))


if __name__ == "__main__":
    main()
