"""Redact secrets and ``<private>`` text before anything is stored or leaves the machine.

Two strengths, one order (``<private>`` spans first, then secrets):

* :func:`redact` — everything: ``<private>`` spans, the project's own rules
  (:mod:`rolling_graph.safety.rules`) and the ``detect-secrets`` library
  (:mod:`rolling_graph.safety.secrets_library`: its provider patterns, keyword detector and
  entropy detectors, with ids and content hashes let through). Used by the detached
  processes on every event before a model sees it and before anything is journaled, and
  on everything written to the warm graph or embedded.
* :func:`redact_fast` — what the hook can afford on the user's critical path
  (``detect-secrets`` costs ~150 ms to import): ``<private>`` spans and the own rules.
  The hook stores prompts this way; the probe applies :func:`redact` to them again
  before any use.

:func:`redact_private` needs no ``re`` and runs in the hook on every tool result,
before the text is shortened. Redaction is best effort: it errs towards removing too
much around credentials and leaves ordinary code, paths and ids alone
(``tests/safety/``, ``bench/bench_redact.py``).
"""

from __future__ import annotations

from rolling_graph.safety.private import PRIVATE_MARK, map_strings, redact_private
from rolling_graph.safety.rules import RULES, Rule, redact_secrets, rule_names

__all__ = [
    "PRIVATE_MARK",
    "RULES",
    "Rule",
    "map_strings",
    "redact",
    "redact_fast",
    "redact_private",
    "redact_secrets",
    "rule_names",
]


def redact_fast(text: str) -> str:
    """``<private>`` spans, then the own rules: stdlib only, for the hook process."""
    return redact_secrets(redact_private(text))


def redact(text: str) -> str:
    """Everything that must happen before text is stored or leaves the machine."""
    if not text:
        return text
    from rolling_graph.safety.secrets_library import redact_with_library

    return redact_with_library(redact_fast(text))
