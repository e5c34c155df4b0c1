#!/usr/bin/env python3
"""Gate and LOD render scaling with graph size (100 -> 10,000 nodes), as ratios.

    python bench/bench_gate_render.py [--sizes 100,1000,3000,10000] [--repeat 30]

For each size, builds a synthetic graph in memory (4 domains, ~1.5 edges per node, a
focus cluster), then times ``gate.check`` over a fixed mix of prompt and tool events and
``render.render_lod`` (with and without a mention in the prompt). Prints the median per
call and its ratio to the smallest size measured in the same run: linear growth shows as
a ratio near size/100, flat as ~1. Targets (issue 2): gate < 1 ms per event; render of
2,000 nodes < 10 ms. Not part of CI.
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import time
from collections.abc import Callable
from datetime import UTC, datetime
from functools import partial
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from rolling_graph.capture import gate as gate_mod  # noqa: E402
from rolling_graph.capture.events import event_from_payload  # noqa: E402
from rolling_graph.core.config import GateSettings, RenderSettings  # noqa: E402
from rolling_graph.core.ids import edge_key
from rolling_graph.core.model import DOMAINS, make_edge, make_node, new_document  # noqa: E402
from rolling_graph.core.types import PendingEvent, SessionDoc, Verb  # noqa: E402
from rolling_graph.render.lod import render_lod  # noqa: E402

NOW = datetime(2026, 11, 25, 12, 0, tzinfo=UTC)
TOPICS = ("parser", "queue", "worker", "billing", "auth", "gateway", "Harbor", "Kafka", "Priya", "marathon", "lisbon", "invoice")
VERBS: tuple[Verb, ...] = ("informs", "extends", "depends_on", "edits", "tests", "decides", "blocks")


def synthetic_doc(n: int, seed: int = 11) -> SessionDoc:
    rng = random.Random(seed)
    doc = new_document("bench-session", "/home/dev/src/app", NOW)
    ids: list[str] = []
    for i in range(n):
        label = f"{rng.choice(TOPICS)} {rng.choice(['module', 'decision', 'error', 'note'])} {i}"
        node = make_node(label, rng.choice(DOMAINS), rng.choice(["concept", "entity", "file", "decision"]), weight=rng.random(), now=NOW)
        doc["nodes"][node["id"]] = node
        ids.append(node["id"])
    for _ in range(int(n * 1.5)):
        a, b = rng.sample(ids, 2)
        verb = rng.choice(VERBS)
        doc["edges"][edge_key(a, verb, b)] = make_edge(a, verb, b, rng.random(), NOW)
    doc["focus"] = ids[:5]
    return doc


def events() -> list[PendingEvent]:
    payloads: list[tuple[str, dict[str, Any]]] = [
        ("UserPromptSubmit", {"prompt": "Let's go with the Kafka queue for billing events; parser module 12 stays."}),
        ("UserPromptSubmit", {"prompt": "Actually, not the gateway: the worker decision 40 is what broke auth."}),
        ("PostToolUse", {"tool_name": "Read", "tool_input": {"file_path": "/home/dev/src/app/src/billing/invoice.py"}, "tool_response": {}}),
        ("PostToolUse", {"tool_name": "Bash", "tool_input": {"command": "pytest -q"}, "tool_response": {"stdout": "3 passed", "stderr": ""}}),
        ("PostToolUse", {"tool_name": "Edit", "tool_input": {"file_path": "src/queue/worker.py", "new_string": "x = 1"}, "tool_response": {}}),
    ]
    return [event_from_payload(name, {**p, "cwd": "/home/dev/src/app"}, f"e{i}", NOW) for i, (name, p) in enumerate(payloads)]


def median_ms(fn: Callable[[], object], repeat: int) -> float:
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        times.append((time.perf_counter() - t0) * 1000)
    return statistics.median(times)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="100,300,1000,2000,3000,10000")
    parser.add_argument("--repeat", type=int, default=30)
    args = parser.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]
    gs, rs = GateSettings(), RenderSettings()
    evs = events()
    rows = []
    for n in sizes:
        doc = synthetic_doc(n)

        def run_gate(doc: SessionDoc = doc) -> None:
            for ev in evs:
                gate_mod.check(ev, doc["nodes"], doc["gate"].copy(), gs)

        gate_ms = median_ms(run_gate, args.repeat) / len(evs)
        render_ms = median_ms(partial(render_lod, doc, rs), args.repeat)
        mention_ms = median_ms(partial(render_lod, doc, rs, mention_text="what about parser module 12 and Kafka?"), args.repeat)
        rows.append((n, gate_ms, render_ms, mention_ms))
        print(f"  measured {n} nodes", file=sys.stderr)
    base = rows[0]
    print(f"{'nodes':>7} {'gate ms/event':>14} {'x':>6} {'render ms':>10} {'x':>6} {'render+mention ms':>18} {'x':>6}")
    for n, g, r, m in rows:
        print(f"{n:>7} {g:>14.4f} {g / base[1]:>6.1f} {r:>10.3f} {r / base[2]:>6.1f} {m:>18.3f} {m / base[3]:>6.1f}")
    print(f"(ratios against {base[0]} nodes in this run; gate target < 1 ms/event, render of 2,000 nodes < 10 ms)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
