"""Which probe backend answers this batch, and why; and what ``rgraph doctor`` reports.

``ROLLING_GRAPH_PROBE``:

* ``auto`` (default) — Anthropic when ``ANTHROPIC_API_KEY`` is set; else Ollama when it
  answers ``GET /api/tags`` within 300 ms *and* has the configured model; else offline.
* ``anthropic`` / ``ollama`` / ``claude`` / ``offline`` — forced (a forced model backend
  that fails falls back to offline per batch, with the reason journaled by the runner).
  ``auto`` never picks ``claude``: it spends the user's Claude plan, so it is opt-in.

Token caps come first: once this session's probe tokens reach
``settings.probe.session_token_cap``, or today's reach ``daily_token_cap`` — or, given the
batch, once the chosen call's *maximum* cost would cross either cap — the answer is the
offline backend with a reason starting ``"cap reached"`` (see :func:`is_cap_reason`), so
the caller can tell the user once. One call can therefore never overshoot a cap.

This module runs in the probe process and in the CLI, never in the hook: it may use httpx.
Model SDKs are still imported lazily, by the backend modules.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from rolling_graph.core.config import Settings
from rolling_graph.core.model import new_document
from rolling_graph.probe import usage
from rolling_graph.probe.base import ModelProbe, ProbeBackend

if TYPE_CHECKING:
    from rolling_graph.core.types import PendingEvent, SessionDoc

CAP_REASON_PREFIX = "cap reached"
OLLAMA_CHECK_TIMEOUT_S = 0.3
ANTHROPIC_CHECK_TIMEOUT_S = 3.0
ANTHROPIC_API_BASE = "https://api.anthropic.com"


def is_cap_reason(reason: str | None) -> bool:
    return bool(reason) and str(reason).startswith(CAP_REASON_PREFIX)


def _offline() -> ProbeBackend:
    from rolling_graph.probe.offline import OfflineProbe

    return OfflineProbe()


def _model_listed(model: str, names: list[str]) -> bool:
    wanted = model if ":" in model else f"{model}:latest"
    return any(n in (model, wanted) for n in names)


def ollama_status(
    host: str, model: str, *, timeout: float = OLLAMA_CHECK_TIMEOUT_S, transport: Any | None = None
) -> tuple[bool, bool, str]:
    """``(answers, has_model, detail)`` from one quick ``GET {host}/api/tags``."""
    import httpx

    url = host.rstrip("/") + "/api/tags"
    try:
        with httpx.Client(timeout=timeout, transport=transport) as client:
            response = client.get(url)
        response.raise_for_status()
        names = [str(m.get("name") or m.get("model")) for m in response.json().get("models", []) if isinstance(m, dict)]
    except (httpx.HTTPError, ValueError, AttributeError) as exc:
        return False, False, f"no answer from {host} ({type(exc).__name__})"
    if _model_listed(model, names):
        return True, True, f"answers at {host}; model {model} is available"
    return True, False, f"answers at {host}, but model {model} is not pulled (run `ollama pull {model}`)"


def _cap_check(settings: Settings, doc: SessionDoc, reserve: int = 0) -> str | None:
    """A ``"cap reached"`` reason when the caps are used up, or when a call that may cost
    up to ``reserve`` tokens would cross one; else ``None``."""
    need = f"; the next call may cost up to {reserve:,}" if reserve > 0 else ""
    used = usage.session_tokens(doc)
    cap = settings.probe.session_token_cap
    if cap > 0 and (used >= cap or used + reserve > cap):
        return f"{CAP_REASON_PREFIX}: this session used {used:,} probe tokens (cap {cap:,}){need}; using the offline probe"
    today = usage.daily_tokens(settings)
    daily = settings.probe.daily_token_cap
    if daily > 0 and (today >= daily or today + reserve > daily):
        return f"{CAP_REASON_PREFIX}: {today:,} probe tokens used today (cap {daily:,}){need}; using the offline probe"
    return None


def _forced(settings: Settings, wanted: str) -> ProbeBackend:
    if wanted == "anthropic":
        from rolling_graph.probe.anthropic_probe import AnthropicProbe

        return AnthropicProbe(settings)
    if wanted == "ollama":
        from rolling_graph.probe.ollama_probe import OllamaProbe

        return OllamaProbe(settings)
    from rolling_graph.probe.claude_probe import ClaudeProbe

    return ClaudeProbe(settings)


def choose_backend(
    settings: Settings,
    doc: SessionDoc,
    *,
    env: Mapping[str, str] | None = None,
    transport: Any | None = None,
    events: list[PendingEvent] | None = None,
) -> tuple[ProbeBackend, str]:
    """The backend for the next batch, and a one-line reason (journaled, shown by doctor).

    Given the batch (``events``), a model backend is chosen only if its call's maximum
    cost (:meth:`~rolling_graph.probe.base.ModelProbe.max_call_tokens`) fits under both caps.
    """
    backend, why = _choose(settings, doc, env=os.environ if env is None else env, transport=transport)
    if events is not None and isinstance(backend, ModelProbe):
        capped = _cap_check(settings, doc, reserve=backend.max_call_tokens(events, doc))
        if capped:
            return _offline(), capped
    return backend, why


def _choose(
    settings: Settings, doc: SessionDoc, *, env: Mapping[str, str], transport: Any | None
) -> tuple[ProbeBackend, str]:
    wanted = settings.probe.backend
    if wanted == "offline":
        return _offline(), "ROLLING_GRAPH_PROBE=offline"
    capped = _cap_check(settings, doc)
    if capped:
        return _offline(), capped
    if wanted in ("anthropic", "ollama", "claude"):
        return _forced(settings, wanted), f"ROLLING_GRAPH_PROBE={wanted}"
    if env.get("ANTHROPIC_API_KEY"):
        return _forced(settings, "anthropic"), "auto: ANTHROPIC_API_KEY is set"
    answers, has_model, detail = ollama_status(
        settings.probe.ollama_host, settings.probe.ollama_model, transport=transport
    )
    if answers and has_model:
        return _forced(settings, "ollama"), f"auto: no ANTHROPIC_API_KEY; Ollama {detail}"
    return _offline(), f"auto: no ANTHROPIC_API_KEY; Ollama {detail}; using the offline probe"


def claude_status(settings: Settings, env: Mapping[str, str] | None = None) -> tuple[bool, str]:
    """Is the Claude Code CLI there for the ``claude`` backend, and how is it turned on?"""
    path = shutil.which(settings.probe.claude_command, path=(env or os.environ).get("PATH"))
    # (no square brackets: the doctor's table reads them as markup)
    turn_on = 'ROLLING_GRAPH_PROBE=claude, or backend = "claude" in the probe section of config.toml'
    if settings.probe.backend == "claude":
        if path is None:
            return False, (
                f"selected, but `{settings.probe.claude_command}` is not on PATH; install Claude Code, "
                "or set claude_command in the probe section of config.toml"
            )
        return True, f"selected: {path}, model {settings.probe.claude_model} (spends your Claude plan)"
    if path is None:
        return True, f"not available (`{settings.probe.claude_command}` is not on PATH); optional"
    return True, f"available at {path}; off (auto never spends your Claude plan): turn it on with {turn_on}"


def anthropic_status(
    env: Mapping[str, str], *, timeout: float = ANTHROPIC_CHECK_TIMEOUT_S, transport: Any | None = None
) -> tuple[bool, str]:
    """Is the key set and accepted? One free ``GET /v1/models`` (no tokens spent)."""
    import httpx

    key = env.get("ANTHROPIC_API_KEY")
    if not key:
        return False, "ANTHROPIC_API_KEY is not set"
    base = (env.get("ANTHROPIC_BASE_URL") or ANTHROPIC_API_BASE).rstrip("/")
    headers = {"x-api-key": key, "anthropic-version": "2023-06-01"}
    try:
        with httpx.Client(timeout=timeout, transport=transport) as client:
            response = client.get(f"{base}/v1/models", params={"limit": 1}, headers=headers)
    except httpx.HTTPError as exc:
        return False, f"ANTHROPIC_API_KEY is set, but {base} is not reachable ({type(exc).__name__})"
    if response.status_code in (401, 403):
        return False, f"ANTHROPIC_API_KEY is set, but {base} refused it ({response.status_code})"
    if response.status_code >= 400:
        return False, f"ANTHROPIC_API_KEY is set; {base} answered {response.status_code}"
    return True, f"ANTHROPIC_API_KEY is set and accepted by {base}"


def probe_doctor(
    settings: Settings,
    doc: SessionDoc | None = None,
    *,
    env: Mapping[str, str] | None = None,
    transport: Any | None = None,
    check_network: bool = True,
) -> list[tuple[str, bool, str]]:
    """Rows ``(check, ok, detail)`` for ``rgraph doctor``: active backend and why, reachability, usage."""
    env = os.environ if env is None else env
    if doc is None:

        doc = new_document("doctor")  # no session: nothing spent yet
    rows: list[tuple[str, bool, str]] = []
    try:
        backend, why = choose_backend(settings, doc, env=env, transport=transport)
        name = getattr(backend, "name", type(backend).__name__)
        rows.append(("probe backend", not is_cap_reason(why), f"{name} ({why})"))
    except Exception as exc:  # doctor reports, it never crashes
        rows.append(("probe backend", False, f"cannot choose a backend: {type(exc).__name__}: {exc}"))

    model = settings.probe.anthropic_model
    if check_network:
        ok, detail = anthropic_status(env, transport=transport)
    else:
        ok, detail = (
            bool(env.get("ANTHROPIC_API_KEY")),
            "ANTHROPIC_API_KEY is " + ("set" if env.get("ANTHROPIC_API_KEY") else "not set"),
        )
    rows.append(("anthropic", ok, f"{detail}; model {model}"))

    if check_network:
        answers, has_model, detail = ollama_status(
            settings.probe.ollama_host, settings.probe.ollama_model, transport=transport
        )
        rows.append(("ollama", answers and has_model, detail))
    else:
        rows.append(("ollama", False, f"not checked ({settings.probe.ollama_host})"))
    rows.append(("claude", *claude_status(settings, env)))

    day = usage.read_day(settings)
    tokens = int(day.get("tokens_in", 0)) + int(day.get("tokens_out", 0))
    cap = settings.probe.daily_token_cap
    rows.append(
        (
            "probe usage today",
            cap <= 0 or tokens < cap,
            f"{day.get('probes', 0)} probes, {tokens:,} of {cap:,} tokens, ~${float(day.get('estimated_cost_usd', 0.0)):.4f} (estimate)",
        )
    )
    ran = _what_ran(day)
    if ran is not None:
        rows.append(ran)
    return rows


def _what_ran(day: Mapping[str, Any]) -> tuple[str, bool, str] | None:
    """What the probes actually did today, per backend (from the usage file): the hooks
    choose their backend in their own environment (Claude Code passes its variables, a
    terminal may not have them), so the backend above can differ from the one that ran."""
    by = day.get("by_backend") or {}
    parts: list[str] = []
    failures = 0
    for name, row in sorted(by.items()):
        if not isinstance(row, dict):
            continue
        answered, failed = int(row.get("probes", 0) or 0), int(row.get("failed_calls", 0) or 0)
        tokens = int(row.get("tokens_in", 0) or 0) + int(row.get("tokens_out", 0) or 0)
        failures += failed
        part = f"{name}: {answered} answered" + (f", {failed} failed and fell back" if failed else "")
        if tokens:
            part += f", {tokens:,} tokens ~${float(row.get('estimated_cost_usd', 0.0) or 0.0):.4f}"
        parts.append(part)
    if not parts:
        return None
    hint = "; `rgraph stats` lists each probe and why it fell back" if failures else ""
    return ("probes that ran today", failures == 0, "; ".join(parts) + hint)
