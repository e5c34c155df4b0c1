"""Does firing a model probe slow down the prompt? (It must not: the probe is detached.)

Times ``rgraph-hook user-prompt-submit`` as a subprocess, the way Claude Code runs it, for
two prompts on fresh sessions, interleaved:

* **quiet** — a prompt that trips none of the gate's triggers;
* **fires** — a prompt with decision and correction language and new names, so the gate
  fires and the hook starts the probe. The probe is the Anthropic backend (the heaviest:
  ``import anthropic`` alone is over a second) pointed at a closed local port, so it
  fails fast, falls back offline, and nothing leaves the machine.

Between runs the bench waits for the detached probe to finish, so one run's background
work does not slow the next measurement. It prints medians and the ratio fires/quiet;
the target is ``ratio <= 1.2``. ``--contrast`` also times the same firing prompt with
``ROLLING_GRAPH_PROBE_MODE=sync`` to show what detaching saves.

    python bench/bench_probe_latency.py [--runs 15] [--contrast]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any

QUIET = "ok, continue"
FIRES = "Actually no, let's go with PostgreSQL and Redis instead of SQLite; we decided the warm store lives in Postgres."


def hook_command() -> list[str]:
    beside = Path(sys.executable).with_name("rgraph-hook")
    if beside.exists():
        return [str(beside), "user-prompt-submit"]
    found = shutil.which("rgraph-hook")
    if found:
        return [found, "user-prompt-submit"]
    sys.exit("rgraph-hook is not installed: pip install -e . first")


def sidecar(home: Path, sid: str) -> dict[str, Any]:
    """The session's counters live in ``<sid>.state.json`` (or, in older layouts, the graph file)."""
    for suffix in ("state.json", "graph.json"):
        try:
            data = json.loads((home / "sessions" / f"{sid}.{suffix}").read_text(encoding="utf-8"))
        except (OSError, ValueError):
            continue
        if isinstance(data, dict) and "counters" in data:
            return data
    return {}


def run_hook(cmd: list[str], env: dict[str, str], project: Path, sid: str, prompt: str) -> float:
    payload = {
        "session_id": sid,
        "transcript_path": str(project / "transcript.jsonl"),
        "cwd": str(project),
        "hook_event_name": "UserPromptSubmit",
        "prompt": prompt,
    }
    start = time.perf_counter()
    done = subprocess.run(cmd, input=json.dumps(payload), capture_output=True, text=True, env=env, timeout=60)
    elapsed = time.perf_counter() - start
    if done.returncode != 0:
        sys.exit(f"rgraph-hook exited {done.returncode}: {done.stderr.strip()[:300]}")
    return elapsed


def _probe_lock_free(home: Path, sid: str) -> bool:
    import fcntl

    path = home / "sessions" / f"{sid}.probe.lock"
    try:
        fd = os.open(path, os.O_RDWR)
    except FileNotFoundError:
        return True
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        return True
    except BlockingIOError:
        return False
    finally:
        os.close(fd)


def wait_for_probe(home: Path, sid: str, timeout: float) -> bool:
    """True once the session's probe has finished (counters.probes >= 1) and let go of
    its lock; then a short settle so its process has exited before the next timing."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if int(sidecar(home, sid).get("counters", {}).get("probes", 0) or 0) >= 1 and _probe_lock_free(home, sid):
            time.sleep(0.3)
            return True
        time.sleep(0.05)
    return False


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=15)
    parser.add_argument("--settle", type=float, default=20.0, help="max seconds to wait for a detached probe")
    parser.add_argument("--contrast", action="store_true", help="also time the firing prompt in sync mode")
    args = parser.parse_args(argv)

    cmd = hook_command()
    tmp = Path(tempfile.mkdtemp(prefix="rg-bench-probe-"))
    home, project = tmp / "home", tmp / "project"
    project.mkdir(parents=True)
    (project / ".git").mkdir()
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ROLLING_GRAPH_", "ANTHROPIC_", "OLLAMA_"))}
    env.update(
        ROLLING_GRAPH_HOME=str(home),
        ROLLING_GRAPH_PROBE="anthropic",
        ROLLING_GRAPH_PROBE_MODE="async",
        ANTHROPIC_API_KEY="sk-ant-bench-not-a-real-key",
        ANTHROPIC_BASE_URL="http://127.0.0.1:9",  # discard port: refused at once, no network
    )

    times: dict[str, list[float]] = {"quiet": [], "fires": []}
    fired = {"quiet": 0, "fires": 0}
    probed = 0
    run_hook(cmd, env, project, f"warmup-{uuid.uuid4().hex[:8]}", QUIET)  # warm the OS caches
    for i in range(args.runs):
        order = [("quiet", QUIET), ("fires", FIRES)] if i % 2 == 0 else [("fires", FIRES), ("quiet", QUIET)]
        for name, prompt in order:
            sid = f"bench-{name}-{i}-{uuid.uuid4().hex[:8]}"
            times[name].append(run_hook(cmd, env, project, sid, prompt))
            counters = sidecar(home, sid).get("counters", {})
            if int(counters.get("gate_fired", 0) or 0) > 0:
                fired[name] += 1
            if name == "fires":
                probed += wait_for_probe(home, sid, args.settle)

    quiet = statistics.median(times["quiet"]) * 1000
    fires = statistics.median(times["fires"]) * 1000
    ratio = fires / quiet
    print(f"rgraph-hook user-prompt-submit, {args.runs} runs each, probe backend: anthropic (detached, fails fast offline)")
    print(f"  quiet prompt : median {quiet:7.1f} ms   gate fired in {fired['quiet']}/{args.runs} runs")
    print(f"  firing prompt: median {fires:7.1f} ms   gate fired in {fired['fires']}/{args.runs} runs, probe finished in {probed}/{args.runs}")
    print(f"  ratio fires/quiet = {ratio:.2f}  (target <= 1.20)  {'PASS' if ratio <= 1.2 else 'FAIL'}")
    if fired["fires"] < args.runs or fired["quiet"]:
        print("  note: the prompts did not split cleanly into firing and quiet runs; the ratio is less meaningful")

    if args.contrast:
        sync_env = {**env, "ROLLING_GRAPH_PROBE_MODE": "sync"}
        sync = [run_hook(cmd, sync_env, project, f"bench-sync-{i}-{uuid.uuid4().hex[:8]}", FIRES) for i in range(3)]
        print(f"  contrast, same firing prompt in sync mode: median {statistics.median(sync) * 1000:7.1f} ms")
    shutil.rmtree(tmp, ignore_errors=True)
    return 0 if ratio <= 1.2 else 1


if __name__ == "__main__":
    raise SystemExit(main())
