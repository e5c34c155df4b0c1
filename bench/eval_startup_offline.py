#!/usr/bin/env python3
"""The startup block's figure in seconds: render it again from a captured chain's snapshots.

    python bench/eval_startup_offline.py CAPTURE [--budget 800 --budget 400] [--gaps N]

``CAPTURE`` is a ``capture.pkl`` (or its directory) that ``bench/eval_notes_offline.py
capture`` wrote: the ``entire-cli`` chain replayed once into a warm graph, with the project's
resume snapshot after every session. For each session after the first, this writes the
snapshot the previous session left into a fresh state directory and runs the real
``SessionStart(startup)`` hook on it (:func:`rolling_graph.hook.handle_event`, clock pinned at
the session's first event), then scores the block as ``bench/eval_chain.py`` does: the names
the session's first 60 events use that earlier sessions used
(:func:`rolling_graph.evaluation.chain_eval.later_targets`), pooled, against the most
frequent and most recent earlier names in the same characters.

What it re-runs is everything from the snapshot on: the merge into the hot graph, the
ranking in the hot graph and the rendering (``render/``). What it does not re-run is the
warm graph's own choice and order of the snapshot's nodes (``warm/resume.py``): changing
that needs a new capture (or ``bench/eval_chain.py``). ``--gaps N`` prints the N names the
best list recalls and the block does not most often, and the other way round.
``--without-schema-values`` leaves the values of the tool schema's enums the measure reads as
names (``files_with_matches``, ``in_progress``) out of the gold names and of the lists. Not part of CI.
"""

from __future__ import annotations

import argparse
import collections
import dataclasses
import json
import pickle
import shutil
import tempfile
from pathlib import Path
from typing import Any

from corpus_cli import CORPUS, SCHEMA_VALUES, without

from rolling_graph.cli.eval_chain import chain_files
from rolling_graph.core.clock import Clock
from rolling_graph.core.config import RenderSettings, Settings
from rolling_graph.evaluation import chain, chain_eval
from rolling_graph.evaluation.corpus import budget_chars, list_block, ranked_lists
from rolling_graph.hook import handle_event
from rolling_graph.warm import rank, resume
from rolling_graph.warm.snapshot_files import snapshot_file

PROJECT = "/tmp/entire-cli"  # the project path bench/eval_notes_offline.py replays into


def startup_block(snapshot: str | None, sid: str, started: str, budget: int) -> str:
    """The block the real hook gives a new session ``sid`` of the project holding ``snapshot``."""
    base = Path(tempfile.mkdtemp(prefix="rgstart-"))
    try:
        settings = Settings(home=base, warm=False, render=RenderSettings(budget_tokens=budget), clock=Clock.at(started))
        if snapshot is not None:
            path = Path(snapshot_file(settings.home, PROJECT))
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(snapshot, encoding="utf-8")
        transcript = base / "transcript.jsonl"
        transcript.touch()
        out = handle_event("session-start", {"session_id": sid, "hook_event_name": "SessionStart", "source": "startup",
                                            "cwd": PROJECT, "transcript_path": str(transcript)}, settings)
        specific: dict[str, Any] = dict((out or {}).get("hookSpecificOutput") or {})
        return str(specific.get("additionalContext") or "")
    finally:
        shutil.rmtree(base, ignore_errors=True)


def reranked(snapshot: str, pool: dict[str, Any], settings: rank.RankSettings) -> str:
    """``snapshot`` with its names ranked again from the captured ``pool`` (as
    :func:`rolling_graph.warm.resume.build_snapshot` does, with ``settings``)."""
    snap = json.loads(snapshot)
    seen = {n["id"]: n["seen_in"] for n in snap["nodes"] if "seen_in" in n}
    rows = pool["rows"]
    ranked = rank.rank(pool["pool"], pool["now"], settings)
    order = resume.snapshot_order(pool["left"], ranked, {nid: row["kind"] for nid, row in rows.items()}, pool["hidden"])
    snap["nodes"] = [{**rows[nid], **({"seen_in": seen[nid]} if nid in seen else {})} for nid in order]
    return json.dumps(snap)


def with_legs(spec: str) -> rank.RankSettings:
    weights = dict(rank.RESUME.leg_weights)
    for part in filter(None, spec.split(",")):
        leg, _, value = part.partition("=")
        weights[leg.strip()] = float(value)
    return dataclasses.replace(rank.RESUME, leg_weights=tuple(weights.items()))


def score(data: dict[str, Any], budgets: list[int], gaps: int, schema_values: bool = True) -> dict[str, Any]:
    sessions = chain.in_time_order(chain_files([CORPUS / "entire-cli"]))
    ids = [s["sid"] for s in data["sessions"]]
    if [s.session_id for s in sessions][: len(ids)] != ids:
        raise SystemExit("the capture is not of this corpus's chain (session order differs)")
    targets = chain_eval.later_targets(sessions[: len(ids)])
    if not schema_values:
        targets = [dataclasses.replace(t, touched_before=without(t.touched_before, SCHEMA_VALUES), target=t.target - SCHEMA_VALUES)
                   for t in targets]
    report: dict[str, Any] = {}
    for budget in budgets:
        rows = []
        only_list: collections.Counter[str] = collections.Counter()
        only_block: collections.Counter[str] = collections.Counter()
        for later in targets:
            rec = sessions[later.position]
            block = startup_block(data["snapshots"][later.position - 1], rec.session_id, rec.started or "2026-01-01T00:00:00Z", budget)
            row = chain_eval.scores(later, block, budget)
            rows.append({"position": later.position, "names": len(later.target), "methods": row})
            if gaps:
                shown = block[: budget_chars(budget)].lower()
                listed = list_block(ranked_lists(later.touched_before)["frequent"], budget).lower()
                for name in later.target:
                    only_list[name] += name in listed and name not in shown
                    only_block[name] += name in shown and name not in listed
        pooled = chain_eval.pooled_chain(rows)
        report[str(budget)] = pooled
        print(f"@{budget}: " + ", ".join(f"{k} {v:.4f}" if isinstance(v, float) else f"{k} {v}" for k, v in pooled.items()), flush=True)
        if gaps:
            print(f"  frequent only ({sum(only_list.values())}):", ", ".join(f"{n} {c}" for n, c in only_list.most_common(gaps) if c))
            print(f"  block only ({sum(only_block.values())}):", ", ".join(f"{n} {c}" for n, c in only_block.most_common(gaps) if c))
    return report


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("capture", type=Path)
    parser.add_argument("--budget", type=int, action="append")
    parser.add_argument("--gaps", type=int, default=0)
    parser.add_argument("--legs", action="append", default=[], metavar="LEG=WEIGHT,...",
                        help="rank the snapshots again with these leg weights (repeat to compare several)")
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--without-schema-values", action="store_true",
                        help="leave files_with_matches and in_progress out of the names (gold and lists)")
    args = parser.parse_args()
    path = args.capture / "capture.pkl" if args.capture.is_dir() else args.capture
    if not path.is_file():
        raise SystemExit(f"no capture at {path}: run `python bench/eval_notes_offline.py capture DIR` first")
    with open(path, "rb") as fh:
        data = pickle.load(fh)
    budgets = args.budget or [800, 400]
    if not args.legs:
        report = score(data, budgets, args.gaps, not args.without_schema_values)
    else:
        if not data.get("pools"):
            raise SystemExit("this capture has no candidate pools (capture it again with bench/eval_notes_offline.py)")
        report = {}
        for spec in args.legs:
            settings = with_legs(spec)
            print(f"legs {dict(settings.leg_weights)}", flush=True)
            snaps = [reranked(snap, pool, settings) if snap and pool else snap for snap, pool in zip(data["snapshots"], data["pools"], strict=True)]
            report[spec] = score({**data, "snapshots": snaps}, budgets, args.gaps, not args.without_schema_values)
    if args.json:
        print(json.dumps(report, indent=1))


if __name__ == "__main__":
    main()
