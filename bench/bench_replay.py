#!/usr/bin/env python3
"""Replay throughput (events per second), in-process and as real hook subprocesses.

    python bench/bench_replay.py [--repeat 3] [--subprocess-fixture secrets]

Replays every bundled fixture in-process (offline probe, sync, transcript clock) into a
fresh state directory, ``--repeat`` times, and prints the median events/s per fixture;
then replays one small fixture through ``rgraph-hook`` subprocesses and prints the
subprocess/in-process time ratio per event measured in the same run. Not part of CI.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from rolling_graph.replay.run import ReplayOptions, replay  # noqa: E402

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "transcripts"


def rate(paths: list[Path], options: ReplayOptions) -> tuple[float, int]:
    with tempfile.TemporaryDirectory(prefix="rgraph-bench-") as home:
        result = replay(paths, options=options, home=home)
    return len(result.records) / result.elapsed_s, len(result.records)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--subprocess-fixture", default="secrets")
    args = parser.parse_args()
    golds = {p.name.removesuffix(".gold.json"): json.loads(p.read_text()) for p in sorted(FIXTURES.glob("*.gold.json"))}
    print(f"{'fixture':<14} {'events':>7} {'events/s (median)':>18}")
    in_rates: dict[str, float] = {}
    for name, gold in golds.items():
        paths = [FIXTURES / f for f in gold["transcripts"]]
        runs = [rate(paths, ReplayOptions()) for _ in range(args.repeat)]
        in_rates[name] = statistics.median(r for r, _ in runs)
        print(f"{name:<14} {runs[0][1]:>7} {in_rates[name]:>18.1f}")
    name = args.subprocess_fixture
    paths = [FIXTURES / f for f in golds[name]["transcripts"]]
    sub_rate, n = rate(paths, ReplayOptions(subprocess=True))
    print(f"\nsubprocess replay of {name}: {n} events, {sub_rate:.1f} events/s; "
          f"{in_rates[name] / sub_rate:.1f}x slower per event than in-process (same run)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
