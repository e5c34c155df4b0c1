"""Hook latency and memory on a 2,000-node sidecar, as ratios to a bare interpreter.

    python bench/bench_hook.py [--nodes 2000] [--runs 30]

Prints the median wall time of ``user-prompt-submit`` and ``post-tool-use``, each started as
Claude Code starts it (``plugin/hooks/run EVENT``, which runs the installed ``rgraph-hook``
under ``python -S``), against ``python -c pass`` run by the same interpreter in the same run (targets: PostToolUse
≤ 1.7×, a prompt naming a node ≤ 2.8×), the session's project carrying a full-size warm
snapshot with tool-time notes (the PostToolUse case reads a file they know),
their peak RSS (target: < 40 MB), and in-process gate and render times (targets: gate
< 1 ms per event, render of 2,000 nodes < 10 ms). As in a session, the hook's code cache
(rolling_graph/store/codecache.py) is written by the first run of each event; a probe a hook
starts is waited for before the next timed run, never timed itself. Not part of CI.
"""

from __future__ import annotations

import argparse
import atexit
import json
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from rolling_graph.core.clock import utcnow  # noqa: E402
from rolling_graph.core.config import load_settings  # noqa: E402
from rolling_graph.core.ids import edge_key
from rolling_graph.core.model import DOMAINS, KINDS, VERBS, make_edge, make_node  # noqa: E402
from rolling_graph.core.types import PatchOp  # noqa: E402
from rolling_graph.store.sidecar import SidecarStore  # noqa: E402


def _label(kind: str, topic: str, i: int) -> str:
    """A label of ``kind`` as sessions write them: files and code names for the name map, sentences
    for requests, tasks and decisions. (Each code name is one word of its own: a rejected option's
    words reject every name that holds one, and "<topic> concept <i>" for every kind made all of
    them a rejected option's, which left the blocks without names.)"""
    if kind == "file":
        return f"src/{topic}/{topic}_{i}.py"
    if kind in ("symbol", "entity"):
        return f"{topic.capitalize()}{'Handler' if kind == 'symbol' else 'Service'}{i}"
    if kind == "command":
        return f"pytest tests/test_{topic}_{i}.py -q"
    if kind == "error":
        return f"src/{topic}/{topic}_{i}.py:12: TypeError in the {topic} step {i}"
    if kind in ("decision", "correction", "preference"):
        return f"Use the {topic} pool for step {i} in production"
    if kind == "request":
        return f"Please make the {topic} step {i} faster"
    if kind == "task":
        return f"Add tests for the {topic} step {i}"
    return f"The {topic} work of part {i}"


def build_graph(home: Path, sid: str, n_nodes: int, project: str, seed: int = 7) -> list[str]:
    """A synthetic session graph of ``project`` with ``n_nodes`` nodes and ~1.5 edges per node."""
    rng = random.Random(seed)
    now = utcnow()
    settings = load_settings({"ROLLING_GRAPH_HOME": str(home)})
    store = SidecarStore(settings)
    with store.transaction(sid) as doc:
        doc["project"] = project
        store.commit_entry(doc, {"kind": "init", "rationale": "benchmark", "ops": [], "reasons": [], "project": project})
    ops: list[PatchOp] = []
    ids = []
    for i in range(n_nodes):
        topic = rng.choice(["parser", "queue", "worker", "render", "billing", "auth"])
        kind = rng.choice(KINDS)
        node = make_node(_label(kind, topic, i), rng.choice(DOMAINS), kind, now=now, weight=round(rng.random(), 3))
        ids.append(node["id"])
        ops.append({"op": "add", "path": f"/nodes/{node['id']}", "value": node})
    for _ in range(int(n_nodes * 1.5)):
        s, t = rng.sample(ids, 2)
        verb = rng.choice(VERBS)
        ops.append({"op": "add", "path": f"/edges/{edge_key(s, verb, t)}", "value": make_edge(s, verb, t, round(rng.random(), 3), now=now)})
    store.apply_ops(sid, ops, kind="seed", rationale="benchmark graph")
    return [op["value"]["label"] for op in ops if op["path"].startswith("/nodes/")]


def write_warm_snapshot(home: Path, project: str, n_nodes: int = 400, n_notes: int = 300, seed: int = 11) -> None:
    """The project's resume snapshot at its full size (as the warm graph of a long-used
    project writes it): 400 nodes, 200 edges, and tool-time notes for 300 files, one of them
    the file the PostToolUse case reads."""
    from rolling_graph.core.filepaths import file_id
    from rolling_graph.warm.snapshot_write import write_snapshot

    rng = random.Random(seed)
    paths = ["src/app.py", *(f"src/pkg{i % 17}/module_{i}.py" for i in range(1, n_notes))]
    nodes = [{"id": file_id(p), "label": p, "domain": "technical", "kind": "file", "weight": round(rng.random(), 3), "sessions": 3,
              "facts": {"path": p, "edits": 3, "reads": 2, "what": "`load_config`, `main`, `Parser.parse`"}} for p in paths[:n_nodes]]
    notes = {file_id(p): {"path": p, "sessions": rng.randint(1, 9), "edits": rng.randint(0, 20), "reads": rng.randint(0, 9),
                          "what": "`load_config`, `main`, `Parser.parse`, `Token`",
                          "with": [[rng.choice(paths), round(rng.random(), 3), 2] for _ in range(4)],
                          "failure": {"text": f"{p}:12:3: undefined name 'x'", "state": "resolved", "from": "ruff check"}} for p in paths}
    edges = [{"source": nodes[i]["id"], "relationship": "informs", "target": nodes[i + 1]["id"], "strength": 0.5} for i in range(200)]
    write_snapshot(home, project, {"generated_at": "2026-11-27T00:00:00Z", "nodes": nodes, "edges": edges, "notes": notes})


#: What Claude Code runs for every event (plugin/hooks/hooks.json): the launcher, which starts
#: the ``rgraph-hook`` that ``ROLLING_GRAPH_HOOK`` names under ``python -S``.
LAUNCHER = str(Path(__file__).resolve().parent.parent / "plugin" / "hooks" / "run")


def hook_env(home: Path, **extra: str) -> dict[str, str]:
    """The environment of a timed hook: state under ``home``, the offline probe, and the launcher
    pointed at the ``rgraph-hook`` installed beside this interpreter (as a plugin environment's)."""
    hook = str(Path(sys.executable).with_name("rgraph-hook"))
    return dict(os.environ, ROLLING_GRAPH_HOME=str(home), ROLLING_GRAPH_PROBE="offline", ROLLING_GRAPH_HOOK=hook, **extra)


#: The detached processes the hooks start: probes (python -m) and the warm worker (a command).
DETACHED = "rolling_graph.probe.runner|rgraph-worker"


def wait_for_detached(timeout_s: float = 30.0) -> None:
    """Until no probe or reconcile worker started by a hook is still running."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if subprocess.run(["pgrep", "-f", DETACHED], stdout=subprocess.DEVNULL).returncode != 0:
            return
        time.sleep(0.02)


def _run(cmd: list[str], stdin: bytes, env: dict[str, str]) -> tuple[float, int]:
    """Wall time and peak RSS (KiB) of one run. RSS comes from ``/usr/bin/time`` (a small
    parent: a fork of this large benchmark process would count in the child's peak)."""
    timer = ["/usr/bin/time", "-f", "%M"] if os.path.exists("/usr/bin/time") else []
    t0 = time.perf_counter()
    proc = subprocess.run([*timer, *cmd], input=stdin, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env)
    elapsed = time.perf_counter() - t0
    lines = proc.stderr.decode(errors="replace").strip().splitlines()
    rss = int(lines[-1]) if timer and lines and lines[-1].isdigit() else 0
    return elapsed, rss


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--nodes", type=int, default=2000)
    parser.add_argument("--runs", type=int, default=30)
    args = parser.parse_args()
    home = Path(tempfile.mkdtemp(prefix="rgraph-bench-"))
    atexit.register(shutil.rmtree, home, True)  # the state it made goes with the run
    sid = "bench-session"
    project = home / "project"
    (project / ".git").mkdir(parents=True)
    labels = build_graph(home, sid, args.nodes, str(project))
    write_warm_snapshot(home, str(project))
    hook = str(Path(sys.executable).with_name("rgraph-hook"))
    env = hook_env(home, ROLLING_GRAPH_WARM="off")
    cwd = str(project)
    prompt = json.dumps({"session_id": sid, "cwd": cwd, "hook_event_name": "UserPromptSubmit", "prompt": "Can you tidy up the error handling a little?"}).encode()
    naming = json.dumps({"session_id": sid, "cwd": cwd, "hook_event_name": "UserPromptSubmit", "prompt": f"How does the {labels[12]} relate to the queue?"}).encode()
    tool = json.dumps({"session_id": sid, "cwd": cwd, "hook_event_name": "PostToolUse", "tool_name": "Read", "tool_input": {"file_path": f"{cwd}/src/app.py"}, "tool_response": {"file": {"content": "x"}}}).encode()
    cases = {
        "python -c pass": ([sys.executable, "-c", "pass"], b""),
        "user-prompt-submit": ([LAUNCHER, "user-prompt-submit"], prompt),
        "  ... naming a node": ([LAUNCHER, "user-prompt-submit"], naming),
        "post-tool-use": ([LAUNCHER, "post-tool-use"], tool),
        "  ... notes off": ([LAUNCHER, "post-tool-use"], tool),
        # rgraph-hook started by its shebang, the site module on: not what Claude Code runs.
        "  ... without hooks/run": ([hook, "post-tool-use"], tool),
    }
    notes_off = dict(env, ROLLING_GRAPH_NOTES="off")
    # As in a real session: SessionStart sends the full block and sets the ledger.
    _run([LAUNCHER, "session-start"], json.dumps({"session_id": sid, "cwd": cwd, "source": "resume"}).encode(), env)
    results: dict[str, list[tuple[float, int]]] = {k: [] for k in cases}
    for _ in range(args.runs):  # interleaved, so load on the machine hits every case alike
        for name, (cmd, stdin) in cases.items():
            results[name].append(_run(cmd, stdin, notes_off if name.endswith("notes off") else env))
            wait_for_detached()  # a probe a hook started never competes with the next timed hook
    base = statistics.median(t for t, _ in results["python -c pass"])
    print(f"sidecar: {args.nodes} nodes, {(home / 'sessions' / f'{sid}.graph.json').stat().st_size // 1024} KiB; {args.runs} runs each")
    print(f"{'case':22} {'median ms':>10} {'ratio':>7} {'peak RSS MB':>12}   (targets: ratio <= 3, RSS < 40 MB)")
    for name, rows in results.items():
        med = statistics.median(t for t, _ in rows)
        rss = max(r for _, r in rows) / 1024
        print(f"{name:22} {med * 1000:10.1f} {med / base:7.2f} {rss:12.1f}")

    # In-process: gate per event and render of the whole graph.
    from rolling_graph.capture import gate
    from rolling_graph.capture.events import event_from_payload
    from rolling_graph.render.lod import render_lod

    settings = load_settings({"ROLLING_GRAPH_HOME": str(home)})
    doc = SidecarStore(settings).load(sid)
    payload = json.loads(naming)
    t0 = time.perf_counter()
    n = 200
    for i in range(n):
        ev = event_from_payload("UserPromptSubmit", payload, f"b{i}", utcnow())
        gate.check(ev, doc["nodes"], doc["gate"].copy(), settings.gate)
    gate_ms = (time.perf_counter() - t0) * 1000 / n
    t0 = time.perf_counter()
    for _ in range(20):
        text = render_lod(doc, settings.render, mention_text=payload["prompt"])
    render_ms = (time.perf_counter() - t0) * 1000 / 20
    print(f"gate (incl. event parsing): {gate_ms:.3f} ms/event   render {args.nodes} nodes: {render_ms:.2f} ms ({len(text)} chars)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
