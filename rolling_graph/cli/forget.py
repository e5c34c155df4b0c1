"""``rgraph forget``: remove what the memory should not hold, from the session's hot graph
and the project's warm graph, journaled; ``--undo`` puts it back, ``--list`` says what went.

A wrong decision the extractor read into Claude's text, a file that does not matter: once
forgotten, a node leaves the session's graph (with its edges; the journal records who and
when, so ``rgraph why`` still tells it) and the project's warm graph, so no later block
shows it. Reconciling a sidecar that still holds it does not bring it back; only new work
on the same name does (:mod:`rolling_graph.warm.forget`).
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich.console import Console
from rich.markup import escape

from rolling_graph.cli.console import console, fail
from rolling_graph.cli.render_views import suggestions
from rolling_graph.cli.sessions import InspectError, load_document, resolve_session, settings_or_error, store
from rolling_graph.core.config import Settings
from rolling_graph.store.forget import AmbiguousName, forget, forgotten_records, name_matches, named_ids, unforget
from rolling_graph.store.project import project_root

if TYPE_CHECKING:
    from rolling_graph.core.types import GraphDoc

SESSION_HELP = "Session id (default: the current directory's project's latest session)."
RATIONALE = "forgotten by user (rgraph forget)"
UNCHANGED = "the warm graph of {root} was not changed"


class _Target:
    """Where ``rgraph forget`` works: the session meant (None: the warm graph alone), its
    graph, the project's root, and whether the warm graph is in play."""

    def __init__(self, settings: Settings, session: str | None, project: str | None, hot_only: bool) -> None:
        self.warm = settings.warm and not hot_only
        try:
            res = resolve_session(settings, session, cwd=project)
        except InspectError:
            if session or not self.warm:
                raise
            res = None  # no session here: the warm graph alone
        if res is not None and res.how == "latest":  # another project's session: not what was meant
            if not self.warm:
                raise InspectError(f"no session of {project_root(project or str(Path.cwd()))}; name one with --session")
            res = None
        self.sid = res.session_id if res is not None else None
        self.doc = load_document(settings, res.session_id) if res is not None else None
        self.root = project_root(project) if project else (self.doc.get("project") if self.doc else None) or project_root(str(Path.cwd()))
        self.places = [f"session {self.sid}"] if self.sid else []
        self.places += [f"the warm graph of {self.root}"] if self.warm else []


def _resolve(names: list[str], labels: dict[str, str], where: str, also: dict[str, str] | None = None) -> dict[str, str]:
    """Name -> the one id it names among ``labels`` (names that name none are left out);
    ``also`` (name -> id found elsewhere) counts as a match when ``labels`` has that id. A name
    that matches two nodes is refused with the list: nothing is forgotten on a guess."""
    found: dict[str, str] = {}
    for name in names:
        ids = name_matches(name, labels)
        other = (also or {}).get(name)
        if other is not None and other in labels and other not in ids:
            ids.append(other)
        if len(ids) > 1:
            raise InspectError(f"in {where}, {AmbiguousName(name, {nid: labels[nid] for nid in ids})}; nothing was forgotten")
        if ids:
            found[name] = ids[0]
    return found


def do_forget(
    settings: Settings, session: str | None, names: list[str], *, project: str | None = None,
    hot_only: bool = False, yes: bool = False, out: Console | None = None,
) -> None:
    out = out or console()
    t = _Target(settings, session, project, hot_only)
    hot_labels = {nid: str(n.get("label") or "") for nid, n in t.doc["nodes"].items()} if t.doc is not None else {}
    hot_by_name = _resolve(names, hot_labels, f"session {t.sid}")
    found = {nid: hot_labels[nid] for nid in hot_by_name.values()}  # hot node id -> label
    warm_labels: dict[str, str] | None = None  # None: the warm graph could not be read
    warm_found: dict[str, str] = {}
    unreachable = ""
    if t.warm:
        warm_labels, unreachable = _warm_labels(settings, t.root, [*names, *found])
        if warm_labels is not None:
            warm_by_name = _resolve(names, warm_labels, f"the warm graph of {t.root}", also=hot_by_name)
            warm_found = {nid: warm_labels[nid] for nid in warm_by_name.values()}
    if not found and not warm_found and (warm_labels is not None or not t.warm):
        raise _not_found(names, t.places, t.doc)
    if not yes:
        if not interactive():
            raise InspectError("rgraph forget removes nodes from memory: add --yes to confirm (--undo puts them back)")
        what = ", ".join(f"{label} ({nid})" for nid, label in found.items())
        if warm_found and t.sid:
            what = "; ".join(filter(None, [what and f"{what} from session {t.sid}",
                                           "{} from the warm graph of {}".format(", ".join(f"{label} ({nid})" for nid, label in warm_found.items()), t.root)]))
        elif warm_found:
            what = ", ".join(f"{label} ({nid})" for nid, label in warm_found.items()) + f" from the warm graph of {t.root}"
        else:
            what = f"{what or ', '.join(names)} from {' and '.join(t.places)}"
        if not typer.confirm(f"Forget {what}?", default=False):
            out.print("Nothing forgotten.")
            return
    hot_gone = forget(store(settings), t.sid, list(found), rationale=RATIONALE) if found and t.sid else []
    if hot_gone:
        out.print(f"Forgot in session {t.sid}: {escape(', '.join(f'{found[n]} ({n})' for n in hot_gone))} "
                  "(journaled: `rgraph why ID` tells it, `rgraph forget --undo ID` puts it back).")
    if unreachable:
        raise InspectError(f"{UNCHANGED.format(root=t.root)}: {unreachable}; run this again once it can be reached")
    warm_gone = _forget_warm(settings, t.root, list(warm_found), out) if t.warm else []
    if not hot_gone and not warm_gone:
        raise _not_found(names, t.places, t.doc)
    if t.warm and not warm_gone:
        out.print(f"[dim]The warm graph of {escape(t.root)} held none of them.[/]")
    left = [n for n in names if n not in hot_by_name and not name_matches(n, dict(warm_gone))]
    if left:
        out.print(f"[yellow]Not found: {escape(', '.join(left))}[/]")


def _warm_labels(settings: Settings, root: str, names: list[str]) -> tuple[dict[str, str] | None, str]:
    """The warm graph's nodes ``names`` could name (id -> label), or None and why it cannot be
    reached (the session's part goes ahead, and the warm part says to run it again)."""
    from rolling_graph.warm import db
    from rolling_graph.warm.forget import node_labels

    try:
        with db.connect(settings) as conn:
            return node_labels(conn, root, names), ""
    except db.DatabaseUnavailable as exc:
        return None, str(exc)


def do_purge(
    settings: Settings, session: str | None, names: list[str], *, project: str | None = None,
    hot_only: bool = False, yes: bool = False, out: Console | None = None,
) -> None:
    """``rgraph forget --purge``: erase the named nodes' text everywhere it was stored, for
    good: the session's journal (rewritten under its lock), graph and queued events, and the
    warm graph's rows; the forgotten lists keep only the id and time. Nodes already forgotten
    can be purged too. Says what it erased; cannot be undone."""
    out = out or console()
    t = _Target(settings, session, project, hot_only)
    hot_labels: dict[str, str] = {}
    if t.sid is not None and t.doc is not None:
        nodes, _ = forgotten_records(store(settings).read_journal(t.sid))
        hot_labels = {nid: str(node.get("label") or "") for nid, (node, _at) in nodes.items()}
        hot_labels.update({nid: str(n.get("label") or "") for nid, n in t.doc["nodes"].items()})
    hot_by_name = _resolve(names, hot_labels, f"session {t.sid}")
    warm_found: dict[str, str] = {}
    if t.warm:
        from rolling_graph.warm.forget import forgotten_list, node_labels

        with _warm(settings, UNCHANGED.format(root=t.root)) as conn:
            warm_labels = {nid: label for nid, label, _ in forgotten_list(conn, t.root)}
            warm_labels.update(node_labels(conn, t.root, [*names, *hot_by_name.values()]))
        warm_by_name = _resolve(names, warm_labels, f"the warm graph of {t.root}", also=hot_by_name)
        warm_found = {nid: warm_labels[nid] for nid in warm_by_name.values()}
    found = {nid: hot_labels[nid] for nid in hot_by_name.values()}
    if not found and not warm_found:
        raise _not_found(names, t.places, t.doc)
    if not yes:
        if not interactive():
            raise InspectError("rgraph forget --purge erases for good: add --yes to confirm (it cannot be undone)")
        what = ", ".join(f"{label or '[purged]'} ({nid})" for nid, label in {**warm_found, **found}.items())
        if not typer.confirm(f"Erase {what} from {' and '.join(t.places)} for good? This cannot be undone.", default=False):
            out.print("Nothing erased.")
            return
    if found and t.sid:
        from rolling_graph.store.forget import purge

        report = purge(store(settings), t.sid, list(found), rationale="purged by user (rgraph forget --purge)")
        out.print(f"Erased from session {t.sid}: {escape(', '.join(f'{found[n]} ({n})' for n in report.ids))}; "
                  f"its text is gone from the graph, the queued events and {report.entries} journal entries (rewritten).")
    if warm_found:
        from rolling_graph.warm.forget import purge_ids

        with _warm(settings, UNCHANGED.format(root=t.root)) as conn:
            gone, cleared = purge_ids(conn, settings, t.root, list(warm_found))
        if gone or cleared:
            out.print(f"Erased from the warm graph of {escape(t.root)}: "
                      f"{escape(', '.join(f'{warm_found[n] or n} ({n})' for n in dict.fromkeys([*(g[0] for g in gone), *cleared])))}"
                      " (its rows, contributions, edges and vectors); the forgotten list keeps only the id and time.")
    others = _sessions_holding(settings, t.sid, [label for label in {**found, **warm_found}.values() if label])
    if others:
        out.print(f"[yellow]The text is also in sessions {escape(', '.join(others))}: "
                  "`rgraph forget --purge NAME --session ID` erases it there.[/]")
    out.print("This cannot be undone.")


def _sessions_holding(settings: Settings, sid: str | None, texts: list[str], limit: int = 5) -> list[str]:
    """Other sessions whose journal still holds one of ``texts`` (at most ``limit``)."""
    import json

    needles = [json.dumps(t, ensure_ascii=False)[1:-1].encode("utf-8") for t in texts]
    needles += [json.dumps(t)[1:-1].encode("ascii") for t in texts]
    found: list[str] = []
    for path in sorted(settings.sessions_dir.glob("*.journal.jsonl")):
        other = path.name.removesuffix(".journal.jsonl")
        if other == sid:
            continue
        try:
            data = path.read_bytes()
        except OSError:
            continue
        if any(n in data for n in needles):
            found.append(other)
            if len(found) >= limit:
                break
    return found


def _forgotten_in_session(settings: Settings, t: _Target) -> dict[str, tuple[str, str]]:
    """The session's nodes forgotten and not back: id -> (label, when), the last forget's."""
    if t.sid is None or t.doc is None:
        return {}
    nodes, _ = forgotten_records(store(settings).read_journal(t.sid))
    return {nid: (str(node.get("label") or nid), at) for nid, (node, at) in nodes.items() if nid not in t.doc["nodes"]}


def do_undo(
    settings: Settings, session: str | None, names: list[str], *, project: str | None = None,
    hot_only: bool = False, out: Console | None = None,
) -> None:
    out = out or console()
    t = _Target(settings, session, project, hot_only)
    in_session = _forgotten_in_session(settings, t)
    back = unforget(store(settings), t.sid, named_ids(names, {n: v[0] for n, v in in_session.items()}), rationale="put back by user "
                    "(rgraph forget --undo)") if t.sid else []
    if back:
        out.print(f"Put back in session {t.sid}: {escape(', '.join(f'{in_session[n][0]} ({n})' for n in back))} (journaled).")
    warm_back = _undo_warm(settings, t, names, back, out) if t.warm else []
    if not back and not warm_back:
        raise InspectError(f"nothing named {names[0]!r} was forgotten in {' nor in '.join(t.places)}; `rgraph forget --list` lists what was")


def do_list(settings: Settings, session: str | None, *, project: str | None = None, hot_only: bool = False,
            out: Console | None = None) -> None:
    out = out or console()
    t = _Target(settings, session, project, hot_only)
    if t.sid is not None:
        gone = _forgotten_in_session(settings, t)
        out.print(f"Forgotten in session {t.sid}: " + (", ".join(f"{escape(label)} ({nid}, {at})" for nid, (label, at) in gone.items()) or "none"))
    if t.warm:
        from rolling_graph.warm.forget import forgotten_list

        with _warm(settings, f"cannot read the warm graph of {t.root}", retry=False) as conn:
            rows = forgotten_list(conn, t.root)
        listed = ", ".join(f"{escape(label or '[purged]')} ({nid}, {at:%Y-%m-%d %H:%M})" for nid, label, at in rows) or "none"
        out.print(f"Forgotten in the warm graph of {escape(t.root)}: {listed}")


def _not_found(names: list[str], places: list[str], doc: GraphDoc | None) -> InspectError:
    near = suggestions(doc, names[0]) if doc is not None else []
    hint = f"; did you mean {', '.join(near)}?" if near else "; `rgraph show` lists the nodes"
    return InspectError(f"no node named {names[0]!r} in {' nor in '.join(places)}{hint}")


@contextmanager
def _warm(settings: Settings, failed: str, retry: bool = True) -> Iterator[Any]:
    """A connection to the warm graph; unreachable, one line saying ``failed``, why, and
    (``retry``) that running the command again will do."""
    from rolling_graph.warm import db

    try:
        with db.connect(settings) as conn:
            yield conn
    except db.DatabaseUnavailable as exc:
        raise InspectError(f"{failed}: {exc}" + ("; run this again once it can be reached" if retry else "")) from exc


def interactive() -> bool:
    """Whether a person can answer the confirmation (standard input is a terminal)."""
    return sys.stdin.isatty()


def _forget_warm(settings: Settings, root: str, ids: list[str], out: Console) -> list[tuple[str, str]]:
    from rolling_graph.warm.forget import forget_ids

    with _warm(settings, UNCHANGED.format(root=root)) as conn:
        gone = forget_ids(conn, settings, root, ids)
    if gone:
        out.print(f"Forgot in the warm graph of {escape(root)}: {escape(', '.join(f'{label} ({nid})' for nid, label, _ in gone))}; "
                  "its resume snapshot is rewritten.")
    for _, label, anchor in gone:
        if anchor:
            out.print(f"[yellow]{escape(label)} came from flat memory: delete its line in the memory file too, "
                      "or `rgraph seed` brings it back.[/]")
    return [(nid, label) for nid, label, _ in gone]


def _undo_warm(settings: Settings, t: _Target, names: list[str], back: list[str], out: Console) -> list[str]:
    """Let the forgotten nodes back into the warm graph; with nodes put back in the session,
    reconcile it now, so the warm graph holds them again at once."""
    from rolling_graph.warm.forget import forgotten_list, unforget_nodes
    from rolling_graph.warm.reconcile import reconcile_doc

    with _warm(settings, UNCHANGED.format(root=t.root)) as conn:
        ids = [*back, *named_ids(names, {nid: label for nid, label, _ in forgotten_list(conn, t.root)})]
        warm_back = unforget_nodes(conn, t.root, list(dict.fromkeys(ids)))
        if back and t.sid:
            reconcile_doc(conn, settings, store(settings).load(t.sid), "manual")
    if warm_back:
        how = "reconciled again from this session" if back else "the next reconcile of a session that holds them brings them"
        out.print(f"Let back into the warm graph of {escape(t.root)}: {escape(', '.join(warm_back))} ({how}).")
    return warm_back


def register(app: typer.Typer) -> None:
    """Add ``forget`` to the ``rgraph`` app."""

    @app.command("forget")
    def forget_cmd(
        nodes: Annotated[list[str] | None, typer.Argument(metavar="NODE", help="Node ids or labels (as `rgraph show` prints them).")] = None,
        undo: Annotated[bool, typer.Option("--undo", help="Put forgotten nodes back, as they were (see --list).")] = False,
        list_: Annotated[bool, typer.Option("--list", help="List what was forgotten, in the session and the warm graph.")] = False,
        session: Annotated[str | None, typer.Option("--session", "-s", help=SESSION_HELP)] = None,
        project: Annotated[Path | None, typer.Option(
            "--project", "-p", help="The project directory meant (default: the session's, else the current directory's).")] = None,
        hot_only: Annotated[bool, typer.Option(
            "--hot-only", help="Only the session's hot graph: leave the project's warm graph as it is.")] = False,
        yes: Annotated[bool, typer.Option("--yes", "-y", help="Do not ask for confirmation.")] = False,
        purge: Annotated[bool, typer.Option(
            "--purge", help="Erase the text everywhere it was stored (journal rewritten, warm rows); cannot be undone.")] = False,
    ) -> None:
        """Remove nodes from the session's graph and the project's warm graph; --undo puts them back.

        A node goes with its edges, and the session's journal records it (`rgraph why ID`). In the warm graph it is deleted and remembered as forgotten: reconciling a session that still holds it does not bring it back; only new work on the same name does.
        """
        where = str(project) if project else None
        try:
            if list_:
                if nodes or undo:
                    raise InspectError("--list takes no NODE and no --undo")
                do_list(settings_or_error(), session, project=where, hot_only=hot_only)
            elif not nodes:
                raise InspectError("name the nodes to forget (ids or labels from `rgraph show`), or give --list")
            elif purge:
                if undo:
                    raise InspectError("--purge cannot be undone: it takes no --undo")
                do_purge(settings_or_error(), session, nodes, project=where, hot_only=hot_only, yes=yes)
            elif undo:
                do_undo(settings_or_error(), session, nodes, project=where, hot_only=hot_only)
            else:
                do_forget(settings_or_error(), session, nodes, project=where, hot_only=hot_only, yes=yes)
        except InspectError as exc:
            raise fail(str(exc)) from None
