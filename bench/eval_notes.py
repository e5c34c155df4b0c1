#!/usr/bin/env python3
"""Tool-time notes on a chain of corpus sessions: characters injected and the notes' precision.

    python bench/eval_notes.py [--sessions 8] [--skip 0] [--corpus-dir entire-cli] [--json]

Replays the first ``--sessions`` sessions of ``../shared/corpus/<dir>/index.json`` (after
``--skip``) in order, each honestly with the offline probe (sync) and reconciled into one
warm graph (an embedded PostgreSQL in a throw-away directory, stopped at the end), so every
session after the first is served notes from the project's snapshot as in real life. For
each session it prints the hook events, the characters the tool-time notes (PostToolUse and
PostToolUseFailure) and the prompt notes injected, and the notes' precision: of the file
paths a note *surfaced* (named, not yet used or seen in the session at that event, not in
the startup block), the share the session used (a tool input or prompt holds it) within
the 40 events after the note. Not part of CI.
"""

from __future__ import annotations

import argparse
import json
import re
import shutil
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from corpus_cli import CORPUS  # noqa: E402

from rolling_graph.core.config import Settings  # noqa: E402
from rolling_graph.evaluation import chain  # noqa: E402
from rolling_graph.replay.run import ReplayOptions  # noqa: E402
from rolling_graph.replay.transcript import parse_transcripts  # noqa: E402
from rolling_graph.warm import embeddings, server  # noqa: E402

WINDOW = 40
NOTE_EVENTS = ("PostToolUse", "PostToolUseFailure")
_WITH = re.compile(r"usually changed with: (.*)")
_PARTNER = re.compile(r"([^\s,()]+) \(\d\.\d\d\)")


def _inputs(event: Any) -> str:
    p = event.payload
    if event.hook_event_name == "UserPromptSubmit":
        return str(p.get("prompt") or "")
    return json.dumps(p.get("tool_input") or {}, ensure_ascii=False)


def _seen(event: Any) -> str:
    p = event.payload
    return _inputs(event) + json.dumps(p.get("tool_response") or "", ensure_ascii=False)[:20000]


def surfaced_names(note: str) -> list[str]:
    out = []
    for line in note.splitlines():
        m = _WITH.search(line)
        if m:
            out += _PARTNER.findall(m.group(1))
    return out


def session_report(step: chain.ChainStep) -> dict[str, Any]:
    events = {e.index: e for e in step.recorded.events}
    order = [e.index for e in step.recorded.events]
    pos = {idx: k for k, idx in enumerate(order)}
    startup = next((r.injection or "" for r in step.replay.records if r.event == "SessionStart"), "")
    tool_chars = prompt_chars = notes = 0
    surfaced: list[tuple[str, bool]] = []
    counted: set[str] = set()
    examples: list[str] = []
    for r in step.replay.records:
        if not r.injection or r.event not in (*NOTE_EVENTS, "UserPromptSubmit"):
            continue
        if r.event in NOTE_EVENTS:
            if "earlier sessions" not in r.injection:
                continue
            tool_chars += len(r.injection)
            notes += 1
            if len(examples) < 2:
                examples.append(r.injection)
        else:
            prompt_chars += len(r.injection)
        k = pos.get(r.index)
        if k is None:
            continue
        before = "".join(_seen(events[i]) for i in order[: k + 1])
        after = "".join(_inputs(events[i]) for i in order[k + 1 : k + 1 + WINDOW])
        for name in surfaced_names(r.injection):
            if name in counted or name in startup or name in before:
                continue
            counted.add(name)
            surfaced.append((name, name in after))
    hook_events = len(step.replay.records)
    return {"session": step.recorded.session_id[:8], "events": hook_events, "tool_note_chars": tool_chars, "notes": notes,
            "prompt_chars": prompt_chars, "surfaced": len(surfaced), "hits": sum(1 for _, h in surfaced if h), "examples": examples}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sessions", type=int, default=8)
    parser.add_argument("--skip", type=int, default=0)
    parser.add_argument("--corpus-dir", default="entire-cli")
    parser.add_argument("--project", default="/tmp/entire-cli")
    parser.add_argument("--budget", type=int, default=800)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    folder = CORPUS / args.corpus_dir
    index = json.loads((folder / "index.json").read_text(encoding="utf-8"))
    paths = [folder / row["file"] for row in index][args.skip : args.skip + args.sessions]
    sessions = [chain.Recorded(p, tuple(parse_transcripts([p]))) for p in paths]
    base = Path(tempfile.mkdtemp(prefix="rgnotes-", dir="/tmp"))
    pg = base / "pg"
    t0 = time.perf_counter()
    rows: list[dict[str, Any]] = []
    try:
        server.ensure_running(pg)
        info = server.running_info(pg)
        assert info is not None
        settings = Settings(home=base / "state", dsn=server.dsn_for(info, "postgres"), embedder="lexical")
        options = ReplayOptions(probe="offline", mode="sync", budget=args.budget, clock="transcript", project=args.project)

        def on_step(step: chain.ChainStep) -> None:
            row = session_report(step)
            rows.append(row)
            if not args.json:
                print(f"{row['session']}  events {row['events']:4}  tool notes {row['notes']:3} / {row['tool_note_chars']:5} chars"
                      f"  prompt notes {row['prompt_chars']:5} chars  surfaced {row['surfaced']:3}  used {row['hits']:3}", flush=True)

        chain.replay_chain(sessions, settings, options, embedder=embeddings.LexicalEmbedder(), on_step=on_step)
    finally:
        server.stop(pg)
        shutil.rmtree(base, ignore_errors=True)
    later = rows[1:]
    events = sum(r["events"] for r in later) or 1
    chars = sum(r["tool_note_chars"] for r in later)
    surfaced = sum(r["surfaced"] for r in later)
    hits = sum(r["hits"] for r in later)
    pooled = {"sessions": len(later), "tool_note_chars_per_100_events": round(100 * chars / events, 1),
              "tool_note_chars_per_session": round(chars / max(1, len(later)), 1), "surfaced": surfaced, "hits": hits,
              "precision": round(hits / surfaced, 3) if surfaced else None, "elapsed_s": round(time.perf_counter() - t0, 1)}
    if args.json:
        print(json.dumps({"sessions": rows, "pooled": pooled}, indent=1))
    else:
        print("pooled over the sessions after the first:", json.dumps(pooled))
        for row in rows:
            for ex in row["examples"][:1]:
                print(f"--- {row['session']}\n{ex}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
