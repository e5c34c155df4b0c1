"""The parts the offline probe folds tool calls with: paths, tool data, command output,
facts validation, the gate's path settling and the transcript tail."""

from __future__ import annotations

import json
import tempfile
from datetime import UTC, datetime
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rolling_graph.capture.events import event_from_payload
from rolling_graph.capture.gate import check
from rolling_graph.capture.tools import parse_tool
from rolling_graph.core.config import GateSettings
from rolling_graph.core.filepaths import file_id, file_label, is_harness_path, relativize
from rolling_graph.core.model import new_document, new_gate_state
from rolling_graph.core.patch import PatchRejected, validate_ops
from rolling_graph.probe import tool_output as out
from rolling_graph.probe.code_names import code_names, is_code_name, pattern_names
from rolling_graph.probe.transcript_tail import attach_names, merge, read_assistant_text

NOW = datetime(2026, 11, 25, 21, 0, tzinfo=UTC)
ROOT = "/home/USER/src/app"


# -- paths -------------------------------------------------------------------------------------
def test_a_file_is_keyed_by_its_path_relative_to_the_root_whichever_way_it_is_named() -> None:
    absolute = relativize(f"{ROOT}/billing/proration.py", ROOT)
    relative = relativize("billing/proration.py", ROOT)
    from_subdir = relativize("proration.py", ROOT, f"{ROOT}/billing")
    assert absolute == relative == from_subdir == "billing/proration.py"
    assert file_id(absolute) == file_id(relative) == "billing-proration-py"
    assert relativize("/home/USER/other/x.py", ROOT) == "~/other/x.py"  # outside: absolute, home shortened


def test_a_long_label_elides_directories_never_the_file_name() -> None:
    path = "services/billing/internal/very/deep/package/structure/for/proration/engines/annual/proration_engine.py"
    label = file_label(path, 60)
    assert len(label) <= 60 and label.endswith("/proration_engine.py") and "…" in label and label.startswith("services/")
    assert file_id(path) != file_id(path.replace("annual", "monthly"))  # long ids stay distinct
    assert len(file_id(path)) <= 64


def test_every_file_the_corpus_measure_counts_is_a_file_to_the_extractor() -> None:
    from rolling_graph.core.filepaths import SOURCE_EXTENSIONS, looks_like_file
    from rolling_graph.evaluation.corpus import SOURCE_EXTENSIONS as MEASURED

    assert MEASURED <= SOURCE_EXTENSIONS, sorted(MEASURED - SOURCE_EXTENSIONS)
    assert looks_like_file("docs/intro.mdx") and looks_like_file("src/fft.cxx") and not looks_like_file("notes.xyz")


def test_harness_files_are_recognised() -> None:
    assert is_harness_path("/home/USER/.claude/plans/gentle-otter.md")
    assert is_harness_path("/tmp/claude-1000/-home-USER-src-app/tasks/b3f9c21.output")
    assert is_harness_path("/private/tmp/claude/-Users-USER-src-app/tasks/a3e3b71.output")  # macOS
    assert is_harness_path("~/.claude/projects/-home-USER-src-app/7d1e.jsonl")
    assert not is_harness_path(".claude/settings.json")  # the project's own .claude directory
    assert not is_harness_path(f"{ROOT}/billing/proration.py")


# -- tool data (the hook's structured fields) -------------------------------------------------------
def test_tool_data_keeps_what_the_probe_folds_and_flags_failures() -> None:
    bg = parse_tool("Bash", {"command": "pytest -q", "run_in_background": True}, {"stdout": "", "backgroundTaskId": "b1"}).data()
    assert bg == {"cmd": "pytest -q", "bg": "b1"}
    failed = parse_tool("Bash", {"command": "pytest -q"}, "Error: Exit code 1\n2 failed").data()
    assert failed["failed"] is True
    todos = parse_tool("TodoWrite", {"todos": [{"content": "Fix it", "status": "in_progress", "activeForm": "Fixing"},
                                               {"content": "Bad", "status": "weird"}]}, None).data()
    assert todos == {"todos": [["Fix it", "in_progress"]]}
    qa = parse_tool("AskUserQuestion", {"questions": [{"question": "Which DB?", "header": "DB", "options": []}]},
                    {"questions": [{"question": "Which DB?", "header": "DB"}], "answers": {"Which DB?": "Postgres"}}).data()
    assert qa == {"qa": [["DB", "Which DB?", "Postgres"]]}
    assert parse_tool("Read", {"file_path": "/x.py", "run_in_background": True}, {"type": "text"}).data() == {}


def test_a_failed_tool_call_from_post_tool_use_failure_is_an_error_event() -> None:
    event = event_from_payload("PostToolUseFailure", {"tool_name": "Bash", "tool_input": {"command": "npm test"},
                                                      "error": "Command failed with exit code 1"}, "e4", "2026-11-25T21:00:00Z")
    assert event["event"] == "PostToolUse" and event["error"] and event["data"]["failed"]


# -- command output -------------------------------------------------------------------------------
@pytest.mark.parametrize(("text", "counts"), [
    ("===== 2 failed, 14 passed in 0.31s =====", (2, 16)),
    ("16 passed in 0.40s", (0, 16)),
    ("Finished in 1.0 seconds\n14 doctests, 410 tests, 0 failures", (0, 410)),
    ("58 tests, 1 failure", (1, 58)),
    ("Tests:       1 failed, 11 passed, 12 total", (1, 12)),
    (" Tests  16 passed (16)", (0, 16)),
    ("test result: FAILED. 5 passed; 2 failed; 0 ignored", (2, 7)),
    ("Finished in 0.4 seconds (files took 1.2 seconds to load)\n12 examples, 1 failure", (1, 12)),  # RSpec
    ("FAILURES!\nTests: 10, Assertions: 20, Failures: 1.", (1, 10)),  # PHPUnit
    ("Failed!  - Failed:     1, Passed:    10, Skipped:     0, Total:    11, Duration: 2 s", (1, 11)),  # dotnet test
    ("compiled fine", None),
])
def test_test_runner_summaries_are_counted(text: str, counts: tuple[int, int] | None) -> None:
    assert out.test_counts(text) == counts


def test_commands_are_normalised_and_classified() -> None:
    assert out.command_parts("cd /home/USER/src/app && python -m pytest -q tests 2>&1 | tail -5") == ["python -m pytest -q tests"]
    assert out.classify("python -m pytest -q tests") == ("test", "pytest")
    assert out.classify("mix test test/a_test.exs") == ("test", "mix test")
    assert out.classify("npx vitest run") == ("test", "vitest")
    assert out.classify("mix credo --strict") == ("check", "mix credo")
    assert out.classify("bd update app-3 --status in_progress") == ("tracker", "bd")
    assert out.classify("git status") is None
    assert out.bd_command("bd update app-3.1 --status=in_progress") == ("update", ["app-3.1"], {"status": "in_progress"})
    assert out.commit_result("[main 4c1d9e2] fix: one line\n 1 file changed") == ("4c1d9e2", "fix: one line")


def test_a_long_commands_label_ends_on_a_whole_word_and_its_id_is_unchanged() -> None:
    from rolling_graph.probe.offline_commands import COMMAND_CHARS, command_label

    command = "mix credo lib/spotter_web/live/session_live.ex lib/spotter/services/transcript_renderer.ex"
    assert command_label(command) == "mix credo lib/spotter_web/live/session_live.ex …"  # not "…/transcript_r"
    assert command_label("mix test") == "mix test"
    one_word = "node " + "x" * 100  # cutting after a whole word would keep too little
    assert command_label(one_word) == one_word[: COMMAND_CHARS - 1] + "…"
    assert all(len(command_label(c)) <= COMMAND_CHARS for c in (command, one_word, "a " * 60))


def test_a_long_command_keeps_the_node_id_it_always_had(isolated_home: Path) -> None:
    """Its id is the slug of its first 80 characters, as before labels were cut on a word:
    sessions recorded before and after share one node."""
    from conftest import run_hook, tool_payload

    from rolling_graph.core.config import load_settings
    from rolling_graph.core.ids import slugify
    from rolling_graph.probe.offline_commands import COMMAND_CHARS
    from rolling_graph.store.sidecar import SidecarStore

    sid = "long-command"
    command = "mix test test/spotter/services/transcript_renderer_test.exs test/spotter_web/live/session_live_test.exs"
    ran = {**tool_payload(sid, "Bash", {"command": command}), "hook_event_name": "PostToolUseFailure",
           "error": "Exit code 2\n  1) test renders a row (TranscriptRendererTest)\nFinished in 0.2 seconds\n12 tests, 1 failure"}
    del ran["tool_response"]
    assert run_hook("post-tool-use-failure", ran).returncode == 0
    again = tool_payload(sid, "Bash", {"command": command}, {"stdout": "Finished in 0.2 seconds\n12 tests, 0 failures", "stderr": ""})
    assert run_hook("post-tool-use", again).returncode == 0
    assert run_hook("stop", {"session_id": sid, "transcript_path": f"/tmp/{sid}.jsonl", "cwd": "/home/dev/app", "hook_event_name": "Stop"}).returncode == 0
    node = SidecarStore(load_settings()).load(sid)["nodes"][slugify(command[:COMMAND_CHARS])]
    assert node["kind"] == "command" and node["label"] == "mix test test/spotter/services/transcript_renderer_test.exs …"
    assert node["facts"]["runs"] == 2 and node["facts"]["outcome"] == "pass"


def test_code_names_are_identifiers_not_phrases_or_files() -> None:
    text = "call `prorate_amount/3` then Billing.Proration.apply and @max_lines 5 from proration.py, skip user data"
    assert code_names(text) == ["prorate_amount/3", "Billing.Proration.apply", "@max_lines"]
    assert not is_code_name("Enum.take(@max") and not is_code_name("max_lines 5") and not is_code_name("proration.py")
    assert pattern_names("TranscriptRenderer\\.render\\b|load_transcript") == ["TranscriptRenderer.render", "load_transcript"]


# -- facts through validation --------------------------------------------------------------------
def _doc_with(kind: str, facts: dict[str, object] | None = None) -> dict:
    doc = new_document("s")
    ops, _ = validate_ops([{"op": "add", "path": "/nodes/n", "value": {"label": "n", "domain": "technical", "kind": kind,
                                                                       **({"facts": facts} if facts else {})}}], doc, NOW, trusted=True)
    import jsonpatch

    jsonpatch.apply_patch(doc, ops, in_place=True)
    return doc


def test_a_model_may_state_a_task_status_but_never_write_counts() -> None:
    doc = _doc_with("task", {"status": "pending", "ref": "app-3"})
    ops, _ = validate_ops([{"op": "replace", "path": "/nodes/n/facts/status", "value": "completed"}], doc, NOW)
    assert ops == [{"op": "add", "path": "/nodes/n/facts", "value": {"status": "completed", "ref": "app-3"}}]
    with pytest.raises(PatchRejected, match="deterministic code"):
        validate_ops([{"op": "add", "path": "/nodes/n/facts", "value": {"ref": "other"}}], doc, NOW)
    file_doc = _doc_with("file")
    with pytest.raises(PatchRejected, match="edits"):
        validate_ops([{"op": "add", "path": "/nodes/n/facts", "value": {"edits": 99}}], file_doc, NOW)
    with pytest.raises(PatchRejected, match="not a known fact"):
        validate_ops([{"op": "add", "path": "/nodes/n/facts", "value": {"notes": "anything"}}], doc, NOW, trusted=True)


def test_facts_are_typed_and_bounded_even_from_our_own_code() -> None:
    doc = _doc_with("file")
    for bad in ({"edits": -1}, {"edits": True}, {"last_op": "delete"}, {"path": 3}, {"by": "model"}):
        with pytest.raises(PatchRejected):
            validate_ops([{"op": "add", "path": "/nodes/n/facts", "value": bad}], doc, NOW, trusted=True)
    ops, _ = validate_ops([{"op": "add", "path": "/nodes/n/facts", "value": {"what": "`a`\n" + "x" * 500}}], doc, NOW, trusted=True)
    assert len(ops[0]["value"]["what"]) == 120 and "\n" not in ops[0]["value"]["what"]


# -- the gate settles paths ------------------------------------------------------------------------
def _tool(path: str, cwd: str) -> dict:
    return event_from_payload("PostToolUse", {"tool_name": "Read", "tool_input": {"file_path": path}, "tool_response": {},
                                              "cwd": cwd, "transcript_path": "/home/USER/.claude/projects/x/s.jsonl"}, "e1", "2026-11-25T21:00:00Z")


def test_paths_are_relative_to_the_first_cwd_even_after_a_cd() -> None:
    gate = new_gate_state()
    first = _tool(f"{ROOT}/billing/proration.py", ROOT)
    check(first, {}, gate, GateSettings())
    assert first["paths"] == ["billing/proration.py"] and gate["transcript"].endswith("s.jsonl")
    later = _tool("js/app.js", f"{ROOT}/assets")  # after `cd assets`
    check(later, {}, gate, GateSettings())
    assert later["paths"] == ["assets/js/app.js"] and later["cwd"] == "assets"
    plan = _tool("/home/USER/.claude/plans/x.md", ROOT)
    check(plan, {}, gate, GateSettings())
    assert plan["paths"] == []


def test_an_answer_to_claudes_question_fires_the_probe() -> None:
    gate = new_gate_state()
    event = event_from_payload("PostToolUse", {"tool_name": "AskUserQuestion", "tool_input": {"questions": []},
                                               "tool_response": {"answers": {"Which DB?": "Postgres"}}, "cwd": ROOT}, "e1", "2026-11-25T21:00:00Z")
    assert "answer" in check(event, {}, gate, GateSettings())


# -- the transcript tail -----------------------------------------------------------------------------
def _line(ts: str, text: str | None = None, tool: tuple[str, dict] | None = None) -> str:
    content: list[dict] = []
    if text:
        content.append({"type": "text", "text": text})
    if tool:
        content.append({"type": "tool_use", "id": "t1", "name": tool[0], "input": tool[1]})
    return json.dumps({"type": "assistant", "timestamp": ts, "message": {"role": "assistant", "content": content}}) + "\n"


def test_the_tail_never_reads_past_the_batch_it_serves(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    path.write_text(_line("2026-11-25T21:00:01.100Z", "I'll use `load_session_data`.")
                    + _line("2026-11-25T21:00:09.000Z", "Later thoughts about `future_name`.")
                    + '{"type":"assistant","timestamp":"2026-11-25T21:00:0')  # an incomplete last line
    texts, offset = read_assistant_text(str(path), 0, "2026-11-25T21:00:05Z")
    assert [t for _, t in texts] == ["I'll use `load_session_data`."]
    again, end = read_assistant_text(str(path), offset, "2026-11-25T21:00:10Z")
    assert [t for _, t in again] == ["Later thoughts about `future_name`."]
    assert end < path.stat().st_size  # the incomplete line is left for later


def test_the_tail_reads_a_row_appended_to_a_line_not_ended(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    joined = _line("2026-11-25T21:00:01Z", "Keeping `parse_rows` as is.").rstrip("\n") + '{"type":"summary","summary":"Parser fix"}\n'
    path.write_text(joined + _line("2026-11-25T21:00:03Z", "Then `emit_rows`."))
    texts, _ = read_assistant_text(str(path), 0, "2026-11-25T21:00:05Z")
    assert [t for _, t in texts] == ["Keeping `parse_rows` as is.", "Then `emit_rows`."]
    # a line whose second row was written after the batch's moment waits, whole, for the next batch
    late = _line("2026-11-25T21:00:01Z", "First.").rstrip("\n") + _line("2026-11-25T21:00:09Z", "Second.")
    path.write_text(late)
    texts, offset = read_assistant_text(str(path), 0, "2026-11-25T21:00:05Z")
    assert texts == [] and offset == 0


def test_assistant_text_is_merged_in_time_order_and_edit_names_reach_their_event(tmp_path: Path) -> None:
    batch = [{"id": "e7", "event": "PostToolUse", "at": "2026-11-25T21:00:04Z", "text": "", "tool": "Write", "paths": ["lib/a.py"],
              "error": False, "reasons": []}]
    merged = merge(batch, [("2026-11-25T21:00:02.500Z", "Writing the module.")])  # type: ignore[arg-type]
    assert [e["event"] for e in merged] == ["AssistantText", "PostToolUse"] and merged[0]["id"] == "a7"
    path = tmp_path / "t.jsonl"
    content = "def prorate_amount(x):\n    return apply_plan_change(x)\n" + "\n".join(f"v_{i} = {i}" for i in range(900))
    path.write_text(_line("2026-11-25T21:00:03.000Z", tool=("Write", {"file_path": "/r/lib/a.py", "content": content})))
    edits: list = []
    read_assistant_text(str(path), 0, "2026-11-25T21:00:04Z", edits=edits)
    attach_names(batch, edits)  # type: ignore[arg-type]
    assert batch[0]["data"]["names"][:2] == ["prorate_amount", "apply_plan_change"]


def test_a_tool_call_of_the_wrong_shape_in_the_transcript_is_skipped_not_fatal(tmp_path: Path) -> None:
    # A tool name that is an object was looked up in a dict and raised (TypeError: unhashable),
    # so the probe lost the whole batch; a MultiEdit edit whose new code is not text gave
    # its repr's words as names.
    path = tmp_path / "t.jsonl"
    path.write_text(_line("2026-11-25T21:00:01.000Z", "Before.", tool=({"name": "Edit"}, {"file_path": "/r/a.py"}))  # type: ignore[arg-type]
                    + _line("2026-11-25T21:00:02.000Z", tool=("MultiEdit", {"file_path": "/r/b.py", "edits": [
                        {"new_string": {"odd_key": "odd_value"}}, {"new_string": "def kept_name(): pass"}]}))
                    + _line("2026-11-25T21:00:03.000Z", "After."))
    edits: list = []
    texts, _ = read_assistant_text(str(path), 0, "2026-11-25T21:00:04Z", edits=edits)
    assert [t for _, t in texts] == ["Before.", "After."]
    [(tool, file, names, mentions)] = edits
    assert (tool, file) == ("MultiEdit", "/r/b.py") and "kept_name" in names
    assert not any("odd" in n for n in names + mentions)


_JSON = st.recursive(st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=20)
                     | st.sampled_from(["text", "tool_use", "Edit", "MultiEdit", "Write", "/r/a.py", "def f_g(): h_i()"]),
                     lambda inner: st.lists(inner, max_size=3) | st.dictionaries(
                         st.sampled_from(["type", "message", "content", "text", "name", "input", "file_path", "new_string",
                                          "old_string", "edits", "isSidechain", "timestamp"]), inner, max_size=5), max_leaves=20)
_BLOCK = st.fixed_dictionaries({"type": st.sampled_from(["text", "tool_use"])}, optional={"text": _JSON, "name": _JSON, "input": _JSON})


@settings(max_examples=150, deadline=None)
@given(lines=st.lists(_JSON | st.fixed_dictionaries({"type": st.just("assistant"), "message": _JSON | st.fixed_dictionaries(
    {"content": st.lists(_BLOCK, max_size=3)})}, optional={"timestamp": _JSON, "isSidechain": _JSON}), max_size=6),
       offset=st.integers(-2, 300), align=st.booleans())
def test_the_tail_reads_any_json_lines_without_raising(lines: list, offset: int, align: bool) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "t.jsonl"
        path.write_text("".join(json.dumps(line) + "\n" for line in lines))
        edits: list = []
        texts, end = read_assistant_text(str(path), offset, None, align=align, edits=edits)
        assert 0 <= end <= path.stat().st_size
        assert all(isinstance(t, str) and t for _, t in texts)
        assert all(isinstance(tool, str) and isinstance(file, str) for tool, file, _, _ in edits)


def test_one_build_script_is_one_family_wherever_it_is_run_from() -> None:
    assert out.classify("node assets/build.js") == out.classify("node build.js") == ("check", "node build.js")
    assert out.cd_target("cd /home/USER/src/app/assets && node build.js 2>&1") == "/home/USER/src/app/assets"
    assert out.is_adhoc('head -c 500 a.jsonl | python3 -c "import json"') and not out.is_adhoc("git push")
    # A one-liner is a look whatever options stand before its -e; a script is a step.
    assert out.is_adhoc("ruby -ryaml -e 'YAML.load_file(\"a.yml\")'") and out.is_adhoc("node --no-warnings -e 1")
    assert not out.is_adhoc("python3 scripts/migrate.py -c prod") and not out.is_adhoc("bash -x deploy.sh")


def test_a_failing_run_reported_by_post_tool_use_failure_then_a_pass_through_the_hook(isolated_home: Path) -> None:
    """Claude Code reports a command that exits non-zero as PostToolUseFailure: the hook
    takes it as the same tool event, and the next passing run resolves its error."""
    from conftest import run_hook, tool_payload

    from rolling_graph.core.config import load_settings
    from rolling_graph.store.sidecar import SidecarStore

    sid = "ptuf-session"
    failure = {**tool_payload(sid, "Bash", {"command": "python -m pytest -q tests"}), "hook_event_name": "PostToolUseFailure",
               "error": "Exit code 1\nFAILED tests/test_x.py::test_a - AssertionError: assert 1 == 2\n1 failed, 3 passed in 0.1s"}
    del failure["tool_response"]
    assert run_hook("post-tool-use-failure", failure).returncode == 0
    ok = tool_payload(sid, "Bash", {"command": "python -m pytest -q tests"}, {"stdout": "4 passed in 0.1s", "stderr": ""})
    assert run_hook("post-tool-use", ok).returncode == 0
    assert run_hook("stop", {"session_id": sid, "transcript_path": f"/tmp/{sid}.jsonl", "cwd": "/home/dev/app", "hook_event_name": "Stop"}).returncode == 0
    doc = SidecarStore(load_settings()).load(sid)
    command = doc["nodes"]["python-m-pytest-q-tests"]
    assert command["facts"]["runs"] == 2 and command["facts"]["outcome"] == "pass"
    assert command["facts"]["result"] == "1 failed of 4 → 0 failed of 4"
    (error,) = [n for n in doc["nodes"].values() if n["kind"] == "error"]
    assert error["label"].startswith("FAILED tests/test_x.py::test_a") and error["facts"]["state"] == "resolved"


def test_a_projects_task_runner_and_swifts_tools_run_its_tests_and_checks() -> None:
    # `mise run test`, `just test`, `swift test`, `xcodebuild … test`: the project's test runs,
    # each its own family, so a passing lint does not settle a failing test run.
    assert out.classify("mise run test") == ("test", "mise run test")
    assert out.classify("mise run test:integration") == ("test", "mise run test:integration")
    assert out.classify("mise run lint") == ("check", "mise run lint")
    assert out.classify("just test") == ("test", "just test")
    assert out.classify("golangci-lint run ./...") == ("check", "golangci-lint run")
    assert out.classify("swift test") == ("test", "swift test")
    assert out.classify("swift build") == ("check", "swift build")
    assert out.classify("xcodebuild -scheme App -destination 'platform=iOS Simulator,name=iPhone 15' test") == ("test", "xcodebuild test")
    assert out.classify("xcodebuild build -scheme App") == ("check", "xcodebuild build")
    assert out.classify("mise run fmt") is None  # a formatter changes files: no check
    # A task is its own family: a passing `mise run fmt` is no pass of `mise run deploy`.
    assert out.family_of("mise run fmt") == "mise run fmt" and out.family_of("npm run dev -- --port 3") == "npm run dev"
    assert out.family_of("cargo run --bin x") == "cargo run"
    assert out.test_counts("Test Suite 'All tests' failed.\nExecuted 12 tests, with 1 failure (0 unexpected) in 0.5 (0.6) seconds") == (1, 12)
