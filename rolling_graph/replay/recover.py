"""Crash recovery and the on-disk retry queue.

* Sidecars whose journal moved past their last reconciliation (SessionEnd never fired,
  or the reconcile died) are reconciled now.
* Reconciliations that failed because the database was down are queued under
  ``$ROLLING_GRAPH_HOME/queue/`` with a copy of the document, and retried here: nothing
  waits on the database and nothing is lost.
* Sessions with a transcript but no sidecar are rebuilt by replaying the transcript
  through the hooks (:mod:`rolling_graph.replay.run`, offline probe).
"""

from __future__ import annotations

import json
import os
import stat
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rolling_graph.core.clock import iso
from rolling_graph.core.config import Settings
from rolling_graph.core.ids import InvalidSessionId
from rolling_graph.core.normalize import normalize_graph
from rolling_graph.replay.run import ReplayOptions, replay
from rolling_graph.store.atomic import write_text_atomic
from rolling_graph.store.sidecar import SidecarStore
from rolling_graph.warm import db, embeddings
from rolling_graph.warm.reconcile import load_sidecar, reconcile_doc

if TYPE_CHECKING:
    from rolling_graph.core.types import GraphDoc, SessionDoc
    from rolling_graph.warm.db import Connection

MAX_ATTEMPTS = 20
#: Transcripts older than this are history, not crashed sessions.
ORPHAN_MAX_AGE_S = 7 * 24 * 3600
#: A transcript larger than this is not replayed (real ones are a few MB; a replay reads all of it).
ORPHAN_MAX_BYTES = 128 * 1024 * 1024


@dataclass
class RecoverReport:
    queue_done: list[str] = field(default_factory=list)
    queue_left: int = 0
    reconciled: list[str] = field(default_factory=list)
    up_to_date: int = 0
    orphans: list[str] = field(default_factory=list)
    rebuilt: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    database_down: bool = False
    embedded: int = 0
    cleaned: list[str] = field(default_factory=list)  # temp files killed writers left


def queue_dir(settings: Settings) -> Path:
    return settings.home / "queue"


def enqueue(settings: Settings, session_id: str, trigger: str, doc: GraphDoc | None, error: str) -> Path:
    """Persist failed work (with the document as it was) for a later retry."""
    directory = queue_dir(settings)
    directory.mkdir(parents=True, exist_ok=True)
    entry = {"op": "reconcile", "session_id": session_id, "trigger": trigger, "enqueued_at": iso(settings.clock.now()),
             "attempts": 0, "error": error, "journal_seq": doc["journal_seq"] if doc else 0, "doc": doc}
    name = f"{time.time_ns()}-{session_id}-{trigger}.json"
    write_text_atomic(directory / name, json.dumps(entry))
    return directory / name


def pending(settings: Settings) -> list[Path]:
    directory = queue_dir(settings)
    return sorted(directory.glob("*.json")) if directory.is_dir() else []


def _rewrite(path: Path, entry: dict[str, Any]) -> None:
    write_text_atomic(path, json.dumps(entry))


def drain_queue(settings: Settings, conn: Connection, report: RecoverReport) -> None:
    for path in pending(settings):
        try:
            entry = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            continue
        sid = str(entry.get("session_id"))
        raw = entry.get("doc")
        queued = normalize_graph(raw, sid) if isinstance(raw, dict) and isinstance(raw.get("nodes"), dict) else None
        current = load_sidecar(settings, sid)
        # The newest state wins: the live sidecar when it has caught up, else the queued copy.
        doc = current if current is not None and current["journal_seq"] >= int(entry.get("journal_seq") or 0) else queued
        try:
            if doc is not None:
                reconcile_doc(conn, settings, doc, str(entry.get("trigger") or "recover"))
            path.unlink(missing_ok=True)
            report.queue_done.append(sid)
        except Exception as exc:  # noqa: BLE001 - keep the entry, report, move on
            conn.rollback()
            entry["attempts"] = int(entry.get("attempts") or 0) + 1
            entry["error"] = f"{type(exc).__name__}: {exc}"
            if entry["attempts"] >= MAX_ATTEMPTS:
                failed = path.parent / "failed"
                failed.mkdir(exist_ok=True)
                os.replace(path, failed / path.name)
            else:
                _rewrite(path, entry)
            report.errors.append(f"queue {sid}: {entry['error']}")
    report.queue_left = len(pending(settings))


def stale_sessions(settings: Settings, conn: Connection) -> list[tuple[str, SessionDoc]]:
    """Sidecars whose journal is ahead of their last reconciliation."""
    done = {sid: int(seq) for sid, seq in conn.execute("SELECT session_id, max(journal_seq) FROM sessions GROUP BY session_id")}
    conn.commit()
    out = []
    for sid in sorted(SidecarStore(settings).list_sessions()):
        doc = load_sidecar(settings, sid)
        if doc is None or not doc["nodes"] or not doc["project"]:
            continue
        if doc["journal_seq"] > done.get(sid, -1):
            out.append((sid, doc))
    return out


def orphan_transcripts(settings: Settings, projects_dir: Path | None = None, now: float | None = None) -> list[Path]:
    """Recent Claude Code transcripts that have no sidecar (sessions we never saw)."""
    base = projects_dir or Path(os.environ.get("CLAUDE_CONFIG_DIR", Path.home() / ".claude")) / "projects"
    if not base.is_dir():
        return []
    now = now or time.time()
    out = []
    for transcript in base.glob("*/*.jsonl"):
        try:
            st = transcript.stat()
        except OSError:
            continue
        # Only regular files of a transcript's size: a FIFO would block the replay's read,
        # /dev/zero or a huge sparse file would never end it.
        if not stat.S_ISREG(st.st_mode) or st.st_size > ORPHAN_MAX_BYTES:
            continue
        if now - st.st_mtime < ORPHAN_MAX_AGE_S and not _has_session(settings, transcript.stem):
            out.append(transcript)
    return sorted(out)


def _has_session(settings: Settings, sid: str) -> bool:
    try:
        return SidecarStore(settings).exists(sid)
    except InvalidSessionId:  # a transcript whose name is no session id of ours
        return True


def _rebuild(settings: Settings, transcript: Path) -> bool:
    """Rebuild a session's sidecar by replaying its transcript through the hook code (offline probe)."""
    replay([transcript], options=ReplayOptions(probe="offline", mode="sync"), home=settings.home)
    return _has_session(settings, transcript.stem)


def recover(settings: Settings, *, quick: bool = False, projects_dir: Path | None = None) -> RecoverReport:
    """Drain the queue, reconcile stale sidecars and (unless ``quick``) find orphan transcripts."""
    report = RecoverReport()
    report.cleaned = SidecarStore(settings).clean_temp()
    if not quick:
        for transcript in orphan_transcripts(settings, projects_dir):
            try:
                (report.rebuilt if _rebuild(settings, transcript) else report.orphans).append(transcript.stem)
            except Exception as exc:  # noqa: BLE001
                report.errors.append(f"replay {transcript.stem}: {type(exc).__name__}: {exc}")
    try:
        conn = db.connect(settings)
    except db.DatabaseUnavailable as exc:
        report.database_down = True
        report.errors.append(str(exc))
        report.queue_left = len(pending(settings))
        return report
    with conn:
        drain_queue(settings, conn, report)
        for sid, doc in stale_sessions(settings, conn):
            try:
                result = reconcile_doc(conn, settings, doc, "recover")
                if result.noop:
                    report.up_to_date += 1
                else:
                    report.reconciled.append(sid)
            except Exception as exc:  # noqa: BLE001
                conn.rollback()
                report.errors.append(f"{sid}: {type(exc).__name__}: {exc}")
        try:
            report.embedded = embeddings.fill_missing(conn, embeddings.get_embedder(settings))
        except Exception as exc:  # noqa: BLE001 - embeddings are derived data; retry next time
            conn.rollback()
            report.errors.append(f"embeddings: {type(exc).__name__}: {exc}")
    return report
