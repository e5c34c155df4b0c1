"""Mentions: every name an event's input uses touches the node that holds it, so a node's
``seq`` says when it was last *used* and ``mentions`` how often — what the restore block
ranks by after a compaction and what the warm graph counts as a session's uses."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import jsonpatch

from rolling_graph.core.model import new_document
from rolling_graph.core.patch import validate_ops
from rolling_graph.probe import offline_mentions as mentions
from rolling_graph.probe.code_names import (
    code_names,
    defined_names,
    file_names,
    is_code_name,
    is_private_helper,
    module_paths,
)
from rolling_graph.probe.offline import OfflineProbe, typed_text
from rolling_graph.probe.transcript_tail import attach_names
from rolling_graph.render.rank import is_removed

NOW = datetime(2026, 11, 25, 21, 0, tzinfo=UTC)


def tool(eid: str, name: str, text: str, paths: list[str] | None = None, **data: Any) -> dict[str, Any]:
    event: dict[str, Any] = {"id": eid, "event": "PostToolUse", "tool": name, "text": text, "paths": paths or [], "reasons": []}
    if data:
        event["data"] = data
    return event


def apply(doc: dict[str, Any], events: list[dict[str, Any]]) -> dict[str, Any]:
    result = OfflineProbe().run(events, doc)
    ops, _ = validate_ops(result.patch, doc, NOW, source=events[-1]["id"], trusted=True)
    jsonpatch.apply_patch(doc, ops, in_place=True)
    return doc


def facts(doc: dict[str, Any], nid: str) -> dict[str, Any]:
    return doc["nodes"][nid].get("facts") or {}


def written(doc: dict[str, Any]) -> dict[str, Any]:
    """A session that wrote ``lib/render.ex`` (defining ``render_line`` and ``plain_line``) at e2."""
    code = "defmodule App.Render do\n  def render_line(line), do: plain_line(line)\n  defp plain_line(l), do: l\nend\n"
    return apply(doc, [tool("e2", "Write", f"Write lib/render.ex\n{code}", ["lib/render.ex"], new=code,
                            mentions=["App.Render", "render_line", "plain_line"])])


def test_an_edit_that_quotes_a_known_function_in_the_code_it_replaces_touches_it() -> None:
    doc = written(new_document("s"))
    assert facts(doc, "render-line")["seq"] == 2
    # e9 edits another function; its old_string still quotes render_line (which it keeps using).
    edit = tool("e9", "Edit", "Edit lib/render.ex\ndef format_row(row), do: row", ["lib/render.ex"],
                old="def format_row(r), do: render_line(r)", new="def format_row(row), do: row",
                mentions=["format_row", "-render_line"])
    apply(doc, [edit])
    assert facts(doc, "render-line")["seq"] == 9 and facts(doc, "render-line")["mentions"] == 2
    assert facts(doc, "plain-line")["seq"] == 2, "a name the edit does not use keeps its last use"
    assert facts(doc, "lib-render-ex")["mentions"] == 2  # the file each event changed
    # The edit took it out of format_row: removed at e9, until a later event uses it again.
    assert facts(doc, "render-line")["removed"] == 9 and is_removed(facts(doc, "render-line"))
    assert "removed" not in facts(doc, "format-row") and not is_removed(facts(doc, "plain-line"))
    apply(doc, [tool("e10", "Bash", "$ mix test --only render_line\n1 test, 0 failures", cmd="mix test --only render_line")])
    assert facts(doc, "render-line")["seq"] == 10 and not is_removed(facts(doc, "render-line"))
    # ``first`` is the session's first event naming it: later uses move ``seq`` only.
    assert facts(doc, "render-line")["first"] == 2 and facts(doc, "lib-render-ex")["first"] == 2


def test_the_package_a_changed_file_lives_in_is_a_name_each_path_under_it_touches() -> None:
    doc = new_document("s")
    code = "def render(x), do: x\n"
    apply(doc, [tool("e3", "Edit", f"Edit lib/shop_web/live/cart_live.ex\n{code}", ["lib/shop_web/live/cart_live.ex"], new=code,
                     old="def render(_), do: nil", mentions=["render"])])
    assert doc["nodes"]["shop-web"]["label"] == "shop_web" and facts(doc, "shop-web")["seq"] == 3
    assert "live" not in doc["nodes"] and "lib" not in doc["nodes"], "only directories that are code names"
    apply(doc, [tool("e5", "Read", "Read lib/shop_web/components/core.ex\n…", ["lib/shop_web/components/core.ex"])])
    assert facts(doc, "shop-web")["seq"] == 5 and facts(doc, "shop-web")["mentions"] == 2
    # Reading a file adds no package: only the code the session changes does.
    apply(doc, [tool("e6", "Read", "Read deps/some_lib/lib/thing.ex\n…", ["deps/some_lib/lib/thing.ex"])])
    assert "some-lib" not in doc["nodes"]


def test_a_command_naming_a_file_or_a_function_touches_them() -> None:
    doc = written(new_document("s"))
    apply(doc, [tool("e7", "Bash", "$ mix test test/render_test.exs --only render_line\n3 tests, 0 failures",
                     cmd="mix test test/render_test.exs --only render_line")])
    assert facts(doc, "render-line")["seq"] == 7
    apply(doc, [tool("e8", "Bash", "$ cat lib/render.ex | head\n…", cmd="cat lib/render.ex | head")])
    assert facts(doc, "lib-render-ex")["seq"] == 8


def test_a_write_adds_the_helpers_its_code_uses_but_a_stylesheet_adds_no_names() -> None:
    doc = new_document("s")
    code = "def run(items) do\n  Enum.map(items, &Worker.perform_job/1)\n  Telemetry.emit_done(:ok)\nend\n"
    apply(doc, [tool("e3", "Write", f"Write lib/runner.ex\n{code}", ["lib/runner.ex"], new=code,
                     mentions=["Enum.map", "Worker.perform_job", "Telemetry.emit_done"])])
    assert {"enum-dot-map", "worker-dot-perform-job", "telemetry-dot-emit-done"} <= doc["nodes"].keys()
    css = ".row_header { color: red }\n.transcript_line { margin: 0 }\n"
    apply(doc, [tool("e4", "Write", f"Write assets/app.css\n{css}", ["assets/app.css"], new=css,
                     mentions=["row_header", "transcript_line"])])
    labels = {n["label"] for n in doc["nodes"].values()}
    assert not {"row_header", "transcript_line"} & labels


def test_new_names_from_one_write_are_capped() -> None:
    doc = new_document("s")
    names = [f"helper_{i:03d}" for i in range(150)]
    code = "\n".join(f"{n}()" for n in names)
    apply(doc, [tool("e3", "Write", f"Write lib/many.ex\n{code}", ["lib/many.ex"], new=code, mentions=names)])
    added = [n for n in doc["nodes"].values() if n["label"].startswith("helper_")]
    assert len(added) <= mentions.NEW_PER_WRITE + 30  # the write's own names (offline_tools) plus the mentions' cap
    assert len(added) >= mentions.NEW_PER_WRITE


def test_json_keys_and_tool_output_are_no_mentions() -> None:
    doc = new_document("s")
    apply(doc, [tool("e1", "Edit", "Edit lib/a.ex\nx = file_path_helper(1)", ["lib/a.ex"], new="x = file_path_helper(1)",
                     mentions=["file_path_helper"])])
    assert "file-path-helper" in doc["nodes"]
    # A tool whose text is its input as JSON names nothing, keys or values; a command's output names nothing.
    apply(doc, [tool("e5", "WebFetch", 'WebFetch {"url": "https://x", "file_path_helper": 1}')])
    apply(doc, [tool("e6", "Bash", "$ ls\nfile_path_helper.ex", cmd="ls")])
    assert facts(doc, "file-path-helper")["seq"] == 1 and facts(doc, "file-path-helper")["mentions"] == 1


def test_a_prompt_counts_what_the_user_typed_not_the_reminders_around_it() -> None:
    prompt = {"id": "e4", "event": "UserPromptSubmit", "text": "<system-reminder>see plain_line</system-reminder> now fix render_line",
              "paths": [], "reasons": []}
    names, new = mentions.event_names(prompt, typed_text)
    assert names == ["render_line"] and not new


def test_the_transcript_gives_an_edit_all_its_names_the_replaced_code_marked() -> None:
    batch: list[dict[str, Any]] = [tool("e5", "Edit", "Edit lib/render.ex\n…", ["lib/render.ex"])]
    attach_names(batch, [("Edit", "/src/app/lib/render.ex", ["format_row"], ["format_row", "-render_line"])])  # type: ignore[arg-type]
    assert batch[0]["data"]["mentions"] == ["format_row", "-render_line"]
    names, new = mentions.event_names(batch[0])  # type: ignore[arg-type]
    assert names == ["format_row", "render_line"] and new == {"format_row"}


def test_without_the_transcript_the_hooks_heads_of_an_edit_still_name_what_it_replaced() -> None:
    edit = tool("e6", "Edit", "Edit lib/render.ex\ndef format_row(row), do: row", ["lib/render.ex"],
                old="def format_row(r), do: render_line(r) |> plain_li…", new="def format_row(row), do: row")
    names, new = mentions.event_names(edit)  # type: ignore[arg-type]
    assert names == ["format_row", "render_line"] and new == {"format_row"}  # the cut word is no name


def test_a_write_to_the_harness_own_files_adds_no_names() -> None:
    """A plan file under ~/.claude is the harness's: the gate drops its path, and its words
    become no nodes (what the plan names comes in through ExitPlanMode instead)."""
    doc = new_document("s")
    plan = "## Plan\n1. Add `render_assistant_block_enriched` to TranscriptRenderer.render_message\n"
    apply(doc, [tool("e3", "Write", f"Write /home/u/.claude/plans/x.md\n{plan}", [], new=plan,
                     mentions=["render_assistant_block_enriched", "TranscriptRenderer.render_message"])])
    assert not [n for n in doc["nodes"].values() if n["kind"] == "symbol"]


def test_a_private_helper_is_a_name_where_the_code_defines_or_calls_it() -> None:
    # Python's `_fill`: one word behind one underscore. Defined or called it is a helper the
    # session works on; as an argument (Elixir's ignored `_params`) or a dunder it is not.
    code = "def _fill(line, room):\n    return _pad(line, room)\n\ndef handle(_params, socket):\n    return __init__(socket)\n"
    assert defined_names(code) == ["_fill", "handle"]
    assert code_names(code) == ["_fill", "_pad"]  # each followed by its call parenthesis
    # A dunder the language calls (`__init__`) is no name the session works on.
    assert defined_names("class Store:\n    def __init__(self):\n        pass\n    def take(self):\n        pass\n") == ["Store", "take"]
    assert not is_code_name("_fill") and is_private_helper("_fill") and not is_private_helper("__init__")
    doc = new_document("s")
    names = list(dict.fromkeys(defined_names(code) + code_names(code)))
    apply(doc, [tool("e3", "Write", f"Write app/layout.py\n{code}", ["app/layout.py"], new=code, names=names, mentions=code_names(code))])
    labels = {n["label"] for n in doc["nodes"].values() if n["kind"] == "symbol"}
    assert {"_fill", "_pad"} <= labels and not {"_params", "__init__"} & labels
    # A later edit that calls it touches it.
    call = "rows = [_fill(r, 80) for r in rows]"
    apply(doc, [tool("e7", "Edit", f"Edit app/view.py\n{call}", ["app/view.py"], new=call, old="rows = rows", mentions=code_names(call))])
    assert facts(doc, "fill")["seq"] == 7 and facts(doc, "fill")["mentions"] == 2


def test_a_definition_is_read_past_its_modifiers_and_a_go_methods_receiver() -> None:
    # Most of a Go project's functions are methods; most of a Swift, Kotlin or TypeScript
    # project's definitions carry a modifier or an attribute before their keyword.
    go = "func (s *ManualCommitStrategy) SaveChanges(ctx context.Context) error {\n\treturn nil\n}\nfunc newStore() *Store {\n"
    assert defined_names(go) == ["SaveChanges", "newStore"]
    swift = "@MainActor final class SessionModel {\n    private func handleTap() {}\n    static func make() -> Self {}\n}\nprotocol Runner {}\n"
    assert defined_names(swift) == ["SessionModel", "handleTap", "make", "Runner"]
    kotlin = "enum class Color { RED }\nsuspend fun loadAll() {}\ncompanion object Factory {}\n"
    assert defined_names(kotlin) == ["Color", "loadAll", "Factory"]
    typescript = "export default async function loadPage() {}\nexport const fooBar = () => 1\npub(crate) fn rusty() {}\n"
    assert defined_names(typescript) == ["loadPage", "fooBar", "rusty"]
    # A keyword is never the name (`enum class` is no class named "class").
    assert defined_names("enum class\nstruct {\n") == []


def test_a_method_without_a_keyword_and_a_rust_impl_define_what_they_name() -> None:
    # Java's, C#'s and TypeScript's methods have modifiers, a type and parameters, no keyword.
    java = "public class InvoiceService {\n  private static final int LIMIT = 3;\n  public List<Invoice> findOverdue(Date d) {\n" \
           "  @Override\n  protected void onCreate(Bundle b) {\n    System.out.println(findOverdue(d));\n"
    assert defined_names(java) == ["InvoiceService", "findOverdue", "onCreate"]  # never a field, never a call
    csharp = "public sealed class OrderRepo {\n    public async Task<Order?> GetOrderAsync(int id)\n    private readonly ILogger _log;\n"
    assert defined_names(csharp) == ["OrderRepo", "GetOrderAsync"]
    typescript = "export class PaymentGateway {\n  private async chargeCard(amount: number): Promise<void> {\n  return charge(x)\n"
    assert defined_names(typescript) == ["PaymentGateway", "chargeCard"]
    # Rust's `impl Trait for Type` defines the type's methods, not the trait; Ruby's `def self.x` defines x.
    rust = "impl Display for TokenKind {}\nimpl<T: Clone> Stack<T> {\n    fn for_each(&self) {}\n}\n"
    assert defined_names(rust) == ["TokenKind", "Stack", "for_each"]
    assert defined_names("class Invoice < ApplicationRecord\n  def self.build_from(params)\n") == ["Invoice", "build_from"]


def test_a_file_name_the_new_code_quotes_is_a_name_unless_a_project_file_has_it() -> None:
    # A test's fixture path and a path it feeds the code are what the next edits use again.
    code = ('test "relative path" do\n  assert to_relative_path("/home/u/project/lib/foo.ex", cwd) == "lib/foo.ex"\n'
            '  load_fixture("fixtures/short.jsonl")\n  css = "assets/app.css"\n  r.json()\nend\n')
    assert file_names(code) == ["foo.ex", "short.jsonl", "app.css"]  # quoted paths only: no `r.json`
    doc = new_document("s")
    apply(doc, [tool("e1", "Read", "Read test/fixtures/short.jsonl\n…", ["test/fixtures/short.jsonl"])])
    batch: list[dict[str, Any]] = [tool("e2", "Edit", "Edit test/path_test.exs\n…", ["test/path_test.exs"])]
    attach_names(batch, [("Edit", "/src/app/test/path_test.exs", [], ["to_relative_path", *file_names(code)])])  # type: ignore[arg-type]
    apply(doc, batch)
    labels = sorted(n["label"] for n in doc["nodes"].values())
    assert "foo.ex" in labels and doc["nodes"]["foo-dot-ex"]["kind"] == "symbol"
    short = [n["kind"] for n in doc["nodes"].values() if n["label"].endswith("short.jsonl")]
    assert short == ["file"] and "app.css" not in labels  # the project file's node stays the only one
    # Without the transcript, the head of the new code the hook kept says the same.
    names, new = mentions.event_names(tool("e3", "Edit", "Edit test/x.exs\n…", ["test/x.exs"], new=code, old=""))  # type: ignore[arg-type]
    assert "foo.ex" in names and "foo.ex" in new


GO_IMPORTS = """package strategy

import (
\t"fmt"

\t"entire.io/cli/cmd/entire/cli/checkpoint"
\t"entire.io/cli/cmd/entire/cli/paths"
\t"github.com/go-git/go-git/v5/plumbing/object"
\tgit "github.com/go-git/go-git/v5"
\t"golang.org/x/sys/unix"
)

// Author: Entire CLI <cli@entire.io>, see https://github.com/entireio/cli/issues/12
func Write(repo *git.Repository) error { return checkpoint.WriteCommitted(repo, paths.Root) }
"""


def test_the_modules_go_code_imports_are_names_the_module_not_each_package() -> None:
    # The project's own module and its dependencies: the names Go code imports them by, which
    # no code name holds (their parts are directories). Not a URL, an e-mail address or a file.
    assert module_paths(GO_IMPORTS) == ["entire.io/cli", "github.com/go-git/go-git/v5", "golang.org/x/sys"]
    assert "entire.io/cli" not in code_names(GO_IMPORTS)
    assert module_paths("cd ../entire.io && git log; cat docs/setup.md; see lib/app.web/x") == []
    assert module_paths("go get github.com/spf13/cobra@v1.8.0 gopkg.in/yaml.v3") == ["github.com/spf13/cobra", "gopkg.in/yaml.v3"]


def test_a_write_of_go_code_adds_the_modules_it_imports_owned_by_the_file() -> None:
    doc = new_document("s")
    apply(doc, [tool("e3", "Write", f"Write cli/strategy/write.go\n{GO_IMPORTS}", ["cli/strategy/write.go"], new=GO_IMPORTS)])
    modules = {n["label"]: nid for nid, n in doc["nodes"].items() if "/" in n["label"] and n["kind"] == "symbol"}
    assert set(modules) == {"entire.io/cli", "github.com/go-git/go-git/v5", "golang.org/x/sys"}
    assert all(facts(doc, nid)["in"] == "cli-strategy-write-go" for nid in modules.values())
    # A later command that fetches one touches it: its last use moves on.
    apply(doc, [tool("e9", "Bash", "$ go get github.com/go-git/go-git/v5@latest\nok", cmd="go get github.com/go-git/go-git/v5@latest")])
    assert facts(doc, modules["github.com/go-git/go-git/v5"])["seq"] == 9
    assert facts(doc, modules["entire.io/cli"])["seq"] == 3
