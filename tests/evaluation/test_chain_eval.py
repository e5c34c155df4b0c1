"""The cross-session measure (``rgraph eval --chain``): its definition on small cases, a chain
of our own fixture sessions end to end, and the corpus chain's figures pinned.

The corpus chain is the two recorded sessions in ``../shared/corpus`` (never copied into the
project): 8463c716 (worktree ``spotter-fum``) then 4d5611e5 (worktree ``spotter-dov``) of one
repository, replayed with ``--project /tmp/spotter``.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

import graduation_support as gs_
import pytest
import typer
import warm_support as ws
from typer.testing import CliRunner

from rolling_graph.evaluation import chain, chain_eval
from rolling_graph.evaluation.corpus import list_block, ranked_lists
from rolling_graph.replay.transcript import HookEvent

sys.path.insert(0, str(gs_.ROOT / "fixtures"))
import scenario_graduation as scenario  # noqa: E402

CORPUS = Path(os.environ.get("ROLLING_GRAPH_CORPUS") or gs_.ROOT.parent / "shared" / "corpus")
CORPUS_CHAIN = (CORPUS / "spotter-8463c716.jsonl", CORPUS / "spotter-4d5611e5.jsonl")

#: The corpus chain, measured (offline probe, sync, honest replay; 2026-11-26, the startup
#: block as committed then): budget -> figures for the second session. ``graph`` and the
#: ``open_shown`` count are floors — raise them as the startup block improves, never lower
#: them; ``names`` and the naive lists are the measure's own definition and must not drift.
#: ``request_shown``: does the block state the first session's request. ``at_least_best``
#: (``content_at_least_best``, by the content measure):
#: the block recalls at least the best naive list's share (issue 13's bar), where it does.
CORPUS_PINNED: dict[int, dict[str, Any]] = {
    # Names counted in what the sessions say (the one measure since 2026-11-27). Lowered on
    # purpose (2026-11-27: content 0.74 -> 0.67 at 800 tokens, 0.39 -> 0.30 at 400): the startup
    # block is chosen on the 119 later sessions of ../shared/corpus/entire-cli pooled
    # (bench/eval_chain.py: 0.263 -> 0.342 at 800, 0.180 -> 0.204 at 400), of which this chain's
    # one later session is not part; its names now stand in a map under their files, whose
    # headings cost a small block a few names, the names keep 0.85 of a new session's block,
    # and the resume snapshot ranks by uses. Lowered again at 800 (0.671 -> 0.645, four names of
    # 152): the files a shell command looks at are files of the work now (issue 34, second
    # stop), chosen on the 34 compaction cells pooled (next-40 +0.005, dropped +0.009 at 800)
    # with the 119-session entire-cli chain no lower; here they take room in a small block.
    # Lowered again (0.645 -> 0.632 at 800, 0.30 -> 0.289 at 400: two names of 152 each): the
    # resume snapshot ranks by recent uses (issue 34, third stop: the entire-cli chain 0.34 ->
    # 0.36 at 800, 0.21 -> 0.23 at 400); with one earlier session, recent uses are its uses.
    # Lowered again at 800 (0.632 -> 0.618, two names of 152): calls into Elixir's own modules
    # (Enum.map, Map.get) rank below the project's names in a new session's block as they do
    # after a compaction (issue 34, item 2; the entire-cli chain pays 0.003 / 0.006 for it).
    # Raised at 400 (0.28 -> 0.30): a working set whose room holds no line folds into the name
    # map there (the entire-cli chain 0.2311 -> 0.2365 at 400).
    # Lowered at 400 (0.30 -> 0.29, one name of 152: 46 -> 45): the gate tells a failure by the
    # probe's id for it, not by "Error: Exit code 1", so more failures fire a probe and the
    # first session's graph is folded in other batches (issue 34, seventeenth pass; the
    # entire-cli chain 0.3715 -> 0.3724 at 800, 0.2362 -> 0.2371 at 400).
    # Raised to what it measures (0.61 -> 0.64 at 800, 97 -> 98 names; 0.29 -> 0.32 at 400, 47 ->
    # 49): a new session's map lists only names a file or a module owns (issue 34, twentieth
    # pass; the entire-cli chain 0.3720 -> 0.3777 at 800, 0.2399 -> 0.2394 at 400).
    800: {"names": 152, "graph": 0.64, "frequent": 0.68, "recent": 0.40, "best": 0.68, "at_least_best": False,
          "request_shown": True, "open_shown": 1, "open_total": 1},
    400: {"names": 152, "graph": 0.32, "frequent": 0.38, "recent": 0.19, "best": 0.38, "at_least_best": False,
          "request_shown": True, "open_shown": 1, "open_total": 1},
}
TOLERANCE = 0.01


def event(index: int, name: str, sid: str, **payload: Any) -> HookEvent:
    return HookEvent(index, name, {"session_id": sid, **payload}, f"2026-11-0{1 + index // 100}T10:00:{index % 60:02d}Z", index, "x.jsonl")


def recorded(sid: str, *items: tuple[str, dict[str, Any]]) -> chain.Recorded:
    events = [event(0, "SessionStart", sid, source="startup")]
    events += [event(i + 1, name, sid, **payload) for i, (name, payload) in enumerate(items)]
    return chain.Recorded(Path(f"{sid}.jsonl"), tuple(events))


def tool(path: str) -> tuple[str, dict[str, Any]]:
    return "PostToolUse", {"tool_name": "Bash", "tool_input": {"command": f"cat {path}"}}  # a key without "_": no name


def test_target_is_what_the_first_events_use_that_earlier_sessions_used() -> None:
    first = recorded("a", ("UserPromptSubmit", {"prompt": "fix billing_total in billing.py"}), tool("lib/tax.py"), tool("lib/tax.py"))
    second = recorded("b", tool("lib/tax.py"), tool("lib/new.py"), ("UserPromptSubmit", {"prompt": "and billing_total"}),
                      *[tool("lib/late.py")] * 3)
    [later] = chain_eval.later_targets([first, second], window=3)
    assert later.position == 1 and later.session == "b"
    assert later.target == {"tax.py", "billing_total"}  # new.py is new; billing.py is not used again in time
    assert [sorted(set(e)) for e in later.touched_before if e] == [["billing.py", "billing_total"], ["tax.py"], ["tax.py"]]


def test_names_are_counted_in_what_the_sessions_say_not_the_tool_schemas_keys() -> None:
    def read(path: str) -> tuple[str, dict[str, Any]]:
        return "PostToolUse", {"tool_name": "Read", "tool_input": {"file_path": path}}

    first = recorded("a", read("lib/tax_rules.ex"), ("UserPromptSubmit", {"prompt": "and the file_path helper"}))
    second = recorded("b", read("lib/tax_rules.ex"), ("UserPromptSubmit", {"prompt": "now file_path"}))
    [later] = chain_eval.later_targets([first, second])
    # The key file_path of a Read's input is no name; the prompt that wrote it is.
    assert later.target == {"tax_rules.ex", "file_path"}
    assert ["file_path" in e for e in later.touched_before if e] == [False, True]


def test_scores_put_the_block_and_the_lists_in_the_same_characters() -> None:
    first = recorded("a", tool("alpha_one.py"), tool("beta_two.py"), tool("beta_two.py"))
    second = recorded("b", tool("alpha_one.py"), tool("beta_two.py"))
    [later] = chain_eval.later_targets([first, second])
    figures = chain_eval.scores(later, "x" * 3000 + " alpha_one.py beta_two.py", 800)
    assert figures["graph"]["recall"] == 0.0 and figures["graph"]["chars"] == 3025  # past 2,400 characters: not counted
    assert figures["frequent"]["recall"] == figures["recent"]["recall"] == figures["best"]["recall"] == 1.0
    assert list_block(ranked_lists(later.touched_before)["frequent"], 800) == "beta_two.py, alpha_one.py"


def test_a_label_counts_as_shown_by_its_opening_and_open_only_when_marked_so() -> None:
    block = "Open tasks: [pending] spotter-fum.4: Add regression coverage for render… · [done] ship it"
    assert chain_eval.shown("spotter-fum.4: Add regression coverage for renderer metadata, SessionLive", block)
    assert chain_eval.shown_as_open("spotter-fum.4: Add regression coverage for renderer metadata", block)
    assert not chain_eval.shown_as_open("ship it now please", block) and chain_eval.shown("ship it", block)
    # A request the block cut after its first whole sentence is stated; a shorter opening is not.
    asked = "Work on bead spotter-fum. Run bd show spotter-fum to see the issue details."
    assert chain_eval.shown(asked, 'Last request (user): "Work on bead spotter-fum. …"')
    assert not chain_eval.shown(asked, 'Last request (user): "Work on bead…"')


@pytest.mark.db
def test_chain_of_fixture_sessions_measures_every_later_session(tmp_path: Path) -> None:
    ws.pg_home()
    paths = scenario.write_all(tmp_path / "t")
    project = tmp_path / "ledger"
    project.mkdir()
    report = chain_eval.run_chain_eval(list(reversed(paths)), [800], str(project), dsn=ws.fresh_dsn("chain"))
    assert [s["session"] for s in report["sessions"]] == [sid for sid, _, _ in scenario.SESSIONS]  # time order
    rows = report["later"]["800"]
    assert [r["position"] for r in rows] == [1, 2, 3] and all(r["names"] > 0 and not r["errors"] for r in rows)
    assert all(r["methods"]["best"]["recall"] == max(r["methods"]["frequent"]["recall"], r["methods"]["recent"]["recall"])
               for r in rows)
    assert report["pooled"]["800"]["names"] == sum(r["names"] for r in rows)
    first_prev = rows[0]["previous"]
    assert first_prev["session"] == scenario.SESSIONS[0][0]
    assert first_prev["requests"][0].startswith("Let's use Exq")  # the first session's last request, its own
    assert all(r["blocks"]["graph"].startswith('<rolling-graph-memory source="earlier sessions"') for r in rows)  # from the snapshot
    assert report["home"] is None


def run_cli(*args: str) -> tuple[int, str]:
    from rolling_graph.cli.eval import register

    app = typer.Typer()
    register(app)

    @app.callback()
    def _root() -> None:
        pass

    result = CliRunner().invoke(app, ["eval", *args])
    return result.exit_code, result.output + str(result.exception or "")  # a UserError: the rgraph app prints it


def test_chain_needs_two_transcripts(tmp_path: Path) -> None:
    one = tmp_path / "a.jsonl"
    one.write_text("", encoding="utf-8")
    code, out = run_cli("--chain", str(one))
    assert code != 0 and "at least two transcripts" in out


@pytest.mark.db
@pytest.mark.skipif(not all(p.is_file() for p in CORPUS_CHAIN), reason=f"the shared corpus is not at {CORPUS} (set ROLLING_GRAPH_CORPUS)")
@pytest.mark.parametrize("budget", sorted(CORPUS_PINNED, reverse=True))
def test_corpus_chain_figures_are_pinned(budget: int) -> None:
    ws.pg_home()
    report = chain_eval.run_chain_eval(list(CORPUS_CHAIN), [budget], "/tmp/spotter", dsn=ws.fresh_dsn("corpus_chain"))
    [row] = report["later"][str(budget)]
    pin = CORPUS_PINNED[budget]
    figures = {m: v["recall"] for m, v in row["methods"].items()}
    print(json.dumps({"budget": budget, "names": row["names"], **figures, "previous": row["previous"]}, indent=1))
    assert row["session"].startswith("4d5611e5") and not row["errors"]
    assert row["names"] == pin["names"]
    for method in ("frequent", "recent", "best"):
        assert figures[method] == pytest.approx(pin[method], abs=TOLERANCE), method
    assert figures["graph"] >= pin["graph"]
    assert figures["graph"] >= figures["best"] or not pin["at_least_best"]  # issue 13's bar, where it is met
    prev = row["previous"]
    assert prev["session"].startswith("8463c716") and prev["open_total"] == pin["open_total"]
    assert len(prev["open_shown"]) >= pin["open_shown"]
    assert prev["request_shown"] or not pin["request_shown"]


ENTIRE = CORPUS / "entire-cli"
#: The first sessions of the entire-cli chain (its index.json's order): the notes' figures over
#: the later ones (foreseen.SKIP_FIRST: 6 sessions, 93 known names used), at 800 tokens, measured
#: 2026-11-29 (issue 35, third pass: the co-access order from the session's first touch, a
#: prompt's note the code names only, a tool's note its strongest partner only; a note surfaces
#: the names corpus.names_in extracts from it): memory 0.409 = startup block alone 0.409,
#: front-loaded 0.570, no name surfaced, cost 940.9 characters per 100 hook events (1,114.9
#: before this pass), at most 1,235 in a session; 600.0 since an error the session's own tool
#: output showed is no news at the next prompt (issue 34, seventh pass; memory 0.430 = startup
#: block alone, at most 1,212 in a session). ``cost`` is a ceiling: lower it as the notes
#: get cheaper, never raise it. The shares move with the startup block (another issue's), so
#: only "the notes never lose a name the block foresaw" is pinned. The whole chain's figures
#: (bench/eval_chain.py) are in docs/measurements.md.
NOTES_SUBSET = 16
NOTES_PINNED: dict[str, Any] = {"sessions": 6, "used": 93, "cost": 605.0}
#: The same run's startup figure (every session after the first; 341 names), a floor: 0.6246
#: (2026-11-29, issue 34: cross-session frequency at ×8 in the resume ranking, 0.6217 ->
#: 0.6305; then names by rank per character in the compaction blocks, which changes what the
#: sessions' prompts are told and pull, 0.6246 — two names; the whole chain's startup figure
#: stayed 0.370), the most frequent list 0.5894 — raise it as the startup block improves.
STARTUP_SUBSET_PINNED: dict[str, Any] = {"names": 341, "sessions": 15, "graph": 0.62, "frequent": 0.5894}


def _entire_first(n: int) -> list[Path]:
    index = ENTIRE / "index.json"
    rows = json.loads(index.read_text(encoding="utf-8")) if index.is_file() else []
    return [ENTIRE / r["file"] for r in rows[:n]]


@pytest.mark.db
@pytest.mark.skipif(not all(p.is_file() for p in _entire_first(NOTES_SUBSET)) or not _entire_first(NOTES_SUBSET),
                    reason=f"the shared corpus is not at {CORPUS} (set ROLLING_GRAPH_CORPUS)")
def test_entire_cli_subset_startup_and_notes_figures_are_pinned() -> None:
    ws.pg_home()
    report = chain_eval.run_chain_eval(_entire_first(NOTES_SUBSET), [800], "/tmp/entire-cli", dsn=ws.fresh_dsn("notes_chain"))
    fig = report["foreseen"]["800"]
    startup = report["pooled"]["800"]
    print(json.dumps(fig, indent=1), json.dumps(startup))
    # A new session's block, the same run (the chain's startup figure on its first sessions).
    want = STARTUP_SUBSET_PINNED
    assert (startup["names"], startup["sessions"], startup["frequent"]) == (want["names"], want["sessions"], want["frequent"])
    assert startup["graph"] >= want["graph"] > startup["best"]
    pin = NOTES_PINNED
    assert fig["sessions"] == pin["sessions"] and fig["used"] == pin["used"]
    # Everything prompts and tools were told (news, named branches, notes) within the pace and
    # never past the session's note budget.
    assert fig["note_chars_per_100_events"] <= pin["cost"]
    assert fig["max_note_chars_in_a_session"] <= fig["session_budget_chars"]
    assert fig["memory"] >= fig["startup"]


def test_a_chain_of_ten_sessions_or_fewer_says_the_work_is_not_measured_rather_than_printing_blanks() -> None:
    from rich.console import Console

    from rolling_graph.cli.eval_chain import render_chain_report

    empty = {"sessions": 0, "used": 0, "memory": None, "startup": None, "baseline": None, "vs_baseline": None,
             "vs_startup": None, "surfaced": 0, "precision": None, "note_chars_per_100_events": None,
             "max_note_chars_in_a_session": 0, "session_budget_chars": 4500}
    report = {"sessions": [{"session": "a"}, {"session": "b"}], "pooled": {}, "foreseen": {"800": empty},
              "later": {"800": []}, "first_events": 60, "chars_per_token": 3, "replay_s": {"800": 1.0}, "elapsed_s": 2.0}
    console = Console(record=True, width=200)
    render_chain_report(report, console)
    out = console.export_text()
    assert "During the work @ 800 tokens: not measured" in out and "this chain has 2" in out
    assert "None" not in out and "×0.00" not in out
