"""Co-access edges in the warm graph (migration 013): which files sessions touch together.

Every reconcile records what the session touched, in first-touch order
(``co_access_sessions``; a re-reconcile replaces the session's row), then derives the
project's ``co_access`` pairs from every recorded session (:func:`rebuild`, the arithmetic in
:mod:`rolling_graph.core.coaccess`): each session counts with the warm graph's recency decay
(``0.5 ** (age / half_life)``), so pairs the recent sessions stopped touching together
fade like other edges. For a project the warm graph has never seen, commits from
``git log`` stand in for sessions (:mod:`rolling_graph.warm.git_seed`): source ``git``.
The resume snapshot carries each file's strongest partners (:func:`partners_of`), which is
what the tool-time notes name as "usually changed with".
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Any

from rolling_graph.core import coaccess

if TYPE_CHECKING:
    from rolling_graph.warm.db import Connection


@dataclass(frozen=True)
class CoAccessPolicy:
    #: Half-life (hours) of a session's say in a pair's weight (the merge's recency decay is
    #: 72 h for weights a session restates; co-access is rarer evidence, so it fades slower).
    half_life_hours: float = 24.0 * 14
    #: Sessions (newest first) a rebuild reads.
    max_sessions: int = 400
    #: Each file keeps its strongest partners only.
    per_file: int = 8
    #: Files of one session that count (:data:`rolling_graph.core.coaccess.MAX_FILES`).
    max_files: int = coaccess.MAX_FILES


DEFAULT_POLICY = CoAccessPolicy()


def session_files(nodes: Iterable[dict[str, Any]]) -> list[str]:
    """The project files a session touched itself, first touched first: its file nodes (as
    the reconcile cleaned them) not pulled and left untouched, by ``first`` (the session's
    first event naming the file, a session-only fact: a file pulled from the warm graph has
    it too, where its ``opening`` and ``first_seen`` are an earlier session's or none); a
    file without it after those, by its opening, then first sight; paths outside the worktree
    are left out."""
    rows = []
    for n in nodes:
        if n.get("kind") != "file" or n.get("untouched"):
            continue
        facts = n.get("facts") or {}
        path = facts.get("path") if isinstance(facts.get("path"), str) else n.get("label")
        if not isinstance(path, str) or not path or path.startswith(("/", "~")):
            continue
        first, opening = n.get("first"), n.get("opening")
        known = isinstance(first, int) and not isinstance(first, bool)
        rows.append((0 if known else 1, first if known else 0, opening if isinstance(opening, int) else 1 << 30, n["first_seen"], path))
    rows.sort()
    return coaccess.first_touches(r[4] for r in rows)


def has_sessions(conn: Connection, pid: int) -> bool:
    """Whether anything (a session or a seeded commit) was recorded for the project."""
    return conn.execute("SELECT 1 FROM co_access_sessions WHERE project_id = %s LIMIT 1", (pid,)).fetchone() is not None


def record(conn: Connection, pid: int, session_id: str, files: Sequence[str], at: datetime, source: str = "session") -> bool:
    """Record (or replace) what one session or commit touched (a single file too: it counts
    among the sessions that touched either of a pair). Returns whether a row was written."""
    if not files:
        conn.execute("DELETE FROM co_access_sessions WHERE project_id = %s AND session_id = %s", (pid, session_id))
        return False
    conn.execute(
        "INSERT INTO co_access_sessions (project_id, session_id, source, files, at) VALUES (%s, %s, %s, %s, %s) "
        "ON CONFLICT (project_id, session_id) DO UPDATE SET files = EXCLUDED.files, at = EXCLUDED.at, source = EXCLUDED.source",
        (pid, session_id, source, list(files), at),
    )
    return True


def rebuild(conn: Connection, pid: int, now: datetime, policy: CoAccessPolicy = DEFAULT_POLICY) -> int:
    """Derive the project's pairs from its recorded sessions (in the caller's transaction);
    returns how many pairs it keeps."""
    rows = conn.execute(
        "SELECT files, at, source FROM co_access_sessions WHERE project_id = %s ORDER BY at DESC, session_id LIMIT %s",
        (pid, policy.max_sessions),
    ).fetchall()
    sessions: list[tuple[list[str], float, bool]] = []
    last_seen: dict[tuple[str, str], datetime] = {}
    for files, at, source in rows:
        order = coaccess.first_touches(files, policy.max_files)
        say = coaccess.recency_say((now - at).total_seconds() / 3600.0, policy.half_life_hours)
        sessions.append((order, say, source == "session"))  # a commit lists its files by name: no order
        for i, x in enumerate(order):
            for y in order[i + 1 :]:
                key = coaccess.pair_key(x, y)
                if key not in last_seen or at > last_seen[key]:
                    last_seen[key] = at
    pairs = coaccess.kept_pairs(coaccess.co_access(sessions, policy.max_files), policy.per_file)
    conn.execute("DELETE FROM co_access WHERE project_id = %s", (pid,))
    if pairs:
        columns = "project_id, a, b, weight, a_first, sessions, either, last_seen"
        with conn.cursor() as cur, cur.copy(f"COPY co_access ({columns}) FROM STDIN") as copy:
            for (a, b), p in pairs.items():
                copy.write_row((pid, a, b, p.weight, p.a_first, p.both, max(p.both, p.either), last_seen[(a, b)]))
    return len(pairs)


def partners_of(conn: Connection, pid: int, paths: Sequence[str], limit: int = 4, min_sessions: int = 1) -> dict[str, list[dict[str, Any]]]:
    """Each of ``paths``' strongest partners: ``path → [{"path", "weight", "sessions",
    "leads"}]`` (``leads``: the share of their sessions in which ``path`` came first)."""
    if not paths:
        return {}
    rows = conn.execute(
        "SELECT a, b, weight, a_first, sessions FROM co_access WHERE project_id = %(p)s AND sessions >= %(m)s"
        " AND (a = ANY(%(x)s) OR b = ANY(%(x)s))",
        {"p": pid, "m": min_sessions, "x": list(paths)},
    ).fetchall()
    wanted = set(paths)
    found: dict[str, list[dict[str, Any]]] = {}
    for a, b, weight, a_first, sessions in rows:
        for mine, other, leads in ((a, b, float(a_first)), (b, a, 1.0 - float(a_first))):
            if mine in wanted:
                found.setdefault(mine, []).append(
                    {"path": other, "weight": round(float(weight), 3), "sessions": int(sessions), "leads": round(leads, 2)})
    return {p: sorted(rows_, key=lambda r: (-r["weight"], -r["sessions"], r["path"]))[:limit] for p, rows_ in found.items()}
