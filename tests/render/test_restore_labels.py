"""Labels in the restore block: a path keeps its file name, a command and a request are cut
after a whole word or sentence, and a name in the name list is unique and costs what it shows."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st
from restore_support import NOW, R, billing_session, map_lines, node

from rolling_graph.core.config import replace
from rolling_graph.core.model import new_document
from rolling_graph.render.layout import Block, Section, short_command, short_names, shown_path
from rolling_graph.render.names import by_rank_per_character
from rolling_graph.render.rank import PRESETS as RANK_PRESETS
from rolling_graph.render.restore import PRESETS, restore_block
from rolling_graph.render.sections import add_working_set, first_sentences
from rolling_graph.render.view import RestoreView


# -- paths, commands, requests -------------------------------------------------------------------
def test_a_long_path_loses_the_middle_of_its_directory_never_its_file_name() -> None:
    path = "lib/spotter_web/live/components/session_transcript/very_long_component_name.ex"
    assert shown_path(path, 60).endswith("/session_transcript/very_long_component_name.ex") and "…" in shown_path(path, 60)
    assert len(shown_path(path, 60)) <= 60
    assert shown_path(path, 20).endswith("/very_long_component_name.ex")
    assert shown_path("a/b.py", 60) == "a/b.py"


def _working_set(files: list[tuple[str, int, int]], cap: int) -> tuple[list[str], list[str]]:
    """The working set of files ``(path, edits, seq)`` in a section of ``cap`` characters."""
    doc = new_document("s", project="/home/ada/shop", now=NOW)
    for n, (path, edits, seq) in enumerate(files):
        node(doc, f"f{n}", path, "file", path=path, edits=edits, seq=seq)
    block, shown = Block(4000), []
    add_working_set(RestoreView(doc, RANK_PRESETS["coding"]), Section(block, cap, 0), PRESETS["lean"], shown)
    return block.lines, shown


def test_a_file_whose_line_cannot_fit_gives_way_to_the_next_and_a_deep_path_to_its_name() -> None:
    deep = "src/very/deeply/nested/package/with/many/levels/"
    long_name = deep + "an_extremely_long_module_name_for_the_tests.py"
    # The first-ranked file cannot fit even by its name: the next one still gets its line.
    assert _working_set([(long_name, 9, 90), ("app.py", 3, 80)], cap=40) == (["Working set:\n* app.py — edited 3×"], ["f1"])
    # A path that does not fit is shown by its file name alone, rather than not at all.
    assert _working_set([(deep + "billing_test.py", 9, 90)], cap=50) == (["Working set:\n* …/billing_test.py — edited 9×"], ["f0"])
    # With room, the path keeps its first and last directories.
    [line], _ = _working_set([(deep + "billing_test.py", 9, 90)], cap=200)
    assert line.startswith("Working set:\n* src/") and line.endswith("/billing_test.py — edited 9×")


@given(st.lists(st.text(alphabet="abc_.", min_size=1, max_size=12), min_size=1, max_size=8), st.integers(5, 80))
def test_shortened_paths_keep_the_file_name_and_fit_when_they_can(parts: list[str], limit: int) -> None:
    path = "/".join(parts)
    name = parts[-1]
    out = shown_path(path, limit)
    assert out.endswith(name)
    assert len(out) <= max(limit, len(name) + 2)


def test_a_long_command_keeps_the_file_names_it_ran_on() -> None:
    command = "mix test test/spotter/services/transcript_renderer_test.exs --seed 0"
    assert short_command(command, 40) == "mix test …/transcript_renderer_test.exs…"
    assert short_command(command, 60) == "mix test …/transcript_renderer_test.exs --seed 0"
    assert short_command("pytest -q tests/a.py", 40) == "pytest -q tests/a.py"


def test_a_cut_request_keeps_its_first_whole_sentences() -> None:
    asked = "Work on bead spotter-dov. Run bd show spotter-dov to see the issue details and bd ready to find available work."
    assert first_sentences(asked, 60) == "Work on bead spotter-dov. …"
    assert first_sentences(asked, 200) == asked
    for limit in range(len("Work on bead spotter-dov. …"), len(asked)):
        shown = first_sentences(asked, limit)
        assert len(shown) <= limit and shown.endswith(". …")
    assert first_sentences("Fix it. Then run the tests and commit the result", 30) == "Fix it. Then run the tests and commit the result"  # too short: cut as before
    doc = billing_session(fillers=200)
    doc["nodes"]["req"]["label"] = "Annual invoices are prorated twice. Find out why, fix it, add a regression test and deploy it today."
    text, _ = restore_block(doc, R, "compact", summary="We are fixing proration.", budget_tokens=400)
    assert 'Request (user): "Annual invoices are prorated twice. …"' in text


def test_a_cut_command_ends_on_a_whole_word() -> None:
    command = "mix credo lib/spotter_web/live/session_live.ex lib/spotter/services/transcript_renderer.ex"
    assert short_command(command, 42) == "mix credo …/session_live.ex …"  # not "…/transcript_r"
    assert short_command("a_single_very_long_command_word_with_no_spaces_at_all", 20) == "a_single_very_long_…"
    for limit in range(1, 60):
        assert len(short_command(command, limit)) <= limit
    # In a name list a command's files go by their names; a directory stays as it is.
    assert short_command("mix credo lib/spotter_web/live/session_live.ex", 48, compact=True) == "mix credo …/session_live.ex"
    assert short_command("pytest tests/billing -q", 48, compact=True) == "pytest tests/billing -q"


def test_file_names_in_the_name_list_are_made_unique_by_their_directories() -> None:
    names = short_names({"a": "src/app/models.py", "b": "src/billing/models.py", "c": "src/billing/plan.py"})
    assert names == {"a": "app/models.py", "b": "billing/models.py", "c": "plan.py"}


# -- the name list ----------------------------------------------------------------------------------
def test_by_rank_per_character_a_short_stray_is_not_four_times_cheaper_than_a_top_name() -> None:
    # Shown lengths (with the separator): `TranscriptRenderer.render` 27, `msg.id` 8. By
    # characters alone the stray, scoring a third, would come first (1/8 > 3/27).
    score, length = {"top": 3.0, "stray": 1.0}, {"top": 27, "stray": 8}
    assert by_rank_per_character(["stray", "top"], score, length, 1.0) == ["top", "stray"]
    assert by_rank_per_character(["top", "stray"], {"top": 2.0, "stray": 1.0}, length, 1.0) == ["stray", "top"]
    assert by_rank_per_character(["top", "stray"], score, length, 0.0) == ["top", "stray"], "cost 0: by rank alone"


def test_a_file_in_a_small_block_costs_the_name_it_is_shown_with_not_its_path() -> None:
    # Ranked by rank per character, a file is shown by its name (``app.ex``), so its deep
    # path must not make it dear; where the names edited in it follow it, they count too.
    doc = billing_session()
    for i in range(60):
        node(doc, f"sym-{i}", f"handler_for_event_{i:02d}", "symbol", seq=400 + i)
    deep = "lib/spotter_web/components/live/transcript/rendering/helpers/"
    node(doc, "f-short", deep + "app.ex", "file", path=deep + "app.ex", reads=1, seq=420)
    node(doc, "f-busy", deep + "row.ex", "file", path=deep + "row.ex", reads=1, seq=420,
         what=", ".join(f"`render_transcript_row_variant_{i}`" for i in range(6)))
    alone = PRESETS["compact-lean"]
    assert not alone.file_brings_names
    brings = replace(alone, file_brings_names=True, name_map=False)  # (in the map a file's names stand under it)
    summary = "We are fixing proration."
    for preset in (alone, brings):
        small, _ = restore_block(doc, R, "compact", summary=summary, budget_tokens=380, settings=preset)
        names = "\n".join(map_lines(small))
        assert "app.ex" in names and len(small) <= 380 * 3
        if preset.file_brings_names:  # same rank, but it would bring six long names with it
            assert "row.ex" not in names and "render_transcript_row_variant" not in names
        else:  # alone it is as cheap as app.ex; its names rank on their own (here: no nodes)
            assert "row.ex" in names and "render_transcript_row_variant" not in names
