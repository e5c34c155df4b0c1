"""What a passing run settles besides its own family's errors (probe/tool_output.py)."""

from __future__ import annotations

import pytest

from rolling_graph.probe.tool_output import (
    compiles_go,
    failed_test,
    go_compile_error,
    go_packages,
    package_covers,
    patterns_cover,
    selects_test,
)


@pytest.mark.parametrize(("label", "where"), [
    ("rewind.go:579:13: undefined: agent", ("file", "rewind.go")),
    ('session_test.go:4:2: "context" imported and not used', ("file", "session_test.go")),
    ("cmd/x/tree.go:42:24: cannot use formatCheckpointLabel(cp) (value of struct type Info) as string value", ("file", "cmd/x/tree.go")),
    ("FAIL ./session [setup failed]", ("package", "./session")),
    ("FAIL entire.io/cli/cmd/entire/cli/strategy [build failed]", ("package", "entire.io/cli/cmd/entire/cli/strategy")),
    # a linter's finding, a failing test, a failing package's run: not the compiler's
    ("data.go:277:2: Error return value of `iter.ForEach` is not checked (errcheck)", None),
    ("resume.go:406:4: error is not nil (line 400) but it returns nil (nilerr)", None),
    ("--- FAIL: TestResume_SessionLogAlreadyExists (0.46s)", None),
    ("FAIL entire.io/cli/cmd/entire/cli/integration_test 15.262s", None),
])
def test_a_go_compile_error_is_told_from_other_failures(label: str, where: tuple[str, str] | None) -> None:
    assert go_compile_error(label) == where


def test_which_runs_compile_go_and_whether_their_tests_too() -> None:
    assert compiles_go("check", "go build") == "code" and compiles_go("check", "mise run build") == "code"
    assert compiles_go("check", "go vet") == compiles_go("test", "go test") == compiles_go("test", "mise run test:integration") == "tests"
    assert compiles_go("check", "mise run lint") == "tests"
    assert compiles_go("check", "ruff check") is None and compiles_go("test", "pytest") is None


@pytest.mark.parametrize(("part", "patterns"), [
    ("go test ./...", ["..."]),
    ("go test -tags=integration -v -run TestX ./cmd/entire/cli/integration_test/...", ["cmd/entire/cli/integration_test/..."]),
    ("go test -run TestX -count 1 ./session", ["session"]),
    ("go build", []),
    ("mise run test", None),
])
def test_the_packages_a_go_command_names(part: str, patterns: list[str] | None) -> None:
    assert go_packages(part) == patterns


def test_a_run_covers_the_packages_it_names() -> None:
    file_in = ("file", "rewind.go")
    assert package_covers(None, file_in, None) and package_covers(["..."], file_in, None)
    assert package_covers(["cmd/entire/cli/..."], file_in, "cmd/entire/cli/strategy")
    assert package_covers(["cmd/entire/cli"], file_in, "cmd/entire/cli")
    assert not package_covers(["cmd/entire/cli"], file_in, "cmd/entire/cli/strategy"), "not recursive without /..."
    assert not package_covers(["session"], file_in, "cmd/entire/cli")
    assert not package_covers(["session"], file_in, None), "an unknown directory: only the whole module covers it"
    assert package_covers(["session"], ("package", "./session"), None)
    assert package_covers(["cmd/entire/cli/..."], ("package", "entire.io/cli/cmd/entire/cli/strategy"), None)
    assert not package_covers(["session"], ("package", "entire.io/cli/cmd/entire/cli/strategy"), None)


def test_a_test_run_selects_tests_by_name() -> None:
    assert failed_test("--- FAIL: TestResume_SessionLogAlreadyExists (0.46s)") == "TestResume_SessionLogAlreadyExists"
    assert failed_test("FAILED tests/test_api.py::test_refund - AssertionError") == "test_refund"
    assert failed_test("undefined: agent") is None
    assert selects_test('go test -tags=integration -v -run "TestResume_" ./cmd/x/...', "TestResume_SessionLogAlreadyExists")
    assert selects_test("go test -run=^TestIsTrivialLine$ ./x", "TestIsTrivialLine/file_path")
    assert not selects_test("go test -run TestShadow ./x", "TestResume_SessionLogAlreadyExists")
    assert not selects_test("go test -run '[' ./x", "TestX"), "a pattern Go would refuse selects nothing"
    assert selects_test("pytest tests/test_api.py::test_refund", "test_refund")
    assert not selects_test("pytest tests/test_api.py::test_refund_twice", "test_refund")


def test_one_runs_packages_take_in_anothers() -> None:
    assert patterns_cover(["..."], "session") and patterns_cover(["..."], "...")
    assert patterns_cover(["cmd/..."], "cmd/x") and patterns_cover(["cmd/..."], "cmd/x/...") and patterns_cover(["cmd/..."], "cmd")
    assert patterns_cover(["session"], "session") and not patterns_cover(["session"], "session/...")
    assert not patterns_cover(["paths"], "session") and not patterns_cover(["cmd/..."], "...")
    assert not patterns_cover(["cmd/..."], "cmdx"), "a directory's name is not a prefix of another's"


def test_a_relative_package_is_not_matched_by_its_last_part_only() -> None:
    assert not package_covers(["session"], ("package", "./cmd/session"), None)
    assert package_covers(["cmd/..."], ("package", "./cmd/session"), None)


def test_a_runs_build_variant_is_its_tags_or_its_sub_task() -> None:
    from rolling_graph.probe.tool_output import build_variant

    assert build_variant("go test -tags=integration,e2e ./x") == "e2e,integration"
    assert build_variant("go build -tags e2e ./cmd/...") == "e2e" == build_variant("golangci-lint run --build-tags=e2e")
    assert build_variant("mise run test:integration") == "integration"
    assert build_variant("mise run test") == build_variant("go test ./...") == ""
