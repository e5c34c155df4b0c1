"""Wrong-shaped session files: found when loaded, repaired from the journal, the loss said.

A graph or state file can parse and still be wrong: a weight that is a string, ``pending``
that is a string, counters that are strings (a hand edit, another program, a bug). Left
alone, every later hook would fail on it, silently. :func:`graph_problem` and
:func:`state_problem` find such a file (type checks only: a field that is *missing* is an
older file, which :func:`rolling_graph.core.normalize.normalize_graph` completes); the store then
rebuilds the graph from the journal, and the state from what is valid in it plus what the
journal knows (:func:`repair_state`: the event counter, so no event id is ever reused, and
the probe counters). What could not be restored is named in a ``damage`` note on the
document, which ``rgraph show`` prints, and in ``logs/sidecar.log``.

Stdlib only, no imports at module level: the hook loads the state on every event, and
:func:`state_problem` is what it pays (a few microseconds).
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from rolling_graph.core.types import HookState, JournalEntry

#: Damage notes kept per document.
NOTES_MAX = 5

_NUM = (int, float)


def _num(value: object) -> bool:
    return isinstance(value, _NUM) and not isinstance(value, bool) and value == value


def _int(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


#: Node fields and the test each must pass when present.
_NODE_TYPES: dict[str, Any] = {
    "id": str, "label": str, "domain": str, "kind": str, "last_activated": str, "first_seen": str,
    "confidence": str, "summary": str, "superseded_by": str, "origin": str,
    "weight": _num, "floor": _num, "activations": _int,
    "anchor": bool, "pulled": bool, "sources": list, "files": list, "facts": dict,
}
_EDGE_TYPES: dict[str, Any] = {"source": str, "target": str, "relationship": str, "last_activated": str, "strength": _num}


def _fits(record: dict[str, Any], types: dict[str, Any]) -> str | None:
    for key, want in types.items():
        if key in record:
            value = record[key]
            ok = isinstance(value, want) if isinstance(want, type) else want(value)
            if not ok:
                return f"{key} is {type(value).__name__}"
    return None


def graph_problem(raw: dict[str, Any]) -> str | None:
    """Why a parsed graph file is wrong-shaped (a present field of the wrong type), or None."""
    for key, want in (("nodes", dict), ("edges", dict), ("focus", list)):
        if key in raw and not isinstance(raw[key], want):
            return f"{key} is {type(raw[key]).__name__}"
    for key in ("journal_seq", "journal_bytes"):
        if key in raw and not _int(raw[key]):
            return f"{key} is {type(raw[key]).__name__}"
    # (A member that is no object at all is dropped by normalisation, as is one without a
    # valid id: nothing of it could be kept. A field of the wrong type is damage to a value
    # the journal knows.)
    for nid, node in (raw.get("nodes") or {}).items():
        why = _fits(node, _NODE_TYPES) if isinstance(node, dict) else None
        if why:
            return f"node {str(nid)[:40]}: {why}"
    for key, edge in (raw.get("edges") or {}).items():
        why = _fits(edge, _EDGE_TYPES) if isinstance(edge, dict) else None
        if why:
            return f"edge {str(key)[:60]}: {why}"
    return None


_GATE_TYPES: dict[str, Any] = {
    "events_since_probe": _int, "unseen_paths": _int, "transcript_offset": _int, "inflight_from": _int,
    "pending": list, "inflight": list, "pending_reasons": list, "batch_reasons": list, "seen": list, "damage": list,
    "probe_requested": bool, "root": str, "transcript": str, "transcript_for": str,
    "last_domain": lambda v: v is None or isinstance(v, str),
}
_COUNTER_DICTS = ("gate_reasons", "probes_by_backend")
_COUNTER_TEXT = ("cap_notice_pending",)
_COUNTER_FLAGS = ("cap_notice_given",)
_COUNTER_LISTS = ("notes_told", "notes_touched", "named_restored")


def event_ok(event: object) -> bool:
    """Whether a queued event read back from a file has the fields the probe needs (the rest
    :func:`rolling_graph.core.normalize.normalize_event` completes)."""
    return (
        isinstance(event, dict)
        and isinstance(event.get("id"), str)
        and isinstance(event.get("event"), str)
        and isinstance(event.get("text"), str)
        and isinstance(event.get("paths", []), list)
        and isinstance(event.get("reasons", []), list)
    )


_COUNTER_INTS = ("events", "prompts", "tool_events", "gate_fired", "probes", "probe_tokens_in", "probe_tokens_out",
                 "patches_rejected", "injections", "injected_tokens", "last_injection_tokens", "note_chars")


def _counter_problem(key: str, value: object) -> bool:
    """Whether a known counter has the wrong type (one this code does not know is left alone)."""
    if key in _COUNTER_INTS:
        return not _int(value)
    if key in _COUNTER_DICTS:
        return not isinstance(value, dict)
    if key in _COUNTER_TEXT:
        return not isinstance(value, str)
    if key in _COUNTER_FLAGS:
        return not isinstance(value, bool)
    if key in _COUNTER_LISTS:
        return not (isinstance(value, list) and all(isinstance(v, str) for v in value))
    return False


def state_problem(raw: object) -> str | None:
    """Why a parsed state file is wrong-shaped, or None (a part that is missing is not
    wrong: it gets its defaults)."""
    if not isinstance(raw, dict):
        return f"the file holds a JSON {type(raw).__name__}"
    gate, counters, ledger = raw.get("gate"), raw.get("counters"), raw.get("ledger")
    for name, part in (("gate", gate), ("counters", counters), ("ledger", ledger)):
        if part is not None and not isinstance(part, dict):
            return f"{name} is {type(part).__name__}"
    if isinstance(gate, dict):
        why = _fits(gate, _GATE_TYPES)
        if why:
            return f"gate.{why}"
        for key in ("pending", "inflight"):
            if not all(event_ok(e) for e in gate.get(key, ())):
                return f"gate.{key} holds an event of the wrong shape"
    if isinstance(counters, dict):
        for key, value in counters.items():
            if _counter_problem(key, value):
                return f"counters.{key} is {type(value).__name__}"
    return None


def _event_number(event_id: object) -> int:
    if isinstance(event_id, str) and event_id[:1] == "e" and event_id[1:].isdigit():
        return int(event_id[1:])
    return 0


def repair_state(raw: object, entries: list[JournalEntry], why: str, *, note: bool = True) -> HookState:
    """A state rebuilt from what is valid in ``raw`` and what the journal knows; a
    ``damage`` note in its gate says what was lost (unless ``note`` is false: a state file
    that is simply missing beside its journal)."""
    from rolling_graph.core.model import new_counters
    from rolling_graph.core.normalize import normalize_state

    src: dict[str, Any] = raw if isinstance(raw, dict) else {}
    gate_raw: dict[str, Any] = src["gate"] if isinstance(src.get("gate"), dict) else {}
    counters_raw: dict[str, Any] = src["counters"] if isinstance(src.get("counters"), dict) else {}
    gate: dict[str, Any] = {}
    lost = 0
    for key, value in gate_raw.items():
        want = _GATE_TYPES.get(key)
        if want is None:
            continue
        if not (isinstance(value, want) if isinstance(want, type) else want(value)):
            lost += key in ("pending", "inflight")  # a batch that is not a list: its events are gone
            continue
        if key in ("pending", "inflight"):
            kept = [e for e in value if event_ok(e)]
            lost += len(value) - len(kept)
            value = kept
        gate[key] = value
    counters: dict[str, Any] = {k: v for k, v in counters_raw.items() if not _counter_problem(k, v)}
    fresh = new_counters()
    derived = _counters_from_journal(entries)
    for key, value in derived.items():
        if key not in counters or (isinstance(value, int) and counters[key] < value):
            counters[key] = value
    held = [_event_number(e.get("id")) for e in (*gate.get("pending", ()), *gate.get("inflight", ()))]
    counters["events"] = max([counters.get("events", 0), *held])
    state = normalize_state({"gate": gate, "ledger": src.get("ledger"), "counters": {**fresh, **counters}})
    if note:
        text = f"state file {'unreadable' if why == 'unreadable' else f'wrong-shaped ({why[:80]})'}: rebuilt from the journal"
        if lost:
            text += f"; {lost} queued event{'s' if lost != 1 else ''} lost"
        add_note(state["gate"], text)
    return state


def _counters_from_journal(entries: list[JournalEntry]) -> dict[str, Any]:
    """What the counters must be at least, from the journal: the event counter (ids are
    never reused), and per probed batch (its entries share their event ids) one probe,
    its backend and its tokens."""
    events = 0
    batches: dict[tuple[str, ...], tuple[str, int, int]] = {}
    for e in entries:
        ids = e.get("event_ids")
        ids = [i for i in ids if isinstance(i, str)] if isinstance(ids, list) else []
        for eid in [e.get("event_id"), *ids]:
            events = max(events, _event_number(eid))
        if ids and e.get("kind") in ("patch", "rejected"):
            t_in, t_out = e.get("input_tokens"), e.get("output_tokens")
            spent_in = t_in if isinstance(t_in, int) and not isinstance(t_in, bool) else 0
            spent_out = t_out if isinstance(t_out, int) and not isinstance(t_out, bool) else 0
            backend = e.get("backend")
            first = batches.setdefault(tuple(ids), (backend if isinstance(backend, str) else "unknown", 0, 0))
            batches[tuple(ids)] = (first[0], max(first[1], spent_in), max(first[2], spent_out))
    by: dict[str, int] = {}
    for backend, _, _ in batches.values():
        by[backend] = by.get(backend, 0) + 1
    return {
        "events": events,
        "probes": len(batches),
        "probe_tokens_in": sum(b[1] for b in batches.values()),
        "probe_tokens_out": sum(b[2] for b in batches.values()),
        "probes_by_backend": by,
    }


def log_damage(home: str, sid: str, note: str) -> None:
    """One line in ``logs/sidecar.log`` (best effort: a log that cannot be written is no reason
    to fail a load)."""
    import os

    from rolling_graph.core.clock import now_iso

    try:
        logs = os.path.join(home, "logs")
        os.makedirs(logs, exist_ok=True)
        with open(os.path.join(logs, "sidecar.log"), "a", encoding="utf-8", errors="replace") as fh:
            fh.write(f"{now_iso()} session {sid}: {note}\n")
    except OSError:
        pass


def add_note(holder: Any, note: str) -> None:
    """Append a damage note to a graph or gate (the last :data:`NOTES_MAX` kept)."""
    notes = holder.get("damage")
    notes = [n for n in notes if isinstance(n, str)] if isinstance(notes, list) else []
    holder["damage"] = [*notes, note][-NOTES_MAX:]


def damage_notes(doc: Any) -> list[str]:
    """The damage notes of a session document (graph and state), for ``rgraph show``."""
    out: list[str] = []
    for holder in (doc, doc.get("gate") if isinstance(doc, dict) else None):
        notes = holder.get("damage") if isinstance(holder, dict) else None
        if isinstance(notes, list):
            out += [n for n in notes if isinstance(n, str)]
    return out
