"""plugin/hooks/hooks.json: every event Rolling Graph handles, run without a shell in between."""

from __future__ import annotations

import os
import signal
import subprocess
from pathlib import Path

import pytest
from claude_harness import PLUGIN_DIR, kebab, registered_hooks

from rolling_graph.hook import EVENTS

#: Events Claude Code does not wait for (``"async": true``; issue 37 item 4). Their output reaches the
#: model late or never, so only events whose answer can wait:
#: * SessionEnd: its output never reaches the model, it only starts the detached finish (probe,
#:   reconcile); an async SessionEnd hook runs to its end after ``claude`` exits (2.1.332:
#:   "atExit: leave").
#: * PostToolUse, PostToolUseFailure: twenty a session, most of a session's hook time; what
#:   they record is the event (locked, atomic, numbered in lock order; the launcher ignores the
#:   SIGTERM a session's end sends a run still going, tests/plugin/test_background_hooks.py).
#:   A tool-time note, when there is one, is held by Claude Code until the hook has finished and
#:   sent with the next request after that (checkForNewResponses reads finished hooks only): with
#:   a real model the request after the one that carries the tool result, with the instant
#:   stand-in model a few later. The probe's cap notice waits for a prompt (a background hook's
#:   systemMessage would go to the model, not the user).
BACKGROUND = {"SessionEnd", "PostToolUse", "PostToolUseFailure"}
#: Events whose answer must be there before Claude Code goes on: SessionStart's block and
#: UserPromptSubmit's context go with the very request they are about; PreCompact marks the
#: batch for the probe before the compaction rewrites the transcript. Stop stays synchronous too:
#: ``claude -p`` ends right after it, so an async Stop would only race the session's teardown.
ANSWER_BEFORE_GOING_ON = {"SessionStart", "UserPromptSubmit", "PreCompact", "Stop"}
SIGTERM_IGNORED = 1 << (signal.SIGTERM - 1)

def test_every_event_runs_the_launcher_in_exec_form() -> None:
    # Exec form ("args"): Claude Code spawns hooks/run itself, where the shell form starts
    # /bin/sh -c first, once per hook, 45 times in a 20-tool session (both checked with
    # 2.1.332 and 2.1.197).
    wired = registered_hooks()
    assert {kebab(event) for event in wired} == set(EVENTS)
    for event, groups in wired.items():
        [group] = groups
        [hook] = group["hooks"]
        assert hook["command"] == "${CLAUDE_PLUGIN_ROOT}/hooks/run" and hook["args"] == [kebab(event)], hook
        assert hook["timeout"] == (2 if event == "SessionEnd" else 10)
        assert hook.get("async", False) == (event in BACKGROUND), (event, hook)
        assert group.get("matcher") == ("*" if event.startswith("PostToolUse") else None)
    assert (PLUGIN_DIR / "hooks" / "run").stat().st_mode & 0o111


def test_only_events_whose_answer_can_wait_run_in_the_background() -> None:
    wired = registered_hooks()
    assert set(wired) == BACKGROUND | ANSWER_BEFORE_GOING_ON
    for event, groups in wired.items():
        for group in groups:
            for hook in group["hooks"]:
                background = bool(hook.get("async") or hook.get("asyncRewake"))
                assert background == (event in BACKGROUND), (event, hook)


@pytest.mark.skipif(not Path("/proc/self/status").exists(), reason="reads the signal disposition from /proc")
def test_the_launcher_ignores_sigterm_for_exactly_the_background_events(tmp_path: Path) -> None:
    # A hook that reports its own disposition, started through hooks/run as Claude Code would.
    reporter = tmp_path / "rgraph-hook"
    reporter.write_text("#!/bin/sh\nsed -n 's/^SigIgn:[[:space:]]*//p' /proc/self/status\n")
    reporter.chmod(0o755)
    env = {**os.environ, "ROLLING_GRAPH_HOOK": str(reporter)}
    for event in EVENTS.values():
        done = subprocess.run([str(PLUGIN_DIR / "hooks" / "run"), kebab(event)], input=b"", capture_output=True, env=env, timeout=30)
        assert done.returncode == 0, done.stderr
        ignored = bool(int(done.stdout.strip(), 16) & SIGTERM_IGNORED)
        assert ignored == (event in BACKGROUND), event
