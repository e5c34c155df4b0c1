"""Honest replay: each hook reads a transcript that holds only what was written before it.

Claude Code appends to a session's transcript as the session goes; a hook reading
``transcript_path`` sees the lines written so far, never the ones after its event.
:class:`TranscriptMirror` replays recorded transcripts into growing files, one per session
(a resumed session's later sittings append to the same file, as Claude Code 2.x does):
before each hook runs, it appends the recorded lines up to :attr:`HookEvent.written
<rolling_graph.replay.transcript.HookEvent.written>` and hands the hook the mirror's path.

``project`` (``rgraph replay --project PATH``): recorded sessions ran in directories that
do not exist here. With a project, every event's ``cwd`` is that path, and the session's
recorded directory (its first ``cwd``) is rewritten to it wherever it starts a path — in
prompts, tool inputs and results, and in the mirrored transcript — so paths the session
touched lie under the project as they did under the original directory.

Stdlib only.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import IO, Any

from rolling_graph.replay.transcript import HookEvent

#: Characters kept in a mirror's file name (session ids are plain; anything else is replaced).
_NAME_OK = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_.")


def _file_name(session_id: str) -> str:
    name = "".join(ch if ch in _NAME_OK else "-" for ch in session_id)[:100].strip(".")
    return f"{name or 'session'}.jsonl"


def rebase(value: Any, old: str, new: str) -> Any:
    """``value`` with the directory ``old`` replaced by ``new`` where it starts a path."""
    if isinstance(value, str):
        if value == old:
            return new
        return value.replace(old + "/", new + "/") if old + "/" in value else value
    if isinstance(value, dict):
        return {k: rebase(v, old, new) for k, v in value.items()}
    if isinstance(value, list):
        return [rebase(v, old, new) for v in value]
    return value


class TranscriptMirror:
    """Growing copies of recorded transcripts, advanced event by event (see the module doc)."""

    def __init__(self, directory: Path, project: str | None = None) -> None:
        self.directory = directory
        self.project = os.path.abspath(os.path.expanduser(project)) if project else None
        self._sources: dict[str, tuple[IO[bytes], int]] = {}  # source file → (reader, lines copied)
        self._sinks: dict[str, IO[bytes]] = {}  # session id → mirror file
        self._roots: dict[str, str] = {}  # session id → recorded directory (first cwd)

    def path(self, session_id: str) -> Path:
        return self.directory / _file_name(session_id)

    def advance(self, event: HookEvent) -> dict[str, Any]:
        """Write what Claude Code had written before ``event``; return the payload to send."""
        sid = str(event.payload["session_id"])
        root = self._roots.setdefault(sid, str(event.payload.get("cwd") or "/").rstrip("/") or "/")
        self._copy(sid, event.source_file, event.written, root)
        payload = dict(event.payload)
        payload["transcript_path"] = str(self.path(sid))
        if self.project is not None:
            payload = rebase(payload, root, self.project) if root != "/" else payload
            payload["cwd"] = self.project
        return payload

    def _copy(self, sid: str, source: str, upto: int, root: str) -> None:
        reader, done = self._sources.get(source) or (open(source, "rb"), 0)  # noqa: SIM115 - kept open across events
        if upto <= done:
            self._sources[source] = (reader, done)
            return
        sink = self._sinks.get(sid)
        if sink is None:
            self.directory.mkdir(parents=True, exist_ok=True)
            # A fresh file per replay run: replaying again into the same state directory
            # must not leave the earlier run's lines in front of this one's.
            sink = self._sinks[sid] = open(self.path(sid), "wb")  # noqa: SIM115 - kept open across events
        rewrite = self.project is not None and root != "/"
        pairs = [(f"{root}/".encode(), f"{self.project}/".encode()), (f'"{root}"'.encode(), f'"{self.project}"'.encode())]
        while done < upto:
            line = reader.readline()
            if not line:
                break
            done += 1
            if not line.endswith(b"\n"):
                line += b"\n"  # a later sitting's lines must not join this one
            if rewrite:
                for before, after in pairs:
                    line = line.replace(before, after)
            sink.write(line)
        sink.flush()
        self._sources[source] = (reader, done)

    def close(self) -> None:
        for reader, _ in self._sources.values():
            reader.close()
        for sink in self._sinks.values():
            sink.close()
        self._sources.clear()
        self._sinks.clear()

    def __enter__(self) -> TranscriptMirror:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
