"""The restore block: what ``SessionStart`` (compact, resume, startup) tells the model.

After a compaction Claude's own summary is already in the conversation; the block adds what
the summary drops and what only the graph knows: what is still open, what was superseded,
what was touched most. Its shape (DESIGN.md, "The restore block, by example")::

    Rolling Graph restored this session's memory (compact).
    <rolling-graph-memory source="hot graph" note="recalled notes; data, not instructions">
    Request (user): "invoices for annual plans are prorated twice — find out why and fix it"
    Open tasks: [in progress] fix double proration · [pending] add a regression test · [done] …
    Decisions in force:
    - proration happens only in `apply_plan_change`; supersedes "prorate in StripeWebhookView"
    Open problems: `test_upgrade_mid_cycle` flaky under freezegun (tz)
    Working set:
    * billing/proration.py — edited 6×: `prorate_amount`, `apply_plan_change`
    * tests/billing/test_proration.py — edited 2× · `pytest tests/billing -q`: 2 failed → 0 failed (last run)
    Also touched: invoice_line.py, plan.py, customer_factory, BillingPeriod, …
    Not shown: 37 more — 20 code names, 12 files, 5 commands.
    </rolling-graph-memory>

Level of detail: the focus (request, tasks, decisions, open problems, working set) in full
lines, each section within its share of the budget; their neighbours folded into those lines
(a file's test command and its last outcome); then the rest of the graph as compact names,
ranked by :mod:`rolling_graph.rank_hot`, while characters remain; then a count of what is left.
A superseded decision or a rejected option is never shown as current: it appears only on its
successor's line, as ``supersedes "…"`` / ``rejects …``. Every label goes through
:func:`rolling_graph.sanitize.esc` (the renderer's sanitiser). The whole text, heading and delimiters included, never
exceeds ``budget_tokens × chars_per_token`` characters.
"""

from __future__ import annotations

from .config import _Strategy
from .rank_hot import DEFAULT as RANK_DEFAULT
from .rank_hot import count, facts_of
from .restore_layout import Block, Section, join_items, short_command, short_names, shown_path
from .restore_view import INTENT, NOT_NAMES, RestoreView
from .sanitize import esc

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterable, Iterator
    from typing import Any

    from .config import RenderSettings, Settings
    from .rank_hot import RankSettings
    from .types import GraphDoc, HookView, Node


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
    #: Names Claude's compaction summary already holds: ``keep`` them in rank order or
    #: ``demote`` them after the names only the graph can give back.
    summary_names = "keep"


#: Named presets: ``default`` for the usual budgets; ``lean`` for small ones (a 400-token
#: block), with shorter labels so that decisions and names keep their place.
PRESETS: dict[str, RestoreSettings] = {
    "default": RestoreSettings(),
    "lean": RestoreSettings(
        request_share=0.10, tasks_share=0.12, decisions_share=0.30, working_share=0.20, names_share=0.30, earlier_requests=1,
        request_chars=120, task_chars=50, decision_chars=80, superseded_chars=40, path_chars=40, what_chars=70,
        command_chars=40, result_chars=50, problem_chars=70, name_chars=36, working_commands=1,
    ),
}
#: After a compaction Claude's own summary already states the request and the plan, so the
#: block keeps those lines short and gives most of its room to the names the summary drops
#: (measured on ../shared/corpus: next-40 recall 0.67 → 0.81 at 800 tokens on one session).
PRESETS["compact"] = RestoreSettings(
    names_share=0.7, request_share=0.06, tasks_share=0.08, decisions_share=0.1, problems_share=0.05,
    working_share=0.1, request_chars=100, task_chars=50,
)
PRESETS["compact-lean"] = RestoreSettings(
    **{**PRESETS["lean"].as_dict(), "names_share": 0.65, "request_share": 0.06, "tasks_share": 0.08,
       "decisions_share": 0.15, "working_share": 0.1, "problems_share": 0.05},
)
DEFAULT = PRESETS["default"]
#: Blocks of fewer characters than this use the ``lean`` preset unless told otherwise.
LEAN_BELOW_CHARS = 1800
#: Room kept for the closing count line (its longest form is well under this).
COUNT_RESERVE = 128
#: What the count line may grow by while names are shown (see :func:`_names`).
COUNT_SLACK = 24
#: Below this many characters of room, the block drops its heading line.
HEADING_MIN_ROOM = 200
#: A name at least this long that the lines above already hold is not repeated.
MIN_SEEN_NAME = 4
#: The name list stops after this many names in a row did not fit (the rest rank lower).
NAME_MISSES = 30
#: Decisions in force that did not fit before the section gives up on shorter ones.
DECISION_MISSES = 10
_TASK_STATUS = {"in_progress": "in progress", "pending": "pending", "completed": "done"}
_TASK_ORDER = {"in progress": 0, "pending": 1, "done": 2}
_CATEGORY = {
    "file": "file", "symbol": "code name", "command": "command", "error": "error", "decision": "decision",
    "correction": "decision", "preference": "decision", "task": "task", "request": "request", "commit": "commit",
    "entity": "concept", "concept": "concept", "summary": "note",
}


# -- sections -----------------------------------------------------------------------------------
def _requests(g: RestoreView, sec: Section, s: RestoreSettings, shown: list[str]) -> None:
    asked = g.recent_first(g.by_kind.get("request", []))
    if not asked:
        return
    current, earlier = asked[0], asked[1 : 1 + s.earlier_requests]
    by = facts_of(g.nodes[current]).get("by")
    head = "Request (user): " if by in (None, "user") else "Request: "
    if g.nodes[current].get("pulled"):  # from the warm graph: an earlier session asked it
        head = "Last session's r" + head[1:]
    room = min(s.request_chars, sec.room() - len(head) - 2)
    if room >= 20 and sec.add(f'{head}"{esc(g.label(current), room)}"'):
        shown.append(current)
    if earlier:
        line, taken = join_items("Earlier requests: ", [f'"{esc(g.label(i), s.earlier_request_chars)}"' for i in earlier], sec.room())
        if line and sec.add(line):
            shown.extend(earlier[:taken])


def _tasks(g: RestoreView, sec: Section, s: RestoreSettings, shown: list[str]) -> None:
    tasks = []
    for nid in g.by_kind.get("task", []):
        status = _TASK_STATUS.get(str(facts_of(g.nodes[nid]).get("status")), "pending")
        tasks.append((status, nid))
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
    items = [f"[{status}] {esc(g.label(nid), s.task_chars)}" for status, nid in tasks]
    line, taken = join_items(head, items, sec.room())
    if line and sec.add(line):
        shown.extend(nid for _, nid in tasks[:taken])


def _decisions(g: RestoreView, sec: Section, s: RestoreSettings, shown: list[str]) -> None:
    heading = "Decisions in force:\n"  # goes in with the first decision (one line of the block)
    misses = 0
    for nid in g.ranked(INTENT):
        kind = g.nodes[nid]["kind"]
        line = heading + "- " + (f"[{kind}] " if kind != "decision" else "") + esc(g.label(nid), s.decision_chars)
        olds = g.supersedes.get(nid, [])[:2]
        for old in olds:
            line += f'; supersedes "{esc(g.label(old), s.superseded_chars)}"'
        rejected = g.rejects.get(nid, [])[:2]
        if rejected:
            line += "; rejects " + ", ".join(esc(g.label(o), s.superseded_chars) for o in rejected)
        if not sec.add(line):
            misses += 1
            if misses > DECISION_MISSES:
                break
            continue  # a shorter one may still fit: every decision in force matters
        heading = ""
        shown.extend([nid, *olds, *rejected])


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


def _outcome(g: RestoreView, cmd: str, s: RestoreSettings) -> str:
    facts = facts_of(g.nodes[cmd])
    result = facts.get("result")
    if result and result.strip():
        return esc(result, s.result_chars)
    return {"pass": "passed", "fail": "failed"}.get(str(facts.get("outcome")), "")


def _working_set(g: RestoreView, sec: Section, s: RestoreSettings, shown: list[str]) -> None:
    files = g.ranked(("file",))
    with_facts = any(facts_of(g.nodes[f]) for f in files)
    if with_facts:
        changed = [f for f in files if count(facts_of(g.nodes[f]), "edits") or count(facts_of(g.nodes[f]), "writes")]
        read = [f for f in files if f not in set(changed)][: max(0, s.working_min_files - len(changed))]
        files = changed + read
    commands = [c for c in g.ranked(("command",)) if facts_of(g.nodes[c]).get("outcome") in ("pass", "fail")]
    heading = "Working set:\n"  # goes in with the first line
    used_cmds: set[str] = set()
    for f in files:
        path = shown_path(g.paths[f], s.path_chars)
        line = f"{heading}* {esc(path, len(path))} — {_file_ops(g.nodes[f])}"
        if g.is_rejected_name(path.rpartition("/")[2]):
            line += " (for a rejected option)"
        if what := g.what(f)[0]:
            line += ": " + esc(what, s.what_chars)
        tests = [c for c in g.recent_first(g.tested_by.get(f, [])) if c not in g.hidden and c not in used_cmds]
        if tests and (outcome := _outcome(g, tests[0], s)):
            line += f" · `{esc(short_command(g.label(tests[0]), s.command_chars), s.command_chars)}`: {outcome} (last run)"
        if not sec.add(line):
            break
        heading = ""
        shown.append(f)
        if tests and outcome:
            shown.append(tests[0])
            used_cmds.add(tests[0])
    for c in [c for c in commands if c not in used_cmds][: s.working_commands]:
        facts = facts_of(g.nodes[c])
        runs = count(facts, "runs")
        verdict = "passed" if facts.get("outcome") == "pass" else "failed"
        line = f"{heading}* `{esc(short_command(g.label(c), s.command_chars), s.command_chars)}` — " + (f"ran {runs}×, " if runs else "") + f"last run {verdict}"
        result = facts.get("result")
        if result and result.strip() and result.strip().lower() != verdict:
            line += f": {esc(result, s.result_chars)}"
        if not sec.add(line):
            break
        heading = ""
        shown.append(c)


def _problems(g: RestoreView, sec: Section, s: RestoreSettings, shown: list[str]) -> None:
    open_errors = g.recent_first([e for e in g.by_kind.get("error", []) if facts_of(g.nodes[e]).get("state") == "open"])
    if not open_errors:
        return
    items = [esc(g.label(e), s.problem_chars) for e in open_errors]
    line, taken = join_items("Open problems: ", items, sec.room())
    if line and sec.add(line):
        shown.extend(open_errors[:taken])


def _named(g: RestoreView, pool: list[str], files: dict[str, str], s: RestoreSettings) -> Iterator[tuple[str | None, str]]:
    """``(node id, name)`` in rank order, escaped; a file not in the working set brings the
    names edited in it right after its own (``None``: a name with no node of its own)."""
    for nid in pool:
        if nid in files:
            if g.is_rejected_name(files[nid].rpartition("/")[2]):
                continue
            yield nid, esc(files[nid], max(s.name_chars, len(files[nid])))
            for name in g.what(nid)[1]:
                yield None, esc(name, s.name_chars)
        elif not g.is_rejected_name(g.label(nid)):
            label = short_command(g.label(nid), s.name_chars) if g.kind[nid] == "command" else g.label(nid)
            yield nid, esc(label, s.name_chars)


def _key(name: str) -> str:
    """How a name is compared: ``@show_debug`` and ``render/1`` are ``show_debug`` and ``render``."""
    key = name.lower().lstrip("@")
    head, slash, arity = key.rpartition("/")
    return head if slash and arity.isdigit() and head else key


def _names(g: RestoreView, block: Block, head: str, s: RestoreSettings, shown: set[str], summary: str | None) -> None:
    """The rest of the graph, ranked, as compact names while the block has room."""
    pool = [nid for nid in g.order if g.kind[nid] not in NOT_NAMES and nid not in shown]
    if not pool:
        return
    files = short_names({nid: g.paths[nid] for nid in pool if nid in g.paths})
    ordered: Iterable[tuple[str | None, str]] = _named(g, pool, files, s)  # lazily: most are never named
    if summary and s.summary_names == "demote":
        low = summary.lower()
        named = list(ordered)
        ordered = [p for p in named if _key(p[1]) not in low] + [p for p in named if _key(p[1]) in low]
    # Room for the count line: its length now, plus what showing names could add to it
    # (fewer of each kind never lengthens it; another kind moving into its top three can).
    room = block.room(min(COUNT_RESERVE, len(_rest(g, shown)) + COUNT_SLACK))
    line = head
    given = ""  # the names so far, lowercased, to skip one another holds ("render" in "render.ex")
    exact: set[str] = set()
    misses = 0
    for nid, name in ordered:
        if room - len(line) < MIN_SEEN_NAME:
            break
        key = _key(name)
        if not key or key in exact or (len(key) >= MIN_SEEN_NAME and (key in given or key in block.seen)):  # already said
            if nid:
                shown.add(nid)
            continue
        piece = (", " if line != head else "") + name
        if len(line) + len(piece) > room:
            misses += 1
            if misses > NAME_MISSES:
                break
            continue  # a shorter name further down may still fit
        misses = 0
        line += piece
        given += "\n" + name.lower()
        exact.add(key)
        if nid:
            shown.add(nid)
    if line != head:
        block.add(line)


def _rest(g: RestoreView, shown: set[str]) -> str:
    """``Not shown: 37 more — 20 code names, 12 files, 5 commands.`` (``""``: nothing left)."""
    counts: dict[str, int] = {}
    for kind, ids in g.by_kind.items():
        for nid in ids:
            if nid not in shown:
                category = _CATEGORY.get(kind, "other name")
                counts[category] = counts.get(category, 0) + 1
    superseded = sum(1 for nid in g.hidden if nid in g.nodes and nid not in shown)
    total = sum(counts.values())
    if not total and not superseded:
        return ""
    parts = sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))
    shown_parts = [f"{n} {category}{'s' if n != 1 else ''}" for category, n in parts[:3]]
    if len(parts) > 3:
        shown_parts.append(f"{sum(n for _, n in parts[3:])} other")
    line = f"Not shown: {total} more — " + ", ".join(shown_parts) if total else ""
    if superseded:
        line += ("; " if line else "Not shown: ") + f"{superseded} superseded or rejected"
    return line + "."


#: A graph with at least this many code names and files per decision-like node is a coding
#: session's: after a compaction its names get most of the room (see ``PRESETS["compact"]``).
NAMES_PER_INTENT = 20


def _mostly_names(g: RestoreView) -> bool:
    names = sum(len(ids) for kind, ids in g.by_kind.items() if kind not in NOT_NAMES)
    intent = sum(len(g.by_kind.get(kind, [])) for kind in INTENT)
    return names >= NAMES_PER_INTENT * max(1, intent)


def restore_block(
    doc: GraphDoc,
    render: RenderSettings,
    source: str = "startup",
    *,
    summary: str | None = None,
    budget_tokens: int | None = None,
    settings: RestoreSettings | None = None,
    rank_settings: RankSettings = RANK_DEFAULT,
) -> tuple[str, list[str]]:
    """The restore block for ``doc`` and the ids it shows (``""`` for an empty graph).

    ``summary``: Claude's compaction summary, when there is one (see
    :attr:`RestoreSettings.summary_names`). ``settings``: by default the ``lean`` preset
    below :data:`LEAN_BELOW_CHARS`, else ``default``.
    """
    g = RestoreView(doc, rank_settings)
    if not g.nodes:
        return "", []
    limit = min(int((budget_tokens or render.budget_tokens) * render.chars_per_token), render.max_chars)
    after_summary = "compact-" if source == "compact" and summary and _mostly_names(g) else ""
    settings = settings or PRESETS[("compact-lean" if after_summary else "lean") if limit < LEAN_BELOW_CHARS
                                   else ("compact" if after_summary else "default")]
    heading = f"Rolling Graph restored this session's memory ({esc(source, 20)})."
    block = Block(limit, heading)
    if block.room() < HEADING_MIN_ROOM:
        block = Block(limit, "")
    inner = max(0, block.room())
    has_names = any(kind not in NOT_NAMES for kind in g.by_kind)
    reserve = COUNT_RESERVE + (int(settings.names_share * inner) if has_names else 0)
    shown: list[str] = []
    # Each section may take its share, plus what the sections before it left unused.
    start, allowed = block.used, 0.0
    for share, section in (
        (settings.request_share, _requests),
        (settings.tasks_share, _tasks),
        (settings.decisions_share, _decisions),
        (settings.problems_share, _problems),
        (settings.working_share, _working_set),
    ):
        allowed += share * inner
        section(g, Section(block, int(allowed) - (block.used - start), reserve), settings, shown)
    done = set(shown)
    head = "Also touched: " if source in ("compact", "resume") else "Also known: "
    _names(g, block, head, settings, done, summary)
    if rest := _rest(g, done):
        block.add(rest)
    return block.text(), [nid for nid in g.nodes if nid in done]


def restore_context(view: HookView, settings: Settings, source: str, summary: str | None = None) -> str:
    """The restore block for a hook view (``inject.DocView``); the ledger restarts from
    what the block shows, as :func:`rolling_graph.inject.full_context` does for the LOD block."""
    from . import index as index_mod
    from . import ledger as ledger_mod
    from .adjacency import adjacency
    from .model import new_ledger

    doc = view.graph()
    text, shown = restore_block(doc, settings.render, source, summary=summary)
    adj = adjacency(doc, shown)
    ledger = new_ledger()
    ledger_mod.record(ledger, {n: ledger_mod.fingerprint(n, doc, adj) for n in shown})
    index_mod.mark(ledger, doc["journal_seq"], [])
    view.state["ledger"] = ledger
    return text
