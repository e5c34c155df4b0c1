"""The corpus measure at every Nth event (``rolling_graph.evaluation.points``): a compaction can
come at any event, so a ranking is judged at many points, not at two."""

from __future__ import annotations

import json
import tempfile
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from rolling_graph.cli.main import app
from rolling_graph.evaluation.points import FIRST_POINT, capture_graphs, point_targets, run_points_eval, score_points


def test_a_points_targets_are_what_the_next_events_touch_that_earlier_ones_did() -> None:
    per_event = [["alpha_one"], ["beta_two", "gamma_three"], [], ["beta_two", "new_thing"], ["alpha_one"], ["delta_four"]]
    point = point_targets(per_event, 1, window=2)
    assert point.touched == (("alpha_one",), ("beta_two", "gamma_three"))
    assert point.next40 == {"beta_two"}, "new_thing was never touched before; alpha_one only after the window"
    assert point_targets(per_event, 1, window=3).next40 == {"beta_two", "alpha_one"}


def _line(**kw: Any) -> str:
    return json.dumps({"sessionId": "s-points", "cwd": "/w", "timestamp": "2026-11-24T10:00:00Z", **kw}) + "\n"


def _edit(n: int, path: str, new: str) -> str:
    use = {"type": "tool_use", "id": f"t{n}", "name": "Edit", "input": {"file_path": path, "old_string": "pass", "new_string": new}}
    res = {"type": "tool_result", "tool_use_id": f"t{n}", "content": "The file has been updated."}
    return (_line(type="assistant", message={"id": f"m{n}", "role": "assistant", "content": [use]})
            + _line(type="user", message={"role": "user", "content": [res]}))


def session(tmp_path: Path, edits: int = 24) -> Path:
    """One request, then ``edits`` edits over four modules, each defining a handler that
    calls one of three helpers: names recur, so later events need names earlier ones touched."""
    text = _line(type="user", message={"role": "user", "content": "add the report handlers to the billing app"})
    for i in range(edits):
        text += _edit(i, f"/w/src/report_mod_{i % 4}.py", f"def report_handler_{i}():\n    return shared_helper_{i % 3}(line_total)\n")
    path = tmp_path / "points.jsonl"
    path.write_text(text, encoding="utf-8")
    return path


def test_each_kept_graph_holds_what_was_pending_at_its_point(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    events, graphs = capture_graphs(session(tmp_path), every=5, first=6)
    assert sorted(graphs) == [6, 11, 16, 21, 26]  # 28 events: SessionStart, the prompt, 24 edits, Stop, SessionEnd
    for position, doc in graphs.items():
        if events[position].hook_event_name != "PostToolUse":
            continue
        edited = Path(events[position].payload["tool_input"]["file_path"]).name
        labels = {node["label"] for node in doc["nodes"].values()}
        assert any(label.endswith(edited) for label in labels), f"event {position}'s file is in its point's graph"
        n = events[position].payload["tool_input"]["new_string"].split("report_handler_")[1].split("(")[0]
        assert f"report_handler_{n}" in labels, "the last edit's own name, flushed as a PreCompact would"
    assert not any(p.name.startswith("rgraph-point") for p in tmp_path.iterdir()), "no state directory is left behind"


def test_points_score_the_block_next_to_both_lists_in_the_same_characters(tmp_path: Path) -> None:
    events, graphs = capture_graphs(session(tmp_path), every=5, first=6)
    report = score_points(events, graphs, budgets=(800, 100), metric="content")
    assert [p["position"] for p in report["points"]] == [6, 11, 16, 21], "nothing comes after the last one"
    for point in report["points"]:
        big, small = point["800"], point["100"]
        assert big["frequent"] == big["recent"] == big["best"] == 1.0, "every name fits in 2,400 characters"
        assert big["graph"] == 1.0, "the block names every module, handler and helper it was given"
        assert small["best"] == max(small["frequent"], small["recent"])
    assert min(p["100"]["graph"] for p in report["points"]) < 1.0, "in 300 characters the block's lines cost names"
    mean = report["mean"]["800"]
    assert mean["graph"] == 1.0 and mean["at_least_best"] == 4
    with pytest.raises(ValueError, match="every"):
        capture_graphs(session(tmp_path), every=0)



def test_rgraph_eval_every_measures_sessions_without_a_compaction(tmp_path: Path) -> None:
    path = session(tmp_path, edits=60)  # 64 events, no compaction
    bad = tmp_path / "notes.jsonl"
    bad.write_text("not json\n", encoding="utf-8")
    out = CliRunner().invoke(app, ["eval", "--transcripts", str(path), str(bad), "--every", "10", "--budget", "800", "--json"])
    assert out.exit_code == 0, out.output
    report = json.loads(out.output)
    measured, unreadable = report["sessions"]
    assert [p["position"] for p in measured["scored"]["content"]["points"]] == [FIRST_POINT, FIRST_POINT + 10, FIRST_POINT + 20]
    # The same figures as the measure itself, and the mean over all sessions is this one's.
    events, graphs = capture_graphs(path, every=10)
    direct = score_points(events, graphs, budgets=(800,), metric="content")
    assert measured["scored"]["content"] == direct
    assert report["mean"]["content"]["800"] == direct["mean"]["800"] | {"points": 3}
    assert direct["mean"]["800"]["graph"] == 1.0, "every handler and helper fits in 2,400 characters"
    assert unreadable["events"] == 0 and unreadable["skipped"] == "not a Claude Code transcript: 1 line, 1 not JSON"

    table = CliRunner().invoke(app, ["eval", "--transcripts", str(path), "--every", "10", "--budget", "800"], env={"COLUMNS": "100"})
    assert table.exit_code == 0, table.output
    text = " ".join(table.output.split())
    assert "at every 10th event of recorded sessions" in text
    assert "s-points content 800 3 1.00" in text, "session, names, tokens, points, the block's mean"
    # Measured at its compactions, the same session says it has none and how to measure it.
    plain = CliRunner().invoke(app, ["eval", "--transcripts", str(path), "--mode", "sync", "--budget", "800", "--jobs", "1"],
                               env={"COLUMNS": "160"})
    assert "no compaction in this session (--every 8 measures it at every 8th event)" in " ".join(plain.output.split())


def test_rgraph_eval_every_needs_transcripts_a_positive_step_and_no_compaction_only_option(tmp_path: Path) -> None:
    path = str(session(tmp_path))
    for args, said in ((["--every", "8"], "--every measures recorded sessions"),
                       (["--transcripts", path, "--every", "0"], "--every"),
                       (["--transcripts", path, "--every", "8", "--mode", "async"], "in sync probe mode"),
                       (["--transcripts", path, "--every", "8", "--show-blocks"], "--show-blocks and --mode async apply")):
        out = CliRunner().invoke(app, ["eval", *args])
        assert out.exit_code != 0 and said in out.output, out.output
    with pytest.raises(ValueError, match="every"):
        run_points_eval([session(tmp_path)], every=0)

# ---------------------------------------------------------------- the dev set
CORPUS = Path(__file__).resolve().parents[3] / "shared" / "corpus"
SESSIONS = [CORPUS / "spotter-8463c716.jsonl", CORPUS / "spotter-4d5611e5.jsonl"]
#: The block's mean next-40 recall at every eighth event of both spotter sessions (34 points),
#: by budget: what ``bench/eval_points.py`` prints. A secondary view since the memory is
#: chosen by the 34 real compactions of the whole corpus pooled (``bench/eval_corpus.py``):
#: lowered on purpose once (2026-11-27, 0.848 / 0.646 -> 0.823 / 0.625) when the ranking
#: after a compaction changed to favour the last touch over use, which the pool (the two
#: sessions these points come from are 2 of its 34 cells) chose; less 0.005.
POINT_FLOORS = {800: 0.818, 400: 0.620}


@pytest.mark.skipif(not all(p.is_file() for p in SESSIONS),
                    reason=f"the recorded sessions are not in {CORPUS} (the shared corpus lives beside the checkout, never in it)")
def test_the_block_at_every_eighth_event_of_the_corpus_stays_above_its_floors() -> None:
    means: dict[int, list[float]] = {budget: [] for budget in POINT_FLOORS}
    for path in SESSIONS:
        events, graphs = capture_graphs(path, every=8)
        report = score_points(events, graphs, budgets=tuple(POINT_FLOORS), metric="content")
        for budget in POINT_FLOORS:
            means[budget] += [p[str(budget)]["graph"] for p in report["points"]]
    assert len(means[800]) == 34, "a point more or less: the replay or the targets changed"
    for budget, floor in POINT_FLOORS.items():
        mean = sum(means[budget]) / len(means[budget])
        assert mean >= floor, f"at {budget} tokens the block's mean next-40 recall fell to {mean:.3f} (floor {floor})"
