"""The graph as the restore block reads it (:mod:`rolling_graph.render.restore`).

What is in force and what is not: the older side of a ``supersedes`` edge and an option a
live decision ``contradicts`` are hidden from every current line; the block names them only
on their successor's line. Everything in force is ranked once
(:func:`rolling_graph.render.rank.rank`); sections take their kinds from that order.
"""

from __future__ import annotations

from rolling_graph.core.focus import rejected_ids, superseded_by
from rolling_graph.core.model import INTENT_KINDS
from rolling_graph.core.vocabulary import not_a_decision
from rolling_graph.render.layout import file_path
from rolling_graph.render.rank import best_first, facts_of, is_removed, recency_key, scores

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterable
    from typing import Any

    from rolling_graph.core.types import GraphDoc
    from rolling_graph.render.rank import RankSettings

#: Kinds with a section of their own (requests, tasks, decisions) or none (summaries):
#: never in the list of further names.
NOT_NAMES = frozenset({"request", "task", "summary", *INTENT_KINDS})
#: A rejected option of at most this many words is a name whose words mark related names.
OPTION_WORDS = 3
_OPTION_STOP = frozenset("the and for use using with not new old via from into".split())
#: The shortest word of a superseded decision that marks the code an edit removed as its own.
SUPERSEDED_WORD = 5


#: ASCII characters that are neither letters nor digits, as spaces (one C-level pass).
_NOT_ALNUM = str.maketrans({chr(c): " " for c in range(128) if not chr(c).isalnum()})


def _words(text: str) -> list[str]:
    """Lowercased runs of letters and digits: ``@celery.task`` → ``celery``, ``task``."""
    low = text.lower()
    if low.isascii():
        return low.translate(_NOT_ALNUM).split()
    return "".join(c if c.isalnum() else " " for c in low).split()


#: Module names of common languages' standard libraries (and the test receivers their test
#: frameworks pass: Go's ``t``/``b``), as code qualifies a call with them: a name qualified by
#: one of these, and defined nowhere in the session, is a call into the language, which the
#: model knows anyway (:meth:`RestoreView.external`).
LIBRARY_QUALIFIERS = frozenset(
    # Go
    "fmt os io bufio bytes strings strconv errors context time sort sync atomic filepath path exec json yaml "
    "log slog http url regexp testing math rand reflect runtime unicode utf8 signal syscall hex base64 sha256 "
    "t b tt tc require assert "
    # Python
    "sys re shutil subprocess pathlib collections itertools functools typing datetime logging asyncio tempfile "
    "dataclasses argparse textwrap hashlib uuid pytest unittest mock "
    # JavaScript / TypeScript
    "console Object JSON Math Array Promise String Number Date Symbol Reflect process fs expect vi jest "
    # Elixir
    "Enum Map List Keyword Kernel IO File Path Process GenServer Logger Task Integer Float Regex DateTime "
    "NaiveDateTime Jason Ecto Repo Phoenix Plug ExUnit Mix System Application Agent Stream MapSet Access "
    # Swift
    "Foundation DispatchQueue FileManager UserDefaults NSString XCTest XCTAssert URLSession Bundle".split()
)


_MONTHS = "Jan Feb Mar Apr May Jun Jul Aug Sep Oct Nov Dec".split()


def short_date(stamp: object) -> str:
    """``"2026-01-05T12:17:31Z"`` → ``"Jan 5"``; ``""`` for anything that is not such a stamp."""
    if not isinstance(stamp, str) or len(stamp) < 10 or stamp[4] != "-" or stamp[7] != "-":
        return ""
    month, day = stamp[5:7], stamp[8:10]
    if not (month.isdigit() and day.isdigit() and 1 <= int(month) <= 12 and 1 <= int(day) <= 31):
        return ""
    return f"{_MONTHS[int(month) - 1]} {int(day)}"


#: What a view holds besides the graph's nodes: all of it a function of the graph and the
#: ranking's settings, so it can be kept beside the graph (:mod:`rolling_graph.render.view_cache`),
#: with the type each has there.
STATE: tuple[tuple[str, type], ...] = (
    ("hidden", set), ("supersedes", dict), ("rejects", dict), ("tested_by", dict), ("rejected_words", set),
    ("_rejected_prefixes", tuple), ("removed", set), ("noise", set), ("approved", list), ("kind", dict),
    ("by_kind", dict), ("paths", dict), ("score", dict), ("order", list),
)


class RestoreView:
    """The graph as the restore block reads it, in one pass over nodes and the few edge
    kinds it needs: the nodes in force, ranked once; what supersedes, rejects and tests what;
    files' paths; and the words of rejected options."""

    hidden: set[str]
    _rejected_prefixes: tuple[str, ...]
    #: The ranking preset of a view taken back from its kept state (:meth:`restored`), None for
    #: one ranked here: :func:`rolling_graph.render.restore.restore_block` takes a view only for
    #: the preset it ranks with.
    preset: str | None = None
    #: The ledger's fingerprint of each node of the graph, kept with the view
    #: (:func:`rolling_graph.render.view_cache.fingerprints`); None for one ranked here.
    fingerprints: dict[str, str] | None = None

    def state(self) -> tuple[Any, ...]:
        """Everything :data:`STATE` names, in its order (:meth:`restored` takes it back)."""
        return tuple(getattr(self, name) for name, _ in STATE)

    @classmethod
    def restored(cls, doc: GraphDoc, state: object, preset: str = "compact",
                 fingerprints: dict[str, str] | None = None) -> RestoreView | None:
        """The view of ``doc`` from the :meth:`state` of a view of the same graph, ranked with
        ``preset`` (``fingerprints``: kept with it), or None when ``state`` is not the shape one is
        (every part of its type; the ranked ids, its kinds and its scores the same ids, all of them
        ``doc``'s nodes)."""
        if not isinstance(state, tuple) or len(state) != len(STATE):
            return None
        if not all(type(value) is kind for value, (_, kind) in zip(state, STATE, strict=True)):
            return None
        view = cls.__new__(cls)
        view.nodes = nodes = doc["nodes"]
        view.mixed = True
        view.preset, view.fingerprints = preset, fingerprints
        for (name, _), value in zip(STATE, state, strict=True):
            setattr(view, name, value)
        order = view.order
        if not (len(order) == len(view.kind) == len(view.score) and all(nid in nodes and nid in view.kind for nid in order)):
            return None
        return view

    def __init__(self, doc: GraphDoc, r: RankSettings) -> None:
        self.nodes = nodes = doc["nodes"]
        edges = doc["edges"]
        #: Does the block mix this session's lines with earlier sessions' (after a compaction, on
        #: resume)? A new session's block is all earlier sessions', and its tag says so.
        self.mixed = True
        # The few edge kinds the block reads, found in one pass over the keys (``source|verb|target``).
        wanted = {key: edges[key] for key in edges if "|supersedes|" in key or "|contradicts|" in key or "|tests|" in key}
        old = superseded_by(wanted)
        self.hidden = old.keys() | rejected_ids(nodes, wanted, old)
        self.supersedes: dict[str, list[str]] = {}
        self.rejects: dict[str, list[str]] = {}
        self.tested_by: dict[str, list[str]] = {}
        for key in wanted:
            source, verb, target = (key.split("|") + ["", ""])[:3]
            if source not in nodes or target not in nodes:
                continue
            if verb == "supersedes":
                self.supersedes.setdefault(source, []).append(target)
            elif verb == "contradicts" and target in self.hidden and source not in self.hidden:
                self.rejects.setdefault(source, []).append(target)
            elif verb == "tests":
                cmd, file = (source, target) if nodes[source]["kind"] == "command" else (target, source)
                if nodes[cmd]["kind"] == "command" and nodes[file]["kind"] == "file":
                    self.tested_by.setdefault(file, []).append(cmd)
        hidden = self.hidden
        #: Words of the options decisions turned away (``Fly.io`` → ``fly``): a name made of
        #: one (``fly.toml``, ``@celery.task``) belongs to the rejected option, not to the
        #: session's current state. Options are short names; superseded decisions (sentences)
        #: are kept out of current lines by their ids alone.
        self.rejected_words: set[str] = set()
        for nid in hidden - old.keys():
            words = _words(nodes[nid]["label"]) if nid in nodes and nodes[nid]["kind"] not in NOT_NAMES else []
            if len(words) <= OPTION_WORDS:
                self.rejected_words.update(w for w in words if len(w) >= 3 and w not in _OPTION_STOP)
        self._rejected_prefixes = tuple(sorted(r for r in self.rejected_words if len(r) >= 4))
        #: Code names of a superseded decision that an edit took out of the code, nothing
        #: using them since (``pg_advisory_xact_lock`` once "use advisory locks" gave way to
        #: an exclusion constraint): the old approach's code, in no line and not counted.
        self.removed = self._removed_with(old.keys())
        #: Decisions whose label is no sentence that states a choice (a heading, a fragment,
        #: narration: :func:`rolling_graph.core.vocabulary.not_a_decision`), from graphs written
        #: before the extractor knew them: neither shown nor counted.
        self.noise = {nid for nid, node in nodes.items() if node["kind"] in INTENT_KINDS and not_a_decision(node["label"])}
        in_force = [nid for nid in nodes if nid not in hidden and nid not in self.removed and nid not in self.noise]
        #: Seeded flat memory (``rgraph seed``: anchors the user approved): rules and facts, shown
        #: as such in a section of their own, heaviest first, never among the names or decisions.
        self.approved = sorted((nid for nid in in_force if nodes[nid].get("anchor")), key=lambda i: (-nodes[i]["weight"], i))
        self.kind: dict[str, str] = {nid: nodes[nid]["kind"] for nid in in_force if not nodes[nid].get("anchor")}
        self.by_kind: dict[str, list[str]] = {}
        for nid, kind in self.kind.items():
            self.by_kind.setdefault(kind, []).append(nid)
        self.paths = {nid: file_path(nodes[nid], doc["project"]) for nid in self.by_kind.get("file", [])}
        #: Every node in force, best first (:func:`rolling_graph.render.rank.scores`, fused once);
        #: a call into a library ranks below the project's own names (``r.external_weight``).
        self.score = scores(nodes, self.kind, r)
        if r.external_weight != 1.0:
            for nid in self.external():
                self.score[nid] *= r.external_weight
        self.order = best_first(self.score)

    def external(self) -> set[str]:
        """Calls into a language's standard library that the session never defines, edits or
        opens a file for: a qualified name (``fmt.Errorf``, ``Enum.map``, ``os.path.join``,
        ``t.Fatalf``) whose qualifier is a standard module (:data:`LIBRARY_QUALIFIERS`) and
        none of the project's directories or file names, and that no code of the session
        defines (``facts.def``). Names qualified by a variable (``state.BaseCommit``) are the
        project's: only a module's name says a call leaves the project."""
        nodes = self.nodes
        own: set[str] = set()
        for path in self.paths.values():
            parts = path.lower().split("/")
            own.update(parts[:-1])
            own.add(parts[-1].partition(".")[0])
        symbols = self.by_kind.get("symbol", [])
        defined = {nodes[nid]["label"].lower() for nid in symbols if "def" in facts_of(nodes[nid])}
        out: set[str] = set()
        for nid in symbols:
            label = nodes[nid]["label"].lstrip("@")
            head, dot, _ = label.partition(".")
            if dot and head in LIBRARY_QUALIFIERS and head.lower() not in own and label.lower() not in defined:
                out.add(nid)
        return out

    def _removed_with(self, superseded: Iterable[str]) -> set[str]:
        """Removed code names (:func:`rolling_graph.render.rank.is_removed`) with a word of
        :data:`SUPERSEDED_WORD` letters or more of a superseded decision that no superseding
        decision uses (``advisory`` of "Use Postgres advisory locks around the insert")."""
        nodes = self.nodes
        words = {w for nid in superseded if nid in nodes for w in _words(nodes[nid]["label"]) if len(w) >= SUPERSEDED_WORD}
        if not words:
            return set()
        words -= {w for nid in self.supersedes for w in _words(nodes[nid]["label"])}
        return {nid for nid, node in nodes.items()
                if node["kind"] == "symbol" and is_removed(facts_of(node)) and words.intersection(_words(node["label"]))}

    def what(self, nid: str) -> tuple[str, list[str]]:
        """What was done to a file (``facts.what``) as shown, and the code names it quotes
        (`` `a` ``). A list of names loses those of an option a decision turned away (the edit
        that removed ``@celery.task`` does not make Celery current); other text stays as is."""
        what = (facts_of(self.nodes[nid]).get("what") or "").strip()
        parts = what.split("`")
        quoted = [p.strip() for p in parts[1::2] if p.strip()] if len(parts) % 2 else []
        names = [name for name in quoted if not self.is_rejected_name(name)]
        if quoted and all(not p.strip(" ,") for p in parts[0::2]):  # nothing but a list of names
            return ", ".join(f"`{name}`" for name in names), names
        return what, names

    def is_rejected_name(self, name: str) -> bool:
        """Is a word of ``name`` a rejected option's word (``fly`` in ``fly.toml``), or one
        of four letters or more and a prefix of it (``sqlite`` in ``sqlite3.connect``)?"""
        if not self.rejected_words:
            return False
        prefixes = self._rejected_prefixes
        return any(word in self.rejected_words or word.startswith(prefixes) for word in _words(name))

    def ranked(self, kinds: tuple[str, ...]) -> list[str]:
        return [nid for nid in self.order if self.kind[nid] in kinds]

    def label(self, nid: str) -> str:
        return self.nodes[nid]["label"]

    def earlier(self, nid: str) -> str:
        """Where a line from another session comes from, as the block says it: ``""`` for
        this session's own node, and in a new session's block (whose tag, ``source="earlier
        sessions"``, says it of every line); for one pulled from the warm graph into a block
        of this session's memory, the day an earlier session last touched it (``"Jan 5"``),
        else ``"earlier session"``."""
        node = self.nodes[nid]
        if not node.get("pulled") or not self.mixed:
            return ""
        return short_date(node.get("seen_at")) or "earlier session"

    def recent_first(self, ids: list[str]) -> list[str]:
        return sorted(ids, key=lambda i: (recency_key(self.nodes[i]), i), reverse=True)
