"""The tool index: a tool result reads the graph's node ids and the decisions tied to files
from ``<sid>.tool-index.json``, not the whole hook index (labels, news order)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from conftest import context_of, tool_payload

from rolling_graph.core.config import load_settings
from rolling_graph.core.model import make_edge, make_node
from rolling_graph.hook import handle_event
from rolling_graph.store.files import SessionFiles
from rolling_graph.store.sidecar import SidecarStore

SID = "tool-index-session"
DECISION = make_node("Use argon2 for password hashing", "technical", "decision")
HASH_FILE = make_node("src/auth/hash.py", "technical", "file")
CONFIG_FILE = make_node("src/config.py", "technical", "file")
EDIT = tool_payload(SID, "Edit", {"file_path": "/home/dev/app/src/auth/hash.py", "old_string": "a", "new_string": "b"})


def send(event: str, payload: dict) -> str:
    return context_of(handle_event(event, payload, load_settings()))


def files(store: SidecarStore) -> tuple[Path, Path]:
    return Path(store.files.path(SID, "tool-index.json")), Path(store.files.path(SID, "index.json"))


def a_session_with_a_decision_about_a_file() -> SidecarStore:
    """A decision the conversation has not been told (as if pulled from the warm graph)."""
    send("session-start", {"session_id": SID, "cwd": "/home/dev/app", "source": "startup", "transcript_path": "/nonexistent"})
    ops = [
        {"op": "add", "path": f"/nodes/{DECISION['id']}", "value": DECISION},
        {"op": "add", "path": f"/nodes/{HASH_FILE['id']}", "value": HASH_FILE},
        {"op": "add", "path": f"/nodes/{CONFIG_FILE['id']}", "value": CONFIG_FILE},
        {"op": "add", "path": f"/edges/{DECISION['id']}|edits|{HASH_FILE['id']}", "value": make_edge(DECISION["id"], "edits", HASH_FILE["id"])},
    ]
    store = SidecarStore(load_settings())
    store.apply_ops(SID, ops, kind="pull", rationale="from the warm graph")
    return store


def unseen_paths(store: SidecarStore) -> int:
    """Paths new to the graph that tool results brought in (the gate fires on a few)."""
    return int(store.load_state(SID)["gate"].get("unseen_paths", 0))


def test_a_graph_write_leaves_a_tool_index_of_every_node_and_the_decisions_tied_to_files() -> None:
    store = a_session_with_a_decision_about_a_file()
    tool_path, index_path = files(store)
    tool, index = json.loads(tool_path.read_text()), json.loads(index_path.read_text())
    assert set(tool["ids"]) == set(store.load(SID)["nodes"]) == {DECISION["id"], HASH_FILE["id"], CONFIG_FILE["id"]}
    assert tool["file_intents"] == {HASH_FILE["id"]: [DECISION["id"]]}
    assert tool["fp"] == {DECISION["id"]: index["fp"][DECISION["id"]]}
    assert tool["journal_bytes"] == index["journal_bytes"] > 0
    assert len(tool_path.read_bytes()) < len(index_path.read_bytes())


def test_a_tool_result_reads_the_tool_index_and_not_the_hook_index() -> None:
    store = a_session_with_a_decision_about_a_file()
    tool_path, index_path = files(store)
    index_path.write_text("{ not json")  # read by the hook, this would be rebuilt from the graph
    note = send("post-tool-use", EDIT)
    assert "Memory about src/auth/hash.py" in note and "Use argon2 for password hashing" in note
    assert index_path.read_text() == "{ not json", "the hook index was never read"
    assert send("post-tool-use", EDIT) == "", "told once"


def test_to_the_gate_a_file_the_graph_holds_is_not_new_and_another_is() -> None:
    store = a_session_with_a_decision_about_a_file()
    before = unseen_paths(store)
    send("post-tool-use", tool_payload(SID, "Read", {"file_path": "/home/dev/app/src/config.py"}))
    assert unseen_paths(store) == before, "the tool index knows src/config.py"
    send("post-tool-use", tool_payload(SID, "Read", {"file_path": "/home/dev/app/src/billing/invoice.py"}))
    assert unseen_paths(store) == before + 1


def test_a_missing_or_stale_tool_index_is_not_trusted_and_is_written_again() -> None:
    store = a_session_with_a_decision_about_a_file()
    tool_path, _ = files(store)
    good = json.loads(tool_path.read_text())
    # Stale (another journal position) and wrong: it would say the graph is empty.
    tool_path.write_text(json.dumps({**good, "ids": [], "file_intents": {}, "journal_bytes": good["journal_bytes"] - 1}))
    before = unseen_paths(store)
    note = send("post-tool-use", EDIT)
    assert "Use argon2 for password hashing" in note, "the hook index still ties the decision to the file"
    assert unseen_paths(store) == before, "and still knows the file"
    assert json.loads(tool_path.read_text()) == good, "written again from the hook index"
    tool_path.unlink()
    send("post-tool-use", tool_payload(SID, "Read", {"file_path": "/home/dev/app/src/config.py"}))
    assert unseen_paths(store) == before
    assert json.loads(tool_path.read_text()) == good


def test_the_tool_note_reads_the_decision_from_the_branch_cache_not_the_whole_graph(monkeypatch: pytest.MonkeyPatch) -> None:
    store = a_session_with_a_decision_about_a_file()
    home = Path(store.dir)
    backup = home.with_name("sessions-before-note")
    shutil.copytree(home, backup)
    loads: list[str] = []
    whole_graph = SessionFiles.load_graph_locked

    def counted(self: SessionFiles, sid: str) -> object:
        loads.append(sid)
        return whole_graph(self, sid)

    monkeypatch.setattr(SessionFiles, "load_graph_locked", counted)
    with_cache = send("post-tool-use", EDIT)
    ledger_with, loads_with = store.load_state(SID)["ledger"]["told"], len(loads)

    shutil.rmtree(home)
    shutil.copytree(backup, home)
    Path(store.files.path(SID, "branches.cache")).unlink()
    loads.clear()
    without_cache = send("post-tool-use", EDIT)
    assert "Use argon2 for password hashing" in with_cache and with_cache == without_cache
    assert store.load_state(SID)["ledger"]["told"] == ledger_with
    # The same work (the tests' sync probe folds the edit in), but the note itself parsed
    # the whole graph only without the cache.
    assert len(loads) == loads_with + 1


def test_a_passing_command_that_names_no_file_reads_no_index_and_the_gate_judges_the_rest_as_before(
        monkeypatch: pytest.MonkeyPatch) -> None:
    from rolling_graph.capture.gate import error_signature

    store = a_session_with_a_decision_about_a_file()
    failure = "panic: runtime error: index out of range [3] with length 3"
    known = make_node("a failure the graph holds", "technical", "error", node_id=error_signature(failure))
    store.apply_ops(SID, [{"op": "add", "path": f"/nodes/{known['id']}", "value": known}], kind="pull", rationale="test")
    reads: list[str] = []
    real = SessionFiles.load_tool_index
    monkeypatch.setattr(SessionFiles, "load_tool_index", lambda self, sid: reads.append(sid) or real(self, sid))

    def bash(stdout: str) -> None:
        send("post-tool-use", tool_payload(SID, "Bash", {"command": "go test ./..."}, {"stdout": stdout, "stderr": ""}))

    def failed(output: str) -> None:  # a non-zero exit, as Claude Code reports it
        send("post-tool-use", tool_payload(SID, "Bash", {"command": "go test ./..."}, f"Error: Exit code 2\n{output}"))

    for _ in range(3):  # (past the gate's cooldown, so that a new failure would fire it)
        bash("ok  \tgithub.com/dev/app\t0.2s")
    assert reads == [], "a passing command that names no file: nothing to look up"
    failed(failure)
    assert reads == [SID], "a failure is looked up among the graph's nodes"
    assert "error" not in store.load_state(SID)["counters"]["gate_reasons"], "the graph already holds it: no news"
    failed(failure.replace("[3] with length 3", "[9] with length 2").replace("index out of range", "nil map write"))
    assert store.load_state(SID)["counters"]["gate_reasons"].get("error") == 1, "a failure the graph does not hold is news"
    send("post-tool-use", tool_payload(SID, "Read", {"file_path": "/home/dev/app/src/config.py"}))
    assert reads == [SID, SID, SID], "a file read is looked up"


def test_an_error_this_sessions_own_tool_output_showed_is_no_news_at_the_next_prompt() -> None:
    # The conversation has the output that failed; telling it again at the next prompt cost
    # the entire-cli chain's notes a third of their characters. An error an earlier session
    # left (pulled from the warm graph) or one the user reported is still news.
    from rolling_graph.core.model import new_document
    from rolling_graph.store.index import build_index, delta_order

    doc = new_document("s")
    seen = make_node("rewind.go:579:13: undefined: agent", "technical", "error", node_id="err-seen")
    seen["facts"] = {"by": "tool", "state": "open"}
    earlier = make_node("testenv.go:40:26: undefined: defaultAgent", "technical", "error", node_id="err-earlier")
    earlier.update({"facts": {"by": "tool", "state": "open"}, "pulled": True})
    reported = make_node("the build fails on CI with a timeout", "technical", "error", node_id="err-reported")
    reported["facts"] = {"by": "user", "state": "open"}
    for node in (seen, earlier, reported):
        doc["nodes"][node["id"]] = node
    doc["journal_seq"] = 3
    order, _ = delta_order(build_index(doc), {"seq": 0, "told": {}, "owed": []})
    assert "err-seen" not in order
    assert {"err-earlier", "err-reported"} <= set(order)


def test_a_prompt_names_a_node_written_against_cjk_text_but_not_inside_a_longer_word() -> None:
    from rolling_graph.store.index import names

    assert names("config.tsのloadconfigがエラーになる", "load-config", "loadconfig")
    assert names("请修复loadconfig函数", "load-config", "loadconfig")
    assert not names("reloadconfig is slow", "load-config", "loadconfig")
    assert not names("la caféteria", "caf-x", "caf")
    assert not names("перезагрузкаloadconfig", "load-config-x", "loadconfig")
