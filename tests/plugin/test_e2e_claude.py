"""End to end: the real Claude Code CLI runs our plugin against the stand-in model.

One scripted session (module fixture, default async probe mode) is played once and several
tests read it:

1. a prompt states a decision; the model reads two files and answers;
2. ``--resume``: a second prompt with two more tool calls (so the decision is not in the
   verbatim tail a compaction keeps);
3. ``-p /compact --resume``: the stand-in answers the compaction with a summary that says nothing;
4. ``--resume``: one more prompt, whose request must carry the decision in our context;
5. a brand-new session in the same project (warm graph).

Run: ``pytest -m e2e tests/plugin/test_e2e_claude.py`` (needs ``claude`` on PATH; see .ci/run).
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from claude_harness import (
    CHECKOUT,
    CLAUDE,
    PLUGIN_DIR,
    ClaudeRun,
    Sandbox,
    hook_contexts,
    hook_errors,
    hook_outputs,
    kebab,
    plugin_name,
    registered_hooks,
    stderr_hook_errors,
    text_outside_hook_contexts,
    write_noop_plugin,
)
from standin_model import RecordedRequest, StandinModel, ToolCall, Turn

from rolling_graph.render import notes

pytestmark = [
    pytest.mark.e2e,
    pytest.mark.skipif(
        CLAUDE is None,
        reason="Claude Code CLI `claude` is not on PATH (install: npm install -g @anthropic-ai/claude-code@2.1.332)",
    ),
]

DECISION_PROMPT = "We decided to use PostgreSQL instead of SQLite for the warm store. Look at the notes."
DECISION_WORD = "PostgreSQL"
SNAPSHOT_WAIT_S = 20.0
PROBE_WAIT_S = 20.0
#: Sessions per plugin in the timing test, interleaved; the best of each is compared.
TIMING_REPEATS = 6
UNREACHABLE_DSN = "postgresql:///rolling_graph?host=/nonexistent-rolling-graph-e2e"


def read(path: Path) -> ToolCall:
    return ToolCall("Read", {"file_path": str(path)})


def bash(command: str) -> ToolCall:
    return ToolCall("Bash", {"command": command, "description": "inspect"})


def mentions_decision(text: str) -> bool:
    return DECISION_WORD.lower() in text.lower()


def wait_for_graph_to_learn_decision(rg_home: Path, session_id: str, timeout_s: float = PROBE_WAIT_S) -> bool:
    sidecar = rg_home / "sessions" / f"{session_id}.graph.json"
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        try:
            if mentions_decision(sidecar.read_text()):
                return True
        except OSError:
            pass
        time.sleep(0.1)
    return False


@dataclass
class Scenario:
    sandbox: Sandbox
    model: StandinModel
    runs: dict[str, ClaudeRun] = field(default_factory=dict)
    requests: dict[str, list[RecordedRequest]] = field(default_factory=dict)

    def play(self, name: str, *args: str, turns: tuple[Turn, ...] = ()) -> ClaudeRun:
        self.model.script(*turns)
        before = len(self.model.requests)
        run = self.sandbox.run(self.model, *args)
        self.runs[name] = run
        self.requests[name] = self.model.requests[before:]
        assert self.model.remaining_turns == 0, f"{name}: Claude Code stopped before the script ended"
        return run

    def main_requests(self, name: str) -> list[RecordedRequest]:
        return [r for r in self.requests[name] if r.kind == "main"]

    @property
    def session_id(self) -> str:
        return self.runs["decide"].session_id


@pytest.fixture(scope="module")
def warm_dsn() -> str:
    """A fresh database on the test run's shared PostgreSQL, so no hook starts its own server.

    Falls back to a DSN that cannot connect (the warm graph then stays empty and the warm test
    says so) rather than letting detached reconciles start servers nobody stops.
    """
    try:
        from warm_support import fresh_dsn

        return fresh_dsn("e2e")
    except Exception:  # noqa: BLE001 - any failure means "no warm graph here"
        return UNREACHABLE_DSN


@pytest.fixture(scope="module")
def scenario(tmp_path_factory: pytest.TempPathFactory, warm_dsn: str) -> Iterator[Scenario]:
    # The default async probe mode, as users run it: the probe is a detached process, so the
    # scenario waits for the graph to learn the decision before going on.
    sandbox = Sandbox.create(tmp_path_factory.mktemp("e2e-scenario"), ROLLING_GRAPH_DSN=warm_dsn)
    (sandbox.project / "notes.md").write_text("# Notes\n\nThe warm store keeps graphs across sessions.\n")
    (sandbox.project / "app.py").write_text("def main() -> None:\n    print('hello')\n")
    with StandinModel() as model:
        played = Scenario(sandbox, model)
        played.play(
            "decide",
            DECISION_PROMPT,
            # `ls` of a missing path fails: Claude Code reports it as PostToolUseFailure.
            turns=(Turn.tools(read(sandbox.project / "notes.md")), Turn.tools(bash("ls")),
                   Turn.tools(bash("ls missing-dir")), Turn.say("Noted.")),
        )
        sid = played.session_id
        assert wait_for_graph_to_learn_decision(sandbox.rg_home, sid), "the probe never added the decision"
        played.play(
            "resume",
            "Now look at the application code.",
            "--resume",
            sid,
            turns=(Turn.tools(read(sandbox.project / "app.py")), Turn.tools(bash("echo checked")), Turn.say("Looked.")),
        )
        played.play("compact", "/compact", "--resume", sid)
        played.play("after_compact", "What is next?", "--resume", sid, turns=(Turn.say("Next steps."),))
        yield played
    sandbox.stop_embedded_database()


@dataclass
class Validation:
    """What ``claude plugin validate`` said about one target, from either of its outputs."""

    errors: list[str]
    #: ``--json``'s report (2.1.2xx and later); ``None`` from the text of older versions.
    report: dict[str, Any] | None


def read_validation(returncode: int, stdout: str) -> Validation:
    """Read ``claude plugin validate``'s answer: the ``--json`` report, or the text that versions
    without ``--json`` print (2.1.197: ``✔ Validation passed``, or ``✘ Found N errors:`` and
    one ``❯ path: message`` line each)."""
    if stdout.lstrip().startswith("{"):
        report = json.loads(stdout)
        # "contents" lists only the files the validator had something to say about.
        errors = [str(e) for e in report["manifest"]["errors"]]
        errors += [str(e) for part in report.get("contents") or [] for e in part["errors"]]
        if returncode != 0 or not report["success"]:
            errors = errors or [f"validation failed (rc={returncode})"]
        return Validation(errors, report)
    errors = [line.strip()[1:].strip() for line in stdout.splitlines() if line.strip().startswith("❯")]
    # Only the errors count: the text also lists the plugin directory's advice, below them.
    errors = errors if "Found" in stdout.split("✘", 1)[-1][:20] else []
    if returncode != 0 or "✔ Validation passed" not in stdout:
        errors = errors or [f"validation failed (rc={returncode}): {stdout[-500:]}"]
    return Validation(errors, None)


def validate(target: Path, claude: str | None = CLAUDE) -> Validation:
    assert claude is not None
    done = subprocess.run([claude, "plugin", "validate", "--json", str(target)], capture_output=True, text=True, timeout=60)
    if done.returncode != 0 and "unknown option '--json'" in done.stderr:
        done = subprocess.run([claude, "plugin", "validate", str(target)], capture_output=True, text=True, timeout=60)
    result = read_validation(done.returncode, done.stdout)
    assert result.errors == [], f"{target}: {result.errors}"
    return result


#: What ``claude plugin validate`` 2.1.197 (no ``--json``) printed, as recorded here.
OLD_TEXT_PASSED = "Validating plugin manifest: /p/.claude-plugin/plugin.json\n\n✔ Validation passed\n"
OLD_TEXT_FAILED = ("Validating plugin manifest: /p/.claude-plugin/plugin.json\n\n✘ Found 1 error:\n\n"
                   "  ❯ name: Invalid input: expected string, received number\n\n✘ Validation failed\n")


def test_validation_reads_the_text_of_versions_without_json() -> None:
    assert read_validation(0, OLD_TEXT_PASSED) == Validation([], None)
    assert read_validation(1, OLD_TEXT_FAILED).errors == ["name: Invalid input: expected string, received number"]
    assert read_validation(1, "").errors, "no output and a failure is a failure"
    report = {"success": True, "manifest": {"errors": []}, "contents": [{"errors": ["hooks: bad"]}]}
    assert read_validation(1, json.dumps(report)).errors == ["hooks: bad"]


def test_plugin_and_marketplace_validate_without_errors() -> None:
    checkout = validate(CHECKOUT)  # the marketplace, which lists the plugin at "./plugin"
    plugin = validate(PLUGIN_DIR)
    validate(PLUGIN_DIR / ".claude-plugin" / "plugin.json")
    validate(CHECKOUT / ".claude-plugin" / "marketplace.json")

    if checkout.report is not None and plugin.report is not None:
        assert checkout.report["manifest"]["type"] == "marketplace"
        assert {hook["event"] for hook in plugin.report["provides"]["hooks"]} == set(registered_hooks())
        assert f"{plugin_name()}:graph" in plugin.report["provides"]["commands"]
        assert checkout.report["manifest"]["warnings"] == [] and plugin.report["manifest"]["warnings"] == []


def test_every_registered_event_fires_and_exits_cleanly(scenario: Scenario) -> None:
    fired = set(scenario.sandbox.fired_events())
    expected = {kebab(event) for event in registered_hooks()}

    assert expected <= fired, f"registered but never run: {sorted(expected - fired)}"
    transcript = scenario.sandbox.transcript(scenario.session_id)
    assert hook_errors(transcript) == []
    for name, run in scenario.runs.items():
        assert stderr_hook_errors(run) == [], f"{name}: {run.stderr}"
    assert sorted(scenario.sandbox.rg_home.glob("sessions/*.graph.json")), "no sidecar was written"
    assert scenario.sandbox.plugin_data_sessions() == [], "state was split into the plugin's data directory"


def test_our_context_reaches_the_model_as_a_hook_system_message(tmp_path: Path, warm_dsn: str) -> None:
    # Sync probe mode makes the live injection deterministic: the probe has run before the
    # UserPromptSubmit hook renders, so the decision is "new" in this very prompt's context.
    sandbox = Sandbox.create(tmp_path, ROLLING_GRAPH_PROBE_MODE="sync", ROLLING_GRAPH_DSN=warm_dsn)
    (sandbox.project / "notes.md").write_text("# Notes\n")
    with StandinModel([Turn.tools(read(sandbox.project / "notes.md")), Turn.say("Noted.")]) as model:
        sandbox.run(model, DECISION_PROMPT)
        requests = model.requests_of("main")
    contexts = [context for request in requests for context in hook_contexts(request)]
    events = {event for event, _ in contexts}

    assert contexts, "no '<Event> hook additional context:' system text in any request"
    assert all(re.fullmatch(r"(UserPromptSubmit|SessionStart|PostToolUse:\w+)", event) for event in events), events
    prompt_contexts = [text for event, text in contexts if event == "UserPromptSubmit"]
    assert any(mentions_decision(text) for text in prompt_contexts), contexts
    sandbox.stop_embedded_database()


def test_decision_survives_a_compaction_whose_summary_is_empty(scenario: Scenario) -> None:
    transcript = scenario.sandbox.transcript(scenario.session_id)
    compact_context = hook_outputs(transcript, "SessionStart:compact")
    (next_request,) = scenario.main_requests("after_compact")[:1]

    assert [r.kind for r in scenario.requests["compact"]].count("compact") == 1
    assert any(mentions_decision(text) for text in compact_context), compact_context
    assert any(text.strip()[:200] in next_request.text() for text in compact_context)
    assert any(event == "SessionStart" and mentions_decision(text) for event, text in hook_contexts(next_request))
    # Only our context carries it: the empty summary and the verbatim tail do not.
    assert not mentions_decision(text_outside_hook_contexts(next_request))


def test_resume_restores_the_sessions_graph(scenario: Scenario) -> None:
    transcript = scenario.sandbox.transcript(scenario.session_id)
    resume_context = hook_outputs(transcript, "SessionStart:resume")
    first_request = scenario.main_requests("resume")[0]

    assert any(mentions_decision(text) for text in resume_context), resume_context
    assert any(event == "SessionStart" and mentions_decision(text) for event, text in hook_contexts(first_request))


def wait_for_snapshot(rg_home: Path, timeout_s: float = SNAPSHOT_WAIT_S) -> list[Path]:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        snapshots = sorted(rg_home.glob("snapshots/*.json"))
        if snapshots:
            return snapshots
        time.sleep(0.2)
    return []


def test_brand_new_session_in_the_project_starts_with_the_warm_decision(scenario: Scenario) -> None:
    # SessionEnd reconciles into the warm graph, detached; the project's snapshot follows.
    assert wait_for_snapshot(scenario.sandbox.rg_home), "no warm-graph snapshot appeared after SessionEnd"

    fresh = scenario.play("new_session", "Hello again.", turns=(Turn.say("Hi."),))
    transcript = scenario.sandbox.transcript(fresh.session_id)
    startup_context = hook_outputs(transcript, "SessionStart:startup")
    first_request = scenario.main_requests("new_session")[0]

    assert fresh.session_id != scenario.session_id
    assert any(mentions_decision(text) for text in startup_context), startup_context
    assert any(event == "SessionStart" and mentions_decision(text) for event, text in hook_contexts(first_request))


def wait_for_note_source(rg_home: Path, name: str, timeout_s: float = SNAPSHOT_WAIT_S, *, partner: str | None = None) -> bool:
    """Wait until the project's snapshot carries a tool-time note entry for the file ``name``
    (naming ``partner`` among the files usually changed with it, when given)."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        for path in rg_home.glob("snapshots/*.json"):
            try:
                notes = json.loads(path.read_text()).get("notes") or {}
            except (OSError, ValueError):
                continue
            for entry in notes.values():
                if isinstance(entry, dict) and entry.get("path") == name and (
                        partner is None or any(isinstance(row, list) and row[:1] == [partner] for row in entry.get("with") or ())):
                    return True
        time.sleep(0.2)
    return False


def earlier_sessions_blocks(request: RecordedRequest) -> list[str]:
    """Every block from earlier sessions anywhere in a request: the startup block and the
    tool-time notes (one tag, render/notes.py's)."""
    return re.findall(re.escape(notes.OPEN) + r".*?" + re.escape(notes.CLOSE), request.text(), re.S)


def test_a_tool_time_note_from_an_earlier_session_reaches_the_model(scenario: Scenario) -> None:
    # The scenario's session read notes.md, then app.py; two more sessions do the same. Once
    # they are reconciled, a new session that reads notes.md is told what goes with it (a
    # tool's note speaks only when it names something the session has not met: here app.py,
    # which went with notes.md in all three sessions).
    project = scenario.sandbox.project
    for name in ("note_source_2", "note_source_3"):
        scenario.play(name, "Read the notes, then the app.",
                      turns=(Turn.tools(read(project / "notes.md")), Turn.tools(read(project / "app.py")), Turn.say("Read both.")))
    assert wait_for_note_source(scenario.sandbox.rg_home, "notes.md", partner="app.py"), [
        json.loads(p.read_text()).get("notes") for p in scenario.sandbox.rg_home.glob("snapshots/*.json")]
    scenario.play("note_session", "Check the notes once more.",
                  turns=(Turn.tools(read(project / "notes.md")), Turn.tools(bash("sleep 1")), Turn.say("Checked.")))
    # PostToolUse runs in the background ("async": true, issue 37 item 4): Claude Code holds the hook's
    # answer until the hook has finished and sends it with the next request after that (as the
    # hook's own text, without a synchronous hook's "PostToolUse hook additional context" label).
    # With a real model that is the request after the model's next step; the stand-in model
    # answers at once, so the second tool call (`sleep 1`) gives the hook its time.
    requests = scenario.main_requests("note_session")
    assert len(requests) == 3  # the prompt; the Read's result; the sleep's result
    startup = earlier_sessions_blocks(requests[0])
    in_session_start = [text for event, text in hook_contexts(requests[0]) if event == "SessionStart"]
    assert all(any(block in text for text in in_session_start) for block in startup), "no note before the tool ran"
    delivered = [note for request in requests[1:] for note in earlier_sessions_blocks(request) if note not in startup]
    assert delivered, [request.text()[-3000:] for request in requests]
    assert "notes.md, in " in delivered[0] and "usually changed with: app.py" in delivered[0]


def test_session_end_in_the_background_still_reconciles(tmp_path: Path, warm_dsn: str) -> None:
    # SessionEnd is "async": claude does not wait for it, and the hook still runs to its end
    # after claude has exited: the detached finish it starts reconciles the session into the
    # warm graph (no compaction here, so nothing else would), and the project gets its snapshot.
    if warm_dsn == UNREACHABLE_DSN:
        pytest.skip("no PostgreSQL for the warm graph")
    sandbox = Sandbox.create(tmp_path, ROLLING_GRAPH_DSN=warm_dsn)
    (sandbox.project / "notes.md").write_text("# Notes\n")
    with StandinModel([Turn.tools(read(sandbox.project / "notes.md")), Turn.say("Noted.")]) as model:
        run = sandbox.run(model, DECISION_PROMPT)

    assert registered_hooks()["SessionEnd"][0]["hooks"][0].get("async") is True
    assert wait_for_snapshot(sandbox.rg_home), "SessionEnd's reconcile never wrote the project's snapshot"
    assert "session-end" in sandbox.fired_events()
    assert stderr_hook_errors(run) == [] and hook_errors(sandbox.transcript(run.session_id)) == []
    sandbox.stop_embedded_database()


def message_text(message: dict[str, Any]) -> str:
    if isinstance(message["content"], str):
        return message["content"]
    return "\n".join(block.get("text", "") for block in message["content"] if isinstance(block, dict))


def test_graph_slash_command_prints_the_graph(scenario: Scenario) -> None:
    command = f"/{plugin_name()}:graph"
    run = scenario.play("slash", command, "--resume", scenario.session_id, turns=(Turn.say("Here is the graph."),))
    requests = scenario.main_requests("slash")

    # When the command's shell line is refused, Claude Code answers itself and asks no model.
    assert requests and run.output.get("result") == "Here is the graph.", run.output.get("result")
    # The command's message; Claude Code may put the SessionStart(resume) context after it.
    texts = [message_text(m) for m in requests[0].body["messages"] if m["role"] == "user"]
    user_text = next((t for t in reversed(texts) if f"<command-name>{command}</command-name>" in t), texts[-1])
    assert f"<command-name>{command}</command-name>" in user_text
    assert "command not found" not in user_text, user_text[-1000:]
    assert mentions_decision(user_text), user_text[-2000:]


def timed_session(root: Path, plugin_dir: Path, tools: int, dsn: str) -> float:
    """Wall time of one ``claude -p`` session of ``tools`` tool calls, as the user waits for it."""
    sandbox = Sandbox.create(root, wrap_hook=False, ROLLING_GRAPH_DSN=dsn)
    (sandbox.project / "notes.md").write_text("notes\n")
    calls = [Turn.tools(read(sandbox.project / "notes.md") if i % 2 else bash(f"echo step {i}")) for i in range(tools)]
    with StandinModel([*calls, Turn.say("Done.")]) as model:
        run = sandbox.run(model, DECISION_PROMPT, plugin_dir=plugin_dir)
    assert run.output.get("num_turns") == tools + 1, run.describe()
    if plugin_dir == PLUGIN_DIR:
        # Let this session's detached probe/reconcile finish so it does not slow the next run.
        wait_for_snapshot(sandbox.rg_home, timeout_s=10.0)
    sandbox.stop_embedded_database()
    return run.elapsed_s


def test_plugin_costs_at_most_fifteen_percent_over_noop_python_hooks_wired_alike(tmp_path: Path, warm_dsn: str) -> None:
    # Against no-op hooks wired as ours are (PostToolUse, PostToolUseFailure and SessionEnd in the
    # background): what our hooks' work costs. With the stand-in model answering at once, the
    # client's handling of background hooks alone makes a session of no-op hooks 1.27x one whose
    # no-op hooks are all waited for (docs/measurements.md, eighteenth pass), which put the old
    # comparison at 1.20-1.34 run to run, most of it not ours; with a real model those hooks run
    # while it thinks.
    noop = write_noop_plugin(tmp_path / "noop-plugin", keep_async=True)
    times: dict[str, list[float]] = {"noop": [], "ours": []}
    for attempt in range(TIMING_REPEATS):  # interleaved, best of each: background noise hits both sides
        for name, plugin in (("noop", noop), ("ours", PLUGIN_DIR)):
            times[name].append(timed_session(tmp_path / f"{name}-{attempt}", plugin, tools=20, dsn=warm_dsn))

    noop_s, ours_s = min(times["noop"]), min(times["ours"])
    ratio = ours_s / noop_s
    print(f"20-tool session: no-op python hooks {times['noop']}, rolling graph {times['ours']}, best ratio {ratio:.2f}")
    assert ratio <= 1.15, f"plugin {ours_s:.2f}s vs no-op {noop_s:.2f}s: ratio {ratio:.2f} > 1.15"


def test_rgraph_show_in_a_terminal_sees_the_sessions_the_hooks_wrote(scenario: Scenario) -> None:
    # A terminal has neither ROLLING_GRAPH_HOME nor CLAUDE_PLUGIN_DATA: only HOME.
    env = {"PATH": "/usr/bin:/bin", "HOME": str(scenario.sandbox.home), "COLUMNS": "200"}
    rgraph = str(Path(sys.executable).with_name("rgraph"))
    done = subprocess.run([rgraph, "show", "--session", scenario.session_id], env=env, capture_output=True, text=True, timeout=60)

    assert done.returncode == 0, done.stderr
    assert mentions_decision(done.stdout), done.stdout[-2000:]
    sidecars = {p.parent for p in scenario.sandbox.home.rglob("*.graph.json")}
    assert sidecars == {scenario.sandbox.rg_home / "sessions"}, sidecars
