"""Text analysis shared by the gate and the offline probe: paths, names, decision language."""

from __future__ import annotations

from pathlib import Path

from rolling_graph.capture.entities import (
    names_in,
    negated_terms,
    opens_with_correction,
    paths_in,
    statement,
    words_apart,
)


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


def test_a_hyphenated_name_is_one_name() -> None:
    # ("let's set StepsCount to 1 then for Auto-Commit": a decision that decided "Auto" and "Commit")
    labels = {label for label, _ in names_in("Let's set StepsCount to 1 for Auto-Commit, and keep the Pre-commit hook.")}
    assert {"Auto-Commit", "Pre-commit", "StepsCount"} <= labels
    assert not labels & {"Auto", "Commit", "Pre"}


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


def test_names_and_paths_written_against_chinese_japanese_or_korean_text_are_found() -> None:
    # These scripts put no space between a word and the name beside it: to a regular
    # expression the name had no word boundary, and none of these was found.
    cases = {
        "请修复parseConfig函数在src/config.ts里的错误，测试TestLoadConfig失败了": ({"parseConfig", "TestLoadConfig"}, ["src/config.ts"]),
        "config.tsのloadConfig関数を直してください。TestLoadConfigが失敗します": ({"loadConfig", "TestLoadConfig"}, ["config.ts"]),
        "parse_config를 수정해줘. src/app.py파일을 확인해": ({"parse_config"}, ["src/app.py"]),
    }
    for text, (names, paths) in cases.items():
        assert names <= {label for label, _ in names_in(text)}, text
        assert paths_in(text) == paths, text


def test_two_names_a_run_of_cjk_text_separates_stay_two() -> None:
    labels = {label for label, _ in names_in("OrderServiceとStripeを使います。Redisにします")}
    assert {"OrderService", "Stripe", "Redis"} <= labels
    assert not [label for label in labels if " " in label], labels


def test_text_without_those_scripts_is_read_as_it_is() -> None:
    for text in ("We chose Redis for the OrderService.", "Déjà vu: módulo uno.py — “quoted” names", "Почини parse_config в config.py"):
        assert words_apart(text) == text
    assert {label for label, _ in names_in("Почини parse_config в config.py")} == {"parse_config"}


def test_a_german_prompts_nouns_are_no_names_but_its_code_and_tools_are() -> None:
    text = "Bitte ändere die Funktion berechneSumme in rechnung.py, der Test TestRechnung schlägt fehl. Die Datenbank Verbindung ist langsam, wir nutzen Redis."
    labels = {label for label, _ in names_in(text)}
    assert {"berechneSumme", "TestRechnung", "Redis"} <= labels
    assert not labels & {"Funktion", "Test", "Test TestRechnung", "Die Datenbank Verbindung", "Datenbank Verbindung", "Bitte"}, labels
    assert "Stripe" in {label for label, _ in names_in("The Stripe webhook retries die after three attempts.")}  # English stays English
