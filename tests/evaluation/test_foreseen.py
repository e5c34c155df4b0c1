"""Foreseen names (the corpus README's measure of the memory during the work), on small
hand-made sessions."""

from __future__ import annotations

from rolling_graph.evaluation.foreseen import (
    Injection,
    Surfaced,
    first_seen,
    pooled_foreseen,
    session_foreseen,
    surfaced_names,
)

KNOWN = {"parser.py", "lexer.py", "parse_expr", "token_kind"}


def test_a_name_first_seen_in_a_tool_output_is_seen_there() -> None:
    used = [[], ["parser.py"], [], ["lexer.py"]]
    outputs = ["", "", "see lexer.py", ""]
    assert first_seen({"parser.py", "lexer.py", "nowhere"}, used, outputs) == {"parser.py": 1, "lexer.py": 2}


def test_only_an_injection_before_the_first_sight_foresees_a_name() -> None:
    used = [[], ["parser.py"], ["lexer.py"], [], ["parse_expr"]]
    outputs = ["", "", "", "", ""]
    injections = [Injection(0, "startup", "Working set: parser.py"),
                  Injection(1, "note", "parser.py, in 2 earlier sessions · usually changed with: lexer.py (0.8)"),
                  Injection(4, "note", "parse_expr")]  # at the event that uses it: too late
    row = session_foreseen(KNOWN, used, outputs, injections, ["token_kind", "parse_expr", "parser.py"])
    assert row["used"] == 3
    assert row["memory"] == 2  # parser.py (startup) and lexer.py (the note at event 1, used at 2)
    assert row["startup"] == 1
    # The baseline gets as many characters as the memory injected, front-loaded.
    assert row["baseline"] == 2  # "token_kind, parse_expr, parser.py" fits: parse_expr and parser.py
    assert row["note_chars"] == len(injections[1].text) + len(injections[2].text)


def test_precision_counts_each_surfaced_name_once_and_only_uses_within_the_window() -> None:
    used = [[]] * 3 + [["lexer.py"]] + [[]] * 50 + [["token_kind"]]
    outputs = [""] * len(used)
    injections = [Injection(0, "startup", "nothing"), Injection(1, "note", "lexer.py and token_kind"),
                  Injection(2, "note", "lexer.py again")]
    row = session_foreseen(KNOWN, used, outputs, injections, [])
    assert (row["surfaced"], row["hits"]) == (2, 1)  # token_kind is used 53 events later: past the window


def test_a_name_in_the_startup_block_or_already_seen_is_not_surfaced() -> None:
    used = [[], ["parser.py"], []]
    outputs = ["", "", ""]
    injections = [Injection(0, "startup", "lexer.py"), Injection(2, "note", "lexer.py, parser.py")]
    assert session_foreseen(KNOWN, used, outputs, injections, [])["surfaced"] == 0


def test_a_note_surfaces_only_the_names_extracted_from_it_not_any_substring() -> None:
    """The corpus README: a name "among the names extracted from the note" (names_in), so
    ``parser.py`` inside ``old_parser.py`` or ``token_kind`` inside ``token_kinds`` is not
    surfaced; a camelCase name is found in the note's own spelling."""
    known = KNOWN | {"parseexpr"}
    used = [[], [], ["parser.py", "token_kind", "parseexpr"]]
    outputs = [""] * 3
    injections = [Injection(0, "startup", "nothing"), Injection(1, "note", "old_parser.py: token_kinds, parseExpr")]
    assert surfaced_names(known, used, outputs, injections) == {"parseexpr": Surfaced(1, True)}
    row = session_foreseen(known, used, outputs, injections, [])
    assert (row["surfaced"], row["hits"]) == (1, 1)
    # Foreseen stays a substring test (the README's "holds it").
    assert row["memory"] == 3


def test_pooled_shares_and_ratios() -> None:
    rows = [{"used": 4, "memory": 2, "startup": 1, "baseline": 1, "surfaced": 2, "hits": 1, "note_chars": 300, "events": 100,
             "injected_chars": 900},
            {"used": 6, "memory": 3, "startup": 2, "baseline": 2, "surfaced": 0, "hits": 0, "note_chars": 0, "events": 50,
             "injected_chars": 500}]
    pooled = pooled_foreseen(rows, 4500)
    assert (pooled["memory"], pooled["startup"], pooled["baseline"]) == (0.5, 0.3, 0.3)
    assert pooled["vs_baseline"] == round(0.5 / 0.3, 3)
    assert pooled["precision"] == 0.5
    assert pooled["note_chars_per_100_events"] == 200.0
    assert pooled["max_note_chars_in_a_session"] == 300
