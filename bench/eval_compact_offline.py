#!/usr/bin/env python3
"""The compaction figures in seconds: replay the compacting sessions once, then render the
restore block again from each captured graph.

    python bench/eval_compact_offline.py capture DIR [--budget 800]
    python bench/eval_compact_offline.py score DIR [--budget 800] [--rank NAME=VALUE ...] [--restore NAME=VALUE ...]

``capture`` replays every compacting session of the shared corpus as ``bench/eval_corpus.py``
does (the 22 of ``entire-cli/`` with one project path, the two spotter sessions as recorded;
offline probe, sync, honest replay, in this process) and keeps in ``DIR`` the session's hot
graph and Claude's summary at each ``SessionStart(compact)``, as the hook read them. It
prints the pooled figures of the blocks the replay injected.

``score`` renders each captured graph's block again with the *current* code
(:func:`rolling_graph.render.restore.restore_block`, source ``compact``, the summary given) and
prints the same pooled figures (next-40 and summary-dropped, the best list, cells won; the
definitions of ``../shared/corpus/README.md``): change a rule in ``render/``, score again. What
it does not re-run is the gate, the probe and the graph's merge: a change there needs a new
capture (or ``bench/eval_corpus.py``). ``--rank`` changes a field of the ``compact`` ranking
preset (:data:`rolling_graph.render.rank.PRESETS`) for the run, ``--restore`` one of the
block's preset at that budget (``compact`` or ``compact-lean``,
:data:`rolling_graph.render.restore.PRESETS`): ``--rank recency_weight=1.5 --restore
summary_weight=0.7``. ``--without-schema-values`` leaves the values of the tool schema's enums the measure reads as
names (``files_with_matches``, ``in_progress``: ``corpus_cli.SCHEMA_VALUES``) out of the gold
names and of the lists. ``--budget`` at scoring may differ from the capture's (the graph does
not depend on it; what the session was told before does, a little). Not part of CI.
"""

from __future__ import annotations

import argparse
import copy
import dataclasses
import json
import pickle
import shutil
import sys
import tempfile
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from corpus_cli import CORPUS, SCHEMA_VALUES, need, without  # noqa: E402
from eval_corpus import ENTIRE_PROJECT, compacting  # noqa: E402

from rolling_graph.core.config import RenderSettings  # noqa: E402
from rolling_graph.evaluation import corpus  # noqa: E402
from rolling_graph.render import rank as render_rank  # noqa: E402
from rolling_graph.render import restore  # noqa: E402
from rolling_graph.render.sections import RestoreSettings  # noqa: E402
from rolling_graph.render.view import RestoreView  # noqa: E402
from rolling_graph.replay.run import ReplayOptions, replay  # noqa: E402
from rolling_graph.replay.transcript import ParseStats, parse_transcripts  # noqa: E402


def sessions() -> list[tuple[Path, str | None]]:
    entire, spotter = compacting(CORPUS / "entire-cli"), sorted(CORPUS.glob("spotter-*.jsonl"))
    need(entire + spotter, f"no corpus sessions in {CORPUS}")
    return [(p, ENTIRE_PROJECT) for p in entire] + [(p, None) for p in spotter]


def capture(out: Path, budget: int) -> None:
    out.mkdir(parents=True, exist_ok=True)
    seen: list[dict[str, Any]] = []
    real = restore.restore_context

    def keep(view: Any, settings: Any, source: str, summary: str | None = None, ranked: Any = None) -> str:
        if source == "compact":
            seen.append({"doc": copy.deepcopy(view.graph()), "summary": summary})
        return real(view, settings, source, summary, ranked)

    restore.restore_context = keep  # hook.py imports it from the module at each SessionStart
    cells: list[dict[str, Any]] = []
    base = Path(tempfile.mkdtemp(prefix="rgcompact-"))
    try:
        for n, (path, project) in enumerate(sessions()):
            events = list(parse_transcripts([path], ParseStats()))
            targets = corpus.compaction_targets(events)
            seen.clear()
            options = ReplayOptions(probe="offline", mode="sync", budget=budget, clock="transcript", project=project)
            result = replay([str(path)], options=options, home=str(base / f"{n}"))
            injected = {r.index: r.injection or "" for r in result.records}
            if len(seen) != len(targets):
                raise SystemExit(f"{path.name}: {len(targets)} compactions, {len(seen)} blocks rendered")
            for target, got in zip(targets, seen, strict=True):
                cells.append({"session": path.name, "target": target, "doc": got["doc"], "summary": got["summary"],
                              "injected": injected.get(target.index, "")})
            print(f"{n + 1} {path.name}: {len(targets)} compaction(s)", flush=True)
    finally:
        restore.restore_context = real
        shutil.rmtree(base, ignore_errors=True)
    with open(out / "compact.pkl", "wb") as fh:
        pickle.dump({"budget": budget, "cells": cells}, fh)
    print(json.dumps(pooled([(c["target"], c["injected"]) for c in cells], budget), indent=1))


def pooled(cells: list[tuple[corpus.Compaction, str]], budget: int) -> dict[str, Any]:
    """The blocks' figures pooled over the cells, by :func:`rolling_graph.evaluation.corpus.pooled`
    (next-40 and summary-dropped of the block and of both lists, the best list, cells won), with
    the block's ratio to the best list."""
    compactions = []
    for target, text in cells:
        shown = text[: corpus.budget_chars(budget)]
        methods = {"graph-sync": {"hits": corpus.hits(target, shown)},
                   **{k: v for k, v in corpus.baseline_scores(target, budget).items() if k != "best"}}
        compactions.append({"sizes": {f: len(names) for f, names in target.targets().items()},
                            "budgets": {str(budget): {"methods": methods}}})
    report = {"budgets": [budget], "modes": ["sync"], "sessions": [{"compactions": compactions}]}
    figures: dict[str, Any] = corpus.pooled(report)[str(budget)]["sync"]
    for figure in ("next40", "dropped"):
        best = figures[figure]["best"]
        figures[figure]["ratio"] = round(figures[figure]["graph"] / best, 3) if best else None
    return figures


def _value(text: str) -> Any:
    for cast in (int, float):
        try:
            return cast(text)
        except ValueError:
            pass
    return {"true": True, "false": False}.get(text.lower(), text)


def schema_free(target: corpus.Compaction) -> corpus.Compaction:
    """``target`` without :data:`corpus_cli.SCHEMA_VALUES`, in its gold names and in what the lists draw from."""
    return dataclasses.replace(target, touched=without(target.touched, SCHEMA_VALUES), next40=target.next40 - SCHEMA_VALUES,
                               dropped=target.dropped - SCHEMA_VALUES, summary_names=target.summary_names - SCHEMA_VALUES)


def score(src: Path, budget: int | None, rank_set: list[str], restore_set: list[str],
          schema_values: bool = True) -> dict[str, Any]:
    if not (src / "compact.pkl").is_file():
        raise SystemExit(f"no capture in {src}: run `python bench/eval_compact_offline.py capture {src}` first")
    with open(src / "compact.pkl", "rb") as fh:
        data = pickle.load(fh)
    budget = budget or int(data["budget"])
    render = RenderSettings(budget_tokens=budget)
    lean = int(budget * render.chars_per_token) < restore.LEAN_BELOW_CHARS
    rank_preset = render_rank.RankSettings(**{**render_rank.PRESETS["compact"].as_dict(),
                                              **{k: _value(v) for k, v in (s.split("=", 1) for s in rank_set)}})
    restore_name = "compact-lean" if lean else "compact"
    restore_preset = RestoreSettings(**{**restore.PRESETS[restore_name].as_dict(),
                                                **{k: _value(v) for k, v in (s.split("=", 1) for s in restore_set)}})
    blocks = []
    for cell in data["cells"]:
        doc = copy.deepcopy(cell["doc"])
        # As the hook does: the compact presets where the graph is a coding session's, else the defaults.
        names = restore._mostly_names(RestoreView(doc, rank_preset))
        text, _ = restore.restore_block(doc, render, "compact", summary=cell["summary"], rank_settings=rank_preset,
                                        settings=restore_preset if names else None)
        blocks.append((cell["target"] if schema_values else schema_free(cell["target"]), text))
    return pooled(blocks, budget)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("what", choices=("capture", "score"))
    parser.add_argument("dir", type=Path)
    parser.add_argument("--budget", type=int, default=None)
    parser.add_argument("--rank", action="append", default=[], metavar="NAME=VALUE")
    parser.add_argument("--restore", action="append", default=[], metavar="NAME=VALUE")
    parser.add_argument("--without-schema-values", action="store_true",
                        help="leave files_with_matches and in_progress out of the names (gold and lists)")
    args = parser.parse_args()
    if args.what == "capture":
        capture(args.dir, args.budget or 800)
    else:
        print(json.dumps(score(args.dir, args.budget, args.rank, args.restore, not args.without_schema_values), indent=1))


if __name__ == "__main__":
    main()
