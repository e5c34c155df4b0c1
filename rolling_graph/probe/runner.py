"""Run the probe for one session: take the pending batch, propose, validate, apply.

Started detached by the hook (``python -m rolling_graph.probe.runner --session ID``) or
called in-process in ``sync`` mode. At most one probe runs per session (a non-blocking
``probe.lock``); firings while it runs only add to the pending batch, which it picks up
before it exits. A batch is moved to ``gate.inflight`` while the model thinks, so a probe
killed half-way loses nothing: the next one takes the inflight events first.
"""

from __future__ import annotations

import argparse
import os
import sys
import traceback
from typing import Any

from ..config import ConfigError, Settings, load_settings
from ..events import redact_batch
from ..gate import reset_after_probe
from ..model import iso, utcnow
from ..patch import PatchRejected, validate_ops
from ..sidecar import SidecarStore
from .base import ProbeResult
from .offline import OfflineProbe


def _choose(settings: Settings, doc: dict[str, Any]) -> tuple[Any, str]:
    if settings.probe.backend == "offline":
        return OfflineProbe(), "ROLLING_GRAPH_PROBE=offline"
    from .select import choose_backend

    return choose_backend(settings, doc)


def _propose(settings: Settings, batch: list[dict[str, Any]], doc: dict[str, Any]) -> tuple[ProbeResult, str]:
    backend, why = _choose(settings, doc)
    if backend.name == "offline":
        return backend.run(batch, doc), why
    from . import usage
    from .errors import ProbeFailed

    try:
        return backend.run(batch, doc), why
    except ProbeFailed as exc:
        result = OfflineProbe().run(batch, doc)
        result.fallback_reason = f"{backend.name}: {exc.reason}"
        return usage.charge_failure(result, exc), why  # a failed call still cost tokens


def _record_usage(settings: Settings, sid: str, result: ProbeResult) -> None:
    spent = result.input_tokens or result.output_tokens or result.extra.get("failed_tokens_in") or result.extra.get("failed_tokens_out")
    if not spent:
        return
    from . import usage

    usage.record(settings, sid, result)


def _take_batch(store: SidecarStore, sid: str) -> list[dict[str, Any]]:
    with store.transaction(sid, graph=False) as doc:
        gate = doc["gate"]
        batch = list(gate.get("inflight", [])) + list(gate.get("pending", []))
        gate["inflight"] = batch
        gate["pending"] = []
        gate["batch_reasons"] = list(gate.get("pending_reasons", []))
        reset_after_probe(gate)
    return batch


def _apply(
    store: SidecarStore, settings: Settings, sid: str, batch: list[dict[str, Any]], result: ProbeResult, why: str
) -> dict[str, Any]:
    with store.transaction(sid) as doc:
        now = utcnow()
        gate, counters = doc["gate"], doc["counters"]
        reasons = list(dict.fromkeys(r for e in batch for r in e.get("reasons", []))) or list(
            gate.get("batch_reasons", [])
        )
        event_id = batch[-1]["id"] if batch else None
        base = {
            "event_id": event_id,
            "event_ids": [e["id"] for e in batch][-40:],
            "backend": result.backend,
            "model": result.model,
            "reasons": reasons,
            "selected_because": why,
            "input_tokens": result.input_tokens,
            "output_tokens": result.output_tokens,
        }
        if result.fallback_reason:
            base["fallback_reason"] = result.fallback_reason
        try:
            ops, touched = validate_ops(result.patch, doc, now, settings.decay, source=event_id)
            entry = store.commit_entry(
                doc,
                {
                    **base,
                    "kind": "patch",
                    "rationale": result.rationale,
                    "ops": ops,
                    "decay_at": iso(now),
                    "touched": touched,
                },
            )
        except PatchRejected as exc:
            counters["patches_rejected"] = counters.get("patches_rejected", 0) + 1
            entry = store.commit_entry(
                doc,
                {**base, "kind": "rejected", "rationale": result.rationale[:500], "error": str(exc)[:500], "ops": []},
            )
            if result.backend != "offline":
                # The batch still deserves a graph update: the offline probe's, validated.
                fallback = OfflineProbe().run(batch, doc)
                try:
                    ops, touched = validate_ops(fallback.patch, doc, now, settings.decay, source=event_id)
                    entry = store.commit_entry(
                        doc,
                        {
                            **base,
                            "backend": "offline",
                            "fallback_reason": f"rejected {result.backend} patch: {exc}"[:300],
                            "kind": "patch",
                            "rationale": fallback.rationale,
                            "ops": ops,
                            "decay_at": iso(now),
                            "touched": touched,
                        },
                    )
                except PatchRejected:
                    pass
        gate["inflight"] = []
        gate.pop("batch_reasons", None)
        counters["probes"] = counters.get("probes", 0) + 1
        by = counters.setdefault("probes_by_backend", {})
        by[result.backend] = by.get(result.backend, 0) + 1
        if result.input_tokens or result.output_tokens or result.extra:
            from . import usage

            usage.count_tokens(counters, result)  # including a failed call's tokens
        if "cap reached" in why and not counters.get("cap_notice_given"):
            counters["cap_notice_pending"] = f"Rolling Graph: {why}; probes fall back to the offline extractor."
    _record_usage(settings, sid, result)
    return entry


def run_probe(settings: Settings, sid: str) -> int:
    """Probe until no batch is pending (bounded rounds). Returns the number of probes run."""
    store = SidecarStore(settings)
    rounds = 0
    while rounds < settings.probe.max_rounds:
        with store.probe_lock(sid) as lock:
            if not lock.acquired:
                return rounds  # another probe runs and will pick our batch up
            while rounds < settings.probe.max_rounds:
                batch = _take_batch(store, sid)
                if not batch:
                    break
                doc = store.load(sid)
                batch = redact_batch(batch)  # before any model sees it and before the journal
                result, why = _propose(settings, batch, doc)
                _apply(store, settings, sid, batch, result, why)
                rounds += 1
        # Lock released: anything that arrived meanwhile and found the lock held is ours.
        state = store.load_state(sid)
        if not state["gate"].get("pending") or not state["gate"].get("probe_requested"):
            break
    return rounds


def _wait_for_running_probe(settings: Settings, sid: str, timeout_s: float = 60.0) -> None:
    """Before reconciling, let a probe that another process runs finish its patch."""
    import time

    store = SidecarStore(settings)
    deadline = time.monotonic() + timeout_s
    while store.probe_running(sid) and time.monotonic() < deadline:
        time.sleep(0.2)


def run_followup(settings: Settings, sid: str, trigger: str) -> None:
    """After a flush (PreCompact, SessionEnd): reconcile the session into the warm graph."""
    if not settings.warm:
        return
    from rolling_graph.reconcile.worker import main as worker_main

    worker_main(["reconcile", "--session", sid, "--trigger", trigger])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="rolling_graph.probe.runner", description="Run the probe for one session.")
    parser.add_argument("--session", required=True)
    parser.add_argument("--reconcile", metavar="TRIGGER", help="reconcile into the warm graph afterwards")
    args = parser.parse_args(argv)
    from ..detach import lower_priority

    lower_priority()
    try:
        settings = load_settings()
        # For tests and benchmarks: hold the probe back, as a slow model would.
        delay = float(os.environ.get("ROLLING_GRAPH_PROBE_DELAY_S") or 0)
        if delay > 0:
            import time

            time.sleep(min(delay, 60.0))
        run_probe(settings, args.session)
        if args.reconcile:
            _wait_for_running_probe(settings, args.session)
            run_probe(settings, args.session)  # anything that arrived while another probe held the lock
            run_followup(settings, args.session, args.reconcile)
    except ConfigError as exc:
        print(f"rolling-graph probe: {exc}", file=sys.stderr)
        return 1
    except Exception:  # detached: the log file is the only witness
        print(f"rolling-graph probe failed (pid {os.getpid()}):", file=sys.stderr)
        traceback.print_exc()
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
