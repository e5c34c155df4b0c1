"""Layout of the restore block: a budget no line can overrun, sections with a share of
it, one-line lists that say how many did not fit, and file labels that keep the file name.

Pure functions and two small accumulators; :mod:`rolling_graph.render.restore` decides what goes in.
"""

from __future__ import annotations

from rolling_graph.core.filepaths import file_label
from rolling_graph.render.lod import CLOSE, OPEN
from rolling_graph.render.rank import facts_of
from rolling_graph.safety.sanitize import cut_at_word, cut_to_cost, token_chars

TYPE_CHECKING = False
if TYPE_CHECKING:
    from rolling_graph.core.types import Node


# -- file labels ----------------------------------------------------------------------------
def shown_path(path: str, limit: int) -> str:
    """``path`` within ``limit`` characters by eliding the middle of its directory
    (:func:`rolling_graph.core.filepaths.file_label`); the file name is never cut, even when it
    alone is longer than ``limit``."""
    return file_label(path, max(limit, len(path.rpartition("/")[2]) + 2))


def short_command(command: str, limit: int, *, compact: bool = False) -> str:
    """A command within ``limit`` characters: its paths shortened to their file names first
    (``mix test …/transcript_renderer_test.exs``), so that a cut keeps what it ran on; then,
    if it is still too long, cut after its last whole word that fits (``mix credo
    …/session_live.ex …``, never ``…/transcript_r``), or within its first word when not even
    that fits. ``compact`` (a name list's form): its files' paths are their names even when
    it fits (``mix credo …/session_live.ex``; a directory, ``tests/billing``, stays)."""
    if len(command) <= limit:
        return _paths_as_names(command, files_only=True) if compact else command
    return cut_at_word(_paths_as_names(command, files_only=False), limit)


def _paths_as_names(command: str, *, files_only: bool) -> str:
    """Each path among ``command``'s words as ``…/`` and its last part (with ``files_only``,
    only a file's: a last part with an extension)."""
    def shown(word: str) -> str:
        name = word.rpartition("/")[2]
        short = "/" in word.strip("/") and bool(name) and (not files_only or "." in name.strip("."))
        return "…/" + name if short else word

    return " ".join(shown(word) for word in command.split())


def file_path(node: Node, project: str | None) -> str:
    """A file node's path relative to the project (``facts.path``, else its label)."""
    path = facts_of(node).get("path") or node["label"]
    top = project.rstrip("/") + "/" if project else ""
    return path[len(top) :] if top and path.startswith(top) else path


def short_names(paths: dict[str, str]) -> dict[str, str]:
    """Node id → the file's name, or with as many trailing directories as make it unique
    among ``paths``."""
    split = {nid: [p for p in path.split("/") if p] or [path] for nid, path in paths.items()}
    seen: dict[str, int] = {}
    for parts in split.values():
        for depth in range(1, len(parts) + 1):
            suffix = "/".join(parts[-depth:])
            seen[suffix] = seen.get(suffix, 0) + 1
    out: dict[str, str] = {}
    for nid, parts in split.items():
        depth = 1
        while seen["/".join(parts[-depth:])] > 1 and depth < len(parts):
            depth += 1
        out[nid] = "/".join(parts[-depth:])
    return out


# -- the block under its budget ---------------------------------------------------------------
class Block:
    """Lines accepted only while the whole text (delimiters included) stays in ``limit``;
    ``opening``: the opening tag (:func:`rolling_graph.render.lod.opening`)."""

    def __init__(self, limit: int, opening: str = OPEN) -> None:
        self.limit = limit
        self.opening = opening
        self.lines: list[str] = []
        self.used = len(opening) + len(CLOSE) + 1
        self.seen = ""  # lowercased text so far, to skip names already shown

    def room(self, reserve: int = 0) -> int:
        """The longest line that still fits, keeping ``reserve`` characters."""
        return self.limit - self.used - reserve - 1

    def add(self, line: str, reserve: int = 0) -> bool:
        return self.take(line, reserve) >= 0

    def take(self, line: str, reserve: int = 0) -> int:
        """Add ``line`` and return the characters of budget it took, or -1 when it does not fit.
        Lengths are :func:`rolling_graph.safety.sanitize.token_chars`: a line with Chinese, Japanese or
        Korean text, which sections cut by its length, is cut again to what it costs."""
        fitted = _fitted(line, self.room(reserve))
        if fitted is None:
            return -1
        line, cost = fitted, token_chars(fitted)
        self.lines.append(line)
        self.used += cost + 1
        self.seen += "\n" + line.lower()
        return cost

    def text(self) -> str:
        if not self.lines:
            return ""
        return "\n".join([self.opening, *self.lines, CLOSE])


class Section:
    """A section's part of the block: lines go in while both its ``cap`` (characters) and
    the block, keeping ``reserve`` for what follows, allow."""

    def __init__(self, block: Block, cap: int, reserve: int) -> None:
        self.block = block
        self.cap = cap
        self.reserve = reserve
        self.used = 0

    def room(self) -> int:
        return min(self.cap - self.used - 1, self.block.room(self.reserve))

    def add(self, line: str) -> bool:
        fitted = _fitted(line, self.room())
        if fitted is None:
            return False
        self.used += self.block.take(fitted, self.reserve) + 1
        return True

    def add_required(self, line: str, reserve: int) -> bool:
        """A line the block must state (its shortest form): past the section's cap and the
        room kept for later sections, keeping only ``reserve``."""
        cost = self.block.take(line, reserve)
        if cost < 0:
            return False
        self.used += cost + 1
        return True


def _fitted(line: str, room: int) -> str | None:
    """``line`` if it fits ``room`` (by its length, whole or not at all, unless it holds wide
    characters); a line with wide characters cut to ``room``
    (:func:`rolling_graph.safety.sanitize.cut_to_cost`); None when it does not fit."""
    if token_chars(line) == len(line):
        return line if len(line) <= room else None
    return cut_to_cost(line, room) or None


def first_item(head: str, first: str, total: int, sep: str = " · ") -> str:
    """``head`` + ``first`` + ``+N more`` for the other ``total - 1``: the shortest form of a
    line the block must state (:meth:`Section.add_required`)."""
    return head + first + (f"{sep}+{total - 1} more" if total > 1 else "")


def join_items(head: str, items: list[str], room: int, sep: str = " · ") -> tuple[str, int]:
    """``head`` + as many ``items`` as fit in ``room`` (+ ``+N more`` if some did not).
    Returns the line (``""`` if not even one item fits) and how many items it holds."""
    line = head
    taken = 0
    for i, item in enumerate(items):
        piece = (sep if taken else "") + item
        more = len(f"{sep}+{len(items) - i - 1} more") if i + 1 < len(items) else 0
        if len(line) + len(piece) + more > room:
            break
        line += piece
        taken += 1
    if not taken:
        return "", 0
    if taken < len(items):
        line += f"{sep}+{len(items) - taken} more"
    return line, taken
