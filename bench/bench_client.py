"""The plugin in the real Claude Code client: a 20-tool session against a no-op Python plugin.

    python bench/bench_client.py [--rounds 5] [--tools 20] [--earlier 3]

One user (a fresh ``HOME``, the package's ``rgraph-hook`` on ``PATH``, the warm graph in the
embedded PostgreSQL under the state directory) and one project. First ``--earlier`` sessions with
the plugin populate the memory (each reconciled into the warm graph, so every timed session
starts from a resume snapshot, as a user's does). Then ``--rounds`` interleaved rounds, each
one ``claude -p`` session of ``--tools`` tool calls (Read and Bash, alternating) per plugin, in
turn order: Rolling Graph (``plugin/``), the same hook wiring whose every command is
``<python> -c pass`` (the floor a Python hook plugin costs), no plugin, and the same no-op hooks
wired as ours (``noop-alike``: PostToolUse, PostToolUseFailure and SessionEnd in the background;
what our hooks' own work is measured against, as ``tests/plugin/test_e2e_claude.py`` does: with
the stand-in model answering at once, the client's handling of background hooks alone costs a
session ~1.27× the all-synchronous no-op's on an idle machine). Every session runs
in the same home and project against the stand-in model (tests/standin_model.py), offline; a
session's detached work (probe, reconcile) is waited for before the next session starts.

Prints each session's wall time, the medians, the ratio of medians and the median of the
per-round ratios (the issue 37 goal: Rolling Graph ≤ 1.15× the no-op plugin), and against
``noop-alike``. Then, with
``--breakdown N``, N more rounds of the two plugins with every hook run under a timing shim
(the same shim for both: a shell and two ``date`` calls around the hook), and per hook event
the invocations, the median milliseconds of one and the total of a session, Rolling Graph's
beside the no-op's. ``--variant LABEL:VAR=VALUE`` (repeatable) adds our plugin with one variable set for
its hooks to every round (e.g. ``server-off:ROLLING_GRAPH_HOOK_SERVER=off``); ``--wiring
LABEL:EVENT,EVENT`` (repeatable) adds our plugin with exactly those events ``"async": true`` in
its hooks.json (``before:SessionEnd``: the wiring before PostToolUse went to the background) to every round and to the timed
rounds, so two wirings are compared in the same run. Not part of CI (``tests/plugin/test_e2e_claude.py`` keeps a looser bound).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))

from claude_harness import CLAUDE, PLUGIN_DIR, Sandbox, kebab, write_noop_plugin  # noqa: E402
from standin_model import StandinModel, ToolCall, Turn  # noqa: E402

from rolling_graph.store.sidecar import SidecarStore  # noqa: E402
from rolling_graph.warm import server  # noqa: E402

PROMPT = "We decided to use PostgreSQL instead of SQLite for the warm store. Look through the notes and the code."
EARLIER_PROMPTS = (
    "Start the billing module: invoices are prorated in apply_plan_change, not in the webhook.",
    "The retry queue uses exponential backoff; look at the worker and the notes.",
    "Use pgvector for similarity search; check the schema file.",
    "Fix the flaky test in test_worker.py; the clock is frozen with freezegun.",
)
WORKER_WAIT_S = 60.0


def project_files(project: Path) -> list[Path]:
    files = {
        "notes.md": "# Notes\n\nThe warm store keeps graphs across sessions.\n",
        "app.py": "def main() -> None:\n    print('hello')\n",
        "billing.py": "def apply_plan_change(plan):\n    return prorate_amount(plan)\n",
        "worker.py": "def retry(job, attempt):\n    return min(2 ** attempt, 60)\n",
        "schema.sql": "CREATE TABLE items (id bigserial PRIMARY KEY, embedding vector(1024));\n",
    }
    paths = []
    for name, text in files.items():
        path = project / name
        path.write_text(text)
        paths.append(path)
    return paths


def session_turns(files: list[Path], tools: int, offset: int = 0) -> list[Turn]:
    turns = []
    for i in range(tools):
        if i % 2:
            call = ToolCall("Read", {"file_path": str(files[(i + offset) % len(files)])})
        else:
            call = ToolCall("Bash", {"command": f"echo step {i}", "description": "inspect"})
        turns.append(Turn.tools(call))
    return [*turns, Turn.say("Done.")]


def workers_running(home: Path) -> bool:
    """Whether a detached rgraph-worker (or probe) of this sandbox's user still runs."""
    marker = f"HOME={home}".encode()
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            cmdline = Path(f"/proc/{entry}/cmdline").read_bytes()
            if not any(name in cmdline for name in (b"rgraph-worker", b"rolling_graph", b"rgraph-hook")) or b"server_watch" in cmdline:
                continue  # (the embedded server's idle watcher stays for minutes, by design; a hook run in
                # the background may outlive `claude` by the few milliseconds its write takes)
            if marker in Path(f"/proc/{entry}/environ").read_bytes().split(b"\0"):
                return True
        except OSError:
            continue
    return False


def wait_for_workers(home: Path) -> float:
    started = time.monotonic()
    while workers_running(home) and time.monotonic() - started < WORKER_WAIT_S:
        time.sleep(0.1)
    return time.monotonic() - started


#: Tool calls of our sessions, and how many of them the session's state counted (a hook run in
#: the background that the session's end killed would leave one out).
TOOL_EVENTS = {"calls": 0, "recorded": 0}


def run_session(sandbox: Sandbox, plugin: Path | None, turns: list[Turn], prompt: str) -> float:
    """One session's wall time; its detached work (probe, reconcile) is waited for after it."""
    with StandinModel(turns) as model:
        run = sandbox.run(model, prompt, plugin_dir=plugin)
    assert run.output.get("num_turns") == len(turns), run.describe()
    wait_for_workers(sandbox.home)
    store = SidecarStore(str(sandbox.rg_home))
    if store.exists(run.session_id):  # one of ours (the no-op and no plugin keep no state)
        calls = sum(len(turn.tool_calls) for turn in turns)
        recorded = store.load_state(run.session_id)["counters"]["tool_events"]
        TOOL_EVENTS["calls"] += calls
        TOOL_EVENTS["recorded"] += recorded
        if recorded != calls:
            print(f"  session {run.session_id}: {recorded} of {calls} tool calls recorded", flush=True)
    return run.elapsed_s


SHIM = """#!/bin/sh
label="$1" event="$2"
shift 2
t0=$(date +%s%N)
"$@"
rc=$?
t1=$(date +%s%N)
echo "$label $event $(( (t1 - t0) / 1000 ))" >> "{log}"
exit $rc
"""


def our_groups(background: set[str] | None = None) -> dict[str, Any]:
    """Our hooks.json ``hooks`` mapping; with ``background``, exactly those events ``"async": true``."""
    groups: dict[str, Any] = json.loads((PLUGIN_DIR / "hooks" / "hooks.json").read_text())["hooks"]
    if background is not None:
        for event, matchers in groups.items():
            for group in matchers:
                for hook in group["hooks"]:
                    hook.pop("async", None)
                    if event in background:
                        hook["async"] = True
    return groups


def background_events(groups: dict[str, Any]) -> set[str]:
    """The events of a hooks mapping that Claude Code does not wait for."""
    return {event for event, matchers in groups.items() for group in matchers for hook in group["hooks"] if hook.get("async")}


def parse_wiring(spec: str) -> tuple[str, set[str]]:
    """``LABEL:EVENT,EVENT`` (``LABEL:`` for none) -> (label, the events run in the background)."""
    label, _, events = spec.partition(":")
    background = {e for e in events.split(",") if e}
    unknown = background - set(our_groups())
    if not label or unknown:
        raise SystemExit(f"bench_client: --wiring {spec!r}: expected LABEL:EVENT,EVENT of {', '.join(our_groups())}")
    return label, background


def wiring_plugin(root: Path, label: str, background: set[str]) -> Path:
    """A copy of our plugin whose hooks.json runs exactly ``background`` asynchronously (``--wiring``)."""
    target = root / f"wiring-{label}"
    shutil.copytree(PLUGIN_DIR, target, symlinks=True)
    (target / "hooks" / "hooks.json").write_text(json.dumps({"hooks": our_groups(background)}, indent=1))
    return target


def timed_plugins(root: Path, python: Path, log: Path, wirings: dict[str, set[str]]) -> dict[str, Path]:
    """Copies of the plugins' wiring (ours, the no-op, ours wired as each of ``wirings``) whose
    every hook runs under the timing shim."""
    shim = root / "timing-shim"
    shim.write_text(SHIM.format(log=log))
    shim.chmod(0o755)
    plugins = {}
    for label in ("rolling-graph", "noop", *wirings):
        target = root / f"timed-{label}"
        (target / ".claude-plugin").mkdir(parents=True)
        (target / "hooks").mkdir()
        manifest = {"name": f"timed-{label}", "version": "0.0.0", "description": "timing"}
        (target / ".claude-plugin" / "plugin.json").write_text(json.dumps(manifest))
        # The no-op stays all synchronous, as write_noop_plugin writes it.
        groups = our_groups(set() if label == "noop" else wirings.get(label))
        for matchers in groups.values():
            for group in matchers:
                for hook in group["hooks"]:
                    [event] = hook["args"]
                    real = [str(python), "-c", "pass"] if label == "noop" else [str(PLUGIN_DIR / "hooks" / "run"), event]
                    hook["command"] = str(shim)
                    hook["args"] = [label, event, *real]
        (target / "hooks" / "hooks.json").write_text(json.dumps({"hooks": groups}))
        plugins[label] = target
    return plugins


def variant_plugin(root: Path, label: str, assignment: str) -> Path:
    """A copy of our plugin whose launcher exports ``VAR=VALUE`` first (``--variant``): the same
    code in the same run with one setting changed, e.g. ``ROLLING_GRAPH_HOOK_SERVER=off``."""
    target = root / f"variant-{label}"
    shutil.copytree(PLUGIN_DIR, target, symlinks=True)
    run = target / "hooks" / "run"
    shebang, rest = run.read_text().split("\n", 1)
    run.write_text(f"{shebang}\nexport {assignment}\n{rest}")
    return target


def print_breakdown(log: Path, sessions: int, wirings: dict[str, set[str]]) -> None:
    times: dict[tuple[str, str], list[float]] = defaultdict(list)
    for line in log.read_text().splitlines():
        label, event, micros = line.split()
        times[(label, event)].append(int(micros) / 1000)
    events = sorted({event for _, event in times})
    labels = ["rolling-graph", "noop", *wirings]
    background = {label: {kebab(event) for event in events}
                  for label, events in {"rolling-graph": background_events(our_groups()), "noop": set(), **wirings}.items()}
    print(f"\nper hook event, under the timing shim ({sessions} sessions each; ms: the median call / a session's total; "
          "* async, not waited for):")
    print(f"  {'event':22} {'n/session':>9} " + " ".join(f"{label[:19]:>19}" for label in labels))
    waited = dict.fromkeys(labels, 0.0)
    for event in events:
        cells = []
        for label in labels:
            values = times[(label, event)]
            total = sum(values) / sessions
            if event not in background[label]:
                waited[label] += total
            mark = "*" if event in background[label] else " "
            cells.append(f"{statistics.median(values) if values else 0:8.1f} /{total:6.0f}{mark}")
        print(f"  {event:22} {len(times[('rolling-graph', event)]) / sessions:9.1f} " + " ".join(f"{c:>19}" for c in cells))
    print(f"  {'hooks waited for':22} {'':9} " + " ".join(f"{waited[label]:18.0f} " for label in labels))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--tools", type=int, default=20)
    parser.add_argument("--earlier", type=int, default=3, help="sessions that populate the memory first")
    parser.add_argument("--venv", type=Path, help="a regular (not editable) install to run: its rgraph-hook, and its "
                        "python for the no-op plugin (default: this interpreter's environment)")
    parser.add_argument("--breakdown", type=int, default=0, metavar="N", help="N more rounds timing every hook")
    parser.add_argument("--json", type=Path, help="also write every measurement here")
    parser.add_argument("--variant", action="append", default=[], metavar="LABEL:VAR=VALUE",
                        help="also time our plugin with VAR=VALUE set for its hooks, as LABEL, in every round")
    parser.add_argument("--wiring", action="append", default=[], metavar="LABEL:EVENT,EVENT",
                        help="also time our plugin with exactly these events async in its hooks.json, as LABEL, in every "
                        "round and in the timed rounds (e.g. before:SessionEnd)")
    args = parser.parse_args()
    wirings = dict(parse_wiring(spec) for spec in args.wiring)
    if CLAUDE is None:
        raise SystemExit("bench_client: the Claude Code CLI `claude` is not on PATH")
    server.exit_on_terminate()  # stop the embedded server on the way out

    with tempfile.TemporaryDirectory(prefix="rgraph-bench-client-") as tmp:
        root = Path(tmp)
        venv_bin = (args.venv / "bin") if args.venv else Path(sys.executable).parent
        extra = {"PATH": f"{venv_bin}:{os.environ.get('PATH', '/usr/bin:/bin')}"} if args.venv else {}
        sandbox = Sandbox.create(root / "user", wrap_hook=False, **extra)
        files = project_files(sandbox.project)
        noop = write_noop_plugin(root / "noop-plugin", python=str(venv_bin / "python3"))
        noop_alike = write_noop_plugin(root / "noop-alike-plugin", python=str(venv_bin / "python3"), keep_async=True)
        print(f"rgraph-hook: {venv_bin / 'rgraph-hook'}; no-op hooks: {venv_bin / 'python3'} -c pass", flush=True)
        plugins: dict[str, Path | None] = {"rolling-graph": PLUGIN_DIR, "noop": noop, "none": None, "noop-alike": noop_alike}
        for variant in args.variant:
            label, assignment = variant.split(":", 1)
            plugins[label] = variant_plugin(root, label, assignment)
        for label, background in wirings.items():
            plugins[label] = wiring_plugin(root, label, background)
        print(f"async in our hooks.json: {', '.join(sorted(background_events(our_groups())))}"
              + "".join(f"; {label}: {', '.join(sorted(bg)) or 'none'}" for label, bg in wirings.items()), flush=True)
        try:
            for i in range(args.earlier):
                elapsed = run_session(sandbox, PLUGIN_DIR, session_turns(files, 8, offset=i), EARLIER_PROMPTS[i % len(EARLIER_PROMPTS)])
                print(f"earlier session {i + 1}: {elapsed:.2f} s", flush=True)
            snapshots = sorted(sandbox.rg_home.glob("snapshots/*.json"))
            print(f"memory before the rounds: {len(list(sandbox.rg_home.glob('sessions/*.graph.json')))} sessions, "
                  f"{len(snapshots)} resume snapshot(s)", flush=True)

            walls: dict[str, list[float]] = defaultdict(list)
            names = list(plugins)
            for r in range(args.rounds):
                order = names[r % len(names):] + names[: r % len(names)]  # rotate who goes first
                for name in order:
                    walls[name].append(run_session(sandbox, plugins[name], session_turns(files, args.tools, offset=r), PROMPT))
                print(f"round {r + 1}: " + ", ".join(f"{n} {walls[n][-1]:.2f} s" for n in names), flush=True)
            shim_log = root / "hook-times.log"
            timed = timed_plugins(root, venv_bin / "python3", shim_log, wirings)
            timed_names = list(timed)
            for r in range(args.breakdown):
                for name in timed_names[r % len(timed_names):] + timed_names[: r % len(timed_names)]:
                    walls[f"timed {name}"].append(run_session(sandbox, timed[name], session_turns(files, args.tools, offset=r), PROMPT))
                print(f"timed round {r + 1}: " + ", ".join(f"{n} {walls[f'timed {n}'][-1]:.2f} s" for n in timed_names), flush=True)
            if args.breakdown:
                print_breakdown(shim_log, args.breakdown, wirings)
        finally:
            sandbox.stop_embedded_database()

    med = {name: statistics.median(values) for name, values in walls.items()}
    per_round = [ours / noop for ours, noop in zip(walls["rolling-graph"], walls["noop"], strict=True)]
    print(f"\n{args.tools}-tool session, {args.rounds} interleaved rounds, medians:")
    for name in names:
        print(f"  {name:14} {med[name]:.2f} s   ({', '.join(f'{v:.2f}' for v in walls[name])})")
    print(f"  rolling-graph / noop: {med['rolling-graph'] / med['noop']:.3f} (ratio of medians), "
          f"{statistics.median(per_round):.3f} (median of per-round ratios: {', '.join(f'{x:.2f}' for x in per_round)})")
    print(f"  rolling-graph / none: {med['rolling-graph'] / med['none']:.3f};  noop / none: {med['noop'] / med['none']:.3f}")
    alike = [ours / noop for ours, noop in zip(walls["rolling-graph"], walls["noop-alike"], strict=True)]
    print(f"  rolling-graph / noop-alike: {med['rolling-graph'] / med['noop-alike']:.3f} (ratio of medians), "
          f"{statistics.median(alike):.3f} (median of per-round ratios): our hooks' own work")
    for name in names[4:]:
        ratios = [ours / noop for ours, noop in zip(walls[name], walls["noop"], strict=True)]
        print(f"  {name} / noop: {med[name] / med['noop']:.3f} (ratio of medians), {statistics.median(ratios):.3f} "
              f"(median of per-round ratios: {', '.join(f'{x:.2f}' for x in ratios)})")
    print(f"  tool calls of our sessions recorded in their state: {TOOL_EVENTS['recorded']} of {TOOL_EVENTS['calls']}")
    if args.json:
        report: dict[str, Any] = {"walls": walls, "tools": args.tools, "rounds": args.rounds, "tool_events": TOOL_EVENTS}
        args.json.write_text(json.dumps(report, indent=1))


if __name__ == "__main__":
    main()
