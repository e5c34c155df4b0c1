"""Cost caps reach the user once; `rgraph stats` says why each probe fired and what it cost."""

from __future__ import annotations

from pathlib import Path

import pytest
import typer
from conftest import prompt_payload
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
