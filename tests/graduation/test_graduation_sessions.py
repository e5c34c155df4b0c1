"""Graduation on real-shaped sessions: four sessions of one project (each in its own
worktree, mapped to one project with ``--project``) replayed honestly with the offline probe
into a fresh warm graph, one after another, then the nightly job. What a person reviewing
the drafts would see: decisions and conventions as plain sentences with their reasons,
never a file, a command or a bare name, no graph jargon, and citations that state them."""

from __future__ import annotations

import json
import sys
from datetime import UTC, datetime
from typing import Any

import graduation_support as gs_
import pytest
import warm_support as ws

from rolling_graph.core.config import Settings
from rolling_graph.core.model import VERBS
from rolling_graph.evaluation import chain
from rolling_graph.graduation import candidates as graduation
from rolling_graph.graduation import drafts, nightly, provenance
from rolling_graph.replay.run import ReplayOptions
from rolling_graph.store.project import project_root
from rolling_graph.warm import db

sys.path.insert(0, str(gs_.ROOT / "fixtures"))
import scenario_graduation as scenario  # noqa: E402

pytestmark = pytest.mark.db

dsn = ws.database("gsess")
_lexical = ws.lexical_embedder
NIGHT = datetime(2026, 11, 10, 3, 30, tzinfo=UTC)
#: What a memory in a CLAUDE.md must never carry over from the graph.
FORBIDDEN = ("Related:", "—", "→", "weight", "node", "Decision:", "Correction:", *(f"({v})" for v in VERBS),
             *(f"({v.replace('_', ' ')})" for v in VERBS))


@pytest.fixture(scope="module")
def graduated(tmp_path_factory: pytest.TempPathFactory, dsn: str) -> dict[str, Any]:
    """The four sessions replayed and reconciled in order, then one nightly graduation run."""
    base = tmp_path_factory.mktemp("ledger")
    paths = scenario.write_all(base / "transcripts")
    project = base / "ledger"
    project.mkdir()
    settings = ws.settings_for(base / "home", dsn)
    steps = chain.replay_chain(chain.in_time_order(paths), settings, ReplayOptions(project=str(project)), embedder=gs_.LEXICAL)
    root = project_root(str(project))
    with db.connect(settings, autocommit=True) as conn:
        pids = graduation.project_ids(conn, root)
        summary = nightly.run_job(conn, settings, pids, drafter=drafts.TemplateDrafter(), embedder=gs_.LEXICAL, now=NIGHT)
    rows = gs_.rows(settings, "SELECT d.node_id, n.kind, n.label, d.kind, d.content, d.sessions, d.events FROM graduation_drafts d "
                              "JOIN nodes n ON n.project_id = d.project_id AND n.id = d.node_id "
                              "WHERE d.project_id = ANY(%s) AND d.status = 'pending' ORDER BY d.id", pids)
    nodes = gs_.rows(settings, "SELECT n.id, n.kind, n.label, n.session_count, n.weight, "
                               "(SELECT count(*) FROM edges e WHERE e.project_id = n.project_id AND n.id IN (e.source, e.target)) "
                               "FROM nodes n WHERE n.project_id = ANY(%s)", pids)
    keys = ("node_id", "node_kind", "label", "kind", "content", "sessions", "events")
    return {"settings": settings, "steps": steps, "summary": summary, "root": root,
            "drafts": [dict(zip(keys, r, strict=True)) for r in rows],
            "nodes": {r[0]: {"kind": r[1], "label": r[2], "sessions": r[3], "weight": r[4], "edges": r[5]} for r in nodes}}


def test_sessions_replay_into_one_project(graduated: dict[str, Any]) -> None:
    steps = graduated["steps"]
    assert [s.recorded.session_id for s in steps] == [sid for sid, _, _ in scenario.SESSIONS]
    assert {s.doc()["project"] for s in steps} == {graduated["root"]}  # type: ignore[index]
    assert all(not r.error for s in steps for r in s.replay.records)


def test_two_thirds_of_drafts_are_decisions_conventions_or_facts_as_plain_sentences(graduated: dict[str, Any]) -> None:
    found = graduated["drafts"]
    assert len(found) >= 2, graduated["summary"].line()
    plain = [d for d in found if d["node_kind"] in (*graduation.STATEMENT_KINDS, *graduation.FACT_KINDS)
             and d["content"][:1].isupper() and d["content"].endswith(".") and len(d["content"].split()) >= 5]
    assert len(plain) * 3 >= len(found) * 2, [d["content"] for d in found]
    contents = {d["label"]: d["content"] for d in found}
    assert contents[scenario.DECISION] == (
        "Use PostgreSQL for the job queue because Oban needs advisory locks (decided in 3 sessions).")
    assert contents[scenario.CONVENTION] == (
        "Always run `mix format` before committing since CI rejects unformatted code (decided in 3 sessions).")


def test_files_commands_and_names_that_recur_never_become_drafts(graduated: dict[str, Any]) -> None:
    nodes, found = graduated["nodes"], graduated["drafts"]
    gs = graduated["settings"].graduation
    recurring = {nid for nid, n in nodes.items()
                 if n["kind"] in ("file", "command", "symbol", "entity", "request", "error", "task")
                 and n["sessions"] >= gs.min_sessions and n["edges"] >= gs.min_edges}
    # the fixture makes them recur: without the kind rule they would be proposed
    assert {nodes[n]["kind"] for n in recurring} >= {"file", "entity"}, recurring
    assert "lib/ledger/export.ex" in {nodes[n]["label"] for n in recurring}
    assert not {d["node_id"] for d in found} & set(nodes.keys() - {n for n, v in nodes.items()
                                                                  if v["kind"] in (*graduation.STATEMENT_KINDS, *graduation.FACT_KINDS)})
    labels = {d["label"] for d in found}
    assert scenario.SUPERSEDED not in labels  # reversed by the correction
    assert scenario.CORRECTION not in labels  # said in one session only


def test_no_draft_carries_graph_jargon(graduated: dict[str, Any]) -> None:
    ids = [nid for nid in graduated["nodes"] if "-" in nid and len(nid) > 5]
    for d in graduated["drafts"]:
        assert not [f for f in FORBIDDEN if f in d["content"]], d["content"]
        assert not [nid for nid in ids if nid in d["content"]], d["content"]
        assert "#" not in d["content"] and d["node_id"] not in d["content"]


def test_every_cited_event_contains_the_drafts_subject(graduated: dict[str, Any]) -> None:
    settings: Settings = graduated["settings"]
    journals = provenance.Journals(settings)
    for d in graduated["drafts"]:
        assert d["sessions"] and d["events"]
        for ref in d["events"]:
            entry = journals.entry(ref)
            assert entry is not None, ref
            assert entry.get("kind") not in ("resume", "pull", "seed")
            text = json.dumps(entry, ensure_ascii=False).lower()
            assert d["label"].lower() in text, (ref, d["label"], entry.get("rationale"))
        assert {ref.rpartition("#")[0] for ref in d["events"]} <= set(d["sessions"])
