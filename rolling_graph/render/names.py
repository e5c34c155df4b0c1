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

from bisect import bisect_right
from itertools import chain, islice

from rolling_graph.core.vocabulary import TECH
from rolling_graph.render.layout import Block, short_command, short_names
from rolling_graph.render.rank import best_first, count, facts_of
from rolling_graph.render.sections import COUNT_RESERVE, RestoreSettings, failure_text
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
#: strays (docs/measurements.md, "names").
NAME_OVERHEAD = 4
#: At most this many names of one family (one lower-case word, ``_``, a second: ``toolu_all``,
#: ``toolu_dbg``, ``is_map``) used in at most :data:`FAMILY_USES` events each, before every
#: other name has had its place: a test's fixture ids, written together, each short and
#: recent, had taken ten places at once. A name used more often (``get_user``) is not held
#: back (docs/measurements.md, "names").
FAMILY_NAMES = 3
FAMILY_USES = 2
#: How far down the ranking (names, from the first) the last sweep looks for a name that
#: holds names the list already shows and fits in their place: ``@transcript_view_show_debug``
#: for ``transcript_view`` and ``show_debug`` (docs/measurements.md, "names").
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
            for name in g.what(nid)[1] if s.file_brings_names and not s.name_map else ():
                yield None, esc(name, s.name_chars)
        elif not g.is_rejected_name(g.label(nid)):
            kind = g.kind[nid]
            label = short_command(g.label(nid), s.name_chars, compact=True) if kind == "command" else g.label(nid)
            label = failure_text(label) if kind == "error" else label
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
        brought = g.what(nid)[1] if s.file_brings_names and not s.name_map else ()
        return len(files[nid]) + 2 + sum(min(len(name), s.name_chars) + 2 for name in brought)
    return min(len(g.label(nid)), s.name_chars) + 2


def by_rank_per_character(ids: list[str], score: dict[str, float], length: dict[str, int], cost: float) -> list[str]:
    """``ids`` by ``score / (length + NAME_OVERHEAD) ** cost``, best first (ties by id)."""
    return best_first({i: score[i] / (length[i] + NAME_OVERHEAD) ** cost for i in ids})


def _key(name: str) -> str:
    """How a name is compared: ``@show_debug`` and ``render/1`` are ``show_debug`` and ``render``."""
    key = name.lower().lstrip("@")
    head, slash, arity = key.rpartition("/")
    return head if slash and arity.isdigit() and head else key


#: Who named a name no file owns: its group's heading in the map (``facts.by``).
BY_HEADING = {"user": "In requests", "assistant": "In Claude's notes", "tool": "In commands and searches"}


class _NameLine:
    """The names as they fill, as a map: each under its owner — the file whose edit or write
    last used it (``facts.in``), a file standing for itself — else under who named it
    (:data:`BY_HEADING`). Groups come in the order of their best name; in a group, names
    in rank order. What it says so far is kept to skip a name another already holds."""

    def __init__(self, head: str, seen: str, group_of: MapGroups | None = None,
                 unowned: int = RestoreSettings.unowned_names) -> None:
        self.head = head
        self.seen = seen  # the lines above, lowercased
        #: ``nid → (group key, heading, owner file id)``; by default one flat group.
        self.group_of: Callable[[str | None], tuple[str, str, str | None]] = group_of or _flat
        #: Whether a name can stand under a file (the graph has one).
        self.owned_any = group_of is not None and group_of.has_owners
        #: The most names that stand under no file or module, once some name does
        #: (``RestoreSettings.unowned_names``).
        self.unowned = unowned
        self.names: list[str] = []
        self.keys: list[str] = []
        self.groups: list[str] = []  # each name's group key
        self.headings: dict[str, tuple[str, str | None]] = {}  # group key → (heading, owner file id), in order
        self.given = ""  # the names and headings so far, lowercased, to skip one another holds
        self.exact: set[str] = set()
        #: The keys of :data:`MIN_SEEN_NAME` characters or more, by their first that many: which of
        #: them a name holds is found from the name's own few windows of that length, not by trying
        #: every key in the map (the sweep asks it of 300 names, a map holds ~100).
        self._long: dict[str, list[str]] = {}
        #: Whether a heading has an owner (a file or a module), and how many names stand under
        #: none: :meth:`full_without_owner` is asked of every name offered.
        self._any_owner = False
        self._unowned = 0
        #: How many names stand in each group (a file's with none is on the ``Files:`` line).
        self._members: dict[str, int] = {}
        #: :meth:`length` of the map as it stands (it changes only in :meth:`add`): the fill asks
        #: before every name it offers, and laying out the lines again each time was most of a
        #: block's rendering (~80 names: ~600 asks).
        self._length_now: int | None = None

    def _lines(self, names: list[str], groups: list[str], headings: dict[str, tuple[str, str | None]]) -> list[str]:
        """The map's lines: the head; each file with the names it owns, best first; the
        files that own none of those shown, on one line; then the names by who named them."""
        members: dict[str, list[str]] = {key: [] for key in headings}
        for name, group in zip(names, groups, strict=True):
            members[group].append(name)
        if list(headings) in ([], [""]):
            return [self.head + ", ".join(members.get("", []))]
        owned = [f"* {heading}: {', '.join(members[key])}" for key, (heading, owner) in headings.items()
                 if owner is not None and owner != MODULE and members[key]]
        alone = [heading for key, (heading, owner) in headings.items() if owner and not members[key]]
        modules = [f"* {heading}: {', '.join(members[key])}" for key, (heading, owner) in headings.items() if owner == MODULE and members[key]]
        others = [f"{heading}: {', '.join(members[key])}" if key else ", ".join(members[key])
                  for key, (heading, owner) in headings.items() if owner is None and members[key]]
        return [self.head.rstrip(), *owned, *([f"Files: {', '.join(alone)}"] if alone else []), *modules, *others]

    def _length(self, names: list[str], groups: list[str], headings: dict[str, tuple[str, str | None]]) -> int:
        lines = self._lines(names, groups, headings)
        return sum(map(len, lines)) + len(lines) - 1

    def length(self) -> int:
        if self._length_now is None:
            self._length_now = self._length(self.names, self.groups, self.headings)
        return self._length_now

    def says(self, key: str) -> bool:
        return not key or key in self.exact or (len(key) >= MIN_SEEN_NAME and (key in self.given or key in self.seen))

    def holds(self, key: str) -> set[str]:
        """The map's keys of :data:`MIN_SEEN_NAME` characters or more that ``key`` holds
        (``render_line`` in ``row.render_line``)."""
        long = self._long
        found: set[str] = set()
        if long:
            for at in range(len(key) - MIN_SEEN_NAME + 1):
                for held in long.get(key[at : at + MIN_SEEN_NAME], ()):
                    if key.startswith(held, at):
                        found.add(held)
        return found

    def _index(self, key: str, drop: bool = False) -> None:
        if len(key) < MIN_SEEN_NAME:
            return
        keys = self._long.setdefault(key[:MIN_SEEN_NAME], [])
        if drop:
            keys.remove(key)
        else:
            keys.append(key)

    def add(self, name: str, key: str, room: int, nid: str | None = None) -> bool:
        """Add ``name`` (of node ``nid``) under its group if the map stays within ``room``; a
        name it holds ("render_line" in "Row.render_line") goes, since this one says it."""
        if self.full_without_owner(nid):
            return False
        group, heading, owner = self.group_of(nid)
        holds = self.holds(key)
        held = [i for i, k in enumerate(self.keys) if k in holds] if holds else []
        grown = None if held else self._grown(name, group, heading, owner, nid)
        if grown is not None:
            length = grown
        else:
            names = [n for i, n in enumerate(self.names) if i not in held]
            groups = [g for i, g in enumerate(self.groups) if i not in held]
            headings = dict(self.headings)
            if group not in headings:
                headings[group] = (heading, owner)
            if owner != nid:  # a file stands for itself as its group's heading
                names.append(name)
                groups.append(group)
            length = self._length(names, groups, headings)
        if length > room:
            return False
        self._length_now = length  # the lists below become these
        for i in reversed(held):
            self._index(self.keys[i], drop=True)
            self._unowned -= self.headings[self.groups[i]][1] is None
            self._members[self.groups[i]] -= 1
            del self.names[i], self.keys[i], self.groups[i]
        if group not in self.headings:
            self.headings[group] = (heading, owner)
            self._any_owner = self._any_owner or owner is not None
            self.given += "\n" + heading.lower()
        if owner != nid:
            self.names.append(name)
            self.keys.append(key)
            self._index(key)
            self.groups.append(group)
            self._unowned += owner is None
            self._members[group] = self._members.get(group, 0) + 1
        self.given += "\n" + name.lower()
        self.exact.add(key)
        return True

    def _grown(self, name: str, group: str, heading: str, owner: str | None, nid: str | None) -> int | None:
        """The map's length once ``name`` is added to ``group`` (no name it holds going), from the
        line it joins or starts and the heading it moves (:meth:`_lines`' shape), without laying
        the map out again; None where the map is still one line (the first names of a flat list)."""
        members = self._members.get(group, 0)
        if owner != nid and members:
            return self.length() + 2 + len(name)  # ", name" on a line that has names (every kind joins so)
        headings = self.headings
        if not (len(headings) > 1 or (headings and "" not in headings)) or not group:
            return None  # one line (the head and a flat list), or the flat list's own line
        now = self.length()
        files_alone = sum(1 for key, (_, who) in headings.items() if who and not self._members.get(key))
        if owner == nid:  # a file for itself: on the ``Files:`` line (already there: nothing changes)
            if group in headings:
                return now
            return now + 2 + len(heading) if files_alone else now + len("\nFiles: ") + len(heading)
        if owner and group in headings:  # a file's first name: from the ``Files:`` line to a line of its own
            now -= len("\nFiles: ") + len(heading) if files_alone == 1 else 2 + len(heading)
        line = f"* {heading}: " if owner is not None else f"{heading}: "  # a file's or a module's; who named it
        return now + 1 + len(line) + len(name)

    def full_without_owner(self, nid: str | None) -> bool:
        """Would ``nid`` stand under no owner while :attr:`unowned` names already do (no long
        run of names without a file or module to stand under)?"""
        if not self.owned_any or not self._any_owner:
            return False  # nothing stands under an owner (a graph with no file to stand under): one list it is
        group, _, owner = self.group_of(nid)
        return owner is None and bool(group) and self._unowned >= self.unowned

    def owners(self) -> list[str]:
        """The file ids the map shows as headings."""
        return [owner for _, owner in self.headings.values() if owner and owner != MODULE]

    def lines(self) -> list[str]:
        """The map as lines (:meth:`_lines`)."""
        return self._lines(self.names, self.groups, self.headings)

    def copy(self) -> _NameLine:
        other = _NameLine(self.head, self.seen, unowned=self.unowned)
        other.group_of, other.owned_any = self.group_of, self.owned_any
        other.names, other.keys, other.groups = list(self.names), list(self.keys), list(self.groups)
        other.headings, other.given, other.exact = dict(self.headings), self.given, set(self.exact)
        other._long = {head: list(keys) for head, keys in self._long.items()}
        other._any_owner, other._unowned, other._members = self._any_owner, self._unowned, dict(self._members)
        other._length_now = self._length_now
        return other


def _flat(nid: str | None) -> tuple[str, str, str | None]:
    return "", "", None


class MapGroups:
    """Where a name stands in the map: ``(key, heading, owner)``. A file is its own group's
    heading (its name as :func:`rolling_graph.render.layout.short_names` shows it); a code name
    goes under the file that owns it (``facts.in``) when the graph holds that file, else under
    the file the session was on when it last used the name (the file touched last before it,
    before any file the first); a qualified name with no file under its module (``fmt`` for
    ``fmt.Errorf``); the rest under who named them (at most ``RestoreSettings.unowned_names`` of
    those in all, unless the graph has no file to stand under)."""

    def __init__(self, g: RestoreView, files: dict[str, str]) -> None:
        self.g = g
        self.files = files
        self.has_owners = bool(files)
        self.by_seq = sorted((seq, fid) for fid in files if (seq := facts_of(g.nodes[fid]).get("seq")) is not None)
        self.seqs = [seq for seq, _ in self.by_seq]
        #: Each name's place, once found (the fill asks it of a name more than once).
        self._placed: dict[str | None, tuple[str, str, str | None]] = {}

    def __call__(self, nid: str | None) -> tuple[str, str, str | None]:
        placed = self._placed.get(nid)
        if placed is None:
            placed = self._placed[nid] = self._place(nid)
        return placed

    def _place(self, nid: str | None) -> tuple[str, str, str | None]:
        g, files = self.g, self.files
        if nid is None:
            return "by:tool", BY_HEADING["tool"], None
        owner = nid if nid in files else facts_of(g.nodes[nid]).get("in") if nid in g.nodes else None
        if not (owner and owner in files) and nid in g.nodes and (seq := facts_of(g.nodes[nid]).get("seq")) is not None:
            at = bisect_right(self.seqs, seq)
            owner = self.by_seq[at - 1][1] if at else self.by_seq[0][1] if self.by_seq else None
        if owner and owner in files:
            return owner, esc(files[owner], max(len(files[owner]), 1)), owner
        label = g.label(nid) if nid in g.nodes else ""
        module, dot, _ = label.lstrip("@").partition(".")
        if dot and g.kind.get(nid) == "symbol" and module:
            return "mod:" + module, esc(module, len(module)), MODULE
        who = str(facts_of(g.nodes[nid]).get("by") or "tool") if nid in g.nodes else "tool"
        who = who if who in BY_HEADING else "tool"
        return "by:" + who, BY_HEADING[who], None


#: The owner of a module's group (no node of its own: the module is its heading).
MODULE = ""


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
        if line.full_without_owner(nid):
            continue  # (not a miss: names with an owner may still fit)
        if not line.add(name, key, room, nid):
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
    kind = g.kind
    pool = [nid for nid in g.order if kind[nid] not in NOT_NAMES and nid not in shown
            and (kind[nid] not in _SOMETIMES_UNNAMED or not _unnamed(g, nid, s))]
    if pool:
        rest = _add_names(g, block, head, s, shown, summary, pool, rest)
    if rest:
        block.add(rest)


#: The kinds :func:`_unnamed` may leave out of the name list.
_SOMETIMES_UNNAMED = frozenset({"command", "error", "entity"})


def _unnamed(g: RestoreView, nid: str, s: RestoreSettings) -> bool:
    """Is ``nid`` (a command, an error or a concept) counted rather than named? A command whose
    last run passed (unless ``s.command_names``), an error a later run got past, a plain word."""
    return (not s.command_names and _passed_command(g, nid)) or _resolved_error(g, nid) or _plain_word(g, nid)


def _plain_word(g: RestoreView, nid: str) -> bool:
    """A concept that is one ordinary word (``Both``, ``Review``, ``ID``: a capitalised word of
    a prompt) and no technology's name: no name to list in a map of the work (it is counted)."""
    if g.kind[nid] != "entity":
        return False
    label = g.label(nid)
    return " " not in label and (label.isupper() or label[1:].islower()) and label.lower() not in TECH


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
    score = g.score
    if summary and s.summary_weight != 1.0:  # what Claude's summary already holds counts less
        low = summary.lower()
        held = {i for i in pool if _key(files.get(i) or g.label(i)) in low}
        score = {i: g.score[i] * (s.summary_weight if i in held else 1.0) for i in pool}
        if not s.name_cost:  # (ties, and a weight of 0: the summary's names after the rest, in rank order)
            pool = sorted(pool, key=lambda i: (-score[i], i in held, -g.score[i], i))
    if s.name_cost:
        pool = by_rank_per_character(pool, score, {i: shown_length(g, i, files, s) for i in pool}, s.name_cost)
    groups = MapGroups(g, short_names(g.paths)) if s.name_map else None
    if groups is not None and s.unowned_last and groups.has_owners:  # what a file or module owns first, the rest after it
        owned: list[str] = []
        unowned: list[str] = []
        for nid in pool:
            (unowned if groups(nid)[2] is None else owned).append(nid)
        pool = owned + unowned
    ordered: Iterable[Named] = _named(g, pool, files, s)  # lazily: past the first SWEEP_NAMES, most are never named
    rest_of_them = iter(ordered)
    top = list(islice(rest_of_them, SWEEP_NAMES))  # what the sweep looks at; the fill reads them first anyway
    offered = chain(top, rest_of_them)
    line = _NameLine(head, block.seen, groups, s.unowned_names)
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
    if line.names or line.owners():
        shown.update(line.owners())
        block.add("\n".join(line.lines()))
    return rest


def _sweep(line: _NameLine, named: Iterable[Named], room: int, shown: set[str]) -> bool:
    """A name that holds names ``line`` shows takes their place where it fits within ``room``
    (:meth:`_NameLine.add` drops the names it holds: they are still said). True if one did."""
    added = False
    for nid, name in named:
        key = _key(name)
        if line.says(key) or not line.holds(key):
            continue
        if line.add(name, key, room, nid):
            added = True
            if nid:
                shown.add(nid)
    return added


def rest_line(g: RestoreView, shown: set[str], kinds: int = 3) -> str:
    """``Not shown: 37 more — 20 code names, 12 files, 5 commands.`` (``""``: nothing left),
    naming at most ``kinds`` kinds, the largest first; ``kinds=0``: the total alone
    (``Not shown: 37 more.``)."""
    counts: dict[str, int] = {}
    for kind, ids in g.by_kind.items():  # each kind's size, less what is shown (a few of thousands)
        category = _CATEGORY.get(kind, "other name")
        counts[category] = counts.get(category, 0) + len(ids)
    for nid in shown:
        shown_kind = g.kind.get(nid)
        if shown_kind is not None:
            counts[_CATEGORY.get(shown_kind, "other name")] -= 1
    counts = {category: n for category, n in counts.items() if n}
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
