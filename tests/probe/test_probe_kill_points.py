"""A probe killed at any write applies each event at most once, and loses none.

Issue 17, item 1. A kill between the probe's journal append and its state write left the
batch in flight, and the next probe applied it again: with "Actually, use Pulsar instead of
Kafka. Let's go with Pulsar." that made ``use-pulsar-instead-of-kafka|supersedes|use-pulsar``.

The kill is injected from here, around the write functions themselves (the state, graph,
cache and index files, the journal, the usage file): before or after each write of a probe
cycle in turn, in process (a ``BaseException`` nothing in the code catches) and, for the
decisive points, as a real process death (``os._exit`` in a subprocess). After each kill the
next probes run normally, and the journal and graph must be as if nothing had happened.
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from conftest import prompt_payload, tool_payload

from rolling_graph import hook
from rolling_graph.core.config import Settings, load_settings
from rolling_graph.core.types import JournalEntry
from rolling_graph.probe import runner
from rolling_graph.probe.base import ProbeResult
from rolling_graph.probe.offline import OfflineProbe
from rolling_graph.store.journal import read_journal
from rolling_graph.store.sidecar import SidecarStore

KAFKA = "Let's use Kafka for events."
PULSAR = "Actually, use Pulsar instead of Kafka. Let's go with Pulsar."


class Killed(BaseException):
    """The process dies here (nothing in the code under test catches a BaseException)."""


#: Every function that writes a file in a probe cycle: (module, attribute).
WRITES = [
    ("rolling_graph.store.files", "write_atomic"),  # state, graph, read cache, hook index
    ("rolling_graph.store.journal", "append_many"),  # the journal (append() goes through it)
    ("rolling_graph.probe.usage", "record"),  # the day's usage file (model backends)
]


class Faults:
    """Wraps the write functions; ``kill_at`` (1-based call number) and ``when`` pick the kill."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.calls: list[str] = []
        self.kill_at = 0
        self.when = "before"
        for module, name in WRITES:
            real = getattr(sys.modules[module] if module in sys.modules else __import__(module, fromlist=[name]), name)
            monkeypatch.setattr(f"{module}.{name}", self._wrap(f"{module.rsplit('.', 1)[1]}.{name}", real))

    def _wrap(self, label: str, real: Callable[..., Any]) -> Callable[..., Any]:
        def write(*args: Any, **kwargs: Any) -> Any:
            self.calls.append(label)
            due = len(self.calls) == self.kill_at
            if due and self.when == "before":
                raise Killed(label)
            out = real(*args, **kwargs)
            if due:
                raise Killed(label)
            return out

        return write

    def arm(self, kill_at: int, when: str) -> None:
        self.calls, self.kill_at, self.when = [], kill_at, when

    def disarm(self) -> None:
        self.kill_at = 0


def queue_session(settings: Settings, sid: str, monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Kafka decided and probed; then Pulsar and two edits queued, not yet probed. Returns
    the queued event ids."""
    hook.handle_event("user-prompt-submit", prompt_payload(sid, KAFKA), settings)
    with monkeypatch.context() as m:
        m.setattr(hook, "_start_probe", lambda *a: None)
        hook.handle_event("user-prompt-submit", prompt_payload(sid, PULSAR), settings)
        for path in ("src/events/producer.py", "src/events/consumer.py"):
            edit = {"file_path": f"/home/dev/app/{path}", "old_string": "kafka", "new_string": "pulsar"}
            hook.handle_event("post-tool-use", tool_payload(sid, "Edit", edit, {"filePath": path}), settings)
    pending = SidecarStore(settings).load_state(sid)["gate"]["pending"]
    assert len(pending) == 3
    return [e["id"] for e in pending]


def probe_until_idle(settings: Settings, sid: str) -> None:
    store = SidecarStore(settings)
    for _ in range(6):
        runner.run_probe(settings, sid)
        gate = store.load_state(sid)["gate"]
        if not gate["pending"] and not gate.get("inflight"):
            return
    raise AssertionError(f"still queued: {gate}")


def batches(settings: Settings, sid: str) -> dict[str, list[JournalEntry]]:
    """Event id → the probe answers (not the tool folds that follow a model's patch) that
    carry it."""
    out: dict[str, list[JournalEntry]] = {}
    for entry in read_journal(SidecarStore(settings).journal_path(sid)):
        if entry.get("kind") == "patch" and not str(entry.get("rationale", "")).startswith("tool events folded"):
            for eid in entry.get("event_ids") or []:
                out.setdefault(eid, []).append(entry)
    return out


def assert_applied_once(settings: Settings, sid: str, queued: list[str], reference: dict[str, Any]) -> None:
    applied = batches(settings, sid)
    for eid in ["e1", *queued]:
        assert len(applied.get(eid, [])) == 1, f"{eid} applied {len(applied.get(eid, []))} times"
    doc = SidecarStore(settings).load(sid)
    supersedes = sorted(k for k in doc["edges"] if "|supersedes|" in k)
    assert "use-pulsar-instead-of-kafka|supersedes|use-pulsar" not in doc["edges"]
    assert supersedes == reference["supersedes"]
    assert set(doc["nodes"]) == reference["nodes"] and set(doc["edges"]) == reference["edges"]
    assert doc["gate"]["pending"] == [] and doc["gate"].get("inflight", []) == []


class ModelLike:
    """A model backend that answers as the offline probe would, under another name: the
    runner then folds tool events in a second entry and records usage (more write points)."""

    name = "anthropic"

    def run(self, events: list[Any], doc: Any) -> ProbeResult:
        answer = OfflineProbe().run(events, doc)
        return ProbeResult(backend="anthropic", rationale=answer.rationale, patch=answer.patch, model="claude-haiku-4-5",
                           input_tokens=1200, output_tokens=150)


@pytest.fixture(params=["offline", "model"])
def backend(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    if request.param == "model":
        monkeypatch.setattr(runner, "_choose", lambda settings, doc, batch: (ModelLike(), "test model"))
    yield request.param


def reference_run(settings: Settings, monkeypatch: pytest.MonkeyPatch, faults: Faults) -> tuple[dict[str, Any], int]:
    """The same session probed without a kill: the graph to compare with, and how many
    writes one probe cycle makes."""
    queued = queue_session(settings, "reference", monkeypatch)
    faults.arm(0, "before")
    probe_until_idle(settings, "reference")
    writes = len(faults.calls)
    doc = SidecarStore(settings).load("reference")
    ref = {"nodes": set(doc["nodes"]), "edges": set(doc["edges"]), "supersedes": sorted(k for k in doc["edges"] if "|supersedes|" in k)}
    assert ref["supersedes"] == ["use-pulsar-instead-of-kafka|supersedes|use-kafka-for-events"]
    assert all(len(batches(settings, "reference")[e]) == 1 for e in queued)
    return ref, writes


def test_a_probe_killed_at_any_write_applies_each_event_exactly_once(backend: str, monkeypatch: pytest.MonkeyPatch) -> None:
    settings = load_settings()
    faults = Faults(monkeypatch)
    reference, writes = reference_run(settings, monkeypatch, faults)
    assert writes >= (8 if backend == "offline" else 9)  # take, assistant text, journal, state, graph, cache, index (, usage)
    for k in range(1, writes + 1):
        for when in ("before", "after"):
            sid = f"kill-{k}-{when}"
            faults.disarm()
            queued = queue_session(settings, sid, monkeypatch)
            faults.arm(k, when)
            with pytest.raises(Killed):
                runner.run_probe(settings, sid)
            faults.disarm()
            probe_until_idle(settings, sid)
            assert_applied_once(settings, sid, queued, reference)


def test_an_exception_between_the_journal_and_the_state_applies_the_batch_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """Disk full while saving the state, after the journal took the batch (an ordinary
    exception, which the detached runner logs): the batch is not applied again."""
    settings = load_settings()
    queued = queue_session(settings, "full", monkeypatch)
    real = runner.SidecarStore._save_locked

    def disk_full(self: SidecarStore, sid: str, state: Any, graph: Any = None) -> None:
        if graph is not None:
            raise OSError(28, "No space left on device")
        real(self, sid, state, graph)

    with monkeypatch.context() as m:
        m.setattr(runner.SidecarStore, "_save_locked", disk_full)
        with pytest.raises(OSError):
            runner.run_probe(settings, "full")
    probe_until_idle(settings, "full")
    applied = batches(settings, "full")
    assert all(len(applied[e]) == 1 for e in queued)
    assert "use-pulsar-instead-of-kafka|supersedes|use-pulsar" not in SidecarStore(settings).load("full")["edges"]


# --- a real process death -------------------------------------------------------------------

DRIVER = textwrap.dedent(
    """
    import os, sys
    from rolling_graph.store import files as sidecar_files, journal
    from rolling_graph.core.config import load_settings
    from rolling_graph.probe import runner

    target, when, nth, sid = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
    module, name = (journal, "append_many") if target == "journal" else (sidecar_files, "write_atomic")
    real = getattr(module, name)
    seen = []

    def write(*args, **kwargs):
        mine = target == "journal" or str(args[0]).endswith(".state.json")
        if mine:
            seen.append(args[0])
        if mine and len(seen) == nth and when == "before":
            os._exit(9)
        out = real(*args, **kwargs)
        if mine and len(seen) == nth:
            os._exit(9)
        return out

    setattr(module, name, write)
    runner.run_probe(load_settings(), sid)
    """
)


@pytest.mark.parametrize(
    ("target", "when", "nth", "in_flight"),
    [
        ("journal", "after", 1, True),  # the case of the issue: journaled, the state still says in flight
        ("journal", "before", 1, True),
        ("state", "before", 3, True),  # the state write that clears the batch (after take and transcript)
        ("state", "after", 3, False),  # the state cleared, the graph file not written: rolled forward
    ],
)
def test_a_probe_process_that_dies_mid_cycle_applies_each_event_exactly_once(
    target: str, when: str, nth: int, in_flight: bool, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    settings = load_settings()
    faults = Faults(monkeypatch)
    reference, _ = reference_run(settings, monkeypatch, faults)
    faults.disarm()
    sid = f"die-{target}-{when}"
    queued = queue_session(settings, sid, monkeypatch)
    script = tmp_path / "driver.py"
    script.write_text(DRIVER)
    proc = subprocess.run([sys.executable, str(script), target, when, str(nth), sid], env=dict(os.environ), capture_output=True, timeout=120)
    assert proc.returncode == 9, proc.stderr.decode()[-2000:]
    assert bool(SidecarStore(settings).load_state(sid)["gate"].get("inflight")) is in_flight
    probe_until_idle(settings, sid)
    assert_applied_once(settings, sid, queued, reference)
