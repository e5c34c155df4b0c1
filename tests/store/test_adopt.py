"""It works the way the README says: one state directory, no stray servers, one-line errors."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
from conftest import HOOK, prompt_payload, run_hook, running_postmasters

from rolling_graph.core.config import ConfigError, default_home, load_settings
from rolling_graph.store import adopt

RGRAPH = str(Path(sys.executable).with_name("rgraph"))


def user_env(home: Path, **extra: str) -> dict[str, str]:
    """A user's environment: HOME and PATH, none of our variables."""
    env = {"PATH": f"{Path(sys.executable).parent}:/usr/bin:/bin", "HOME": str(home), "ROLLING_GRAPH_PROBE": "offline",
           "ROLLING_GRAPH_PROBE_MODE": "sync", "ROLLING_GRAPH_WARM": "off", "COLUMNS": "200"}
    env.update(extra)
    return env


def rgraph(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run([RGRAPH, *args], env=env, capture_output=True, text=True, timeout=120)


# -- one state directory -----------------------------------------------------------------------
def test_the_plugin_data_directory_is_never_the_state_directory(tmp_path: Path) -> None:
    env = {"HOME": str(tmp_path), "CLAUDE_PLUGIN_DATA": str(tmp_path / "plugin-data")}
    assert default_home(env) == str(tmp_path / ".claude" / "rolling-graph")
    assert default_home({**env, "ROLLING_GRAPH_HOME": str(tmp_path / "x")}) == str(tmp_path / "x")


def _old_state(data: Path, sid: str, text: str) -> None:
    (data / "sessions").mkdir(parents=True, exist_ok=True)
    (data / "sessions" / f"{sid}.graph.json").write_text(text)
    (data / "venv").mkdir(exist_ok=True)  # the installation's own environment stays


def test_adopting_moves_old_sessions_and_keeps_both_copies_of_a_conflict(tmp_path: Path) -> None:
    home, data = tmp_path / "rg", tmp_path / "plugins" / "data" / "rolling-graph-inline"
    _old_state(data, "a", "old-a")
    _old_state(data, "b", "old-b")
    (home / "sessions").mkdir(parents=True)
    (home / "sessions" / "b.graph.json").write_text("new-b")
    os.utime(data / "sessions" / "b.graph.json", (1, 1))  # the plugin-data copy is older

    assert adopt.adopt(str(home), str(data)) == 2
    assert (home / "sessions" / "a.graph.json").read_text() == "old-a"
    assert (home / "sessions" / "b.graph.json").read_text() == "new-b"
    assert (home / "adopted" / "rolling-graph-inline" / "sessions" / "b.graph.json").read_text() == "old-b"
    assert not (data / "sessions").exists() and (data / "venv").is_dir()
    assert not adopt.has_state(str(data))


def test_session_start_adopts_what_an_old_version_left_in_the_plugin_data(tmp_path: Path) -> None:
    data = tmp_path / "home" / ".claude" / "plugins" / "data" / "rolling-graph-inline"
    _old_state(data, "earlier-session", '{"not": "parsed here"}')
    env = user_env(tmp_path / "home", CLAUDE_PLUGIN_DATA=str(data))
    payload = {**prompt_payload("new-session", "hi"), "hook_event_name": "SessionStart", "source": "startup"}
    done = run_hook("session-start", payload, env=env)

    assert done.returncode == 0, done.stderr
    state = tmp_path / "home" / ".claude" / "rolling-graph" / "sessions"
    assert sorted(p.name for p in state.glob("*.graph.json")) == ["earlier-session.graph.json", "new-session.graph.json"]
    assert not (data / "sessions").exists()


# -- configuration and error messages ------------------------------------------------------------
def test_a_bad_backend_in_config_toml_is_blamed_on_the_file(isolated_home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("ROLLING_GRAPH_PROBE")
    (isolated_home / "config.toml").write_text('[probe]\nbackend = "gpt"\n')
    with pytest.raises(ConfigError, match=r"config.toml: \[probe\] backend='gpt'"):
        load_settings()


def test_a_config_toml_that_is_a_directory_is_an_error(isolated_home: Path) -> None:
    (isolated_home / "config.toml").mkdir()
    with pytest.raises(ConfigError, match="is not a file"):
        load_settings()


def test_a_config_error_in_a_hook_goes_to_the_hook_log_not_the_user(isolated_home: Path) -> None:
    (isolated_home / "config.toml").write_text("[gate]\nno_such_key = 1\n")
    done = run_hook("user-prompt-submit", prompt_payload("s1", "hello"))

    assert (done.returncode, done.stdout, done.stderr) == (0, b"", b"")
    log = (isolated_home / "logs" / "hook.log").read_text()
    assert "configuration:" in log and "gate.no_such_key" in log and "Traceback" not in log


@pytest.mark.parametrize("args", [["reconcile", "--all"], ["graduate", "--nightly"], ["review", "--list"]])
def test_a_garbage_dsn_is_one_line_and_a_failing_exit(args: list[str], tmp_path: Path) -> None:
    done = rgraph(*args, env=user_env(tmp_path, ROLLING_GRAPH_DSN="garbage"))

    assert done.returncode == 1, done.stdout + done.stderr
    assert "Traceback" not in done.stderr + done.stdout
    lines = [line for line in done.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("rgraph: "), done.stderr
    assert "not a PostgreSQL connection string" in lines[0] and "ROLLING_GRAPH_DSN" in lines[0]


def test_reconciling_a_session_that_does_not_exist_fails(tmp_path: Path) -> None:
    done = rgraph("reconcile", "--session", "nope", env=user_env(tmp_path))
    assert done.returncode == 1 and "nope" in done.stderr


# -- no stray database servers -----------------------------------------------------------------------
@pytest.mark.db
def test_a_command_stops_the_server_it_started_and_db_start_leaves_it_to_the_idle_watchdog(tmp_path: Path) -> None:
    home = Path("/tmp") / f"rgidle-{os.getpid()}"  # short: a socket lives under it
    env = user_env(tmp_path, ROLLING_GRAPH_HOME=str(home), ROLLING_GRAPH_DB_IDLE_S="8")

    def mine() -> dict[int, str]:  # this test's servers only: others on the machine come and go
        return {pid: d for pid, d in running_postmasters().items() if d.startswith(f"{home}/")}

    try:
        done = rgraph("reconcile", "--all", env=env)
        assert done.returncode == 0, done.stderr
        assert mine() == {}, "a command left the embedded server it started running"

        started = rgraph("db", "start", env=env)
        assert started.returncode == 0 and "stops after 8 s without a client" in started.stdout, started.stdout
        assert len(mine()) == 1, "db start keeps the server running"
        deadline = time.monotonic() + 30
        while mine() and time.monotonic() < deadline:
            time.sleep(0.5)
        assert mine() == {}, "the idle watchdog did not stop the server"
    finally:
        rgraph("db", "stop", env=env)
        subprocess.run(["rm", "-rf", str(home)], check=False)


def test_hook_process_for_adoption_imports_nothing_new(tmp_path: Path) -> None:
    # SessionStart without CLAUDE_PLUGIN_DATA never imports the adopter.
    code = (
        "import sys, io, os; sys.stdin = io.TextIOWrapper(io.BytesIO(b'{\"session_id\": \"s\", \"source\": \"startup\"}'));"
        "from rolling_graph import hook; hook.main(['session-start']); print('rolling_graph.store.adopt' in sys.modules)"
    )
    env = {**os.environ, "HOME": str(tmp_path)}
    env.pop("CLAUDE_PLUGIN_DATA", None)
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=60)
    assert out.stdout.strip().splitlines()[-1] == "False", out.stdout + out.stderr
    assert Path(HOOK).exists()


def test_doctor_adopts_an_old_plugin_data_directory_and_says_so(tmp_path: Path) -> None:
    data = tmp_path / ".claude" / "plugins" / "data" / "rolling-graph-rolling-graph"
    _old_state(data, "old-session", "{}")
    done = rgraph("doctor", "--no-network", env=user_env(tmp_path, ROLLING_GRAPH_WARM="off"))

    [row] = [line for line in done.stdout.splitlines() if "one state directory" in line]
    assert "│ ok │" in row and "adopted 1 file(s)" in row, row
    assert (tmp_path / ".claude" / "rolling-graph" / "sessions" / "old-session.graph.json").exists()
