#!/usr/bin/env python3
"""Cross-session memory on the shared corpus (same code as ``rgraph eval --chain``).

    python bench/eval_chain.py [--budget 800] [--show-blocks] [--json] [--project /tmp/spotter]

Replays ``spotter-8463c716.jsonl`` then ``spotter-4d5611e5.jsonl`` (two worktrees of one
repository, from ``../shared/corpus`` beside the checkout or ``$ROLLING_GRAPH_CORPUS``)
honestly with the offline probe into a fresh warm graph (an embedded PostgreSQL in a
throw-away directory, stopped at the end), once per budget (800 and 400 tokens), and prints
the recall of the names the second session's first 60 events use that the first one used:
its ``SessionStart(startup)`` block next to the first session's most frequent and most
recent names in the same characters; and whether the block states the first session's
request and open items. Not part of CI.
"""

from __future__ import annotations

import sys

from corpus_cli import CORPUS, need, run_eval

CHAIN = ("spotter-8463c716.jsonl", "spotter-4d5611e5.jsonl")
PROJECT = "/tmp/spotter"


def main() -> None:
    transcripts = [CORPUS / name for name in CHAIN]
    need(transcripts, f"not in the corpus {CORPUS}: {', '.join(CHAIN)}")
    args = sys.argv[1:]
    if "--project" not in args:
        args = ["--project", PROJECT, *args]
    run_eval(["--chain", str(transcripts[0]), str(transcripts[1]), *args], prog_name="bench/eval_chain.py")


if __name__ == "__main__":
    main()
