"""A session's files on disk: where they are, how they are read and how they are written.

Files, in ``$ROLLING_GRAPH_HOME/sessions/``:

* ``<sid>.graph.json``    — the graph document (nodes, edges, focus, ``journal_seq``).
* ``<sid>.state.json``    — the hook's volatile state: gate, ledger, counters. Kept apart
  so that the hook, which runs before every prompt and after every tool call, rewrites a
  few kilobytes rather than a graph of thousands of nodes.
* ``<sid>.index.json``    — the hook index (:mod:`rolling_graph.store.index`): derived from the
  graph whenever it is written, so most hook events need not parse the graph at all.
* ``<sid>.tool-index.json`` — the part of the index a tool result reads (node ids, the
  decisions tied to files): written with it, a quarter of it to parse on a big graph.
* ``<sid>.graph.cache``   — a read cache of the graph file (:mod:`rolling_graph.store.graph_cache`).
* ``<sid>.branches.cache`` — every node and its adjacency as records of their own, for a
  prompt that names a topic (:mod:`rolling_graph.store.branches`): derived like the graph cache,
  written by the processes that are not a hook (:data:`WRITE_BRANCHES`).
* ``<sid>.view.cache``    — the restore block's ranked view for the ``SessionStart`` after a
  compaction (:mod:`rolling_graph.render.view_cache`), left by what ``PreCompact`` starts, and
  ``<sid>.view-coding.cache`` for a resumed session's, left by what ``SessionEnd`` starts;
  removed whenever the graph is written (:data:`MADE_FOR_ONE_GRAPH`).
* ``<sid>.journal.jsonl`` — the write-ahead journal (:mod:`rolling_graph.store.journal`).
* ``<sid>.lock``          — the inter-process lock (``fcntl.flock``) guarding all three.

Every write is atomic: a temp file in the same directory, fsync, ``os.replace``. A file that
is missing, damaged or behind the journal is repaired from it (:mod:`rolling_graph.store.repair`).
:class:`rolling_graph.store.sidecar.SidecarStore` holds a :class:`SessionFiles` and adds the
locked transactions and the journaled changes; the methods named ``…_locked`` are its, called
with the session's lock held.
"""

from __future__ import annotations

import os

from rolling_graph.core import jsonio
from rolling_graph.core.clock import iso, utcnow
from rolling_graph.core.ids import is_session_id, validate_session_id
from rolling_graph.core.model import SCHEMA_VERSION, new_graph
from rolling_graph.core.normalize import normalize_graph, normalize_state
from rolling_graph.store import journal as journal_mod
from rolling_graph.store.atomic import FileLock, read_json, write_atomic

TYPE_CHECKING = False
if TYPE_CHECKING:
    from datetime import datetime
    from pathlib import Path

    from rolling_graph.core.config import DecaySettings, Settings
    from rolling_graph.core.types import GraphDoc, HookIndex, HookState, JournalEntry, SessionDoc, ToolIndex
    from rolling_graph.store.branches import Branches

#: Keys of the combined document that live in the state file rather than the graph file.
STATE_KEYS = ("gate", "ledger", "counters")
#: Whether writing the graph also writes its branch cache (:mod:`rolling_graph.store.branches`).
#: The hook process turns it off (``rolling_graph.hook.main``): building it costs a
#: 2,000-node graph ~4 ms, which the detached writers pay instead.
WRITE_BRANCHES = True
#: Files made from one version of the graph file by a layer above the store, which no other
#: version may use: each write of the graph removes them, so that none outlives the graph it
#: names (a node ``rgraph forget`` removed stays in no file beside the session's graph).
MADE_FOR_ONE_GRAPH = ("view.cache", "view-coding.cache")
#: Whether the graph's read cache is written with equal strings shared (a third smaller, reads
#: ~1.5 ms faster, :func:`rolling_graph.store.graph_cache.shared_values`). The hook process
#: turns it off too: sharing walks every value, ~6 ms for a new session's 400 nodes and ~20 ms
#: for 2,000, at SessionStart, while the user waits; the next detached writer (the probe)
#: writes it shared.
SHARE_CACHE_VALUES = True


def graph_part(doc: SessionDoc) -> GraphDoc:
    """The graph file's part of a combined document (a shallow copy without the state)."""
    graph: GraphDoc = {**doc}  # type: ignore[typeddict-unknown-key]  # the state keys go just below
    for key in STATE_KEYS:
        graph.pop(key, None)  # type: ignore[misc]
    return graph


def dumps(doc: object) -> bytes:
    # (orjson parses faster, but importing it pulls in dataclasses, platform and more:
    # ~17 ms, more than it saves in a process that lives for one event.)
    return jsonio.dumps(doc).encode("utf-8", "backslashreplace")  # a lone surrogate stays its JSON escape


def no_index() -> HookIndex:
    """The index of a session without a graph: nothing to find in it (never written)."""
    return {"version": 0, "journal_seq": 0, "journal_bytes": 0, "ids": [], "labels": [], "kinds": [], "weights": [], "sources": [],
            "focus": [], "fp": {}, "rev": {}, "file_intents": {}}


class SessionFiles:
    """Read and write the files of the sessions under ``home/sessions``."""

    def __init__(self, settings: Settings | str | os.PathLike[str]) -> None:
        """``settings``, or just the home directory (default decay settings, system clock)."""
        self.settings: Settings | None
        if isinstance(settings, (str, os.PathLike)):
            self.settings, home = None, os.fspath(settings)
        else:
            self.settings, home = settings, settings.home_dir
        self.dir = os.path.join(home, "sessions")
        self._bad_graph: dict[str, str] = {}  # why a graph file was refused, for its rebuild's note

    # -- paths -----------------------------------------------------------------------
    def path(self, sid: str, suffix: str) -> str:
        """The file ``<sid>.<suffix>`` (``graph.json``, ``journal.jsonl``, …); ``sid`` is checked."""
        validate_session_id(sid)
        return os.path.join(self.dir, f"{sid}.{suffix}")

    def graph_path(self, sid: str) -> Path:
        from pathlib import Path

        return Path(self.path(sid, "graph.json"))

    def state_path(self, sid: str) -> Path:
        from pathlib import Path

        return Path(self.path(sid, "state.json"))

    def journal_path(self, sid: str) -> Path:
        from pathlib import Path

        return Path(self.path(sid, "journal.jsonl"))

    def exists(self, sid: str) -> bool:
        return os.path.exists(self.path(sid, "graph.json")) or os.path.exists(self.path(sid, "journal.jsonl"))

    def lock(self, sid: str, blocking: bool = True) -> FileLock:
        os.makedirs(self.dir, exist_ok=True)
        return FileLock(self.path(sid, "lock"), blocking)

    def probe_lock(self, sid: str) -> FileLock:
        """Held by the one probe process a session may have; taken without blocking."""
        os.makedirs(self.dir, exist_ok=True)
        return FileLock(self.path(sid, "probe.lock"), blocking=False)

    def probe_running(self, sid: str) -> bool:
        with self.probe_lock(sid) as lk:
            return not lk.acquired

    # -- reading -----------------------------------------------------------------------
    def decay_settings(self) -> DecaySettings:
        if self.settings is not None:
            return self.settings.decay
        from rolling_graph.core.config import DecaySettings

        return DecaySettings()

    def now(self) -> datetime:
        """The settings' clock (a replay pins it), or the system clock for a bare store."""
        return self.settings.clock.now() if self.settings is not None else utcnow()

    def load_graph(self, sid: str) -> GraphDoc:
        """The graph document; rebuilt or rolled forward from the journal when needed.

        Reads need no lock: files are only ever replaced whole.
        """
        graph = self._read_graph(sid)
        jpath = self.path(sid, "journal.jsonl")
        if graph is not None and graph.get("journal_bytes", 0) >= journal_mod.journal_size(jpath):
            return graph
        if not os.path.exists(jpath) and graph is None:
            return new_graph(sid)
        with self.lock(sid):  # rebuild under the lock so only one process repairs
            return self.load_graph_locked(sid)

    def load_graph_locked(self, sid: str, *, edges: bool = True) -> GraphDoc:
        """:meth:`load_graph` with the session's lock held: a graph file that is missing, damaged
        or behind the journal is rebuilt or rolled forward and written here. ``edges=False``:
        the graph's edges may be left unread (:func:`rolling_graph.store.graph_cache.read`)
        when the graph file is current and its read cache too; a document so read is never
        written."""
        jpath = self.path(sid, "journal.jsonl")
        graph = self._read_graph(sid, edges=edges)
        size = journal_mod.journal_size(jpath)
        if graph is not None and graph.get("journal_bytes", 0) >= size:
            return graph
        if graph is not None and not edges:
            graph = self._read_graph(sid)  # rolled forward below: with its edges
        from rolling_graph.store.repair import rebuild_graph

        refused = self._bad_graph.pop(sid, None)
        graph = rebuild_graph(sid, graph, jpath, self.decay_settings(), lambda: self._read_graph(sid), refused,
                              os.path.dirname(self.dir))
        graph["journal_bytes"] = size
        os.makedirs(self.dir, exist_ok=True)
        self._write_graph(sid, graph)
        return graph

    def _read_graph(self, sid: str, *, edges: bool = True) -> GraphDoc | None:
        """The graph file's document, normalised (through its cache when that is current:
        the cache holds the document as normalised), or None when the file is missing,
        unreadable or of another schema version (then the journal rebuilds it). ``edges=False``:
        from the cache, its nodes alone (:func:`rolling_graph.store.graph_cache.read`)."""
        gpath = self.path(sid, "graph.json")
        try:
            st = os.stat(gpath)
        except FileNotFoundError:
            return None
        from rolling_graph.store import graph_cache

        cached = graph_cache.read(self.path(sid, "graph.cache"), st, edges=edges)
        if cached is not None:
            return cached
        raw = read_json(gpath)
        if raw is None or raw.get("version") != SCHEMA_VERSION or not isinstance(raw.get("nodes"), dict):
            return None
        from rolling_graph.store.shape import graph_problem

        why = graph_problem(raw)
        if why and journal_mod.journal_size(self.path(sid, "journal.jsonl")):
            self._bad_graph[sid] = why  # a value of the wrong type: the journal says what it was
            return None
        return normalize_graph(raw, sid)  # (no journal to rebuild from: made to fit, field by field)

    def _write_graph(self, sid: str, graph: GraphDoc) -> None:
        """Graph file (durable), then its read cache and the hook index (derived)."""
        from rolling_graph.store import graph_cache

        if isinstance(graph["edges"], graph_cache.EdgesNotRead):  # never write a graph without its edges
            raise RuntimeError(f"session {sid}: a graph read without its edges cannot be written")
        gpath = self.path(sid, "graph.json")
        write_atomic(gpath, dumps(graph))
        for suffix in MADE_FOR_ONE_GRAPH:
            try:  # noqa: SIM105 - no contextlib on the hook path
                os.unlink(self.path(sid, suffix))
            except FileNotFoundError:
                pass
        try:
            signature = graph_cache.signature(os.stat(gpath))
            write_atomic(self.path(sid, "graph.cache"), graph_cache.blob(graph, signature, share=SHARE_CACHE_VALUES), durable=False)
            if WRITE_BRANCHES:
                from rolling_graph.store import branches

                write_atomic(self.path(sid, "branches.cache"), branches.build(graph, signature), durable=False)
        except (OSError, ValueError):  # no cache: readers parse the JSON
            pass
        self.write_index(sid, graph)

    def graph_signature(self, sid: str) -> tuple[int, int, int] | None:
        """The signature (:func:`rolling_graph.store.graph_cache.signature`) of the graph file, or
        None without one. With the session's lock held since the graph was loaded (every writer
        takes it), it names the file that graph came from."""
        from rolling_graph.store import graph_cache

        try:
            return graph_cache.signature(os.stat(self.path(sid, "graph.json")))
        except OSError:
            return None

    def load_branches(self, sid: str) -> Branches | None:
        """The branch cache of the graph file as it is on disk, or None when it is missing
        or stale (call with the session's lock held)."""
        try:
            st = os.stat(self.path(sid, "graph.json"))
        except OSError:
            return None
        from rolling_graph.store import branches, graph_cache

        return branches.read(self.path(sid, "branches.cache"), graph_cache.signature(st), journal_mod.journal_size(self.path(sid, "journal.jsonl")))

    def write_index(self, sid: str, graph: GraphDoc) -> HookIndex:
        """The hook index and the tool index, from ``graph`` (derived: no fsync)."""
        from rolling_graph.store.index import build_index

        index = build_index(graph, read_json(self.path(sid, "index.json")))
        self.write_tool_index(sid, index)
        write_atomic(self.path(sid, "index.json"), dumps(index), durable=False)
        return index

    def write_tool_index(self, sid: str, index: HookIndex) -> None:
        from rolling_graph.store.index import build_tool_index

        write_atomic(self.path(sid, "tool-index.json"), dumps(build_tool_index(index)), durable=False)

    def load_tool_index(self, sid: str) -> ToolIndex | None:
        """The tool index, or None when missing, unreadable, of another version or older
        than the journal (the caller then reads the full index)."""
        from rolling_graph.store.index import TOOL_INDEX_VERSION

        raw = read_json(self.path(sid, "tool-index.json"))
        if not raw or raw.get("version") != TOOL_INDEX_VERSION or not isinstance(raw.get("ids"), list):
            return None
        if raw.get("journal_bytes") != journal_mod.journal_size(self.path(sid, "journal.jsonl")):
            return None
        tool: ToolIndex = raw  # type: ignore[assignment]  # written only by _write_index: its version says its shape
        return tool

    def load_index(self, sid: str) -> HookIndex | None:
        """The hook index, or None when missing, unreadable, of another version (the
        caller then rebuilds it from the graph) or older than the journal."""
        from rolling_graph.store.index import COLUMNS, INDEX_VERSION

        raw = read_json(self.path(sid, "index.json"))
        if not raw or raw.get("version") != INDEX_VERSION:
            return None
        if len({len(raw[c]) if isinstance(raw.get(c), list) else -1 for c in COLUMNS}) != 1:
            return None  # columns of different lengths: not an index this code wrote
        if raw.get("journal_bytes") != journal_mod.journal_size(self.path(sid, "journal.jsonl")):
            return None
        index: HookIndex = raw  # type: ignore[assignment]  # written only by _write_index: its version says its shape
        return index

    def load_state(self, sid: str) -> HookState:
        """The hook's state (gate, ledger, counters), normalised; defaults when missing.

        A state file that is unreadable or wrong-shaped (:func:`rolling_graph.store.shape.state_problem`),
        or missing beside a journal, is rebuilt from what is valid in it and from the journal
        (:func:`rolling_graph.store.repair.recover_state`)."""
        from rolling_graph.store.shape import state_problem

        path = self.path(sid, "state.json")
        raw = read_json(path)
        why = state_problem(raw) if raw is not None else None
        if raw is not None and why is None:
            return normalize_state(raw)
        jpath = self.path(sid, "journal.jsonl")
        present = os.path.exists(path)
        if not present and not os.path.exists(jpath):
            return normalize_state(None)  # a new session
        from rolling_graph.store.repair import recover_state

        return recover_state(sid, path, jpath, raw, why, present, os.path.dirname(self.dir))

    def load(self, sid: str) -> SessionDoc:
        """A snapshot of the combined document (graph + gate, ledger, counters)."""
        return {**self.load_graph(sid), **self.load_state(sid)}

    def load_locked(self, sid: str, parsed: GraphDoc | None = None, *, edges: bool = True) -> SessionDoc:
        """The combined document, with the session's lock held (a new session's when there is
        none). ``parsed``: the graph as the caller holds it, taken as it is while the journal
        is the size it reflects (nothing has changed the graph since), else read again.
        ``edges=False``: see :meth:`load_graph_locked`."""
        os.makedirs(self.dir, exist_ok=True)
        jpath = self.path(sid, "journal.jsonl")
        if parsed is not None and os.path.exists(jpath) and parsed.get("journal_bytes") == journal_mod.journal_size(jpath):
            graph = graph_part(parsed)  # type: ignore[arg-type]  # a graph, or a whole document: its graph part
        elif os.path.exists(self.path(sid, "graph.json")) or os.path.exists(jpath):
            graph = self.load_graph_locked(sid, edges=edges)
        else:
            graph = new_graph(sid)
        return {**graph, **self.load_state(sid)}

    def read_journal(self, sid: str) -> list[JournalEntry]:
        """The session's journal entries, oldest first (unreadable lines skipped)."""
        return journal_mod.read_journal(self.path(sid, "journal.jsonl"))

    def project(self, sid: str) -> str | None:
        """The session's project, from its journal's first (init) entry: no graph parse."""
        try:
            with open(self.path(sid, "journal.jsonl"), "rb") as fh:
                first = fh.readline()
            entry = jsonio.loads(first)
        except (OSError, ValueError, UnicodeDecodeError):
            return None
        project = entry.get("project") if isinstance(entry, dict) else None
        return project if isinstance(project, str) else None

    # -- writing -------------------------------------------------------------------------
    def save_locked(self, sid: str, state: HookState, graph: SessionDoc | None = None) -> None:
        """Write the state file, and the graph file too when ``graph`` is given."""
        os.makedirs(self.dir, exist_ok=True)
        payload = {"version": SCHEMA_VERSION, "gate": state["gate"], "ledger": state["ledger"], "counters": state["counters"]}
        write_atomic(self.path(sid, "state.json"), dumps(payload), durable=False)
        if graph is not None:
            g = graph_part(graph)
            g["updated_at"] = iso(self.now())
            g["journal_bytes"] = journal_mod.journal_size(self.path(sid, "journal.jsonl"))
            self._write_graph(sid, g)

    def clean_temp(self, sid: str | None = None) -> list[str]:
        """Remove temp files that killed writers left (of one session, or of all): see
        :func:`rolling_graph.store.atomic.clean_stale_temp`. Returns the names removed."""
        from rolling_graph.store.atomic import clean_stale_temp

        return clean_stale_temp(self.dir, f"{validate_session_id(sid)}." if sid else "")

    # -- listing -------------------------------------------------------------------------
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
                    if not is_session_id(sid):
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
