"""plugin/hooks/hooks.json: every event Rolling Graph handles, run without a shell in between."""

from __future__ import annotations

from claude_harness import PLUGIN_DIR, kebab, registered_hooks

from rolling_graph.hook import EVENTS

#: Events Claude Code does not wait for (``"async": true``). Only SessionEnd: its output never
#: reaches the model, it only starts the detached finish (probe, reconcile), and an async
#: SessionEnd hook runs to its end after ``claude`` exits (2.1.332: "atExit: leave"), so a
#: session's end no longer waits for it. Not the others (checked with 2.1.332 and the stand-in
#: model): an async PostToolUse hook's additionalContext reached the model two or three requests
#: later, or never (the last tool call's, and any still running when ``claude -p`` exits), so tool-time
#: notes would arrive after the work they are about; an async Stop hook is killed when
#: ``claude -p`` exits right after it, so the turn's batch would not be probed;
#: SessionStart and UserPromptSubmit carry context the model must have before its request.
BACKGROUND = {"SessionEnd"}


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
