"""The memory file's format, as pure functions: what is exported is what is read back."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from rolling_graph.graduation import review, seed

texts = st.text(alphabet=st.characters(blacklist_categories=("Cs", "Cc"), blacklist_characters="<>\u2028\u2029\x85"),
                min_size=1, max_size=80).filter(lambda t: t.strip())


@given(st.lists(st.tuples(texts, st.sampled_from(["correction", "decision", "preference", "note"])), max_size=6))
def test_export_reads_back_exactly_the_exported_memories(items: list[tuple[str, str]]) -> None:
    memories = [{"id": i + 1, "kind": kind, "content": text, "sessions": ["s1"], "events": ["s1#2"]}
                for i, (text, kind) in enumerate(items)]
    parsed = review.parse_export(review.render_export("/home/ada/app", memories))
    assert parsed == {m["id"]: " ".join(m["content"].split()) for m in memories}


def test_users_own_bullets_survive_a_reexport() -> None:
    first = review.render_export("/p", [{"id": 1, "kind": "note", "content": "A", "sessions": ["s"], "events": []}])
    edited = first + "- my own line\n"
    again = review.render_export("/p", [], review.user_bullets(edited))
    assert review.parse_export(again) == {} and again.endswith("- my own line\n")


def test_notes_take_their_kind_from_headings_prefixes_and_wording() -> None:
    notes = seed.parse_notes(
        "# Notes\n- Decision: ship on Fridays\n## Preferences\n- tabs in Makefiles only\n## Other\n"
        "- Don't commit generated files\n- plain fact\n* [x] done item\n@import line\n"
    )
    assert [(n.text, n.kind) for n in notes] == [
        ("Decision: ship on Fridays", "decision"), ("tabs in Makefiles only", "preference"),
        ("Don't commit generated files", "correction"), ("plain fact", "note"), ("done item", "note"),
    ]
