"""One composition root: the settings carry the clock, the embedder, the reviewer and the
graduation thresholds, read once; nothing deeper reads the environment or config.toml."""

from __future__ import annotations

import json
import os
import re
from datetime import UTC, datetime
from pathlib import Path

import pytest

from rolling_graph.core.clock import utcnow
from rolling_graph.core.config import ConfigError, Settings, load_settings
from rolling_graph.replay.run import ReplayOptions, replay

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "rolling_graph"


def test_graduation_thresholds_come_from_config_toml_with_the_rest(isolated_home: Path) -> None:
    (isolated_home / "config.toml").write_text('[graduation]\npreset = "eager"\nmin_edges = 4\n')
    graduation = load_settings().graduation
    assert (graduation.min_sessions, graduation.min_weight, graduation.min_edges) == (2, 0.5, 4)
    (isolated_home / "config.toml").write_text('[graduation]\npreset = "lenient"\n')
    with pytest.raises(ConfigError, match="graduation.preset='lenient'"):
        load_settings()
    (isolated_home / "config.toml").write_text("[graduation]\nmin_session = 2\n")
    with pytest.raises(ConfigError, match="unknown setting graduation.min_session"):
        load_settings()


def test_the_pinned_clock_is_read_once_where_settings_are_loaded(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ROLLING_GRAPH_NOW", "2026-03-04T05:06:07Z")
    settings = load_settings()
    monkeypatch.setenv("ROLLING_GRAPH_NOW", "2030-01-01T00:00:00Z")  # later changes reach nobody
    assert settings.clock.now() == datetime(2026, 3, 4, 5, 6, 7, tzinfo=UTC)
    assert settings.clock.now_iso() == "2026-03-04T05:06:07Z"
    assert utcnow().year != 2030, "the system clock ignores the environment"
    assert Settings(home="/tmp/x").clock.now_iso() != "2026-03-04T05:06:07Z"
    monkeypatch.setenv("ROLLING_GRAPH_NOW", "yesterday")
    with pytest.raises(ConfigError, match="ROLLING_GRAPH_NOW"):
        load_settings()


def test_a_pinned_copy_passes_its_clock_and_home_to_the_processes_it_starts() -> None:
    settings = load_settings({"ROLLING_GRAPH_HOME": "/tmp/rg-home", "ROLLING_GRAPH_PROBE": "offline"})
    pinned = settings.at("2026-01-02T03:04:05Z")
    env = pinned.child_env()
    assert env["ROLLING_GRAPH_NOW"] == "2026-01-02T03:04:05Z" and env["ROLLING_GRAPH_HOME"] == "/tmp/rg-home"
    assert env["ROLLING_GRAPH_PROBE"] == "offline" and "ROLLING_GRAPH_NOW" not in settings.child_env()
    assert load_settings(env).clock.now() == pinned.clock.now()


def test_embedder_and_reviewer_are_settings(monkeypatch: pytest.MonkeyPatch) -> None:
    from rolling_graph.graduation.review import reviewer
    from rolling_graph.warm.embeddings import LexicalEmbedder, get_embedder

    monkeypatch.setenv("ROLLING_GRAPH_EMBEDDER", "lexical")
    monkeypatch.setenv("ROLLING_GRAPH_REVIEWER", "ada")
    settings = load_settings()
    monkeypatch.setenv("ROLLING_GRAPH_EMBEDDER", "ollama")
    monkeypatch.setenv("ROLLING_GRAPH_REVIEWER", "bob")
    assert isinstance(get_embedder(settings), LexicalEmbedder)
    assert reviewer(settings) == "ada"
    monkeypatch.setenv("ROLLING_GRAPH_EMBEDDER", "word2vec")
    with pytest.raises(ConfigError, match="ROLLING_GRAPH_EMBEDDER"):
        load_settings()


def test_an_in_process_replay_leaves_the_environment_alone_and_pins_each_events_time(tmp_path: Path) -> None:
    before = dict(os.environ)
    seen: list[bool] = []
    transcript = ROOT / "fixtures" / "transcripts" / "reversals.jsonl"
    result = replay([transcript], options=ReplayOptions(probe="offline", mode="sync"), home=tmp_path,
                    on_event=lambda record: seen.append(dict(os.environ) == before))
    assert seen and all(seen), "os.environ changed during the replay"
    assert dict(os.environ) == before
    stamps = {str(r.at)[:19] + "Z" for r in result.records}  # the journal keeps whole seconds
    (journal,) = list((tmp_path / "sessions").glob("*.journal.jsonl"))
    entries = [json.loads(line) for line in journal.read_text().splitlines()]
    assert entries and all(e["at"] in stamps for e in entries), "journal times come from the transcript, not the wall clock"


#: Reading one of our own variables from the environment: only the composition root may.
_ENV_READ = re.compile(r"""(environ\.get\(|environ\[|getenv\()\s*["']ROLLING_GRAPH_""")


def test_only_the_composition_root_reads_our_environment_variables() -> None:
    readers = sorted(str(p.relative_to(ROOT)) for p in PACKAGE.rglob("*.py")
                     if p.name != "config.py" and _ENV_READ.search(p.read_text(encoding="utf-8")))
    assert readers == [], "read ROLLING_GRAPH_* in rolling_graph/core/config.py (load_settings) and pass the value"
