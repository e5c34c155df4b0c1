"""The heuristic gate: a cheap check on every event that decides when to probe.

Four triggers fire the probe (docs/architecture.md, "Gate") — a new named entity not in the graph, a domain
shift, decision language, correction language — and so does the dead man's switch (8
events without a probe). Real sessions are mostly tool calls, so tool events are held to
a stricter standard: a new file path alone does not fire; unseen paths accumulate and
fire together once there are enough of them, and soft triggers respect a cooldown.
Everything the probe needs is batched in ``gate.pending`` until it runs.
"""

from __future__ import annotations

from rolling_graph.core.filepaths import file_id, find_root, is_harness_path, local_paths, posix_path, relativize
from rolling_graph.core.ids import name_id, slugify

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Container

    from rolling_graph.core.config import GateSettings
    from rolling_graph.core.types import GateState, PendingEvent

#: Most events one probe round sends to a model. More can queue while a probe runs (a slow
#: or hanging model): the next probe folds the oldest offline and sends the newest this many.
PENDING_MAX = 40
#: Hard bound of the queue (it lives in the state file, rewritten on every event): past it
#: the oldest events spill to the session's overflow file on disk (bounded in bytes:
#: :meth:`rolling_graph.store.sidecar.SidecarStore.spill`), which the next probe folds offline
#: before anything else.
QUEUE_MAX = 10 * PENDING_MAX
#: Unseen names remembered between probes so one name fires once.
SEEN_MAX = 200
#: Share of keyword evidence a prompt needs before its domain counts as a shift.
DOMAIN_CONFIDENCE = 0.6


def _unseen(ids: list[str], nodes: Container[str], seen: set[str]) -> list[str]:
    return [i for i in ids if i not in nodes and i not in seen]


def check(event: PendingEvent, nodes: Container[str], gate: GateState, settings: GateSettings) -> list[str]:
    """The reasons this event fires the probe (empty: it does not). Mutates ``gate``.

    ``event`` is a pending event (:func:`rolling_graph.capture.events.event_from_payload`);
    ``nodes`` the hot graph's nodes; ``gate`` the persisted gate state.
    ``events_since_probe`` counts events since the probe was last *requested*.
    """
    settle_paths(event, gate)
    reasons: list[str] = []
    text = event["text"]
    seen = set(gate.get("seen", []))
    since = gate["events_since_probe"] + 1
    gate["events_since_probe"] = since
    kind = event["event"]

    if kind == "UserPromptSubmit":
        # The entity grammar (regular expressions) is loaded for prompts only: tool
        # results are most events and are judged on paths, errors and silence.
        from rolling_graph.capture.entities import classify_domain, has_correction, has_decision, names_in

        if has_correction(text):
            reasons.append("correction")
        if has_decision(text):
            reasons.append("decision")
        names = [name_id(label) if kind == "symbol" else slugify(label) for label, kind in names_in(text)]
        fresh = _unseen(names + [file_id(p) for p in event["paths"]], nodes, seen)
        if fresh:
            reasons.append("new_entity")
            seen.update(fresh)
        domain, share = classify_domain(text)
        if domain and share >= DOMAIN_CONFIDENCE:
            last = gate["last_domain"]
            if last and last != domain:
                reasons.append("domain_shift")
            gate["last_domain"] = domain
    elif kind == "CompactSummary":
        reasons.append("compact")
    else:
        fresh_paths = _unseen([file_id(p) for p in event["paths"]], nodes, seen)
        seen.update(fresh_paths)
        gate["unseen_paths"] = gate.get("unseen_paths", 0) + len(fresh_paths)
        cooled = since >= settings.soft_cooldown_events
        if gate["unseen_paths"] >= settings.new_paths_to_fire and cooled:
            reasons.append("new_entity")
            gate["unseen_paths"] = 0  # this batch is requested; count the next one afresh
        if event["error"] and _failure_is_news(event["tool"]):
            signature = error_signature(text, gate.get("root"))
            if signature and signature not in seen and signature not in nodes and cooled:
                reasons.append("error")  # a new failure; the same test failing again is not news
            if signature:
                seen.add(signature)
        if event["tool"] == "AskUserQuestion" and (event.get("data") or {}).get("qa"):
            reasons.append("answer")  # the user's own words, as telling as a prompt

    if not reasons and since >= settings.dead_man_events:
        reasons.append("dead_man")
    if reasons:
        # A probe is requested for everything pending: silence and cooldowns count
        # from here, so a slow probe is not asked for again on every following event.
        gate["events_since_probe"] = 0
    gate["seen"] = list(seen)[-SEEN_MAX:]
    return reasons


def settle_paths(event: PendingEvent, gate: GateState) -> None:
    """Make a fresh event's paths relative to the session's root, once, in place.

    The root is the git top level of the first ``cwd`` the session reports, kept in the
    gate state: a later ``cd assets`` must not turn ``assets/js/app.js`` into ``js/app.js``.
    Relative paths are taken from the event's own ``cwd``; Claude Code's files (transcripts,
    plans, task output) are dropped. A ``cwd`` below the root stays on the event, relative,
    so the probe can place the relative paths of a shell command; the transcript path moves
    to the gate state, where the probe reads it.
    """
    transcript = event.pop("transcript", None)
    if transcript:
        gate["transcript"] = transcript
    raw = event.pop("cwd", None)
    cwd = posix_path(raw) if raw else None  # a Windows session's too (C:\app → /c/app)
    cwd = cwd if cwd and cwd.startswith("/") else None
    root = gate.get("root")
    if not isinstance(root, str) and cwd and raw:
        root = gate["root"] = posix_path(find_root(raw))  # looked up where the filesystem has it
    root = root if isinstance(root, str) else None
    paths = [relativize(p, root, cwd) for p in event["paths"] if not is_harness_path(p)]
    event["paths"] = [p for p in dict.fromkeys(paths) if p and p != "." and not is_harness_path(p)]
    if cwd and root:
        here = relativize(cwd, root)
        if here != "." and not here.startswith(("/", "~")):
            event["cwd"] = here


def _failure_is_news(tool: str | None) -> bool:
    """A failed command is news; a failed edit or read did nothing (the probe folds nothing of it)."""
    from rolling_graph.capture.tools import FAILURE_IS_NEWS

    return tool in FAILURE_IS_NEWS


def error_signature(text: str, root: str | None = None) -> str | None:
    """The node id the probe gives this failure (:mod:`rolling_graph.capture.errors`, one
    rule): its first meaningful line, never ``Error: Exit code 1``, digits blurred and the
    session root's absolute paths made relative (:func:`local_paths`, as the probe's). ``None``: no such line.
    Loaded only for a result that reports a failure."""
    from rolling_graph.capture.errors import error_id, error_line

    line = error_line(text)
    return None if line is None else error_id(local_paths(line, root))


def enqueue(event: PendingEvent, gate: GateState, reasons: list[str]) -> None:
    """Add an event to the pending batch and record why it fired, if it did. A queue past
    :data:`PENDING_MAX` asks for a probe (``backlog``), which folds the excess offline; past
    :data:`QUEUE_MAX` the oldest move to ``gate["spilled"]``, which the store appends to the
    session's overflow file when it saves the state (never kept in the state file)."""
    pending = gate["pending"]
    pending.append({**event, "reasons": reasons})
    if len(pending) > QUEUE_MAX:
        cut = len(pending) - QUEUE_MAX
        gate.setdefault("spilled", []).extend(pending[:cut])
        del pending[:cut]
    if len(pending) > PENDING_MAX and not reasons and not gate["probe_requested"]:
        reasons.append("backlog")  # (the same list the event holds)
    if reasons:
        gate["probe_requested"] = True
        gate["pending_reasons"] = list(dict.fromkeys([*gate["pending_reasons"], *reasons]))


def reset_after_probe(gate: GateState) -> None:
    gate["events_since_probe"] = 0
    gate["unseen_paths"] = 0
    gate["probe_requested"] = False
    gate["pending_reasons"] = []
    gate["seen"] = []
