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
from .model import SCHEMA_VERSION, iso, new_counters, new_document, new_gate_state, utcnow

TYPE_CHECKING = False
if TYPE_CHECKING:
    from pathlib import Path
    from typing import Any

    from .config import Settings

_ID_FIRST = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789")
_ID_CHARS = _ID_FIRST | frozenset("_.-")


def _plain_id(sid: str) -> bool:
    """``[A-Za-z0-9][A-Za-z0-9_.-]{0,127}`` and no ``..`` (checked without ``re``)."""
    return 0 < len(sid) <= 128 and sid[0] in _ID_FIRST and all(c in _ID_CHARS for c in sid) and ".." not in sid

#: Keys of the combined document that live in the state file rather than the graph file.
STATE_KEYS = ("gate", "ledger", "counters")


class InvalidSessionId(ValueError):
    """The session id is not a plain id (path separators, ``..``, control chars, too long)."""


def validate_session_id(sid: object) -> str:
    if not isinstance(sid, str) or not _plain_id(sid):
        shown = repr(sid)[:40]
        raise InvalidSessionId(f"refusing session id {shown}: expected letters, digits, '-', '_' or '.' (at most 128)")
    return sid


def _new_graph(sid: str) -> dict[str, Any]:
    """An empty graph document (the state keys live in the state file)."""
    return {k: v for k, v in new_document(sid).items() if k not in STATE_KEYS}


def _dumps(doc: dict[str, Any]) -> bytes:
    # (orjson parses faster, but importing it pulls in dataclasses, platform and more:
    # ~17 ms, more than it saves in a process that lives for one event.)
    return jsonio.dumps(doc).encode("utf-8")


def _trial_copy(doc: dict[str, Any], entry: dict[str, Any]) -> dict[str, Any]:
    """A copy of ``doc``'s graph part that applying ``entry`` cannot reach through.

    Adds of whole nodes and edges (resume, pull) only insert keys into the two maps, so
    copying the maps is enough: ~0.1 ms instead of a JSON round trip of the whole graph
    (~20 ms at 2,000 nodes). Anything else gets the deep copy.
    """
    if not entry.get("decay_at") and journal_mod.whole_member_adds(entry.get("ops") or []):
        trial = {k: v for k, v in doc.items() if k not in STATE_KEYS}
        trial["nodes"] = dict(doc.get("nodes") or {})
        trial["edges"] = dict(doc.get("edges") or {})
        trial["focus"] = list(doc.get("focus") or [])
        return trial
    return jsonio.loads(_dumps({k: v for k, v in doc.items() if k not in STATE_KEYS}))


_CACHE_TAG = "rolling-graph-graph-cache-1"


def _signature(st: os.stat_result) -> tuple[int, int, int]:
    return (st.st_ino, st.st_size, st.st_mtime_ns)


def _cache_key() -> tuple[str, int, int, int]:
    import marshal
    import sys

    return (_CACHE_TAG, marshal.version, *sys.version_info[:2])


def _read_cache(path: str, graph_stat: os.stat_result) -> dict[str, Any] | None:
    """The cached graph if it was made from exactly this graph file by this Python."""
    import marshal

    try:
        with open(path, "rb") as fh:
            key, signature, graph = marshal.loads(fh.read())
    except (OSError, EOFError, ValueError, TypeError):
        return None
    if key != _cache_key() or signature != _signature(graph_stat) or not isinstance(graph, dict):
        return None
    return graph


class _Transaction:
    def __init__(self, store: SidecarStore, sid: str, graph: bool) -> None:
        self.store, self.sid, self.graph = store, sid, graph
        self.lock = store.lock(sid)
        self.doc: dict[str, Any] = {}

    def __enter__(self) -> dict[str, Any]:
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
                self.store._save_locked(self.sid, self.doc, graph=self.graph)
        finally:
            self.lock.__exit__()


class _HookView:
    """``with store.hook_transaction(sid) as view``: ``view.state`` (gate, ledger,
    counters; written back on exit), ``view.index`` and ``view.graph()``."""

    def __init__(self, store: SidecarStore, sid: str, with_index: bool = True) -> None:
        self.store, self.sid, self.with_index = store, sid, with_index
        self.lock = store.lock(sid)
        self.state: dict[str, Any] = {}
        self.index: dict[str, Any] = {}
        self._graph: dict[str, Any] | None = None

    def __enter__(self) -> _HookView:
        self.lock.__enter__()
        try:
            self.state = self.store.load_state(self.sid)
            if self.with_index:
                self.index = self._load_index()
        except BaseException:
            self.lock.__exit__()
            raise
        return self

    def _load_index(self) -> dict[str, Any]:
        index = self.store.load_index(self.sid)
        if index is not None:
            return index
        if not self.store.exists(self.sid):
            return {"nodes": {}, "fp": {}, "rev": {}, "focus": [], "journal_seq": 0}
        # Missing or stale: a graph that lags its journal is rolled forward, which writes
        # the index too; otherwise build it from the graph, once.
        self._graph = self.store._load_graph_locked(self.sid)
        return self.store.load_index(self.sid) or self.store._write_index(self.sid, self._graph)

    def graph(self) -> dict[str, Any]:
        """The combined document (graph + this view's state), parsed on first use."""
        if self._graph is None:
            self._graph = self.store._load_graph_locked(self.sid)
        doc = dict(self._graph)
        doc.update(self.state)
        return doc

    def __exit__(self, exc_type: object, exc: object, tb: object) -> None:
        try:
            if exc_type is None:
                self.store._save_locked(self.sid, self.state, graph=False)
        finally:
            self.lock.__exit__()


class SidecarStore:
    """Load, save and change session documents under ``home/sessions``."""

    def __init__(self, settings: Settings | str | os.PathLike[str]) -> None:
        home = getattr(settings, "home_dir", None) or os.fspath(settings)  # type: ignore[arg-type]
        self.settings = settings if hasattr(settings, "decay") else None
        self.dir = os.path.join(home, "sessions")

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
    def _decay_settings(self) -> Any:
        if self.settings is not None:
            return self.settings.decay
        from .config import DecaySettings

        return DecaySettings()

    def load_graph(self, sid: str) -> dict[str, Any]:
        """The graph document; rebuilt or rolled forward from the journal when needed.

        Reads need no lock: files are only ever replaced whole.
        """
        graph = self._read_graph(sid)
        jpath = self._path(sid, "journal.jsonl")
        if graph is not None and graph.get("journal_bytes", 0) >= journal_mod.journal_size(jpath):
            return graph
        if not os.path.exists(jpath) and graph is None:
            return _new_graph(sid)
        with self.lock(sid):  # rebuild under the lock so only one process repairs
            return self._load_graph_locked(sid)

    def _load_graph_locked(self, sid: str) -> dict[str, Any]:
        jpath = self._path(sid, "journal.jsonl")
        graph = self._read_graph(sid)
        size = journal_mod.journal_size(jpath)
        if graph is not None and graph.get("version") == SCHEMA_VERSION and graph.get("journal_bytes", 0) >= size:
            return graph
        if graph is None or graph.get("version") != SCHEMA_VERSION or not isinstance(graph.get("nodes"), dict):
            base = _new_graph(sid)
            entries = journal_mod.read_journal(jpath)
            if entries:  # keep the original creation facts where the journal has them
                base["created_at"] = entries[0].get("at", base["created_at"])
                base["project"] = next((e["project"] for e in entries if e.get("project")), None)
            graph = base
        else:
            entries = journal_mod.read_journal(jpath, graph.get("journal_bytes", 0))
        journal_mod.rebuild(graph, entries, self._decay_settings())
        graph["journal_bytes"] = size
        os.makedirs(self.dir, exist_ok=True)
        self._write_graph(sid, graph)
        return graph

    def _read_graph(self, sid: str) -> dict[str, Any] | None:
        """The graph file's document (through its cache when that is current), or None."""
        gpath = self._path(sid, "graph.json")
        try:
            st = os.stat(gpath)
        except FileNotFoundError:
            return None
        cached = _read_cache(self._path(sid, "graph.cache"), st)
        return cached if cached is not None else read_json(gpath)

    def _write_graph(self, sid: str, graph: dict[str, Any]) -> None:
        """Graph file (durable), then its read cache and the hook index (derived)."""
        import marshal

        gpath = self._path(sid, "graph.json")
        write_atomic(gpath, _dumps(graph))
        try:
            blob = marshal.dumps((_cache_key(), _signature(os.stat(gpath)), graph))
            write_atomic(self._path(sid, "graph.cache"), blob, durable=False)
        except (OSError, ValueError):  # no cache: readers parse the JSON
            pass
        self._write_index(sid, graph)

    def _write_index(self, sid: str, graph: dict[str, Any]) -> dict[str, Any]:
        from .index import build_index

        index = build_index(graph, read_json(self._path(sid, "index.json")))
        write_atomic(self._path(sid, "index.json"), _dumps(index), durable=False)  # derived: no fsync
        return index

    def load_index(self, sid: str) -> dict[str, Any] | None:
        """The hook index, or None when missing, unreadable or older than the journal."""
        from .index import INDEX_VERSION

        index = read_json(self._path(sid, "index.json"))
        if not index or index.get("version") != INDEX_VERSION:
            return None
        if index.get("journal_bytes") != journal_mod.journal_size(self._path(sid, "journal.jsonl")):
            return None
        return index

    def load_state(self, sid: str) -> dict[str, Any]:
        state = read_json(self._path(sid, "state.json")) or {}
        gate = state.get("gate")
        if not isinstance(gate, dict):
            gate = new_gate_state()
        counters = state.get("counters")
        if not isinstance(counters, dict):
            counters = new_counters()
        ledger = state.get("ledger")
        return {"gate": gate, "ledger": ledger if isinstance(ledger, dict) else {}, "counters": counters}

    def load(self, sid: str) -> dict[str, Any]:
        """A snapshot of the combined document (graph + gate, ledger, counters)."""
        doc = self.load_graph(sid)
        doc.update(self.load_state(sid))
        return doc

    def _load_locked(self, sid: str) -> dict[str, Any]:
        os.makedirs(self.dir, exist_ok=True)
        if os.path.exists(self._path(sid, "graph.json")) or os.path.exists(self._path(sid, "journal.jsonl")):
            doc = self._load_graph_locked(sid)
        else:
            doc = _new_graph(sid)
        doc.update(self.load_state(sid))
        return doc

    # -- writing -------------------------------------------------------------------------
    def _save_locked(self, sid: str, doc: dict[str, Any], *, graph: bool = True) -> None:
        os.makedirs(self.dir, exist_ok=True)
        state = {"version": SCHEMA_VERSION, **{k: doc.get(k) for k in STATE_KEYS}}
        write_atomic(self._path(sid, "state.json"), _dumps(state), durable=False)
        if graph:
            g = {k: v for k, v in doc.items() if k not in STATE_KEYS}
            g["updated_at"] = iso(utcnow())
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

    def commit_entry(self, doc: dict[str, Any], entry: dict[str, Any]) -> dict[str, Any]:
        """Journal ``entry`` and apply it to ``doc`` (held inside a transaction).

        Write-ahead: the entry is appended and fsynced first; the graph is written when
        the transaction ends. Returns the entry with its ``seq`` filled in.
        """
        sid = doc["session_id"]
        entry = dict(entry)
        entry["seq"] = int(doc.get("journal_seq", 0)) + 1
        entry.setdefault("at", iso(utcnow()))
        entry.setdefault("session_id", sid)
        if doc.get("project") and entry["seq"] == 1:
            entry.setdefault("project", doc["project"])
        if entry.get("kind") not in journal_mod.NON_MUTATING:
            # Apply to a copy first: an op that cannot apply must not reach the journal.
            trial = _trial_copy(doc, entry)
            journal_mod.apply_entry(trial, entry, self._decay_settings())
            journal_mod.append(self._path(sid, "journal.jsonl"), entry)
            for key in ("nodes", "edges", "focus"):
                doc[key] = trial[key]
        else:
            journal_mod.append(self._path(sid, "journal.jsonl"), entry)
        doc["journal_seq"] = entry["seq"]
        return entry

    def apply_ops(
        self,
        sid: str,
        ops: list[dict[str, Any]],
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
        return int(entry["seq"])

    def commit_ops(
        self, doc: dict[str, Any], ops: list[dict[str, Any]], *, kind: str, rationale: str,
        event_id: str | None = None, backend: str | None = None,
    ) -> dict[str, Any]:
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
                ops = activation_ops(doc, found, utcnow(), settings, source=event_id)
                self.commit_entry(
                    doc,
                    {"kind": "activate", "rationale": rationale, "event_id": event_id, "backend": "user", "reasons": ["expand"], "ops": ops},
                )
        return found

    def list_sessions(self) -> list[str]:
        """Session ids with a graph or journal, most recently updated first."""
        try:
            names = os.listdir(self.dir)
        except FileNotFoundError:
            return []
        seen: dict[str, float] = {}
        for name in names:
            for suffix in (".graph.json", ".journal.jsonl", ".state.json"):
                if name.endswith(suffix):
                    sid = name[: -len(suffix)]
                    try:
                        mtime = os.stat(os.path.join(self.dir, name)).st_mtime
                    except FileNotFoundError:
                        continue
                    if _plain_id(sid):
                        seen[sid] = max(seen.get(sid, 0.0), mtime)
        return sorted(seen, key=lambda s: seen[s], reverse=True)
