"""Backend selection, token caps, usage records and the doctor's report (no network)."""

from __future__ import annotations

import json
import threading
from pathlib import Path
from typing import Any

import httpx
import pytest
from probe_support import Reply, Server, envelope, probe_settings, result

from rolling_graph.core.config import Settings
from rolling_graph.core.model import new_document
from rolling_graph.probe import usage
from rolling_graph.probe.errors import ProbeFailed
from rolling_graph.probe.select import choose_backend, is_cap_reason, probe_doctor


@pytest.fixture
def settings(tmp_path: Path) -> Settings:
    return probe_settings(tmp_path)


# --- Usage and cost ------------------------------------------------------------------


def test_token_usage_is_recorded_per_day_and_per_session(settings: Settings) -> None:
    usage.record(settings, "s1", result(1000, 200))
    day = usage.record(settings, "s2", result(500, 100, backend="ollama", model="llama3.2"))
    assert (day["probes"], day["tokens_in"], day["tokens_out"]) == (2, 1500, 300)
    assert day["by_backend"]["ollama"]["estimated_cost_usd"] == 0.0
    assert day["estimated_cost_usd"] == pytest.approx(0.002)  # 1000 * $1/M + 200 * $5/M
    assert day["sessions"]["s1"]["tokens_in"] == 1000
    on_disk = json.loads(usage.usage_path(settings, usage.day_of()).read_text())
    assert on_disk == day
    counters: dict[str, Any] = {}
    usage.count_tokens(counters, result(1000, 200))
    assert counters == {"probe_tokens_in": 1000, "probe_tokens_out": 200}


def test_tokens_of_a_failed_call_are_still_counted(settings: Settings) -> None:
    fallback = result(0, 0, backend="offline", model="")
    usage.charge_failure(
        fallback, ProbeFailed("x", input_tokens=1843, output_tokens=2048, model="claude-haiku-4-5", backend="anthropic")
    )
    fallback.fallback_reason = "x"
    day = usage.record(settings, "s1", fallback)
    assert (day["tokens_in"], day["tokens_out"], day["fallbacks"]) == (1843, 2048, 1)
    assert day["by_backend"]["anthropic"]["tokens_out"] == 2048


def test_unknown_model_has_no_cost_estimate() -> None:
    assert usage.estimate_cost("some-new-model", 10, 10) is None
    assert usage.estimate_cost("claude-haiku-4-5", 1_000_000, 0) == 1.0


def test_concurrent_records_lose_nothing(settings: Settings) -> None:
    threads = [
        threading.Thread(target=lambda: [usage.record(settings, "s", result(10, 1)) for _ in range(10)])
        for _ in range(4)
    ]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert usage.read_day(settings)["probes"] == 40


# --- Selection, caps, doctor ---------------------------------------------------------


def tags_transport(reply: Reply) -> httpx.MockTransport:
    return Server(httpx, [reply]).transport()


def refused(request: httpx.Request) -> httpx.Response:
    raise httpx.ConnectError("refused", request=request)


def with_backend(settings: Settings, backend: str) -> Settings:
    from rolling_graph.core.config import replace

    return Settings(home=settings.home, probe=replace(settings.probe, backend=backend))


def test_auto_picks_anthropic_when_a_key_is_set(settings: Settings) -> None:
    backend, why = choose_backend(
        settings, new_document("s1"), env={"ANTHROPIC_API_KEY": "x"}, transport=tags_transport(refused)
    )
    assert backend.name == "anthropic" and "ANTHROPIC_API_KEY" in why


def test_auto_picks_ollama_when_it_answers_with_the_model(settings: Settings) -> None:
    backend, why = choose_backend(
        settings, new_document("s1"), env={}, transport=tags_transport(envelope("ollama_tags.json"))
    )
    assert backend.name == "ollama" and "llama3.2" in why


def test_auto_falls_back_offline_when_ollama_lacks_the_model(settings: Settings) -> None:
    empty = {"status": 200, "headers": {}, "body": {"models": []}}
    backend, why = choose_backend(settings, new_document("s1"), env={}, transport=tags_transport(empty))
    assert backend.name == "offline" and "ollama pull llama3.2" in why


def test_auto_is_offline_with_no_key_and_no_ollama(settings: Settings) -> None:
    backend, why = choose_backend(settings, new_document("s1"), env={}, transport=tags_transport(refused))
    assert backend.name == "offline" and why.startswith("auto:")


@pytest.mark.parametrize("forced", ["anthropic", "ollama", "claude", "offline"])
def test_explicit_setting_forces_the_backend(settings: Settings, forced: str) -> None:
    backend, why = choose_backend(with_backend(settings, forced), new_document("s1"), env={"ANTHROPIC_API_KEY": "x"})
    assert backend.name == forced and why == f"ROLLING_GRAPH_PROBE={forced}"


def test_session_token_cap_switches_to_offline(settings: Settings) -> None:
    doc = new_document("s1")
    doc["counters"].update(probe_tokens_in=9_000, probe_tokens_out=1_000)
    backend, why = choose_backend(with_backend(settings, "anthropic"), doc, env={"ANTHROPIC_API_KEY": "x"})
    assert backend.name == "offline" and is_cap_reason(why) and "this session" in why


def test_daily_token_cap_switches_to_offline(settings: Settings) -> None:
    usage.record(settings, "other-session", result(45_000, 5_000))
    backend, why = choose_backend(settings, new_document("s1"), env={"ANTHROPIC_API_KEY": "x"})
    assert backend.name == "offline" and is_cap_reason(why) and "today" in why


def test_doctor_reports_active_backend_and_reachability(settings: Settings) -> None:
    def route(request: httpx.Request) -> httpx.Response:
        if request.url.path == "/api/tags":
            raise httpx.ConnectError("refused", request=request)
        assert request.headers["x-api-key"] == "sk-ant-x"
        return httpx.Response(200, json={"data": [], "has_more": False})

    rows = probe_doctor(settings, env={"ANTHROPIC_API_KEY": "sk-ant-x"}, transport=httpx.MockTransport(route))
    by_name = {name: (ok, detail) for name, ok, detail in rows}
    assert by_name["probe backend"] == (True, "anthropic (auto: ANTHROPIC_API_KEY is set)")
    assert by_name["anthropic"][0] is True
    assert by_name["ollama"][0] is False and "no answer" in by_name["ollama"][1]
    assert "0 probes" in by_name["probe usage today"][1]
