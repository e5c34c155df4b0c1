"""``rgraph-hook EVENT``: the process Claude Code runs for every hook event.

Contract (docs/architecture.md, "Invariants"): JSON on stdin; on stdout nothing, or a JSON object whose
``hookSpecificOutput`` carries ``hookEventName`` and ``additionalContext`` (never over
10,000 characters); exit 0. Unreadable input: one line on stderr, exit 1. Any internal
failure: logged under ``$ROLLING_GRAPH_HOME/logs/``, exit 0, no output. Never exit 2:
on UserPromptSubmit that would erase the user's prompt.

This module is on the user's critical path: it imports the standard library and our
stdlib-only modules, never a model SDK, a database driver, pydantic or typer. Probes and
reconciliation run in detached processes.
"""

from __future__ import annotations

import os
import sys

from rolling_graph.capture.payload import CompactSummary, Prompt, SessionStart, ToolResult, parse
from rolling_graph.core import jsonio
from rolling_graph.core.clock import now_iso
from rolling_graph.core.config import PROBE_CHILD_ENV, ConfigError, Settings, load_settings
from rolling_graph.core.ids import InvalidSessionId, validate_session_id
from rolling_graph.render import inject
from rolling_graph.store.sidecar import SidecarStore
from rolling_graph.warm import hook_side as warm

# The gate, the entity grammar and the renderer are imported inside the handlers that
# need them: a Stop or SessionEnd event never pays for them.

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Container
    from typing import Any

    from rolling_graph.capture.payload import Payload
    from rolling_graph.core.types import HookOutput, HookState, PendingEvent, SessionDoc
    from rolling_graph.store.sidecar import IndexPart

#: CLI event name → Claude Code's hook_event_name.
EVENTS = {
    "user-prompt-submit": "UserPromptSubmit",
    "post-tool-use": "PostToolUse",
    # A failed tool call (a test run that exits 1, an Edit that did not apply) fires this
    # instead of PostToolUse: the same tool event to us, its result being the error.
    "post-tool-use-failure": "PostToolUseFailure",
    "pre-compact": "PreCompact",
    "session-start": "SessionStart",
    "session-end": "SessionEnd",
    "stop": "Stop",
}
#: Events whose output may carry additionalContext.
CONTEXT_EVENTS = frozenset({"UserPromptSubmit", "PostToolUse", "PostToolUseFailure", "SessionStart"})
MAX_INPUT = 16 * 1024 * 1024
#: Deepest nesting of lists and objects in an input we read (Claude Code's are a few levels).
MAX_DEPTH = 200
MAX_OUTPUT = 10_000

USAGE = """usage: rgraph-hook EVENT < hook-input.json

Claude Code runs this for each hook event; EVENT is one of:
  user-prompt-submit, post-tool-use, post-tool-use-failure, pre-compact, session-start, session-end, stop
It reads the hook JSON on stdin and writes the hook JSON (or nothing) on stdout.
State lives in $ROLLING_GRAPH_HOME (default ~/.claude/rolling-graph), for every process.
"""


class BadInput(ValueError):
    """The hook input is unreadable: reported on stderr with exit 1."""


# -- small helpers -------------------------------------------------------------------------
def _output(event_name: str, text: str, system_message: str | None = None) -> HookOutput | None:
    out: HookOutput = {}
    if text and event_name in CONTEXT_EVENTS:
        out["hookSpecificOutput"] = {"hookEventName": event_name, "additionalContext": text[:MAX_OUTPUT]}
    if system_message:
        out["systemMessage"] = system_message[:500]
    return out or None


def _start_probe(store: SidecarStore, settings: Settings, sid: str, view: str | None = None) -> None:
    """Run the probe now (sync) or detached (async); coalesce with a running one. ``view``: a
    ranking preset; a detached probe then leaves the restore block's ranked view of it beside the
    graph (``PreCompact`` and ``SessionEnd`` with the warm graph off; the worker's ``finish`` does
    it otherwise), even when one runs."""
    if settings.probe.mode == "sync":
        from rolling_graph.probe.runner import run_probe

        run_probe(settings, sid)
        return
    if store.probe_running(sid) and not view:
        return  # the running probe takes our batch before it exits
    env = settings.child_env()
    from rolling_graph.core.detach import python_module, spawn_later

    spawn_later(python_module("rolling_graph.probe.runner"), ["--session", sid, *(["--view", view] if view else [])],
                os.path.join(settings.home_dir, "logs", "probe.log"), env)


def _ensure_session(store: SidecarStore, sid: str, event: Payload) -> None:
    """Create the session's graph (journaled with its project) on first sight."""
    if store.exists(sid):
        return
    with store.transaction(sid) as doc:
        _init_session(store, doc, event)


def _init_session(store: SidecarStore, doc: SessionDoc, event: Payload) -> bool:
    """Journal a new session's first entry, with its project (the git top level of the
    event's ``cwd``; ``doc`` is held in a transaction). Returns whether the session was new."""
    if doc["journal_seq"] != 0:
        return False
    from rolling_graph.store.project import project_root

    project = project_root(event.cwd)
    doc["project"] = project
    store.commit_entry(doc, {"kind": "init", "rationale": "session started", "ops": [], "reasons": [], "project": project})
    return True


def _gate_event(
    state: HookState | SessionDoc, event: ToolResult | Prompt | CompactSummary, now: str, settings: Settings, node_ids: Container[str]
) -> tuple[PendingEvent, list[str]]:
    """Count the event, turn it into a pending event, and ask the gate (``node_ids``:
    anything supporting ``in`` — the index's node map)."""
    from rolling_graph.capture import gate as gate_mod
    from rolling_graph.capture.events import pending_event

    c = state["counters"]
    c["events"] += 1
    if isinstance(event, Prompt):
        c["prompts"] += 1
    elif isinstance(event, ToolResult):
        c["tool_events"] += 1
    pending = pending_event(event, f"e{c['events']}", now)
    reasons = gate_mod.check(pending, node_ids, state["gate"], settings.gate)
    gate_mod.enqueue(pending, state["gate"], reasons)
    if reasons:
        c["gate_fired"] += 1
        by = c["gate_reasons"]
        for r in reasons:
            by[r] = by.get(r, 0) + 1
    return pending, reasons


def _cap_notice(doc: HookState, event: ToolResult | Prompt) -> str | None:
    """The one-time notice for the user, taken by a prompt only: a tool result's hook runs in the
    background, and Claude Code sends a background hook's ``systemMessage`` to the model, not the user."""
    if not isinstance(event, Prompt):
        return None
    c = doc["counters"]
    notice = c.pop("cap_notice_pending", None)
    if notice:
        c["cap_notice_given"] = True
    return notice


def _may_get_a_note(event: ToolResult | Prompt) -> bool:
    """Can this event be told a note from the project's earlier sessions? A prompt can (it may
    name a file); a tool result as :func:`rolling_graph.render.notes.may_note` says."""
    if not isinstance(event, ToolResult):
        return True
    from rolling_graph.render.notes import may_note

    return may_note(event.call.paths)


def on_prompt_or_tool(store: SidecarStore, settings: Settings, sid: str, event: ToolResult | Prompt) -> HookOutput | None:
    now = settings.clock.now_iso()
    _ensure_session(store, sid, event)
    sync = settings.probe.mode == "sync"
    part: IndexPart = "full" if isinstance(event, Prompt) else "tool"  # a tool result reads less of the index
    # What earlier sessions know (the project's snapshot file, read before the lock is taken),
    # for an event that can get a note.
    notes = warm.read_notes(settings, store.project(sid)) if settings.render.notes and _may_get_a_note(event) else None
    with store.hook_transaction(sid, index=part) as view:
        pending, reasons = _gate_event(view.state, event, now, settings, view.node_ids)
        text = "" if (reasons and sync) else inject.speak(view, event.event, pending, settings, notes)
        notice = _cap_notice(view.state, event)
    if isinstance(event, Prompt) and view.state["counters"]["prompts"] == 1:
        warm.start_pull(settings, sid, pending["text"], store.project(sid), view.node_ids)
    if reasons:
        _start_probe(store, settings, sid)
        if sync:  # the probe has run: tell the model what it found for this very event
            with store.hook_transaction(sid, index=part) as view:
                text = inject.speak(view, event.event, pending, settings, notes)
                notice = notice or _cap_notice(view.state, event)
    return _output(event.event, text, notice)


def on_session_start(store: SidecarStore, settings: Settings, sid: str, event: SessionStart) -> HookOutput | None:
    now = settings.clock.now()
    source = event.source
    if source == "compact":
        from rolling_graph.capture.compact_summary import latest_summary

        summary = latest_summary(event.transcript_path)
    else:
        summary = None
    queued = CompactSummary("CompactSummary", {"text": summary}) if summary else None
    sync = settings.probe.mode == "sync"
    if queued and sync:  # the probe runs first, so the block below already holds what it found
        _ensure_session(store, sid, event)
        with store.hook_transaction(sid) as view:
            _gate_event(view.state, queued, settings.clock.now_iso(), settings, view.node_ids)
        _start_probe(store, settings, sid)
    # One locked read of the graph serves a new session's creation, the summary's queueing,
    # the resume merge and the block (a 2,000-node graph costs ~10 ms a parse); the graph
    # file is rewritten only if the session is new or the merge added to it. A new session's
    # first entry and what it takes from the snapshot reach the journal in one write, before it.
    # After a compaction whose PreCompact work left the graph's ranked view, the block and the
    # ledger's restart read none of the graph's edges (the view holds what they need): they are
    # left unread, and read after all should the view turn out not to be of this graph.
    view_file = None
    if summary and source == "compact":
        from rolling_graph.render import view_cache

        view_file = store.files.path(sid, view_cache.SUFFIXES["compact"])
    tx = store.transaction(sid, edges=not (view_file and os.path.exists(view_file)))
    with tx as doc:
        with store.journal_group(sid):
            created = _init_session(store, doc, event)
            if queued and not sync:
                _gate_event(doc, queued, settings.clock.now_iso(), settings, doc["nodes"])
            kept = None  # a new session's block, as the snapshot's writer rendered it (warm/startup_block.py)
            if created and source in ("startup", "clear") and not doc["nodes"]:
                seed, kept = warm.read_new_session_seed(settings, doc["project"], now)
            else:
                seed = warm.read_resume_seed(settings, doc["project"]) if source in ("startup", "resume", "clear") else None
            merged = seed is not None and warm.merge_snapshot(store, doc, seed, now, source)
        tx.graph = created or merged
        if kept is not None and merged:
            text, shown = kept
            inject.restart_ledger(inject.DocView(doc), doc, shown)
        else:
            from rolling_graph.render.restore import (
                rank_preset,
                restore_context,  # the block escapes ``source`` (the payload's text) in its heading
            )

            ranked = None
            preset = rank_preset(source, summary)
            if not tx.graph and preset != "startup":  # the graph file as read (the lock is held): its ranked view may be kept beside it
                from rolling_graph.render import view_cache

                if preset in view_cache.SUFFIXES:
                    made_from = store.files.graph_signature(sid)
                    ranked = view_cache.read(store.files.path(sid, view_cache.SUFFIXES[preset]), doc, made_from, preset)
            if ranked is None:
                tx.read_edges()  # the block ranks the graph itself
            text = restore_context(inject.DocView(doc), settings, source, summary, ranked)
        if text:
            inject.count_injection(doc, text, settings)
    if summary and not sync:
        _start_probe(store, settings, sid)
    store.clean_temp(sid)  # what writers killed in an earlier sitting of this session left behind
    if settings.warm and warm.recovery_due(settings, sid):
        warm.spawn_worker(settings, ["recover", "--quick"])
    return _output("SessionStart", text)


#: The ranked view a flush leaves for the block that follows it (``render/view_cache.FOR_TRIGGER``,
#: not imported here: its module loads the ranking).
VIEW_FOR_TRIGGER = {"pre-compact": "compact", "session-end": "coding"}


def on_flush(store: SidecarStore, settings: Settings, sid: str, trigger: str) -> None:
    """PreCompact / SessionEnd: probe what is pending, then reconcile.

    Reconciliation always runs detached (SessionEnd hooks share a 1.5 s budget and are
    cancelled after it): with the warm graph on, the worker's ``finish`` probes and then
    reconciles; in ``sync`` mode the probe runs inline (for replays) and the worker only
    reconciles.
    """
    if not store.exists(sid):
        return
    if settings.probe.mode == "sync":
        _start_probe(store, settings, sid)
        warm.spawn_worker(settings, ["reconcile", "--session", sid, "--trigger", trigger])
        return
    # Detached: the state says a probe is wanted before the process that runs it starts, so
    # whoever looks (the next hook, a replay giving the compaction its time) knows it is due.
    if store.load_state(sid)["gate"]["pending"]:
        _request_probe(store, sid, trigger)
    if settings.warm:
        warm.spawn_worker(settings, ["finish", "--session", sid, "--trigger", trigger])
    else:
        _start_probe(store, settings, sid, view=VIEW_FOR_TRIGGER.get(trigger))


def _request_probe(store: SidecarStore, sid: str, reason: str) -> bool:
    """Mark the session's pending batch as wanting a probe (the caller has seen one); False
    when another process took it meanwhile."""
    with store.hook_transaction(sid, index="none") as view:
        gate = view.state["gate"]
        if not gate["pending"]:
            return False
        gate["probe_requested"] = True
        gate["pending_reasons"] = list(dict.fromkeys([*gate["pending_reasons"], reason]))
    return True


def on_stop(store: SidecarStore, settings: Settings, sid: str) -> None:
    """End of a turn: probe the batch if anything is waiting (one probe per turn at most)."""
    if not store.exists(sid):
        return
    gate = store.load_state(sid)["gate"]
    if gate["pending"] and (gate["probe_requested"] or len(gate["pending"]) >= 2) and _request_probe(store, sid, "turn_end"):
        _start_probe(store, settings, sid)


def _adopt_plugin_data(settings: Settings) -> None:
    """Move state an older version kept in ``$CLAUDE_PLUGIN_DATA`` into the one state directory."""
    data = os.environ.get("CLAUDE_PLUGIN_DATA")
    if data:
        from rolling_graph.store import adopt

        if adopt.has_state(data):
            adopt.adopt(settings.home_dir, data)


def handle_event(event: str, payload: dict[str, Any], settings: Settings | None = None) -> HookOutput | None:
    """Handle one hook event (its payload parsed once, here); returns the hook's JSON output or None."""
    if event not in EVENTS:
        raise BadInput(f"unknown event {event!r}; expected one of {', '.join(EVENTS)}")
    settings = settings or load_settings()
    parsed = parse(EVENTS[event], payload)
    sid = validate_session_id(parsed.session_id)
    store = SidecarStore(settings)
    name = parsed.event
    if isinstance(parsed, (ToolResult, Prompt)):
        return on_prompt_or_tool(store, settings, sid, parsed)
    if isinstance(parsed, SessionStart):
        _adopt_plugin_data(settings)
        return on_session_start(store, settings, sid, parsed)
    if name == "PreCompact":
        on_flush(store, settings, sid, "pre-compact")
    elif name == "SessionEnd":
        on_flush(store, settings, sid, "session-end")
    elif name == "Stop":
        on_stop(store, settings, sid)
    return None


# -- process entry ---------------------------------------------------------------------------
def parse_input(raw: bytes) -> dict[str, Any]:
    """Hook input → payload dict, or :class:`BadInput` with a one-line reason."""
    if len(raw) > MAX_INPUT:
        raise BadInput(f"hook input is larger than {MAX_INPUT // (1024 * 1024)} MiB")
    if not raw.strip():
        raise BadInput("hook input is empty; expected a JSON object on stdin")
    try:
        payload = jsonio.loads(raw)
    except (ValueError, UnicodeDecodeError) as exc:
        raise BadInput(f"hook input is not JSON ({str(exc)[:80]})") from None
    if not isinstance(payload, dict):
        raise BadInput(f"hook input is a JSON {type(payload).__name__}, expected an object")
    if raw.count(b"[") + raw.count(b"{") > MAX_DEPTH and jsonio.deeper_than(payload, MAX_DEPTH):
        raise BadInput(f"hook input is nested deeper than {MAX_DEPTH} levels")
    if b"\\ud" in raw or b"\\uD" in raw:  # a lone surrogate escape: kept as U+FFFD, never dropped
        payload = jsonio.replace_surrogates(payload)
    for key in ("session_id",):
        if not isinstance(payload.get(key), str):
            raise BadInput(f"hook input field {key!r} is missing or not a string")
    for key in ("cwd", "transcript_path", "prompt", "tool_name", "source", "hook_event_name"):
        if key in payload and payload[key] is not None and not isinstance(payload[key], str):
            raise BadInput(f"hook input field {key!r} must be a string")
    checked: dict[str, Any] = payload
    return checked


def _log_failure(event: str, reason: str | None = None) -> None:
    """Append the current exception's traceback (or ``reason``) to ``logs/hook.log``."""
    try:
        import traceback

        from rolling_graph.core.config import default_home

        logs = os.path.join(default_home(), "logs")
        os.makedirs(logs, exist_ok=True)
        path = os.path.join(logs, "hook.log")
        if os.path.exists(path) and os.path.getsize(path) > 2_000_000:
            os.replace(path, path + ".1")
        with open(path, "a", encoding="utf-8") as fh:
            fh.write(f"--- {now_iso()} rgraph-hook {event} failed\n{reason or traceback.format_exc()}\n")
    except Exception:  # noqa: S110 - the hook must stay silent even if logging fails
        pass


def entry() -> None:
    """Console-script entry: run :func:`main`, then leave without interpreter teardown.

    The process is about to end: the cyclic GC would only walk the freshly parsed graph
    (thousands of dicts) again and again, and tearing down modules and objects at exit
    costs milliseconds the user waits for. Output is flushed first; files are closed.
    """
    import gc

    from rolling_graph.core import detach

    gc.disable()
    detach.defer = True  # detached work starts after our output is written and flushed
    code = main()
    try:
        sys.stdout.flush()
        sys.stderr.flush()
        detach.run_deferred()
        codecache = sys.modules.get("rolling_graph.store.codecache")
        if codecache is not None:  # installed by rgraph-hook: add what this event imported anew
            codecache.save()
    except Exception:
        _log_failure("spawn")
    finally:
        os._exit(code)


def main(argv: list[str] | None = None) -> int:
    if PROBE_CHILD_ENV in os.environ:
        return 0  # inside our own `claude` probe's child: never recurse (exit 0, no output)
    args = sys.argv[1:] if argv is None else argv
    if args and args[0] in ("-h", "--help"):
        sys.stdout.write(USAGE)
        return 0
    if len(args) != 1 or args[0] not in EVENTS:
        sys.stderr.write(f"rgraph-hook: expected one EVENT ({', '.join(EVENTS)}), got {' '.join(args)[:60]!r}\n")
        return 1
    event = args[0]
    from rolling_graph.store import files as sidecar_files

    # The branch cache of a graph this process writes, and its read cache's shared strings: the
    # detached writers' job.
    sidecar_files.WRITE_BRANCHES = sidecar_files.SHARE_CACHE_VALUES = False
    try:
        payload = parse_input(sys.stdin.buffer.read(MAX_INPUT + 1))
        validate_session_id(payload["session_id"])
        settings = load_settings()
    except (BadInput, InvalidSessionId) as exc:
        sys.stderr.write(f"rgraph-hook: {exc}\n")
        return 1
    except ConfigError as exc:  # the session goes on without us; `rgraph doctor` shows it too
        _log_failure(event, f"configuration: {exc}")
        return 0
    except Exception:
        _log_failure(event)
        return 0
    try:
        out = handle_event(event, payload, settings)
        if out:
            sys.stdout.write(jsonio.dumps(out))
            sys.stdout.flush()
    except Exception:
        _log_failure(event)
    return 0


if __name__ == "__main__":
    entry()
