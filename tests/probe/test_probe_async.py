"""Async mode: the probe runs detached; the hook never waits for it; firings coalesce."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

from conftest import prompt_payload, run_hook

from rolling_graph.core.config import load_settings
from rolling_graph.store.journal import read_journal
from rolling_graph.store.sidecar import SidecarStore


def _wait_for(predicate, timeout: float = 30.0) -> bool:
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if predicate():
            return True
        time.sleep(0.1)
    return False


#: Fault injection for the detached probe (a slow model): see tests/faults/sitecustomize.py.
FAULTS = str(Path(__file__).resolve().parents[1] / "faults")


def _async_env(**extra: str) -> dict[str, str]:
    return dict(os.environ, ROLLING_GRAPH_PROBE_MODE="async", **extra)


def _slow_probe_env(delay_s: float) -> dict[str, str]:
    path = os.pathsep.join(p for p in (FAULTS, os.environ.get("PYTHONPATH", "")) if p)
    return _async_env(PYTHONPATH=path, RG_FAULT_PROBE_DELAY_S=str(delay_s))


def test_the_hook_returns_before_a_slow_probe_finishes(isolated_home: Path) -> None:
    env = _slow_probe_env(3)
    t0 = time.monotonic()
    proc = run_hook("user-prompt-submit", prompt_payload("async-1", "Let's go with Redis for the cache."), env=env)
    elapsed = time.monotonic() - t0
    assert proc.returncode == 0
    assert elapsed < 2.5, f"the hook (and its pipes) must not wait for the probe: {elapsed:.2f}s"
    store = SidecarStore(load_settings())
    assert "use-redis-for-the-cache" not in store.load("async-1")["nodes"]
    assert _wait_for(lambda: "use-redis-for-the-cache" in store.load("async-1")["nodes"])
    log = (isolated_home / "logs" / "probe.log")
    assert not log.exists() or "Traceback" not in log.read_text()


def test_firings_while_a_probe_runs_coalesce_and_nothing_is_lost() -> None:
    env = _slow_probe_env(1)
    prompts = [
        "Let's go with Redis for the cache.",
        "We decided to deploy on Render.",
        "Let's use Sentry for error tracking.",
        "The plan is to ship the beta on Friday.",
    ]
    for text in prompts:
        assert run_hook("user-prompt-submit", prompt_payload("async-2", text), env=env).returncode == 0
    store = SidecarStore(load_settings())
    wanted = {"use-redis-for-the-cache", "deploy-on-render", "use-sentry-for-error-tracking", "ship-the-beta-on-friday"}
    assert _wait_for(lambda: wanted <= set(store.load("async-2")["nodes"]) and not store.probe_running("async-2"))
    doc = store.load("async-2")
    patches = [e for e in read_journal(store.journal_path("async-2")) if e["kind"] == "patch"]
    assert 1 <= len(patches) < len(prompts), "later firings joined a running probe's batch"
    assert doc["gate"]["pending"] == [] and doc["gate"].get("inflight") == []
    assert sorted(i for e in patches for i in e["event_ids"]) == ["e1", "e2", "e3", "e4"]


def test_a_probe_killed_mid_batch_loses_no_event() -> None:
    """Events taken by a probe that died are picked up by the next one."""
    settings = load_settings()
    store = SidecarStore(settings)
    from rolling_graph.hook import handle_event
    from rolling_graph.probe.runner import _take_batch, run_probe

    handle_event("user-prompt-submit", prompt_payload("crash", "Let's go with Kafka for events."), load_settings({**os.environ, "ROLLING_GRAPH_PROBE_MODE": "async"}))
    # Simulate a probe that took the batch and died before applying it.
    _wait_for(lambda: not store.probe_running("crash"), 10)
    with store.transaction("crash", graph=False) as doc:
        doc["gate"]["pending"].append({"id": "e99", "event": "UserPromptSubmit", "text": "Let's go with Avro for schemas.", "paths": [], "reasons": ["decision"]})
    batch = _take_batch(store, "crash")
    assert any(e["id"] == "e99" for e in batch)
    assert store.load_state("crash")["gate"]["inflight"]  # the batch is in flight ...
    run_probe(settings, "crash")  # ... and the next probe applies it
    assert "use-avro-for-schemas" in store.load("crash")["nodes"]


def test_a_flush_probes_what_is_pending_then_hands_that_graph_to_the_warm_graph(isolated_home: Path) -> None:
    """PreCompact starts the warm worker's ``finish``: the pending batch is probed first, so
    the reconciliation gets the final graph (here the database is down, so it is queued)."""
    env = _async_env(ROLLING_GRAPH_WARM="on", ROLLING_GRAPH_DSN="host=/nonexistent-rgraph-test port=1 connect_timeout=1")
    sid = "flush-1"
    assert run_hook("session-start", {"session_id": sid, "cwd": str(isolated_home), "source": "startup"}, env=env).returncode == 0
    store = SidecarStore(load_settings())
    with store.transaction(sid, graph=False) as doc:  # an event the gate queued, not probed yet
        doc["gate"]["pending"].append({"id": "e1", "event": "UserPromptSubmit", "text": "Let's go with Avro for schemas.",
                                       "paths": [], "reasons": ["decision"]})
    assert run_hook("pre-compact", {"session_id": sid, "cwd": str(isolated_home), "trigger": "auto"}, env=env).returncode == 0
    queue = isolated_home / "queue"
    assert _wait_for(lambda: queue.is_dir() and any(queue.glob("*.json")))
    [queued] = [json.loads(p.read_text()) for p in queue.glob("*.json")]
    assert queued["session_id"] == sid and queued["trigger"] == "pre-compact"
    assert "use-avro-for-schemas" in queued["doc"]["nodes"]  # probed before it was reconciled
    assert store.load_state(sid)["gate"]["pending"] == []
    log = (isolated_home / "logs" / "rolling_graph.warm.log").read_text()
    assert '"op": "probe"' in log and "Traceback" not in log


def test_a_flush_says_a_probe_is_due_before_the_detached_probe_starts(isolated_home: Path) -> None:
    """PreCompact marks the pending batch as wanting a probe in the state it writes, so whoever
    looks next — the next hook, or a replay giving the compaction the minute it took — knows a
    probe is due even before the detached process has taken its lock (in a replay of a real
    session the last tool calls before a compaction were otherwise missing from the restore block)."""
    env = _slow_probe_env(2)
    sid = "flush-2"
    assert run_hook("session-start", {"session_id": sid, "cwd": str(isolated_home), "source": "startup"}, env=env).returncode == 0
    store = SidecarStore(load_settings())
    with store.transaction(sid, graph=False) as doc:  # a tool call the gate queued without asking for a probe
        doc["gate"]["pending"].append({"id": "e1", "event": "UserPromptSubmit", "text": "Let's go with Avro for schemas.",
                                       "paths": [], "reasons": []})
    assert run_hook("pre-compact", {"session_id": sid, "cwd": str(isolated_home), "trigger": "auto"}, env=env).returncode == 0
    gate = store.load_state(sid)["gate"]
    assert gate["probe_requested"] is True and "pre-compact" in gate["pending_reasons"]
    assert _wait_for(lambda: "use-avro-for-schemas" in store.load(sid)["nodes"])
    assert _wait_for(lambda: store.load_state(sid)["gate"]["probe_requested"] is False)
