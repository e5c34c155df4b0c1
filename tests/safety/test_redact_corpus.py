"""Redaction against a secret corpus built from published token formats, and against ids
and hashes that entropy detectors mistake for secrets (``fixtures/make_secret_corpus.py``).

``bench/bench_redact.py`` prints the same numbers, with speed and the real sessions.
"""

from __future__ import annotations

import sys
from collections import Counter
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "fixtures"))

from make_secret_corpus import build_non_secrets, build_secrets, survives  # noqa: E402

from rolling_graph.safety.redact import redact, redact_fast  # noqa: E402
from rolling_graph.safety.secrets_library import available, redact_with_library  # noqa: E402

SAMPLES = build_secrets()
NON_SECRETS = build_non_secrets()


def _recall(fn: object, samples: list[dict[str, str]]) -> tuple[float, list[dict[str, str]]]:
    missed = [s for s in samples if survives(s["secret"], fn(s["line"]))]  # type: ignore[operator]
    return 1 - len(missed) / len(samples), missed


def test_the_corpus_covers_the_published_formats() -> None:
    kinds = Counter(s["kind"] for s in SAMPLES)
    assert len(SAMPLES) >= 200 and len(kinds) >= 35
    for kind in ("aws-secret-access-key", "github-token", "gitlab-token", "slack-token", "stripe-key", "discord-bot-token",
                 "jwt", "npm-token", "vault-token", "huggingface-token", "mailgun-key", "twilio-key", "sendgrid-key",
                 "google-api-key", "openai-key", "anthropic-key", "private-key", "generic-assignment", "url-password"):
        assert kinds[kind] >= 2, kind
    assert all(s["source"] for s in SAMPLES)


def test_the_corpus_is_deterministic_and_seeded() -> None:
    assert build_secrets() == SAMPLES
    assert build_secrets(seed=1) != SAMPLES


def test_full_redaction_catches_at_least_95_percent_of_the_corpus() -> None:
    recall, missed = _recall(redact, SAMPLES)
    assert recall >= 0.95, [m["line"][:80] for m in missed]


def test_recall_holds_on_other_seeds() -> None:
    for seed in (7, 2026):
        recall, missed = _recall(redact, build_secrets(seed))
        assert recall >= 0.95, (seed, [m["line"][:80] for m in missed])


def test_the_hooks_fast_redaction_catches_most_of_the_corpus_on_its_own() -> None:
    """What the hook stores for a prompt before the probe completes the job."""
    recall, _ = _recall(redact_fast, SAMPLES)
    assert recall >= 0.9


def test_the_library_is_installed_and_finds_secrets_on_its_own() -> None:
    assert available()
    recall, _ = _recall(redact_with_library, SAMPLES)
    assert recall >= 0.5  # measured 0.62: its provider patterns, keyword and entropy detectors


@pytest.mark.parametrize("fn", [redact, redact_fast, redact_with_library], ids=["redact", "fast", "library"])
def test_known_non_secrets_are_never_masked(fn: object) -> None:
    changed = [n for n in NON_SECRETS if fn(n["line"]) != n["line"]]  # type: ignore[operator]
    assert changed == [], [(n["kind"], n["line"][:80]) for n in changed]


def test_the_non_secrets_cover_what_entropy_detectors_flag() -> None:
    kinds = Counter(n["kind"] for n in NON_SECRETS)
    for kind in ("git-sha", "uuid-id", "file-path", "test-name", "lockfile-hash"):
        assert kinds[kind] >= 20, kind


def test_an_id_shaped_value_under_a_secret_key_is_still_masked() -> None:
    """A legacy npm token is a UUID, a GitHub classic token can be 40 hex: the key decides."""
    uuid = "3f2b8c1e-9d4a-4e6f-8b7c-2a1d0e9f8c7b"
    hex40 = "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b"
    assert uuid not in redact(f"//registry.npmjs.org/:_authToken={uuid}")
    assert hex40 not in redact(f'"auth_token": "{hex40}"')
    assert hex40 in redact(f"commit {hex40}") and uuid in redact(f'{{"sessionId": "{uuid}"}}')
