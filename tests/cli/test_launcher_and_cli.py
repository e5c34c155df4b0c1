"""The plugin's hook launcher (hooks/run), and the top-level `rgraph demo` and `doctor`."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

from typer.testing import CliRunner

ROOT = Path(__file__).resolve().parents[2]
RUN = ROOT / "plugin" / "hooks" / "run"


def _fake(path: Path, tag: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(f'#!/bin/sh\ncat >/dev/null\necho "{tag} $1"\n')
    path.chmod(0o755)
    return path


def _run(event: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(RUN), event], input='{"session_id": "s"}', capture_output=True, text=True, env=env, timeout=30)


def _env(tmp_path: Path, **extra: str) -> dict[str, str]:
    env = {"PATH": "/usr/bin:/bin", "HOME": str(tmp_path / "home"), "CLAUDE_PLUGIN_DATA": str(tmp_path / "data")}
    env.update(extra)
    return env


def test_the_plugins_own_environment_is_preferred(tmp_path: Path) -> None:
    _fake(tmp_path / "data" / "venv" / "bin" / "rgraph-hook", "venv")
    _fake(tmp_path / "bin" / "rgraph-hook", "path")
    env = _env(tmp_path, PATH=f"{tmp_path / 'bin'}:/usr/bin:/bin")
    assert _run("stop", env).stdout.strip() == "venv stop"


def test_an_installed_rgraph_hook_on_path_is_used(tmp_path: Path) -> None:
    _fake(tmp_path / "bin" / "rgraph-hook", "path")
    env = _env(tmp_path, PATH=f"{tmp_path / 'bin'}:/usr/bin:/bin")
    assert _run("post-tool-use", env).stdout.strip() == "path post-tool-use"


def test_an_explicit_hook_wins(tmp_path: Path) -> None:
    explicit = _fake(tmp_path / "elsewhere" / "hook", "explicit")
    _fake(tmp_path / "data" / "venv" / "bin" / "rgraph-hook", "venv")
    assert _run("stop", _env(tmp_path, ROLLING_GRAPH_HOOK=str(explicit))).stdout.strip() == "explicit stop"


def _python_hook(path: Path, *, runs_under_s: bool) -> Path:
    """A fake rgraph-hook as pip installs it: its interpreter on the first line."""
    marker = "# rgraph-hook: runs under python -S\n" if runs_under_s else ""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(f"#!{sys.executable}\n{marker}import sys\nprint('no_site', sys.flags.no_site, sys.argv[1])\n")
    path.chmod(0o755)
    return path


def test_a_hook_that_says_so_runs_without_the_site_module(tmp_path: Path) -> None:
    _python_hook(tmp_path / "bin" / "rgraph-hook", runs_under_s=True)
    env = _env(tmp_path, PATH=f"{tmp_path / 'bin'}:/usr/bin:/bin")
    assert _run("post-tool-use", env).stdout.strip() == "no_site 1 post-tool-use"


def test_an_older_hook_runs_as_it_always_did(tmp_path: Path) -> None:
    _python_hook(tmp_path / "bin" / "rgraph-hook", runs_under_s=False)
    env = _env(tmp_path, PATH=f"{tmp_path / 'bin'}:/usr/bin:/bin")
    assert _run("post-tool-use", env).stdout.strip() == "no_site 0 post-tool-use"


def test_the_installed_hook_under_s_finds_its_package_or_falls_back_to_site(tmp_path: Path) -> None:
    # This environment's rgraph-hook: the package beside it (a regular install) or through an
    # editable install's finder, which only the site module sets up.
    hook = Path(sys.executable).with_name("rgraph-hook")
    assert hook.read_text().splitlines()[1] == "# rgraph-hook: runs under python -S"
    env = _env(tmp_path, PATH=f"{hook.parent}:/usr/bin:/bin", ROLLING_GRAPH_HOME=str(tmp_path / "state"))
    prompt = '{"session_id": "s-1", "cwd": "/tmp", "hook_event_name": "UserPromptSubmit", "prompt": "We decided to use PostgreSQL."}'
    done = subprocess.run([str(RUN), "user-prompt-submit"], input=prompt, capture_output=True, text=True, env=env, timeout=60)
    assert (done.returncode, done.stderr) == (0, "")
    assert not (tmp_path / "state" / "logs" / "hook.log").exists(), (tmp_path / "state" / "logs" / "hook.log").read_text()
    assert (tmp_path / "state" / "sessions" / "s-1.state.json").exists()


def test_nothing_installed_fails_open_and_starts_the_bootstrap_once(tmp_path: Path) -> None:
    plugin = tmp_path / "plugin"
    (plugin / "hooks").mkdir(parents=True)
    shutil.copy(RUN, plugin / "hooks" / "run")
    marker = tmp_path / "bootstrapped"
    bootstrap = plugin / "hooks" / "bootstrap"
    bootstrap.write_text(f"#!/bin/sh\necho started >> {marker}\n")
    bootstrap.chmod(0o755)
    env = _env(tmp_path, CLAUDE_PLUGIN_ROOT=str(plugin))
    for event in ("user-prompt-submit", "post-tool-use"):
        proc = subprocess.run([str(plugin / "hooks" / "run"), event], input="{}", capture_output=True, text=True, env=env, timeout=30)
        assert (proc.returncode, proc.stdout, proc.stderr) == (0, "", "")
    assert not marker.exists(), "only SessionStart starts the bootstrap"
    proc = subprocess.run([str(plugin / "hooks" / "run"), "session-start"], input="{}", capture_output=True, text=True, env=env, timeout=30)
    assert (proc.returncode, proc.stdout) == (0, "")
    deadline = time.monotonic() + 10
    # (the shell creates the file before its echo writes the line: wait for the line)
    while not (marker.exists() and marker.read_text().strip()) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert marker.read_text().strip() == "started"


def test_the_bootstrap_script_refuses_to_run_twice_at_once(tmp_path: Path) -> None:
    data = tmp_path / "data"
    (data / ".bootstrap.lock").mkdir(parents=True)
    proc = subprocess.run([str(ROOT / "plugin" / "hooks" / "bootstrap")], capture_output=True, text=True, env=_env(tmp_path), timeout=30)
    assert proc.returncode == 0 and "already running" in proc.stdout


def test_demo_replays_the_bundled_session_and_shows_graph_and_injections() -> None:
    from rolling_graph.cli.main import app

    result = CliRunner().invoke(app, ["demo"])
    assert result.exit_code == 0, result.output
    assert "Graph at the end" in result.output
    assert "supersedes" in result.output and "[correction]" in result.output
    assert "What the model was told" in result.output and "<rolling-graph-memory" in result.output


def test_doctor_reports_settings_state_directory_and_backends(isolated_home: Path) -> None:
    from rolling_graph.cli.main import app

    env = dict(os.environ, ROLLING_GRAPH_DSN="postgresql://127.0.0.1:1/none", COLUMNS="250")  # one line per check
    result = CliRunner().invoke(app, ["doctor", "--no-network"], env=env)
    assert "state directory" in result.output and str(isolated_home) in result.output
    assert "hook command" in result.output
    assert "offline" in result.output  # ROLLING_GRAPH_PROBE=offline in the tests
    [cache] = [line for line in result.output.splitlines() if line.startswith("│ hook code cache")]
    assert "not written yet" in cache
    [warm] = [line for line in result.output.splitlines() if line.startswith("│ warm database")]
    assert "│ no │" in warm and "cannot connect to the warm graph" in warm and "check the DSN (ROLLING_GRAPH_DSN" in warm
    assert result.exit_code == 1, "a failing database check is a failing doctor"
    assert "doctor found problems: warm database" in result.output
