"""The ``claude`` probe: the user's own Claude Code CLI (and its login) answers the probe call.

For people who run Claude Code with a subscription login and no ``ANTHROPIC_API_KEY``. It
sends the same system prompt and the same redacted, bounded user message as the Anthropic
backend and reads back the same patch schema, through one ``claude -p`` run per batch::

    claude -p --model M --tools "" --json-schema PATCH_SCHEMA --output-format json
           --no-session-persistence --strict-mcp-config --disable-slash-commands --max-turns 2
           --settings '{"disableAllHooks": true, "env": {...}}' --system-prompt PROMPT
           --max-budget-usd B                                   (the user message on stdin)

What each part is for (checked against Claude Code 2.1.328, and by the e2e tests against 2.1.332):

* ``--tools ""``: no built-in tool; with ``--json-schema`` the model is offered exactly one,
  ``StructuredOutput``, whose validated input is the result's ``structured_output``.
* ``--system-prompt``: our prompt replaces Claude Code's (about 30 KB a request otherwise).
* ``--no-session-persistence``: nothing lands in the user's project history;
  ``--strict-mcp-config``: no MCP servers; ``--disable-slash-commands``: no skills.
* Never recursing: ``disableAllHooks`` in the child's settings, and
  :data:`~rolling_graph.core.config.PROBE_CHILD_ENV` in its environment, on which every
  ``rgraph-hook`` returns at once (hooks from managed settings cannot be disabled).
* Bounded cost: ``--max-turns 2`` allows the answer plus the one retry the CLI makes after a
  malformed structured output; ``CLAUDE_CODE_MAX_OUTPUT_TOKENS`` bounds each answer,
  thinking is off, the CLI retries a failed request once. :meth:`ClaudeProbe.max_call_tokens`
  is the most that costs, which the runner checks against the caps before the call, and
  ``--max-budget-usd`` stops a CLI that would run past the remaining cap.
* No project context: ``CLAUDE.md`` files and auto-memory are off and the CLI runs in an
  empty directory under ``$ROLLING_GRAPH_HOME``, so no file of the user's project is sent.

It runs inside the detached probe process, in its own process group, under a wall-clock
timeout after which the whole group is killed. Any failure — not installed, non-zero exit,
timeout, budget exceeded, malformed output — is a :class:`ProbeFailed` with the tokens and
cost the CLI reported (the offline probe answers, the reason is journaled).
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import tempfile
import time
from typing import TYPE_CHECKING, Any

from rolling_graph.core.config import PROBE_CHILD_ENV, Settings
from rolling_graph.probe import usage
from rolling_graph.probe.base import ModelProbe, ProbeResult, estimate_tokens, parse_answer
from rolling_graph.probe.errors import ProbeFailed
from rolling_graph.probe.prompting import PATCH_SCHEMA, PROMPT_VERSION, TOOL_NAME, build_user_message, system_prompt
from rolling_graph.probe.usage import remaining_tokens

if TYPE_CHECKING:
    from rolling_graph.core.types import PendingEvent, SessionDoc
    from rolling_graph.probe.prompting import PromptBounds

STRUCTURED_OUTPUT_TOOL = "StructuredOutput"
#: The answer plus the one retry the CLI makes after a malformed structured output.
MAX_TURNS = 2
#: Most of the CLI's stdout we read; its JSON result is a few kilobytes.
MAX_STDOUT_BYTES = 4 * 1024 * 1024
#: Seconds between SIGTERM and SIGKILL when the wall clock runs out.
KILL_GRACE_S = 2.0
#: Price (USD per million tokens) assumed for a model missing from usage.PRICES_PER_MTOK: Haiku's.
FALLBACK_PRICES = usage.PRICES_PER_MTOK["claude-haiku-4-5"]

_STATUS = {
    401: "authentication failed (log in with `claude`, or check its API key)",
    403: "permission denied",
    404: "model not found",
    413: "request too large",
    429: "rate limited",
    529: "overloaded",
}
_MALFORMED = {
    "error_max_turns": "output: no valid structured output within {turns} requests",
    "error_max_structured_output_retries": "output: no valid structured output within {turns} requests",
}


def child_env(settings: Settings, bounds: PromptBounds, base: dict[str, str] | None = None) -> dict[str, str]:
    """The CLI's environment: the caller's, plus our guard and the cost bounds."""
    env = dict(os.environ if base is None else base)
    env.update(child_settings_env(bounds))
    env[PROBE_CHILD_ENV] = "1"
    return env


def child_settings_env(bounds: PromptBounds) -> dict[str, str]:
    """Variables that bound the CLI's cost and keep the user's project out of the request."""
    return {
        "CLAUDE_CODE_MAX_OUTPUT_TOKENS": str(bounds.max_output_tokens),
        "CLAUDE_CODE_DISABLE_THINKING": "1",
        "CLAUDE_CODE_MAX_RETRIES": "1",
        "CLAUDE_CODE_DISABLE_CLAUDE_MDS": "1",
        "CLAUDE_CODE_DISABLE_AUTO_MEMORY": "1",
        "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
        "DISABLE_AUTOUPDATER": "1",
        PROBE_CHILD_ENV: "1",
    }


def budget_usd(settings: Settings, model: str, remaining_tokens: int | None, max_tokens: int) -> float:
    """``--max-budget-usd``: the tokens left under the caps (or, with no cap, this call's
    maximum) priced as output, the dearer side, so that a call the token caps allow is
    never cut short by the budget, while a CLI that would run past the caps is stopped."""
    best = max((p for p in usage.PRICES_PER_MTOK if model.startswith(p)), key=len, default=None)
    price_out = (usage.PRICES_PER_MTOK[best] if best else FALLBACK_PRICES)[1]
    tokens = max_tokens if remaining_tokens is None else remaining_tokens
    return max(round(tokens * price_out / 1_000_000, 6), 0.000001)


def _number(value: Any) -> int:
    return int(value) if isinstance(value, int | float) and not isinstance(value, bool) and value > 0 else 0


def read_usage(out: dict[str, Any]) -> tuple[int, int, float | None, str | None]:
    """``(tokens_in, tokens_out, cost_usd, model)`` from the CLI's JSON result.

    ``modelUsage`` (per model, all requests of the run) is preferred: ``usage`` reads zero
    when the run stops on the budget. Input counts cache reads and writes too.
    """
    tokens_in = tokens_out = 0
    model: str | None = None
    per_model = out.get("modelUsage")
    if isinstance(per_model, dict) and per_model:
        most = -1
        for name, row in per_model.items():
            if not isinstance(row, dict):
                continue
            t_in = sum(_number(row.get(k)) for k in ("inputTokens", "cacheReadInputTokens", "cacheCreationInputTokens"))
            t_out = _number(row.get("outputTokens"))
            tokens_in, tokens_out = tokens_in + t_in, tokens_out + t_out
            if t_in + t_out > most:
                most, model = t_in + t_out, str(name)[:100]
    else:
        totals = out.get("usage")
        totals = totals if isinstance(totals, dict) else {}
        tokens_in = sum(_number(totals.get(k)) for k in ("input_tokens", "cache_read_input_tokens", "cache_creation_input_tokens"))
        tokens_out = _number(totals.get("output_tokens"))
    cost = out.get("total_cost_usd")
    reported = float(cost) if isinstance(cost, int | float) and not isinstance(cost, bool) and cost >= 0 else None
    return tokens_in, tokens_out, reported, model


def _kill_group(proc: subprocess.Popen[bytes]) -> None:
    """SIGTERM the CLI's process group, SIGKILL what is left after a grace period."""
    for sig, wait in ((signal.SIGTERM, KILL_GRACE_S), (signal.SIGKILL, KILL_GRACE_S)):
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(proc.pid, sig)
        try:
            proc.wait(timeout=wait)
            return
        except subprocess.TimeoutExpired:
            continue


def _tail(handle: Any, limit: int = 400) -> str:
    handle.seek(0, os.SEEK_END)
    size = handle.tell()
    handle.seek(max(0, size - limit))
    text: str = handle.read().decode("utf-8", "replace")
    return text.strip().replace("\n", " ")[-limit:]


class ClaudeProbe(ModelProbe):
    """A :class:`~rolling_graph.probe.base.ProbeBackend` backed by ``claude -p``."""

    name = "claude"
    default_attempts = 1  # the CLI retries a failed request itself (CLAUDE_CODE_MAX_RETRIES)
    billed_requests = MAX_TURNS
    #: Claude Code's own framing per request: its system-reminders, the agent line, the tool.
    overhead_tokens = 1_500

    def model_name(self, settings: Settings) -> str:
        return settings.probe.claude_model

    def make_client(self) -> Any:  # no SDK client: the CLI is started per call
        return None

    def max_call_tokens(self, events: list[PendingEvent], doc: SessionDoc) -> int:
        """Every request of the run, each carrying our prompt, the framing and the answers
        before it, plus each answer."""
        out = self.bounds.max_output_tokens
        per_request = estimate_tokens(*self.input_texts(events, doc)) + self.overhead_tokens
        return sum(per_request + turn * out + out for turn in range(self.billed_requests))

    def system_text(self) -> str:
        return system_prompt(self.bounds).replace(TOOL_NAME, STRUCTURED_OUTPUT_TOOL)

    def argv(self, budget: float) -> list[str]:
        """The command line (the user message goes on stdin, never into argv)."""
        settings = {"disableAllHooks": True, "env": child_settings_env(self.bounds)}
        return [
            self.settings.probe.claude_command,
            "-p",
            "--model", self.model,
            "--tools", "",
            "--json-schema", json.dumps(PATCH_SCHEMA, separators=(",", ":")),
            "--output-format", "json",
            "--no-session-persistence",
            "--strict-mcp-config",
            "--disable-slash-commands",
            "--max-turns", str(MAX_TURNS),
            "--settings", json.dumps(settings, separators=(",", ":")),
            "--system-prompt", self.system_text(),
            "--max-budget-usd", f"{budget:.6f}",
        ]  # fmt: skip

    def workdir(self) -> str:
        """An empty directory of ours: no project file, CLAUDE.md or git state near the CLI."""
        path = os.path.join(self.settings.home_dir, "probe", "claude-cwd")
        os.makedirs(path, mode=0o700, exist_ok=True)
        return path

    def _execute(self, argv: list[str], message: str, max_tokens: int) -> tuple[int, bytes, str]:
        """Run the CLI; ``(returncode, stdout, stderr tail)``. Timeout: the group is killed."""
        timeout = self.settings.probe.claude_timeout_s
        with tempfile.TemporaryFile() as stdin, tempfile.TemporaryFile() as stdout, tempfile.TemporaryFile() as stderr:
            stdin.write(message.encode("utf-8", "replace"))
            stdin.seek(0)
            try:
                proc = subprocess.Popen(
                    argv, stdin=stdin, stdout=stdout, stderr=stderr, cwd=self.workdir(),
                    env=child_env(self.settings, self.bounds), start_new_session=True, close_fds=True,
                )  # fmt: skip
            except OSError as exc:  # not installed, not executable
                raise ProbeFailed(
                    f"cannot run `{argv[0]}` ({type(exc).__name__}); install Claude Code or set [probe] claude_command"
                ) from exc
            try:
                returncode = proc.wait(timeout=timeout)
            except subprocess.TimeoutExpired:
                _kill_group(proc)
                # It may have been billed before it hung: charge the most it could cost.
                raise ProbeFailed(
                    f"timed out after {timeout:g} s (process group killed)", input_tokens=max_tokens
                ) from None
            finally:
                if proc.poll() is None:  # interrupted: never leave the CLI behind
                    _kill_group(proc)
            size = stdout.seek(0, os.SEEK_END)
            if size > MAX_STDOUT_BYTES:
                raise ProbeFailed(f"output: {size:,} bytes, over the bound of {MAX_STDOUT_BYTES:,}", input_tokens=max_tokens)
            stdout.seek(0)
            return returncode, stdout.read(), _tail(stderr)

    def call(self, events: list[PendingEvent], doc: SessionDoc) -> ProbeResult:

        if os.environ.get(PROBE_CHILD_ENV):
            raise ProbeFailed("refused: already inside a probe's Claude Code child (no nesting)")
        message = build_user_message(events, doc, self.bounds)
        max_tokens = self.max_call_tokens(events, doc)
        budget = budget_usd(self.settings, self.model, remaining_tokens(self.settings, doc), max_tokens)
        started = time.monotonic()
        self.charge_unread(max_tokens, 0)  # output we cannot read may still have been billed
        returncode, raw, stderr = self._execute(self.argv(budget), message, max_tokens)
        try:
            out = json.loads(raw) if raw.strip() else None
        except ValueError:
            out = None
        if not isinstance(out, dict):
            detail = f": {stderr}" if stderr else ""
            if returncode != 0:
                raise ProbeFailed(f"exited with code {returncode}{detail}"[:300], input_tokens=max_tokens)
            raise ProbeFailed(f"output: not a JSON result{detail}"[:300], input_tokens=max_tokens)
        tokens_in, tokens_out, cost, reported_model = read_usage(out)
        model = reported_model or self.model
        self.charge_unread(tokens_in, tokens_out)

        def failed(reason: str) -> ProbeFailed:
            return ProbeFailed(
                reason[:300], input_tokens=tokens_in, output_tokens=tokens_out, model=model,
                backend=self.name, cost_usd=cost,
            )  # fmt: skip

        subtype = str(out.get("subtype") or "")
        if returncode != 0 or out.get("is_error"):
            raise failed(self._describe_error(out, subtype, returncode, budget, stderr))
        answer = out.get("structured_output")
        if not isinstance(answer, dict):
            text = out.get("result")
            answer = text if isinstance(text, str) else None
        try:
            rationale, ops = parse_answer(answer, self.bounds)
        except ProbeFailed as exc:
            text = f" ({exc.reason.removeprefix('output: ')})" if answer else ""
            raise failed(f"output: no structured output{text}") from exc
        return ProbeResult(
            backend=self.name,
            rationale=rationale,
            patch=ops,
            model=model,
            input_tokens=tokens_in,
            output_tokens=tokens_out,
            cost_usd=cost,
            extra={
                "prompt_version": PROMPT_VERSION,
                "num_turns": _number(out.get("num_turns")),
                "stop_reason": str(out.get("stop_reason") or "")[:40],
                "latency_ms": round((time.monotonic() - started) * 1000),
            },
        )

    @staticmethod
    def _describe_error(out: dict[str, Any], subtype: str, returncode: int, budget: float, stderr: str) -> str:
        if subtype == "error_max_budget_usd":
            return f"budget exceeded (--max-budget-usd {budget:g})"
        if subtype in _MALFORMED:
            return _MALFORMED[subtype].format(turns=MAX_TURNS)
        status = out.get("api_error_status")
        if isinstance(status, int) and not isinstance(status, bool):
            text = _STATUS.get(status, "server error" if status >= 500 else "request failed")
            return f"{text} ({status})"
        errors = out.get("errors")
        first = errors[0] if isinstance(errors, list) and errors else out.get("result") or stderr
        return f"exited with code {returncode} ({subtype or 'error'}): {str(first)[:200]}"
