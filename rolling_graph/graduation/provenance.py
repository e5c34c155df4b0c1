"""Where a graduation candidate came from: the journal entries that actually state it.

A draft cites sessions and events (``"<session>#<seq>"``, journal entries under
``$ROLLING_GRAPH_HOME/sessions/``). An entry is *evidence* for a node when one of its
operations touches the node and its text — the rationale and every label or summary its
operations carry — contains the node's subject (its label). Touching alone is not enough:
the entry that adds "Use PostgreSQL" and its ``supersedes`` edge to "Use SQLite" touches
both decisions but states only one of them.

Entries that bring the warm graph's own nodes back into a session (``resume``, ``pull``,
``seed``) are never evidence — a session that merely started with the snapshot did not
decide anything — and neither are refused or bookkeeping entries.

:class:`Journals` reads each session's journal once per run (a nightly job drafts many
candidates from the same sessions).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from rolling_graph.core.config import Settings
from rolling_graph.core.ids import InvalidSessionId, pointer_parts
from rolling_graph.safety.redact import redact
from rolling_graph.store.journal import op_touches
from rolling_graph.store.sidecar import SidecarStore

#: Journal entry kinds that are no evidence of anything said in the session.
NOT_EVIDENCE = frozenset({"resume", "pull", "seed", "rejected", "note", "init"})
RATIONALE_MAX = 240
_SPACE_RE = re.compile(r"\s+")


@dataclass(frozen=True)
class EventRef:
    session_id: str
    seq: int
    kind: str
    rationale: str
    event_id: str | None = None
    at: str | None = None

    @property
    def ref(self) -> str:
        return f"{self.session_id}#{self.seq}"


@dataclass(frozen=True)
class Evidence:
    """A node's provenance: evidence entries (most recent first) and the sessions they are in."""

    events: tuple[EventRef, ...] = ()
    #: Sessions with at least one evidence entry, oldest first.
    sessions: tuple[str, ...] = ()
    #: Sessions whose own work (not the warm graph's echo) added or activated the node.
    appeared_in: tuple[str, ...] = ()


def normalise(text: str) -> str:
    """Lower-case, one space, no code quotes: how a subject is looked for in an entry."""
    return _SPACE_RE.sub(" ", text.replace("`", "").lower()).strip()


def _strings(value: Any, out: list[str], depth: int = 0) -> None:
    if isinstance(value, str):
        out.append(value)
    elif depth < 4 and isinstance(value, dict):
        for v in value.values():
            _strings(v, out, depth + 1)
    elif depth < 4 and isinstance(value, list):
        for v in value[:50]:
            _strings(v, out, depth + 1)


def entry_text(entry: dict[str, Any]) -> str:
    """What an entry says: its rationale and the strings its operations carry."""
    out = [str(entry.get("rationale") or "")]
    for op in entry.get("ops") or []:
        if isinstance(op, dict):
            _strings(op.get("value"), out)
    return "\n".join(out)


def mentions(text: str, subject: str) -> bool:
    want = normalise(subject)
    return bool(want) and want in normalise(text)


def _touches_node_itself(op: dict[str, Any], node_id: str) -> bool:
    parts = pointer_parts(op.get("path"))
    return len(parts) >= 2 and parts[0] == "nodes" and parts[1] == node_id


@dataclass
class Journals:
    """Journal entries by session, each journal read once (unreadable or refused ids: none)."""

    settings: Settings
    _cache: dict[str, list[dict[str, Any]]] = field(default_factory=dict)

    def entries(self, session_id: str) -> list[dict[str, Any]]:
        if session_id not in self._cache:
            try:
                found = SidecarStore(self.settings).read_journal(session_id)
            except InvalidSessionId:
                found = []
            self._cache[session_id] = [dict(e) for e in found]
        return self._cache[session_id]

    def evidence(self, sessions: Sequence[str], node_id: str, subject: str) -> Evidence:
        """Evidence for the node across ``sessions`` (given oldest first)."""
        events: list[EventRef] = []
        appeared: list[str] = []
        for sid in sessions:
            for entry in self.entries(sid):
                if entry.get("kind") in NOT_EVIDENCE:
                    continue
                ops = [op for op in entry.get("ops") or [] if isinstance(op, dict)]  # a damaged line's ops
                if not any(op_touches(op, node_id) for op in ops):
                    continue
                if any(_touches_node_itself(op, node_id) for op in ops) and sid not in appeared:
                    appeared.append(sid)
                if not mentions(entry_text(entry), subject):
                    continue
                events.append(EventRef(
                    sid, int(entry["seq"]), str(entry.get("kind") or "patch"),
                    redact(str(entry.get("rationale") or ""))[:RATIONALE_MAX],
                    entry.get("event_id") if isinstance(entry.get("event_id"), str) else None,
                    entry.get("at") if isinstance(entry.get("at"), str) else None,
                ))
        cited = tuple(dict.fromkeys(e.session_id for e in events))
        events.sort(key=lambda e: (e.at or "", e.session_id, e.seq), reverse=True)
        return Evidence(tuple(events), cited, tuple(appeared))

    def entry(self, ref: str) -> dict[str, Any] | None:
        """The entry ``"<session>#<seq>"`` names, if its journal holds it."""
        sid, _, seq = ref.rpartition("#")
        if not sid or not seq.isdigit():
            return None
        return next((e for e in self.entries(sid) if e.get("seq") == int(seq)), None)


