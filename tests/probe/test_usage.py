"""Cost caps reach the user once; `rgraph stats` says why each probe fired and what it cost."""

from __future__ import annotations

from pathlib import Path

import pytest
import typer
from conftest import prompt_payload, tool_payload
from typer.testing import CliRunner

from rolling_graph.core.config import load_settings
from rolling_graph.hook import handle_event
from rolling_graph.store.journal import read_journal
from rolling_graph.store.sidecar import SidecarStore

SID = "capped-session"


def test_a_session_over_its_token_cap_falls_back_to_offline_and_says_so_once(isolated_home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (isolated_home / "config.toml").write_text("[probe]\nsession_token_cap = 1000\n")
    monkeypatch.setenv("ROLLING_GRAPH_PROBE", "anthropic")
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-test-not-a-real-key")
    store = SidecarStore(load_settings())
    handle_event("session-start", {"session_id": SID, "cwd": "/tmp/app", "source": "startup"})
    with store.transaction(SID, graph=False) as doc:  # as if earlier Haiku probes had spent this
        doc["counters"]["probe_tokens_in"] = 900
        doc["counters"]["probe_tokens_out"] = 300
    first = handle_event("user-prompt-submit", prompt_payload(SID, "Let's go with Redis for the cache."))
    assert first is not None and "cap" in first["systemMessage"] and "offline" in first["systemMessage"]
    assert "Use Redis for the cache" in store.load(SID)["nodes"]["use-redis-for-the-cache"]["label"]
    patch = [e for e in read_journal(store.journal_path(SID)) if e["kind"] == "patch"][-1]
    assert patch["backend"] == "offline" and patch["selected_because"].startswith("cap reached")
    second = handle_event("user-prompt-submit", prompt_payload(SID, "We decided to deploy on Render."))
    assert second is None or "systemMessage" not in second, "told once"


def test_the_cap_notice_waits_for_a_prompt_rather_than_going_out_with_a_tool_result(isolated_home: Path) -> None:
    # A tool result's hook runs in the background, and Claude Code sends a background hook's
    # systemMessage to the model, not to the user: the notice is left to the next prompt.
    store = SidecarStore(load_settings())
    handle_event("session-start", {"session_id": SID, "cwd": "/tmp/app", "source": "startup"})
    with store.transaction(SID, graph=False) as doc:
        doc["counters"]["cap_notice_pending"] = "Rolling Graph: session cap reached; probes fall back to the offline extractor."
    for event in ("post-tool-use", "post-tool-use-failure"):
        out = handle_event(event, tool_payload(SID, "Bash", {"command": "ls"}, {"stdout": "app.py"}))
        assert "systemMessage" not in (out or {})
    first = handle_event("user-prompt-submit", prompt_payload(SID, "What next?"))
    assert first is not None and "cap reached" in first["systemMessage"]


def test_stats_lists_each_probe_with_why_it_fired(isolated_home: Path) -> None:
    handle_event("session-start", {"session_id": SID, "cwd": "/tmp/app", "source": "startup"})
    handle_event("user-prompt-submit", prompt_payload(SID, "Let's go with Redis for the cache."))
    handle_event("user-prompt-submit", prompt_payload(SID, "Actually, not Redis. Use Memcached instead."))
    from rolling_graph.cli import stats

    app = typer.Typer()
    stats.register(app)
    app.command("noop")(lambda: None)
    result = CliRunner().invoke(app, ["stats", "--session", SID])
    assert result.exit_code == 0, result.output
    assert "Probes (latest 2 of 2)" in result.output
    assert "correction" in result.output and "decision" in result.output and "offline" in result.output
    as_json = CliRunner().invoke(app, ["stats", "--session", SID, "--json"])
    import json

    probes = json.loads(as_json.output)["sessions"][0]["probe_list"]
    assert [p["fired_on"] for p in probes] == [["decision", "new_entity"], ["correction", "decision", "new_entity"]]
    assert all(p["cost_usd"] == 0.0 and p["outcome"].endswith("ops") for p in probes)


def test_stats_and_doctor_report_the_model_call_that_failed_and_what_it_cost_per_probe(
    isolated_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 36, case 12: the hooks inherited Claude Code's key, Haiku failed and the probes
    fell back offline; stats said "by backend: offline 5" beside 5,000 tokens spent, every
    per-probe row 0/0 $0.0000, and doctor said nothing had used a model."""
    import json

    from rolling_graph.cli import stats
    from rolling_graph.probe import runner
    from rolling_graph.probe.errors import ProbeFailed
    from rolling_graph.probe.select import probe_doctor

    class FailingHaiku:
        name = "anthropic"

        def run(self, events: object, doc: object) -> object:
            raise ProbeFailed("timed out after 30 s", input_tokens=1000, output_tokens=20, model="claude-haiku-4-5", backend="anthropic")

    monkeypatch.setattr(runner, "_choose", lambda settings, doc, batch: (FailingHaiku(), "auto: ANTHROPIC_API_KEY is set"))
    handle_event("session-start", {"session_id": SID, "cwd": "/tmp/app", "source": "startup"})
    handle_event("user-prompt-submit", prompt_payload(SID, "Let's go with Redis for the cache."))

    app = typer.Typer()
    stats.register(app)
    app.command("noop")(lambda: None)
    probes = json.loads(CliRunner().invoke(app, ["stats", "--session", SID, "--json"]).output)["sessions"][0]
    [row] = probes["probe_list"]
    assert row["backend"] == "offline (after anthropic failed)" and (row["tokens_in"], row["tokens_out"]) == (1000, 20)
    assert row["cost_usd"] and row["cost_usd"] > 0
    assert probes["failed_calls_by_backend"] == {"anthropic": 1}
    text = CliRunner().invoke(app, ["stats", "--session", SID]).output
    assert "model calls that failed first (and were paid for): anthropic 1" in text
    ran = {name: (ok, detail) for name, ok, detail in probe_doctor(load_settings(), env={}, check_network=False)}
    ok, detail = ran["probes that ran today"]
    assert not ok and "anthropic: 0 answered, 1 failed and fell back, 1,020 tokens" in detail and "offline: 1 answered" in detail
