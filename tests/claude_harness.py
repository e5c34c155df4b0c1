"""Run the real Claude Code CLI against the stand-in model, in a sandbox, and read what it did.

A :class:`Sandbox` is one user's machine: a fresh ``HOME`` (so no settings, no trust state, no
plugins leak in from the developer's) and a project directory. ``ROLLING_GRAPH_HOME`` is not set,
as for a user: the state lives in the default ``$HOME/.claude/rolling-graph``. Every
``claude`` run gets a minimal environment: the fake API key, telemetry and non-essential traffic
off, the stand-in model as ``ANTHROPIC_BASE_URL``, and ``rgraph-hook`` on ``PATH`` (this venv's
bin directory, behind a logging wrapper so tests can see which events fired).

Facts about Claude Code 2.1.332 these helpers rely on (checked by hand with a scratch plugin):

* ``-p`` needs no onboarding or trust prompt with a fresh ``HOME``; read-only tools (Read, ``ls``,
  ``echo``, ``cat``) run without ``--permission-mode``.
* The transcript is ``$HOME/.claude/projects/<cwd with / as ->/<session_id>.jsonl``.
* Hook failures are transcript ``attachment`` lines of type ``hook_non_blocking_error``,
  ``hook_blocking_error`` or ``hook_cancelled`` (timeout), and ``stop_hook_summary`` system lines
  list ``hookErrors``; a failing SessionEnd hook is only reported on the CLI's stderr
  (``SessionEnd hook [...] failed: ...``).
* A hook's context reaches the model as a ``system`` message text
  ``<Event>[:<Tool>] hook additional context: <text>``, concatenated with other system text.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from standin_model import RecordedRequest, StandinModel

#: The repository: its root holds the marketplace (``.claude-plugin/marketplace.json``).
CHECKOUT = Path(__file__).resolve().parents[1]
#: The plugin under test: the checkout's ``plugin/`` (override to test another copy, e.g. a scratch plugin).
PLUGIN_DIR = Path(os.environ.get("ROLLING_GRAPH_E2E_PLUGIN_DIR") or CHECKOUT / "plugin")
CLAUDE = shutil.which("claude")
VENV_BIN = Path(sys.executable).parent
RUN_TIMEOUT_S = 90.0

HOOK_ERROR_ATTACHMENTS = {"hook_non_blocking_error", "hook_blocking_error", "hook_cancelled", "hook_error"}
CONTEXT_MARKER = re.compile(r"(?P<event>[A-Z][A-Za-z]+(?::[A-Za-z0-9_.*-]+)?) hook additional context: ")


@dataclass
class ClaudeRun:
    """One finished ``claude`` invocation."""

    args: list[str]
    returncode: int
    stdout: str
    stderr: str
    elapsed_s: float
    output: dict[str, Any] = field(default_factory=dict)

    @property
    def session_id(self) -> str:
        return str(self.output["session_id"])

    def describe(self) -> str:
        return f"claude {' '.join(self.args)} -> rc={self.returncode}\nstdout: {self.stdout[-2000:]}\nstderr: {self.stderr[-2000:]}"


def _wrapper_script(real: Path, log: Path) -> str:
    # exec keeps the real hook's exit code, stdout and stderr: Claude Code sees exactly our hook.
    return f'#!/bin/sh\nprintf "%s\\n" "$1" >> "{log}"\nexec "{real}" "$@"\n'


@dataclass
class Sandbox:
    """A throwaway user: HOME, a project, ROLLING_GRAPH_HOME, and a PATH with rgraph-hook."""

    root: Path
    extra_env: dict[str, str] = field(default_factory=dict)

    @property
    def home(self) -> Path:
        return self.root / "home"

    @property
    def project(self) -> Path:
        return self.root / "project"

    @property
    def rg_home(self) -> Path:
        """The state directory every process finds by default: ``~/.claude/rolling-graph``
        (the sandbox sets no ``ROLLING_GRAPH_HOME``, as a user does not)."""
        return self.home / ".claude" / "rolling-graph"

    def plugin_data_sessions(self) -> list[Path]:
        """Sidecars under ``~/.claude/plugins/data/`` (an old version's second state directory)."""
        return sorted(self.home.glob(".claude/plugins/data/*/sessions/*.graph.json"))

    @property
    def wrapper_bin(self) -> Path:
        return self.root / "bin"

    @property
    def event_log(self) -> Path:
        return self.root / "hook-events.log"

    @classmethod
    def create(cls, root: Path, *, wrap_hook: bool = True, **extra_env: str) -> Sandbox:
        """Lay out a sandbox in the empty directory ``root``."""
        sandbox = cls(root, dict(extra_env))
        for directory in (sandbox.home, sandbox.project):
            directory.mkdir(parents=True)
        if wrap_hook:
            sandbox.wrapper_bin.mkdir()
            wrapper = sandbox.wrapper_bin / "rgraph-hook"
            wrapper.write_text(_wrapper_script(VENV_BIN / "rgraph-hook", sandbox.event_log))
            wrapper.chmod(0o755)
        return sandbox

    def env(self, model: StandinModel | None) -> dict[str, str]:
        path = [str(VENV_BIN), os.environ.get("PATH", "/usr/bin:/bin")]
        if self.wrapper_bin.exists():
            path.insert(0, str(self.wrapper_bin))
        env = {
            "PATH": os.pathsep.join(path),
            "HOME": str(self.home),
            "LANG": os.environ.get("LANG", "C.UTF-8"),
            "TMPDIR": os.environ.get("TMPDIR", "/tmp"),
            "ANTHROPIC_BASE_URL": model.base_url if model is not None else "http://127.0.0.1:9",
            "ANTHROPIC_API_KEY": "fake",
            "DISABLE_TELEMETRY": "1",
            "DISABLE_AUTOUPDATER": "1",
            "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
            # Hooks inherit ANTHROPIC_API_KEY, so "auto" would pick the Anthropic probe: pin offline.
            "ROLLING_GRAPH_PROBE": "offline",
        }
        env.update(self.extra_env)
        return env

    def install_from_marketplace(self, marketplace: Path = CHECKOUT) -> Path:
        """The README's second step, as a user types it: ``claude plugin marketplace add
        MARKETPLACE`` and ``claude plugin install rolling-graph@rolling-graph``. Returns the
        installed copy (under ``~/.claude/plugins/cache``), which later runs use without
        ``--plugin-dir``."""
        assert CLAUDE is not None
        name = json.loads((marketplace / ".claude-plugin" / "marketplace.json").read_text())["name"]
        for argv in (["plugin", "marketplace", "add", str(marketplace)], ["plugin", "install", f"{plugin_name()}@{name}"]):
            done = subprocess.run([CLAUDE, *argv], cwd=self.project, env=self.env(None), capture_output=True, text=True,
                                  timeout=RUN_TIMEOUT_S, stdin=subprocess.DEVNULL)
            assert done.returncode == 0, f"claude {' '.join(argv)} -> rc={done.returncode}\n{done.stdout}\n{done.stderr}"
        copies = sorted(self.home.glob(f".claude/plugins/cache/{name}/{plugin_name()}/*"))
        assert len(copies) == 1, copies
        return copies[0]

    def run(self, model: StandinModel, *args: str, plugin_dir: Path | None = PLUGIN_DIR, check: bool = True) -> ClaudeRun:
        """``claude -p ARGS --output-format json [--plugin-dir DIR]`` in the project directory."""
        assert CLAUDE is not None
        argv = ["-p", *args, "--output-format", "json"]
        if plugin_dir is not None:
            argv += ["--plugin-dir", str(plugin_dir)]

        started = time.perf_counter()
        done = subprocess.run(
            [CLAUDE, *argv],
            cwd=self.project,
            env=self.env(model),
            capture_output=True,
            text=True,
            timeout=RUN_TIMEOUT_S,
            stdin=subprocess.DEVNULL,
        )
        run = ClaudeRun(argv, done.returncode, done.stdout, done.stderr, time.perf_counter() - started)
        try:
            run.output = json.loads(done.stdout)
        except json.JSONDecodeError:
            run.output = {}
        if check:
            assert done.returncode == 0 and run.output.get("is_error") is False, run.describe()
        return run

    def transcript(self, session_id: str) -> list[dict[str, Any]]:
        paths = sorted(self.home.glob(f".claude/projects/*/{session_id}.jsonl"))
        assert paths, f"no transcript for session {session_id} under {self.home / '.claude/projects'}"
        return [json.loads(line) for line in paths[0].read_text().splitlines() if line.strip()]

    def fired_events(self) -> list[str]:
        """The CLI event names rgraph-hook was run with, in order (from the PATH wrapper)."""
        if not self.event_log.exists():
            return []
        return self.event_log.read_text().split()

    def stop_embedded_database(self) -> None:
        """Stop an embedded PostgreSQL a detached reconcile may have started under our home."""
        if not (self.rg_home / "pg").exists():
            return
        try:
            from rolling_graph.warm import server

            server.stop(self.rg_home)
        except Exception:  # noqa: BLE001 - best effort in teardown
            return


def hook_errors(transcript: list[dict[str, Any]]) -> list[str]:
    """Every hook failure Claude Code recorded in a transcript, as readable lines."""
    errors: list[str] = []
    for line in transcript:
        attachment = line.get("attachment") or {}
        if attachment.get("type") in HOOK_ERROR_ATTACHMENTS:
            errors.append(
                f"{attachment.get('type')} {attachment.get('hookName')}: {attachment.get('stderr', '')[:500]}"
            )
        if line.get("subtype") == "stop_hook_summary" and line.get("hookErrors"):
            errors.extend(f"Stop: {error}"[:500] for error in line["hookErrors"])
        if line.get("subtype") == "informational" and "blocked by hook" in str(line.get("content", "")):
            errors.append(str(line["content"])[:500])
    return errors


def stderr_hook_errors(run: ClaudeRun) -> list[str]:
    """Hook failures the CLI printed (SessionEnd failures appear only there)."""
    return [
        line
        for line in run.stderr.splitlines()
        if "hook" in line.lower() and ("failed" in line or "error" in line.lower())
    ]


def hook_outputs(transcript: list[dict[str, Any]], hook_name: str) -> list[str]:
    """The additionalContext our hook printed for ``hook_name`` (e.g. ``SessionStart:compact``)."""
    contexts: list[str] = []
    for line in transcript:
        attachment = line.get("attachment") or {}
        if attachment.get("type") == "hook_success" and attachment.get("hookName") == hook_name:
            try:
                output = json.loads(attachment.get("stdout") or "null")
            except json.JSONDecodeError:
                continue
            if isinstance(output, dict):
                context = (output.get("hookSpecificOutput") or {}).get("additionalContext")
                if isinstance(context, str) and context:
                    contexts.append(context)
    return contexts


def system_texts(request: RecordedRequest) -> Iterator[str]:
    """Texts of the ``system``-role messages in a request (where hook context lands)."""
    for message in request.body.get("messages") or []:
        if message.get("role") != "system":
            continue
        content = message.get("content")
        if isinstance(content, str):
            yield content
        elif isinstance(content, list):
            yield from (block.get("text", "") for block in content if isinstance(block, dict))


def hook_contexts(request: RecordedRequest) -> list[tuple[str, str]]:
    """``(event label, text)`` for every hook context in a request's system messages.

    The text runs to the next hook-context marker or the end of the block, so it may carry
    system text Claude Code appended after ours; assert with ``in``, not ``==``.
    """
    found: list[tuple[str, str]] = []
    for text in system_texts(request):
        marks = list(CONTEXT_MARKER.finditer(text))
        ends = [mark.start() for mark in marks[1:]] + [len(text)] if marks else []
        for mark, end in zip(marks, ends, strict=True):
            found.append((mark.group("event"), text[mark.end() : end]))
    return found


def text_outside_hook_contexts(request: RecordedRequest) -> str:
    """All text of a request with every hook-context segment cut out."""
    whole = request.text()
    for _, segment in hook_contexts(request):
        whole = whole.replace(segment, "")
    return whole


def kebab(event: str) -> str:
    """``UserPromptSubmit`` -> ``user-prompt-submit`` (the rgraph-hook argument)."""
    return re.sub(r"(?<!^)(?=[A-Z])", "-", event).lower()


def registered_hooks(plugin_dir: Path = PLUGIN_DIR) -> dict[str, list[dict[str, Any]]]:
    """The plugin's hooks.json ``hooks`` mapping (event -> matcher groups)."""
    data = json.loads((plugin_dir / "hooks" / "hooks.json").read_text())
    hooks: dict[str, list[dict[str, Any]]] = data["hooks"]
    return hooks


def plugin_name(plugin_dir: Path = PLUGIN_DIR) -> str:
    return str(json.loads((plugin_dir / ".claude-plugin" / "plugin.json").read_text())["name"])


def write_noop_plugin(target: Path, *, like: Path = PLUGIN_DIR, python: str = sys.executable, keep_async: bool = False) -> Path:
    """A plugin with the same hook wiring (events, matchers, timeouts) whose every hook is
    ``<python> -c pass`` (default: this interpreter), every one synchronous: the floor a Python
    hook plugin costs. (An ``"async": true`` of ours is dropped: the floor stays the plugin that
    Claude Code waits for on every event, the one issue 37 measured against.) ``keep_async``:
    the hooks ours runs in the background run so here too — the same wiring doing nothing,
    which is what our hooks' own work is measured against (docs/measurements.md, eighteenth
    pass: with a model that answers at once, the client's handling of background hooks costs a
    session as much as a no-op's synchronous hooks save it)."""
    (target / ".claude-plugin").mkdir(parents=True)
    (target / "hooks").mkdir()
    manifest = {"name": "rolling-graph-noop", "version": "0.0.0", "description": "No-op hooks for timing"}
    (target / ".claude-plugin" / "plugin.json").write_text(json.dumps(manifest))
    groups = json.loads(json.dumps(registered_hooks(like)))
    for matchers in groups.values():
        for group in matchers:
            for hook in group["hooks"]:
                hook.pop("args", None)
                if not keep_async:
                    hook.pop("async", None)
                hook["command"] = f"{python} -c pass"
    (target / "hooks" / "hooks.json").write_text(json.dumps({"hooks": groups}, indent=2))
    return target
