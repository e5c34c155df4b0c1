"""`rgraph forget`: a memory the user can correct. A node leaves the session's graph with its
edges, journaled; it leaves the project's warm graph and stays out of it when an old sidecar
is reconciled again (real embedded PostgreSQL); only new work on the name brings it back."""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
import warm_support as ws
from inspect_builders import add_node_op, cli_home, commit, inspect_app, settings_for, small_session, storage_session
from typer.testing import CliRunner

from rolling_graph.cli import forget as cli_forget
from rolling_graph.core.config import Settings
from rolling_graph.core.model import make_node
from rolling_graph.render.restore import restore_block
from rolling_graph.store.forget import AmbiguousName
from rolling_graph.store.forget import forget as forget_hot
from rolling_graph.store.sidecar import SidecarStore
from rolling_graph.warm import db, snapshot
from rolling_graph.warm.forget import forget_nodes, unforget_nodes
from rolling_graph.warm.read import warm_document

PG = "use-postgresql-for-the-warm-store"


@pytest.fixture()
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("ROLLING_GRAPH_WARM", "off")  # the warm graph's tests turn it on
    return cli_home(tmp_path, monkeypatch)


def run(*args: str, answer: str | None = None) -> tuple[int, str]:
    result = CliRunner().invoke(inspect_app(), list(args), input=answer)
    if result.exception and not isinstance(result.exception, SystemExit):
        raise result.exception
    return result.exit_code, result.output


def test_a_forgotten_decision_leaves_the_graph_with_its_edges_and_the_restore_block_stops_stating_it(home: Path) -> None:
    sid = storage_session(settings_for(home))
    store = SidecarStore(settings_for(home))
    assert "Use PostgreSQL for the warm store" in restore_block(store.load(sid), settings_for(home).render, "resume")[0]

    code, out = run("forget", "Use PostgreSQL for the warm store", "--session", sid, "--yes")

    assert code == 0 and f"Forgot in session {sid}: Use PostgreSQL for the warm store ({PG})" in out
    doc = store.load(sid)
    assert PG not in doc["nodes"] and not [k for k in doc["edges"] if PG in k.split("|")]
    assert "use-sqlite-for-the-warm-store" in doc["nodes"] and "rolling-graph-plugin" in doc["nodes"]
    assert "PostgreSQL" not in restore_block(doc, settings_for(home).render, "resume")[0]


def test_a_forgotten_node_stays_in_no_ranked_view_kept_beside_the_graph(home: Path) -> None:
    from rolling_graph.render import view_cache

    sid = storage_session(settings_for(home))
    store = SidecarStore(settings_for(home))
    assert view_cache.refresh(store.files, sid)  # what PreCompact's work leaves
    view = home / "sessions" / f"{sid}.{view_cache.SUFFIX}"
    assert PG.encode() in view.read_bytes()
    assert run("forget", PG, "--session", sid, "--yes")[0] == 0
    assert not view.exists(), "a view of the graph before the forget is gone with it"
    assert view_cache.refresh(store.files, sid) and PG.encode() not in view.read_bytes()


def test_forgetting_is_journaled_survives_a_rebuild_and_why_still_tells_it(home: Path) -> None:
    sid = storage_session(settings_for(home))
    run("forget", PG, "--session", sid, "--yes")
    (home / "sessions" / f"{sid}.graph.json").unlink()  # rebuilt from the journal on the next load
    (home / "sessions" / f"{sid}.graph.cache").unlink(missing_ok=True)

    assert PG not in SidecarStore(settings_for(home)).load(sid)["nodes"]
    code, out = run("why", PG, "--session", sid)
    assert code == 0
    assert "No longer in the graph: the user forgot it" in out
    assert "forget" in out and f"remove /nodes/{PG}" in out and "The user reversed the storage decision" in out


def test_forget_takes_only_exact_names_and_removes_nothing_it_was_not_sure_of(home: Path) -> None:
    sid = storage_session(settings_for(home))
    code, out = run("forget", "postgresql", "--session", sid, "--yes")  # a fragment `expand` would take
    assert code == 1 and "no node named 'postgresql'" in out and PG in out  # suggested, not removed
    code, out = run("forget", PG, "--session", sid)  # no terminal to ask in
    assert code == 1 and "add --yes to confirm" in out
    assert PG in SidecarStore(settings_for(home)).load(sid)["nodes"]


def test_in_a_terminal_forget_asks_first_and_no_keeps_the_node(home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    sid = storage_session(settings_for(home))
    monkeypatch.setattr(cli_forget, "interactive", lambda: True)
    code, out = run("forget", PG, "--session", sid, answer="n\n")
    assert code == 0 and f"Forget Use PostgreSQL for the warm store ({PG}) from session {sid}?" in out
    assert "Nothing forgotten." in out and PG in SidecarStore(settings_for(home)).load(sid)["nodes"]
    code, out = run("forget", PG, "--session", sid, answer="y\n")
    assert code == 0 and PG not in SidecarStore(settings_for(home)).load(sid)["nodes"]


def test_undo_puts_a_forgotten_node_back_as_it_was_with_its_edges_and_list_says_what_went(home: Path) -> None:
    sid = storage_session(settings_for(home))
    store = SidecarStore(settings_for(home))
    before = store.load(sid)
    run("forget", "Use PostgreSQL for the warm store", "--session", sid, "--yes")
    code, out = run("forget", "--list", "--session", sid)
    assert code == 0 and f"Forgotten in session {sid}: Use PostgreSQL for the warm store ({PG}, " in out

    code, out = run("forget", "--undo", "use postgresql for the warm store", "--session", sid)  # a label, any case

    assert code == 0 and f"Put back in session {sid}: Use PostgreSQL for the warm store ({PG})" in out
    after = store.load(sid)
    assert after["nodes"][PG]["label"] == before["nodes"][PG]["label"] and after["nodes"][PG]["kind"] == "decision"
    assert {k for k in after["edges"] if PG in k.split("|")} == {k for k in before["edges"] if PG in k.split("|")}
    (home / "sessions" / f"{sid}.graph.json").unlink()  # the journal says the same
    (home / "sessions" / f"{sid}.graph.cache").unlink(missing_ok=True)
    assert PG in store.load(sid)["nodes"]
    assert [e["kind"] for e in store.read_journal(sid)][-2:] == ["forget", "unforget"]
    assert f"Forgotten in session {sid}: none" in run("forget", "--list", "--session", sid)[1]
    assert re.search(r"nodes the user forgot\W+1 · put back: 1", run("stats", "--session", sid)[1])  # how often memory was wrong
    code, out = run("forget", "--undo", PG, "--session", sid)  # nothing left to put back
    assert code == 1 and "nothing named" in out and "was forgotten" in out


# -- the warm graph -----------------------------------------------------------------------------
dsn = ws.database("forget")
T0 = datetime(2026, 11, 1, tzinfo=UTC)


@pytest.mark.db
def test_a_node_forgotten_in_the_warm_graph_stays_out_when_an_old_sidecar_is_reconciled_again(
    tmp_path: Path, dsn: str
) -> None:
    settings = ws.settings_for(tmp_path, dsn)
    project = str(tmp_path / "proj")
    wrong = ws.node("Use Celery for the reminders", 0.8, at=T0, kind="decision")
    right = ws.node("Use Dramatiq for the reminders", 0.8, at=T0, kind="decision")
    first = ws.hot_doc("s1", project, [wrong, right], [("use-dramatiq-for-the-reminders", "informs", "use-celery-for-the-reminders", 0.5)], at=T0)
    ws.reconcile(settings, first)
    ws.reconcile(settings, ws.hot_doc("s2", project, [dict(wrong)], at=T0 + timedelta(hours=2)))
    assert "use-celery-for-the-reminders" in warm_document(settings, project)["nodes"]

    with db.connect(settings) as conn:
        gone = forget_nodes(conn, settings, project, ["use celery for the reminders"])  # a label, any case

    assert gone == [("use-celery-for-the-reminders", "Use Celery for the reminders", False)]
    warm = warm_document(settings, project)
    assert "use-celery-for-the-reminders" not in warm["nodes"] and not warm["edges"]
    snap = snapshot.read_snapshot(settings.home, project)
    assert snap is not None and [n["id"] for n in snap["nodes"]] == ["use-dramatiq-for-the-reminders"]

    first["journal_seq"] = 2  # the old session reconciled again (its SessionEnd after a PreCompact)
    ws.reconcile(settings, first)
    assert "use-celery-for-the-reminders" not in warm_document(settings, project)["nodes"]

    twins = [ws.node("Retry", 0.5, at=T0, node_id="retry-policy"), ws.node("Retry", 0.5, at=T0, node_id="retry-button")]
    ws.reconcile(settings, ws.hot_doc("s4", project, twins, at=T0))
    with db.connect(settings) as conn:
        with pytest.raises(AmbiguousName, match="retry-policy"):  # a label two nodes share: refused, with the list
            forget_nodes(conn, settings, project, ["retry"])
        assert forget_nodes(conn, settings, project, ["retry-button"]) == [("retry-button", "Retry", False)]

    later = datetime.now(UTC) + timedelta(hours=1)  # new work on the name, after it was forgotten
    ws.reconcile(settings, ws.hot_doc("s3", project, [ws.node("Use Celery for the reminders", 0.6, at=later, kind="decision")], at=later))
    assert ws.rows(settings, "SELECT session_count FROM nodes WHERE id = 'use-celery-for-the-reminders'") == [(1,)]


@pytest.mark.db
def test_rgraph_forget_removes_the_node_from_the_session_and_the_projects_warm_graph(
    home: Path, dsn: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ROLLING_GRAPH_WARM", "on")
    monkeypatch.setenv("ROLLING_GRAPH_DSN", dsn)
    monkeypatch.setenv("ROLLING_GRAPH_EMBEDDER", "lexical")
    project = str(home.parent / "app")
    settings = ws.settings_for(home, dsn)
    sid = storage_session(settings, project=project)
    ws.reconcile(settings, SidecarStore(settings).load(sid))
    assert PG in warm_document(settings, project)["nodes"]

    code, out = run("forget", PG, "no-such-node", "--session", sid, "--yes")

    assert code == 0, out
    assert "Not found: no-such-node" in out
    assert f"Forgot in session {sid}" in out and f"Forgot in the warm graph of {project}: Use PostgreSQL for the warm store ({PG})" in out
    assert PG not in SidecarStore(settings).load(sid)["nodes"] and PG not in warm_document(settings, project)["nodes"]
    code, out = run("forget", PG, "--session", sid, "--yes")  # already gone everywhere
    assert code == 1 and "no node named" in out

    code, out = run("forget", "--undo", PG, "--session", sid)  # back in the session, and reconciled again from it
    assert code == 0 and f"Let back into the warm graph of {project}: {PG} (reconciled again from this session)" in out
    assert PG in warm_document(settings, project)["nodes"]
    assert f"Forgotten in the warm graph of {project}: none" in run("forget", "--list", "--session", sid)[1]
    run("forget", PG, "--session", sid, "--yes")

    fresh = make_node("Use Valkey for the cache", "technical", "decision", now=T0)  # never reconciled
    commit(SidecarStore(settings), sid, [add_node_op(fresh)], kind="patch", backend="offline", rationale="new", at="2026-11-25T21:15:00Z")
    code, out = run("forget", "Use Valkey for the cache", "--session", sid, "--yes")
    assert code == 0 and "Forgot in session" in out and f"The warm graph of {project} held none of them." in out


@pytest.mark.db
def test_forgetting_an_anchor_says_its_flat_memory_would_seed_it_again(home: Path, dsn: str, monkeypatch: pytest.MonkeyPatch) -> None:
    from rolling_graph.graduation import seed
    from rolling_graph.warm.reconcile import ensure_project

    monkeypatch.setenv("ROLLING_GRAPH_WARM", "on")
    monkeypatch.setenv("ROLLING_GRAPH_DSN", dsn)
    project = str(home.parent / "anchored")
    settings = ws.settings_for(home, dsn)
    small_session(settings, "other", "/elsewhere", ["Run mix format"])  # another project's session: left alone
    with db.connect(settings) as conn:
        seed.upsert_anchor(conn, ensure_project(conn, project), "run-mix-format", "Run mix format before committing", "preference", T0)
        conn.commit()

    code, out = run("forget", "run-mix-format", "--project", project, "--yes")  # no session of it: the warm graph alone

    assert code == 0, out
    assert f"Forgot in the warm graph of {project}: Run mix format before committing (run-mix-format)" in out
    assert "came from flat memory: delete its line in the memory file too" in out
    assert ws.rows(settings, "SELECT count(*) FROM nodes WHERE id = 'run-mix-format'") == [(0,)]
    assert "run-mix-format" in SidecarStore(settings).load("other")["nodes"]


def test_with_the_database_down_the_session_forgets_and_the_warm_graph_is_left_to_a_second_run(
    home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ROLLING_GRAPH_WARM", "on")
    monkeypatch.setenv("ROLLING_GRAPH_DSN", "postgresql://postgres@127.0.0.1:9/nothing?connect_timeout=2")  # nothing listens
    sid = storage_session(settings_for(home))

    code, out = run("forget", "Use PostgreSQL for the warm store", "--session", sid, "--yes")

    assert code == 1
    assert f"Forgot in session {sid}: Use PostgreSQL for the warm store ({PG})" in out
    assert "the warm graph of /work/app was not changed" in out and "run this again once it can be reached" in out
    assert PG not in SidecarStore(settings_for(home)).load(sid)["nodes"]


def test_a_node_forgotten_while_a_probe_works_costs_the_batch_nothing(home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The probe computes its patch outside the session's lock; a node forgotten meanwhile
    made the offline patch invalid as a whole, and the batch (here: the edit of another
    file) was journaled as rejected and lost. Now the batch is folded again on the graph as
    it is."""
    from conftest import prompt_payload, tool_payload

    from rolling_graph import hook
    from rolling_graph.core.config import load_settings
    from rolling_graph.core.filepaths import file_id
    from rolling_graph.probe import runner

    monkeypatch.setenv("ROLLING_GRAPH_PROBE", "offline")
    settings = load_settings()
    store = SidecarStore(settings)
    producer, consumer = "/home/dev/app/src/events/producer.py", "/home/dev/app/src/events/consumer.py"
    node = {path: file_id(path.removeprefix("/home/dev/app/")) for path in (producer, consumer)}  # keyed relative

    def edit(path: str) -> None:
        change = {"file_path": path, "old_string": "kafka_topic", "new_string": "pulsar_topic"}
        hook.handle_event("post-tool-use", tool_payload("s", "Edit", change, {"filePath": path}), settings)

    monkeypatch.setattr(hook, "_start_probe", lambda *a: None)  # the test runs the probe itself
    hook.handle_event("user-prompt-submit", prompt_payload("s", "Move the events from Kafka to Pulsar."), settings)
    edit(producer)
    runner.run_probe(settings, "s")
    assert node[producer] in store.load("s")["nodes"]

    edit(producer)
    edit(consumer)
    real_apply = runner._apply

    def forget_first(*args: object, **kwargs: object) -> object:
        forget_hot(store, "s", [node[producer]], rationale="forgotten while the probe worked")
        return real_apply(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(runner, "_apply", forget_first)
    runner.run_probe(settings, "s")

    assert node[consumer] in store.load("s")["nodes"]
    assert not store.load_state("s")["gate"]["pending"]


# -- names resolve exactly (issue 36, case 1) ---------------------------------------------------
def _twin_names_session(settings: Settings, sid: str, project: str) -> None:
    """``session_cwd`` (id ``session-cwd``, the slug of both names) beside ``session.cwd``, and
    two nodes labelled ``Retry``: the names of the README's own example block."""
    store = SidecarStore(settings)
    settings.sessions_dir.mkdir(parents=True, exist_ok=True)
    with store.transaction(sid) as doc:
        doc["project"] = project
    nodes = [make_node("session_cwd", "technical", "code", node_id="session-cwd", now=T0),
             make_node("session.cwd", "technical", "code", node_id="session-cwd-attr", now=T0),
             make_node("Retry", "technical", node_id="retry-policy", now=T0),
             make_node("Retry", "technical", node_id="retry-button", now=T0)]
    commit(store, sid, [add_node_op(dict(n)) for n in nodes], kind="patch", backend="offline", rationale="seeded", at="2026-11-25T21:15:00Z")


@pytest.mark.db
def test_forget_removes_the_node_named_as_typed_never_the_one_its_slug_names_in_session_and_warm_graph(
    home: Path, dsn: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ROLLING_GRAPH_WARM", "on")
    monkeypatch.setenv("ROLLING_GRAPH_DSN", dsn)
    project = str(home.parent / "twins")
    settings = ws.settings_for(home, dsn)
    _twin_names_session(settings, "twins", project)
    ws.reconcile(settings, SidecarStore(settings).load("twins"))
    assert {"session-cwd", "session-cwd-attr"} <= set(warm_document(settings, project)["nodes"])
    monkeypatch.setattr(cli_forget, "interactive", lambda: True)

    code, out = run("forget", "session.cwd", "--session", "twins", answer="y\n")

    assert code == 0, out
    assert "Forget session.cwd (session-cwd-attr) from session twins; session.cwd (session-cwd-attr) from the warm graph" in out
    assert "session_cwd" not in out.split("Forgot")[0]  # the question named only what goes
    hot, warm = SidecarStore(settings).load("twins")["nodes"], warm_document(settings, project)["nodes"]
    assert "session-cwd-attr" not in hot and "session-cwd-attr" not in warm
    assert "session-cwd" in hot and "session-cwd" in warm  # hot and warm agree: the other name stays


@pytest.mark.db
def test_a_name_two_nodes_answer_to_is_refused_with_the_list_in_the_session_and_in_the_warm_graph(
    home: Path, dsn: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ROLLING_GRAPH_WARM", "on")
    monkeypatch.setenv("ROLLING_GRAPH_DSN", dsn)
    project = str(home.parent / "retries")
    settings = ws.settings_for(home, dsn)
    _twin_names_session(settings, "retries", project)
    ws.reconcile(settings, SidecarStore(settings).load("retries"))

    code, out = run("forget", "Retry", "--session", "retries", "--yes")
    assert code == 1 and "'Retry' names more than one node" in out
    assert "Retry (retry-policy)" in out and "Retry (retry-button)" in out and "nothing was forgotten" in out

    forget_hot(SidecarStore(settings), "retries", ["retry-button"], rationale="test")  # one Retry left in the session
    code, out = run("forget", "Retry", "--session", "retries", "--yes")  # ... but the warm graph still has two
    assert code == 1 and "in the warm graph of" in out and "retry-button" in out
    assert "retry-policy" in SidecarStore(settings).load("retries")["nodes"]
    assert {"retry-policy", "retry-button"} <= set(warm_document(settings, project)["nodes"])


def test_why_and_expand_take_the_name_as_typed_and_refuse_a_name_two_nodes_have(home: Path) -> None:
    _twin_names_session(settings_for(home), "names", "/work/names")

    code, out = run("expand", "session.cwd", "--session", "names")
    assert code == 0 and "session.cwd" in out and "session_cwd" not in out
    code, out = run("why", "session.cwd", "--session", "names")
    assert code == 0 and "session-cwd-attr" in out
    code, out = run("expand", "session-cwd", "--session", "names")  # the id
    assert code == 0 and "session_cwd" in out
    code, out = run("expand", "Retry", "--activate", "--session", "names")
    assert code == 1 and "names more than one node" in out and "retry-policy" in out and "retry-button" in out
    assert [e["kind"] for e in SidecarStore(settings_for(home)).read_journal("names")] == ["patch"]  # nothing activated
    code, out = run("why", "session cwd", "--session", "names")  # a slug's worth of likeness is not a name
    assert code == 1 and "no domain or node named" in out


# -- undo puts the warm graph's node back as it was (issue 36, case 5) --------------------------
@pytest.mark.db
def test_undo_puts_the_warm_node_back_as_it_was_and_a_session_reconciled_meanwhile_is_due_again(tmp_path: Path, dsn: str) -> None:
    settings = ws.settings_for(tmp_path, dsn)
    project = str(tmp_path / "built")
    rid, other = "use-dramatiq-for-the-reminders", "reminders-service"
    docs = []
    for i, weight in enumerate((0.9, 0.7, 0.8), start=1):
        at = T0 + timedelta(hours=i)
        dramatiq = ws.node("Use Dramatiq for the reminders", weight, at=at, kind="decision")
        dramatiq["activations"] = 2
        service = ws.node("Reminders service", 0.5, at=at, node_id=other)
        docs.append(ws.hot_doc(f"s{i}", project, [dramatiq, service], [(rid, "decides", other, 0.7)], at=at))
        ws.reconcile(settings, docs[-1])
    pid = ws.pid_of(settings, project)  # (the module's database holds other tests' projects)
    node_sql = "SELECT weight, session_count, activations, first_seen, last_activated, label, kind FROM nodes WHERE project_id = %s AND id = %s"
    contributions = ("SELECT session_id, weight, activations, journal_seq FROM node_sessions WHERE project_id = %s AND node_id = %s "
                     "ORDER BY session_id")
    edges_sql = "SELECT source, relationship, target, strength, session_count FROM edges WHERE project_id = %s ORDER BY source"
    before, before_sessions, before_edges = (ws.rows(settings, node_sql, pid, rid), ws.rows(settings, contributions, pid, rid),
                                             ws.rows(settings, edges_sql, pid))
    assert before[0][1:3] == (3, 6) and len(before_sessions) == 3 and len(before_edges) == 1

    with db.connect(settings) as conn:
        assert [g[0] for g in forget_nodes(conn, settings, project, [rid])] == [rid]
    docs[1]["journal_seq"] = 2  # s2 reconciled again while the node is forgotten: its contribution of it is dropped
    assert not ws.reconcile(settings, docs[1]).noop
    with db.connect(settings) as conn:
        assert unforget_nodes(conn, project, [rid]) == [rid]

    assert ws.rows(settings, node_sql, pid, rid) == before  # weight, sessions and activations as they were
    assert ws.rows(settings, contributions, pid, rid) == before_sessions
    assert ws.rows(settings, edges_sql, pid) == before_edges
    again = ws.reconcile(settings, docs[1])  # not "already up to date": s2's contribution was dropped meanwhile
    assert not again.noop
    assert ws.rows(settings, "SELECT session_count FROM nodes WHERE project_id = %s AND id = %s", pid, rid) == [(3,)]



@pytest.mark.db
def test_an_undo_interrupted_between_the_session_and_the_warm_graph_finishes_on_a_rerun(
    home: Path, dsn: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    from rolling_graph.store.forget import unforget as unforget_hot

    monkeypatch.setenv("ROLLING_GRAPH_WARM", "on")
    monkeypatch.setenv("ROLLING_GRAPH_DSN", dsn)
    project = str(home.parent / "halfway")
    settings = ws.settings_for(home, dsn)
    sid = storage_session(settings, sid="halfway", project=project)
    ws.reconcile(settings, SidecarStore(settings).load(sid))
    assert run("forget", PG, "--session", sid, "--yes")[0] == 0
    unforget_hot(SidecarStore(settings), sid, [PG], rationale="put back by user (rgraph forget --undo)")  # ... then killed

    code, out = run("forget", "--undo", PG, "--session", sid)

    assert code == 0, out
    assert f"Let back into the warm graph of {project}: {PG}" in out
    assert PG in warm_document(settings, project)["nodes"] and PG in SidecarStore(settings).load(sid)["nodes"]


# -- forget --purge erases the text everywhere (issue 36, case 10) ------------------------------
ADDRESS = "Home address: 12 Elm Street, Springfield"


@pytest.mark.db
def test_purge_erases_the_text_from_journal_graph_state_and_warm_graph_and_cannot_be_undone(
    home: Path, dsn: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ROLLING_GRAPH_WARM", "on")
    monkeypatch.setenv("ROLLING_GRAPH_DSN", dsn)
    project = str(home.parent / "private")
    settings = ws.settings_for(home, dsn)
    sid = storage_session(settings, sid="private", project=project)
    store = SidecarStore(settings)
    address = make_node(ADDRESS, "personal", node_id="home-address", now=T0)
    commit(store, sid, [add_node_op(dict(address))], kind="patch", backend="offline", rationale=f"The user said: {ADDRESS}",
           at="2026-11-25T21:15:00Z")
    with store.transaction(sid, graph=False) as doc:  # an event still queued for the probe holds it too
        doc["gate"]["pending"].append({"id": "e99", "event": "UserPromptSubmit", "at": "2026-11-25T21:16:00Z",
                                        "text": f"remember {ADDRESS}", "reasons": ["entity"]})
    ws.reconcile(settings, store.load(sid))
    assert run("forget", ADDRESS, "--session", sid, "--yes")[0] == 0  # a plain forget first: kept, undoable
    assert ADDRESS in (home / "sessions" / f"{sid}.journal.jsonl").read_text()

    code, out = run("forget", "--purge", "home-address", "--session", sid, "--yes")

    assert code == 0, out
    assert f"Erased from session {sid}: {ADDRESS} (home-address)" in out and "journal entries (rewritten)" in out
    assert f"Erased from the warm graph of {project}" in out and "cannot be undone" in out
    for path in home.rglob("*"):  # journal, graph, state, caches, index, snapshot: nowhere on disk
        if path.is_file():
            assert b"12 Elm Street" not in path.read_bytes(), path
    assert ws.rows(settings, "SELECT count(*) FROM nodes WHERE label LIKE '%%Elm Street%%'") == [(0,)]
    assert ws.rows(settings, "SELECT label, saved FROM forgotten_nodes WHERE node_id = 'home-address'") == [(None, None)]
    listed = run("forget", "--list", "--session", sid)[1]
    assert "home-address" in listed and "Elm Street" not in listed
    code, out = run("why", "home-address", "--session", sid)
    assert code == 0 and "Elm Street" not in out
    code, out = run("forget", "--undo", "home-address", "--session", sid)
    assert code == 1 and "Elm Street" not in out
    (home / "sessions" / f"{sid}.graph.json").unlink()  # the rewritten journal rebuilds the same graph
    (home / "sessions" / f"{sid}.graph.cache").unlink(missing_ok=True)
    rebuilt = store.load(sid)
    assert "home-address" not in rebuilt["nodes"] and PG in rebuilt["nodes"]
    assert "Elm Street" not in str(store.load_state(sid)["gate"])
