#!/usr/bin/env python3
"""The notes' figures in seconds: replay the chain once, then score note selections offline.

    python bench/eval_notes_offline.py capture DIR [--budget 800] [--sessions N]
    python bench/eval_notes_offline.py score DIR

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
is replayed as captured: changing it needs a new capture. Not part of CI.
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
from rolling_graph.evaluation.corpus import event_names, ranked_lists
from rolling_graph.hook import handle_event
from rolling_graph.render import inject
from rolling_graph.render import notes as rn
from rolling_graph.replay import run as run_mod
from rolling_graph.replay.run import ReplayOptions
from rolling_graph.warm import embeddings, server
from rolling_graph.warm.snapshot import snapshot_file

PROJECT = "/tmp/entire-cli"
FIGURES = ("memory", "startup", "baseline", "vs_baseline", "vs_startup", "surfaced", "precision", "note_chars_per_100_events",
           "max_note_chars_in_a_session", "tool_precision", "tool_note_chars_per_100_events")


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

        def on_step(step: chain.ChainStep) -> None:
            path = Path(snapshot_file(settings.home, PROJECT))
            snapshots.append(path.read_text(encoding="utf-8") if path.exists() else None)
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
        pickle.dump({"sessions": kept, "calls": calls, "snapshots": snapshots, "budget": budget}, fh)
    print(json.dumps({k: pooled[k] for k in FIGURES}, indent=1))


def score(out: Path) -> dict[str, Any]:
    with open(out / "capture.pkl", "rb") as fh:
        data = pickle.load(fh)
    settings = RenderSettings(budget_tokens=data["budget"])
    calls: dict[str, list[dict[str, Any]]] = {}
    for c in data["calls"]:
        calls.setdefault(c["sid"], []).append(c)
    rows: list[dict[str, Any]] = []
    earlier: list[tuple[str, ...]] = []
    for p, s in enumerate(data["sessions"]):
        if p >= foreseen.SKIP_FIRST:
            snap = data["snapshots"][p - 1]
            notes = (json.loads(snap).get("notes") or {}) if snap else {}
            position = {ix: k for k, ix in enumerate(s["index"])}
            injections = [foreseen.Injection(position[ix], "startup" if src == "startup" else "block", text)
                          for ix, ev, src, text in s["records"] if text and ev == "SessionStart" and ix in position]
            counters = new_counters()  # the notes read only events, note_chars, notes_told and notes_touched
            for c in calls.get(s["sid"], []):
                counters["events"] = c["events"]
                if c["event"] == "UserPromptSubmit":  # as inject.speak: the hot graph's text first, then the notes
                    left = rn.session_left(counters, settings)
                    text = c["delta"] if len(c["delta"]) <= left else ""
                    rn.charge(counters, len(text))
                    room = min(int(settings.budget_tokens * settings.chars_per_token), left) - len(text) - (1 if text else 0)
                    extra = rn.prompt_notes(counters, c["text"], notes, settings, room) if notes else ""
                    text = f"{text}\n{extra}" if text and extra else text or extra
                else:
                    text = c["tool"]
                    rn.charge(counters, len(text))
                    # tool_note reads only the event's paths and text; the rest completes a PendingEvent.
                    tool_event: PendingEvent = {"id": "", "event": c["event"], "at": "", "text": c["text"], "tool": None, "paths": c["paths"],
                                                "error": False, "reasons": []}
                    note = rn.tool_note(counters, tool_event, notes if not text else {}, settings)
                    text = text or note
                if text:
                    injections.append(foreseen.Injection(c["pos"], "note", text, c["event"] != "UserPromptSubmit"))
            known = {n for event in earlier for n in event}
            rows.append(foreseen.session_foreseen(known, s["used"], s["outputs"], injections, ranked_lists(earlier)["frequent"]))
        earlier.extend(tuple(e) for e in s["used"])
    return foreseen.pooled_foreseen(rows, chain_eval._session_budget_chars())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("what", choices=("capture", "score"))
    parser.add_argument("dir", type=Path)
    parser.add_argument("--budget", type=int, default=800)
    parser.add_argument("--sessions", type=int, default=None)
    args = parser.parse_args()
    if not (CORPUS / "entire-cli" / "index.json").is_file():
        print(f"no entire-cli chain in the corpus {CORPUS} (set ROLLING_GRAPH_CORPUS)", file=sys.stderr)
        raise SystemExit(1)
    if args.what == "capture":
        capture(args.dir, args.budget, args.sessions)
    else:
        pooled = score(args.dir)
        print(json.dumps({k: pooled[k] for k in FIGURES}, indent=1))


if __name__ == "__main__":
    main()
