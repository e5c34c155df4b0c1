"""What the hook stores of a tool event is redacted there, at no ``re`` for ordinary results.

Issue 17 ("applied to everything stored in the sidecar"): a tool result waits in the
session's state file until the probe takes it, so the hook redacts it (and the paths, the
``cwd`` and the transcript path) before storing it. A plain-string cue
(:mod:`rolling_graph.safety.cues`) decides whether the own rules could match at all; these
tests check that it never says no where a rule would change the text (on the generated
secret corpus, the known non-secrets and, when present, the real sessions), that it rarely
says yes on real tool results, and the result through the real hook.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from conftest import run_hook, tool_payload

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "fixtures"))

from make_secret_corpus import build_non_secrets, build_secrets  # noqa: E402

from rolling_graph.safety.cues import TIGHTER, may_hold_secret, scrub  # noqa: E402
from rolling_graph.safety.rules import redact_secrets, rule_names  # noqa: E402

CORPUS = Path("/work/shared/corpus")
SID = "cue-1"


def _corpus_tool_texts() -> Iterator[str]:
    """Every string the hook stores of each real tool event (text, data, paths, cwd)."""
    from rolling_graph.capture.tools import parse_tool
    from rolling_graph.replay.transcript import parse_transcripts

    def strings(value: object) -> Iterator[str]:
        if isinstance(value, str):
            yield value
        elif isinstance(value, list):
            for v in value:
                yield from strings(v)
        elif isinstance(value, dict):
            for v in value.values():
                yield from strings(v)

    for event in parse_transcripts(sorted(CORPUS.glob("*.jsonl"))):
        if event.hook_event_name not in ("PostToolUse", "PostToolUseFailure"):
            continue
        p = event.payload
        tool = str(p.get("tool_name") or "tool")
        call = parse_tool(tool, p.get("tool_input"), p.get("tool_response"))
        text, _ = call.text()
        yield "\n".join([text, *strings(call.data()),
                         *strings(p.get("tool_input")), str(p.get("cwd") or ""), str(p.get("transcript_path") or "")])


def test_every_tighter_cue_names_a_rule() -> None:
    assert set(TIGHTER) - set(rule_names()) == set()


def test_no_cue_means_no_rule_would_change_the_text() -> None:
    """The cue is a necessary condition: whatever a rule changes is cued (never a miss)."""
    lines = [s["line"] for s in build_secrets()] + [s["line"] for s in build_non_secrets()]
    lines += [f"x = 1\n{line}\ny = 2" for line in lines[:50]]  # inside a longer text too
    changed = [line for line in lines if redact_secrets(line) != line]
    assert len(changed) > 100  # the rules catch most of the corpus: the check has teeth
    missed = [line for line in changed if not may_hold_secret(line)]
    assert missed == []
    for line in changed:
        assert scrub(line) == redact_secrets(line)


@pytest.mark.skipif(not CORPUS.is_dir(), reason="the shared corpus is absent")
def test_real_tool_results_rarely_need_the_rules_and_none_is_missed() -> None:
    texts = list(_corpus_tool_texts())
    assert len(texts) > 100
    cued = [t for t in texts if may_hold_secret(t)]
    assert [t[:200] for t in texts if redact_secrets(t) != t and not may_hold_secret(t)] == []
    assert len(cued) / len(texts) < 0.03, f"{len(cued)} of {len(texts)} real tool results cued"


def test_ordinary_code_with_credential_words_is_not_cued() -> None:
    code = [
        "def refresh_token(self, token: str) -> str:\n    return self.client.token",
        "    api_key = os.environ['API_KEY']\n    password = getpass()",
        'tokens = tokenize(text)\nconfig = {"max_tokens": 800, "key": "value"}',
        "git clone https://github.com/org/repo.git && ls src/",
        "task-list: see disk-usage; mock_test_helper(); items.sort()",
        "/home/dev/app/lib/very/long/path/to/some/module_name.with.dots/and_more_segments_here.ex",
    ]
    assert [c for c in code if may_hold_secret(c)] == []


def _state_text() -> str:
    home = Path(os.environ["ROLLING_GRAPH_HOME"])
    return "\n".join(p.read_text(errors="replace") for p in (home / "sessions").glob("*.state.json"))


def test_a_tool_result_its_paths_cwd_and_transcript_path_are_stored_redacted(tmp_path: Path) -> None:
    """A Bash result with credentials in it and a working directory and transcript path
    holding a ``<private>`` span: none reaches the state file, where the event waits for the
    probe (the hook fires no probe for it: nothing to probe yet)."""
    token = "ghp_" + "Zq8Wm2Nc5Rt7Yb1Kd4Hs6Jf9Lp3Gx0Vu2Ae"
    aws = "AKIA" + "J7QX2M9WZ4R6T3YB"
    password = "Tr0ub4dor-and-3-horses"
    private = "orchid-zebra-4412"
    stdout = f"export GITHUB_TOKEN={token}\nAWS_ACCESS_KEY_ID={aws}\ndb_password = \"{password}\"\nok"
    payload = tool_payload(SID, "Bash", {"command": f"cat .env && echo {aws}"}, {"stdout": stdout, "stderr": ""},
                           cwd=f"/home/dev/<private>{private}</private>/app")
    payload["transcript_path"] = f"/tmp/<private>{private}</private>/{SID}.jsonl"
    proc = run_hook("post-tool-use", payload)
    assert proc.returncode == 0 and not proc.stderr, proc.stderr
    stored = _state_text()
    pending = json.loads(stored)["gate"]["pending"]
    assert pending, "the event is stored, waiting for the probe"
    for secret in (token, token[4:20], aws, password, private):
        assert secret not in stored, secret
    assert "[REDACTED:github-token]" in stored and "[REDACTED:private]" in stored
