"""A failure's line and its id (one rule for the gate and the probe), and which tool
results report a failure at all."""

from __future__ import annotations

import pytest

from rolling_graph.capture.errors import error_id, error_line
from rolling_graph.capture.events import event_from_payload
from rolling_graph.capture.tools import exit_may_hide_failure

AT = "2026-11-30T10:00:00Z"


def tool_event(tool: str, tool_input: dict, response: object) -> dict:
    return event_from_payload("PostToolUse", {"tool_name": tool, "tool_input": tool_input, "tool_response": response}, "e1", AT)


def test_an_errors_label_is_its_first_meaningful_line() -> None:
    assert error_line("Error: Exit code 2\nRunning ExUnit with seed: 1\n\n  1) test renders rows (AppTest)\n"
                          "     ** (RuntimeError) no :secret_key_base configuration found\n") == \
        "** (RuntimeError) no :secret_key_base configuration found"
    assert error_line("Exit code 1\nTraceback (most recent call last):\n  File \"a.py\", line 3\nKeyError: 'burst'") == "KeyError: 'burst'"
    assert error_line("Pre-commit validation failed:\\n\\n[FORMAT] Code is not formatted.\\nRun 'mix format'") == \
        "Pre-commit validation failed: [FORMAT] Code is not formatted."
    assert error_line("Error: Exit code 1\n") is None
    # Go names the package over its build errors; the error is the diagnostic under it.
    go_build = ("Exit code 1\n# entire.io/cli/cmd/entire/cli/strategy\n"
                "cmd/entire/cli/strategy/push_common.go:33:15: undefined: OpenRepository\n"
                "FAIL\tentire.io/cli/cmd/entire/cli/strategy [build failed]\n")
    assert error_line(go_build) == "push_common.go:33:15: undefined: OpenRepository"  # the file node holds its path
    assert error_line("# github.com/entireio/cli/cmd/entire/cli/e2e_test\nexit status 1") == "exit status 1"
    # A package that failed without a failing test's line (a TestMain, a panic) is named by Go's FAIL line,
    # not by the task runner's header and the package that merely had no tests.
    go_test = ("Exit code 1\n[test] $ go test ./...\n[test] ERROR task failed\n\n?   \tentire.io/cli/cmd/entire\t[no test files]\n"
               "ok  \tentire.io/cli/cmd/entire/cli\t2.000s\nCreated shadow branch 'entire/a799410'\nFAIL\n"
               "FAIL\tentire.io/cli/cmd/entire/cli/strategy\t3.238s\nok  \tentire.io/cli/cmd/entire/cli/paths\t(cached)\n")
    assert error_line(go_test) == "FAIL entire.io/cli/cmd/entire/cli/strategy 3.238s"
    test_build = ("Exit code 1\n# github.com/entireio/cli/cmd/e2e_test [github.com/entireio/cli/cmd/e2e_test.test]\n"
                  "cmd/e2e_test/assertions.go:117:18: assignment mismatch: 1 variable but f returns 2 values\n")
    assert error_line(test_build) == "assertions.go:117:18: assignment mismatch: 1 variable but f returns 2 values"
    # A type checker's error is its diagnostic too, by its file: mypy, pyright, tsc; never a note above it.
    mypy = "src/billing/x.py:12: note: See https://mypy.rtfd.io\nsrc/billing/x.py:10: error: Name \"y\" is not defined  [name-defined]\n"
    assert error_line(mypy) == 'x.py:10: error: Name "y" is not defined [name-defined]'
    pyright = "/home/u/app/src/a.py\n  /home/u/app/src/a.py:3:5 - error: \"foo\" is not defined (reportUndefinedVariable)\n1 error\n"
    assert error_line(pyright) == 'a.py:3:5 - error: "foo" is not defined (reportUndefinedVariable)'
    assert error_line("src/cart/total.ts(3,5): error TS2304: Cannot find name 'x'.\n") == "total.ts(3,5): error TS2304: Cannot find name 'x'."
    # pytest's failing test stays the label, not the line of its assertion
    pytest_out = "tests/test_annual.py:12: AssertionError\n=== short test summary info ===\nFAILED tests/test_annual.py::test_annual - assert 1 == 2\n"
    assert error_line(pytest_out) == "FAILED tests/test_annual.py::test_annual - assert 1 == 2"


GO_TEST_FAIL = ("[test] $ go test ./...\nok  \tentire.io/cli/cmd/entire/cli/paths\t(cached)\n"
                "--- FAIL: TestResume_AfterMergingMain (4.30s)\n    resume_test.go:88: want 2 checkpoints, got 1\n"
                "FAIL\nFAIL\tentire.io/cli/cmd/entire/cli\t4.512s\n[test] ERROR task failed\n")
GO_BUILD_FAIL = ("# entire.io/cli/cmd/entire/cli/strategy\ncmd/entire/cli/strategy/session.go:256:29: undefined: plumbing\n"
                 "FAIL\tentire.io/cli/cmd/entire [build failed]\n")
GO_PASS = "ok  \tentire.io/cli/cmd/entire/cli\t1.666s\nok  \tentire.io/cli/cmd/entire/cli/agent\t(cached)\n"


@pytest.mark.parametrize("output", [GO_TEST_FAIL, GO_BUILD_FAIL, "[lint] $ golangci-lint run ./...\n1 issues:\n[lint] ERROR task failed\n"])
def test_a_go_failure_behind_a_pipe_is_a_failure(output: str) -> None:
    # `go test ./... 2>&1 | tail -40` exits as tail does: only the output says it failed, in
    # words none of the generic ones (Error:, FAILED, ...) match. Before, 85 of the 170
    # entire-cli commands whose output shows a Go failure were not flagged.
    event = tool_event("Bash", {"command": "mise run test 2>&1 | tail -40"}, {"stdout": output, "stderr": ""})
    assert event["error"] is True
    assert error_line(event["text"]) is not None


def test_a_passing_go_run_is_no_failure() -> None:
    event = tool_event("Bash", {"command": "go test ./... | tail"}, {"stdout": GO_PASS, "stderr": ""})
    assert event["error"] is False


CODE_WITH_ERROR_WORDS = 'if err != nil {\n\treturn fmt.Errorf("error: reading checkpoint: %w", err)\n}\n'


@pytest.mark.parametrize(("tool", "tool_input", "response"), [
    ("Grep", {"pattern": "Errorf"}, {"mode": "content", "content": "checkpoint.go:12:" + CODE_WITH_ERROR_WORDS, "numLines": 3}),
    ("Write", {"file_path": "/home/dev/app/checkpoint.go", "content": CODE_WITH_ERROR_WORDS},
     {"type": "create", "filePath": "/home/dev/app/checkpoint.go", "content": CODE_WITH_ERROR_WORDS}),
    ("mcp__docs__search", {"query": "wrapping errors"}, {"content": "Error: wrapping with %w keeps the chain"}),
    ("Task", {"description": "review", "prompt": "find bugs"}, {"content": "Found one: the Error: path drops the cause."}),
])
def test_what_a_tool_found_or_wrote_is_no_failure_for_its_error_words(tool: str, tool_input: dict, response: dict) -> None:
    # Such an event used to be flagged a failure and skipped by the probe's fold (a failed
    # call did nothing): 15 of the entire-cli sessions' 113 writes and 18 of their greps.
    assert tool_event(tool, tool_input, response)["error"] is False
    # The same words from a command are its own report, and a call that did fail is one.
    assert tool_event("Bash", {"command": "go vet ./... | tail"}, {"stdout": "", "stderr": CODE_WITH_ERROR_WORDS})["error"] is True
    assert tool_event(tool, tool_input, {**response, "is_error": True})["error"] is True
    assert tool_event(tool, tool_input, "<tool_use_error>File has not been read yet.</tool_use_error>")["error"] is True


def test_every_failed_command_gets_its_own_id_not_its_exit_code() -> None:
    # A failed command's recorded result starts "Error: Exit code 1": as its id, every
    # failure of a session was one (188 of the entire-cli sessions' 233 ids).
    one = "Error: Exit code 1\n" + GO_TEST_FAIL
    two = "Error: Exit code 1\n" + GO_BUILD_FAIL
    assert error_line(one) == "--- FAIL: TestResume_AfterMergingMain (4.30s)"
    assert error_line(two) == "session.go:256:29: undefined: plumbing"
    assert error_id(error_line(one)) != error_id(error_line(two))
    assert error_id("session.go:256:29: undefined: plumbing") == error_id("session.go:300:9: undefined: plumbing")


PASSING_RUN_WITH_ERROR_LOGS = ("=== RUN   TestSessionIDConflict\n    hooks.go:155: Hook output: session ID conflict: shadow branch has "
                               "commits\n        Error: session ID conflict\n--- PASS: TestSessionIDConflict (0.28s)\nPASS\n"
                               "ok  \tentire.io/cli/cmd/entire/cli/integration_test\t1.363s\n")


@pytest.mark.parametrize("command", ["git diff cmd/entire/cli/session.go", "go test -v -run TestSessionIDConflict ./cmd/...",
                                     "gh pr diff 284", "head -5 checkpoint.go"])
def test_a_command_that_exited_zero_succeeded_whatever_its_output_says(command: str) -> None:
    # Claude Code reports a non-zero exit as a failed call ("Error: Exit code 1" in a
    # transcript, PostToolUseFailure live): a call that reached us as a success, with no
    # pipe to hide its exit, succeeded. Its error words are a diff's, a log's, a file's.
    for output in (PASSING_RUN_WITH_ERROR_LOGS, CODE_WITH_ERROR_WORDS):
        assert tool_event("Bash", {"command": command}, {"stdout": output, "stderr": ""})["error"] is False
    assert tool_event("Bash", {"command": command}, "Error: Exit code 1\n" + GO_TEST_FAIL)["error"] is True


def test_behind_a_pipe_or_a_semicolon_a_runs_words_are_read() -> None:
    # The exit status is another command's there.
    command = "go test -v -run TestSessionIDConflict ./cmd/..."
    for masked in (f"{command} 2>&1 | tail -40", f"{command}; echo done", f"{command}\necho done"):
        assert exit_may_hide_failure(masked)
        assert tool_event("Bash", {"command": masked}, {"stdout": GO_TEST_FAIL, "stderr": ""})["error"] is True
        assert tool_event("Bash", {"command": masked}, {"stdout": GO_PASS, "stderr": ""})["error"] is False


@pytest.mark.parametrize("command", [
    "cd ../entire.io && git show entire/sessions:33/full.jsonl | grep -E '\"name\":\"(Write|Edit)\"' | head -20",
    "sed -n '372p' ~/session.jsonl | jq '.message.content[0]' | head -100",
    "cat ~/.gemini/tmp/session.json 2>/dev/null | head -200",
    "git -C ../app --no-pager diff | head -40",
    "gh pr diff 284 | head -80",
])
def test_a_line_that_only_shows_something_shows_its_words(command: str) -> None:
    # Behind a pipe too: a transcript's "Error:", a diff's "error:" are what it shows (21 of the
    # entire-cli sessions' piped commands fired the gate so), not a report of its own.
    assert tool_event("Bash", {"command": command}, {"stdout": CODE_WITH_ERROR_WORDS + PASSING_RUN_WITH_ERROR_LOGS})["error"] is False
    # A line that runs anything else is read as before, and a failed call is one.
    ran = command.replace("| head", "&& go test ./... | head", 1)
    assert tool_event("Bash", {"command": ran}, {"stdout": GO_TEST_FAIL})["error"] is True
    assert tool_event("Bash", {"command": command}, "Error: Exit code 2\nfatal: bad revision")["error"] is True


def test_a_task_runners_prefix_and_summary_are_not_the_failure() -> None:
    # mise prefixes each line of a task's output with its name, which hid the diagnostic from
    # the patterns anchored at a line's start: a code line with "error" in it was taken instead
    # (15 of the entire-cli sessions' 304 failed commands had a "[lint…]" label).
    lint = ("[lint:go] $ golangci-lint run ./...\n[lint:go] cmd/entire/cli/strategy/registry.go:27:1: Get returns interface (ireturn)\n"
            "[lint:go] func Get(name string) (Strategy, error) {\n[lint:go] ^\n1 issues:\n[lint:go] ERROR task failed\n")
    assert error_line("Error: Exit code 1\n" + lint) == "registry.go:27:1: Get returns interface (ireturn)"
    assert error_line("[test] $ go test ./...\n[test] --- FAIL: TestX (0.10s)\n[test] ERROR task failed\n") == "--- FAIL: TestX (0.10s)"
    assert error_line("Error: Exit code 1\n[lint] ERROR task failed\n") is None  # it says nothing of what failed
    assert error_line("Pre-commit validation failed:\n\n[FORMAT] Code is not formatted.\n") == \
        "Pre-commit validation failed: [FORMAT] Code is not formatted."  # a tag of the message stays


def test_a_linters_quoted_code_is_not_the_failure_and_its_count_says_what_failed() -> None:
    # `mise run lint 2>&1 | tail -5` cut golangci-lint's finding off; what is left is the code it
    # quoted, the caret under it and the count. The code line was taken for the error before.
    cut = ("Exit code 1\nfunc TestCondenseSession_GeminiMultiCheckpoint(t *testing.T) {\n^\n1 issues:\n* maintidx: 1\n"
           "[lint] ERROR task failed\n")
    assert error_line(cut) == "1 lint issue: maintidx"
    several = "\t\t\treturn nil\n\t\t\t^\n3 issues:\n* nilerr: 2\n* unparam: 1\n[lint] ERROR task failed\n"
    assert error_line(several) == "3 lint issues: nilerr, unparam"
    assert error_id(error_line(cut) or "") != error_id(error_line(several) or "")
    # With the finding there, the finding is the error, and the code it quotes is never.
    whole = ("cmd/entire/cli/strategy/clean.go:432:44: ListAllCleanupItems - result 1 (error) is always nil (unparam)\n"
             "func ListAllCleanupItems() ([]CleanupItem, error) {\n                                           ^\n1 issues:\n* unparam: 1\n")
    assert error_line(whole) == "clean.go:432:44: ListAllCleanupItems - result 1 (error) is always nil (unparam)"
    quoted_only = "Exit code 1\nif err := run(); err != nil { return fmt.Errorf(\"failed\") }\n    ^\nexit status 1\n"
    assert error_line(quoted_only) == "exit status 1"
