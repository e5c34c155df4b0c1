"""The sections of the restore block (:mod:`rolling_graph.render.restore`) and the settings that size them.

Each section fills its :class:`~rolling_graph.render.layout.Section` from the graph as the
block reads it (:class:`~rolling_graph.render.view.RestoreView`) and adds the ids it shows:
the request, the tasks, the decisions in force, the open problems, the working set. The rest
of the graph, named compactly and then counted, is :mod:`rolling_graph.render.names`.
"""

from __future__ import annotations

from rolling_graph.core.config import _Strategy
from rolling_graph.core.model import INTENT_KINDS
from rolling_graph.render.layout import Section, first_item, join_items, short_command, shown_path
from rolling_graph.render.rank import count, facts_of
from rolling_graph.render.view import RestoreView
from rolling_graph.safety.sanitize import esc, sentence_ends

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from rolling_graph.core.types import Node


class RestoreSettings(_Strategy):
    """Shares of the block (of the characters inside the delimiters) and label lengths."""

    #: Most a section may take, plus what the sections before it left: request, tasks,
    #: decisions, open problems, working set, in this order.
    request_share = 0.12
    tasks_share = 0.12
    decisions_share = 0.18
    problems_share = 0.08
    working_share = 0.18
    #: Kept for the ranked names while the sections fill (when there are names left to
    #: give): next to Claude's summary, the names are what a memory gives back best.
    names_share = 0.45
    earlier_requests = 2
    #: Done tasks: ``list`` them after the open ones, or ``count`` them (``Open tasks (3 done):
    #: …``, ``Tasks: all 3 done``): a new session needs what the last one left open, not what
    #: it finished.
    done_tasks = "list"
    request_chars = 160
    earlier_request_chars = 90
    task_chars = 60
    decision_chars = 110
    superseded_chars = 60
    path_chars = 64
    what_chars = 120
    command_chars = 60
    result_chars = 80
    problem_chars = 120
    name_chars = 48
    #: Commands with an outcome that get a working-set line of their own (not tied to a file).
    working_commands = 3
    #: With fewer changed files than this, the most read ones join the working set.
    working_min_files = 3
    #: When no file's line fits the working set's share: state the first file anyway, by its
    #: name, in room kept for the names (on), or leave the working set to the name map, where
    #: the files stand as the owners of their names (off: the small presets; at 400 tokens the
    #: files are names like any other).
    working_line_required = True
    #: A file in the name list brings the names edited in it right after its own (its
    #: neighbours, summarised); off, those names are listed by their own rank.
    file_brings_names = True
    #: List commands whose last run passed among the names (``mix test``); off, such a
    #: command is shown only in the working set, with its outcome, or counted with the rest
    #: (a failing one is listed either way).
    command_names = True
    #: What a name Claude's compaction summary already holds is worth, as a factor on its
    #: rank score: 1 keeps the rank order; 0 puts them after every name only the graph can
    #: give back (in rank order among themselves).
    summary_weight = 1.0
    #: Kinds the closing count names (``Not shown: 37 more — 20 code names, 12 files, …``).
    count_kinds = 3
    #: Names as a map of the work: each under the file that owns it (the file whose edit or
    #: write last used it), a file heading its own names, the rest under who named them
    #: (:class:`rolling_graph.render.names.MapGroups`); off, one comma-separated list.
    name_map = True
    #: The most names the map lists under who named them (``In requests: …``, ``In Claude's
    #: notes: …``, ``In commands and searches: …``) where the graph has files for names to stand
    #: under: names no file or module owns are a flat list, the kind of wall the map replaces.
    #: 0: such names are counted, not listed.
    unowned_names = 20
    #: Offer the map every name a file or a module owns before any name with none (each part in
    #: rank order): where the owned names fill the room the others are counted, where they do
    #: not (a project whose sessions edited little) the others still fill it.
    unowned_last = False
    #: How much a name's length costs it in the name list: names go by ``score / (characters
    #: shown + 2 + 4) ** name_cost`` (:func:`rolling_graph.render.names.shown_length`, plus
    #: :data:`rolling_graph.render.names.NAME_OVERHEAD`).
    #: 0: by rank alone; 1: by rank per character, which fits more of what matters when the
    #: block is small.
    name_cost = 0.0


#: Room kept for the closing count line (its longest form is well under this).
COUNT_RESERVE = 128
#: The shortest a task's label gets in the line the block must state: long enough to say
#: which task it is (``spotter-fum.5: load_ses…`` did not), even when the names take most of it.
MIN_TASK_CHARS = 48
#: The shortest the request's label gets (the block must state it).
MIN_REQUEST_CHARS = 48
MIN_DECISION_CHARS = 40
MIN_PROBLEM_CHARS = 48
#: Decisions in force that did not fit before the section gives up on shorter ones.
DECISION_MISSES = 10
#: Files of the working set that did not fit before the section gives up on the rest.
WORKING_MISSES = 3
_TASK_STATUS = {"in_progress": "in_progress", "pending": "pending", "completed": "done"}  # the tools' own status words
_TASK_ORDER = {"in_progress": 0, "pending": 1, "done": 2}


#: A cut request keeps its whole first sentences when they hold at least this many characters.
MIN_SENTENCE_CHARS = 20


def first_sentences(text: str, limit: int) -> str:
    """``text`` if it fits in ``limit``, else its first whole sentences that do, with `` …``
    (``Work on bead app-3. …`` rather than ``Work on bead app-3. Run bd show ap…``); the text
    as it is when no sentence ends early enough (the caller cuts it)."""
    text = " ".join(text.split())
    if len(text) <= limit:
        return text
    ends = [end for end in sentence_ends(text) if end + 2 <= limit]  # shown as text[:end] + " …"
    return text[: ends[-1]] + " …" if ends and ends[-1] >= MIN_SENTENCE_CHARS else text


def add_requests(g: RestoreView, sec: Section, s: RestoreSettings, shown: list[str]) -> None:
    asked = g.recent_first(g.by_kind.get("request", []))
    if not asked:
        return
    current, earlier = asked[0], asked[1 : 1 + s.earlier_requests]
    by = facts_of(g.nodes[current]).get("by")
    head = "Request (user): " if by in (None, "user") else "Request: "
    if g.nodes[current].get("pulled"):  # from the warm graph: an earlier session asked it
        # "Last request", not "Last session's request": the tag says the block comes from
        # earlier sessions, and 11 characters are a name at 400 tokens (the corpus chain: 59
        # -> 60 of 158 names, as many as the most frequent list). The day says which.
        when = g.earlier(current)
        if when:
            head = head.replace("):", f", {when}):") if "(" in head else head.replace(":", f" ({when}):")
        head = "Last r" + head[1:]
    room = min(s.request_chars, sec.room() - len(head) - 2)
    if room >= MIN_REQUEST_CHARS and sec.add(f'{head}"{esc(first_sentences(g.label(current), room), room)}"'):
        shown.append(current)
    elif sec.add_required(f'{head}"{esc(first_sentences(g.label(current), MIN_REQUEST_CHARS), MIN_REQUEST_CHARS)}"', COUNT_RESERVE):
        shown.append(current)  # what the user asked for the block must state, in its shortest form
    if earlier:
        line, taken = join_items("Earlier requests: ", [f'"{esc(g.label(i), s.earlier_request_chars)}"' + _from(g, i) for i in earlier], sec.room())
        if line and sec.add(line):
            shown.extend(earlier[:taken])


def add_tasks(g: RestoreView, sec: Section, s: RestoreSettings, shown: list[str]) -> None:
    tasks = []
    for nid in g.by_kind.get("task", []):
        said = facts_of(g.nodes[nid]).get("status")
        if said == "dropped":  # off the list, neither open nor done
            continue
        tasks.append((_TASK_STATUS.get(str(said), "pending"), nid))
    if not tasks:
        return
    recent = {nid: pos for pos, nid in enumerate(g.recent_first([nid for _, nid in tasks]))}

    def order(task: tuple[str, str]) -> tuple[Any, ...]:
        # Open tasks first: in progress (most recent first), then pending ones in the
        # order they were added, then done ones (most recent first).
        status, nid = task
        if status == "pending":
            return (_TASK_ORDER[status], g.nodes[nid]["first_seen"], nid)
        return (_TASK_ORDER[status], recent[nid])

    tasks.sort(key=order)
    head = "Open tasks: " if any(status != "done" for status, _ in tasks) else "Tasks (all done): "
    done = sum(status == "done" for status, _ in tasks)
    if s.done_tasks == "count" and len(tasks) == done:
        # Nothing open: that is what the line says (the last request is not waiting); what was
        # finished is history, and its labels cost names (docs/measurements.md, "startup").
        sec.add(f"Tasks: all {done} done")
        return
    if s.done_tasks == "count" and len(tasks) > done:
        tasks = tasks[: len(tasks) - done]  # done ones sort last
        head = f"Open tasks ({done} done): " if done else head
    # The task list is what the block must state: labels shorten until the first one fits,
    # and the shortest form may use room kept for the names.
    for chars in sorted({s.task_chars, s.task_chars * 2 // 3, min(s.task_chars, MIN_TASK_CHARS)}, reverse=True):
        items = [f"[{status}] {esc(g.label(nid), chars)}{_from(g, nid)}" for status, nid in tasks]
        line, taken = join_items(head, items, sec.room())
        if line and sec.add(line):
            shown.extend(nid for _, nid in tasks[:taken])
            return
    if sec.add_required(first_item(head, items[0], len(items)), COUNT_RESERVE):
        shown.append(tasks[0][1])


def add_decisions(g: RestoreView, sec: Section, s: RestoreSettings, shown: list[str]) -> None:
    """Every decision in force that fits, in rank order, before what any of them supersedes
    or rejects: a second decision in force says more than the first one's history."""
    ranked = g.ranked(INTENT_KINDS)
    if not ranked:
        return
    heading = "Decisions in force:\n"  # goes in with the first decision (one line of the block)
    room = sec.room()
    lines: dict[str, str] = {}
    used, misses = len(heading), 0
    for nid in ranked:
        line = _decision(g, nid, s.decision_chars)
        if used + len(line) + 1 > room:
            misses += 1
            if misses > DECISION_MISSES:
                break
            continue  # a shorter one may still fit: every decision in force matters
        lines[nid] = line
        used += len(line) + 1
    told: dict[str, list[str]] = {}
    for nid in lines:  # then, room allowing, the history: fullest first
        olds, rejected = g.supersedes.get(nid, [])[:2], g.rejects.get(nid, [])[:2]
        superseded = "".join(f'; supersedes "{esc(g.label(old), s.superseded_chars)}"' for old in olds)
        rejects = "; rejects " + ", ".join(esc(g.label(o), s.superseded_chars) for o in rejected) if rejected else ""
        for detail, ids in ((superseded + rejects, olds + rejected), (superseded, olds), (rejects, rejected)):
            if detail and used + len(detail) <= room:
                lines[nid] += detail
                used += len(detail)
                told[nid] = ids
                break
    for nid, line in lines.items():
        if not sec.add(heading + line):
            break
        heading = ""
        shown.extend([nid, *told.get(nid, [])])
    if heading and sec.add_required(heading + _decision(g, ranked[0], MIN_DECISION_CHARS), COUNT_RESERVE):
        shown.append(ranked[0])  # none fitted: the block still states the first, shortened


def _decision(g: RestoreView, nid: str, chars: int) -> str:
    kind = g.nodes[nid]["kind"]
    label = g.label(nid)
    about = _about(label, g.nodes[nid].get("summary") or "")
    return "- " + (f"[{kind}] " if kind != "decision" else "") + esc(label, chars) + (f" (`{esc(about, 60)}`)" if about else "") + _from(g, nid)


def _about(label: str, said: str) -> str:
    """The code name a decision is about when its label names none and the sentence it was
    read from quotes one: "Keep that one generic" of "I see `handleSessionInitErrors` is shared
    between Claude and Gemini - I'll keep that one generic." (a label that says "that one" or
    "the timeout" tells a later session nothing to find)."""
    if "`" not in said or _names_code(label):
        return ""
    parts = said.split("`")
    for span in parts[1:-1:2]:
        span = span.strip().removesuffix("()")
        if 3 < len(span) <= 60 and " " not in span and span not in label and _names_code(span):
            return span
    return ""


def _names_code(text: str) -> bool:
    """Does ``text`` hold a code name's shape (``a_b``, ``a.b``, ``aB``, four characters or more)?
    The probe's :func:`rolling_graph.probe.code_names.is_code_name` is the full rule; it needs
    ``re``, which a SessionStart hook rendering this does not load."""
    for word in text.split():
        word = word.strip("`'\"()[]{},;:!?")
        if len(word) >= 4 and ("_" in word or "." in word.strip(".") or any(a.islower() and b.isupper() for a, b in zip(word, word[1:], strict=False))):
            return True
    return False


def failure_text(text: str) -> str:
    """A failure as the block says it: a failing Go test by its name (``--- FAIL: TestX
    (0.46s)`` → ``TestX``; the line it stands on says it failed), a failing package by its
    last two parts (``FAIL entire.io/cli/cmd/strategy 1.795s`` → ``FAIL …/cmd/strategy``), each step of a result's
    history (``… → …``) alike. A cut through the test's name left neither the model nor a
    search anything to find (``--- FAIL: TestShadowBranchOverlap_DismissAndSta…``)."""
    steps = text.split(" → ")
    for i, step in enumerate(steps):
        if step.startswith("--- FAIL: ") and len(step) > 10:
            steps[i] = step[10:].split(" ", 1)[0]
        elif step.startswith("FAIL ") and step.endswith("s") and step.count(" ") == 2:  # FAIL <package> 1.795s
            package = step.split(" ")[1].split("/")
            steps[i] = "FAIL " + ("…/" if len(package) > 2 else "") + "/".join(package[-2:])
    return " → ".join(steps)


def _from(g: RestoreView, nid: str) -> str:
    """`` (Jan 5)`` after a line an earlier session left (:meth:`RestoreView.earlier`)."""
    when = g.earlier(nid)
    return f" ({when})" if when else ""


def add_approved(g: RestoreView, sec: Section, s: RestoreSettings, shown: list[str]) -> None:
    """Seeded flat memory: what the user approved as a rule or fact (``rgraph seed``), said as
    such, apart from the decisions read from sessions and from the names."""
    heading = "Approved by you (rules and facts):\n"
    for nid in g.approved:
        if not sec.add(heading + "- " + esc(g.label(nid), s.decision_chars)):
            break
        heading = ""
        shown.append(nid)


def _file_ops(node: Node) -> str:
    facts = facts_of(node)
    edits, writes, reads = count(facts, "edits"), count(facts, "writes"), count(facts, "reads")
    parts = []
    if writes:
        parts.append("written" if writes == 1 else f"written {writes}×")
    if edits:
        parts.append(f"edited {edits}×")
    if not parts and reads:
        parts.append(f"read {reads}×")
    if not parts:
        parts.append(f"touched {node['activations']}×" if node["activations"] > 0 else "touched")
    return ", ".join(parts)


def _changes(node: Node) -> int:
    """Edits and writes of a file."""
    facts = facts_of(node)
    return count(facts, "edits") + count(facts, "writes")


def _outcome(g: RestoreView, cmd: str, s: RestoreSettings) -> str:
    facts = facts_of(g.nodes[cmd])
    result = facts.get("result")
    if result and result.strip():
        return esc(failure_text(result), s.result_chars)
    return {"pass": "passed", "fail": "failed"}.get(str(facts.get("outcome")), "")


def add_working_set(g: RestoreView, sec: Section, s: RestoreSettings, shown: list[str]) -> None:
    files = g.ranked(("file",))
    with_facts = any(facts_of(g.nodes[f]) for f in files)
    if with_facts:
        # The files changed most first (ties by rank): what the work was about. By rank alone
        # a new session's one line was the last file touched, a test edited 5×, not the
        # LiveView edited 7× that its first events went back to (docs/measurements.md, "names").
        changes = {f: _changes(g.nodes[f]) for f in files}
        changed = sorted((f for f in files if changes[f]), key=lambda f: -changes[f])
        read = [f for f in files if not changes[f]][: max(0, s.working_min_files - len(changed))]
        files = changed + read
    commands = [c for c in g.ranked(("command",)) if facts_of(g.nodes[c]).get("outcome") in ("pass", "fail")]
    heading = "Working set:\n"  # goes in with the first line
    used_cmds: set[str] = set()
    misses = 0
    first_bare = ""  # the first file's shortest line, for when none fits
    for f in files:
        path = shown_path(g.paths[f], s.path_chars)
        name = path.rpartition("/")[2]
        ops = f" — {_file_ops(g.nodes[f])}" + (" (for a rejected option)" if g.is_rejected_name(name) else "")
        base = f"{heading}* {esc(path, len(path))}{ops}"
        what = g.what(f)[0]
        line = base + (": " + esc(what, s.what_chars) if what else "")
        tests = [c for c in g.recent_first(g.tested_by.get(f, [])) if c not in g.hidden and c not in used_cmds]
        outcome = _outcome(g, tests[0], s) if tests else ""
        test_part = f" · `{esc(short_command(g.label(tests[0]), s.command_chars), s.command_chars)}`: {outcome} (last run)" if outcome else ""
        # The fullest line that fits: with its test, without it, then with fewer names edited,
        # then the file by its name alone (``…/transcript_renderer_test.exs``).
        bare = shown_path(g.paths[f], len(name) + 2)
        bare_line = f"{heading}* {esc(bare, len(bare))}{ops}"
        first_bare = first_bare or bare_line
        candidates = [line + test_part, base + test_part, line, base + (": " + esc(what, s.what_chars // 2) if what else ""), base, bare_line]
        fitted = next((n for n, candidate in enumerate(candidates) if sec.add(candidate)), None)
        if fitted is None:  # a file with a shorter line may still fit
            misses += 1
            if misses >= WORKING_MISSES:
                break
            continue
        with_test = fitted < 2 and bool(test_part)
        heading = ""
        shown.append(f)
        if with_test:
            shown.append(tests[0])
            used_cmds.add(tests[0])
    if heading and first_bare and s.working_line_required and sec.add_required(first_bare, COUNT_RESERVE):  # none fitted: the first, by its name
        heading = ""
        shown.append(files[0])
    for c in [c for c in commands if c not in used_cmds][: s.working_commands]:
        facts = facts_of(g.nodes[c])
        runs = count(facts, "runs")
        verdict = "passed" if facts.get("outcome") == "pass" else "failed"
        line = f"{heading}* `{esc(short_command(g.label(c), s.command_chars), s.command_chars)}` — " + (f"ran {runs}×, " if runs else "") + f"last run {verdict}"
        result = failure_text((facts.get("result") or "").strip())
        before, arrow, last = result.rpartition(" → ")
        if arrow and last.strip().lower() == verdict:  # "X → passed": what it got past, its end not cut off
            line += f" (before: {esc(before.rpartition(' → ')[2], s.result_chars)})"
        elif result and result.lower() != verdict:
            line += f": {esc(result, s.result_chars)}"
        if not sec.add(line):
            break
        heading = ""
        shown.append(c)


def add_problems(g: RestoreView, sec: Section, s: RestoreSettings, shown: list[str]) -> None:
    open_errors = g.recent_first([e for e in g.by_kind.get("error", []) if facts_of(g.nodes[e]).get("state") == "open"])
    if not open_errors:
        return
    items = [esc(failure_text(g.label(e)), s.problem_chars) + _from(g, e) for e in open_errors]
    line, taken = join_items("Open problems: ", items, sec.room())
    if line and sec.add(line):
        shown.extend(open_errors[:taken])
        return
    # None fitted: what is still broken is what the block must state, the latest shortened.
    if sec.add_required(first_item("Open problems: ", esc(failure_text(g.label(open_errors[0])), MIN_PROBLEM_CHARS), len(items)), COUNT_RESERVE):
        shown.append(open_errors[0])
