"""The probe error model: every failure of a model backend is a ``ProbeFailed``, answered offline.

Issue 17, item 3. A 200 whose body is cut in half, model text of 50,000 ``[``, any other
exception inside a backend: the batch still gets an offline patch, the reason is journaled,
the call's tokens are counted (so the caps apply), nothing stays in flight, and no traceback
reaches a log. In flight is bounded. The caps are checked against a call's *maximum* cost
before it is made, so one call cannot overshoot them.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from typing import Any

import httpx
import pytest
from conftest import prompt_payload
from probe_support import Server, envelope, probe_settings, result, sdk_httpx, serving

from rolling_graph.core.config import ProbeSettings, Settings, load_settings, replace
from rolling_graph.core.model import new_document
from rolling_graph.probe import usage
from rolling_graph.probe.anthropic_probe import AnthropicProbe
from rolling_graph.probe.base import MAX_ANSWER_CHARS
from rolling_graph.probe.errors import ProbeFailed
from rolling_graph.probe.ollama_probe import OllamaProbe
from rolling_graph.probe.runner import INFLIGHT_MAX, _take_batch, run_probe
from rolling_graph.probe.select import choose_backend, is_cap_reason
from rolling_graph.store.journal import read_journal
from rolling_graph.store.sidecar import SidecarStore

EVENTS = [{"id": "e1", "event": "UserPromptSubmit", "text": "Let's go with PostgreSQL instead of SQLite."}]
BRACKETS = "[" * 50_000


# --- builders ---------------------------------------------------------------------------


def anthropic_text_reply(text: str) -> dict[str, Any]:
    """The recorded good response, its tool call replaced by a text block."""
    reply = envelope("anthropic_good.json")
    reply["body"]["content"] = [{"type": "text", "text": text}]
    reply["body"]["stop_reason"] = "end_turn"
    return reply


def cut_in_half(reply: dict[str, Any], http: Any) -> Callable[[Any], Any]:
    body = json.dumps(reply["body"]).encode()

    def respond(request: Any) -> Any:
        return http.Response(200, headers={"content-type": "application/json"}, content=body[: len(body) // 2])

    return respond


def anthropic(settings: Settings, reply: Any) -> tuple[AnthropicProbe, Server]:
    import anthropic as sdk

    http = sdk_httpx()
    server = Server(http, [reply])
    client = sdk.Anthropic(
        api_key="sk-ant-api03-test-key-not-real",
        base_url="http://anthropic.invalid",
        http_client=http.Client(transport=server.transport()),
        max_retries=0,
    )
    return AnthropicProbe(settings, client=client, sleep=lambda _s: None), server


def ollama(settings: Settings, reply: Any) -> tuple[OllamaProbe, Server]:
    import ollama as sdk

    server = Server(httpx, [reply])
    client = sdk.Client(host="http://127.0.0.1:11434", transport=server.transport())
    return OllamaProbe(settings, client=client, sleep=lambda _s: None), server


def ollama_text_reply(text: str) -> dict[str, Any]:
    reply = envelope("ollama_chat.json")
    reply["body"]["message"]["content"] = text
    return reply


@pytest.fixture
def settings(tmp_path: Path) -> Settings:
    return probe_settings(tmp_path)


# --- each backend lets only ProbeFailed out -----------------------------------------------


def test_anthropic_body_cut_in_half_is_a_failed_probe_charged_its_maximum(settings: Settings) -> None:
    probe, server = anthropic(settings, cut_in_half(envelope("anthropic_good.json"), sdk_httpx()))
    with pytest.raises(ProbeFailed) as info:
        probe.run(EVENTS, new_document("s1"))
    assert len(server.requests) == 1
    assert "not valid JSON" in info.value.reason and info.value.backend == "anthropic"
    # Usage unreadable: charged the input estimate and the whole output bound.
    assert info.value.output_tokens == probe.bounds.max_output_tokens
    assert 0 < info.value.input_tokens + info.value.output_tokens <= probe.max_call_tokens(EVENTS, new_document("s1"))


def test_anthropic_text_of_fifty_thousand_brackets_is_a_failed_probe_with_its_tokens(settings: Settings) -> None:
    probe, _ = anthropic(settings, anthropic_text_reply(BRACKETS))
    with pytest.raises(ProbeFailed) as info:
        probe.run(EVENTS, new_document("s1"))
    assert "nested too deeply" in info.value.reason
    assert (info.value.input_tokens, info.value.output_tokens) == (1843, 212)  # the response's usage


def test_ollama_text_of_fifty_thousand_brackets_is_a_failed_probe_with_its_tokens(settings: Settings) -> None:
    probe, _ = ollama(settings, ollama_text_reply(BRACKETS))
    with pytest.raises(ProbeFailed) as info:
        probe.run(EVENTS, new_document("s1"))
    assert "nested too deeply" in info.value.reason
    assert (info.value.input_tokens, info.value.output_tokens) == (1530, 142)


def test_ollama_body_cut_in_half_is_a_failed_probe(settings: Settings) -> None:
    probe, _ = ollama(settings, cut_in_half(envelope("ollama_chat.json"), httpx))
    with pytest.raises(ProbeFailed) as info:
        probe.run(EVENTS, new_document("s1"))
    assert info.value.backend == "ollama" and info.value.output_tokens == probe.bounds.max_output_tokens


def test_an_oversized_answer_is_refused_before_parsing(settings: Settings) -> None:
    probe, _ = anthropic(settings, anthropic_text_reply("x" * (MAX_ANSWER_CHARS + 1)))
    with pytest.raises(ProbeFailed) as info:
        probe.run(EVENTS, new_document("s1"))
    assert "over the bound" in info.value.reason


def test_any_other_exception_inside_a_backend_becomes_a_failed_probe(
    settings: Settings, monkeypatch: pytest.MonkeyPatch
) -> None:
    def broken(self: AnthropicProbe, events: Any, doc: Any) -> dict[str, Any]:
        raise KeyError("a bug while building the request")

    probe, server = anthropic(settings, envelope("anthropic_good.json"))
    monkeypatch.setattr(AnthropicProbe, "request", broken)
    with pytest.raises(ProbeFailed) as info:
        probe.run(EVENTS, new_document("s1"))
    assert info.value.reason.startswith("KeyError: ") and server.requests == []
    assert (info.value.input_tokens, info.value.output_tokens) == (0, 0)  # nothing was sent


# --- through the hook and the runner: a persisting bad answer ------------------------------


@pytest.fixture
def always_brackets() -> Iterator[tuple[str, list[bytes]]]:
    """A Messages API on 127.0.0.1 whose every answer is text of 50,000 ``[``."""
    bodies: list[bytes] = []
    reply = json.dumps(anthropic_text_reply(BRACKETS)["body"]).encode()

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:  # noqa: N802 - http.server's naming
            bodies.append(self.rfile.read(int(self.headers.get("content-length", 0))))
            self.send_response(200)
            self.send_header("content-type", "application/json")
            self.send_header("content-length", str(len(reply)))
            self.end_headers()
            self.wfile.write(reply)

        def log_message(self, *args: Any) -> None:
            pass

    with serving(Handler) as url:
        yield url, bodies


PROMPTS = 24


def test_a_persisting_bad_answer_still_builds_the_graph_counts_tokens_and_logs_no_traceback(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, always_brackets: tuple[str, list[bytes]]
) -> None:
    from rolling_graph.hook import handle_event

    url, bodies = always_brackets
    home = tmp_path / "home"
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-test-not-real")
    monkeypatch.setenv("ANTHROPIC_BASE_URL", url)
    env = {"ROLLING_GRAPH_HOME": str(home), "ROLLING_GRAPH_PROBE": "anthropic", "ROLLING_GRAPH_PROBE_MODE": "sync"}
    settings = load_settings({**env, "ROLLING_GRAPH_WARM": "off"})
    settings.probe = replace(settings.probe, session_token_cap=10_000_000)  # not what this test is about
    for i in range(PROMPTS):
        handle_event("user-prompt-submit", prompt_payload("bad", f"Let's go with Service{i} for the queue."), settings)

    store = SidecarStore(settings)
    doc = store.load("bad")
    patches = [e for e in read_journal(store.journal_path("bad")) if e.get("kind") == "patch"]
    assert len(bodies) == len(patches) == PROMPTS  # one call per batch, none retried
    assert all(e["backend"] == "offline" and "nested too deeply" in e["fallback_reason"] for e in patches)
    assert any(n.startswith("use-service") for n in doc["nodes"]), sorted(doc["nodes"])
    assert doc["gate"]["inflight"] == []
    assert doc["counters"]["probe_tokens_in"] == 1843 * PROMPTS
    assert usage.read_day(settings)["by_backend"]["anthropic"]["tokens_out"] == 212 * PROMPTS
    logs = list((home / "logs").glob("*.log")) if (home / "logs").exists() else []
    assert not any("Traceback" in p.read_text() for p in logs)


# --- in flight is bounded -------------------------------------------------------------------


def pending_event(n: int) -> dict[str, Any]:
    return {"id": f"e{n}", "event": "UserPromptSubmit", "text": f"Let's go with Tool{n} for builds.", "paths": [], "reasons": ["decision"]}


def test_probes_that_keep_dying_leave_a_bounded_batch_in_flight_and_nothing_is_dropped() -> None:
    settings = load_settings()
    store = SidecarStore(settings)
    with store.transaction("dying"):
        pass
    n = 0
    for _ in range(15):  # 15 probes take a batch and die before applying it
        with store.transaction("dying", graph=False) as doc:
            for _ in range(6):
                n += 1
                doc["gate"]["pending"].append(pending_event(n))
        _take_batch(store, "dying")
        assert len(store.load_state("dying")["gate"]["inflight"]) <= INFLIGHT_MAX

    for _ in range(10):  # probes that live, until nothing is left
        run_probe(settings, "dying")
        gate = store.load_state("dying")["gate"]
        if not gate["pending"] and not gate["inflight"]:
            break
    entries = [e for e in read_journal(store.journal_path("dying")) if e.get("kind") == "patch"]
    applied = [i for e in entries for i in e["event_ids"]]
    assert sorted(applied, key=lambda i: int(i[1:])) == [f"e{i}" for i in range(1, n + 1)]  # each once, none lost
    assert all(len(e["event_ids"]) <= INFLIGHT_MAX for e in entries)
    dead = [e for e in entries if "did not finish" in e.get("fallback_reason", "")]
    assert dead and all(e["backend"] == "offline" for e in dead)


def test_the_dead_probes_batch_is_answered_offline_first_then_the_pending_one_normally() -> None:
    settings = load_settings()
    store = SidecarStore(settings)
    with store.transaction("split", graph=False) as doc:
        doc["gate"]["inflight"] = [pending_event(i) for i in range(1, 31)]
        doc["gate"]["pending"] = [pending_event(i) for i in range(31, 51)]
        doc["gate"]["probe_requested"] = True

    assert run_probe(settings, "split") == 2
    entries = [e for e in read_journal(store.journal_path("split")) if e.get("kind") == "patch"]
    assert [e["event_ids"][0] for e in entries] == ["e1", "e31"]
    assert "did not finish" in entries[0]["fallback_reason"] and "fallback_reason" not in entries[1]
    assert {i for e in entries for i in e["event_ids"]} >= {f"e{i}" for i in range(11, 51)}  # journal keeps the last 40 ids
    assert store.load_state("split")["gate"]["inflight"] == []


# --- the cap is checked against the call's maximum cost -------------------------------------


def capped_settings(tmp_path: Path, cap: int) -> Settings:
    return Settings(home=tmp_path, probe=ProbeSettings(backend="anthropic", session_token_cap=cap, daily_token_cap=0))


def test_a_call_that_could_cross_the_session_cap_is_not_made(tmp_path: Path) -> None:
    settings = capped_settings(tmp_path, 200_000)
    doc = new_document("s1")
    probe = AnthropicProbe(settings)
    most = probe.max_call_tokens(EVENTS, doc)
    assert most >= probe.bounds.max_output_tokens

    doc["counters"]["probe_tokens_in"] = 200_000 - most  # exactly room for one more call
    backend, why = choose_backend(settings, doc, env={"ANTHROPIC_API_KEY": "x"}, events=EVENTS)
    assert backend.name == "anthropic", why

    doc["counters"]["probe_tokens_in"] = 200_000 - most + 1  # one token short
    backend, why = choose_backend(settings, doc, env={"ANTHROPIC_API_KEY": "x"}, events=EVENTS)
    assert backend.name == "offline" and is_cap_reason(why) and f"may cost up to {most:,}" in why


def test_the_daily_cap_is_checked_against_the_calls_maximum_too(tmp_path: Path) -> None:
    settings = Settings(home=tmp_path, probe=ProbeSettings(backend="anthropic", session_token_cap=0, daily_token_cap=50_000))
    usage.record(settings, "other", result(49_000, 0))
    backend, why = choose_backend(settings, new_document("s1"), env={"ANTHROPIC_API_KEY": "x"}, events=EVENTS)
    assert backend.name == "offline" and "today" in why


def test_tokens_charged_never_exceed_the_cap_however_large_the_calls(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Many batches through the runner, each call billed its maximum: the total stays under the cap."""
    from rolling_graph.probe import runner
    from rolling_graph.probe.base import ProbeResult

    cap = 40_000
    settings = Settings(home=tmp_path, probe=ProbeSettings(backend="anthropic", session_token_cap=cap, daily_token_cap=0))
    calls: list[int] = []

    def greedy_call(self: AnthropicProbe, events: list[dict[str, Any]], doc: dict[str, Any]) -> ProbeResult:
        most = self.max_call_tokens(events, doc)
        calls.append(most)
        return ProbeResult(backend="anthropic", rationale="", patch=[], model="claude-haiku-4-5", input_tokens=most - 1, output_tokens=1)

    monkeypatch.setenv("ANTHROPIC_API_KEY", "x")
    monkeypatch.setattr(AnthropicProbe, "call", greedy_call)
    store = SidecarStore(settings)
    for i in range(30):
        with store.transaction("greedy", graph=False) as doc:
            doc["gate"]["pending"] = [dict(pending_event(i), text="x" * 12_000)]
        runner.run_probe(settings, "greedy")
    spent = usage.session_tokens(store.load("greedy"))
    assert calls and spent == sum(calls) <= cap
    assert cap - spent < max(calls)  # it stopped because the next call might not fit


def test_a_failure_while_choosing_the_backend_still_answers_the_batch_offline(monkeypatch: pytest.MonkeyPatch) -> None:
    from rolling_graph.probe import runner

    def broken(*args: Any, **kwargs: Any) -> Any:
        raise OSError("usage file unreadable")

    settings = load_settings({"ROLLING_GRAPH_HOME": str(load_settings().home), "ROLLING_GRAPH_PROBE": "anthropic"})
    monkeypatch.setattr(runner, "choose_backend", broken)
    store = SidecarStore(settings)
    with store.transaction("choose", graph=False) as doc:
        doc["gate"]["pending"] = [pending_event(1)]
    assert run_probe(settings, "choose") == 1
    (entry,) = [e for e in read_journal(store.journal_path("choose")) if e.get("kind") == "patch"]
    assert entry["backend"] == "offline" and entry["fallback_reason"].startswith("no backend (OSError: usage file unreadable")
    assert store.load_state("choose")["gate"]["inflight"] == []
