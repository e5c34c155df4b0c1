"""Repair from the journal: what the sidecar store does when a session's file is not right.

* A graph file that is missing, unreadable or wrong-shaped is rebuilt from the whole journal;
  one that lags the journal (a crash between the two writes) is rolled forward over the
  entries it has not folded in (:func:`rebuild_graph`).
* A state file that is unreadable or wrong-shaped, or missing beside a journal, is rebuilt
  from what is valid in it and from the journal (:func:`recover_state`).

Whatever was lost is said once: a ``damage`` note on the graph (``rgraph show`` prints it)
or in the gate state, and a line in ``logs/sidecar.log``. Only the store calls this, under
its lock, and only when a file needs it: the hook's usual event never imports this module.
"""

from __future__ import annotations

from rolling_graph.core.model import new_graph
from rolling_graph.core.normalize import normalize_graph, normalize_state
from rolling_graph.store import journal as journal_mod
from rolling_graph.store.atomic import read_json
from rolling_graph.store.shape import add_note, log_damage, repair_state, state_problem

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

    from rolling_graph.core.config import DecaySettings
    from rolling_graph.core.types import GraphDoc, HookState


def rebuild_graph(
    sid: str,
    graph: GraphDoc | None,
    jpath: str,
    decay: DecaySettings,
    reread: Callable[[], GraphDoc | None],
    refused: str | None,
    home: str,
) -> GraphDoc:
    """``graph`` rolled forward over the journal entries past its ``journal_bytes``, or, when
    it is None (missing, or ``refused``: why its file was refused), rebuilt from the whole
    journal; normalised, with what was lost noted on it and logged. ``reread`` reads the
    graph file again (a careful second fold starts from a fresh copy)."""
    offset = graph.get("journal_bytes", 0) if graph is not None else 0
    entries = journal_mod.read_journal(jpath, offset)

    def base() -> GraphDoc:
        if offset:
            return reread() or new_graph(sid)
        fresh = new_graph(sid)
        if entries:  # keep the original creation facts where the journal has them
            fresh["created_at"] = entries[0].get("at", fresh["created_at"])
            fresh["project"] = next((e["project"] for e in entries if isinstance(e.get("project"), str)), None)
        return fresh

    loss = journal_mod.Loss()
    try:
        graph = journal_mod.rebuild(graph if graph is not None else base(), entries, decay, loss)
    except Exception:  # an entry that cannot apply: fold again, each entry whole or not at all
        loss = journal_mod.Loss()
        graph = journal_mod.rebuild(base(), entries, decay, loss, careful=True)
    graph = normalize_graph(graph, sid)  # nodes from older journal lines may lack fields
    notes = [f"graph file wrong-shaped ({refused}): rebuilt from the journal"] if refused else []
    if loss:
        notes.append(f"{loss.describe()}; the graph holds the rest")
    for note in notes:
        note_damage(home, sid, graph, note)
    return graph


def recover_state(
    sid: str, path: str, jpath: str, raw: dict[str, Any] | None, why: str | None, present: bool, home: str
) -> HookState:
    """The state of a session whose state file at ``path`` was unreadable (``raw`` None) or
    wrong-shaped (``why``), or is missing (not ``present``) beside its journal at ``jpath``:
    read again once (another process may have just created it), else rebuilt from what is
    valid in it and from the journal (the event counter never goes back, so no event id is
    reused); a ``damage`` note says what was lost."""
    if raw is None and present:  # (created by another process just now? read it again)
        raw = read_json(path)
        why = state_problem(raw) if raw is not None else None
        if raw is not None and why is None:
            return normalize_state(raw)
    state = repair_state(raw, journal_mod.read_journal(jpath), why or "unreadable", note=present)
    if present:
        log_damage(home, sid, state["gate"]["damage"][-1])
    return state


def note_damage(home: str, sid: str, graph: GraphDoc, note: str) -> None:
    """A loss found while loading: noted on the graph (``rgraph show`` prints it) and logged."""
    if note not in (graph.get("damage") or []):
        add_note(graph, note)
        log_damage(home, sid, note)
