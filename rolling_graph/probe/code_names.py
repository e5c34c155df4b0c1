"""Code names in text: the identifiers worth a node, as the corpus README counts them.

Pure functions over text (regular expressions are fine here: this runs in the detached
probe, never in the hook):

* :func:`is_code_name` — 4–60 characters with ``_``, ``.`` or a camel step, one identifier
* :func:`code_names`, :func:`frequent_names` — those a text uses, in order or most used first
* :func:`defined_names` — what a piece of code defines (functions, classes, modules)
* :func:`pattern_names` — what a Grep pattern searches for
* :func:`file_names` — the file names a piece of code quotes
* :func:`quoted_names` — the code names prose quotes in backticks (a plan, a subagent's brief)
* :func:`module_paths` — the modules a piece of code imports by a host-named path (Go's
  ``"github.com/go-git/go-git/v5/plumbing"`` → ``github.com/go-git/go-git/v5``)
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from rolling_graph.core.filepaths import looks_like_file

_IDENT_RE = re.compile(r"@?[A-Za-z_][A-Za-z0-9_]*(?:[.:][A-Za-z_][A-Za-z0-9_]*)*[!?]?(?:/\d)?")
_CAMEL_STEP_RE = re.compile(r"[a-z0-9][A-Z]")
#: A definition's keywords, and the modifiers and attributes that may stand before them
#: (Swift's ``@MainActor private final class``, Kotlin's ``suspend fun``, TypeScript's
#: ``export default async function``, Rust's ``pub(crate) fn``); Go's method receiver
#: (``func (s *Store) Save``) stands between ``func`` and the name.
_DEF_KEYWORDS = (
    "def defp defmacro defmacrop defmodule defstruct defprotocol defimpl defdelegate defguard fn func function class "
    "interface struct enum trait impl type module record object protocol extension actor fun typealias namespace "
    "const let var val"
).split()
_MODIFIERS = (
    "export default async pub public private protected internal fileprivate open static final override abstract "
    "sealed data enum annotation inner companion value inline suspend mutating nonisolated readonly declare unsafe extern lazy weak convenience required"
).split()
_DEF_RE = re.compile(
    r"^\s*(?:(?:@\w+(?:\([^)\n]*\))?|(?:" + "|".join(_MODIFIERS) + r")(?:\([\w:]+\))?)\s+)*"
    r"(?:" + "|".join(_DEF_KEYWORDS) + r")\s+(?:\([^)\n]*\)\s*)?"
    r"(?P<name>[A-Za-z_][\w.!?]*)",
    re.MULTILINE,
)
#: A method of Java, C#, Kotlin's and TypeScript's classes has no keyword: its modifiers, a
#: type perhaps, its name, its parameters (``public List<Invoice> findOverdue(``,
#: ``private async handleClick(``). One modifier at least: a call is never one.
_METHOD_RE = re.compile(
    r"^[ \t]*(?:@\w+(?:\([^)\n]*\))?\s+)*(?:(?:public|private|protected|internal|static|final|abstract|synchronized"
    r"|override|virtual|async|sealed|partial|extern|unsafe|native|default)\s+)+"
    r"(?:[\w.]+(?:<[\w<>, .?\[\]]*>)?(?:\[\])*\??\s+)?(?P<name>[A-Za-z_]\w*)\s*(?:<[^>\n]*>)?\(",
    re.MULTILINE,
)
#: Rust's ``impl Type``, ``impl<T> Trait for Type<T>``: the block defines the type's methods.
_IMPL_RE = re.compile(r"^[ \t]*(?:unsafe\s+)?impl(?:<[^>\n]*>)?\s+(?:[\w:]+(?:<[^>\n]*>)?\s+for\s+)?(?P<name>[A-Za-z_]\w*)", re.MULTILINE)
#: Files whose words are not code names (styles, markup, prose, lock files).
NO_NAMES = frozenset("css scss sass less html htm svg md mdx markdown rst txt lock csv jsonl".split())
#: Identifiers that look like code names but are the language's or the shell's own.
_NOISE = frozenset("__init__ __name__ __main__ __file__ __dict__ console.log module.exports".split())


#: A code span in prose: `` `name` ``.
CODE_SPAN_RE = re.compile(r"`([^`\n]{3,80})`")
_NAME_SHAPE_RE = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(?:[.:][A-Za-z_][A-Za-z0-9_]*)*")
_PRIVATE_RE = re.compile(r"_[A-Za-z][A-Za-z0-9]{2,58}")


def is_code_name(name: str) -> bool:
    """The corpus README's code name: 4–60 characters with ``_``, ``.`` or a camel step;
    one identifier (dotted, ``@attr``, ``name/2`` and ``name!`` allowed), nothing else."""
    core = name.lstrip("@:").rstrip("!?")
    if "/" in core:
        core, _, arity = core.partition("/")
        if not arity.isdigit():
            return False
    if not _NAME_SHAPE_RE.fullmatch(core) or not 4 <= len(core) <= 60 or core.lower() in _NOISE or core.isupper() and "_" not in core:
        return False
    if looks_like_file(core) or core.startswith(("http", "www.")) or core[0].isdigit():
        return False
    if "." in core and not all(seg and (seg[0].isalpha() or seg[0] == "_") for seg in core.split(".")):
        return False
    return "_" in core.strip("_") or "." in core or _CAMEL_STEP_RE.search(core) is not None


def is_private_helper(name: str) -> bool:
    """``_fill``, ``_render``: one word behind one underscore. Not a code name by its shape
    alone (Elixir's ignored ``_params``, a throwaway ``_tmp``), but one when the code defines
    or calls it (:func:`defined_names`, :func:`code_names`): a private helper, common in
    Python and JavaScript, and a name the corpus README counts."""
    return _PRIVATE_RE.fullmatch(name) is not None


def code_names(text: str, limit: int = 50) -> list[str]:
    """Code names in ``text``, in order of first appearance (``@attr`` and ``name/2`` kept
    as written: they contain the name)."""
    out: dict[str, None] = {}
    for name in _names(text):
        out.setdefault(name, None)
        if len(out) >= limit:
            break
    return list(out)


def _names(text: str) -> Iterator[str]:
    """Code names as they occur (a private helper where it is called: ``_fill(``), not
    counting the directories of a path
    (``lib/spotter_web/live`` names no ``spotter_web``: the file's path carries it, and
    :mod:`.offline_mentions` touches it as the file's package)."""
    for m in _IDENT_RE.finditer(text):
        start, end = m.start(), m.end()
        if (start and text[start - 1] in "/\\") or text[end : end + 1] == "/":
            continue
        name = m.group(0).rstrip(".:")
        if is_code_name(name) or (text[end : end + 1] == "(" and is_private_helper(name)):
            yield name


_PATH_TOKEN_RE = re.compile(r"[A-Za-z0-9_./-]+\.[A-Za-z0-9]+")


def file_names(text: str, limit: int = 20) -> list[str]:
    """File names a piece of code quotes (``"lib/foo.ex"`` → ``foo.ex``), in order."""
    out: dict[str, None] = {}
    for m in _PATH_TOKEN_RE.finditer(text):
        token, before = m.group(0), text[m.start() - 1 : m.start()]
        if before and before in "\"'`" and looks_like_file(token):
            out.setdefault(token.rpartition("/")[2], None)
            if len(out) >= limit:
                break
    return list(out)


def quoted_names(text: str, limit: int = 8) -> list[str]:
    """The code names ``text`` quotes in backticks, in order."""
    return code_names(" ".join(CODE_SPAN_RE.findall(text)), limit)


def frequent_names(text: str, limit: int = 10) -> list[str]:
    """The code names ``text`` uses most, most frequent first (ties: first seen)."""
    counts: dict[str, int] = {}
    for name in _names(text):
        counts[name] = counts.get(name, 0) + 1
    return sorted(counts, key=lambda n: -counts[n])[:limit]


def defined_names(text: str, limit: int = 8) -> list[str]:
    """Names a piece of code defines: functions, classes, modules (any common language)."""
    out: dict[str, None] = {}
    impls = {m.start(): m.group("name") for m in _IMPL_RE.finditer(text)}  # ``impl Display for Token``: Token, not the trait
    found = sorted([*((m.start(), m.group("name")) for m in (*_DEF_RE.finditer(text), *_METHOD_RE.finditer(text)) if m.start() not in impls),
                    *impls.items()])
    for _, raw in found:
        name = raw.rstrip(".").removeprefix("self.")  # Ruby's ``def self.build``
        if len(name) >= 3 and name.lower() not in ("self", "this", "init", "main", "test") and name not in _DEF_KEYWORDS and not (name.startswith("__") and name.endswith("__")):
            out.setdefault(name, None)
        if len(out) >= limit:
            break
    return list(out)


#: A host-named import path, quoted or not: ``entire.io/cli/cmd/entire/cli/paths``,
#: ``github.com/go-git/go-git/v5/plumbing``. Not a URL (``https://github.com/…``), not an
#: e-mail address, not a file path's middle.
_MODULE_RE = re.compile(r"(?<![\w@/.:-])((?:[a-z0-9][a-z0-9-]*\.)+[a-z]{2,12})((?:/[A-Za-z0-9_.~-]+)+)")
#: Hosts whose paths name ``owner/repository`` before a package: the module is three parts.
_FORGES = frozenset({"github.com", "gitlab.com", "bitbucket.org", "codeberg.org", "golang.org"})
_MAJOR_RE = re.compile(r"v\d+")
#: Top-level domains a module host ends in (``foo.bar/baz`` in code is no module).
_TLDS = frozenset("com org net io dev in co me app sh ai cloud tech xyz gov edu uk de fr nl ch jp cn ru eu us ca au".split())


def module_paths(text: str, limit: int = 12) -> list[str]:
    """The modules ``text`` imports by a host-named path (Go's, and any such path a command
    fetches), each once, in order: the module, not the package (``entire.io/cli`` of
    ``entire.io/cli/cmd/entire/cli/paths``; ``github.com/go-git/go-git/v5`` of
    ``github.com/go-git/go-git/v5/plumbing/object``). They are the names Go code uses for
    its own module and its dependencies, which no code name of the code holds: the path's
    parts are directories (:func:`code_names` skips them)."""
    out: dict[str, None] = {}
    for m in _MODULE_RE.finditer(text):
        host, parts = m.group(1), m.group(2).strip("/").split("/")
        if host.rpartition(".")[2] not in _TLDS or looks_like_file(host) or looks_like_file(parts[-1]) or any(not p or p.startswith(".") for p in parts):
            continue  # a file's path (``docs/x.md``), never a module
        keep = 2 if host in _FORGES else 1
        if len(parts) < keep:
            continue
        module = [host, *parts[:keep]]
        if len(parts) > keep and _MAJOR_RE.fullmatch(parts[keep]):
            module.append(parts[keep])  # Go's major version suffix belongs to the module
        out.setdefault("/".join(module), None)
        if len(out) >= limit:
            break
    return list(out)


def other_names(values: list[str], limit: int) -> list[str]:
    """The code names of another tool's input values (an MCP server's, WebSearch's); a
    symbol's path (``OrderService/apply``, as code-navigation servers name a method) is its names."""
    text = "\n".join(v.replace("/", " ") if " " not in v and "://" not in v and not looks_like_file(v) else v for v in values)
    return code_names(text, limit)


def pattern_names(pattern: str) -> list[str]:
    """The names a Grep pattern searches for: ``TranscriptRenderer\\.render\\b`` →
    ``TranscriptRenderer.render``; alternations split; regex syntax dropped."""
    text = pattern.replace("\\.", ".").replace("\\b", " ").replace("\\(", " ").replace("\\s", " ")
    text = re.sub(r"\[[^\]]*\]|[\\^$*+?(){}|]", " ", text)
    return [n for n in code_names(text, 6)]
