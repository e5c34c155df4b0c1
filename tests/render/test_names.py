"""The name map as it fills (:class:`rolling_graph.render.names._NameLine`): the length it keeps
between additions is always the length of the lines it would write, and the names it finds a
new name holds are those a look at every name it shows finds."""

from __future__ import annotations

from hypothesis import example, given
from hypothesis import strategies as st

from rolling_graph.render.names import MIN_SEEN_NAME, MODULE, _key, _NameLine

#: (name, group key, owner): a name under a file ("f1", "f2" stand for themselves when the name
#: is the file), under a module, under who named it, or in the flat list; short words so that
#: names hold others.
ADDS = st.lists(st.tuples(st.sampled_from(["sync", "sync_all", "Store.sync_all", "load", "load_config", "f1.py", "f2.py",
                                           "parse", "Parser.parse", "x"]),
                          st.sampled_from([("f1", "f1.py", "f1"), ("f2", "f2.py", "f2"), ("mod:os", "os", MODULE), ("by:user", "In requests", None),
                                           ("", "", None)]),
                          st.integers(min_value=20, max_value=1000)),
                max_size=60)


#: Where the names the test asks about but never adds would stand.
OTHERS = {"f1": ("f1", "f1.py", "f1"), "f2": ("f2", "f2.py", "f2"), "n-user": ("by:user", "In requests", None), "n-flat": ("", "", None)}


@given(ADDS)
@example([(name, ("by:user", "In requests", None), 1000) for name in ("sync", "load", "parse", "x")])  # no owner yet
@example([("sync", ("by:user", "In requests", None), 1000), ("f1.py", ("f1", "f1.py", "f1"), 1000), ("f2.py", ("f2", "f2.py", "f2"), 1000),
          ("load", ("f1", "f1.py", "f1"), 1000), ("parse", ("f2", "f2.py", "f2"), 1000)])  # files alone, then each its first name
def test_what_the_map_keeps_as_it_fills_is_what_its_lines_say(adds: list[tuple[str, tuple[str, str, str | None], int]]) -> None:
    placed: dict[str | None, tuple[str, str, str | None]] = {}

    def group_of(nid: str | None) -> tuple[str, str, str | None]:
        return placed[nid]

    group_of.has_owners = True  # type: ignore[attr-defined]
    fill(adds, placed, group_of)


def fill(adds: list[tuple[str, tuple[str, str, str | None], int]], placed: dict[str | None, tuple[str, str, str | None]],
         group_of: object) -> None:
    line = _NameLine("Also touched: ", "", group_of, unowned=3)  # type: ignore[arg-type]  # (ten words: reached at three)
    for i, (name, group, room) in enumerate(adds):
        nid = group[2] if name == group[1] else f"n{i}"  # a file's own name: the file itself
        placed[nid] = group
        before = line.copy()
        for key in {_key(name), *(_key(other) for other, _, _ in adds)}:  # the name's, and each other's
            assert line.holds(key) == {k for k in line.keys if len(k) >= MIN_SEEN_NAME and k in key}
        for other in {"f1", "f2", "n-user", "n-flat"}:  # an unowned name is refused once enough stand so
            unowned = sum(1 for g in line.groups if line.headings[g][1] is None)
            any_owner = any(owner is not None for _, owner in line.headings.values())
            where, _, owner = placed.setdefault(other, OTHERS[other])
            assert line.full_without_owner(other) == (any_owner and owner is None and bool(where) and unowned >= line.unowned)
        added = line.add(name, _key(name), room, nid)
        lines = line.lines()
        assert line.length() == sum(map(len, lines)) + len(lines) - 1
        assert added or line.lines() == before.lines()
        if not added or room % 3 == 0:  # the copy goes on as the map: the fill's undone attempt
            line = before
        assert before.length() == sum(map(len, before.lines())) + len(before.lines()) - 1
