"""The sidecar store: one session's hot graph on disk, safe under parallel hooks.

Files, in ``$ROLLING_GRAPH_HOME/sessions/``:

* ``<sid>.graph.json``    — the graph document (nodes, edges, focus, ``journal_seq``).
* ``<sid>.state.json``    — the hook's volatile state: gate, ledger, counters. Kept apart
  so that the hook, which runs before every prompt and after every tool call, rewrites a
  few kilobytes rather than a graph of thousands of nodes.
* ``<sid>.index.json``    — the hook index (:mod:`rolling_graph.index`): derived from the
  graph whenever it is written, so most hook events need not parse the graph at all.
* ``<sid>.graph.cache``   — a read cache of the graph file in :mod:`marshal` format, which
  this interpreter loads in about half the time of the JSON (a 2,000-node graph: ~9 ms
  against ~19 ms). Derived, never fsynced, used only when it names the exact graph file
  on disk (inode, size, mtime) and was written by the same Python; else ignored.
* ``<sid>.journal.jsonl`` — the write-ahead journal (:mod:`rolling_graph.journal`).
* ``<sid>.lock``          — the inter-process lock (``fcntl.flock``) guarding all three.

Every write is atomic: a temp file in the same directory, fsync, ``os.replace``. A graph
file that is missing, truncated or corrupt is rebuilt from the journal; one that lags the
journal (a crash between the two writes) is rolled forward.
"""

from __future__ import annotations

import os

from . import journal as journal_mod
from . import jsonio
from .atomic import FileLock, read_json, write_atomic
from .errors import RollingGraphError
from .model import SCHEMA_VERSION, iso, new_graph, normalize_graph, normalize_state, utcnow

TYPE_CHECKING = False
if TYPE_CHECKING:
    from datetime import datetime
    from pathlib import Path

    from .config import DecaySettings, Settings
    from .types import GraphDoc, HookIndex, HookState, JournalEntry, PatchOp, SessionDoc

_ID_FIRST = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789")
_ID_CHARS = _ID_FIRST | frozenset("_.-")


def _plain_id(sid: str) -> bool:
    """``[A-Za-z0-9][A-Za-z0-9_.-]{0,127}`` and no ``..`` (checked without ``re``)."""
    return 0 < len(sid) <= 128 and sid[0] in _ID_FIRST and all(c in _ID_CHARS for c in sid) and ".." not in sid

#: Keys of the combined document that live in the state file rather than the graph file.
STATE_KEYS = ("gate", "ledger", "counters")


class InvalidSessionId(RollingGraphError, ValueError):
    """The session id is not a plain id (path separators, ``..``, control chars, too long)."""


def validate_session_id(sid: object) -> str:
    if not isinstance(sid, str) or not _plain_id(sid):
        shown = repr(sid)[:40]
        raise InvalidSessionId(f"refusing session id {shown}: expected letters, digits, '-', '_' or '.' (at most 128)")
    return sid


def _graph_part(doc: SessionDoc) -> GraphDoc:
    """The graph file's part of a combined document (a shallow copy without the state)."""
    graph: GraphDoc = {**doc}  # type: ignore[typeddict-unknown-key]  # the state keys go just below
    for key in STATE_KEYS:
        graph.pop(key, None)  # type: ignore[misc]
    return graph


def _dumps(doc: object) -> bytes:
    # (orjson parses faster, but importing it pulls in dataclasses, platform and more:
    # ~17 ms, more than it saves in a process that lives for one event.)
    return jsonio.dumps(doc).encode("utf-8", "backslashreplace")  # a lone surrogate stays its JSON escape


def _trial_copy(doc: SessionDoc, entry: JournalEntry) -> GraphDoc:
    """A copy of ``doc``'s graph part that applying ``entry`` cannot reach through.

    Adds of whole nodes and edges (resume, pull) only insert keys into the two maps, so
    copying the maps is enough: ~0.1 ms instead of a JSON round trip of the whole graph
    (~20 ms at 2,000 nodes). Anything else gets the deep copy.
    """
    trial = _graph_part(doc)
    if not entry.get("decay_at") and journal_mod.whole_member_adds(entry.get("ops") or []):
        trial["nodes"] = dict(doc["nodes"])
        trial["edges"] = dict(doc["edges"])
        trial["focus"] = list(doc["focus"])
        return trial
    copy: GraphDoc = jsonio.loads(_dumps(trial))
    return copy


#: The cache holds the graph as loaded (normalised): a cache from before normalisation
#: carries another tag and is ignored.
_CACHE_TAG = "rolling-graph-graph-cache-2"


def _signature(st: os.stat_result) -> tuple[int, int, int]:
    return (st.st_ino, st.st_size, st.st_mtime_ns)


def _cache_key() -> tuple[str, int, int, int]:
    import marshal
    import sys

    return (_CACHE_TAG, marshal.version, *sys.version_info[:2])


def _read_cache(path: str, graph_stat: os.stat_result) -> GraphDoc | None:
    """The cached graph if it was made from exactly this graph file by this Python."""
    import marshal

    try:
        with open(path, "rb") as fh:
            key, signature, graph = marshal.loads(fh.read())
    except (OSError, EOFError, ValueError, TypeError):
        return None
    cached: GraphDoc = graph  # written by _write_graph from a normalised document
    if key != _cache_key() or signature != _signature(graph_stat) or not isinstance(graph, dict):
        return None
    return cached


def _no_index() -> HookIndex:
    """The index of a session without a graph: nothing to find in it (never written)."""
    return {"version": 0, "journal_seq": 0, "journal_bytes": 0, "nodes": {}, "focus": [], "fp": {}, "rev": {}, "file_intents": {}}


class _Transaction:
    def __init__(self, store: SidecarStore, sid: str, graph: bool) -> None:
        self.store, self.sid, self.graph = store, sid, graph
        self.lock = store.lock(sid)
        self.doc: SessionDoc

    def __enter__(self) -> SessionDoc:
        self.lock.__enter__()
        try:
            self.doc = self.store._load_locked(self.sid)
        except BaseException:
            self.lock.__exit__()
            raise
        return self.doc

    def __exit__(self, exc_type: object, exc: object, tb: object) -> None:
        try:
            if exc_type is None:
                self.store._save_locked(self.sid, self.doc, self.doc if self.graph else None)
        finally:
            self.lock.__exit__()


class _HookView:
    """``with store.hook_transaction(sid) as view``: ``view.state`` (gate, ledger,
    counters; written back on exit), ``view.index`` and ``view.graph()``."""

    def __init__(self, store: SidecarStore, sid: str, with_index: bool = True) -> None:
        self.store, self.sid, self.with_index = store, sid, with_index
        self.lock = store.lock(sid)
        self.state: HookState
        self.index: HookIndex
        self._graph: GraphDoc | None = None

    def __enter__(self) -> _HookView:
        self.lock.__enter__()
        try:
            self.state = self.store.load_state(self.sid)
            self.index = self._load_index() if self.with_index else _no_index()
        except BaseException:
            self.lock.__exit__()
            raise
        return self

    def _load_index(self) -> HookIndex:
        index = self.store.load_index(self.sid)
        if index is not None:
            return index
        if not self.store.exists(self.sid):
            return _no_index()
        # Missing or stale: a graph that lags its journal is rolled forward, which writes
        # the index too; otherwise build it from the graph, once.
        self._graph = self.store._load_graph_locked(self.sid)
        return self.store.load_index(self.sid) or self.store._write_index(self.sid, self._graph)

    def graph(self) -> SessionDoc:
        """The combined document (graph + this view's state), parsed on first use."""
        if self._graph is None:
            self._graph = self.store._load_graph_locked(self.sid)
        return {**self._graph, **self.state}

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
            journal_mod.append_many(self.store._path(self.sid, "journal.jsonl"), entries)


class SidecarStore:
    """Load, save and change session documents under ``home/sessions``."""

    def __init__(self, settings: Settings | str | os.PathLike[str]) -> None:
        """``settings``, or just the home directory (default decay settings, system clock)."""
        self.settings: Settings | None
        if isinstance(settings, (str, os.PathLike)):
            self.settings, home = None, os.fspath(settings)
        else:
            self.settings, home = settings, settings.home_dir
        self.dir = os.path.join(home, "sessions")
        self._groups: dict[str, list[JournalEntry]] = {}  # open journal groups, by session
        self._bad_graph: dict[str, str] = {}  # why a graph file was refused, for its rebuild's note

    # -- paths -----------------------------------------------------------------------
    def _path(self, sid: str, suffix: str) -> str:
        validate_session_id(sid)
        return os.path.join(self.dir, f"{sid}.{suffix}")

    def graph_path(self, sid: str) -> Path:
        from pathlib import Path

        return Path(self._path(sid, "graph.json"))

    def state_path(self, sid: str) -> Path:
        from pathlib import Path

        return Path(self._path(sid, "state.json"))

    def journal_path(self, sid: str) -> Path:
        from pathlib import Path

        return Path(self._path(sid, "journal.jsonl"))

    def exists(self, sid: str) -> bool:
        return os.path.exists(self._path(sid, "graph.json")) or os.path.exists(self._path(sid, "journal.jsonl"))

    def lock(self, sid: str, blocking: bool = True) -> FileLock:
        os.makedirs(self.dir, exist_ok=True)
        return FileLock(self._path(sid, "lock"), blocking)

    def probe_lock(self, sid: str) -> FileLock:
        """Held by the one probe process a session may have; taken without blocking."""
        os.makedirs(self.dir, exist_ok=True)
        return FileLock(self._path(sid, "probe.lock"), blocking=False)

    def probe_running(self, sid: str) -> bool:
        with self.probe_lock(sid) as lk:
            return not lk.acquired

    # -- reading -----------------------------------------------------------------------
    def _decay_settings(self) -> DecaySettings:
        if self.settings is not None:
            return self.settings.decay
        from .config import DecaySettings

        return DecaySettings()

    def _now(self) -> datetime:
        """The settings' clock (a replay pins it), or the system clock for a bare store."""
        return self.settings.clock.now() if self.settings is not None else utcnow()

    def load_graph(self, sid: str) -> GraphDoc:
        """The graph document; rebuilt or rolled forward from the journal when needed.

        Reads need no lock: files are only ever replaced whole.
        """
        graph = self._read_graph(sid)
        jpath = self._path(sid, "journal.jsonl")
        if graph is not None and graph.get("journal_bytes", 0) >= journal_mod.journal_size(jpath):
            return graph
        if not os.path.exists(jpath) and graph is None:
            return new_graph(sid)
        with self.lock(sid):  # rebuild under the lock so only one process repairs
            return self._load_graph_locked(sid)

    def _load_graph_locked(self, sid: str) -> GraphDoc:
        jpath = self._path(sid, "journal.jsonl")
        graph = self._read_graph(sid)
        size = journal_mod.journal_size(jpath)
        if graph is not None and graph.get("journal_bytes", 0) >= size:
            return graph
        refused = self._bad_graph.pop(sid, None)
        offset = graph.get("journal_bytes", 0) if graph is not None else 0
        entries = journal_mod.read_journal(jpath, offset)

        def base() -> GraphDoc:
            if offset:
                return self._read_graph(sid) or new_graph(sid)
            fresh = new_graph(sid)
            if entries:  # keep the original creation facts where the journal has them
                fresh["created_at"] = entries[0].get("at", fresh["created_at"])
                fresh["project"] = next((e["project"] for e in entries if isinstance(e.get("project"), str)), None)
            return fresh

        loss = journal_mod.Loss()
        try:
            graph = journal_mod.rebuild(graph if graph is not None else base(), entries, self._decay_settings(), loss)
        except Exception:  # an entry that cannot apply: fold again, each entry whole or not at all
            loss = journal_mod.Loss()
            graph = journal_mod.rebuild(base(), entries, self._decay_settings(), loss, careful=True)
        graph = normalize_graph(graph, sid)  # nodes from older journal lines may lack fields
        notes = [f"graph file wrong-shaped ({refused}): rebuilt from the journal"] if refused else []
        if loss:
            notes.append(f"{loss.describe()}; the graph holds the rest")
        for note in notes:
            self._report(sid, graph, note)
        graph["journal_bytes"] = size
        os.makedirs(self.dir, exist_ok=True)
        self._write_graph(sid, graph)
        return graph

    def _read_graph(self, sid: str) -> GraphDoc | None:
        """The graph file's document, normalised (through its cache when that is current:
        the cache holds the document as normalised), or None when the file is missing,
        unreadable or of another schema version (then the journal rebuilds it)."""
        gpath = self._path(sid, "graph.json")
        try:
            st = os.stat(gpath)
        except FileNotFoundError:
            return None
        cached = _read_cache(self._path(sid, "graph.cache"), st)
        if cached is not None:
            return cached
        raw = read_json(gpath)
        if raw is None or raw.get("version") != SCHEMA_VERSION or not isinstance(raw.get("nodes"), dict):
            return None
        from .shape import graph_problem

        why = graph_problem(raw)
        if why and journal_mod.journal_size(self._path(sid, "journal.jsonl")):
            self._bad_graph[sid] = why  # a value of the wrong type: the journal says what it was
            return None
        return normalize_graph(raw, sid)  # (no journal to rebuild from: made to fit, field by field)

    def _write_graph(self, sid: str, graph: GraphDoc) -> None:
        """Graph file (durable), then its read cache and the hook index (derived)."""
        import marshal

        gpath = self._path(sid, "graph.json")
        write_atomic(gpath, _dumps(graph))
        try:
            blob = marshal.dumps((_cache_key(), _signature(os.stat(gpath)), graph))  # type: ignore[arg-type]  # a TypedDict is a dict
            write_atomic(self._path(sid, "graph.cache"), blob, durable=False)
        except (OSError, ValueError):  # no cache: readers parse the JSON
            pass
        self._write_index(sid, graph)

    def _write_index(self, sid: str, graph: GraphDoc) -> HookIndex:
        from .index import build_index

        index = build_index(graph, read_json(self._path(sid, "index.json")))
        write_atomic(self._path(sid, "index.json"), _dumps(index), durable=False)  # derived: no fsync
        return index

    def load_index(self, sid: str) -> HookIndex | None:
        """The hook index, or None when missing, unreadable, of another version (the
        caller then rebuilds it from the graph) or older than the journal."""
        from .index import INDEX_VERSION

        raw = read_json(self._path(sid, "index.json"))
        if not raw or raw.get("version") != INDEX_VERSION:
            return None
        if raw.get("journal_bytes") != journal_mod.journal_size(self._path(sid, "journal.jsonl")):
            return None
        index: HookIndex = raw  # type: ignore[assignment]  # written only by _write_index: its version says its shape
        return index

    def load_state(self, sid: str) -> HookState:
        """The hook's state (gate, ledger, counters), normalised; defaults when missing.

        A state file that is unreadable or wrong-shaped (:func:`rolling_graph.shape.state_problem`),
        or missing beside a journal, is rebuilt from what is valid in it and from the journal
        (the event counter never goes back, so no event id is reused); a ``damage`` note says
        what was lost."""
        from .shape import state_problem

        path = self._path(sid, "state.json")
        raw = read_json(path)
        why = state_problem(raw) if raw is not None else None
        if raw is not None and why is None:
            return normalize_state(raw)
        jpath = self._path(sid, "journal.jsonl")
        present = os.path.exists(path)
        if not present and not os.path.exists(jpath):
            return normalize_state(None)  # a new session
        if raw is None and present:  # (created by another process just now? read it again)
            raw = read_json(path)
            why = state_problem(raw) if raw is not None else None
            if raw is not None and why is None:
                return normalize_state(raw)
        from .shape import repair_state

        state = repair_state(raw, journal_mod.read_journal(jpath), why or "unreadable", note=present)
        if present:
            self._log(sid, state["gate"]["damage"][-1])
        return state

    def load(self, sid: str) -> SessionDoc:
        """A snapshot of the combined document (graph + gate, ledger, counters)."""
        return {**self.load_graph(sid), **self.load_state(sid)}

    def _load_locked(self, sid: str) -> SessionDoc:
        os.makedirs(self.dir, exist_ok=True)
        if os.path.exists(self._path(sid, "graph.json")) or os.path.exists(self._path(sid, "journal.jsonl")):
            graph = self._load_graph_locked(sid)
        else:
            graph = new_graph(sid)
        return {**graph, **self.load_state(sid)}

    # -- writing -------------------------------------------------------------------------
    def _save_locked(self, sid: str, state: HookState, graph: SessionDoc | None = None) -> None:
        """Write the state file, and the graph file too when ``graph`` is given."""
        os.makedirs(self.dir, exist_ok=True)
        payload = {"version": SCHEMA_VERSION, "gate": state["gate"], "ledger": state["ledger"], "counters": state["counters"]}
        write_atomic(self._path(sid, "state.json"), _dumps(payload), durable=False)
        if graph is not None:
            g = _graph_part(graph)
            g["updated_at"] = iso(self._now())
            g["journal_bytes"] = journal_mod.journal_size(self._path(sid, "journal.jsonl"))
            self._write_graph(sid, g)

    def hook_transaction(self, sid: str, *, index: bool = True) -> _HookView:
        """The hook's locked read-modify-write of its state, with the index at hand (unless
        ``index=False``) and the full graph parsed only if :meth:`_HookView.graph` is called."""
        return _HookView(self, sid, index)

    def transaction(self, sid: str, *, graph: bool = True) -> _Transaction:
        """``with store.transaction(sid) as doc:`` — locked read-modify-write.

        With ``graph=False`` only the state part (gate, ledger, counters) is written back:
        the hook's path. Graph changes must go through :meth:`commit_entry`.
        """
        return _Transaction(self, sid, graph)

    def journal_group(self, sid: str) -> _JournalGroup:
        """``with store.journal_group(sid):`` inside a transaction: the entries committed in
        the block are appended in one write at its end (before the transaction saves), or
        not at all if it raises. A probe commits its batch so: the batch's patch and the
        tool fold that follows it are in the journal together or not at all."""
        return _JournalGroup(self, sid)

    def clean_temp(self, sid: str | None = None) -> list[str]:
        """Remove temp files that killed writers left (of one session, or of all): see
        :func:`rolling_graph.atomic.clean_stale_temp`. Returns the names removed."""
        from .atomic import clean_stale_temp

        return clean_stale_temp(self.dir, f"{validate_session_id(sid)}." if sid else "")

    def _log(self, sid: str, note: str) -> None:
        from .shape import log_damage

        log_damage(os.path.dirname(self.dir), sid, note)

    def _report(self, sid: str, graph: GraphDoc, note: str) -> None:
        """A loss found while loading: noted on the graph (``rgraph show`` prints it) and logged."""
        from .shape import add_note

        if note not in (graph.get("damage") or []):
            add_note(graph, note)
            self._log(sid, note)

    def commit_entry(self, doc: SessionDoc, entry: JournalEntry) -> JournalEntry:
        """Journal ``entry`` and apply it to ``doc`` (held inside a transaction).

        Write-ahead: the entry is appended and fsynced first; the graph is written when
        the transaction ends. Returns the entry with its ``seq`` filled in.
        """
        sid = doc["session_id"]
        entry = {**entry, "seq": doc["journal_seq"] + 1}
        entry.setdefault("at", iso(self._now()))
        entry.setdefault("session_id", sid)
        if doc.get("project") and entry["seq"] == 1:
            entry.setdefault("project", doc["project"])
        group = self._groups.get(sid)
        if entry.get("kind") not in journal_mod.NON_MUTATING:
            # Apply to a copy first: an op that cannot apply must not reach the journal.
            trial = _trial_copy(doc, entry)
            journal_mod.apply_entry(trial, entry, self._decay_settings())
            if group is None:
                journal_mod.append(self._path(sid, "journal.jsonl"), entry)
            else:
                group.append(entry)
            doc["nodes"], doc["edges"], doc["focus"] = trial["nodes"], trial["edges"], trial["focus"]
            if "last_decay_at" in trial:  # a live graph decays exactly as its journal rebuilds it
                doc["last_decay_at"] = trial["last_decay_at"]
        elif group is None:
            journal_mod.append(self._path(sid, "journal.jsonl"), entry)
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
        from .weights import activation_ops

        settings = self._decay_settings()
        with self.transaction(sid) as doc:
            found = [n for n in node_ids if n in doc["nodes"]]
            if found:
                ops = activation_ops(doc, found, self._now(), settings, source=event_id)
                self.commit_entry(
                    doc,
                    {"kind": "activate", "rationale": rationale, "event_id": event_id, "backend": "user", "reasons": ["expand"], "ops": ops},
                )
        return found

    def read_journal(self, sid: str) -> list[JournalEntry]:
        """The session's journal entries, oldest first (unreadable lines skipped)."""
        return journal_mod.read_journal(self._path(sid, "journal.jsonl"))

    def project(self, sid: str) -> str | None:
        """The session's project, from its journal's first (init) entry: no graph parse."""
        try:
            with open(self._path(sid, "journal.jsonl"), "rb") as fh:
                first = fh.readline()
            entry = jsonio.loads(first)
        except (OSError, ValueError, UnicodeDecodeError):
            return None
        project = entry.get("project") if isinstance(entry, dict) else None
        return project if isinstance(project, str) else None

    def session_times(self) -> dict[str, float]:
        """Every session (one with a graph or a journal) → when any of its files last
        changed (graph, journal or hook state)."""
        try:
            names = os.listdir(self.dir)
        except FileNotFoundError:
            return {}
        found: set[str] = set()
        times: dict[str, float] = {}
        for name in names:
            for suffix in (".graph.json", ".journal.jsonl", ".state.json"):
                if name.endswith(suffix):
                    sid = name[: -len(suffix)]
                    if not _plain_id(sid):
                        break
                    try:
                        mtime = os.stat(os.path.join(self.dir, name)).st_mtime
                    except FileNotFoundError:
                        break
                    times[sid] = max(times.get(sid, 0.0), mtime)
                    if suffix != ".state.json":
                        found.add(sid)
                    break
        return {sid: t for sid, t in times.items() if sid in found}

    def list_sessions(self) -> list[str]:
        """Session ids with a graph or journal, most recently updated first."""
        times = self.session_times()
        return sorted(times, key=lambda s: times[s], reverse=True)
