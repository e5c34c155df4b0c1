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
    # Raised (stop 27): the request line of a new session says "Last request (user):" (was
    # "Last session's request (user):", 11 characters more; the tag already says the block
    # comes from earlier sessions): 0.715 @ 800 (content 0.743) and 0.380 @ 400 (content
    # 0.395), at 400 as many names as the most frequent list counting JSON keys (60 of 158),
    # and two more counting content (60 of 152, the list 58). Issue 13's bar is met at both.
    # Lowered on purpose at 800 (stop 27), raised at 400: a file name the new code quotes (a
    # test's "lib/foo.ex") is a name of its own. The chain's blocks pack differently by one
    # name each way: 0.709 @ 800 (content 0.737; was 0.715 and 0.743), 0.373 @ 400 (content
    # 0.388; was 0.367 and 0.382). It was kept for the 34 points (0.838 -> 0.847 at 800,
    # content) and for 8463c716's compaction, whose only name the block missed was foo.ex.
    # Raised (stop 26) at 800: a file in a new session's name list comes alone (the names
    # edited in it rank on their own): 0.715 (content 0.743); at 400 unchanged.
    # Before that, raised (stop 26): a command whose last run passed is not listed among the names
    # (`mix test`, `mix credo`): 0.709 @ 800 (content 0.737) and 0.367 @ 400 (content 0.382,
    # the list's 0.382: at 400 the block now recalls as many by the content measure).
    # Before that, raised (stop 26) at 400: the first file of the working set keeps its line in its
    # shortest form, as the request, the open tasks and the first decision do, so the names
    # take 0.7 of a small new session's block (was 0.6): 0.361 (content 0.375).
    # Before that, raised (stop 26): the working set lists the files changed most first, so the new
    # session's one line is the LiveView the last session edited 7×, not the test it edited
    # last (5×): 0.703 @ 800 (content 0.730) and 0.348 @ 400 (0.362). Before that, the tag
    # came to say where the block comes from (source="earlier sessions") instead of a
    # heading line of its own, and the count line to give the total alone (55 and 28
    # characters of names): 0.684 @ 800 (content 0.711) and 0.329 @ 400 (0.342).
    # Lowered on purpose (2026-11-26, stop 25) at 400 (0.32 -> 0.31, content 0.34 -> 0.32):
    # the working set
    # no longer gives up at its first file when that file's line cannot fit (a deep test
    # path did, so the 400-token block named none of the files the last session edited).
    # It now says "…/transcript_renderer_test.exs — edited 5×", and two names give way
    # (measured 0.316, content 0.329; at 800 nothing changed).
    # graph measured 0.658 @ 800 and 0.329 @ 400 with the name list filling the room the count
    # line turned out not to need (it kept up to 24 characters spare; content 0.684, now at
    # least the list's 0.678, and 0.342); 0.646 and 0.323 with a file
    # costing the name it is shown with, the new session's own heading (0.652 with the old,
    # 3 characters longer: the name list packs differently, ±2 names) and a request cut after
    # its first sentence (0.316 @ 400 before); 0.63 and 0.31
    # with the opening leg (the names the last session touched first); 0.53 and 0.28 before
    # it (mentions, the uses leg, the warm graph's order kept, names by rank per character
    # and a name a longer one holds said once); 0.35 and 0.23 at the first stop of issue 13;
    # 0.18 before the startup block work.
    # (content): names counted in tool-input values, not JSON keys (measured 0.67 and 0.34,
    # the lists 0.68 and 0.38: at 800 the block recalls 102 of 152 names, the list 103;
    # 0.66 and 0.32 before the file cost, 0.56 and 0.29 before the opening leg).
    800: {"names": 158, "graph": 0.71, "frequent": 0.61, "recent": 0.41, "best": 0.61,
          "content_names": 152, "content_graph": 0.74, "content_best": 0.68, "at_least_best": True,
          "content_at_least_best": True,
          "request_shown": True, "open_shown": 1, "open_total": 1},
    400: {"names": 158, "graph": 0.37, "frequent": 0.38, "recent": 0.21, "best": 0.38,
          "content_names": 152, "content_graph": 0.39, "content_best": 0.38, "at_least_best": True,
          "content_at_least_best": True,
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
