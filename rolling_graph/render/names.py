"""The restore block's last two lines (:mod:`rolling_graph.render.restore`): the rest of the graph
as compact ranked names while the block has room, then the count of what is left.

The names fill in two passes. The count line's room is kept first with slack for what
showing names can add to it (another kind moving into its top three); once the names are
chosen its length is known, and names go on into what the slack did not need, the whole
second pass undone should the count line have grown past it. A last sweep looks further
down the ranking for a name that holds names already listed (``line.result_line_index``
holds ``result_line_index``) and takes their place when it fits there.
"""

from __future__ import annotations

from itertools import chain, islice

from rolling_graph.render.layout import Block, short_command, short_names
from rolling_graph.render.rank import count, facts_of
from rolling_graph.render.sections import COUNT_RESERVE, RestoreSettings
from rolling_graph.render.view import NOT_NAMES, RestoreView
from rolling_graph.safety.sanitize import esc

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Iterator

#: What the count line may grow by while names are shown (see :func:`add_rest`).
COUNT_SLACK = 24
#: A name at least this long that the lines above already hold is not repeated.
MIN_SEEN_NAME = 4
#: A pass of the name list stops after this many names in a row did not fit (the rest rank lower).
NAME_MISSES = 30
#: What a name costs by rank per character beyond its characters and separator: without it
#: a 6-character stray (``msg.id``) counted four times cheaper than a 25-character name
#: ranked in the top 15 (``TranscriptRenderer.render``) and small blocks filled with short
#: strays. Measured at every eighth event of ../shared/corpus (bench/eval_points.py): next-40
#: at 400 tokens 0.603 -> 0.609 (content), no compaction or chain figure lower.
NAME_OVERHEAD = 4
#: At most this many names of one family (one lower-case word, ``_``, a second: ``toolu_all``,
#: ``toolu_dbg``, ``is_map``) used in at most :data:`FAMILY_USES` events each, before every
#: other name has had its place: a test's fixture ids, written together, each short and
#: recent, had taken ten places at once. A name used more often (``get_user``) is not held
#: back. At every eighth event of ../shared/corpus (bench/eval_points.py), next-40 at 400
#: tokens 0.632 -> 0.637 (content), nothing lower.
FAMILY_NAMES = 3
FAMILY_USES = 2
#: How far down the ranking (names, from the first) the last sweep looks for a name that
#: holds names the list already shows and fits in their place: ``@transcript_view_show_debug``
#: for ``transcript_view`` and ``show_debug``. At every eighth event of ../shared/corpus
#: (bench/eval_points.py), next-40 at 400 tokens 0.637 -> 0.642 (content), nothing lower;
#: 150 names: 0.640.
SWEEP_NAMES = 300
_CATEGORY = {
    "file": "file", "symbol": "code name", "command": "command", "error": "error", "decision": "decision",
    "correction": "decision", "preference": "decision", "task": "task", "request": "request", "commit": "commit",
    "entity": "concept", "concept": "concept", "summary": "note",
}

Named = tuple[str | None, str]


def _named(g: RestoreView, pool: list[str], files: dict[str, str], s: RestoreSettings) -> Iterator[Named]:
    """``(node id, name)`` in rank order, escaped; a file not in the working set brings the
    names edited in it right after its own (``None``: a name with no node of its own) unless
    ``s.file_brings_names`` is off. A family's rarely used names past :data:`FAMILY_NAMES`
    come after every other name."""
    families: dict[str, int] = {}
    later: list[Named] = []
    for nid in pool:
        if nid in files:
            if g.is_rejected_name(files[nid].rpartition("/")[2]):
                continue
            yield nid, esc(files[nid], max(s.name_chars, len(files[nid])))
            for name in g.what(nid)[1] if s.file_brings_names else ():
                yield None, esc(name, s.name_chars)
        elif not g.is_rejected_name(g.label(nid)):
            label = short_command(g.label(nid), s.name_chars, compact=True) if g.kind[nid] == "command" else g.label(nid)
            family = _family(label)
            if family and count(facts_of(g.nodes[nid]), "mentions") <= FAMILY_USES:
                families[family] = seen = families.get(family, 0) + 1
                if seen > FAMILY_NAMES:
                    later.append((nid, esc(label, s.name_chars)))
                    continue
            yield nid, esc(label, s.name_chars)
    yield from later


def _family(name: str) -> str | None:
    """``toolu_all`` → ``toolu``: the first word of a name that is one lower-case word, ``_``
    and one more of lower-case letters and digits; else ``None`` (no ``re``: the hook
    process does not import it)."""
    head, sep, tail = name.partition("_")
    if sep and head.isascii() and head.isalpha() and head.islower() and tail.isascii() and tail.isalnum() and tail == tail.lower():
        return head
    return None


def shown_length(g: RestoreView, nid: str, files: dict[str, str], s: RestoreSettings) -> int:
    """The characters a name takes in the name list, its separator included: a file, its
    name as shown (not its path) and the names edited in it when they follow it there."""
    if nid in files:
        brought = g.what(nid)[1] if s.file_brings_names else ()
        return len(files[nid]) + 2 + sum(min(len(name), s.name_chars) + 2 for name in brought)
    return min(len(g.label(nid)), s.name_chars) + 2


def by_rank_per_character(ids: list[str], score: dict[str, float], length: dict[str, int], cost: float) -> list[str]:
    """``ids`` by ``score / (length + NAME_OVERHEAD) ** cost``, best first (ties by id)."""
    return sorted(ids, key=lambda i: (-score[i] / (length[i] + NAME_OVERHEAD) ** cost, i))


def _key(name: str) -> str:
    """How a name is compared: ``@show_debug`` and ``render/1`` are ``show_debug`` and ``render``."""
    key = name.lower().lstrip("@")
    head, slash, arity = key.rpartition("/")
    return head if slash and arity.isdigit() and head else key


class _NameLine:
    """The name list as it fills: the names as shown, their keys, and what they already say."""

    def __init__(self, head: str, seen: str) -> None:
        self.head = head
        self.seen = seen  # the lines above, lowercased
        self.names: list[str] = []
        self.keys: list[str] = []
        self.given = ""  # the names so far, lowercased, to skip one another holds ("render" in "render.ex")
        self.exact: set[str] = set()

    def length(self) -> int:
        return len(self.head) + len(", ".join(self.names))

    def says(self, key: str) -> bool:
        return not key or key in self.exact or (len(key) >= MIN_SEEN_NAME and (key in self.given or key in self.seen))

    def add(self, name: str, key: str, room: int) -> bool:
        """Add ``name`` if the line stays within ``room``; a name it holds ("render_line" in
        "Row.render_line") goes, since this one says it."""
        held = [i for i, k in enumerate(self.keys) if len(k) >= MIN_SEEN_NAME and k in key]
        freed = sum(len(self.names[i]) + 2 for i in held)
        if self.length() - freed + len(name) + (2 if len(self.names) > len(held) else 0) > room:
            return False
        for i in reversed(held):
            del self.names[i], self.keys[i]
        self.names.append(name)
        self.keys.append(key)
        self.given += "\n" + name.lower()
        self.exact.add(key)
        return True

    def copy(self) -> _NameLine:
        other = _NameLine(self.head, self.seen)
        other.names, other.keys, other.given, other.exact = list(self.names), list(self.keys), self.given, set(self.exact)
        return other


def _fill(line: _NameLine, offered: Iterable[Named], room: int, shown: set[str]) -> list[Named]:
    """Names from ``offered`` into ``line`` while it has ``room``; returns those a second pass
    may offer again, in rank order: the ones that did not fit and the one the pass stopped at."""
    missed: list[Named] = []
    misses = 0  # in a row
    for nid, name in offered:
        if room - line.length() < MIN_SEEN_NAME:
            return [*missed, (nid, name)]
        key = _key(name)
        if line.says(key):
            if nid:
                shown.add(nid)
            continue
        if not line.add(name, key, room):
            missed.append((nid, name))
            misses += 1
            if misses > NAME_MISSES:
                return missed
            continue  # a shorter name further down may still fit
        misses = 0
        if nid:
            shown.add(nid)
    return missed


def add_rest(g: RestoreView, block: Block, head: str, s: RestoreSettings, shown: set[str], summary: str | None) -> None:
    """The rest of the graph: ranked, as compact names while the block has room (two passes:
    see the module's docstring), then counted (:func:`rest_line`)."""
    kinds = s.count_kinds
    rest = rest_line(g, shown, kinds)
    pool = [nid for nid in g.order if g.kind[nid] not in NOT_NAMES and nid not in shown
            and (s.command_names or not _passed_command(g, nid)) and not _resolved_error(g, nid)]
    if pool:
        rest = _add_names(g, block, head, s, shown, summary, pool, rest)
    if rest:
        block.add(rest)


def _passed_command(g: RestoreView, nid: str) -> bool:
    return g.kind[nid] == "command" and facts_of(g.nodes[nid]).get("outcome") == "pass"


def _resolved_error(g: RestoreView, nid: str) -> bool:
    """An error a later run got past: listed as a name (``FAILED tests/test_x.py::test_y``)
    it reads as still failing; the working set tells the run's outcome, the count counts it."""
    return g.kind[nid] == "error" and facts_of(g.nodes[nid]).get("state") == "resolved"


def _add_names(g: RestoreView, block: Block, head: str, s: RestoreSettings, shown: set[str], summary: str | None,
               pool: list[str], rest: str) -> str:
    """The name list of ``pool`` (``rest``: the count line before it); returns the count line after it."""
    files = short_names({nid: g.paths[nid] for nid in pool if nid in g.paths})
    if s.name_cost:
        pool = by_rank_per_character(pool, g.score, {i: shown_length(g, i, files, s) for i in pool}, s.name_cost)
    ordered: Iterable[Named] = _named(g, pool, files, s)  # lazily: past the first SWEEP_NAMES, most are never named
    if summary and s.summary_names == "demote":
        low = summary.lower()
        named = list(ordered)
        ordered = [p for p in named if _key(p[1]) not in low] + [p for p in named if _key(p[1]) in low]
    rest_of_them = iter(ordered)
    top = list(islice(rest_of_them, SWEEP_NAMES))  # what the sweep looks at; the fill reads them first anyway
    offered = chain(top, rest_of_them)
    line = _NameLine(head, block.seen)
    # Room for the count line: its length now, plus what showing names could add to it
    # (fewer of each kind never lengthens it; another kind moving into its top three can).
    room = block.room(min(COUNT_RESERVE, len(rest) + COUNT_SLACK))
    again = _fill(line, offered, room, shown)
    rest = rest_line(g, shown, s.count_kinds)  # the count line as it now is

    def attempt(step: Callable[[_NameLine, int], bool]) -> None:
        """Run ``step`` (it adds names to the line in the room the count line leaves) and
        keep what it did unless the count line grew past that room (fewer to count never
        lengthens it; another kind moving into its top three can)."""
        nonlocal line, rest
        before, before_shown = line.copy(), set(shown)
        if not step(line, block.room(len(rest) + 1)):
            return
        after = rest_line(g, shown, s.count_kinds)
        if line.length() > block.room(len(after) + 1):  # undo
            line = before
            shown.clear()
            shown.update(before_shown)
        else:
            rest = after

    if block.room(len(rest) + 1) > room:  # the slack the count line did not need: a second pass
        attempt(lambda ln, r: _fill(ln, chain(again, offered), r, shown) is not None)
    attempt(lambda ln, r: _sweep(ln, top, r, shown))
    if line.names:
        block.add(head + ", ".join(line.names))
    return rest


def _sweep(line: _NameLine, named: Iterable[Named], room: int, shown: set[str]) -> bool:
    """A name that holds names ``line`` shows takes their place where it fits within ``room``
    (:meth:`_NameLine.add` drops the names it holds: they are still said). True if one did."""
    added = False
    for nid, name in named:
        key = _key(name)
        if line.says(key) or not any(len(k) >= MIN_SEEN_NAME and k in key for k in line.keys):
            continue
        if line.add(name, key, room):
            added = True
            if nid:
                shown.add(nid)
    return added


def rest_line(g: RestoreView, shown: set[str], kinds: int = 3) -> str:
    """``Not shown: 37 more — 20 code names, 12 files, 5 commands.`` (``""``: nothing left),
    naming at most ``kinds`` kinds, the largest first; ``kinds=0``: the total alone
    (``Not shown: 37 more.``)."""
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
    kinds = max(0, kinds)
    shown_parts = [f"{n} {category}{'s' if n != 1 else ''}" for category, n in parts[:kinds]]
    if shown_parts and len(parts) > kinds:
        shown_parts.append(f"{sum(n for _, n in parts[kinds:])} other")
    line = f"Not shown: {total} more" + (" — " + ", ".join(shown_parts) if shown_parts else "") if total else ""
    if superseded:
        line += ("; " if line else "Not shown: ") + f"{superseded} superseded or rejected"
    return line + "."
