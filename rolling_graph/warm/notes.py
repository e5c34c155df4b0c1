"""What the tool-time notes draw from, written into the resume snapshot at every reconcile.

When a tool touches a file that earlier sessions of the project know, the hook adds one
short note (:mod:`rolling_graph.render.notes`); it reads this section of the project's
snapshot file, never the database. One entry per file, keyed by the file node's id:

* ``path`` (relative to the worktree), ``sessions`` (how many touched it), its durable
  counts (``edits``, ``writes``, ``reads``) and ``what`` (the code names its edits touched);
* ``with``: the files usually changed with it (co-access, :mod:`rolling_graph.warm.coaccess`),
  ``[path, weight, sessions]``, strongest first;
* ``failure``: the last error seen there (its text, whether it was resolved, the command that
  showed it);
* ``decision``: a decision in force tied to it.

Bounded: :data:`MAX_NOTES` files (those most sessions touched, then the strongest co-access
ones), :data:`PARTNERS` partners each; every text is the warm graph's (redacted at merge)
and is escaped again when a note is rendered.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from rolling_graph.core.filepaths import file_id
from rolling_graph.core.model import DECISION_KINDS
from rolling_graph.warm import coaccess

if TYPE_CHECKING:
    from rolling_graph.warm.db import Connection

MAX_NOTES = 300
PARTNERS = 4
#: A partner is named only when this many sessions (or commits) touched both files: one
#: session together is as often chance as coupling.
PARTNER_SESSIONS = 2
#: ... and when the file usually came first (its share of their sessions: the partner is
#: what comes next, not what led here) and they go together often enough.
PARTNER_LEADS = 0.4
PARTNER_WEIGHT = 0.25
#: Error nodes read to find each file's last failure.
ERRORS_READ = 300
TEXT_MAX = 160


def _count(facts: dict[str, Any], key: str) -> int:
    value = facts.get(key)
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else 0


def build_notes(conn: Connection, pid: int) -> dict[str, dict[str, Any]]:
    """The snapshot's ``notes`` section for the project (see the module's docstring)."""
    rows = conn.execute(
        "SELECT id, label, facts, session_count FROM nodes WHERE project_id = %s AND kind = 'file' "
        "ORDER BY session_count DESC, activations DESC, id LIMIT %s",
        (pid, MAX_NOTES),
    ).fetchall()
    entries: dict[str, dict[str, Any]] = {}
    for nid, label, facts, sessions in rows:
        facts = facts if isinstance(facts, dict) else {}
        path = facts.get("path") if isinstance(facts.get("path"), str) else label
        if not isinstance(path, str) or path.startswith(("/", "~")):
            continue
        entry: dict[str, Any] = {"path": path, "sessions": int(sessions)}
        for key in ("edits", "writes", "reads"):
            if _count(facts, key):
                entry[key] = _count(facts, key)
        if isinstance(facts.get("what"), str) and facts["what"]:
            entry["what"] = facts["what"][:TEXT_MAX]
        entries[nid] = entry
    # Files that only co-access knows (a cold start from git): the strongest pairs' ends.
    room = MAX_NOTES - len(entries)
    if room > 0:
        for (path,) in conn.execute(
            "SELECT f FROM (SELECT a AS f, weight FROM co_access WHERE project_id = %(p)s"
            " UNION ALL SELECT b, weight FROM co_access WHERE project_id = %(p)s) x"
            " GROUP BY f ORDER BY sum(weight) DESC, f LIMIT %(n)s",
            {"p": pid, "n": MAX_NOTES},
        ).fetchall():
            fid = file_id(path)
            if fid not in entries and room > 0 and not path.startswith(("/", "~")):
                entries[fid] = {"path": path, "sessions": 0}
                room -= 1
    # What the user forgot (rgraph forget) and no session brought back stays out of every note.
    gone = {str(r[0]) for r in conn.execute(
        "SELECT node_id FROM forgotten_nodes f WHERE project_id = %s"
        " AND NOT EXISTS (SELECT 1 FROM nodes n WHERE n.project_id = f.project_id AND n.id = f.node_id)", (pid,))}
    entries = {nid: e for nid, e in entries.items() if nid not in gone}
    by_path = {e["path"]: nid for nid, e in entries.items()}
    for path, found in coaccess.partners_of(conn, pid, list(by_path), 3 * PARTNERS, PARTNER_SESSIONS).items():
        kept = [[p["path"], p["weight"], p["sessions"]] for p in found
                if p["leads"] >= PARTNER_LEADS and p["weight"] >= PARTNER_WEIGHT and not p["path"].startswith("..")
                and file_id(p["path"]) not in gone]
        if kept:
            entries[by_path[path]]["with"] = kept[:PARTNERS]
    _failures(conn, pid, entries)
    _decisions(conn, pid, entries)
    return {nid: e for nid, e in entries.items() if len(e) > 2 or e["sessions"] > 0}


def _failures(conn: Connection, pid: int, entries: dict[str, dict[str, Any]]) -> None:
    """Each file's most recent error whose text names it (a compiler's ``path:line``, a
    failing test's file)."""
    errors = conn.execute(
        "SELECT label, facts FROM nodes WHERE project_id = %s AND kind = 'error' ORDER BY last_activated DESC, id LIMIT %s",
        (pid, ERRORS_READ),
    ).fetchall()
    if not errors:
        return
    for entry in entries.values():
        path = entry["path"]
        for label, facts in errors:
            if path in label:
                facts = facts if isinstance(facts, dict) else {}
                failure: dict[str, Any] = {"text": label[:TEXT_MAX]}
                for key in ("state", "from"):
                    if isinstance(facts.get(key), str):
                        failure[key] = facts[key][:80]
                entry["failure"] = failure
                break


def _decisions(conn: Connection, pid: int, entries: dict[str, dict[str, Any]]) -> None:
    """A decision (or correction) in force linked to each file by a warm edge."""
    if not entries:
        return
    rows = conn.execute(
        "SELECT f.id, d.label FROM edges e"
        " JOIN nodes d ON d.project_id = e.project_id AND d.id IN (e.source, e.target)"
        " JOIN nodes f ON f.project_id = e.project_id AND f.id IN (e.source, e.target) AND f.id <> d.id"
        " WHERE e.project_id = %s AND d.kind = ANY(%s) AND f.id = ANY(%s) AND e.relationship <> 'supersedes'"
        " AND NOT EXISTS (SELECT 1 FROM edges s WHERE s.project_id = e.project_id AND s.relationship = 'supersedes' AND s.target = d.id)"
        " ORDER BY d.weight DESC, d.id",
        (pid, list(DECISION_KINDS), list(entries)),
    ).fetchall()
    for fid, label in rows:
        entries[fid].setdefault("decision", label[:TEXT_MAX])
