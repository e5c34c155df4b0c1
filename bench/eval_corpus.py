#!/usr/bin/env python3
"""The corpus figures (same code as ``rgraph eval --transcripts``) over the whole dev corpus.

    python bench/eval_corpus.py [--mode sync] [--mode async] [--budget 800 --budget 400] [--cells] [--show-blocks] [--gaps 20] [--json] [--jobs 2]

Replays every compacting session of the shared corpus (``../shared/corpus`` beside the
checkout, or ``$ROLLING_GRAPH_CORPUS``) honestly with the offline probe: the 120 sessions of
``entire-cli/`` with every event's ``cwd`` set to one project path (they were recorded in
worktrees and directories of one repository), and the two spotter sessions as recorded.
Prints the next-40 and summary-dropped recall of the restore block and of the naive name
lists pooled over all compactions (34 cells), the best list, the block ÷ the best list, and
the cells won, at each budget (``--cells``: every cell too; ``--gaps N``: the N next-40 names
the best list recalls and the block does not, most cells first, pooled). Sync by default: about two
minutes on two cores; ``--mode async`` takes about seven. Not part of CI (the suite pins a
subset: ``tests/evaluation/test_corpus.py``).
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from corpus_cli import CORPUS, need  # noqa: E402
from rich.console import Console  # noqa: E402

from rolling_graph.cli.eval_corpus import render_corpus_report  # noqa: E402
from rolling_graph.evaluation.corpus import pooled, run_corpus_eval  # noqa: E402

#: The project path every event of an ``entire-cli`` session is replayed in.
ENTIRE_PROJECT = "/tmp/entire-cli"


def compacting(directory: Path) -> list[Path]:
    """The sessions of a corpus directory that compact (its ``index.json`` says which), in time order."""
    index = json.loads((directory / "index.json").read_text(encoding="utf-8"))
    return [directory / row["file"] for row in index if row.get("compactions")]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--mode", action="append", choices=("sync", "async"), help="probe mode (repeatable; default sync)")
    parser.add_argument("--budget", type=int, action="append", help="token budget (repeatable; default 800 and 400)")
    parser.add_argument("--cells", action="store_true", help="print every compaction's figures too")
    parser.add_argument("--show-blocks", action="store_true", help="print every restore block")
    parser.add_argument("--gaps", type=int, default=0, metavar="N",
                        help="print the N next-40 names the best list recalls and the block does not, most cells first")
    parser.add_argument("--json", action="store_true", help="print the report as JSON")
    parser.add_argument("--jobs", type=int, default=2, help="replays at a time (default 2)")
    args = parser.parse_args()
    entire, spotter = compacting(CORPUS / "entire-cli"), sorted(CORPUS.glob("spotter-*.jsonl"))
    need(entire + spotter, f"no corpus sessions in {CORPUS}")
    budgets, modes = tuple(args.budget or (800, 400)), tuple(args.mode or ("sync",))
    first = run_corpus_eval(entire, budgets, modes, project=ENTIRE_PROJECT, workers=args.jobs)
    second = run_corpus_eval(spotter, budgets, modes, workers=args.jobs)
    report = {**first, "sessions": first["sessions"] + second["sessions"], "elapsed_s": round(first["elapsed_s"] + second["elapsed_s"], 1)}
    report["pooled"] = pooled(report)
    if args.json:
        print(json.dumps(report, indent=2))
        return
    render_corpus_report(report, Console(), args.show_blocks, args.cells)
    if args.gaps:
        print_gaps(report, args.gaps)


def list_only(report: dict[str, Any]) -> dict[tuple[str, str], Counter[str]]:
    """Per ``(budget, graph method)``: in how many cells each next-40 name was recalled by the
    cell's best list and not by the block, and (under ``"graph only"``) the other way round."""
    out: dict[tuple[str, str], Counter[str]] = defaultdict(Counter)
    for session in report["sessions"]:
        for cell in session["compactions"]:
            for budget, figures in cell["budgets"].items():
                for method, gap in figures["gaps"].items():
                    out[(budget, method)].update(gap["list_only"])
                    out[(budget, method + " graph only")].update(gap["graph_only"])
    return out


def print_gaps(report: dict[str, Any], top: int) -> None:
    """Where the block and the best list part, pooled: the names only one of them recalls."""
    for (budget, method), names in sorted(list_only(report).items()):
        side = "the block only" if method.endswith("graph only") else "the list only"
        shown = ", ".join(f"{name} {n}" for name, n in names.most_common(top))
        print(f"@{budget} {method.removesuffix(' graph only')}: {sum(names.values())} next-40 names {side} recalls — {shown}")


if __name__ == "__main__":
    main()
