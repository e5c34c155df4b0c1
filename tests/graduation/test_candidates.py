"""Graduation against a real embedded PostgreSQL: candidates, grounded drafts, duplicates,
the nightly job and its time rules (archive review, the 30-day quality signal)."""

from __future__ import annotations

import copy
import json
from datetime import UTC, datetime, timedelta
from pathlib import Path

import graduation_support as gs_
import pytest
import warm_support as ws
from freezegun import freeze_time

from rolling_graph.core.config import Settings
from rolling_graph.core.ids import edge_key
from rolling_graph.core.model import make_edge
from rolling_graph.graduation import candidates as graduation
from rolling_graph.graduation import draft_backends, drafts, nightly, provenance, review, seed
from rolling_graph.store.sidecar import SidecarStore
from rolling_graph.warm import db

pytestmark = pytest.mark.db

T0 = datetime(2026, 11, 1, 9, tzinfo=UTC)


dsn = ws.database("grad")


_lexical = ws.lexical_embedder
settings = ws.warm_settings


@pytest.fixture
def project(tmp_path: Path) -> str:
    return gs_.project_dir(tmp_path)[1]


def candidate_ids(settings: Settings, project: str) -> list[str]:
    with db.connect(settings) as conn:
        return [c.node_id for c in graduation.candidates(conn, graduation.project_ids(conn, project))]


def three_sessions(settings: Settings, project: str) -> None:
    for i in range(3):
        gs_.storage_session(settings, f"s{i + 1}", project, T0 + timedelta(days=i))


def run_nightly(settings: Settings, project: str, drafter: drafts.Drafter | None = None, now: datetime = T0 + timedelta(days=3)) -> nightly.JobSummary:
    with db.connect(settings, autocommit=True) as conn:
        pids = graduation.project_ids(conn, project)
        return nightly.run_job(conn, settings, pids, drafter=drafter or drafts.TemplateDrafter(), embedder=gs_.LEXICAL, now=now)


def test_concept_seen_in_three_sessions_becomes_candidate_not_before(settings: Settings, project: str) -> None:
    gs_.storage_session(settings, "s1", project, T0)
    gs_.storage_session(settings, "s2", project, T0 + timedelta(days=1))
    assert candidate_ids(settings, project) == []
    gs_.storage_session(settings, "s3", project, T0 + timedelta(days=2))
    assert candidate_ids(settings, project) == ["use-postgresql"]


def test_thresholds_are_configurable_by_preset(settings: Settings, project: str) -> None:
    gs_.storage_session(settings, "s1", project, T0)
    gs_.storage_session(settings, "s2", project, T0 + timedelta(days=1))
    with db.connect(settings) as conn:
        pids = graduation.project_ids(conn, project)
        eager = [c.node_id for c in graduation.candidates(conn, pids, graduation.PRESETS["eager"])]
        strict = [c.node_id for c in graduation.candidates(conn, pids, graduation.PRESETS["strict"])]
    assert "use-postgresql" in eager and strict == []


def test_draft_cites_sessions_and_journal_events(settings: Settings, project: str) -> None:
    three_sessions(settings, project)
    summary = run_nightly(settings, project)
    assert (summary.candidates, summary.drafted) == (1, 1)
    [(content, sessions, events, status)] = gs_.rows(
        settings, "SELECT content, sessions, events, status FROM graduation_drafts d JOIN projects p ON p.id = d.project_id WHERE p.root = %s", project)
    assert status == "pending"
    assert content == "Use PostgreSQL for the warm store instead of SQLite (decided in 3 sessions)."
    assert sessions == ["s1", "s2", "s3"]
    assert set(events) == {"s1#2", "s2#2", "s3#2"}


def test_hedged_model_draft_is_rejected_and_replaced_by_grounded_template(settings: Settings, project: str) -> None:
    three_sessions(settings, project)

    class Hedging:
        name, model = "anthropic", "stub"

        def draft(self, ctx: drafts.NodeContext) -> drafts.Draft:
            return drafts.Draft("We might probably use PostgreSQL, I think.", "decision", ctx.sessions, (ctx.events[0].ref,), "anthropic")

    run_nightly(settings, project, Hedging())
    found = gs_.rows(settings, "SELECT status, backend, decided_by, problems, content FROM graduation_drafts d "
                               "JOIN projects p ON p.id = d.project_id WHERE p.root = %s ORDER BY d.id", project)
    assert [(r[0], r[1], r[2]) for r in found] == [("rejected", "anthropic", "grounding"), ("pending", "template", None)]
    assert any("hedged" in p and "'might'" in p and "'i think'" in p for p in found[0][3])
    assert drafts.hedges_in(found[1][4]) == []


def test_grounding_refuses_invented_citations_and_missing_ones() -> None:
    ctx = drafts.NodeContext(1, "/p", "use-x", "Use X", "decision", "technical", None, 0.8, 3, "h",
                             sessions=("s1", "s2"), events=(drafts.EventRef("s1", 2, "patch", "why"),))
    good = drafts.Draft("Use X for storage in every service.", "decision", ("s1",), ("s1#2",), "anthropic")
    assert drafts.grounding_problems(good, ctx) == []
    invented = drafts.Draft("Use X for storage in every service.", "decision", ("s9",), ("s9#4",), "anthropic")
    assert drafts.grounding_problems(invented, ctx) == ["cites sessions that do not state it: s9",
                                                        "cites events that do not state it: s9#4"]
    bare = drafts.Draft("Perhaps use X.", "decision", (), (), "anthropic")
    assert drafts.grounding_problems(bare, ctx) == ["hedged: 'perhaps'", "does not stand on its own (fewer than 4 words)",
                                                    "cites no session", "cites no journal event"]


@pytest.mark.parametrize("text", [
    "Decision: Use X. Related: Warm graph store (informs).",
    "Use X for storage; it supersedes the earlier choice of Y.",
    "Use X for storage (weight 0.82, seen in s1#2).",
    "Follow use-x-for-storage in every service.",
    "Use X for storage —decides→ storage layer.",
])
def test_drafts_carrying_graph_jargon_are_refused(text: str) -> None:
    ctx = drafts.NodeContext(1, "/p", "use-x-for-storage", "Use X", "decision", "technical", None, 0.8, 3, "h",
                             sessions=("s1",), events=(drafts.EventRef("s1", 2, "patch", "why"),))
    problems = drafts.grounding_problems(drafts.Draft(text, "decision", ("s1",), ("s1#2",), "anthropic"), ctx)
    assert any(p.startswith("graph jargon") for p in problems), problems


def test_recorded_anthropic_response_produces_the_draft(settings: Settings, project: str) -> None:
    three_sessions(settings, project)
    client, server = gs_.anthropic_client(gs_.envelope("anthropic_draft.json"))
    run_nightly(settings, project, draft_backends.AnthropicDrafter(settings, client=client))
    [(status, backend, model, content, events)] = gs_.rows(
        settings, "SELECT status, backend, model, content, events FROM graduation_drafts d JOIN projects p ON p.id = d.project_id "
                  "WHERE p.root = %s", project)
    assert (status, backend, model) == ("pending", "anthropic", "claude-haiku-4-5-20251001")
    assert content.startswith("The warm store uses PostgreSQL with pgvector")
    assert events == ["s3#2", "s1#2"]
    sent = json.loads(server.bodies[0])
    assert sent["model"] == settings.probe.anthropic_model
    assert sent["tool_choice"] == {"type": "tool", "name": "record_flat_memory"}
    assert "Use PostgreSQL for the warm store" in sent["messages"][0]["content"]


@pytest.mark.parametrize(("memory", "problem"), [
    ("The warm store could be PostgreSQL, maybe.", "hedged"),
    ("Decision: Use PostgreSQL for the warm store. Related: Warm graph store (informs).", "graph jargon"),
])
def test_anthropic_answer_breaking_the_rules_falls_back_to_template(settings: Settings, project: str, memory: str,
                                                                    problem: str) -> None:
    three_sessions(settings, project)
    reply = copy.deepcopy(gs_.envelope("anthropic_draft.json"))
    reply["body"]["content"][0]["input"]["memory"] = memory
    client, _ = gs_.anthropic_client(reply)
    run_nightly(settings, project, draft_backends.AnthropicDrafter(settings, client=client))
    found = gs_.rows(settings, "SELECT status, backend, problems FROM graduation_drafts d JOIN projects p ON p.id = d.project_id "
                               "WHERE p.root = %s ORDER BY d.id", project)
    assert [(r[0], r[1]) for r in found] == [("rejected", "anthropic"), ("pending", "template")]
    assert any(p.startswith(problem) for p in found[0][2])


def test_model_prompt_carries_no_weights_ids_or_edge_verbs(settings: Settings, project: str) -> None:
    three_sessions(settings, project)
    client, server = gs_.anthropic_client(gs_.envelope("anthropic_draft.json"))
    run_nightly(settings, project, draft_backends.AnthropicDrafter(settings, client=client))
    sent = json.loads(server.bodies[0])
    data = json.loads(sent["messages"][0]["content"].split("\n\n", 1)[1])
    assert data["statement"]["text"] == "Use PostgreSQL for the warm store" and data["replaces"] == ["Use SQLite for the warm store"]
    assert "weight" not in json.dumps(data) and "use-postgresql" not in json.dumps(data) and "supersedes" not in json.dumps(data)
    assert "Related:" in sent["system"] and "no hedge" not in sent["system"].lower()  # the rules name what is forbidden


def stated_with_a_neighbour(settings: Settings, project: str) -> None:
    """Three sessions that each state the storage decision in one entry, then, in a later
    entry, a second decision that only points at the first (an edge, not its words)."""
    for i in range(3):
        at = T0 + timedelta(days=i)
        gs_.storage_session(settings, f"s{i + 1}", project, at)
        nodes = [ws.node("Keep HNSW indexes on the embeddings table", 0.8, at=at, kind="decision")]
        edges = [("keep-hnsw-indexes-on-the-embeddings-table", "extends", "use-postgresql", 0.7)]
        gs_.reconcile(settings, gs_.write_session(settings, f"s{i + 1}", project, nodes, edges, at=at,
                                                  rationale="the user chose the index type"))


def test_cited_events_are_the_ones_that_state_the_subject(settings: Settings, project: str) -> None:
    stated_with_a_neighbour(settings, project)
    run_nightly(settings, project)
    drafted = {r[0]: (r[1], r[2]) for r in gs_.rows(
        settings, "SELECT node_id, content, events FROM graduation_drafts d JOIN projects p ON p.id = d.project_id "
                  "WHERE p.root = %s AND status = 'pending'", project)}
    # seq 2 states PostgreSQL; seq 3 adds the index decision and an edge *to* PostgreSQL
    assert sorted(drafted["use-postgresql"][1]) == ["s1#2", "s2#2", "s3#2"]
    journals = provenance.Journals(settings)
    assert all(provenance.mentions(provenance.entry_text(journals.entry(ref) or {}), "Use PostgreSQL for the warm store")
               for ref in drafted["use-postgresql"][1])


def test_a_node_only_echoed_back_by_the_warm_graph_is_not_drafted(settings: Settings, project: str) -> None:
    gs_.storage_session(settings, "s1", project, T0)
    for i in (2, 3):  # later sessions got it from the resume snapshot and never brought it up themselves
        at = T0 + timedelta(days=i)
        store = SidecarStore(settings)
        gs_.write_session(settings, f"s{i}", project, [ws.node("Session notes", 0.5, at=at)], at=at)
        nodes = [ws.node("Use PostgreSQL for the warm store", 0.9, at=at, kind="decision", node_id="use-postgresql"),
                 ws.node("Use SQLite for the warm store", 0.3, at=at, kind="decision"),
                 ws.node("Warm graph store", 0.6, at=at, kind="concept")]
        ops = [{"op": "add", "path": f"/nodes/{n['id']}", "value": n} for n in nodes]
        ops += [{"op": "add", "path": f"/edges/{edge_key(a, r, b)}", "value": dict(make_edge(a, r, b, st, now=at))}
                for a, r, b, st in (("use-postgresql", "supersedes", "use-sqlite-for-the-warm-store", 0.9),
                                    ("use-postgresql", "informs", "warm-graph-store", 0.7))]
        store.apply_ops(f"s{i}", ops, kind="resume", rationale="pulled from the warm graph's resume snapshot", backend="warm")
        gs_.reconcile(settings, store.load(f"s{i}"))
    assert candidate_ids(settings, project) == ["use-postgresql"]  # three sessions hold it in the warm graph
    summary = run_nightly(settings, project)
    assert (summary.candidates, summary.drafted) == (0, 0)


def test_near_duplicate_of_existing_flat_memory_is_marked_duplicate(settings: Settings, project: str) -> None:
    three_sessions(settings, project)
    pid = gs_.pid_of(settings, project)
    existing = "Use PostgreSQL for the warm store instead of SQLite (decided in 2 sessions)."
    [vec] = gs_.LEXICAL.embed([existing])
    gs_.rows(settings, "INSERT INTO flat_memories (project_id, kind, content, embedding, model, dim, approved_by, approved_at) "
                       "VALUES (%s, 'decision', %s, %s::vector, %s, %s, 'ada', %s) RETURNING id",
             pid, existing, drafts.embeddings.vector_literal(vec), gs_.LEXICAL.model, gs_.LEXICAL.dim, T0)
    summary = run_nightly(settings, project)
    assert (summary.drafted, summary.duplicates) == (0, 1)
    [(status, dup, sim)] = gs_.rows(settings, "SELECT status, duplicate_of, similarity FROM graduation_drafts WHERE project_id = %s", pid)
    assert status == "duplicate" and dup is not None and sim >= 0.92
    assert summary.line().startswith("graduate: 1 new candidates, 0 drafted, 1 duplicates")
    assert run_nightly(settings, project).candidates == 0  # not proposed again while unchanged


def test_memories_of_another_embedding_model_are_reembedded_before_comparing(settings: Settings, project: str) -> None:
    three_sessions(settings, project)
    pid = gs_.pid_of(settings, project)
    other = drafts.embeddings.LexicalEmbedder(model="other-model-v1", dim=64, salt="x")
    text = "Use PostgreSQL for the warm store instead of SQLite (decided in 3 sessions)."
    [vec] = other.embed([text])
    [(mid,)] = gs_.rows(settings, "INSERT INTO flat_memories (project_id, kind, content, embedding, model, dim, approved_by, approved_at) "
                                  "VALUES (%s, 'decision', %s, %s::vector, %s, %s, 'ada', %s) RETURNING id",
                        pid, text, drafts.embeddings.vector_literal(vec), other.model, other.dim, T0)
    summary = run_nightly(settings, project)
    assert (summary.drafted, summary.duplicates) == (0, 1)
    assert gs_.rows(settings, "SELECT model, dim FROM flat_memories WHERE id = %s", mid) == [(gs_.LEXICAL.model, gs_.LEXICAL.dim)]
    assert gs_.rows(settings, "SELECT duplicate_of FROM graduation_drafts WHERE project_id = %s", pid) == [(mid,)]


def test_nightly_run_twice_creates_no_duplicates(settings: Settings, project: str) -> None:
    three_sessions(settings, project)
    first = run_nightly(settings, project)
    second = run_nightly(settings, project)
    assert (first.drafted, second.drafted, second.candidates) == (1, 0, 0)
    assert gs_.rows(settings, "SELECT count(*) FROM graduation_drafts WHERE project_id = %s", gs_.pid_of(settings, project)) == [(1,)]


def anchor_at_floor(settings: Settings, project: str) -> None:
    with db.connect(settings, autocommit=True) as conn:
        pid = graduation.project_ids(conn, project)[0]
        with conn.transaction():
            nodes = seed.seed_notes(conn, pid, [seed.Note("Never push to main directly", "correction")], "notes.md", T0)
        seed.finish(conn, settings, pid, nodes)
        conn.execute("UPDATE nodes SET weight = floor WHERE project_id = %s AND anchor", (pid,))


def queued(settings: Settings, project: str) -> list[str]:
    return [r[0] for r in gs_.rows(settings, "SELECT a.node_id FROM archive_reviews a JOIN projects p ON p.id = a.project_id "
                                             "WHERE p.root = %s AND a.status = 'pending'", project)]


@pytest.mark.parametrize(("weeks", "expected"), [(5, []), (6, ["never-push-to-main-directly"])])
def test_anchor_at_floor_queued_for_archive_after_six_weeks(settings: Settings, project: str, weeks: int, expected: list[str]) -> None:
    gs_.storage_session(settings, "s1", project, T0)
    anchor_at_floor(settings, project)
    with freeze_time(T0):
        run_nightly(settings, project, now=settings.clock.now())
    with freeze_time(T0 + timedelta(weeks=weeks)):
        summary = run_nightly(settings, project, now=settings.clock.now())
    assert queued(settings, project) == expected
    assert summary.archive_queued == len(expected)
    run_nightly(settings, project, now=T0 + timedelta(weeks=weeks, days=1))
    assert queued(settings, project) == expected  # queued once


def test_kept_share_counts_memories_unchanged_after_thirty_days(settings: Settings, project: str) -> None:
    three_sessions(settings, project)
    run_nightly(settings, project)
    with db.connect(settings, autocommit=True) as conn:
        [draft] = review.pending_drafts(conn, graduation.project_ids(conn, project))
        review.approve(conn, settings, draft["id"], by="ada", embedder=gs_.LEXICAL, now=T0 + timedelta(days=3))
        pids = graduation.project_ids(conn, project)
        early = graduation.outcome_counts(conn, pids, T0 + timedelta(days=10))
        with conn.transaction():
            graduation.record_kept(conn, pids, T0 + timedelta(days=40))
        late = graduation.outcome_counts(conn, pids, T0 + timedelta(days=40))
    assert (early["approved"], early["kept_30d"], early["kept_share"]) == (1, 0, None)
    assert (late["kept_30d"], late["edited"], late["deleted"], late["kept_share"]) == (1, 0, 0, 1.0)
    assert graduation.outcomes(settings, project)["approved"] == 1


def test_label_that_cannot_be_grounded_is_not_redrafted_every_night(settings: Settings, project: str) -> None:
    for i in range(3):
        gs_.storage_session(settings, f"s{i + 1}", project, T0 + timedelta(days=i), label="Maybe use PostgreSQL")
    first = run_nightly(settings, project)
    assert (first.candidates, first.drafted, first.refused) == (1, 0, 1)
    assert run_nightly(settings, project).candidates == 0


def test_outcomes_is_empty_when_warm_graph_is_off(tmp_path: Path) -> None:
    assert graduation.outcomes(Settings(home=tmp_path, warm=False)) == {}


def test_recorded_ollama_answer_produces_the_draft(settings: Settings, project: str) -> None:
    import json

    import httpx
    import ollama

    three_sessions(settings, project)
    answer = {"memory": "PostgreSQL with pgvector is the warm store.", "kind": "decision", "sessions": ["s2"], "events": ["s2#2"]}
    seen: list[dict] = []

    def reply(request: httpx.Request) -> httpx.Response:
        seen.append(json.loads(request.content))
        return httpx.Response(200, json={"model": "llama3.2", "created_at": "2026-11-01T09:00:00Z", "done": True,
                                         "message": {"role": "assistant", "content": json.dumps(answer)}})

    client = ollama.Client(host="http://ollama.invalid:11434", transport=httpx.MockTransport(reply))
    run_nightly(settings, project, draft_backends.OllamaDrafter(settings, client=client))
    [(status, backend, content)] = gs_.rows(settings, "SELECT status, backend, content FROM graduation_drafts d "
                                                      "JOIN projects p ON p.id = d.project_id WHERE p.root = %s", project)
    assert (status, backend, content) == ("pending", "ollama", answer["memory"])
    assert seen[0]["format"]["required"] == ["memory", "kind", "sessions", "events"]


def test_drafter_follows_the_probe_backend_choice(tmp_path: Path) -> None:
    from rolling_graph.core.config import ProbeSettings

    offline = Settings(home=tmp_path, probe=ProbeSettings(backend="offline"))
    assert draft_backends.choose_drafter(offline)[0].name == "template"
    forced = Settings(home=tmp_path, probe=ProbeSettings(backend="anthropic"))
    assert draft_backends.choose_drafter(forced)[0].name == "anthropic"


def test_secrets_in_a_model_draft_are_redacted(settings: Settings, project: str) -> None:
    three_sessions(settings, project)

    class Leaky:
        name, model = "anthropic", "stub"

        def draft(self, ctx: drafts.NodeContext) -> drafts.Draft:
            text = "Connect with postgresql://app:hunter2secret@db.internal/warm for the warm store."
            return drafts.Draft(text, "decision", ctx.sessions, (ctx.events[0].ref,), "anthropic")

    run_nightly(settings, project, Leaky())
    [(content,)] = gs_.rows(settings, "SELECT content FROM graduation_drafts d JOIN projects p ON p.id = d.project_id "
                                      "WHERE p.root = %s AND status = 'pending'", project)
    assert "hunter2secret" not in content and "REDACTED" in content


def test_second_concurrent_run_does_nothing(settings: Settings, project: str) -> None:
    three_sessions(settings, project)
    with db.connect(settings, autocommit=True) as holder:
        holder.execute("SELECT pg_advisory_lock(%s)", (nightly.JOB_LOCK,))
        busy = run_nightly(settings, project)
        holder.execute("SELECT pg_advisory_unlock(%s)", (nightly.JOB_LOCK,))
    assert busy.busy and busy.line() == "graduate: another graduation run is in progress; nothing done"
    assert run_nightly(settings, project).drafted == 1
