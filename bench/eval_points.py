#!/usr/bin/env python3
"""The corpus measure at every Nth event of each session, not only at its compactions.

    python bench/eval_points.py [--every 8] [--budget 800 --budget 400] [--json] [TRANSCRIPT ...]

A compaction can come at any event, and two recorded compactions are too few points to
choose a ranking by. For each transcript (default: every ``*.jsonl`` of ``../shared/corpus``,
or ``$ROLLING_GRAPH_CORPUS``) this replays the session honestly (offline probe, sync), and
every ``--every`` events flushes what is pending as a ``PreCompact`` would (on a copy of the
state) and scores the ``SessionStart(compact)`` block it would inject against the names the
next 40 events touch that earlier ones touched, next to the naive lists in the same
characters (``rolling_graph.evaluation.points``). Prints the means per session and over all
points: the block, each list, the better of the two per point, and at how many points the
block recalls at least as much. Not part of CI.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from corpus_cli import CORPUS, need  # noqa: E402

from rolling_graph.evaluation.points import run_points_eval  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("transcripts", nargs="*", type=Path, help="recorded sessions (default: the shared corpus)")
    parser.add_argument("--every", type=int, default=8, help="events between two points (default 8)")
    parser.add_argument("--budget", type=int, action="append", help="token budget (repeatable; default 800 and 400)")
    parser.add_argument("--json", action="store_true", help="print every point as JSON")
    args = parser.parse_args()
    transcripts = args.transcripts or sorted(CORPUS.glob("*.jsonl"))
    need(transcripts, f"no transcripts in {CORPUS}")
    if args.every < 1:
        parser.error("--every must be at least 1")
    budgets = args.budget or [800, 400]
    report = run_points_eval(transcripts, args.every, budgets)
    if args.json:
        print(json.dumps(report, indent=1))
        return
    print(f"next-40 recall every {args.every} events (block vs naive lists, same characters); {report['elapsed_s']:.1f} s")
    print(f"{'session':28s} {'metric':8s} {'tokens':>6s} {'points':>6s} {'graph':>6s} {'freq':>6s} {'recent':>6s} {'best':>6s} {'graph/best':>10s} {'>= best':>8s}")
    for metric in report["metrics"]:
        for budget in budgets:
            for session in report["sessions"]:
                _line(Path(session["transcript"]).name, metric, budget, session["scored"][metric]["mean"][str(budget)])
            _line("all", metric, budget, report["mean"][metric][str(budget)])


def _line(name: str, metric: str, budget: int, mean: dict[str, Any]) -> None:
    if not mean["points"]:
        print(f"{name[:28]:28s} {metric:8s} {budget:6d} {0:6d}   (no point with enough names)")
        return
    ratio = mean["graph"] / mean["best"] if mean["best"] else float("nan")
    print(f"{name[:28]:28s} {metric:8s} {budget:6d} {mean['points']:6d} {mean['graph']:6.3f} {mean['frequent']:6.3f} "
          f"{mean['recent']:6.3f} {mean['best']:6.3f} {ratio:10.2f} {mean['at_least_best']:8d}")


if __name__ == "__main__":
    main()
