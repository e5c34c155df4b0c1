"""The first prompt's pull, when it runs: it loads neither ``httpx`` without an Ollama to ask
nor the worker's other commands, and redacts fully only what leaves the process.

The real embedded PostgreSQL throughout."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
import warm_support as ws

from rolling_graph.core.config import Settings
from rolling_graph.warm import db, embeddings, pull

dsn = ws.database("whole")
_lexical = ws.lexical_embedder
settings = ws.warm_settings
project = ws.project_in_tmp

T0 = datetime(2026, 11, 20, 9, 0, tzinfo=UTC)


def first_session(settings: Settings, project: str) -> None:
    ws.reconcile(settings, ws.hot_doc("s1", project, [ws.node("Billing proration", 0.8, at=T0), ws.node("Webhook retries", 0.6, at=T0)],
                                      [("billing-proration", "relates_to", "webhook-retries", 0.7)], at=T0, focus=["billing-proration"]))


# -- a lighter pull: what it loads and redacts --------------------------------------------------------
class Recording(embeddings.LexicalEmbedder):
    """The lexical model, recording what it is given (``local`` as the test sets it)."""

    seen: list[str]

    def embed(self, texts: Any) -> list[list[float]]:
        self.seen = [*getattr(self, "seen", []), *texts]
        return super().embed(texts)


class SentOut(Recording):
    local = False  # as if the texts went to a service (Ollama)


@pytest.mark.parametrize(("embedder", "secret_kept"), [(SentOut(), False), (Recording(), True)])
def test_the_prompt_is_fully_redacted_before_it_leaves_the_process(settings: Settings, project: str, embedder: Recording,
                                                                   secret_kept: bool) -> None:
    first_session(settings, project)
    prompt = "billing proration: db_pass: s3cr3t-P4ss"  # the hook's fast redaction leaves this one to the library
    with db.connect(settings) as conn:
        pull.pull_ops(conn, ws.hot_doc("p1", project, [], at=T0), prompt, embedder=embedder, now=T0)
    assert len(embedder.seen) == 1
    assert ("s3cr3t-P4ss" in embedder.seen[0]) is secret_kept
    assert "billing proration" in embedder.seen[0]


def test_without_ollama_listening_the_embedder_is_lexical_and_httpx_is_never_loaded(tmp_path: Path) -> None:
    import socket
    import subprocess
    import sys

    with socket.socket() as probe:  # a port nothing listens on once this closes
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    code = (
        "import sys\n"
        "from rolling_graph.core.config import Settings, ProbeSettings\n"
        "from rolling_graph.warm.embeddings import get_embedder\n"
        f"e = get_embedder(Settings(home={str(tmp_path)!r}, probe=ProbeSettings(ollama_host='http://127.0.0.1:{port}')), 'auto')\n"
        "print(type(e).__name__, 'httpx' in sys.modules)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60).stdout.split()
    assert out == ["LexicalEmbedder", "False"]


def test_the_worker_loads_a_commands_modules_only_when_it_runs_it() -> None:
    import subprocess
    import sys

    code = (
        "import sys\n"
        "from rolling_graph import worker\n"
        "print(sorted(m for m in sys.modules if m.startswith(('rolling_graph.probe', 'rolling_graph.replay', "
        "'rolling_graph.warm.reconcile', 'psycopg'))))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60).stdout.strip()
    assert out == "[]"
