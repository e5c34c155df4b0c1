"""Shell commands folded for the offline probe: what ran, how it went, what broke.

* **commands** — test and check (build, lint) commands, normalised
  (:func:`.tool_output.command_parts`): facts ``runs``, ``outcome``, ``result``
  (``1 failed of 58 → 0 failed of 58``); ``tests`` the files edited; a background run is
  settled when its output arrives (TaskOutput, a read of its output file, the task
  notification)
* **errors** — a failing run's first meaningful line, ``state`` open until a later run of
  the same command (or the whole suite, or the same check) passes; ``blocks`` the command.
  A one-off look that fails (``head``, ``grep``, ``python -c``) is no error of the work
* **commits** — ``git commit`` with its short sha and subject; ``edits`` the files added
* **the tracker** — ``bd show/create/update/close`` as tasks (:mod:`.offline_tasks`)
* **files written by the shell** — ``cat > path << 'EOF'`` (or ``tee``): a write of that
  file, and the code names its text defines and uses most, owned by it
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING

from rolling_graph.capture.errors import error_id, error_line
from rolling_graph.capture.tools import exit_may_hide_failure
from rolling_graph.core.filepaths import file_id, looks_like_file, relativize
from rolling_graph.core.ids import slugify
from rolling_graph.probe import offline_tasks as tasks
from rolling_graph.probe import tool_output as out
from rolling_graph.probe.code_names import NO_NAMES, defined_names, frequent_names, is_code_name
from rolling_graph.probe.proposal import FoldState, Proposal, event_seq
from rolling_graph.safety.sanitize import cut_at_word

if TYPE_CHECKING:
    from rolling_graph.core.types import PendingEvent

#: The longest command label (and the text its node id is made from).
COMMAND_CHARS = 80
_TASK_OUTPUT_RE = re.compile(r"/tasks/([A-Za-z0-9_-]{3,40})\.output\b")
_PATH_TOKEN_RE = re.compile(r"(?<![\w/.~-])(?:\.{0,2}/)?[\w@.-]+(?:/[\w@.-]+)*\.[A-Za-z0-9]{1,10}\b")
NAMES_PER_COMMAND = 4
#: A here-document written to a file: ``cat > path <<'EOF'`` / ``cat <<EOF > path`` /
#: ``tee path <<EOF``; its text runs to the line that holds the tag alone (or to the end).
_HEREDOC_RE = re.compile(
    r"(?:\bcat\s+(?:>>?\s*(?P<a>[^\s<>|;&]+)\s+)?<<-?\s*['\"]?(?P<tag>\w+)['\"]?(?:\s*>>?\s*(?P<b>[^\s<>|;&]+))?"
    r"|\btee\s+(?:-a\s+)?(?P<c>[^\s<>|;&-][^\s<>|;&]*)\s*<<-?\s*['\"]?(?P<tag2>\w+)['\"]?)[^\n]*\n(?P<body>.*?)(?:\n\s*(?P=tag)?(?P=tag2)?\s*(?:\n|$)|\Z)",
    re.S,
)
#: Most code names one here-document adds (as a Write's own names, :mod:`.offline_tools`).
NAMES_PER_HEREDOC = 30


def _output(event: PendingEvent) -> str:
    """A shell event's output: its text after the ``$ command`` line(s)."""
    text = event["text"]
    if not text.startswith("$ "):
        return text
    command = event.get("data", {}).get("cmd", "")
    if command and text.startswith(f"$ {command}"):
        return text[len(command) + 2 :].lstrip("\n")
    return text.split("\n", 1)[1] if "\n" in text else ""


def _paths_in(p: Proposal, part: str, cwd: str | None) -> list[str]:
    found = []
    for token in _PATH_TOKEN_RE.findall(part):
        if looks_like_file(token):
            path = p.path(token, cwd)
            if path:
                found.append(path)
    return found[:4]


def error_node(p: Proposal, output: str, family: str, blocked: str | None, seq: int | None) -> str | None:
    line = error_line(output)
    if not line or out.cd_failed(line):  # a `cd` that failed: what came after it never ran
        return None
    line = p.local(line)
    eid = p.node(line[:110], "technical", "error", nid=error_id(line))
    p.set(eid, state="open", **{"from": family[:80]})
    p.by(eid, "tool", seq)
    p.edge(eid, "blocks", blocked, 0.6)
    return eid


@dataclass(frozen=True)
class Run:
    """A finished test or check run, as :func:`settled_by` asks of it: its kind and family,
    the command as run and the ``go`` packages it ran over (:func:`run_packages`)."""

    kind: str
    family: str
    part: str
    packages: list[str] | None


def resolve(p: Proposal, family: str, command: str | None, whole: bool, ran: Run | None = None) -> None:
    """A passing run resolves the errors that blocked it; a whole-suite run (no file
    arguments) every open error of its family; and, whatever their family, the failing
    tests it ran by name and the compile errors of the code it compiled (``ran``,
    :func:`settled_by`)."""
    for eid in p.of_kind("error"):
        if p.fact(eid, "state") != "open":
            continue
        blocked = command is not None and (f"{eid}|blocks|{command}" in p.edges or f"{eid}|blocks|{command}" in p.edge_keys)
        family_run = whole and p.fact(eid, "from") == family and (ran is None or _covers_runs_of(p, eid, ran.packages))
        if blocked or family_run or (ran is not None and settled_by(p, eid, ran)):
            p.set(eid, state="resolved")


def run_packages(p: Proposal, part: str, cwd: str | None) -> list[str] | None:
    """The packages a ``go`` command ran over, from the project's root
    (:func:`rolling_graph.probe.tool_output.go_packages` taken from ``cwd``); ``None`` for
    any other command (a task runner's: the whole project)."""
    patterns = out.go_packages(part)
    here = relativize(cwd, p.root) if cwd else "."
    if patterns is not None and here not in (".", "") and not here.startswith(("/", "~", "..")):
        patterns = [f"{here}/{pattern}" if pattern != "..." else f"{here}/..." for pattern in patterns] or [here]
    return patterns


def _failed_runs(p: Proposal, eid: str) -> list[str]:
    """The commands (as their nodes show them) whose failing runs reported ``eid``."""
    prefix = f"{eid}|blocks|"
    failed = dict.fromkeys(key[len(prefix):] for key in (*p.edges, *p.edge_keys) if key.startswith(prefix))
    return [p.label_of(cid) for cid in failed if p.kind_of(cid) == "command"]


def _covers_runs_of(p: Proposal, eid: str, packages: list[str] | None) -> bool:
    """Does a passing run over ``packages`` cover those of the runs that failed with ``eid``?
    ``go test ./paths`` passing says nothing of ``go test ./session``'s failure; a run of the
    whole module, or of no ``go`` packages at all (``mise run test``), covers all."""
    if packages is None or "..." in packages:
        return True
    runs = _failed_runs(p, eid)
    if not runs:
        return False
    for run in runs:
        theirs = out.go_packages(run)
        if theirs is None or run.endswith("…") or not theirs:
            return False  # not a go command's, cut short, or the directory it ran in: not known
        if not all(out.patterns_cover(packages, pattern) for pattern in theirs):
            return False
    return True


def settled_by(p: Proposal, eid: str, ran: Run) -> bool:
    """Does a passing run (a test or check) settle the open error ``eid`` of another family?
    A failing test it ran by name (``go test -run 'TestResume_'`` after ``--- FAIL:
    TestResume_SessionLogAlreadyExists`` of ``mise run test:integration``); a Go compile error
    in code it compiled (``go vet ./cmd/x/...`` after ``go build``'s ``x.go:42:26: undefined:
    defaultAgent``; ``mise run test`` after ``go test ./session``'s ``"context" imported and
    not used``): code that compiles has no compile error."""
    label = p.label_of(eid)
    test = out.failed_test(label)
    if test:
        return ran.kind == "test" and out.selects_test(ran.part, test)
    where = out.go_compile_error(label)
    compiled = out.compiles_go(ran.kind, ran.family) if where else None
    if not where or not compiled:
        return False
    if where[0] == "file" and where[1].endswith("_test.go") and compiled != "tests":
        return False  # `go build` compiles no test file
    variant = out.build_variant(ran.part)
    if any(out.build_variant(run) not in ("", variant) for run in _failed_runs(p, eid)):
        return False  # the failing run compiled tagged files (`-tags=e2e`, `test:integration`) this one may not
    directory = None
    if where[0] == "file":
        if "/" in where[1]:
            directory = where[1].rpartition("/")[0]
        else:
            paths = {str(p.fact(fid, "path") or p.label_of(fid)) for fid in p.files_ending("/" + where[1])}
            directory = paths.pop().rpartition("/")[0] if len(paths) == 1 else None
    return out.package_covers(ran.packages, where, directory) or _covers_runs_of(p, eid, ran.packages)


def settle(p: Proposal, cid: str, kind: str, family: str, output: str, failed: bool, seq: int | None, state: FoldState,
           masked: bool = True, part: str | None = None, cwd: str | None = None) -> None:
    """Record a finished run's outcome on its command node; open or resolve errors.
    ``part``: the command as run (its node's label may be cut short), in ``cwd``."""
    outcome, short = out.outcome(kind, output, failed, masked)
    prev, prev_outcome = p.fact(cid, "result"), p.fact(cid, "outcome")
    if prev and prev_outcome and prev_outcome != outcome:
        result = f"{str(prev).split(' → ')[-1]} → {short}"
    else:
        result = "" if short == "passed" else short
    p.set(cid, outcome=outcome, result=result[:120], ref="")
    p.by(cid, "tool", seq)
    ran = Run(kind, family, part or p.label_of(cid), run_packages(p, part or p.label_of(cid), cwd))
    if outcome == "fail":
        error_node(p, output, family, cid, seq)
        if kind == "test" and part and out.compiles_go(kind, family) and out.compiled_and_ran(output):
            # Its tests ran: the packages it was given compiled, whatever failed in them.
            for eid in p.of_kind("error"):
                if p.fact(eid, "state") == "open" and out.go_compile_error(p.label_of(eid)) and settled_by(p, eid, ran):
                    p.set(eid, state="resolved")
        return
    whole = kind == "check" or not _paths_in(p, p.label_of(cid), None)
    resolve(p, family, cid, whole=whole, ran=ran)
    if whole and kind == "test":  # the whole suite passed: so do the narrower runs that failed before
        for other in p.of_kind("command"):
            if other != cid and p.fact(other, "outcome") == "fail" and (out.classify(p.label_of(other)) or ("", ""))[1] == family:
                p.set(other, outcome="pass", result=f"{str(p.fact(other, 'result') or 'failed').split(' → ')[-1]} → passed in the whole suite"[:120])


def command_label(command: str) -> str:
    """A command as its node shows it: whole up to :data:`COMMAND_CHARS`, else cut after a
    whole word (``mix credo lib/spotter_web/live/session_live.ex …``, never ``…/transcript_r``)
    when that keeps most of it. Its id stays the slug of its first ``COMMAND_CHARS``
    characters, as it always was, so a long command is one node across sessions."""
    return cut_at_word(command, COMMAND_CHARS, keep=COMMAND_CHARS // 2)


def _run(p: Proposal, event: PendingEvent, state: FoldState, part: str, kind: str, family: str, seq: int | None) -> None:
    data, output = event.get("data", {}), _output(event)
    label = p.local(part)  # the same command in every worktree (its paths stay as given for the files below)
    cid = p.node(command_label(label), "technical", "command", nid=slugify(label[:COMMAND_CHARS]))
    if not cid:
        return
    p.set(cid, runs=int(p.fact(cid, "runs") or 0) + 1)
    for fid in dict.fromkeys([*state.edited[-3:], *filter(None, (p.file(f) for f in _paths_in(p, part, event.get("cwd"))))]):
        p.edge(cid, "tests", fid, 0.6)
    p.edge(cid, "tests", state.task, 0.5)
    if data.get("bg"):
        p.set(cid, ref=data["bg"][:40], result="running in the background", outcome=None)
        p.by(cid, "tool", seq)
        return
    masked = not data or exit_may_hide_failure(data.get("cmd", ""))  # `cmd | tail` exits as tail does
    settle(p, cid, kind, family, output, data.get("failed", False) if data else event["error"], seq, state, masked, label, event.get("cwd"))


def background_done(p: Proposal, ref: str, output: str, failed: bool, seq: int | None, state: FoldState, *, final: bool) -> None:
    cid = p.find("command", ref=ref) if ref else None
    if not cid:
        return
    c = out.classify(p.label_of(cid)) or ("check", out.family_of(p.label_of(cid)))
    if final or out.test_counts(output) is not None:
        settle(p, cid, c[0], c[1], output, failed, seq, state)


def _commit(p: Proposal, event: PendingEvent, command: str, seq: int | None) -> None:
    found = out.commit_result(_output(event))
    if not found:
        return
    sha, subject = found
    nid = p.node(f"{sha} {subject}"[:120], "project", "commit", nid=f"commit-{sha}")
    p.set(nid, ref=sha)
    p.by(nid, "tool", seq)
    for part in out.command_parts(command):
        if part.startswith("git add"):
            for path in _paths_in(p, part, event.get("cwd")):
                if p.exists(file_id(path)):
                    p.edge(nid, "edits", file_id(path), 0.5)
    resolve(p, "git commit", None, whole=True)


def _tracker(p: Proposal, event: PendingEvent, state: FoldState, part: str, seq: int | None) -> None:
    parsed = out.bd_command(part)
    if not parsed or event.get("data", {}).get("failed"):
        return
    verb, ids, opts = parsed
    output = _output(event)
    if verb == "show":
        shown = out.bd_show(output)
        if shown:
            tasks.task_node(p, state, seq, ref=shown[0], title=shown[1], status=shown[2])
    elif verb == "create":
        created = out.bd_created(output)
        if created:
            tasks.task_node(p, state, seq, ref=created[0], title=created[1] or opts.get("title") or opts.get("t"), status="pending")
    else:
        status = {"close": "completed", "done": "completed", "reopen": "pending", "start": "in_progress"}.get(verb)
        status = status or out.bd_status(opts.get("status") or opts.get("s") or "")
        if "claim" in opts:
            status = "in_progress"
        for ref in ids:
            tasks.task_node(p, state, seq, ref=ref, status=status)


def fold_bash(p: Proposal, event: PendingEvent, state: FoldState, seq: int | None) -> None:
    data = event.get("data", {})
    text = event["text"]
    command = data.get("cmd") or (text.split("\n", 1)[0][2:] if text.startswith("$ ") else "")
    failed = data.get("failed", False) if data else event["error"]
    m = _TASK_OUTPUT_RE.search(command)
    if m:  # reading a background run's output file
        background_done(p, m.group(1), _output(event), False, seq, state, final=False)
        return
    target = out.cd_target(command)
    if target:  # `cd <dir> && mix test test/x.exs`: the paths are the directory's
        moved = relativize(target, p.root, str(event.get("cwd") or "") or None)
        event = {**event, "cwd": None if moved in (".", "") or moved.startswith(("/", "~")) else moved}  # type: ignore[typeddict-item]
    kinds = [(part, out.classify(part)) for part in out.command_parts(command)]
    declined = failed and out.rejected_by_user(_output(event))
    if declined:
        # The user turned the call down: nothing ran (no run's outcome, no error resolved
        # or opened, no file written); what it names is still what the work is about.
        kinds = [(part, None) for part, _ in kinds]
    else:
        _heredoc_writes(p, event, command, seq)
    known = [(part, c) for part, c in kinds if c]
    for part, (kind, family) in known:
        if kind in ("test", "check"):
            _run(p, event, state, part, kind, family, seq)
        elif kind == "commit":
            _commit(p, event, command, seq)
        elif kind == "tracker":
            _tracker(p, event, state, part, seq)
    for part, c in kinds:  # a file the shell looked at or moved (``head a.go``, ``git show REF:b.json``)
        if not c:
            for path in _paths_in(p, part.replace(":", " "), event.get("cwd")):
                p.by(p.mentioned_file(path), "tool", seq)
    ran_tests = any(c[0] in ("test", "check") for _, c in known)
    if not any(c[0] in ("commit", "tracker") for _, c in known):  # a script's names, not a message's
        for name in frequent_names(command, NAMES_PER_COMMAND):
            p.by(p.node(name, "technical", "symbol"), "tool", seq)
    if declined:
        return
    if failed and not ran_tests and kinds and not out.is_adhoc(kinds[0][0]):
        # (a one-off look — head, grep, python -c — that fails is no problem of the work)
        family = next((c[1] for _, c in known), None) or out.family_of(command)
        error_node(p, _output(event) or text, family, state.task, seq)
    elif not failed and not ran_tests and kinds:
        # Every step of a line that exited 0 ran well: ``git add a.go && git rebase --continue``
        # settles the rebase that stopped on a conflict, not only a ``git add``.
        for family in dict.fromkeys(out.family_of(part) for part, _ in kinds):
            resolve(p, family, None, whole=True)


def _heredoc_writes(p: Proposal, event: PendingEvent, command: str, seq: int | None) -> None:
    """A file the shell wrote from a here-document: a write of it, and its code names."""
    for m in _HEREDOC_RE.finditer(command):
        raw = m.group("a") or m.group("b") or m.group("c")
        path = p.path(raw.strip("'\""), event.get("cwd")) if raw and looks_like_file(raw.strip("'\"")) else None
        fid = p.file(path) if path else None
        if not fid or not path:
            continue
        p.set(fid, writes=int(p.fact(fid, "writes") or 0) + 1, last_op="write")
        p.by(fid, "tool", seq)
        if path.rpartition(".")[2].lower() in NO_NAMES:
            continue
        body = m.group("body") or ""
        defined = defined_names(body, 10)
        names = [n for n in dict.fromkeys(defined + frequent_names(body, NAMES_PER_HEREDOC)) if is_code_name(n)]
        for name in names[:NAMES_PER_HEREDOC]:
            sid = p.node(name, "technical", "symbol")
            p.by(sid, "tool", seq)
            p.set(sid, **{"in": fid})
            if name in defined and seq is not None:
                p.set(sid, **{"def": seq})


def notification(p: Proposal, text: str, event: PendingEvent, state: FoldState) -> None:
    """A ``<task-notification>`` (a background command finished): settle its run."""
    ref = re.search(r"<task-id>([^<]{1,40})</task-id>", text)
    status = re.search(r"<status>([^<]{1,20})</status>", text)
    code = re.search(r"exit code (\d+)", text)
    if ref and status and status.group(1) in ("completed", "failed", "killed"):
        failed = status.group(1) != "completed" or bool(code and code.group(1) != "0")
        background_done(p, ref.group(1).strip(), "", failed, event_seq(event), state, final=True)
