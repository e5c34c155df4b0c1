"""How a draft reads, as pure functions: the offline wording and the validator every draft passes."""

from __future__ import annotations

import pytest

from rolling_graph.graduation import wording


@pytest.mark.parametrize(("kind", "label", "summary", "replaced", "expected"), [
    ("decision", "Use PostgreSQL for the warm store", "Let's use PostgreSQL for the warm store because it needs pgvector.", [],
     "Use PostgreSQL for the warm store because it needs pgvector (decided in 3 sessions)."),
    ("decision", "Use PostgreSQL for the warm store", None, ["Use SQLite for the warm store"],
     "Use PostgreSQL for the warm store instead of SQLite (decided in 3 sessions)."),
    ("correction", "Use Oban for the mailer retries instead",
     "Actually, not Exq — use Oban for the mailer retries instead, because Exq needs Redis.", ["Use Exq for the mailer retries"],
     "Use Oban for the mailer retries instead of Exq because Exq needs Redis (corrected in 3 sessions)."),
    ("decision", "Use Bento instead of Resend", "Actually, not Resend. Use Bento instead of Resend.", ["Use Resend for email"],
     "Use Bento instead of Resend (decided in 3 sessions)."),
    ("decision", "Always run `mix format` before committing",
     "From now on, always run `mix format` before committing — CI rejects unformatted code.", [],
     "Always run `mix format` before committing — CI rejects unformatted code (decided in 3 sessions)."),
    ("decision", "Use PostgreSQL for the warm store", "Chosen for pgvector and concurrent sessions", [],
     "Use PostgreSQL for the warm store (decided in 3 sessions). Chosen for pgvector and concurrent sessions."),
    ("note", "Warm graph store", "The warm graph lives in PostgreSQL with pgvector. It is embedded.", [],
     "The warm graph lives in PostgreSQL with pgvector (seen in 3 sessions)."),
])
def test_template_states_the_memory_its_replacement_and_its_reason(kind: str, label: str, summary: str | None,
                                                                   replaced: list[str], expected: str) -> None:
    text = wording.template_sentence(kind, label, summary, 3, replaced)
    assert text == expected
    assert wording.style_problems(text, ["use-postgresql-for-the-warm-store"]) == []


def test_a_hedged_reason_is_left_out_rather_than_repeated() -> None:
    text = wording.template_sentence("decision", "Use Redis for sessions", "Let's use Redis for sessions because it might be faster.", 4)
    assert text == "Use Redis for sessions (decided in 4 sessions)."


def test_a_dash_that_only_restates_the_decision_is_no_reason() -> None:
    assert wording.reason_in("Actually, not SQLite — use PostgreSQL instead.", "Use PostgreSQL instead") is None


@pytest.mark.parametrize(("text", "problem"), [
    ("Decision: Use PostgreSQL for the warm store.", "a node kind as a label"),
    ("Use PostgreSQL for the warm store. Related: Warm graph store (informs).", "a 'Related:' list"),
    ("Use PostgreSQL for the warm store (edits) billing.", "an edge verb in parentheses"),
    ("Use PostgreSQL for the warm store; it supersedes SQLite.", "an edge verb"),
    ("Use PostgreSQL for the warm store —informs→ the resume pull.", "an edge arrow"),
    ("Use PostgreSQL for the warm store (weight 0.82).", "a weight"),
    ("Use PostgreSQL for the warm store, see s1#2.", "an event reference"),
    ("Keep use-postgresql-for-the-warm-store as it is.", "a node id"),
])
def test_graph_jargon_is_named(text: str, problem: str) -> None:
    assert problem in wording.jargon_in(text, ["use-postgresql-for-the-warm-store"])


def test_plain_project_language_is_not_jargon() -> None:
    text = "Run `mix test` before pushing: the CI blocks merges of failing tests and edge cases need a test each (decided in 3 sessions)."
    assert wording.style_problems(text, ["mix-test", "ci"]) == []


def test_a_bare_name_or_a_cut_label_does_not_stand_on_its_own() -> None:
    assert wording.style_problems("Spotter.Transcripts.") == ["does not stand on its own (fewer than 4 words)"]
    assert "cut off mid-phrase ('…')" in wording.style_problems("Use the Lua script for rate limits across…")
    cut = wording.template_sentence("decision", "Use the Lua script for rate limits across…", None, 3)
    assert "cut off mid-phrase ('…')" in wording.style_problems(cut)
