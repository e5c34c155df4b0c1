"""core/detach.py: detached work starts at a low priority from its first instruction."""

from __future__ import annotations

import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from rolling_graph.core.detach import NICENESS


def _written(report: Path) -> str:
    """What the detached child wrote to ``report``, once it is there: the child opens the file
    before it writes, so a file that exists may still be empty for a moment."""
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        if report.exists() and (text := report.read_text()):
            return text
        time.sleep(0.05)
    raise AssertionError(f"the detached child wrote nothing to {report} in 30 s")


def _niceness_of_a_deferred_start(tmp_path: Path, start_at: int) -> tuple[str, str]:
    """In a process of its own (lowering this one's priority would slow the test run): queue a
    command that reports its niceness, run the queue as the hook does at its end."""
    report = tmp_path / "niceness"
    script = (
        "import os, sys\n"
        f"os.nice({start_at})\n"
        "from rolling_graph.core import detach\n"
        "detach.defer = True\n"
        f"child = {f'import os; open({str(report)!r}, chr(119)).write(str(os.nice(0)))'!r}\n"
        f"detach.spawn_later([sys.executable, '-c'], [child], {str(tmp_path / 'log')!r}, dict(os.environ))\n"
        "print(os.nice(0))\n"
        "detach.run_deferred()\n"
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    return done.stdout.strip(), _written(report)


def test_deferred_work_inherits_the_low_priority_from_its_start(tmp_path: Path) -> None:
    before, child = _niceness_of_a_deferred_start(tmp_path, 0)
    assert (before, child) == ("0", str(NICENESS)), "queued while the hook runs at full priority, started at NICENESS"


def test_an_already_lower_priority_is_never_raised_nor_lowered_further(tmp_path: Path) -> None:
    _, child = _niceness_of_a_deferred_start(tmp_path, NICENESS + 2)
    assert child == str(NICENESS + 2)


@pytest.mark.skipif(not Path("/proc/self/status").exists(), reason="reads the signal disposition from /proc")
def test_detached_work_can_be_stopped_although_its_hook_ignores_sigterm(tmp_path: Path) -> None:
    # hooks/run ignores SIGTERM for the hooks Claude Code runs in the background; a probe or
    # worker they start gets the default back (an ignored signal would survive its exec).
    report = tmp_path / "sigign"
    child = f"open({str(report)!r}, 'w').write(next(l for l in open('/proc/self/status') if l.startswith('SigIgn')))"
    script = (
        "import os, signal, sys\n"
        "signal.signal(signal.SIGTERM, signal.SIG_IGN)\n"
        "from rolling_graph.core import detach\n"
        f"detach.spawn_detached([sys.executable, '-c'], [{child!r}], {str(tmp_path / 'log')!r})\n"
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    ignored = int(_written(report).split()[1], 16)
    assert not ignored & (1 << (signal.SIGTERM - 1))


def test_the_signal_a_detached_child_gets_back_is_sigterm() -> None:
    import signal

    from rolling_graph.core import detach

    assert detach.SIGTERM == signal.SIGTERM


def test_a_detached_module_runs_the_installed_code_not_a_package_of_our_name_in_the_project(tmp_path: Path) -> None:
    # Claude Code runs hooks in the user's project, and so the probes they start: a package of our
    # name there (this plugin's checkout, or a repository made to look like it) must not be what runs.
    project = tmp_path / "project"
    fake = project / "rolling_graph" / "probe"
    fake.mkdir(parents=True)
    marker = tmp_path / "ran-the-projects-code"
    (project / "rolling_graph" / "__init__.py").write_text("")
    (fake / "__init__.py").write_text("")
    (fake / "runner.py").write_text(f"open({str(marker)!r}, 'w').write('yes')\n")
    log = tmp_path / "probe.log"
    script = (
        "import os\n"
        "from rolling_graph.core import detach\n"
        f"detach.spawn_detached(detach.python_module('rolling_graph.probe.runner'), ['--help'], {str(log)!r}, dict(os.environ))\n"
    )
    # (-P: the hook itself, a script, never imports from its working directory)
    done = subprocess.run([sys.executable, "-P", "-c", script], cwd=project, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    deadline = time.monotonic() + 30
    while "usage" not in (log.read_text() if log.exists() else "") and time.monotonic() < deadline:
        time.sleep(0.05)
    assert "usage: rolling_graph.probe.runner" in log.read_text(), "the installed probe answered"
    assert not marker.exists(), "the project's package of our name never ran"
