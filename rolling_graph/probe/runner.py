"""Run the probe for one session: take the pending batch, propose, validate, apply.

Started detached by the hook (``python -m rolling_graph.probe.runner --session ID``) or
called in-process in ``sync`` mode. At most one probe runs per session (a non-blocking
``probe.lock``); firings while it runs only add to the pending batch, which it picks up
before it exits. A batch is moved to ``gate.inflight`` while the model thinks, so a probe
killed half-way loses nothing: the next one takes the inflight events first. In flight is
bounded: when a dead probe's batch and what arrived since exceed :data:`INFLIGHT_MAX`, the
dead probe's batch is answered offline first (journaled), never dropped. Events that queued
past :data:`INFLIGHT_MAX` while a probe ran (a slow or hanging model) are not dropped
either: the oldest are folded offline, and the newest :data:`INFLIGHT_MAX` go to the model.
Past the queue's hard bound (``gate.QUEUE_MAX``) the hook spills the oldest to the session's
overflow file on disk (bounded in bytes); the next probe folds that offline first. Only
past the file's bound are events dropped, counted and journaled.

Each event is applied at most once, whatever is killed when. A batch's journal entries
carry all its event ids and are appended in one write (:meth:`SidecarStore.journal_group`);
the state's in-flight batch is cleared afterwards. A probe killed between the two leaves
the batch in flight, and the next take drops from it every event the journal already has
(it reads the journal from where it stood when the batch was taken, ``inflight_from``).

Every failure of a model backend is a :class:`~rolling_graph.probe.errors.ProbeFailed`
(see :meth:`~rolling_graph.probe.base.ModelProbe.run`): the batch is answered offline, the
reason journaled, the failed call's tokens counted.
"""

from __future__ import annotations

import argparse
import os
import sys
import traceback
from typing import TYPE_CHECKING

from rolling_graph.capture.events import redact_batch
from rolling_graph.capture.gate import PENDING_MAX, QUEUE_MAX, reset_after_probe
from rolling_graph.core.clock import iso
from rolling_graph.core.config import ConfigError, Settings, load_settings
from rolling_graph.core.detach import lower_priority, python_module, spawn_detached
from rolling_graph.core.normalize import normalize_event
from rolling_graph.core.patch import PatchRejected, validate_ops
from rolling_graph.probe import usage
from rolling_graph.probe.base import ModelProbe, ProbeBackend, ProbeResult, describe_unexpected
from rolling_graph.probe.errors import ProbeFailed
from rolling_graph.probe.offline import OfflineProbe
from rolling_graph.probe.select import choose_backend, is_cap_reason
from rolling_graph.probe.transcript_tail import with_assistant_text
from rolling_graph.render import view_cache
from rolling_graph.store.journal import journal_size, read_journal
from rolling_graph.store.sidecar import SidecarStore

if TYPE_CHECKING:
    from datetime import datetime

    from rolling_graph.core.types import JournalEntry, PendingEvent, SessionDoc

#: Most events in flight: a dead probe's batch plus what is pending beyond this is split,
#: and the dead probe's batch answered offline first.
INFLIGHT_MAX = PENDING_MAX


class Batch(list["PendingEvent"]):
    """The events of one probe round; ``offline_because`` says why they are answered offline."""

    offline_because: str | None = None


def _choose(settings: Settings, doc: SessionDoc, batch: list[PendingEvent]) -> tuple[ProbeBackend, str]:
    if settings.probe.backend == "offline":
        return OfflineProbe(), "ROLLING_GRAPH_PROBE=offline"

    return choose_backend(settings, doc, events=batch)  # the caps are checked against this batch's call


def _offline_instead(batch: list[PendingEvent], doc: SessionDoc, reason: str) -> ProbeResult:
    result = OfflineProbe().run(batch, doc)
    result.fallback_reason = reason[:300]
    return result


def _propose(
    settings: Settings, sid: str, batch: list[PendingEvent], doc: SessionDoc, offline_because: str | None = None
) -> tuple[ProbeResult, str, str | None]:
    """The batch's answer, why that backend, and the reservation its model call holds on the
    day's allowance (settled by :func:`_record_usage`; a kill leaves it counted)."""
    if offline_because:
        return _offline_instead(batch, doc, offline_because), offline_because, None

    try:
        backend, why = _choose(settings, doc, batch)
    except Exception as exc:  # choosing must not cost the batch either
        why = f"no backend ({describe_unexpected(exc)})"
        return _offline_instead(batch, doc, why), why, None
    if backend.name == "offline":
        return backend.run(batch, doc), why, None
    reservation: str | None = None
    if isinstance(backend, ModelProbe):  # paid for before it is made: concurrent sessions cannot overshoot the cap
        try:
            reservation = usage.reserve(settings, sid, backend.name, backend.model, backend.max_call_tokens(batch, doc))
        except usage.CapReached as exc:
            return _offline_instead(batch, doc, str(exc)), str(exc), None
    try:
        return backend.run(batch, doc), why, reservation
    except ProbeFailed as exc:
        result = _offline_instead(batch, doc, f"{backend.name}: {exc.reason}")
        return usage.charge_failure(result, exc), why, reservation  # a failed call still cost tokens
    except Exception as exc:  # a backend outside ModelProbe's error model: same outcome
        return _offline_instead(batch, doc, f"{backend.name}: {describe_unexpected(exc)}"), why, reservation


def _record_usage(settings: Settings, sid: str, result: ProbeResult, reservation: str | None = None) -> None:
    spent = result.input_tokens or result.output_tokens or result.extra.get("failed_tokens_in") or result.extra.get("failed_tokens_out")
    if not spent and reservation is None:
        return

    usage.record(settings, sid, result, reservation=reservation)


def _unapplied(store: SidecarStore, sid: str, stale: list[PendingEvent], since: object) -> list[PendingEvent]:
    """The in-flight events the journal has no entry for: a probe killed after journaling
    its batch but before clearing it must not have the batch applied again."""
    path = store.journal_path(sid)
    start = since if isinstance(since, int) and 0 <= since <= journal_size(path) else 0
    done = {i for e in read_journal(path, start) for i in (e.get("event_ids") or ()) if isinstance(i, str)}
    return [e for e in stale if e["id"] not in done]


def _take_batch(store: SidecarStore, sid: str, killed_tokens: int = 0) -> Batch:
    with store.hook_transaction(sid, index="none") as view:  # the state alone: no graph parsed
        gate, counters = view.state["gate"], view.state["counters"]
        stale, pending = list(gate.get("inflight", [])), list(gate.get("pending", []))
        if stale:
            stale = gate["inflight"] = _unapplied(store, sid, stale, gate.get("inflight_from"))
        if killed_tokens:  # (their tokens, charged: see usage.claim_killed)
            counters["probe_tokens_in"] = int(counters.get("probe_tokens_in", 0) or 0) + killed_tokens
        if stale and killed_tokens:
            # The last probe died during its model call: that call may have been billed in
            # full, and is counted so. Its batch is not sent again: answered offline.
            dead = Batch(stale)
            dead.offline_because = (
                f"the last probe was killed during its model call ({killed_tokens:,} reserved tokens counted): "
                f"its {len(stale)} events answered offline, not sent again"
            )
            return dead
        if stale and len(stale) + len(pending) > INFLIGHT_MAX:
            # A probe died holding ``stale`` and more arrived since: answer the dead probe's
            # batch offline now (bounded work, nothing dropped); ``pending`` is the next round's.
            overflow = Batch(stale)
            overflow.offline_because = (
                f"{len(stale)} events left in flight by a probe that did not finish, "
                f"{len(pending)} more pending: answered offline"
            )
            return overflow
        if not stale:
            gate["inflight_from"] = journal_size(store.journal_path(sid))
            # Events past the queue's hard bound, kept on disk while a probe ran: the oldest
            # of all, folded offline before anything else. Not taken twice: ids the state still
            # queues (a hook killed between its two writes) or the journal already has (a probe
            # killed between saving its take and removing the file) are left out.
            spilled, unreadable = store.take_overflow(sid)
            if unreadable:
                gate["dropped"] = gate.get("dropped", 0) + unreadable
            queued = {e["id"] for e in pending}
            spilled = [e for e in spilled if e["id"] not in queued]
            if spilled:  # (rare: the whole journal is read)
                spilled = _unapplied(store, sid, spilled, None)
            if spilled:
                overflow = Batch(spilled)
                overflow.offline_because = (
                    f"{len(spilled)} events past the queue's bound ({QUEUE_MAX}) while a probe ran, "
                    "kept on disk: folded offline"
                )
                gate["inflight"] = list(overflow)
                gate["probe_requested"] = True
                return overflow
        if len(pending) > INFLIGHT_MAX:
            # More queued than one model call takes (they arrived while a probe ran): the
            # oldest are folded offline now; the newest INFLIGHT_MAX are the next round's.
            cut = len(pending) - INFLIGHT_MAX
            backlog = Batch(pending[:cut])
            backlog.offline_because = (
                f"{cut} events queued past the batch bound ({INFLIGHT_MAX}) while a probe ran: folded offline"
            )
            gate["inflight"] = list(backlog)
            gate["pending"] = pending[cut:]
            gate["probe_requested"] = True
            return backlog
        batch = Batch(stale + pending[: max(INFLIGHT_MAX - len(stale), 0)])
        rest = pending[len(batch) - len(stale) :]  # past the bound: the next round's batch
        gate["inflight"] = list(batch)
        gate["pending"] = rest
        gate["batch_reasons"] = list(gate.get("pending_reasons", []))
        reset_after_probe(gate)
        if rest:
            gate["probe_requested"] = True
    return batch


def _fold_tools(store: SidecarStore, settings: Settings, doc: SessionDoc, batch: list[PendingEvent], base: JournalEntry, now: datetime) -> None:
    """After a model's patch: files, commands, tasks and their facts, folded by code (the
    model leaves them to us; see ``OfflineProbe(structural=True)``)."""
    fold = OfflineProbe(structural=True).run(batch, doc)
    try:
        ops, touched = validate_ops(fold.patch, doc, now, settings.decay, source=base["event_id"], trusted=True)
    except PatchRejected:
        return
    store.commit_entry(doc, {**base, "backend": "offline", "kind": "patch", "rationale": f"tool events folded: {fold.rationale}"[:500],
                             "ops": ops, "decay_at": iso(now), "touched": touched})


def _commit(
    store: SidecarStore, settings: Settings, doc: SessionDoc, batch: list[PendingEvent], result: ProbeResult,
    base: JournalEntry, now: datetime,
) -> JournalEntry:
    """Journal one batch's answer into ``doc``: the patch (and the tool fold after a model's
    patch), or the rejection and the offline fallback. Returns the last entry."""
    counters, event_id = doc["counters"], base["event_id"]
    try:
        ops, touched = validate_ops(result.patch, doc, now, settings.decay, source=event_id, trusted=result.backend == "offline")
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
        if result.backend != "offline":
            _fold_tools(store, settings, doc, batch, base, now)
    except PatchRejected as exc:
        counters["patches_rejected"] += 1
        entry = store.commit_entry(
            doc,
            {**base, "kind": "rejected", "rationale": result.rationale[:500], "error": str(exc)[:500], "ops": []},
        )
        # The batch still deserves a graph update: the offline probe's, on the graph as it
        # is now (an offline patch too was made outside the lock, and a node the user forgot
        # meanwhile, ``rgraph forget``, makes it invalid as a whole), validated. Should that
        # be refused as well, each event is folded on its own, so one event's bad operation
        # costs only that event, never the rest of the batch.
        reason = f"rejected {result.backend} patch: {exc}"[:300]
        parts = [batch] if len(batch) < 2 else [batch, *([event] for event in batch)]
        for part in parts:
            folded = _refold(store, settings, doc, part, base, now, reason)
            entry = folded or entry
            if folded and part is batch:
                break
    return entry


def _refold(
    store: SidecarStore, settings: Settings, doc: SessionDoc, events: list[PendingEvent], base: JournalEntry,
    now: datetime, reason: str,
) -> JournalEntry | None:
    """The offline probe's patch for ``events`` on ``doc`` as it is, journaled; or, if that
    too is refused, the refusal journaled (with its reason) and None."""
    fallback = OfflineProbe().run(events, doc)
    part: JournalEntry = {**base, "backend": "offline", "fallback_reason": reason}
    if len(events) < len(base.get("event_ids", [])):  # one event of the batch: its own ids
        part["event_id"], part["event_ids"] = events[-1]["id"], [events[-1]["id"]]
    try:
        ops, touched = validate_ops(fallback.patch, doc, now, settings.decay, source=part["event_id"], trusted=True)
    except PatchRejected as exc:
        doc["counters"]["patches_rejected"] += 1
        store.commit_entry(doc, {**part, "kind": "rejected", "rationale": fallback.rationale[:500], "error": str(exc)[:500], "ops": []})
        return None
    return store.commit_entry(
        doc, {**part, "kind": "patch", "rationale": fallback.rationale, "ops": ops, "decay_at": iso(now), "touched": touched}
    )


def _apply(
    store: SidecarStore, settings: Settings, sid: str, batch: list[PendingEvent], result: ProbeResult, why: str,
    reservation: str | None = None, proposed_on: SessionDoc | None = None,
) -> JournalEntry:
    """Journal the answer under the session's lock: on the graph it was proposed on
    (``proposed_on``) when nothing changed it meanwhile (not parsed again), else on the
    graph as it is now."""
    with store.transaction(sid, parsed=proposed_on) as doc:
        now = settings.clock.now()
        gate, counters = doc["gate"], doc["counters"]
        reasons = list(dict.fromkeys(r for e in batch for r in e["reasons"])) or list(
            gate.get("batch_reasons", [])
        )
        event_id = batch[-1]["id"] if batch else None
        base: JournalEntry = {
            "event_id": event_id,
            "event_ids": [e["id"] for e in batch],  # all of them: a retake checks each against the journal
            "backend": result.backend,
            "model": result.model,
            "reasons": reasons,
            "selected_because": why,
            "input_tokens": result.input_tokens,
            "output_tokens": result.output_tokens,
        }
        if result.fallback_reason:
            base["fallback_reason"] = result.fallback_reason
        failed_in, failed_out = int(result.extra.get("failed_tokens_in") or 0), int(result.extra.get("failed_tokens_out") or 0)
        if failed_in or failed_out or result.extra.get("failed_backend"):  # what the failed call cost: stats shows it per probe
            base["failed_backend"] = str(result.extra.get("failed_backend") or "model")
            base["failed_model"] = result.extra.get("failed_model")
            base["failed_tokens_in"], base["failed_tokens_out"] = failed_in, failed_out
        with store.journal_group(sid):  # the batch's entries land in one write, or none of them
            entry = _commit(store, settings, doc, batch, result, base, now)
            dropped = gate.pop("dropped", 0)
            if dropped:  # (past the overflow file's bound, or unreadable there: said once, here)
                store.commit_entry(doc, {"kind": "note", "event_id": event_id, "reasons": [], "ops": [], "backend": None,
                                         "rationale": f"{dropped} queued events were dropped past the overflow file's bound "
                                                      "(or unreadable there) while a probe ran"})
        gate["inflight"] = []
        gate.pop("inflight_from", None)
        gate.pop("batch_reasons", None)
        counters["probes"] += 1
        by = counters["probes_by_backend"]
        by[result.backend] = by.get(result.backend, 0) + 1
        if result.input_tokens or result.output_tokens or result.extra:

            usage.count_tokens(counters, result)  # including a failed call's tokens

        if is_cap_reason(why) and not counters.get("cap_notice_given"):
            counters["cap_notice_pending"] = f"Rolling Graph: {why}; probes fall back to the offline extractor."
    _record_usage(settings, sid, result, reservation)
    return entry


def run_probe(settings: Settings, sid: str) -> int:
    """Probe until no batch is pending (bounded rounds). Returns the number of probes run."""
    store = SidecarStore(settings)
    rounds = 0
    while rounds < settings.probe.max_rounds:
        with store.probe_lock(sid) as lock:
            if not lock.acquired:
                return rounds  # another probe runs and will pick our batch up
            if not rounds:
                store.clean_temp(sid)  # what killed writers of this session left behind
            killed = usage.claim_killed(settings, sid) if not rounds else 0
            while rounds < settings.probe.max_rounds:
                taken = _take_batch(store, sid, killed)
                killed = 0
                if not taken:
                    break
                # Each event made to fit its declared shape (read back from a file), then the
                # assistant's text since the last probe joins the batch (from the transcript);
                # all of it is redacted before any model sees it and before the journal.
                batch = redact_batch(with_assistant_text(store, sid, [normalize_event(e) for e in taken]))
                doc = store.load(sid)  # the round's one parse of the graph: the proposal's, and the commit's
                result, why, reservation = _propose(settings, sid, batch, doc, taken.offline_because)
                _apply(store, settings, sid, batch, result, why, reservation, doc)
                rounds += 1
        # Lock released: anything that arrived meanwhile and found the lock held is ours.
        state = store.load_state(sid)
        if not state["gate"]["pending"] or not state["gate"]["probe_requested"]:
            break
    return rounds


def drain(settings: Settings, sid: str, timeout_s: float = 60.0) -> int:
    """Probe everything the session has pending, after a probe another process runs has
    applied its patch (waiting at most ``timeout_s``): what a flush (PreCompact,
    SessionEnd) needs before the graph is final. Returns the number of probes run here."""
    import time

    store = SidecarStore(settings)
    rounds = run_probe(settings, sid)
    deadline = time.monotonic() + timeout_s
    while store.probe_running(sid) and time.monotonic() < deadline:
        time.sleep(0.2)
    return rounds + run_probe(settings, sid)  # anything that arrived while the other held the lock


def _hand_over(settings: Settings, sid: str) -> None:
    """This probe used up its rounds with events still queued: hooks that found it running
    left their events to it, and no later hook may come (the session may be over). A fresh
    detached probe takes them; nothing waits for an event that never comes."""
    store = SidecarStore(settings)
    gate = store.load_state(sid)["gate"]
    if gate["pending"] and gate["probe_requested"]:
        spawn_detached(python_module("rolling_graph.probe.runner"), ["--session", sid], settings.home / "logs" / "probe.log",
                       settings.child_env())


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="rolling_graph.probe.runner", description="Run the probe for one session.")
    parser.add_argument("--session", required=True)
    parser.add_argument("--view", nargs="?", const=view_cache.PRESET, choices=sorted(view_cache.SUFFIXES), metavar="PRESET",
                        help="then leave the restore block's ranked view beside the graph, of the compact ranking (PreCompact) "
                             "or the coding one (SessionEnd: a resumed session's block); with the warm graph off")
    args = parser.parse_args(argv)

    lower_priority()
    try:
        settings = load_settings()
        # Before the view: everything pending probed, and a running probe's patch applied (a flush).
        rounds = drain(settings, args.session) if args.view else run_probe(settings, args.session)
        if rounds >= settings.probe.max_rounds:
            _hand_over(settings, args.session)
        if args.view:
            view_cache.refresh(SidecarStore(settings).files, args.session, args.view)
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
