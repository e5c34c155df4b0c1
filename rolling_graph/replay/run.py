"""Replay recorded transcripts through the real hook code.

:func:`replay` turns transcripts into hook events (:mod:`rolling_graph.replay.transcript`) and
runs each through :func:`rolling_graph.hook.handle_event` in-process, or through real
``rgraph-hook EVENT`` subprocesses. The clock is pinned per event (the transcript line's
timestamp, or one fixed instant): in-process with :meth:`Settings.at
<rolling_graph.core.config.Settings.at>`, for a subprocess with ``ROLLING_GRAPH_NOW``, so a
replay is reproducible without freezegun. The replay's settings are read from its own
environment dict; ``os.environ`` is never changed. After every event it reads the session's
sidecar counters to record what the gate and the probe did, and it keeps what each hook
injected, with token counts.

The replay is honest: each hook's ``transcript_path`` holds only the lines Claude Code had
written before its event (:mod:`rolling_graph.replay.mirror`), and in async mode a
detached probe gets, before the next event, at most the time the recorded session left
between the two events (:func:`_settle`) — a compaction's minute, a tool call's seconds.

Stdlib only at import time; the hook module is imported lazily.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rolling_graph.core.clock import parse_iso
from rolling_graph.core.config import load_settings
from rolling_graph.core.model import new_counters
from rolling_graph.hook import handle_event
from rolling_graph.render.lod import estimate_tokens
from rolling_graph.replay.mirror import TranscriptMirror
from rolling_graph.replay.transcript import HookEvent, ParseStats, parse_transcripts
from rolling_graph.store.sidecar import SidecarStore

if TYPE_CHECKING:
    from rolling_graph.core.types import Counters, SessionDoc

FIXED_TIME = "2026-01-01T12:00:00Z"
SUBPROCESS_TIMEOUT_S = 60.0


@dataclass(frozen=True)
class ReplayOptions:
    probe: str = "offline"
    mode: str = "sync"  # sync | async
    budget: int | None = None
    clock: str = "transcript"  # transcript | fixed
    subprocess: bool = False
    fixed_time: str = FIXED_TIME
    #: Let hooks start warm-graph work (reconcile into PostgreSQL). Off: a replay measures the hot path.
    warm: bool = False
    #: Keep a copy of the session document after each PreCompact and SessionEnd (evaluation baselines).
    snapshot_boundaries: bool = True
    #: The project directory of the replayed sessions (``--project``): every event's ``cwd``,
    #: with the recorded directory rewritten to it (see :mod:`rolling_graph.replay.mirror`).
    project: str | None = None


@dataclass
class EventRecord:
    index: int
    event: str
    at: str | None
    label: str
    fired: bool = False
    reasons: list[str] = field(default_factory=list)
    probes: int = 0
    injection: str | None = None
    injected_tokens: int = 0
    nodes: int = 0
    edges: int = 0
    source: str | None = None
    error: str | None = None
    elapsed_ms: float = 0.0


@dataclass
class ReplayResult:
    options: ReplayOptions
    home: str
    records: list[EventRecord]
    final_docs: dict[str, SessionDoc]
    snapshots: dict[int, SessionDoc]
    stats: ParseStats
    elapsed_s: float

    def summary(self) -> dict[str, Any]:
        return summarize(self)


def _label(event: HookEvent) -> str:
    p = event.payload
    if event.hook_event_name == "UserPromptSubmit":
        return str(p.get("prompt", ""))[:80].replace("\n", " ")
    if event.hook_event_name == "PostToolUse":
        raw = p.get("tool_input")
        inp = raw if isinstance(raw, dict) else {}
        detail = next((str(inp[k]) for k in ("file_path", "command", "pattern", "description") if k in inp), "")
        return f"{p.get('tool_name')} {detail}"[:80].replace("\n", " ")
    return str(p.get("source") or p.get("trigger") or p.get("reason") or "")


def replay_env(home: str | os.PathLike[str], options: ReplayOptions) -> dict[str, str]:
    env = {"ROLLING_GRAPH_HOME": os.fspath(home), "ROLLING_GRAPH_PROBE": options.probe, "ROLLING_GRAPH_PROBE_MODE": options.mode,
           "ROLLING_GRAPH_WARM": "on" if options.warm else "off"}
    if options.budget:
        env["ROLLING_GRAPH_BUDGET_TOKENS"] = str(options.budget)
    return env


def hook_command() -> list[str]:
    """How to run ``rgraph-hook``: the console script beside this interpreter, else PATH."""
    beside = Path(sys.executable).parent / "rgraph-hook"
    if beside.exists():
        return [str(beside)]
    found = shutil.which("rgraph-hook")
    if found:
        return [found]
    return [sys.executable, "-c", "import sys; from rolling_graph.hook import main; sys.exit(main())"]


def _context(output: Any) -> str | None:
    if not isinstance(output, dict):
        return None
    hso = output.get("hookSpecificOutput")
    text = hso.get("additionalContext") if isinstance(hso, dict) else None
    if isinstance(text, str) and text:
        return text
    return None


def _run_subprocess(cli_event: str, payload: dict[str, Any], env: dict[str, str]) -> tuple[Any, str | None]:
    proc = subprocess.run(
        [*hook_command(), cli_event],
        input=json.dumps(payload).encode(),
        capture_output=True,
        env={**os.environ, **env},
        timeout=SUBPROCESS_TIMEOUT_S,
        check=False,
    )
    error = None
    if proc.returncode != 0:
        error = f"exit {proc.returncode}: {proc.stderr.decode(errors='replace').strip()[:200]}"
    out = proc.stdout.decode(errors="replace").strip()
    if not out:
        return None, error
    try:
        return json.loads(out), error
    except json.JSONDecodeError:
        return None, f"stdout is not JSON: {out[:120]}"


def _counters(doc: SessionDoc | None) -> Counters:
    """The session's counters (zeros for a session the store refuses)."""
    return doc["counters"] if doc is not None else new_counters()


def _load(store: SidecarStore, sid: str) -> SessionDoc | None:
    try:
        return store.load(sid)
    except ValueError:  # a session id the store refuses: the hook refuses it too
        return None


def replay(
    transcripts: Sequence[str | os.PathLike[str]],
    *,
    options: ReplayOptions | None = None,
    home: str | os.PathLike[str] | None = None,
    on_event: Callable[[EventRecord], None] | None = None,
    after_hook: Callable[[EventRecord, dict[str, Any]], None] | None = None,
) -> ReplayResult:
    """Replay transcripts (in order; later files of a seen session are resumes).

    ``home`` is the state directory to use (default: a fresh temporary directory, kept
    so the result can be inspected; its path is in the result). ``after_hook``: called after
    each event's hook with its record and the payload the hook was given (its
    ``transcript_path`` holds what was written up to that event), before the next event.
    """
    options = options or ReplayOptions()
    home_path = Path(home) if home is not None else Path(tempfile.mkdtemp(prefix="rgraph-replay-"))
    home_path.mkdir(parents=True, exist_ok=True)
    env = replay_env(home_path, options)
    stats = ParseStats()
    records: list[EventRecord] = []
    snapshots: dict[int, SessionDoc] = {}
    sessions: list[str] = []
    started = time.perf_counter()

    # The replay's own settings, read from its environment dict: os.environ is left alone.
    settings = load_settings({**os.environ, **env})
    store = SidecarStore(settings)
    last_at = options.fixed_time
    # Each hook reads a transcript holding only what Claude Code had written before it; like
    # Claude Code's own, these files live outside our state directory (and go when done).
    mirror = TranscriptMirror(Path(tempfile.mkdtemp(prefix="rgraph-transcripts-")), options.project)
    try:
        previous: HookEvent | None = None
        for event in parse_transcripts(transcripts, stats):
            sid = str(event.payload["session_id"])
            if sid not in sessions:
                sessions.append(sid)
            if options.mode == "async" and previous is not None:  # detached probes get the time real life gave them
                _settle(store, sid, _gap_s(previous.timestamp, event.timestamp))
            previous = event
            payload = mirror.advance(event)
            readable = event.timestamp and parse_iso(event.timestamp) is not None
            at = options.fixed_time if options.clock == "fixed" else (event.timestamp if event.timestamp and readable else last_at)
            last_at = at
            before = _counters(_load(store, sid))
            record = EventRecord(event.index, event.hook_event_name, at, _label(event),
                                 source=event.payload.get("source") or event.payload.get("trigger"))
            t0 = time.perf_counter()
            output: Any = None
            if options.subprocess:
                output, record.error = _run_subprocess(event.cli_event, payload, {**env, "ROLLING_GRAPH_NOW": at})
            else:
                try:
                    output = handle_event(event.cli_event, payload, settings.at(at))
                except Exception as exc:  # noqa: BLE001 - a replay reports hook failures, it does not stop
                    record.error = f"{type(exc).__name__}: {exc}"
            record.elapsed_ms = (time.perf_counter() - t0) * 1000
            doc = _load(store, sid)
            after = _counters(doc)
            record.fired = after["gate_fired"] > before["gate_fired"]
            old_reasons = before["gate_reasons"]
            record.reasons = sorted(k for k, v in after["gate_reasons"].items() if v > old_reasons.get(k, 0))
            record.probes = after["probes"] - before["probes"]
            record.nodes = len(doc["nodes"]) if doc is not None else 0
            record.edges = len(doc["edges"]) if doc is not None else 0
            record.injection = _context(output)
            record.injected_tokens = estimate_tokens(record.injection) if record.injection else 0
            if options.snapshot_boundaries and event.hook_event_name in ("PreCompact", "SessionEnd"):
                snapshots[event.index] = json.loads(json.dumps(doc or {}))
            records.append(record)
            if after_hook is not None:
                after_hook(record, payload)
            if on_event is not None:
                on_event(record)
        if options.mode == "async":
            _wait_for_probes(store, sessions)
    finally:  # a replay that fails (or is interrupted) leaves no mirror behind either
        mirror.close()
        shutil.rmtree(mirror.directory, ignore_errors=True)
    final_docs: dict[str, SessionDoc] = {}
    for sid in sessions:
        with contextlib.suppress(ValueError):
            final_docs[sid] = store.load(sid)
    return ReplayResult(options, str(home_path), records, final_docs, snapshots, stats, time.perf_counter() - started)


ASYNC_SETTLE_S = 30.0
#: Longest an async replay waits between two events for a detached probe (real gaps between
#: events can be minutes: a user reading; a probe that needs longer is stuck).
ASYNC_EVENT_WAIT_S = 20.0


def _gap_s(before: str | None, after: str | None) -> float:
    """Seconds between two transcript timestamps (0 when either is missing or unreadable)."""
    a, b = parse_iso(before), parse_iso(after)
    return max(0.0, (b - a).total_seconds()) if a is not None and b is not None else 0.0


def _probe_busy(store: Any, sid: str) -> bool:
    try:
        return bool(store.probe_running(sid) or store.load_state(sid)["gate"].get("probe_requested"))
    except (ValueError, OSError):
        return False


def _settle(store: Any, sid: str, gap_s: float) -> None:
    """Async replay: before the next event, let the session's detached probe work for as
    long as the recorded session gave it (the gap between the two events), no longer."""
    deadline = time.monotonic() + min(gap_s, ASYNC_EVENT_WAIT_S)
    pause = 0.005
    while time.monotonic() < deadline and _probe_busy(store, sid):
        time.sleep(pause)
        pause = min(pause * 2, 0.05)


def _wait_for_probes(store: Any, sessions: list[str], timeout_s: float = ASYNC_SETTLE_S, quiet_s: float = 1.0) -> None:
    """In async mode, let detached probes finish so the final graph includes their work.

    Done when, for a full ``quiet_s``, no session has a probe running or requested.
    """
    deadline = time.monotonic() + timeout_s
    quiet_since = time.monotonic()
    while time.monotonic() < deadline:
        busy = any(_probe_busy(store, sid) for sid in sessions)
        now = time.monotonic()
        if busy:
            quiet_since = now
        elif now - quiet_since >= quiet_s:
            return
        time.sleep(0.1)


def summarize(result: ReplayResult) -> dict[str, Any]:
    """A JSON-ready summary: events, gate firings and reasons, probes, graph, injections."""
    recs = result.records
    reasons: Counter[str] = Counter()
    for r in recs:
        reasons.update(r.reasons)
    injections = [{"index": r.index, "event": r.event, "source": r.source, "tokens": r.injected_tokens} for r in recs if r.injection]
    cumulative = sum(r.injected_tokens for r in recs)
    graphs = {}
    for sid, doc in result.final_docs.items():
        nodes = doc.get("nodes", {})
        domains = Counter(str(n.get("domain")) for n in nodes.values() if isinstance(n, dict))
        kinds = Counter(str(n.get("kind")) for n in nodes.values() if isinstance(n, dict))
        sup = sum(1 for e in doc.get("edges", {}).values() if isinstance(e, dict) and e.get("relationship") == "supersedes")
        graphs[sid] = {"nodes": len(nodes), "edges": len(doc.get("edges", {})), "supersedes": sup, "domains": dict(domains),
                       "kinds": dict(kinds), "focus": list(doc.get("focus", []))}
    counted = [r for r in recs if r.event in ("UserPromptSubmit", "PostToolUse")]
    # In async mode probes finish after the events that fired them: trust the final counters.
    probes = max(sum(r.probes for r in recs), sum(d["counters"]["probes"] for d in result.final_docs.values()))
    return {
        "home": result.home,
        "options": asdict(result.options),
        "events": len(recs),
        "events_by_kind": dict(Counter(r.event for r in recs)),
        "gate_fired": sum(r.fired for r in recs),
        "gate_reasons": dict(reasons),
        "probes": probes,
        "probe_rate": round(probes / len(counted), 4) if counted else 0.0,
        "errors": [{"index": r.index, "event": r.event, "error": r.error} for r in recs if r.error][:20],
        "graphs": graphs,
        "injections": injections,
        "cumulative_injected_tokens": cumulative,
        "elapsed_s": round(result.elapsed_s, 3),
        "events_per_s": round(len(recs) / result.elapsed_s, 1) if result.elapsed_s > 0 else None,
        "parse": result.stats.as_dict(),
    }
