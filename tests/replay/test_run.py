"""Replaying the gold fixtures through the real hooks (offline probe, pinned clock).

Hard assertions are what must hold for a usable product (no hook errors, no leaked
secrets, budgets respected, gold decisions and compaction survivors present). Where the
gold labels ask for more than the offline probe delivers today, the test pins the known gap
(:data:`KNOWN_MISSES`): anything missed beyond it fails, and a gap that closes shrinks the
list (``rgraph eval`` prints the same numbers).
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
import typer
from typer.testing import CliRunner

from rolling_graph.evaluation.fixtures import (
    evaluate_fixture,
    gate_scores,
    graph_hits,
    matches_text,
    slug,
    stale_as_current,
    supersedes_hits,
    text_hits,
)
from rolling_graph.replay.run import ReplayOptions, ReplayResult, replay
from rolling_graph.replay.transcript import parse_transcripts

TRANSCRIPTS = Path(__file__).resolve().parents[2] / "fixtures" / "transcripts"
MAIN = ["tool_heavy", "four_domains", "reversals", "resumed", "secrets", "long_project"]
BUDGET = 800

#: Floors below which a fixture's final-graph entity recall is a regression.
RECALL_FLOOR = 0.5
#: Gold entities the offline probe does not extract today (measured 2026-11-26): the gap to
#: the gold labels, kept visible here. A miss outside this list is a regression.
KNOWN_MISSES: dict[str, set[str]] = {
    "tool_heavy": {"retry-after"},
    "four_domains": {"onboarding-flow", "pricing-page", "deadline-exceeded", "p99", "one-on-one", "sleep"},
    "reversals": {"backoff"},
    "resumed": {"autodoc", "read-the-docs", "strict-mode"},
    "secrets": {"release-workflow", "rotation"},
    "long_project": {"btree-gist", "healthz"},
}


def gold(name: str) -> dict[str, Any]:
    return json.loads((TRANSCRIPTS / f"{name}.gold.json").read_text(encoding="utf-8"))


def paths(name: str) -> list[Path]:
    return [TRANSCRIPTS / f for f in gold(name)["transcripts"]]


@pytest.fixture(scope="module")
def replays(tmp_path_factory: pytest.TempPathFactory) -> dict[str, ReplayResult]:
    out = {}
    for name in MAIN:
        home = tmp_path_factory.mktemp(f"home-{name}")
        out[name] = replay(paths(name), options=ReplayOptions(probe="offline", mode="sync", budget=BUDGET), home=home)
    return out


_SCORES: dict[int, dict[str, Any]] = {}


def scores(name: str, result: ReplayResult) -> dict[str, Any]:
    if id(result) not in _SCORES:
        events = list(parse_transcripts(paths(name)))
        _SCORES[id(result)] = evaluate_fixture(gold(name), events, result.records, list(result.final_docs.values()), result.snapshots, BUDGET)
    return _SCORES[id(result)]


@pytest.mark.parametrize("name", MAIN)
def test_replay_runs_every_event_through_the_hooks_without_error(name: str, replays: dict[str, ReplayResult]) -> None:
    result = replays[name]
    assert [r.error for r in result.records if r.error] == []
    assert [(r.index, r.event) for r in result.records] == [(ev["index"], ev["event"]) for ev in gold(name)["events"]]
    summary = result.summary()
    assert summary["cumulative_injected_tokens"] == sum(r.injected_tokens for r in result.records)


@pytest.mark.parametrize("name", MAIN)
def test_no_injection_exceeds_the_budget(name: str, replays: dict[str, ReplayResult]) -> None:
    assert max(r.injected_tokens for r in replays[name].records) <= BUDGET


@pytest.mark.parametrize("name", MAIN)
def test_gold_decisions_are_in_the_final_graph(name: str, replays: dict[str, ReplayResult]) -> None:
    g = gold(name)
    decisions = [e for e in g["entities"] if e["key"] in g["decisions"]]
    hits = graph_hits(decisions, replays[name].final_docs.values())
    assert sorted(hits) == sorted(g["decisions"])


@pytest.mark.parametrize("name", MAIN)
def test_final_graph_entity_recall_stays_above_the_floor(name: str, replays: dict[str, ReplayResult]) -> None:
    s = scores(name, replays[name])
    assert s["project"]["final_recall"] >= RECALL_FLOOR, s["project"]["final_missed"]


@pytest.mark.parametrize("name", MAIN)
def test_the_final_graph_misses_no_gold_entity_beyond_the_known_gap(name: str, replays: dict[str, ReplayResult]) -> None:
    s = scores(name, replays[name])
    missed = set(s["project"]["final_missed"])
    assert missed <= KNOWN_MISSES[name], f"newly missed: {sorted(missed - KNOWN_MISSES[name])}"


def test_corrections_supersede_the_decisions_they_reverse(replays: dict[str, ReplayResult]) -> None:
    g = gold("reversals")
    by_key = {e["key"]: e for e in g["entities"]}
    found = supersedes_hits(g["supersedes"], by_key, replays["reversals"].final_docs.values())
    missing = [f"{p['newer']} -> {p['older']}" for p in found if not p["found"]]
    assert not missing, f"missing supersedes edges: {missing}"


@pytest.mark.parametrize("name", ["tool_heavy", "reversals", "resumed", "long_project"])
def test_gold_entities_survive_into_the_compact_or_resume_injection(name: str, replays: dict[str, ReplayResult]) -> None:
    g = gold(name)
    by_key = {e["key"]: e for e in g["entities"]}
    records = {r.index: r for r in replays[name].records}
    for point in g["survival"]:
        record = records[point["index"]]
        assert record.event == "SessionStart" and record.source == point["source"]
        ents = [by_key[k] for k in point["entities"]]
        hits = text_hits(ents, record.injection)
        assert len(hits) / len(ents) >= 0.8, f"restored only {hits} of {point['entities']}"


def test_compact_injection_does_not_present_superseded_decisions_as_current(replays: dict[str, ReplayResult]) -> None:
    g = gold("reversals")
    by_key = {e["key"]: e for e in g["entities"]}
    records = {r.index: r for r in replays["reversals"].records}
    point = g["survival"][0]
    stale = [by_key[k] for k in point["stale"]]
    block = records[point["index"]].injection or ""
    # The lines that present a decision in force never name a superseded one as current ...
    decisions = "\n".join(line for line in block.splitlines() if re.search(r"\[(decision|correction|preference)\]", line))
    assert decisions and stale_as_current(stale, decisions) == []
    # ... and every superseded decision is named as old. (Gap: a stale name can still appear
    # unmarked elsewhere, e.g. in a quoted request or a file name like fly.toml, which
    # ``stale_as_current`` over the whole block counts; see ``rgraph eval``.)
    old_lines = [slug(line) for line in block.splitlines() if "supersed" in line.lower() or "reject" in line.lower()]
    marked = [e["key"] for e in stale if any(matches_text(e, line) for line in old_lines)]
    assert marked == point["stale"]


def test_secrets_never_reach_the_graph_or_an_injection(replays: dict[str, ReplayResult]) -> None:
    result = replays["secrets"]
    forbidden = gold("secrets")["forbidden"]
    raw = "".join(p.read_text(encoding="utf-8") for p in paths("secrets"))
    assert all(s in raw for s in forbidden)  # the fixture really carries them
    stored = "".join(p.read_text(encoding="utf-8", errors="replace") for p in Path(result.home).rglob("*") if p.is_file())
    seen = json.dumps(list(result.final_docs.values())) + "".join(r.injection or "" for r in result.records) + stored
    assert [s[:10] for s in forbidden if s in seen] == []


@pytest.mark.parametrize("name", MAIN)
def test_gate_meets_gold_at_least_half_the_time(name: str, replays: dict[str, ReplayResult]) -> None:
    s = scores(name, replays[name])["project"]["gate"]
    assert s["recall"] >= 0.5 and s["precision"] >= 0.5, s
    assert s["by_trigger"].get("decision", 1.0) == 1.0 and s["by_trigger"].get("correction", 1.0) == 1.0


def test_fixed_clock_pins_every_timestamp(tmp_path: Path) -> None:
    options = ReplayOptions(clock="fixed", fixed_time="2026-03-01T09:00:00Z")
    result = replay(paths("secrets"), options=options, home=tmp_path)
    doc = next(iter(result.final_docs.values()))
    stamps = {n.get("last_activated") for n in doc["nodes"].values()} | {n.get("first_seen") for n in doc["nodes"].values()}
    assert stamps == {"2026-03-01T09:00:00Z"}


def test_a_replay_that_fails_leaves_no_transcript_mirror_behind(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import tempfile

    scratch = tmp_path / "tmp"
    scratch.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(scratch))

    def stop(record: Any, payload: dict[str, Any]) -> None:
        assert Path(payload["transcript_path"]).is_relative_to(scratch), "the mirror is in the temp dir"
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        replay(paths("secrets"), options=ReplayOptions(), home=tmp_path / "home", after_hook=stop)
    assert list(scratch.iterdir()) == []


def test_transcript_clock_stamps_nodes_with_transcript_times(replays: dict[str, ReplayResult]) -> None:
    doc = next(iter(replays["secrets"].final_docs.values()))
    assert all(n["first_seen"].startswith("2026-11-23T1") for n in doc["nodes"].values())


def _graph(result: ReplayResult) -> tuple[dict[str, Any], dict[str, Any]]:
    doc = next(iter(result.final_docs.values()))
    return doc["nodes"], doc["edges"]


def small_transcript(tmp_path: Path) -> list[Path]:
    """The first two prompts of the secrets fixture and their tool calls."""
    lines = paths("secrets")[0].read_text(encoding="utf-8").splitlines(keepends=True)
    prompts = [i for i, line in enumerate(lines) if '"role":"user","content":"' in line]
    small = tmp_path / "small.jsonl"
    small.write_text("".join(lines[: prompts[2]]), encoding="utf-8")
    return [small]


def test_async_replay_waits_for_detached_probes_before_reading_the_graph(tmp_path: Path) -> None:
    result = replay(small_transcript(tmp_path), options=ReplayOptions(mode="async"), home=tmp_path / "h")
    assert _graph(result)[0], "the detached probe's nodes are in the final graph"
    assert result.summary()["probes"] >= 1


def test_subprocess_replay_builds_the_same_graph_as_in_process(tmp_path: Path) -> None:
    small = small_transcript(tmp_path)
    inproc = replay(small, home=tmp_path / "a")
    sub = replay(small, options=ReplayOptions(subprocess=True), home=tmp_path / "b")
    assert [r.error for r in sub.records if r.error] == []
    assert _graph(sub) == _graph(inproc)
    assert [r.injection for r in sub.records] == [r.injection for r in inproc.records]


def test_replay_command_prints_a_json_summary(tmp_path: Path) -> None:
    from rolling_graph.cli.replay import register

    app = typer.Typer()
    register(app)
    app.command("noop")(lambda: None)
    result = CliRunner().invoke(app, ["replay", *map(str, paths("resumed")), "--json", "--home", str(tmp_path), "--clock", "fixed"])
    assert result.exit_code == 0, result.output
    summary = json.loads(result.output)
    assert summary["events_by_kind"]["SessionStart"] == 2 and summary["graphs"]


def test_replay_command_refuses_a_missing_file(tmp_path: Path) -> None:
    from rolling_graph.cli.replay import register

    app = typer.Typer()
    register(app)
    app.command("noop")(lambda: None)
    result = CliRunner().invoke(app, ["replay", str(tmp_path / "nope.jsonl")])
    assert result.exit_code == 1


def test_eval_command_reports_project_and_baselines(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import tempfile

    from rolling_graph.cli.eval import register

    scratch = tmp_path / "tmp"
    scratch.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(scratch))
    app = typer.Typer()
    register(app)
    app.command("noop")(lambda: None)
    result = CliRunner().invoke(app, ["eval", "--fixture", "reversals", "--budget", "400", "--json"])
    assert result.exit_code == 0, result.output
    report = json.loads(result.output)
    assert report["home"] is None and list(scratch.iterdir()) == [], "the replays' state is gone with the run"
    row = report["rows"][0]
    assert row["name"] == "reversals" and row["budget"] == 400
    assert set(row["baselines"]) == {"none", "recent", "frequent", "full_dump"}
    assert row["baselines"]["none"]["survival_recall"] == 0.0


# ---------------------------------------------------------------- the evaluation's own rules
def test_matching_is_by_slug_substring() -> None:
    ent = {"key": "tb", "match": ["token-bucket"]}
    assert slug("Use a Token Bucket!") == "use-a-token-bucket"
    assert graph_hits([ent], [{"nodes": {"x": {"label": "Token bucket limiter"}}}]) == ["tb"]
    assert text_hits([ent], "TokenBucket") == []


def test_stale_rule_exempts_superseded_and_negated_mentions() -> None:
    ents = [{"key": "fly", "match": ["fly"]}, {"key": "resend", "match": ["resend"]}, {"key": "sqlite", "match": ["sqlite"]}]
    text = "* Use Render — Wait, not Fly.io.\n  supersedes (older, do not follow): Use Resend\n- SQLite (technical, 0.75)"
    assert stale_as_current(ents, text) == ["sqlite"]


def test_gate_scoring_tolerates_a_dead_man_one_event_off() -> None:
    gold_gate = [{"index": 3, "triggers": ["decision"], "snippet": ""}, {"index": 12, "triggers": ["dead_man"], "snippet": ""}]
    s = gate_scores(gold_gate, [3, 13, 20])
    assert (s["tp"], s["fp"], s["fn"]) == (2, 1, 0)
    s = gate_scores(gold_gate, [4, 12])
    assert (s["tp"], s["fp"], s["fn"]) == (1, 1, 1)
