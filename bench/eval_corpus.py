#!/usr/bin/env python3
"""The corpus figures (same code as ``rgraph eval --transcripts``) on ``../shared/corpus/``.

    python bench/eval_corpus.py [--mode sync] [--budget 800] [--show-blocks] [--json] [--jobs 2]

Replays every ``*.jsonl`` of the shared corpus (the directory ``../shared/corpus`` beside
the checkout, or ``$ROLLING_GRAPH_CORPUS``) honestly with the offline probe, in sync and
async mode at 800 and 400 tokens, and prints per compaction the next-40, summary-dropped
and summary names recall of the graph's restore block next to the naive name lists, and
how long the replays took. Not part of CI.
"""

from __future__ import annotations

import sys

from corpus_cli import CORPUS, need, run_eval


def main() -> None:
    transcripts = sorted(CORPUS.glob("*.jsonl"))
    need(transcripts, f"no transcripts in {CORPUS}")
    run_eval(["--transcripts", *map(str, transcripts), *sys.argv[1:]], prog_name="bench/eval_corpus.py")


if __name__ == "__main__":
    main()
