"""The warm graph's detached worker, installed as the ``rgraph-worker`` command (the hooks
start it by that name: ``rolling_graph.warm.hook_side``)::

    rgraph-worker reconcile --session ID --trigger pre-compact|session-end|manual|recover
    rgraph-worker finish --session ID --trigger pre-compact|session-end
    rgraph-worker pull --session ID --prompt-file PATH [--keep-prompt-file]
    rgraph-worker recover [--quick]

``finish`` is what PreCompact and SessionEnd start: probe what the session has pending
(the hot graph's :func:`rolling_graph.probe.runner.drain`), leave the final graph's ranked
view for the block after the compaction, or at SessionEnd for a resumed session's
(:mod:`rolling_graph.render.view_cache`), then reconcile. Also runs as
``python -m rolling_graph.worker``. Prints one JSON line per run (the spawner
points stdout at a log file). Exit 0 when the work is done *or* safely queued because the
database is down; 1 on other failures.
"""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import asdict
from pathlib import Path
from typing import TYPE_CHECKING

from rolling_graph.core.config import load_settings
from rolling_graph.core.detach import lower_priority
from rolling_graph.core.ids import InvalidSessionId, validate_session_id

if TYPE_CHECKING:
    from rolling_graph.core.config import Settings

# Each command imports what it runs, inside it: the first prompt's ``pull`` runs beside the
# user's session and never loads the probe, the recovery queue or the reconcile's merge.

TRIGGERS = ["pre-compact", "session-end", "manual", "recover"]


def _emit(payload: dict[str, object]) -> None:
    print(json.dumps(payload, default=str), flush=True)


def cmd_reconcile(settings: Settings, session_id: str, trigger: str) -> int:
    from rolling_graph.replay import recover
    from rolling_graph.warm import db
    from rolling_graph.warm.reconcile import MissingProject, load_sidecar, reconcile_session

    doc = load_sidecar(settings, session_id)
    if doc is None:
        _emit({"op": "reconcile", "session": session_id, "error": "no sidecar"})
        return 1
    try:
        result = reconcile_session(settings, session_id, trigger, doc=doc)
    except MissingProject as exc:
        _emit({"op": "reconcile", "session": session_id, "error": str(exc)})
        return 1
    except db.DatabaseUnavailable as exc:
        path = recover.enqueue(settings, session_id, trigger, doc, str(exc))
        _emit({"op": "reconcile", "session": session_id, "queued": str(path), "reason": str(exc)})
        return 0
    _emit({"op": "reconcile", **result.as_dict()})
    return 0


def cmd_finish(settings: Settings, session_id: str, trigger: str) -> int:
    """A flush: the session's pending events are probed first, so the warm graph gets the
    final hot graph."""
    from rolling_graph.probe.runner import drain

    probes = drain(settings, session_id)
    _emit({"op": "probe", "session": session_id, "probes": probes})
    from rolling_graph.render import view_cache

    preset = view_cache.FOR_TRIGGER.get(trigger)
    if preset:  # the SessionStart after the compaction (or a resume) takes the final graph's ranked view
        from rolling_graph.store.sidecar import SidecarStore

        view_cache.refresh(SidecarStore(settings).files, session_id, preset)
    return cmd_reconcile(settings, session_id, trigger)


def cmd_pull(settings: Settings, session_id: str, prompt_file: Path, keep: bool) -> int:
    from rolling_graph.warm import db
    from rolling_graph.warm.pull import run_pull

    try:
        prompt = prompt_file.read_text(encoding="utf-8", errors="replace")
    except OSError as exc:
        _emit({"op": "pull", "session": session_id, "error": f"cannot read prompt file: {exc}"})
        return 1
    finally:
        if not keep:
            prompt_file.unlink(missing_ok=True)
    try:
        added = run_pull(settings, session_id, prompt)
    except db.DatabaseUnavailable as exc:  # a pull is best effort: nothing to queue
        _emit({"op": "pull", "session": session_id, "skipped": str(exc)})
        return 0
    _emit({"op": "pull", "session": session_id, "added": added})
    return 0


def cmd_recover(settings: Settings, quick: bool) -> int:
    from rolling_graph.replay import recover

    report = recover.recover(settings, quick=quick)
    _emit({"op": "recover", **asdict(report)})
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="rgraph-worker")
    sub = parser.add_subparsers(dest="command", required=True)
    rec = sub.add_parser("reconcile")
    rec.add_argument("--session", required=True)
    rec.add_argument("--trigger", default="manual", choices=TRIGGERS)
    fin = sub.add_parser("finish")
    fin.add_argument("--session", required=True)
    fin.add_argument("--trigger", required=True, choices=TRIGGERS)
    pull = sub.add_parser("pull")
    pull.add_argument("--session", required=True)
    pull.add_argument("--prompt-file", required=True, type=Path)
    pull.add_argument("--keep-prompt-file", action="store_true")
    recov = sub.add_parser("recover")
    recov.add_argument("--quick", action="store_true")
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    if argv is None:  # run as a detached process: yield the CPU to the user's session
        lower_priority()
    settings = load_settings()
    if getattr(args, "session", None):
        try:
            validate_session_id(args.session)
        except InvalidSessionId as exc:
            _emit({"op": args.command, "error": str(exc)})
            return 1
    if args.command == "reconcile":
        return cmd_reconcile(settings, args.session, args.trigger)
    if args.command == "finish":
        return cmd_finish(settings, args.session, args.trigger)
    if args.command == "pull":
        return cmd_pull(settings, args.session, args.prompt_file, args.keep_prompt_file)
    return cmd_recover(settings, args.quick)


if __name__ == "__main__":
    sys.exit(main())
