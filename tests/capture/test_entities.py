"""Text analysis shared by the gate and the offline probe: paths, names, decision language."""

from __future__ import annotations

from pathlib import Path

from rolling_graph.capture.entities import names_in, negated_terms, opens_with_correction, paths_in, statement


def test_a_file_name_with_a_space_is_one_path_never_a_phantom_tail(tmp_path: Path) -> None:
    (tmp_path / "módulo uno.py").write_text("x = 1\n", encoding="utf-8")
    assert paths_in("Fix the bug in módulo uno.py please.", str(tmp_path)) == ["módulo uno.py"]
    assert paths_in("See `módulo uno.py` for the entry point.") == ["módulo uno.py"]
    assert "uno.py" not in paths_in("Fix `módulo uno.py` and módulo uno.py.", str(tmp_path))


def test_a_bare_file_name_stays_itself_when_the_worktree_holds_it_or_nothing_longer(tmp_path: Path) -> None:
    (tmp_path / "uno.py").write_text("", encoding="utf-8")
    assert paths_in("Fix the bug in módulo uno.py.", str(tmp_path)) == ["uno.py"]
    assert paths_in("Create a new helper in utils.py.", str(tmp_path)) == ["utils.py"]


def test_a_windows_path_in_a_prompt_is_one_path_and_its_directories_are_no_names() -> None:
    text = r"The bug is in C:\Users\Ada\Projects\Billing\proration.py, see also .\tests\test_annual.py and lib/Stripe/client.py."
    assert paths_in(text) == [r"C:\Users\Ada\Projects\Billing\proration.py", r".\tests\test_annual.py", "lib/Stripe/client.py"]
    labels = {label for label, _ in names_in(text)}
    assert not labels & {"Users", "Ada", "Projects", "Billing", "Stripe"}, labels
    assert "Stripe" in {label for label, _ in names_in("Retry the Stripe webhook.")}  # a name outside a path still is one


def test_shouted_stop_words_and_headings_are_no_names() -> None:
    labels = {label for label, _ in names_in("## Rules\n- DO NOT touch the Stripe webhook.\n- IMPORTANT: keep it short.")}
    assert "Stripe" in labels
    assert not labels & {"DO NOT", "IMPORTANT", "Rules"}


def test_negations_name_what_is_turned_away_from() -> None:
    assert negated_terms("Keep SQLite out entirely") == ["SQLite"]
    assert "Memcached" in negated_terms("Use Redis rather than Memcached")
    assert "Memcached" in negated_terms("Drop Memcached and use Redis")


def test_only_an_opening_marker_makes_a_correction() -> None:
    assert opens_with_correction("Actually, keep SQLite out entirely.")
    assert opens_with_correction("No, use Bento.")
    assert not opens_with_correction("I actually got more details from the warning.")


def test_statements_are_plain_sentences() -> None:
    assert statement("We decided: the cache is Redis, not memcached.") == "The cache is Redis, not memcached"
    assert statement("Let's go with PostgreSQL for the orders table, not SQLite.") == "Use PostgreSQL for the orders table, not SQLite"
    assert statement("let's rename it to steps_count, since it counts steps") == "Rename it to steps_count"
