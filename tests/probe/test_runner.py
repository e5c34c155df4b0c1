"""The offline extractor's own patch is never rejected, and a rejected patch never costs its batch.

A prompt that named a file ("Use Redis for caching. Then read README.md.") made the file name an
*entity* node whose id the file node then took; the file's ``path`` fact was refused on the
entity, the whole patch was rejected, and the Redis decision was lost without a word.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import tempfile
from pathlib import Path
from typing import Any

import pytest
from conftest import context_of, prompt_payload, run_hook

from rolling_graph import hook
from rolling_graph.core.config import load_settings
from rolling_graph.core.model import make_node
from rolling_graph.probe import offline, runner
from rolling_graph.probe.base import ProbeResult
from rolling_graph.replay.run import ReplayOptions, replay
from rolling_graph.store.journal import read_journal
from rolling_graph.store.sidecar import SidecarStore


def _rejected(store: SidecarStore, sid: str) -> list[dict[str, Any]]:
    return [e for e in read_journal(store.journal_path(sid)) if e["kind"] == "rejected"]


@pytest.mark.parametrize(
    "prompt, remembered",
    [
        ("Use Redis for caching. Then read README.md.", {"use-redis-for-caching": "decision", "readme-md": "file"}),
        ("List files and read README.md.", {"readme-md": "file"}),
        ("Let's go with structlog for logging, and keep CLAUDE.md short.", {"claude-md": "file"}),
    ],
)
def test_a_prompt_that_names_a_file_keeps_its_decision_and_the_file(prompt: str, remembered: dict[str, str], tmp_path: Path) -> None:
    """The reproduction of the issue, through the real ``rgraph-hook`` processes."""
    repo = tmp_path / "repo"
    repo.mkdir()
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    (repo / "README.md").write_text("hello\n")
    (repo / "CLAUDE.md").write_text("rules\n")
    start = {"session_id": "r1", "cwd": str(repo), "hook_event_name": "SessionStart", "source": "startup"}
    assert run_hook("session-start", start).returncode == 0
    assert run_hook("user-prompt-submit", prompt_payload("r1", prompt, cwd=str(repo))).returncode == 0

    store = SidecarStore(load_settings())
    nodes = store.load("r1")["nodes"]
    assert {nid: nodes[nid]["kind"] for nid in remembered if nid in nodes} == remembered
    assert not _rejected(store, "r1")


def test_an_old_entity_node_with_a_file_name_gets_no_file_fact_and_the_batch_lands() -> None:
    """A graph written before the fix may hold ``README.md`` as an entity: naming the file again
    activates that node and leaves its kind alone; the decision beside it is remembered."""
    settings = load_settings()
    store = SidecarStore(settings)
    node = make_node("README.md", "technical", "entity")
    store.apply_ops("s1", [{"op": "add", "path": f"/nodes/{node['id']}", "value": node}], kind="seed", rationale="an old graph")
    hook.handle_event("user-prompt-submit", prompt_payload("s1", "Use Redis for caching. Then read README.md."), settings)
    nodes = store.load("s1")["nodes"]
    assert nodes["use-redis-for-caching"]["kind"] == "decision"
    assert nodes["readme-md"]["kind"] == "entity" and "path" not in nodes["readme-md"].get("facts", {})
    assert not _rejected(store, "s1")


def test_an_event_whose_fold_is_refused_costs_only_that_event(monkeypatch: pytest.MonkeyPatch) -> None:
    """Should the extractor ever propose a bad operation for one event, the batch's refold is
    refused as a whole; then each event is folded on its own: the others land, the refusal is
    journaled with its reason, and every patch is still applied all or nothing."""
    settings = load_settings()
    store = SidecarStore(settings)
    real_run = offline.OfflineProbe.run

    def with_a_bad_op_for_e2(self: offline.OfflineProbe, events: list[Any], doc: Any) -> ProbeResult:
        result = real_run(self, events, doc)
        if any(e["id"] == "e2" for e in events):  # a future extractor bug, on the second event only
            result.patch.append({"op": "replace", "path": "/nodes/no-such-node/label", "value": "x"})
        return result

    monkeypatch.setattr(offline.OfflineProbe, "run", with_a_bad_op_for_e2)
    batch = [
        {"id": "e1", "event": "UserPromptSubmit", "text": "Let's go with Redis for the cache.", "paths": [], "reasons": ["decision"]},
        {"id": "e2", "event": "UserPromptSubmit", "text": "Use Celery for the jobs.", "paths": [], "reasons": ["decision"]},
        {"id": "e3", "event": "UserPromptSubmit", "text": "Use structlog for logging.", "paths": [], "reasons": ["decision"]},
    ]
    first = offline.OfflineProbe().run(batch, store.load("s1"))
    runner._apply(store, settings, "s1", batch, first, "test")

    nodes = store.load("s1")["nodes"]
    assert "use-redis-for-the-cache" in nodes and "use-structlog-for-logging" in nodes
    assert "use-celery-for-the-jobs" not in nodes  # only the event with the bad operation is lost
    journal = read_journal(store.journal_path("s1"))
    refused = [e for e in journal if e["kind"] == "rejected"]
    assert [e["event_ids"] for e in refused] == [["e1", "e2", "e3"], ["e1", "e2", "e3"], ["e2"]]
    assert all("no-such-node" in e["error"] for e in refused)
    assert [e["event_ids"] for e in journal if e["kind"] == "patch"] == [["e1"], ["e3"]]


def test_a_rejected_model_patch_on_a_batch_that_names_a_file_falls_back_whole() -> None:
    settings = load_settings()
    store = SidecarStore(settings)
    bad = ProbeResult(backend="anthropic", rationale="r", patch=[{"op": "remove", "path": "/nodes/anything"}])
    batch = [{"id": "e1", "event": "UserPromptSubmit", "text": "Use Redis for caching. Then read README.md.",
              "paths": ["README.md"], "reasons": ["decision"]}]
    runner._apply(store, settings, "s1", batch, bad, "test")
    assert [e["kind"] for e in read_journal(store.journal_path("s1"))] == ["rejected", "patch"]
    assert store.load("s1")["nodes"]["use-redis-for-caching"]["kind"] == "decision"


CORPUS = Path(__file__).resolve().parents[3] / "shared" / "corpus"
#: Sessions of the corpus where the offline patch was rejected before the fix (a file name
#: taken for an entity: CLAUDE.md, README.md, TASK.md, docs.md), the smallest first. The whole
#: corpus runs in ``bench/rejected_patches.py``.
REJECTED_BEFORE = ["2026-01-20-c26d2153.jsonl", "2026-02-11-f8190a9b.jsonl", "2026-02-09-ce24e94d.jsonl", "2026-02-14-8ab54260.jsonl"]


@pytest.mark.skipif(not (CORPUS / "entire-cli").is_dir(),
                    reason=f"the recorded sessions are not in {CORPUS} (the shared corpus lives beside the checkout, never in it)")
@pytest.mark.parametrize("name", REJECTED_BEFORE)
def test_no_offline_patch_is_rejected_on_a_real_session(name: str) -> None:
    home = tempfile.mkdtemp(prefix="rgrej-")
    try:
        replay([CORPUS / "entire-cli" / name], options=ReplayOptions(project="/tmp/project", snapshot_boundaries=False), home=home)
        errors = [
            json.loads(line)["error"]
            for journal in Path(home, "sessions").glob("*.journal.jsonl")
            for line in journal.read_text().splitlines()
            if '"rejected"' in line and json.loads(line).get("kind") == "rejected"
        ]
    finally:
        shutil.rmtree(home, ignore_errors=True)
    assert errors == []


def test_the_reproduction_injects_the_decision() -> None:
    settings = load_settings()
    out = hook.handle_event("user-prompt-submit", prompt_payload("s1", "Use Redis for caching. Then read README.md."), settings)
    assert "Use Redis for caching" in context_of(out)


@pytest.mark.parametrize("prompt", ["continue", "continue where we left off", "hello again", "Hello again!", "go on", "thank you",
                                    "keep going please", "hi claude", "/rolling-graph:graph view", "[Request interrupted by user]"])
def test_a_throwaway_prompt_is_no_request(prompt: str) -> None:
    """A slash command, a greeting or a nudge to go on never becomes the session's request."""
    settings = load_settings()
    hook.handle_event("user-prompt-submit", prompt_payload("s1", "Fix the double proration in billing."), settings)
    hook.handle_event("user-prompt-submit", prompt_payload("s1", prompt), settings)
    hook.handle_event("stop", {"session_id": "s1", "cwd": "/home/dev/app", "hook_event_name": "Stop"}, settings)
    runner.run_probe(settings, "s1")  # what the gate held back
    requests = [n["label"] for n in SidecarStore(settings).load("s1")["nodes"].values() if n["kind"] == "request"]
    assert requests == ["Fix the double proration in billing."]


def test_a_slash_command_as_claude_code_records_it_is_no_request() -> None:
    settings = load_settings()
    typed = "<command-message>rolling-graph:graph</command-message>\n<command-name>/rolling-graph:graph</command-name>\n<command-args>view</command-args>"
    hook.handle_event("user-prompt-submit", prompt_payload("s2", typed), settings)
    runner.run_probe(settings, "s2")
    assert not [n for n in SidecarStore(settings).load("s2")["nodes"].values() if n["kind"] == "request"]


@pytest.mark.parametrize("prompt", ["ok, now add tests for the parser", "Continue with the parser refactor", "Fix the bug in billing"])
def test_a_real_request_that_opens_like_a_nudge_is_still_one(prompt: str) -> None:
    settings = load_settings()
    hook.handle_event("user-prompt-submit", prompt_payload("s3", prompt), settings)
    runner.run_probe(settings, "s3")
    assert [n for n in SidecarStore(settings).load("s3")["nodes"].values() if n["kind"] == "request"]


def _queue_a_read(settings: Any, sid: str) -> None:
    """A session whose gate holds one tool event (a read does not fire the probe)."""
    from conftest import tool_payload

    hook.handle_event("post-tool-use", tool_payload(sid, "Read", {"file_path": "/home/dev/app/lib/billing.py"}), settings)
    assert SidecarStore(settings).load_state(sid)["gate"]["pending"]


def test_a_probe_round_parses_the_graph_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """Taking the batch and the assistant's text read the state alone; the answer is committed
    on the graph it was proposed on, not read again (nothing changed it meanwhile). A round
    read the graph four times before (taking the batch, the transcript's offset, the
    proposal's snapshot, the commit's transaction), and the take that found nothing more
    a fifth."""
    from rolling_graph.store.files import SessionFiles

    settings = load_settings()
    _queue_a_read(settings, "once")
    reads: list[str] = []
    real = SessionFiles._read_graph

    def counted(self: SessionFiles, sid: str) -> Any:
        reads.append(sid)
        return real(self, sid)

    monkeypatch.setattr(SessionFiles, "_read_graph", counted)
    assert runner.run_probe(settings, "once") == 1
    assert reads == ["once"]
    assert "lib-billing-py" in SidecarStore(settings).load("once")["nodes"]


def test_what_another_process_journals_while_the_probe_thinks_is_kept(monkeypatch: pytest.MonkeyPatch) -> None:
    """The graph the answer was proposed on is not reused when the journal grew meanwhile."""
    settings = load_settings()
    store = SidecarStore(settings)
    _queue_a_read(settings, "meanwhile")
    real_propose = runner._propose

    def slow_model(*args: Any, **kwargs: Any) -> Any:
        node = make_node("Use Postgres for the warm graph", "technical", "decision")
        store.apply_ops("meanwhile", [{"op": "add", "path": f"/nodes/{node['id']}", "value": node}], kind="seed", rationale="another process")
        return real_propose(*args, **kwargs)

    monkeypatch.setattr(runner, "_propose", slow_model)
    assert runner.run_probe(settings, "meanwhile") == 1
    nodes = store.load("meanwhile")["nodes"]
    assert "use-postgres-for-the-warm-graph" in nodes and "lib-billing-py" in nodes
