#!/usr/bin/env python3
"""Cross-session memory on the shared corpus (same code as ``rgraph eval --chain``).

    python bench/eval_chain.py [entire-cli|spotter] [--budget 800] [--cells] [--show-blocks] [--json]

``entire-cli`` (the default): the 120 sessions of ``../shared/corpus/entire-cli/`` (or
``$ROLLING_GRAPH_CORPUS``) in the order of its ``index.json``, every event's ``cwd`` set to
one project path; ``spotter``: the two spotter sessions (two worktrees of one repository).
Each is replayed honestly with the offline probe into a fresh warm graph (an embedded
PostgreSQL in a throw-away directory, stopped at the end), once per budget (800 and 400
tokens), and prints, pooled over every session after the first, the recall of the names its
first 60 events use that earlier sessions used: its ``SessionStart(startup)`` block next to
the earlier sessions' most frequent and most recent names in the same characters
(``--cells``: each session, with whether the block states the previous session's request and
open items). Not part of CI (the suite pins the spotter chain).
"""

from __future__ import annotations

import sys

from corpus_cli import CORPUS, need, run_eval

CHAINS = {
    "entire-cli": ([CORPUS / "entire-cli"], "/tmp/entire-cli"),
    "spotter": ([CORPUS / "spotter-8463c716.jsonl", CORPUS / "spotter-4d5611e5.jsonl"], "/tmp/spotter"),
}


def main() -> None:
    args = sys.argv[1:]
    name = args.pop(0) if args and args[0] in CHAINS else "entire-cli"
    paths, project = CHAINS[name]
    need([p for p in paths if p.suffix] or [p / "index.json" for p in paths], f"not in the corpus {CORPUS}: {name}")
    if "--project" not in args:
        args = ["--project", project, *args]
    run_eval(["--chain", *map(str, paths), *args], prog_name="bench/eval_chain.py")


if __name__ == "__main__":
    main()
