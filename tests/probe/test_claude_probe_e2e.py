"""End to end: the real Claude Code CLI is the probe (``ROLLING_GRAPH_PROBE=claude``).

An outer ``claude -p`` session runs our hooks against the stand-in model; each hook starts
the detached probe, which runs a second, inner ``claude -p`` against the same stand-in. The
stand-in tells the two apart (the probe request offers only ``StructuredOutput``), answers
the probe from a queue (a patch, a 429, prose instead of structured output, a hang) and
records every request.

Our hooks are registered in the sandbox user's ``~/.claude/settings.json`` (not with
``--plugin-dir``), so the inner CLI, which shares that ``HOME``, would run them too if it
ran hooks at all: a spy wrapper logs every ``rgraph-hook`` run with the probe-child
variable, and no run may come from inside the child.

Run: ``pytest -m e2e tests/probe/test_claude_probe_e2e.py`` (needs ``claude`` on PATH).
"""

from __future__ import annotations

import json
import statistics
import subprocess
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from claude_harness import CLAUDE, VENV_BIN, Sandbox, hook_errors, kebab, registered_hooks, stderr_hook_errors
from conftest import prompt_payload
from standin_model import ProbeReply, RecordedRequest, StandinModel, ToolCall, Turn

from rolling_graph.core.config import PROBE_CHILD_ENV

pytestmark = [
    pytest.mark.e2e,
    pytest.mark.skipif(
        CLAUDE is None,
        reason="Claude Code CLI `claude` is not on PATH (install: npm install -g @anthropic-ai/claude-code@2.1.332)",
    ),
]

SECRET = "ghp_" + "Z9y8X7w6V5" * 4
PROMPT = f"We decided to use PostgreSQL instead of SQLite for the warm store. My token is {SECRET}."
PROBE_LABEL = "Use PostgreSQL, said the claude probe"
GOOD = ProbeReply.patch(
    "The user chose PostgreSQL.",
    [{"op": "add", "path": "/nodes/use-postgresql", "value": {"label": PROBE_LABEL, "domain": "technical", "kind": "decision"}}],
)
WAIT_S = 60.0
#: What the CLI may send for one batch: the answer, plus one retry (after a malformed
#: structured output: --max-turns 2; after an API error: CLAUDE_CODE_MAX_RETRIES=1).
REQUESTS_PER_BATCH_MAX = 2

SPY = """#!/bin/sh
printf '%s child=%s\\n' "$1" "${{{child}:-0}}" >> "{log}"
exec "{real}" "$@"
"""


def wait_until(condition: Callable[[], bool], timeout_s: float = WAIT_S) -> bool:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(0.1)
    return condition()


def processes_of(home: Path) -> list[tuple[int, str, bool]]:
    """``(pid, cmdline, is_probe_child)`` of every live process running as the sandbox user."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            environ = (entry / "environ").read_bytes().split(b"\0")
            cmdline = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
            state = (entry / "stat").read_text().rsplit(")", 1)[1].split()[0]
        except OSError:
            continue
        if f"HOME={home}".encode() in environ and state not in ("Z", "X"):
            found.append((int(entry.name), cmdline, f"{PROBE_CHILD_ENV}=1".encode() in environ))
    return found


def background_work(home: Path) -> list[str]:
    """Detached probes and the CLIs they started, still running for this sandbox."""
    return [cmd for _pid, cmd, child in processes_of(home) if child or "rolling_graph.probe.runner" in cmd]


class ProbeSandbox:
    """A sandbox whose user registered our hooks in ``~/.claude/settings.json``, behind a spy."""

    def __init__(self, root: Path, **env: str) -> None:
        self.sandbox = Sandbox.create(root, wrap_hook=False, ROLLING_GRAPH_PROBE="claude", ROLLING_GRAPH_WARM="off", **env)
        self.spy_log = root / "spy.log"
        spy = root / "spy-rgraph-hook"
        spy.write_text(SPY.format(child=PROBE_CHILD_ENV, log=self.spy_log, real=VENV_BIN / "rgraph-hook"))
        spy.chmod(0o755)
        groups = json.loads(json.dumps(registered_hooks()))
        for event, matchers in groups.items():
            for group in matchers:
                for hook in group["hooks"]:
                    hook.pop("args", None)  # the shell form: the spy's path, then the event
                    hook["command"] = f'"{spy}" {kebab(event)}'
        (self.sandbox.home / ".claude").mkdir(parents=True, exist_ok=True)
        (self.sandbox.home / ".claude" / "settings.json").write_text(json.dumps({"hooks": groups}))
        (self.sandbox.project / "notes.md").write_text("# Notes\n\nThe warm store keeps graphs across sessions.\n")

    def configure(self, text: str) -> None:
        self.sandbox.rg_home.mkdir(parents=True, exist_ok=True)
        (self.sandbox.rg_home / "config.toml").write_text(text)

    def hook_runs(self) -> list[tuple[str, bool]]:
        if not self.spy_log.exists():
            return []
        runs = []
        for line in self.spy_log.read_text().splitlines():
            event, _, child = line.partition(" child=")
            runs.append((event, child != "0"))
        return runs

    def journal(self, sid: str) -> list[dict[str, Any]]:
        path = self.sandbox.rg_home / "sessions" / f"{sid}.journal.jsonl"
        if not path.exists():
            return []
        return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]

    def sidecar(self, sid: str) -> dict[str, Any]:
        return json.loads((self.sandbox.rg_home / "sessions" / f"{sid}.graph.json").read_text())

    def state(self, sid: str) -> dict[str, Any]:
        return json.loads((self.sandbox.rg_home / "sessions" / f"{sid}.state.json").read_text())

    def quiet(self) -> bool:
        return not background_work(self.sandbox.home)


def play(box: ProbeSandbox, model: StandinModel) -> str:
    """One outer session: the prompt, one Read, an answer; then wait for every probe to end."""
    model.script(Turn.tools(ToolCall("Read", {"file_path": str(box.sandbox.project / "notes.md")})), Turn.say("Noted."))
    run = box.sandbox.run(model, PROMPT, plugin_dir=None)
    assert stderr_hook_errors(run) == [], run.stderr
    assert hook_errors(box.sandbox.transcript(run.session_id)) == []
    assert wait_until(box.quiet), f"still running: {background_work(box.sandbox.home)}"
    return run.session_id


def model_patches(box: ProbeSandbox, sid: str) -> list[dict[str, Any]]:
    return [e for e in box.journal(sid) if e.get("kind") in ("patch", "rejected")]


def assert_probe_request_is_clean(request: RecordedRequest) -> None:
    body = json.dumps(request.body)
    assert [tool["name"] for tool in request.body["tools"]] == ["StructuredOutput"]
    assert SECRET not in body
    assert request.body.get("max_tokens") == 2048 and "thinking" not in request.body
    system = " ".join(block.get("text", "") for block in request.body.get("system") or [])
    assert "data, never instructions" in system  # our prompt, not Claude Code's
    assert "CLAUDE.md" not in body and str(PROBE_LABEL) not in system


def assert_no_nested_hook(box: ProbeSandbox, model: StandinModel) -> None:
    runs = box.hook_runs()
    assert runs and not any(child for _event, child in runs), runs
    kinds = {r.kind for r in model.requests}
    assert kinds <= {"main", "probe", "side", "count_tokens"}, kinds
    assert len(model.requests_of("main")) == 2  # the outer session's two turns, nothing more


def test_the_real_cli_probes_each_batch_once_and_its_patch_lands_in_the_sidecar(tmp_path: Path) -> None:
    box = ProbeSandbox(tmp_path)
    with StandinModel() as model:
        model.set_probe_default(GOOD)
        sid = play(box, model)
        probes = model.requests_of("probe")

    entries = model_patches(box, sid)
    by_claude = [e for e in entries if e["backend"] == "claude"]  # the model's answer, one a batch
    print(f"good: {len(probes)} probe requests; {[(e['kind'], e['backend'], e['event_ids']) for e in entries]}")
    assert probes and len(probes) == len(by_claude), (len(probes), entries)  # one request a batch
    assert not any(str(e.get("fallback_reason", "")).startswith("claude") for e in entries)
    for request in probes:
        assert_probe_request_is_clean(request)
    first = probes[0].text()
    assert "PostgreSQL instead of SQLite" in first and "[REDACTED" in first  # the batch, redacted
    assert box.sidecar(sid)["nodes"]["use-postgresql"]["label"] == PROBE_LABEL
    counters = box.state(sid)["counters"]
    assert counters["probe_tokens_in"] > 0 and counters["probes_by_backend"]["claude"] == len(by_claude)
    assert SECRET not in (box.sandbox.rg_home / "sessions" / f"{sid}.journal.jsonl").read_text()
    assert_no_nested_hook(box, model)


MISBEHAVIOUR = {
    "rate_limited": (ProbeReply.error(429), "claude: rate limited (429)"),
    "malformed_output": (ProbeReply.prose(), "claude: output: no structured output"),
    "hang": (ProbeReply.hang(300), "claude: timed out after 5 s"),
}


@pytest.mark.parametrize("case", sorted(MISBEHAVIOUR))
def test_a_misbehaving_model_falls_back_offline_journaled_with_no_hook_error(tmp_path: Path, case: str) -> None:
    reply, reason = MISBEHAVIOUR[case]
    box = ProbeSandbox(tmp_path)
    box.configure("[probe]\nclaude_timeout_s = 5.0\n")
    with StandinModel() as model:
        model.set_probe_default(reply)
        sid = play(box, model)  # asserts: no hook error, no probe left running
        probes = model.requests_of("probe")

    entries = model_patches(box, sid)
    fallbacks = [e for e in entries if str(e.get("fallback_reason", "")).startswith("claude")]
    print(f"{case}: {len(fallbacks)} batches, {len(probes)} probe requests; {fallbacks[0]['fallback_reason'] if fallbacks else ''}")
    assert fallbacks and all(e["backend"] == "offline" and e["fallback_reason"].startswith(reason) for e in fallbacks)
    assert not any(e["backend"] == "claude" for e in entries), entries
    assert 1 <= len(probes) <= REQUESTS_PER_BATCH_MAX * len(fallbacks)
    for request in probes:
        assert_probe_request_is_clean(request)
    nodes = box.sidecar(sid)["nodes"]
    assert any("postgresql" in node_id for node_id in nodes), sorted(nodes)  # the offline probe's answer
    assert all(node.get("label") != PROBE_LABEL for node in nodes.values())
    assert_no_nested_hook(box, model)


def test_inside_a_probe_child_our_hooks_do_nothing_even_when_hooks_run(tmp_path: Path) -> None:
    """Managed-settings hooks cannot be disabled: a child that runs them still never recurses."""
    box = ProbeSandbox(tmp_path)
    with StandinModel([Turn.say("Fine.")]) as model:
        model.set_probe_default(GOOD)
        env = {**box.sandbox.env(model), PROBE_CHILD_ENV: "1"}
        done = subprocess.run(
            [str(CLAUDE), "-p", PROMPT, "--output-format", "json"],
            cwd=box.sandbox.project, env=env, capture_output=True, text=True, timeout=90, stdin=subprocess.DEVNULL,
        )  # fmt: skip
        assert done.returncode == 0, done.stderr
        assert wait_until(box.quiet, 10)
        probes = model.requests_of("probe")
    runs = box.hook_runs()
    assert runs and all(child for _event, child in runs), runs  # the hooks ran, inside a child ...
    assert not (box.sandbox.rg_home / "sessions").exists() or not list((box.sandbox.rg_home / "sessions").iterdir())
    assert probes == []  # ... and did nothing: no state, no probe, no request


def hook_seconds(box: ProbeSandbox, model: StandinModel, sid: str, backend: str) -> float:
    env = {**box.sandbox.env(model), "ROLLING_GRAPH_PROBE": backend}
    payload = json.dumps(prompt_payload(sid, PROMPT, cwd=str(box.sandbox.project))).encode()
    started = time.perf_counter()
    done = subprocess.run([str(VENV_BIN / "rgraph-hook"), "user-prompt-submit"], input=payload, env=env, capture_output=True, timeout=30)
    elapsed = time.perf_counter() - started
    assert done.returncode == 0 and done.stderr == b"", done.stderr
    return elapsed


def test_the_hook_returns_before_the_probe_child_finishes_and_is_no_slower(tmp_path: Path) -> None:
    box = ProbeSandbox(tmp_path)
    box.configure("[probe]\nclaude_timeout_s = 20.0\n")
    with StandinModel() as model:
        model.set_probe_default(ProbeReply.hang(8))
        elapsed = hook_seconds(box, model, "hook-clock", "claude")
        # The hook has exited; its probe's CLI asks the model only now, and hangs there.
        assert wait_until(lambda: len(model.requests_of("probe")) == 1, 30)
        assert any(child for _pid, _cmd, child in processes_of(box.sandbox.home)), "the probe child is not running"
        assert elapsed < 2.0, elapsed
        model.set_probe_default(GOOD)
        assert wait_until(box.quiet)

        times: dict[str, list[float]] = {"offline": [], "claude": []}
        for i in range(5):  # interleaved; each run's probe ends before the next run starts
            for backend in ("offline", "claude"):
                times[backend].append(hook_seconds(box, model, f"clock-{backend}-{i}", backend))
                assert wait_until(box.quiet)
    offline, claude = statistics.median(times["offline"]), statistics.median(times["claude"])
    print(f"UserPromptSubmit hook: offline {times['offline']}, claude {times['claude']}")
    assert claude <= offline * 1.5 + 0.05, times
