"""Reading shell commands and their output: what ran, what it was for, how it went.

Pure functions over text (regular expressions are fine here: this runs in the detached
probe, never in the hook):

* :func:`command_parts` — a shell line split into its commands, each normalised (``cd``
  prefixes, redirections and output filters such as ``| tail -5`` dropped), so repeated
  runs of one test command are one node
* :func:`classify` — ``test`` / ``check`` (build, compile, lint, type check) / ``commit``
  / ``tracker`` (``bd``) / ``None``, and the command's *family* (``mix test``, ``pytest``)
* :func:`test_counts` and :func:`outcome` — pass or fail, and a short result such as
  ``2 failed of 58``, from pytest, mix, jest, vitest, cargo, RSpec, PHPUnit, dotnet, XCTest, go and common linters

An error's first meaningful line and its node id are :mod:`rolling_graph.capture.errors`'
(the gate's rule too).

The identifiers in code and commands are :mod:`.code_names`'.
"""

from __future__ import annotations

import re

from rolling_graph.capture.errors import error_line
from rolling_graph.capture.text import ERROR_WORDS, RUN_FAILED_WORDS

# -- commands --------------------------------------------------------------------------------
_SPLIT_RE = re.compile(r"\s*(?:&&|\|\||;|\n)\s*")
_FILTER_RE = re.compile(r"\s+\|\s*(?:tail|head|grep|egrep|rg|tee|less|more|cat|sort|uniq|wc|cut|sed|awk|jq)\b.*$", re.DOTALL)
_REDIRECT_RE = re.compile(r"\s+(?:\d?>>?|&>)\s*(?:&\d|/dev/null|\S+)")
_ENV_RE = re.compile(r"^(?:[A-Z_][A-Z0-9_]*=\S*\s+)+")
_WRAPPER_RE = re.compile(r"^(?:time|timeout\s+\d+[smh]?|nice(?:\s+-n\s*\d+)?|env|command|exec)\s+")

_TEST_RE = re.compile(
    r"^(?:(?:uv|poetry|pdm|hatch|pipenv)\s+run\s+|bundle\s+exec\s+|npx\s+|pnpm\s+exec\s+|\.venv/bin/|python3?\s+-m\s+)?"
    r"(?P<family>pytest|py\.test|unittest|tox|nox|mix\s+test|(?:npm|yarn|pnpm|bun)\s+(?:run\s+)?test\S*|vitest|jest|mocha|playwright\s+test"
    r"|cargo\s+(?:test|nextest)|go\s+test|make\s+(?:test|check)\S*|rspec|phpunit|dotnet\s+test|(?:\./)?gradlew?\s+test|mvn\s+test"
    r"|ctest|deno\s+test|elixir\s+\S*test\S*|swift\s+test|(?:mise\s+run|just|task|rake)\s+test\S*)\b"
)
_CHECK_RE = re.compile(
    r"^(?:(?:uv|poetry|pdm|hatch|pipenv)\s+run\s+|bundle\s+exec\s+|npx\s+|pnpm\s+exec\s+|\.venv/bin/|python3?\s+-m\s+)?"
    r"(?P<family>mix\s+(?:compile|credo|dialyzer|format\s+--check\S*|format)|(?:npm|yarn|pnpm|bun)\s+run\s+(?:build|lint|typecheck|check|format)\S*"
    r"|tsc|eslint|prettier\s+--check|ruff(?:\s+check|\s+format\s+--check)?|mypy|pyright|flake8|pylint|black\s+--check"
    r"|cargo\s+(?:build|check|clippy)|go\s+(?:build|vet)|make|cmake\s+--build|docker\s+build|gradlew?\s+build|mvn\s+(?:package|compile|verify)"
    r"|node\s+\S*build\S*\.[cm]?js|esbuild|webpack|vite\s+build|next\s+build|rubocop|credo|dialyzer"
    r"|golangci-lint\s+run|staticcheck|swift\s+build|swiftlint|swift-format\s+lint|(?:mise\s+run|just|task)\s+(?:lint|check|typecheck|vet|build)\S*)\b"
)
_BD_RE = re.compile(r"^(?:bd|beads)\s+(?P<verb>show|update|close|create|reopen|start|done)\b(?P<rest>.*)$", re.DOTALL)


def command_parts(command: str) -> list[str]:
    """The commands of a shell line, normalised; ``cd`` steps dropped."""
    parts = []
    for raw in _SPLIT_RE.split(_FILTER_RE.sub("", command.split("<<", 1)[0]) if "<<" in command else command):
        part = _FILTER_RE.sub("", raw.strip())
        part = _REDIRECT_RE.sub("", part)
        part = _ENV_RE.sub("", part)
        part = _WRAPPER_RE.sub("", part).strip().rstrip("&").strip()
        if part and not part.startswith(("cd ", "pushd ", "popd", "export ", "source ", "set ")) and part != "cd":
            parts.append(" ".join(part.split()))
    return parts


def classify(part: str) -> tuple[str, str] | None:
    """``(kind, family)`` of one normalised command: kind is ``test``, ``check``,
    ``commit`` or ``tracker``; ``None`` for anything else (ls, cat, git status …)."""
    m = _TEST_RE.match(part)
    if m:
        return "test", " ".join(m.group("family").split()).replace("py.test", "pytest")
    if part.startswith("git commit") or (part.startswith("git ") and " commit " in f" {part} "):
        return "commit", "git commit"
    if _BD_RE.match(part):
        return "tracker", "bd"
    if part.startswith("xcodebuild"):  # its action is a word anywhere after its options
        if re.search(r"\stest(?:-without-building)?\b", part):
            return "test", "xcodebuild test"
        if re.search(r"\s(?:build|build-for-testing|analyze)\b", part):
            return "check", "xcodebuild build"
    m = _CHECK_RE.match(part)
    if m:
        family = " ".join(m.group("family").split())
        if family.startswith("node "):  # `node assets/build.js` and `node build.js` are one script
            family = "node " + family.split(None, 1)[1].rpartition("/")[2]
        return "check", family
    return None


_CD_RE = re.compile(r"(?:^|&&|;|\|\||\n)\s*cd\s+(\"[^\"]+\"|'[^']+'|[^\s;&|]+)")
#: Runners whose second word is ``run`` and third the task (``mise run fmt``, ``npm run dev``).
_TASK_RUNNERS = frozenset("mise npm yarn pnpm bun deno uv poetry cargo".split())
#: Interpreters whose one-liners (``-c``, ``-e``) are looks, like the commands below.
_INTERPRETERS = frozenset("python python3 node ruby perl bash sh zsh".split())
#: Commands that look rather than do: their failure is no problem of the work.
_ADHOC = frozenset("head tail cat less more ls find grep egrep rg ag sed awk echo printf wc sort uniq cut jq tr xargs diff stat file which type pwd tree du df ps sleep true false".split())


def cd_target(command: str) -> str | None:
    """The directory the last ``cd`` of a shell line moves to (``None``: no ``cd``)."""
    found = _CD_RE.findall(command.split("<<", 1)[0])
    return found[-1].strip("\"'") if found else None


#: How Claude Code answers a call the user turned down (the permission prompt's "No", a
#: "not now") or a permission rule denied.
_REJECTED_RE = re.compile(
    r"(?:Error: )?(?:The user doesn't want to (?:proceed with this tool use|take this action)"
    r"|Permission to use \S+ (?:with command .{0,2000}? )?has been denied)", re.DOTALL)


def rejected_by_user(output: str) -> bool:
    """Whether a failed call's output is Claude Code's answer to a call the user turned down
    or a permission rule denied: it never ran, so it neither failed nor passed."""
    return _REJECTED_RE.match(output.lstrip()) is not None


def is_adhoc(part: str) -> bool:
    """A look around (``head``, ``grep``, ``python -c`` …), not a step of the work."""
    words = part.split()
    if not words:
        return True
    if words[0] in _ADHOC:
        return True
    if words[0] in _INTERPRETERS:  # a one-liner: ``python3 -c``, ``ruby -ryaml -e``, ``node --no-warnings -e``
        for word in words[1:]:
            if word in ("-c", "-e"):
                return True
            if not word.startswith("-"):
                break
    return False


def family_of(command: str) -> str:
    """A command's family: the test or check tool, else its first two words."""
    for part in command_parts(command) or [command]:
        c = classify(part)
        if c:
            return c[1]
    words = (command_parts(command) or [command])[0].split()
    if len(words) > 2 and words[1] in ("run", "r") and words[0] in _TASK_RUNNERS and not words[2].startswith("-"):
        return " ".join(words[:3])[:80]  # one task of a runner: `mise run fmt` is not `mise run deploy`
    return " ".join(words[:2])[:80]


# -- what a passing run settles besides its own family's errors --------------------------------
#: What Go's compiler says of code it cannot build (a linter names itself at the end of a
#: line, ``… (errcheck)``: a finding of style, which only the linter's next run settles).
_GO_COMPILER_SAYS = ("undefined: ", "imported and not used", "declared and not used", "cannot use ", "assignment mismatch",
                     "not enough arguments", "too many arguments", "has no field or method", "missing return", "syntax error",
                     "redeclared in this block", "mismatched types", "invalid operation", "no new variables", "cannot assign",
                     "is not a type", "undeclared name", "cannot convert", "does not implement", "unknown field",
                     "too many return values", "not enough return values", "could not import", "no required module")
_GO_DIAGNOSTIC_RE = re.compile(r"^(?P<file>[\w./-]+\.go):\d+:\d+: (?P<says>.+)")
_GO_PACKAGE_FAILED_RE = re.compile(r"^FAIL\s+(?P<package>\S+)\s+\[(?:build|setup) failed\]")
_FAILED_TEST_RE = re.compile(r"^(?:--- FAIL: (?P<go>[\w/.-]+)|FAILED \S+?::(?P<py>\w+))")
_RUN_FLAG_RE = re.compile(r"(?:^|\s)-(?:test\.)?run(?:=|\s+)(?P<pattern>\"[^\"]*\"|'[^']*'|\S+)")
#: Go's own commands that compile the packages they are given (all but ``go build`` their
#: tests too), and a task runner's test, check and build tasks (which run those).
_GO_COMPILERS = {"go build": "code", "go vet": "tests", "go test": "tests", "golangci-lint run": "tests", "staticcheck": "tests"}
_RUNNER_TASK_RE = re.compile(r"^(?:mise\s+run|just|task)\s+(?P<task>\S+)")


def go_compile_error(label: str) -> tuple[str, str] | None:
    """Where Go's compiler failed, by an error's line: ``("file", "session_test.go")`` (its
    path as the line gives it) or ``("package", "./session")`` (``FAIL ./session [setup
    failed]``); ``None`` for any other error (a failing test, a linter's finding)."""
    m = _GO_DIAGNOSTIC_RE.match(label)
    if m and any(words in m.group("says") for words in _GO_COMPILER_SAYS):
        return "file", m.group("file")
    m = _GO_PACKAGE_FAILED_RE.match(label)
    return ("package", m.group("package")) if m else None


def compiles_go(kind: str, family: str) -> str | None:
    """What a passing run of ``family`` compiled: ``"tests"`` (the packages and their tests),
    ``"code"`` (``go build``: not the ``_test.go`` files) or ``None`` (it compiles no Go)."""
    if family in _GO_COMPILERS:
        return _GO_COMPILERS[family]
    m = _RUNNER_TASK_RE.match(family)
    if m and kind in ("test", "check"):
        return "code" if m.group("task").startswith("build") else "tests"
    return None


_TAGS_RE = re.compile(r"(?:^|\s)['\"]?--?(?:build-)?tags(?:=|\s+)['\"]?(?P<tags>[\w,.: -]+?)['\"]?(?=\s|$)")


def build_variant(command: str) -> str:
    """Which files a run compiles beyond the untagged ones: a ``go`` command's build tags
    (``-tags=integration,e2e`` → ``e2e,integration``), a task runner's sub-task
    (``mise run test:integration`` → ``integration``); ``""`` for none."""
    m = _TAGS_RE.search(command)
    if m:
        return ",".join(sorted(t for t in re.split(r"[,\s]+", m.group("tags")) if t))
    m = _RUNNER_TASK_RE.match(command)
    return m.group("task").partition(":")[2] if m else ""


def go_packages(part: str) -> list[str] | None:
    """The package patterns a ``go`` command names, relative and without ``./``
    (``cmd/x/...``, ``session``; ``...`` for the whole module); ``[]`` when it names none
    (the current directory's package); ``None`` for any other command (a task runner's task,
    ``golangci-lint``: taken for the whole module)."""
    words = part.split()
    if not words or words[0] != "go":
        return None
    found = []
    skip_next = False
    for word in words[2:]:
        if skip_next:
            skip_next = False
            continue
        if word.startswith("-"):
            skip_next = "=" not in word and word.lstrip("-") in ("run", "tags", "timeout", "count", "p", "o", "skip", "bench", "coverprofile")
            continue
        if word in ("...", "./...") or word.startswith(("./", "../")) or "/" in word:
            found.append(word.removeprefix("./").strip("/") if word != "./..." else "...")
    return found


def package_covers(patterns: list[str] | None, where: tuple[str, str], directory: str | None) -> bool:
    """Does a run over ``patterns`` (:func:`go_packages`) compile the code of a compile error
    at ``where`` (:func:`go_compile_error`)? ``directory``: the error's file's directory in
    the project when known (``None``: not known; only the whole module covers it)."""
    if patterns is None or "..." in patterns:
        return True
    kind, ref = where
    if kind == "package" and "." in ref.split("/", 1)[0].strip("."):  # an import path: its module's prefix is not known
        return any(ref.endswith("/" + base) or (base != pattern and f"/{base}/" in ref)
                   for pattern in patterns for base in [pattern.removesuffix("/...")])
    target = ref.removeprefix("./").strip("/") if kind == "package" else directory
    return target is not None and patterns_cover(patterns, target)


def patterns_cover(patterns: list[str], other: str) -> bool:
    """Do the package patterns of one run (:func:`go_packages`) take in all of another's
    pattern ``other``? ``cmd/...`` takes in ``cmd/x`` and ``cmd/x/...``; ``cmd/x`` only itself."""
    if "..." in patterns:
        return True
    if other == "...":
        return False
    base, recursive = (other[:-4], True) if other.endswith("/...") else (other, False)
    for pattern in patterns:
        if pattern.endswith("/..."):
            if base == pattern[:-4] or base.startswith(pattern[:-3]):
                return True
        elif not recursive and base == pattern:
            return True
    return False


_RAN_TESTS_RE = re.compile(r"^(?:--- (?:FAIL|PASS): |=== RUN |ok\s+\S+\s)", re.MULTILINE)
_COMPILE_FAILED_RE = re.compile(r"\[(?:build|setup) failed\]|^\S+\.go:\d+:\d+: ", re.MULTILINE)


def compiled_and_ran(output: str) -> bool:
    """Did a failing ``go test`` run get as far as its tests, with nothing failing to
    compile (``--- FAIL: TestX`` and no ``[build failed]``, no compiler's line)? Then every
    package it was given compiled."""
    return _RAN_TESTS_RE.search(output) is not None and _COMPILE_FAILED_RE.search(output) is None


#: A shell's ``cd`` that failed (zsh's ``(eval):cd:1: no such file or directory: x``, bash's
#: ``bash: line 1: cd: x: No such file or directory``): the command after it never ran.
_CD_FAILED_RE = re.compile(r"^(?:\(eval\)|\S*sh)?:?\s*(?:line \d+: )?cd:(?:\d+:)?\s")


def cd_failed(line: str) -> bool:
    """Is an error's line a failed ``cd`` (no failure of the work: nothing ran)?"""
    return _CD_FAILED_RE.match(line) is not None


def failed_test(label: str) -> str | None:
    """The test an error's line says failed: Go's ``--- FAIL: TestX (0.4s)``, pytest's
    ``FAILED tests/t.py::test_x - …``."""
    m = _FAILED_TEST_RE.match(label)
    return (m.group("go") or m.group("py")) if m else None


def selects_test(part: str, test: str) -> bool:
    """Does a test command run ``test`` by name: Go's ``-run`` pattern matches it (its
    first level against the test's, as ``go test`` does), or the command names it
    (``pytest tests/t.py::test_x``)?"""
    m = _RUN_FLAG_RE.search(part)
    if m:
        pattern = m.group("pattern").strip("\"'").split("/")[0]
        try:
            return re.search(pattern, test.split("/")[0]) is not None
        except re.error:
            return False
    return re.search(rf"(?<![\w]){re.escape(test)}(?![\w])", part) is not None


# -- outcomes ---------------------------------------------------------------------------------
_COUNT_PATTERNS: list[tuple[re.Pattern[str], str]] = [
    (re.compile(r"(\d+) tests?, (\d+) failures?"), "mix"),  # ExUnit: "410 tests, 0 failures"
    (re.compile(r"Executed (\d+) tests?, with (\d+) failures?"), "mix"),  # XCTest: "Executed 12 tests, with 1 failure (0 unexpected)"
    (re.compile(r"(\d+) examples?, (\d+) failures?"), "mix"),  # RSpec: "12 examples, 1 failure"
    (re.compile(r"Tests: (\d+), Assertions: \d+, (?:Errors: \d+, )?Failures: (\d+)"), "mix"),  # PHPUnit, when something failed
    (re.compile(r"test result: (?:ok|FAILED)\. (\d+) passed; (\d+) failed"), "cargo"),
    (re.compile(r"Failed:\s+(\d+), Passed:\s+(\d+), Skipped:\s+\d+, Total:\s+(\d+)"), "dotnet"),
    (re.compile(r"Tests:\s+(?:(\d+) failed, )?(?:\d+ skipped, )?(?:\d+ todo, )?(\d+) passed, (\d+) total"), "jest"),
    (re.compile(r"Tests\s+(?:(\d+) failed\s*\|\s*)?(\d+) passed(?:\s*\|\s*\d+ \w+)*\s*\((\d+)\)"), "vitest"),
]
_PYTEST_RE = re.compile(r"(?:^|[\s=])(?:(\d+) failed)?(?:,\s*)?(?:(\d+) passed)?(?:,\s*\d+ \w+)*(?:,\s*(\d+) errors?)?\s+in\s+[\d.]+\s*s", re.MULTILINE)
_PASS_WORDS = ("All checks passed", "Success: no issues found", "found no issues", "0 errors", "Build succeeded", "Finished `", "Generated ")
#: A command's output that may report a failure: the hook's error words
#: (:data:`rolling_graph.capture.text.ERROR_WORDS`, one list) plus what test and build tools print.
_FAIL_WORDS = (*ERROR_WORDS, "\nFAIL ", "error[", "** (", "✘ [ERROR]", "Found ", "failed")


def test_counts(text: str) -> tuple[int, int | None] | None:
    """``(failed, total)`` from a test runner's summary (the last one in ``text``)."""
    best: tuple[int, int, int | None] | None = None  # (position, failed, total)
    for pattern, runner in _COUNT_PATTERNS:
        for m in pattern.finditer(text):
            if runner == "mix":
                failed, total = int(m.group(2)), int(m.group(1))
            elif runner == "cargo":
                failed, total = int(m.group(2)), int(m.group(1)) + int(m.group(2))
            elif runner == "dotnet":
                failed, total = int(m.group(1)), int(m.group(3))
            else:
                failed, total = int(m.group(1) or 0), int(m.group(3))
            if best is None or m.start() > best[0]:
                best = (m.start(), failed, total)
    if best is None:
        for m in _PYTEST_RE.finditer(text):
            if m.group(1) or m.group(2) or m.group(3):
                failed = int(m.group(1) or 0) + int(m.group(3) or 0)
                total = failed + int(m.group(2) or 0)
                if best is None or m.start() > best[0]:
                    best = (m.start(), failed, total)
    return (best[1], best[2]) if best else None


def short_result(counts: tuple[int, int | None] | None, passed: bool) -> str:
    if counts is None:
        return "passed" if passed else "failed"
    failed, total = counts
    return f"{failed} failed of {total}" if total else f"{failed} failed"


def outcome(kind: str, output: str, failed_flag: bool, masked: bool = True) -> tuple[str, str]:
    """``(outcome, short result)`` of a finished test or check command. ``masked``: the
    exit status may hide a failure (``| tail -5``), so the output is read for one;
    otherwise a check that exited 0 passed, whatever words its output holds."""
    counts = test_counts(output) if kind == "test" else None
    if counts is not None:
        ok = counts[0] == 0 and not (failed_flag and counts[1] == 0)
        return ("pass" if ok else "fail"), short_result(counts, ok)
    if failed_flag:
        line = error_line(output)
        return "fail", (line or "failed")[:100]
    body = output.split("\n", 1)[1] if output.startswith("$ ") else output
    if not masked or any(w in body for w in ("All checks passed", "Success: no issues found", "found no issues")):
        return "pass", "passed"
    if kind == "test" and any(w in "\n" + body for w in RUN_FAILED_WORDS):  # no count said it: Go, a task runner
        return "fail", (error_line(body) or "failed")[:100]
    line = error_line(body) if any(w in body for w in _FAIL_WORDS) else None
    if line and kind == "check" and not re.search(r"\b0 (?:errors?|failures?|issues?)\b", body):
        return "fail", line[:100]
    return "pass", "passed"


# -- commits and the tracker ------------------------------------------------------------------
_COMMIT_OUT_RE = re.compile(r"^\[(?P<branch>[^\s\]]+)(?: \([\w -]+\))? (?P<sha>[0-9a-f]{7,40})\] (?P<subject>.+)$", re.MULTILINE)


def commit_result(output: str) -> tuple[str, str] | None:
    """``(short sha, subject)`` from ``git commit`` output."""
    m = _COMMIT_OUT_RE.search(output)
    return (m.group("sha")[:12], m.group("subject").strip()) if m else None


def bd_command(part: str) -> tuple[str, list[str], dict[str, str]] | None:
    """``(verb, ids, options)`` of a ``bd`` tracker command."""
    m = _BD_RE.match(part)
    if not m:
        return None
    import shlex

    try:
        tokens = shlex.split(m.group("rest"))
    except ValueError:
        tokens = m.group("rest").split()
    ids: list[str] = []
    options: dict[str, str] = {}
    i = 0
    while i < len(tokens):
        token = tokens[i]
        if token.startswith("-"):
            key, eq, value = token.lstrip("-").partition("=")
            if not eq and key in _BD_VALUE_OPTIONS and i + 1 < len(tokens):
                value, i = tokens[i + 1], i + 1
            options[key] = value
        elif _BD_REF_RE.fullmatch(token):
            ids.append(token)
        i += 1
    return m.group("verb"), ids[:6], options


_BD_REF_RE = re.compile(r"[a-z][\w]*-[\w]+(?:\.\d+)*")
_BD_VALUE_OPTIONS = frozenset("status s reason r title t type priority p parent description d assignee a labels l notes design".split())
_BD_TITLE_RE = re.compile(r"^\W*(?P<ref>[a-z][\w]*-[\w]+(?:\.\d+)*)\s*(?:\[[A-Z]+\]\s*)?·\s*(?P<title>.+?)\s{2,}\[(?P<meta>[^\]]*)\]", re.MULTILINE)
_BD_CREATED_RE = re.compile(r"Created issue:\s*(?P<ref>[a-z][\w]*-[\w]+(?:\.\d+)*)(?:.*?\n\s*Title:\s*(?P<title>[^\n]+))?", re.DOTALL)
_BD_STATUS = {"open": "pending", "blocked": "pending", "deferred": "pending", "in_progress": "in_progress", "in-progress": "in_progress",
              "closed": "completed", "done": "completed", "completed": "completed"}


def bd_status(word: str) -> str | None:
    return _BD_STATUS.get(word.strip().lower())


def bd_show(output: str) -> tuple[str, str, str | None] | None:
    """``(ref, title, status)`` from ``bd show`` output's first line."""
    m = _BD_TITLE_RE.search(output)
    if not m:
        return None
    status = None
    for word in reversed(m.group("meta").replace("·", " ").split()):
        status = bd_status(word)
        if status:
            break
    return m.group("ref"), m.group("title").strip(), status


def bd_created(output: str) -> tuple[str, str | None] | None:
    m = _BD_CREATED_RE.search(output)
    return (m.group("ref"), (m.group("title") or "").strip() or None) if m else None
