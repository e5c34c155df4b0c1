"""Replay recorded sessions of one project one after another into one warm graph.

What happens in real life between two sessions of a project: the first session's hooks run
(here an honest in-process replay, :func:`rolling_graph.replay.run.replay`), its ``SessionEnd``
reconciles the hot graph into the warm graph, which rewrites the project's resume snapshot;
the next session's ``SessionStart(startup)`` reads that snapshot. :func:`replay_chain` does
exactly that, in the sessions' time order, with the reconcile in-process (the hooks'
detached worker would do the same work) at the clock of the session's last event.

The hooks run with the warm graph *off*: no detached workers and no prompt-time pull, so the
chain is deterministic and each ``SessionStart`` block comes from the snapshot alone.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from rolling_graph.core.config import Settings
from rolling_graph.replay.run import ReplayOptions, ReplayResult, replay
from rolling_graph.replay.transcript import HookEvent, parse_transcripts
from rolling_graph.warm import db, embeddings
from rolling_graph.warm.reconcile import ReconcileResult, reconcile_doc

if TYPE_CHECKING:
    from rolling_graph.core.types import SessionDoc


@dataclass(frozen=True)
class Recorded:
    """One recorded session: its transcript, its hook events and when it started."""

    path: Path
    events: tuple[HookEvent, ...]

    @property
    def session_id(self) -> str:
        return str(self.events[0].payload["session_id"]) if self.events else self.path.stem

    @property
    def started(self) -> str:
        return next((e.timestamp for e in self.events if e.timestamp), "")

    @property
    def ended(self) -> str | None:
        return next((e.timestamp for e in reversed(self.events) if e.timestamp), None)


@dataclass(frozen=True)
class ChainStep:
    """One session of the chain, replayed and reconciled."""

    recorded: Recorded
    replay: ReplayResult
    reconciled: tuple[ReconcileResult, ...]

    def doc(self) -> SessionDoc | None:
        return self.replay.final_docs.get(self.recorded.session_id)


def in_time_order(paths: Sequence[str | Path]) -> list[Recorded]:
    """The transcripts parsed (one session each), earliest first."""
    recorded = [Recorded(Path(p), tuple(parse_transcripts([Path(p)]))) for p in paths]
    return sorted(recorded, key=lambda r: (r.started, str(r.path)))


def replay_chain(
    sessions: Sequence[Recorded],
    settings: Settings,
    options: ReplayOptions,
    *,
    embedder: embeddings.Embedder | None = None,
    on_step: Callable[[ChainStep], None] | None = None,
) -> list[ChainStep]:
    """Replay ``sessions`` in the given order into ``settings.home``, reconciling each into the
    warm graph of ``settings`` (its DSN) before the next one starts."""
    if options.warm:
        raise ValueError("replay_chain reconciles itself: replay with warm=False")
    embedder = embedder or embeddings.LexicalEmbedder()
    steps: list[ChainStep] = []
    for rec in sessions:
        result = replay([rec.path], options=options, home=settings.home)
        at = settings.at(rec.ended) if rec.ended else settings
        done = []
        with db.connect(at) as conn:
            for doc in result.final_docs.values():
                done.append(reconcile_doc(conn, at, doc, "session-end", embedder=embedder))
        step = ChainStep(rec, result, tuple(done))
        steps.append(step)
        if on_step is not None:
            on_step(step)
    return steps
