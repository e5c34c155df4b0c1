#!/usr/bin/env python3
"""Redaction: recall on a secret corpus, false positives on ids and real sessions, speed.

    python bench/bench_redact.py [--seed N] [--corpus DIR] [--misses]

1. The generated secret corpus (``fixtures/make_secret_corpus.py``: published token
   formats, random bodies, realistic lines): recall of the hook's fast redaction (own
   rules), of the ``detect-secrets`` pass alone, and of the full :func:`redact`; a secret
   counts as caught when no 8-character run of it (all of it, if shorter) survives.
   Target: full recall ≥ 0.95.
2. Known non-secrets (git SHAs, UUID session ids, file paths, test names, lockfile
   hashes, code that names credentials): lines changed (target: 0).
3. Real sessions, ``/work/shared/corpus/*.jsonl`` (skipped when absent): every prompt,
   tool input and tool result text, redacted by :func:`redact`; file paths and test names
   masked (target: none) and the share of code names masked (target: < 1 %), with names
   as defined in that corpus's README.
4. Speed: CPU ms per 1,000 lines for each, on the generated corpus and on the real sessions.

Not part of CI; ``tests/safety/test_redact_corpus.py`` asserts the targets of 1 and 2.
"""

from __future__ import annotations

import argparse
import re
import sys
import time
from collections import Counter
from collections.abc import Callable, Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "fixtures"))

from make_secret_corpus import build_non_secrets, build_secrets, survives  # noqa: E402

from rolling_graph.safety.redact import redact, redact_fast  # noqa: E402
from rolling_graph.safety.secrets_library import redact_with_library  # noqa: E402

SHARED_CORPUS = Path("/work/shared/corpus")

_SOURCE_EXT = (
    "py|pyi|ex|exs|heex|eex|leex|erl|js|mjs|cjs|ts|tsx|jsx|vue|svelte|css|scss|html|md|json|jsonl|yml|yaml|toml|"
    "ini|cfg|lock|sh|bash|zsh|rb|go|rs|java|kt|c|h|cc|cpp|hpp|cs|swift|sql|txt|xml|gradle|mk|dockerfile"
)
PATH_RE = re.compile(rf"(?:[~.]{{0,2}}/)?(?:[\w.@+\-]+/)*[\w.@+\-]+\.(?:{_SOURCE_EXT})\b", re.IGNORECASE)
CODE_NAME_RE = re.compile(r"[A-Za-z_][A-Za-z0-9_.]{3,59}")
TEST_NAME_RE = re.compile(r"\btest_\w{2,}|\b\w{2,}_test\b|\btest \"[^\"\n]{3,80}\"")


def is_code_name(token: str) -> bool:
    """The corpus README's code names: 4–60 chars with ``_`` or ``.`` or a camel step."""
    token = token.strip(".")
    if not 4 <= len(token) <= 60:
        return False
    return "_" in token or "." in token or any(a.islower() and b.isupper() for a, b in zip(token, token[1:], strict=False))


def session_texts(paths: list[Path]) -> Iterator[str]:
    """Every prompt, tool input and tool result string of the sessions, as hooks see them."""
    from rolling_graph.replay.transcript import parse_transcripts

    def strings(value: object) -> Iterator[str]:
        if isinstance(value, str):
            yield value
        elif isinstance(value, dict):
            for v in value.values():
                yield from strings(v)
        elif isinstance(value, list):
            for v in value:
                yield from strings(v)

    for event in parse_transcripts(paths):
        p = event.payload
        for key in ("prompt", "tool_input", "tool_response"):
            for text in strings(p.get(key)):
                if text.strip():
                    yield text


def per_kline(fn: Callable[[str], str], texts: list[str]) -> float:
    lines = sum(t.count("\n") + 1 for t in texts)
    start = time.process_time()  # CPU time: steadier than wall time on a shared machine
    for t in texts:
        fn(t)
    return (time.process_time() - start) * 1000 / lines * 1000


def corpus_section(seed: int | None, show_misses: bool) -> None:
    samples = build_secrets(*([seed] if seed is not None else []))
    non = build_non_secrets()
    print(f"Generated secret corpus: {len(samples)} lines, {len(Counter(s['kind'] for s in samples))} kinds; "
          f"{len(non)} known non-secrets")
    print(f"{'redactor':<28} {'recall':>8} {'non-secrets changed':>20} {'CPU ms / 1k lines':>18}")
    for name, fn in (("fast (hook: own rules)", redact_fast), ("detect-secrets pass alone", redact_with_library), ("full redact()", redact)):
        fn(samples[0]["line"])  # imports and compiles outside the timing
        missed = [s for s in samples if survives(s["secret"], fn(s["line"]))]
        changed = [n for n in non if fn(n["line"]) != n["line"]]
        speed = per_kline(fn, [s["line"] for s in samples] + [n["line"] for n in non])
        recall = 1 - len(missed) / len(samples)
        print(f"{name:<28} {recall:>8.3f} {len(changed):>14}/{len(non):<5} {speed:>18.1f}")
        if show_misses or name.startswith("full"):
            for s in missed:
                print(f"    missed [{s['kind']}] {s['line'][:110]!r}")
            for n in changed:
                print(f"    changed [{n['kind']}] {n['line'][:80]!r} -> {fn(n['line'])[:80]!r}")


def real_section(corpus: Path) -> None:
    paths = sorted(corpus.rglob("*.jsonl"))  # every session, those in subfolders (entire-cli/) too
    if not paths:
        print(f"\nReal sessions: none in {corpus} (skipped)")
        return
    texts = list(session_texts(paths))
    lines = sum(t.count("\n") + 1 for t in texts)
    print(f"\nReal sessions: {len(paths)} files, {len(texts)} texts, {lines} lines")
    for name, fn in (("fast (hook)", redact_fast), ("full redact()", redact)):
        start = time.process_time()
        out = [fn(t) for t in texts]
        ms = (time.process_time() - start) * 1000
        changed = sum(a != b for a, b in zip(texts, out, strict=True))
        names: Counter[str] = Counter()
        masked: Counter[str] = Counter()
        examples: dict[str, list[str]] = {"path": [], "test": [], "code": []}
        for before, after in zip(texts, out, strict=True):
            if before == after:
                for kind, found in _names(before).items():
                    names[kind] += len(found)
                continue
            for kind, found in _names(before).items():
                names[kind] += len(found)
                for token in found:
                    if token not in after:
                        masked[kind] += 1
                        if len(examples[kind]) < 5:
                            examples[kind].append(token)
        share = masked["code"] / max(1, names["code"])
        print(f"  {name:<14} texts changed {changed:>5}   {ms / lines * 1000:7.1f} CPU ms / 1k lines")
        print(f"  {'':<14} paths masked {masked['path']}/{names['path']}, test names masked {masked['test']}/{names['test']}, "
              f"code names masked {masked['code']}/{names['code']} = {share:.3%}")
        for kind, tokens in examples.items():
            if tokens:
                print(f"  {'':<14} e.g. masked {kind}: {tokens}")


def _names(text: str) -> dict[str, set[str]]:
    return {
        "path": set(PATH_RE.findall(text)),
        "test": set(TEST_NAME_RE.findall(text)),
        "code": {t for t in CODE_NAME_RE.findall(text) if is_code_name(t)},
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seed", type=int, default=None, help="corpus seed (default: the fixture's)")
    parser.add_argument("--corpus", type=Path, default=SHARED_CORPUS)
    parser.add_argument("--misses", action="store_true", help="list every redactor's misses")
    args = parser.parse_args()
    corpus_section(args.seed, args.misses)
    real_section(args.corpus)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
