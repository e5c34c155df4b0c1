#!/usr/bin/env python3
"""Every session of the corpus replayed through the hooks: no offline patch may be rejected.

    python bench/rejected_patches.py [--jobs 2] [TRANSCRIPT ...]

A rejected patch of our own offline extractor is always a bug (and, before the refold one
event at a time, it cost its batch). For each transcript (default: every ``*.jsonl`` of
``../shared/corpus`` and of its ``entire-cli/``, or ``$ROLLING_GRAPH_CORPUS``) this replays
the session honestly (offline probe, sync, its own state directory, removed afterwards) and
reads its journal for entries of kind ``rejected``. Prints each session that had one, the
reasons counted over the corpus, and exits 1 if there was any. Not part of CI (the suite
replays the sessions that had them: ``tests/probe/test_runner.py``).
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import tempfile
from collections import Counter
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from corpus_cli import CORPUS, need  # noqa: E402

from rolling_graph.replay.run import ReplayOptions, replay  # noqa: E402


def rejections(path: Path) -> list[str]:
    """The errors of every rejected journal entry of a replay of ``path``."""
    home = tempfile.mkdtemp(prefix="rgraph-rejected-")
    try:
        replay([path], options=ReplayOptions(project="/tmp/project", snapshot_boundaries=False), home=home)
        errors = []
        for journal in Path(home, "sessions").glob("*.journal.jsonl"):
            for line in journal.read_text(encoding="utf-8").splitlines():
                try:
                    entry = json.loads(line)
                except ValueError:
                    continue
                if isinstance(entry, dict) and entry.get("kind") == "rejected":
                    errors.append(f"{entry.get('backend')}: {entry.get('error')}")
        return errors
    finally:
        shutil.rmtree(home, ignore_errors=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("transcripts", nargs="*", type=Path, help="recorded sessions (default: the whole shared corpus)")
    parser.add_argument("--jobs", type=int, default=2, help="sessions replayed at once (default 2)")
    args = parser.parse_args()
    transcripts = args.transcripts or sorted(CORPUS.glob("*.jsonl")) + sorted(CORPUS.glob("entire-cli/*.jsonl"))
    need(transcripts, f"no transcripts in {CORPUS}")
    reasons: Counter[str] = Counter()
    with ProcessPoolExecutor(max(1, args.jobs)) as pool:
        for path, errors in zip(transcripts, pool.map(rejections, transcripts), strict=True):
            for error in errors:
                print(f"{path.name}: {error}")
                reasons[error.split(": ", 1)[-1].split("): ", 1)[-1]] += 1
    print(f"{len(transcripts)} sessions, {sum(reasons.values())} rejected patches")
    for reason, count in reasons.most_common():
        print(f"  {count:4d}  {reason}")
    raise SystemExit(1 if reasons else 0)


if __name__ == "__main__":
    main()
