"""``bench/eval_notes_signals.py``: the signals whose notes the twenty-first pass of
docs/measurements.md weighed against issue 35's foresight bars, on a capture small enough to
read. Each signal learns only from the sessions before the one it speaks in, and its notes are
scored as the chain scores the memory's own."""

from __future__ import annotations

import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from rolling_graph.evaluation import foreseen

BENCH = Path(__file__).resolve().parents[2] / "bench"


@pytest.fixture
def signals(monkeypatch: pytest.MonkeyPatch) -> ModuleType:
    monkeypatch.syspath_prepend(str(BENCH))
    monkeypatch.setattr(foreseen, "SKIP_FIRST", 1)  # the second session is the first one scored
    import eval_notes_signals

    return sys.modules[eval_notes_signals.__name__]


def _session(sid: str, used: list[list[str]], outputs: list[str] | None = None, startup: str = "") -> dict[str, Any]:
    return {"sid": sid, "index": list(range(len(used))), "used": used, "outputs": outputs or [""] * len(used),
            "records": [(0, "SessionStart", "startup", startup)]}


#: The same work twice: fix alpha_one, then beta_two, then gamma_three.
WORK = [["alpha_one"], ["beta_two"], ["gamma_three"]]


def _capture(*sessions: dict[str, Any], prompts: tuple[tuple[str, int, str], ...] = ()) -> dict[str, Any]:
    calls = [{"sid": sid, "pos": pos, "event": "UserPromptSubmit", "text": text} for sid, pos, text in prompts]
    return {"sessions": list(sessions), "calls": calls}


def test_what_earlier_sessions_met_next_is_said_before_the_session_meets_it(signals: ModuleType) -> None:
    rows = signals.sequence(_capture(_session("a", WORK), _session("b", WORK)), window=1, from_outputs=False,
                            min_confidence=0.5, min_sessions=1, per_trigger=3, per100=10_000)
    [row] = rows
    assert row["used"] == 3
    assert row["memory"] == 2, "beta_two and gamma_three were named an event before; alpha_one, the first, cannot be"
    assert (row["surfaced"], row["hits"]) == (2, 2)


def test_a_name_the_tools_output_already_showed_is_not_said_again(signals: ModuleType) -> None:
    later = _session("b", WORK, outputs=["... beta_two ...", "", ""])
    [row] = signals.sequence(_capture(_session("a", WORK), later), window=1, from_outputs=False,
                             min_confidence=0.5, min_sessions=1, per_trigger=3, per100=10_000)
    assert row["memory"] == 1, "only gamma_three is left to foresee"
    assert row["surfaced"] == 1


def test_a_signal_learns_nothing_from_the_session_it_speaks_in(signals: ModuleType) -> None:
    backwards = list(reversed(WORK))  # the same names, met in the other order
    [row] = signals.sequence(_capture(_session("a", backwards), _session("b", WORK)), window=1, from_outputs=False,
                             min_confidence=0.5, min_sessions=1, per_trigger=3, per100=10_000)
    assert row["used"] == 3
    assert row["memory"] == 0 and row["surfaced"] == 0, "only this session met beta_two after alpha_one"


def test_names_used_together_before_are_said_at_the_first_of_them(signals: ModuleType) -> None:
    [row] = signals.cousage(_capture(_session("a", WORK), _session("b", WORK)), min_confidence=0.5, min_sessions=1,
                            per_trigger=5, per100=10_000)
    assert row["memory"] == 2 and row["surfaced"] == 2


def test_the_session_budget_holds_the_notes_back(signals: ModuleType) -> None:
    [row] = signals.cousage(_capture(_session("a", WORK), _session("b", WORK)), min_confidence=0.5, min_sessions=1,
                            per_trigger=5, per100=1)
    assert row["note_chars"] == 0 and row["memory"] == 0


def test_a_like_prompt_brings_the_names_its_earlier_session_used(signals: ModuleType) -> None:
    other = [["delta_four"], ["epsilon_five"]]
    prompts = (("a", 0, "fix the flaky checkpoint rewind test please"), ("c", 0, "bump the release version in goreleaser"),
               ("b", 0, "the checkpoint rewind test is flaky again"))
    data = _capture(_session("a", WORK), _session("c", other), _session("b", WORK), prompts=prompts)
    unlike, later = signals.prompt(data, top_sessions=1, min_similarity=0.1, room=300, per100=10_000)
    assert unlike["surfaced"] == 0, "a prompt like no earlier one brings nothing"
    assert later["memory"] == 2 and later["surfaced"] == 2, "the like session's names, not the other's"


def test_the_oracle_names_what_the_session_will_use_except_what_its_first_event_shows(signals: ModuleType) -> None:
    [row] = signals.oracle(_capture(_session("a", WORK), _session("b", WORK)), per100=10_000)
    assert (row["used"], row["memory"]) == (3, 2)
    [told] = signals.oracle(_capture(_session("a", WORK), _session("b", WORK, startup="... gamma_three ...")), per100=10_000)
    assert told["memory"] == 2 and told["surfaced"] == 1, "what the startup block holds, the note does not repeat"


def test_reach_counts_where_each_known_name_is_first_met(signals: ModuleType) -> None:
    later = _session("b", WORK, outputs=["", "gamma_three is here", ""], startup="alpha_one")
    figures = signals.reach(_capture(_session("a", WORK), later))
    assert figures["known names used"] == {"in the startup block": 1, "first met in a prompt or tool input": 1,
                                          "first met in a tool's output": 1}
    assert figures["with no notes at all"]["surfaced"] == 0
