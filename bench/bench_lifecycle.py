"""Latency of the lifecycle hooks (SessionStart, PreCompact, SessionEnd) with the warm graph
on, as ratios to a bare interpreter. The issue's bar: the same as the other hooks (≤ 3×).
Each is started as Claude Code starts it: ``plugin/hooks/run EVENT``.

    python bench/bench_lifecycle.py [--nodes 2000] [--runs 30]

Cases, each against a 2,000-node session whose project has a full resume snapshot (snapshot.MAX_NODES nodes):

- ``startup``: a new session builds its hot graph from the snapshot and injects the block the
  snapshot's writer kept beside it (the last session's newest node an hour old);
- ``startup, no kept block``: the same without the kept block (none was written, or a task of the
  snapshot was first seen within seconds of the session's start): the hook ranks and renders it;
- ``resume``: the 2,000-node session is resumed (snapshot merged in, full LOD block);
- ``compact``: after compaction (right after ``pre-compact``, as in Claude Code): the summary
  is read from the transcript's tail, queued for the probe, and the block re-injected from the
  graph's ranked view that the work ``pre-compact`` started left beside it;
- ``pre-compact`` and ``session-end``: start the detached probe-then-reconcile and return.

The detached work the hooks start (probe, reconcile, recover) is not timed, but the
benchmark waits for it to finish before the next run, so it never competes with a timed
hook. ``ROLLING_GRAPH_DSN`` points at a socket that does not exist, so reconciles queue
on disk instead of starting a database. Not part of CI.
"""

from __future__ import annotations

import argparse
import atexit
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import uuid
from collections.abc import Callable
from datetime import timedelta
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_hook import LAUNCHER, _run, build_graph, hook_env, wait_for_detached  # noqa: E402

from rolling_graph.core.clock import iso, parse_iso, utcnow  # noqa: E402
from rolling_graph.core.config import load_settings  # noqa: E402
from rolling_graph.store.project import project_root  # noqa: E402
from rolling_graph.store.sidecar import SidecarStore  # noqa: E402
from rolling_graph.warm import startup_block  # noqa: E402
from rolling_graph.warm.snapshot import MAX_EDGES, MAX_NODES  # noqa: E402
from rolling_graph.warm.snapshot_files import cache_file  # noqa: E402


def snapshot_for(home: Path, project: str, sid: str, env: dict[str, str]) -> None:
    """A resume snapshot of MAX_NODES nodes and MAX_EDGES edges (half of them new to the session),
    written as the worker writes it (the block of the project's next new session kept beside it,
    with the hook's settings: ``env``), by a session whose last new node came an hour ago."""
    left = timedelta(hours=1)
    doc = SidecarStore(load_settings(env)).load(sid)
    known = sorted(doc["nodes"].values(), key=lambda n: -n["weight"])[: MAX_NODES // 2]
    now = utcnow()
    first_seen = iso(min(now - left, min(parse_iso(n["first_seen"]) or now for n in known)))
    nodes = [{k: n[k] for k in ("id", "label", "domain", "kind", "weight")} | {"first_seen": first_seen, "sessions": 3} for n in known]
    nodes += [{"id": f"warm-topic-{i}", "label": f"Warm topic {i}", "domain": "project", "kind": "decision", "weight": 0.6,
               "first_seen": iso(now - left), "sessions": 4} for i in range(MAX_NODES - len(nodes))]
    ids = [n["id"] for n in nodes]
    pairs = [(ids[i % len(ids)], ids[(i * 7 + 3) % len(ids)]) for i in range(MAX_EDGES)]
    edges = [{"source": s, "relationship": "informs", "target": t, "strength": 0.5} for s, t in pairs if s != t]
    snap = {"generated_at": iso(now), "focus": ids[:3], "nodes": nodes, "edges": edges}
    # Written by the code the hook runs (the installed package, as the worker is; ``-P``: not this
    # checkout's), so that the kept block names the hook's code.
    script = ("import json, sys\nfrom rolling_graph.core.config import load_settings\n"
              "from rolling_graph.warm.snapshot_write import write_snapshot\n"
              "write_snapshot(sys.argv[1], sys.argv[2], json.load(sys.stdin), settings=load_settings())\n")
    subprocess.run([sys.executable, "-P", "-c", script, str(home), project], input=json.dumps(snap).encode(), env=env, check=True)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--nodes", type=int, default=2000)
    parser.add_argument("--runs", type=int, default=30)  # 15 scattered 2.9-3.1x on an idle machine (docs/measurements.md, twentieth pass)
    args = parser.parse_args()
    home = Path(tempfile.mkdtemp(prefix="rgraph-bench-life-"))
    cwd = tempfile.mkdtemp(prefix="rgraph-bench-project-")
    for made in (home, cwd):  # the state and project it made go with the run
        atexit.register(shutil.rmtree, made, True)
    project = project_root(cwd)
    env = hook_env(home, ROLLING_GRAPH_WARM="on", ROLLING_GRAPH_DSN="host=/nonexistent-rgraph-bench port=1 connect_timeout=1")
    hook = LAUNCHER
    sid = "bench-life"
    _run([hook, "session-start"], json.dumps({"session_id": sid, "cwd": cwd, "source": "startup"}).encode(), env)
    build_graph(home, sid, args.nodes, str(project))
    snapshot_for(home, project, sid, env)
    # A second project whose kept block is gone: a new session there ranks and renders the block
    # itself (as when a task of the snapshot was first seen seconds before the session's start:
    # rolling_graph/warm/startup_block.py).
    cwd_none = tempfile.mkdtemp(prefix="rgraph-bench-project-")
    atexit.register(shutil.rmtree, cwd_none, True)
    _run([hook, "session-start"], json.dumps({"session_id": "bench-none", "cwd": cwd_none, "source": "startup"}).encode(), env)
    build_graph(home, "bench-none", args.nodes, str(project_root(cwd_none)))
    snapshot_for(home, project_root(cwd_none), "bench-none", env)
    os.unlink(cache_file(home, project_root(cwd_none), startup_block.PART))
    transcript = Path(cwd) / "transcript.jsonl"
    summary = {"type": "user", "isCompactSummary": True, "message": {"role": "user", "content":
               "This session continues one that ran out of context. We chose Render for hosting and Postgres advisory locks."}}
    transcript.write_text("\n".join(json.dumps({"type": "assistant", "message": {"content": "x" * 200}}) for _ in range(200))
                          + "\n" + json.dumps(summary) + "\n", encoding="utf-8")

    def start(source: str, session: str | None = None, where: str = cwd) -> tuple[list[str], bytes]:
        payload = {"session_id": session or sid, "cwd": where, "source": source, "transcript_path": str(transcript)}
        return [hook, "session-start"], json.dumps(payload).encode()

    def flush(event: str, extra: dict[str, str]) -> tuple[list[str], bytes]:
        return [hook, event], json.dumps({"session_id": sid, "cwd": cwd, **extra}).encode()

    cases: dict[str, Callable[[], tuple[list[str], bytes]]] = {
        "python -c pass": lambda: ([sys.executable, "-c", "pass"], b""),
        "session-start startup": lambda: start("startup", f"bench-new-{uuid.uuid4().hex[:8]}"),
        "startup, no kept block": lambda: start("startup", f"bench-new-{uuid.uuid4().hex[:8]}", cwd_none),
        "session-start resume": lambda: start("resume"),
        # In Claude Code's order: PreCompact, then (Claude's summary) the SessionStart after the
        # compaction, which finds the graph's ranked view that PreCompact's work left.
        "pre-compact": lambda: flush("pre-compact", {"trigger": "auto"}),
        "session-start compact": lambda: start("compact"),
        "session-end": lambda: flush("session-end", {"reason": "other"}),
    }
    results: dict[str, list[tuple[float, int]]] = {k: [] for k in cases}
    for _ in range(args.runs):  # interleaved, so load on the machine hits every case alike
        for name, make in cases.items():
            cmd, stdin = make()
            results[name].append(_run(cmd, stdin, env))
            wait_for_detached()
    base = statistics.median(t for t, _ in results["python -c pass"])
    queued = len(list((home / "queue").glob("*.json"))) if (home / "queue").exists() else 0
    print(f"session: {args.nodes} nodes; snapshot: {MAX_NODES} nodes, {MAX_EDGES} edges; {args.runs} runs each; "
          f"reconciles queued on disk meanwhile: {queued}")
    print(f"{'case':24} {'median ms':>10} {'ratio':>7} {'peak RSS MB':>12}   (target: ratio <= 3, as for the other hooks)")
    for name, rows in results.items():
        med = statistics.median(t for t, _ in rows)
        print(f"{name:24} {med * 1000:10.1f} {med / base:7.2f} {max(r for _, r in rows) / 1024:12.1f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
