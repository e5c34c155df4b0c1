"""The heuristic gate: a cheap check on every event that decides when to probe.

The spec's four triggers fire the probe — a new named entity not in the graph, a domain
shift, decision language, correction language — and so does the dead man's switch (8
events without a probe). Real sessions are mostly tool calls, so tool events are held to
a stricter standard: a new file path alone does not fire; unseen paths accumulate and
fire together once there are enough of them, and soft triggers respect a cooldown.
Everything the probe needs is batched in ``gate.pending`` until it runs.
"""

from __future__ import annotations

from .model import slugify

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from .config import GateSettings

#: Most events held for the next probe; beyond it the oldest are dropped (and counted).
PENDING_MAX = 40
#: Unseen names remembered between probes so one name fires once.
SEEN_MAX = 200
#: Share of keyword evidence a prompt needs before its domain counts as a shift.
DOMAIN_CONFIDENCE = 0.6


def _unseen(ids: list[str], nodes: dict[str, Any], seen: set[str]) -> list[str]:
    return [i for i in ids if i not in nodes and i not in seen]


def check(event: dict[str, Any], nodes: dict[str, Any], gate: dict[str, Any], settings: GateSettings) -> list[str]:
    """The reasons this event fires the probe (empty: it does not). Mutates ``gate``.

    ``event`` is a pending event (:func:`rolling_graph.events.event_from_payload`);
    ``nodes`` the hot graph's nodes; ``gate`` the persisted gate state.
    ``events_since_probe`` counts events since the probe was last *requested*.
    """
    reasons: list[str] = []
    text = event.get("text") or ""
    seen = set(gate.get("seen", []))
    since = int(gate.get("events_since_probe", 0)) + 1
    gate["events_since_probe"] = since
    kind = event.get("event")

    if kind == "UserPromptSubmit":
        # The entity grammar (regular expressions) is loaded for prompts only: tool
        # results are most events and are judged on paths, errors and silence.
        from .entities import classify_domain, has_correction, has_decision, names_in

        if has_correction(text):
            reasons.append("correction")
        if has_decision(text):
            reasons.append("decision")
        fresh = _unseen([slugify(label) for label, _ in names_in(text)] + [slugify(p) for p in event.get("paths", [])], nodes, seen)
        if fresh:
            reasons.append("new_entity")
            seen.update(fresh)
        domain, share = classify_domain(text)
        if domain and share >= DOMAIN_CONFIDENCE:
            last = gate.get("last_domain")
            if last and last != domain:
                reasons.append("domain_shift")
            gate["last_domain"] = domain
    elif kind == "CompactSummary":
        reasons.append("compact")
    else:
        fresh_paths = _unseen([slugify(p) for p in event.get("paths", [])], nodes, seen)
        seen.update(fresh_paths)
        gate["unseen_paths"] = int(gate.get("unseen_paths", 0)) + len(fresh_paths)
        cooled = since >= settings.soft_cooldown_events
        if gate["unseen_paths"] >= settings.new_paths_to_fire and cooled:
            reasons.append("new_entity")
            gate["unseen_paths"] = 0  # this batch is requested; count the next one afresh
        if event.get("error"):
            signature = error_signature(text)
            if signature and signature not in seen and signature not in nodes and cooled:
                reasons.append("error")  # a new failure; the same test failing again is not news
            if signature:
                seen.add(signature)

    if not reasons and since >= settings.dead_man_events:
        reasons.append("dead_man")
    if reasons:
        # A probe is requested for everything pending: silence and cooldowns count
        # from here, so a slow probe is not asked for again on every following event.
        gate["events_since_probe"] = 0
    gate["seen"] = list(seen)[-SEEN_MAX:]
    return reasons


_ERROR_WORDS = ("Error", "error:", "FAILED", "Exception", "fatal:", "panicked")


def first_error_line(text: str) -> str | None:
    """The first line of a tool result that reports an error, stripped."""
    return next((line.strip() for line in text.splitlines() if any(w in line for w in _ERROR_WORDS)), None)


def error_signature(text: str) -> str | None:
    """A stable id for the first error line of a tool result (numbers and paths blurred)."""
    line = first_error_line(text)
    if line is None:
        return None
    return "err-" + slugify("".join("#" if c.isdigit() else c for c in line)[:100])[:60]


def enqueue(event: dict[str, Any], gate: dict[str, Any], reasons: list[str]) -> None:
    """Add an event to the pending batch (bounded) and record why it fired, if it did."""
    event = dict(event, reasons=reasons)
    pending = gate.setdefault("pending", [])
    pending.append(event)
    if len(pending) > PENDING_MAX:
        dropped = len(pending) - PENDING_MAX
        del pending[:dropped]
        gate["dropped"] = int(gate.get("dropped", 0)) + dropped
    if reasons:
        gate["probe_requested"] = True
        gate["pending_reasons"] = list(dict.fromkeys(list(gate.get("pending_reasons", [])) + reasons))


def reset_after_probe(gate: dict[str, Any]) -> None:
    gate["events_since_probe"] = 0
    gate["unseen_paths"] = 0
    gate["probe_requested"] = False
    gate["pending_reasons"] = []
    gate["seen"] = []
