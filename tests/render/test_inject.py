"""What the model is told, and when: the ledger, restores, and tool notes."""

from __future__ import annotations

from pathlib import Path

from conftest import context_of, prompt_payload, tool_payload

from rolling_graph.core.config import load_settings
from rolling_graph.core.model import make_edge, make_node
from rolling_graph.hook import handle_event
from rolling_graph.render.lod import estimate_tokens
from rolling_graph.replay.run import ReplayOptions, replay
from rolling_graph.store.sidecar import SidecarStore

SID = "inject-session"
ROOT = Path(__file__).resolve().parents[2]


def send(event: str, payload: dict) -> str:
    return context_of(handle_event(event, payload, load_settings()))


def start(source: str = "startup") -> str:
    return send("session-start", {"session_id": SID, "cwd": "/home/dev/app", "source": source, "transcript_path": "/nonexistent"})


def test_a_new_decision_is_told_once_and_not_repeated() -> None:
    start()
    first = send("user-prompt-submit", prompt_payload(SID, "For the cache, let's go with Redis."))
    assert "Use Redis" in first
    again = send("user-prompt-submit", prompt_payload(SID, "ok, continue"))
    assert again == "", "nothing new since the last note: nothing injected"
    later = send("user-prompt-submit", prompt_payload(SID, "fine, carry on"))
    assert later == ""


def test_a_correction_is_news_even_about_a_known_decision() -> None:
    start()
    send("user-prompt-submit", prompt_payload(SID, "For email, let's go with Resend."))
    text = send("user-prompt-submit", prompt_payload(SID, "Actually, not Resend. Use Bento instead."))
    assert "[correction] Use Bento" in text
    assert "supersedes (older, do not follow): Use Resend" in text


def test_compaction_restores_the_full_block() -> None:
    start()
    send("user-prompt-submit", prompt_payload(SID, "For the cache, let's go with Redis."))
    send("user-prompt-submit", prompt_payload(SID, "We decided to deploy on Render."))
    restored = start("compact")
    assert restored.startswith('<rolling-graph-memory source="hot graph"')
    assert "Use Redis" in restored and "Deploy on Render" in restored
    # And the ledger restarted from that block: the next prompt adds nothing.
    assert send("user-prompt-submit", prompt_payload(SID, "go on")) == ""


def test_the_compaction_summary_is_fed_to_the_probe(tmp_path: Path) -> None:
    transcript = tmp_path / "t.jsonl"
    transcript.write_text(
        '{"type":"system","subtype":"compact_boundary"}\n'
        '{"type":"user","isCompactSummary":true,"message":{"role":"user","content":"Summary: we chose Terraform for infra."}}\n'
    )
    start()
    text = send("session-start", {"session_id": SID, "cwd": "/home/dev/app", "source": "compact", "transcript_path": str(transcript)})
    assert "Terraform" in text


def test_a_tool_touching_a_file_tied_to_a_decision_gets_one_note() -> None:
    """A decision the conversation has not been told (e.g. pulled from the warm graph)."""
    start()
    decision = make_node("Use argon2 for password hashing", "technical", "decision")
    file_node = make_node("src/auth/hash.py", "technical", "file")
    ops = [
        {"op": "add", "path": f"/nodes/{decision['id']}", "value": decision},
        {"op": "add", "path": f"/nodes/{file_node['id']}", "value": file_node},
        {"op": "add", "path": f"/edges/{decision['id']}|edits|{file_node['id']}", "value": make_edge(decision["id"], "edits", file_node["id"])},
    ]
    SidecarStore(load_settings()).apply_ops(SID, ops, kind="pull", rationale="from the warm graph")
    edit = tool_payload(SID, "Edit", {"file_path": "/home/dev/app/src/auth/hash.py", "old_string": "a", "new_string": "b"})
    note = send("post-tool-use", edit)
    assert "Memory about src/auth/hash.py" in note and "Use argon2 for password hashing" in note
    assert send("post-tool-use", edit) == "", "once"


def test_a_decision_already_told_is_not_repeated_on_tool_use() -> None:
    start()
    told = send("user-prompt-submit", prompt_payload(SID, "Let's go with argon2 for password hashing in src/auth/hash.py."))
    assert "Use argon2" in told
    edit = tool_payload(SID, "Edit", {"file_path": "/home/dev/app/src/auth/hash.py", "old_string": "a", "new_string": "b"})
    assert send("post-tool-use", edit) == ""


def test_a_tool_touching_unrelated_files_gets_nothing() -> None:
    start()
    send("user-prompt-submit", prompt_payload(SID, "Let's go with argon2 for password hashing."))
    assert send("post-tool-use", tool_payload(SID, "Read", {"file_path": "/home/dev/app/README.md"})) == ""


def test_every_injection_is_counted() -> None:
    start()
    text = send("user-prompt-submit", prompt_payload(SID, "For the cache, let's go with Redis."))
    counters = SidecarStore(load_settings()).load(SID)["counters"]
    assert counters["injections"] == 1
    assert counters["injected_tokens"] == estimate_tokens(text, 3.0)


def test_a_tool_heavy_session_injects_at_most_five_budgets_in_total(tmp_path: Path) -> None:
    result = replay([ROOT / "fixtures" / "transcripts" / "tool_heavy.jsonl"], options=ReplayOptions(probe="offline", mode="sync", budget=800), home=tmp_path)
    summary = result.summary()
    tool_events = summary["events_by_kind"].get("PostToolUse", 0)
    assert tool_events >= 150
    assert summary["cumulative_injected_tokens"] <= 5 * 800, summary["cumulative_injected_tokens"]


def test_the_ledger_records_the_nodes_the_block_showed_not_every_label_it_contains() -> None:
    """The renderer says which nodes it gave a line; a label that only happens to occur in
    the block's text (here inside another node's label) was not told."""
    from rolling_graph.core.model import new_document
    from rolling_graph.render.inject import DocView, restart_ledger
    from rolling_graph.render.lod import render_lod_shown

    doc = new_document("ledger-ids")
    cache = make_node("Use Redis for the cache", "technical", "decision")
    redis = make_node("Redis", "technical", "concept")  # unconnected, light: only counted
    cache["weight"], redis["weight"] = 0.9, 0.1
    doc["nodes"] = {cache["id"]: cache, redis["id"]: redis}
    doc["focus"] = [cache["id"]]
    text, shown = render_lod_shown(doc, load_settings().render)  # the full block, and the ledger restarted from it
    restart_ledger(DocView(doc), doc, shown)
    assert "Use Redis for the cache" in text and "Further: technical 1" in text
    assert sorted(doc["ledger"]["told"]) == [cache["id"]]


def test_repeating_an_earlier_prompt_does_not_restore_it_in_full_again() -> None:
    # Every prompt becomes a request node; a later "continue" must not name the earlier one.
    from conftest import context_of, prompt_payload

    from rolling_graph.hook import handle_event

    said = [context_of(handle_event("user-prompt-submit", prompt_payload("rq1", "continue please"))) for _ in range(12)]
    # The dead man's switch has probed by now; "continue please" is no request at all (a
    # nudge to go on: issue 33), so nothing ever names it back.
    from rolling_graph.core.config import load_settings
    from rolling_graph.store.sidecar import SidecarStore

    nodes = SidecarStore(load_settings()).load("rq1")["nodes"].values()
    assert not any(n["kind"] == "request" and n["label"] == "continue please" for n in nodes)
    assert all("[request] continue please" not in text for text in said), said


def test_a_named_branch_is_restored_once_not_on_every_mention() -> None:
    start()
    send("user-prompt-submit", prompt_payload(SID, "For the cache, let's go with Redis."))
    named = send("user-prompt-submit", prompt_payload(SID, "Remind me why Redis?"))
    # The decision that goes with Redis was told with the first prompt's news: naming Redis
    # restores names the conversation was not told, and there are none (the lod tests show
    # a branch that has some).
    assert "You named" not in named
    again = send("user-prompt-submit", prompt_payload(SID, "And Redis, once more?"))
    assert "You named" not in again, "told as it stands: naming it again restores nothing"
