"""The sidecar store: one session's hot graph on disk, safe under parallel hooks.

:class:`SidecarStore` is where a session's graph and hook state change: a locked
read-modify-write (:meth:`~SidecarStore.transaction`, and the hook's lighter
:meth:`~SidecarStore.hook_transaction`), and graph changes journaled before they are applied
(:meth:`~SidecarStore.commit_entry`, write-ahead). Where the files are and how they are read,
written and repaired from the journal is its base, :class:`rolling_graph.store.files.SessionFiles`.
"""

from __future__ import annotations

import os

from rolling_graph.core import jsonio
from rolling_graph.core.clock import iso
from rolling_graph.store import journal as journal_mod
from rolling_graph.store.files import SessionFiles, dumps, graph_part, no_index
from rolling_graph.store.shape import event_ok

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Container
    from pathlib import Path
    from typing import Literal

    from rolling_graph.core.config import Settings
    from rolling_graph.core.types import (
        Adjacency,
        GateState,
        GraphDoc,
        HookIndex,
        HookState,
        JournalEntry,
        PatchOp,
        PendingEvent,
        SessionDoc,
        ToolIndex,
    )
    from rolling_graph.store.atomic import FileLock
    from rolling_graph.store.branches import Branches

    #: Which index a hook view reads (:meth:`SidecarStore.hook_transaction`).
    IndexPart = Literal["full", "tool", "none"]

#: Bytes the overflow file may hold: events past the queue's bound (``gate.QUEUE_MAX``) while
#: a probe runs. Past it an event is dropped, counted in ``gate["dropped"]`` and journaled by
#: the next probe.
OVERFLOW_MAX_BYTES = 8 * 1024 * 1024


def _trial_copy(doc: SessionDoc, entry: JournalEntry) -> GraphDoc:
    """A copy of ``doc``'s graph part that applying ``entry`` cannot reach through.

    Adds of whole nodes and edges (resume, pull) only insert keys into the two maps, so
    copying the maps is enough: ~0.1 ms instead of a JSON round trip of the whole graph
    (~20 ms at 2,000 nodes). Anything else gets the deep copy.
    """
    trial = graph_part(doc)
    if not entry.get("decay_at") and journal_mod.whole_member_adds(entry.get("ops") or []):
        trial["nodes"] = dict(doc["nodes"])
        trial["edges"] = dict(doc["edges"])
        trial["focus"] = list(doc["focus"])
        return trial
    copy: GraphDoc = jsonio.loads(dumps(trial))
    return copy


class _Transaction:
    def __init__(self, store: SidecarStore, sid: str, graph: bool, parsed: GraphDoc | None = None, edges: bool = True) -> None:
        self.store, self.sid, self.graph, self.parsed, self.edges = store, sid, graph, parsed, edges
        self.lock = store.lock(sid)
        self.doc: SessionDoc

    def __enter__(self) -> SessionDoc:
        self.lock.__enter__()
        try:
            self.doc = self.store.files.load_locked(self.sid, self.parsed, edges=self.edges)
        except BaseException:
            self.lock.__exit__()
            raise
        return self.doc

    def read_edges(self) -> None:
        """Read the edges a transaction opened with ``edges=False`` left unread (the graph is the
        same while the lock is held): the document is then whole."""
        from rolling_graph.store.graph_cache import EdgesNotRead

        if isinstance(self.doc["edges"], EdgesNotRead):
            self.doc["edges"] = self.store.files.load_graph_locked(self.sid)["edges"]

    def __exit__(self, exc_type: object, exc: object, tb: object) -> None:
        try:
            if exc_type is None:
                self.store._save_locked(self.sid, self.doc, self.doc if self.graph else None)
        finally:
            self.lock.__exit__()


class _IdsOnDemand:
    """A :class:`_HookView`'s node ids, read the first time one is looked up."""

    __slots__ = ("view",)

    def __init__(self, view: _HookView) -> None:
        self.view = view

    def __contains__(self, key: object) -> bool:
        view = self.view
        ids = view._node_ids if view._node_ids is not None else view._read_index()[1]
        return key in ids


class _HookView:
    """``with store.hook_transaction(sid) as view``: ``view.state`` (gate, ledger,
    counters; written back on exit), ``view.index`` and ``view.graph()``."""

    def __init__(self, store: SidecarStore, sid: str, index: IndexPart = "full") -> None:
        self.store, self.sid, self.part = store, sid, index
        self.lock = store.lock(sid)
        self.state: HookState
        self._index: HookIndex | None = None
        self._node_ids: frozenset[str] | None = None
        self._graph: GraphDoc | None = None

    def __enter__(self) -> _HookView:
        self.lock.__enter__()
        try:
            self.state = self.store.load_state(self.sid)
            if self.part != "tool":  # a tool result's part is read when first asked for (_read_index)
                self._read_index()
        except BaseException:
            self.lock.__exit__()
            raise
        return self

    def _read_index(self) -> tuple[HookIndex, frozenset[str]]:
        """Read the index part this view was opened with, and the graph's node ids (the lock is held)."""
        tool = self.store.load_tool_index(self.sid) if self.part == "tool" else None
        if tool is not None:
            from rolling_graph.store.index import tool_view

            self._index, self._node_ids = tool_view(tool)
            return self._index, self._node_ids
        index = self._load_index() if self.part != "none" else no_index()
        self._index, self._node_ids = index, frozenset(index["ids"])
        if self.part == "tool" and index["version"] and self._graph is None:
            # Read from its file (a rebuild writes both): e.g. written before tool indexes.
            self.store.files.write_tool_index(self.sid, index)
        return self._index, self._node_ids

    @property
    def index(self) -> HookIndex:
        return self._index if self._index is not None else self._read_index()[0]

    @property
    def node_ids(self) -> Container[str]:
        """The graph's node ids. For a tool result, read from the tool index the first time one is
        looked up: the gate looks up only the files a tool names and the error it reports, so a
        shell command that names no file and passes reads no index (a third of a session's tool
        events name no file)."""
        if self._node_ids is not None:
            return self._node_ids
        return _IdsOnDemand(self)

    def _load_index(self) -> HookIndex:
        index = self.store.load_index(self.sid)
        if index is not None:
            return index
        if not self.store.exists(self.sid):
            return no_index()
        # Missing or stale: a graph that lags its journal is rolled forward, which writes
        # the index too; otherwise build it from the graph, once.
        self._graph = self.store.files.load_graph_locked(self.sid)
        return self.store.load_index(self.sid) or self.store.files.write_index(self.sid, self._graph)

    def graph(self) -> SessionDoc:
        """The combined document (graph + this view's state), parsed on first use."""
        if self._graph is None:
            self._graph = self.store.files.load_graph_locked(self.sid)
        return {**self._graph, **self.state}

    def branch(self, ids: list[str], linked: list[str]) -> tuple[GraphDoc, Adjacency]:
        """The nodes ``ids`` and ``linked``, the neighbours of ``linked`` and their
        adjacency lists: from the branch cache when it is current (a few records decoded,
        not the whole graph), else from the whole graph."""
        if self._graph is None:
            cached = self.store.load_branches(self.sid)
            if cached is not None:
                return cached.subset(ids, linked)
        from rolling_graph.core.adjacency import adjacency

        doc = self.graph()
        return doc, adjacency(doc, linked)

    def __exit__(self, exc_type: object, exc: object, tb: object) -> None:
        try:
            if exc_type is None:
                self.store._save_locked(self.sid, self.state)
        finally:
            self.lock.__exit__()


class _JournalGroup:
    """``with store.journal_group(sid):`` — the entries committed inside reach the journal
    in one write when the block ends, and not at all when it raises (see
    :meth:`SidecarStore.journal_group`)."""

    def __init__(self, store: SidecarStore, sid: str) -> None:
        self.store, self.sid = store, sid

    def __enter__(self) -> None:
        self.store._groups[self.sid] = []

    def __exit__(self, exc_type: object, exc: object, tb: object) -> None:
        entries = self.store._groups.pop(self.sid, [])
        if exc_type is None and entries:
            journal_mod.append_many(self.store.files.path(self.sid, "journal.jsonl"), entries)


class SidecarStore:
    """Load, save and change session documents under ``home/sessions``."""

    def __init__(self, settings: Settings | str | os.PathLike[str]) -> None:
        """``settings``, or just the home directory (default decay settings, system clock)."""
        #: The session's files: where they are, how they are read, written and repaired.
        self.files = SessionFiles(settings)
        self.settings: Settings | None = self.files.settings
        self.dir = self.files.dir  # home/sessions
        self._groups: dict[str, list[JournalEntry]] = {}  # open journal groups, by session
        self._overflow_taken: set[str] = set()  # sessions whose overflow file goes when their state is saved

    # -- reading: the session's files (SessionFiles) ----------------------------------------
    def graph_path(self, sid: str) -> Path:
        return self.files.graph_path(sid)

    def state_path(self, sid: str) -> Path:
        return self.files.state_path(sid)

    def journal_path(self, sid: str) -> Path:
        return self.files.journal_path(sid)

    def exists(self, sid: str) -> bool:
        """Whether the session has a graph or a journal."""
        return self.files.exists(sid)

    def lock(self, sid: str, blocking: bool = True) -> FileLock:
        """The session's lock (``fcntl``): every write of its files holds it."""
        return self.files.lock(sid, blocking)

    def probe_lock(self, sid: str) -> FileLock:
        """Held by the one probe process a session may have; taken without blocking."""
        return self.files.probe_lock(sid)

    def probe_running(self, sid: str) -> bool:
        return self.files.probe_running(sid)

    def load(self, sid: str) -> SessionDoc:
        """A snapshot of the combined document (graph + gate, ledger, counters); no lock."""
        return self.files.load(sid)

    def load_graph(self, sid: str) -> GraphDoc:
        """The graph document, rebuilt or rolled forward from the journal when needed."""
        return self.files.load_graph(sid)

    def load_state(self, sid: str) -> HookState:
        """The hook's state (gate, ledger, counters), repaired from the journal when needed."""
        return self.files.load_state(sid)

    def load_index(self, sid: str) -> HookIndex | None:
        return self.files.load_index(sid)

    def load_tool_index(self, sid: str) -> ToolIndex | None:
        return self.files.load_tool_index(sid)

    def load_branches(self, sid: str) -> Branches | None:
        return self.files.load_branches(sid)

    def read_journal(self, sid: str) -> list[JournalEntry]:
        return self.files.read_journal(sid)

    def project(self, sid: str) -> str | None:
        """The session's project, from its journal's first (init) entry: no graph parse."""
        return self.files.project(sid)

    def clean_temp(self, sid: str | None = None) -> list[str]:
        """Remove temp files that killed writers left (of one session, or of all)."""
        return self.files.clean_temp(sid)

    def session_times(self) -> dict[str, float]:
        return self.files.session_times()

    def list_sessions(self) -> list[str]:
        """Session ids with a graph or journal, most recently updated first."""
        return self.files.list_sessions()

    # -- the overflow file ---------------------------------------------------------------
    def overflow_path(self, sid: str) -> str:
        """``<sid>.overflow.jsonl``: events past the queue's bound, one JSON object a line."""
        return self.files.path(sid, "overflow.jsonl")

    def _save_locked(self, sid: str, state: HookState, graph: SessionDoc | None = None) -> None:
        """The state (and graph) as :meth:`SessionFiles.save_locked` writes them; events the gate spilled past the
        queue's bound are appended to the overflow file first, and an overflow file taken
        in this transaction (:meth:`take_overflow`) is removed once the state that holds
        its events is written."""
        spilled = state["gate"].pop("spilled", None)
        if spilled:
            self._spill(sid, spilled, state["gate"])
        self.files.save_locked(sid, state, graph)
        if sid in self._overflow_taken:
            self._overflow_taken.discard(sid)
            try:  # noqa: SIM105 - contextlib is one more import for every hook event
                os.unlink(self.overflow_path(sid))
            except FileNotFoundError:
                pass

    def _spill(self, sid: str, events: list[PendingEvent], gate: GateState) -> None:
        """Append ``events`` to the overflow file (fsynced, under the session lock the caller
        holds), up to :data:`OVERFLOW_MAX_BYTES`; the rest are counted as dropped."""
        path = self.overflow_path(sid)
        try:
            size = os.path.getsize(path)
        except FileNotFoundError:
            size = 0
        lines: list[bytes] = []
        dropped = 0
        for event in events:
            line = dumps(event) + b"\n"
            if size + len(line) > OVERFLOW_MAX_BYTES:
                dropped += 1
                continue
            lines.append(line)
            size += len(line)
        if lines:
            os.makedirs(self.dir, exist_ok=True)
            fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
            try:
                os.write(fd, b"".join(lines))
                os.fsync(fd)
            finally:
                os.close(fd)
        if dropped:
            gate["dropped"] = gate.get("dropped", 0) + dropped

    def take_overflow(self, sid: str) -> tuple[list[PendingEvent], int]:
        """Inside a transaction: the overflow file's events, oldest first, and how many of
        its lines were unreadable (a writer killed mid-line). The file is removed when the
        transaction writes the state, which must then hold the events (in flight)."""
        path = self.overflow_path(sid)
        try:
            with open(path, "rb") as fh:
                raw = fh.read(OVERFLOW_MAX_BYTES + 1024 * 1024)
        except FileNotFoundError:
            return [], 0
        self._overflow_taken.add(sid)
        events: list[PendingEvent] = []
        bad = 0
        for line in raw.splitlines():
            if not line.strip():
                continue
            try:
                event = jsonio.loads(line)
            except (ValueError, UnicodeDecodeError, RecursionError):
                bad += 1
                continue
            if event_ok(event):
                events.append(event)
            else:
                bad += 1
        return events, bad

    # -- transactions ----------------------------------------------------------------------
    def hook_transaction(self, sid: str, *, index: IndexPart = "full") -> _HookView:
        """The hook's locked read-modify-write of its state, with the index at hand (``"tool"``:
        only what a tool result reads, :func:`rolling_graph.store.index.tool_view`; ``"none"``:
        the state alone, as the probe takes its batch) and the full graph parsed only if
        :meth:`_HookView.graph` is called."""
        return _HookView(self, sid, index)

    def transaction(self, sid: str, *, graph: bool = True, parsed: GraphDoc | None = None, edges: bool = True) -> _Transaction:
        """``with store.transaction(sid) as doc:`` — locked read-modify-write.

        With ``graph=False`` only the state part (gate, ledger, counters) is written back
        (a transaction that reads only the state: :meth:`hook_transaction`, ``index="none"``).
        ``parsed``: this session's graph as the caller already holds it (:meth:`load`), used
        instead of reading the file again when the journal has not grown since (the graph
        changes only through it); the caller's document is then the transaction's, and
        nothing may have changed its graph part. Graph changes must go through :meth:`commit_entry`.
        ``edges=False``: the graph's edges may be left unread (``doc["edges"]`` an
        :class:`rolling_graph.store.graph_cache.EdgesNotRead`, which refuses every read) until
        :meth:`_Transaction.read_edges`; the graph is then never written back.
        """
        return _Transaction(self, sid, graph, parsed, edges)

    def journal_group(self, sid: str) -> _JournalGroup:
        """``with store.journal_group(sid):`` inside a transaction: the entries committed in
        the block are appended in one write at its end (before the transaction saves), or
        not at all if it raises. A probe commits its batch so: the batch's patch and the
        tool fold that follows it are in the journal together or not at all."""
        return _JournalGroup(self, sid)

    # -- journaled changes -----------------------------------------------------------------
    def commit_entry(self, doc: SessionDoc, entry: JournalEntry) -> JournalEntry:
        """Journal ``entry`` and apply it to ``doc`` (held inside a transaction).

        Write-ahead: the entry is appended and fsynced first; the graph is written when
        the transaction ends. Returns the entry with its ``seq`` filled in.
        """
        sid = doc["session_id"]
        entry = {**entry, "seq": doc["journal_seq"] + 1}
        entry.setdefault("at", iso(self.files.now()))
        entry.setdefault("session_id", sid)
        if doc.get("project") and entry["seq"] == 1:
            entry.setdefault("project", doc["project"])
        group = self._groups.get(sid)
        if entry.get("kind") not in journal_mod.NON_MUTATING:
            # Apply to a copy first: an op that cannot apply must not reach the journal.
            trial = _trial_copy(doc, entry)
            journal_mod.apply_entry(trial, entry, self.files.decay_settings())
            if group is None:
                journal_mod.append(self.files.path(sid, "journal.jsonl"), entry)
            else:
                group.append(entry)
            doc["nodes"], doc["edges"], doc["focus"] = trial["nodes"], trial["edges"], trial["focus"]
            if "last_decay_at" in trial:  # a live graph decays exactly as its journal rebuilds it
                doc["last_decay_at"] = trial["last_decay_at"]
        elif group is None:
            journal_mod.append(self.files.path(sid, "journal.jsonl"), entry)
        else:
            group.append(entry)
        doc["journal_seq"] = entry["seq"]
        return entry

    def apply_ops(
        self,
        sid: str,
        ops: list[PatchOp],
        *,
        kind: str,
        rationale: str,
        event_id: str | None = None,
        backend: str | None = None,
    ) -> int:
        """Apply trusted, already-valid ops (resume, pull, seed) under the lock; journaled.

        Returns the journal seq of the entry (0 when there was nothing to apply).
        """
        if not ops:
            return 0
        with self.transaction(sid) as doc:
            entry = self.commit_ops(doc, ops, kind=kind, rationale=rationale, event_id=event_id, backend=backend)
        return entry["seq"]

    def commit_ops(
        self, doc: SessionDoc, ops: list[PatchOp], *, kind: str, rationale: str,
        event_id: str | None = None, backend: str | None = None,
    ) -> JournalEntry:
        """:meth:`commit_entry` for trusted ops, inside a transaction the caller holds."""
        return self.commit_entry(
            doc, {"kind": kind, "rationale": rationale, "event_id": event_id, "backend": backend, "reasons": [], "ops": ops}
        )

    def activate(self, sid: str, node_ids: list[str], *, rationale: str, event_id: str | None = None) -> list[str]:
        """Strengthen existing nodes (an expansion or an explicit request); journaled.

        Returns the ids that exist and were activated.
        """
        from rolling_graph.core.weights import activation_ops

        settings = self.files.decay_settings()
        with self.transaction(sid) as doc:
            found = [n for n in node_ids if n in doc["nodes"]]
            if found:
                ops = activation_ops(doc, found, self.files.now(), settings, source=event_id)
                self.commit_entry(
                    doc,
                    {"kind": "activate", "rationale": rationale, "event_id": event_id, "backend": "user", "reasons": ["expand"], "ops": ops},
                )
        return found
