"""The name map as it fills (:class:`rolling_graph.render.names._NameLine`): the length it keeps
between additions is always the length of the lines it would write."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from rolling_graph.render.names import _key, _NameLine

#: (name, group key, owner): a name under a file ("f1", "f2" stand for themselves when the name
#: is the file), under who named it, or in the flat list; short words so that names hold others.
ADDS = st.lists(st.tuples(st.sampled_from(["sync", "sync_all", "Store.sync_all", "load", "load_config", "f1.py", "f2.py",
                                           "parse", "Parser.parse", "x"]),
                          st.sampled_from([("f1", "f1.py", "f1"), ("f2", "f2.py", "f2"), ("by:user", "In requests", None), ("", "", None)]),
                          st.integers(min_value=20, max_value=200)),
                max_size=25)


@given(ADDS)
def test_the_length_the_map_keeps_is_the_length_of_its_lines(adds: list[tuple[str, tuple[str, str, str | None], int]]) -> None:
    placed = {}

    def group_of(nid: str | None) -> tuple[str, str, str | None]:
        return placed[nid]

    group_of.has_owners = True  # type: ignore[attr-defined]
    line = _NameLine("Also touched: ", "", group_of)  # type: ignore[arg-type]
    for i, (name, group, room) in enumerate(adds):
        nid = group[2] if name == group[1] else f"n{i}"  # a file's own name: the file itself
        placed[nid] = group
        before = line.copy()
        added = line.add(name, _key(name), room, nid)
        lines = line.lines()
        assert line.length() == sum(map(len, lines)) + len(lines) - 1
        assert added or line.lines() == before.lines()
        assert before.length() == sum(map(len, before.lines())) + len(before.lines()) - 1
