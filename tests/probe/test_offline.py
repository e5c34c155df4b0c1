"""The offline probe: a deterministic extractor that proposes what a model would."""

from __future__ import annotations

from datetime import UTC, datetime

from rolling_graph.core.model import VERBS, new_document
from rolling_graph.core.patch import validate_ops
from rolling_graph.probe.offline import OfflineProbe

NOW = datetime(2026, 11, 25, 21, 0, tzinfo=UTC)


def ev(text: str, event: str = "UserPromptSubmit", **kw) -> dict:
    return {"id": kw.pop("id", "e1"), "event": event, "text": text, "paths": kw.pop("paths", []), "reasons": [], **kw}


def apply(doc: dict, events: list[dict]) -> dict:
    result = OfflineProbe().run(events, doc)
    ops, _ = validate_ops(result.patch, doc, NOW, source=events[-1]["id"], trusted=True)
    import jsonpatch

    jsonpatch.apply_patch(doc, ops, in_place=True)
    return doc


def test_decisions_become_nodes_that_decide_what_they_name() -> None:
    doc = apply(new_document("s"), [ev("For transactional email, let's go with Resend; their API is simplest.")])
    assert doc["nodes"]["use-resend"]["kind"] == "decision"
    assert "use-resend|decides|resend" in doc["edges"]


def test_a_correction_supersedes_the_decision_it_reverses() -> None:
    doc = new_document("s")
    apply(doc, [ev("Let's go with SQLite for the job queue; it is one file.", id="e1")])
    apply(doc, [ev("The plan is to deploy the worker on Fly.io.", id="e2")])
    apply(doc, [ev("No, SQLite won't hold up with two workers writing. Use PostgreSQL for the job queue instead.", id="e3")])
    correction = next(n for n in doc["nodes"].values() if n["kind"] == "correction")
    assert correction["label"] == "Use PostgreSQL for the job queue instead"
    assert f"{correction['id']}|supersedes|use-sqlite-for-the-job-queue" in doc["edges"]
    assert not any("supersedes|deploy" in k for k in doc["edges"]), "only the reversed decision is superseded"
    assert doc["nodes"]["use-sqlite-for-the-job-queue"]["superseded_by"] == correction["id"]


def test_a_negated_name_picks_the_decision_to_supersede() -> None:
    doc = new_document("s")
    apply(doc, [ev("For email, let's go with Resend.", id="e1")])
    apply(doc, [ev("We'll use Fly.io to deploy.", id="e2")])
    apply(doc, [ev("Actually, not Resend. Use Bento: marketing already pays for it.", id="e3")])
    assert "use-bento|supersedes|use-resend" in doc["edges"]


def test_edges_use_the_fixed_vocabulary_and_are_not_all_one_verb() -> None:
    doc = new_document("s")
    apply(doc, [ev("Let's go with FastAPI for the billing API.", id="e1")])
    apply(doc, [ev("Edit src/billing/api.py", event="PostToolUse", tool="Edit", paths=["src/billing/api.py"], id="e2")])
    apply(doc, [ev("$ pytest -q tests/test_api.py\n1 failed\nAssertionError: FAILED", event="PostToolUse", tool="Bash", error=True, id="e3")])
    verbs = [e["relationship"] for e in doc["edges"].values()]
    assert set(verbs) <= set(VERBS)
    assert {"decides", "edits", "tests", "blocks"} <= set(verbs)
    assert "related_to" not in verbs


def test_files_errors_and_commands_from_tools() -> None:
    doc = new_document("s")
    apply(doc, [
        ev("Write src/app/models.py", event="PostToolUse", tool="Write", paths=["src/app/models.py"], id="e1"),
        ev("$ npm test\nTypeError: cannot read 'id' of undefined", event="PostToolUse", tool="Bash", error=True, id="e2"),
    ])
    kinds = {n["label"]: n["kind"] for n in doc["nodes"].values()}
    assert kinds["src/app/models.py"] == "file"
    assert kinds["npm test"] == "command"
    assert any(k == "error" and "TypeError" in label for label, k in kinds.items())


def test_a_call_the_user_turned_down_ran_nothing_it_neither_fails_nor_passes_nor_edits() -> None:
    """Claude Code answers a declined call with "The user doesn't want to proceed with this
    tool use…" (a permission rule's denial: "Permission to use Bash … has been denied."): no open problem, no run of the test command, the open error stays open, and a
    declined edit is no edit of the file."""
    declined = "Error: The user doesn't want to proceed with this tool use. The tool use was rejected."
    doc = apply(new_document("s"), [
        ev("$ pytest -q tests/test_api.py\n1 failed\nAssertionError: totals differ", event="PostToolUse", tool="Bash",
           error=True, data={"cmd": "pytest -q tests/test_api.py", "failed": True}, id="e1"),
        ev("Edit src/api.py", event="PostToolUse", tool="Edit", paths=["src/api.py"], id="e2"),
    ])
    errors = {nid for nid, n in doc["nodes"].items() if n["kind"] == "error"}
    assert len(errors) == 1
    apply(doc, [
        ev(f"$ pytest -q\n{declined}", event="PostToolUse", tool="Bash", error=True,
           data={"cmd": "pytest -q", "failed": True}, id="e3"),
        ev("$ make deploy\nPermission to use Bash with command make deploy has been denied.", event="PostToolUse",
           tool="Bash", error=True, data={"cmd": "make deploy", "failed": True}, id="e4"),
        ev("Edit src/api.py\ndef total(): ...", event="PostToolUse", tool="Edit", paths=["src/api.py"], error=True, id="e5"),
    ])
    nodes = doc["nodes"]
    assert {nid for nid, n in nodes.items() if n["kind"] == "error"} == errors, "a declined call opens no problem"
    assert all(nodes[e]["facts"]["state"] == "open" for e in errors), "a declined whole-suite run resolves nothing"
    assert "pytest-q" not in nodes, "a declined run is no run of the command"
    assert nodes["src-api-py"]["facts"]["edits"] == 1, "the declined edit changed nothing"
    plan = "# Plan: Cache the totals\nKeep `total_cache` in memory and drop it on write."
    apply(doc, [ev(f"ExitPlanMode\n{plan}", event="PostToolUse", tool="ExitPlanMode", error=True, data={"plan": plan}, id="e6")])
    assert not [n for n in doc["nodes"].values() if n["kind"] == "summary"], "a plan the user turned down is no plan"
    apply(doc, [ev(f"ExitPlanMode\n{plan}", event="PostToolUse", tool="ExitPlanMode", data={"plan": plan}, id="e7")])
    assert [n["label"] for n in doc["nodes"].values() if n["kind"] == "summary"] == ["Plan: Cache the totals"]


def test_files_a_shell_command_looks_at_are_touched_by_it() -> None:
    """``head a.go b.go``, ``git show REF:path/c.json``: the files the shell read are files of
    the session's work (each touched by the command's event), a glob is none."""
    doc = apply(new_document("s"), [
        ev("$ head -20 logging/logger.go trailers/trailers.go util/*.go", event="PostToolUse", tool="Bash",
           data={"cmd": "head -20 logging/logger.go trailers/trailers.go util/*.go"}, id="e4"),
        ev("$ git show entire/sessions:33/406b/metadata.json | head -30", event="PostToolUse", tool="Bash",
           data={"cmd": "git show entire/sessions:33/406b/metadata.json | head -30"}, id="e5"),
    ])
    files = {n["label"]: n["facts"] for n in doc["nodes"].values() if n["kind"] == "file"}
    assert files["logging/logger.go"]["seq"] == 4 and files["trailers/trailers.go"]["by"] == "tool"
    assert files["33/406b/metadata.json"]["seq"] == 5
    assert not [label for label in files if "*" in label]


def test_a_code_navigation_tool_without_a_class_touches_the_files_and_names_it_looks_up() -> None:
    """An MCP server's or the LSP tool's call says which file and which symbol it looks at:
    the file is touched as a search's is, the symbol's names are the session's names."""
    doc = apply(new_document("s"), [
        ev("Edit src/orders.py", event="PostToolUse", tool="Edit", paths=["src/orders.py"], id="e1",
           data={"old": "def total(self):", "new": "def total(self):\n    return apply_discount(self.lines)"}),
        ev('mcp__serena__find_symbol {"name_path":"OrderService/apply_discount"}', event="PostToolUse", id="e2",
           tool="mcp__serena__find_symbol", paths=["src/orders.py"], data={"values": ["OrderService/apply_discount", "src/orders.py"]}),
        ev('LSP {"operation":"hover","filePath":"cart.ts"}', event="PostToolUse", tool="LSP", paths=["src/cart.ts"], id="e3",
           cwd="src", data={"values": ["cart.ts"]}),  # the gate made the path relative to the root already
        ev('WebSearch {"query":"go-git object.File IsBinary 2025"}', event="PostToolUse", tool="WebSearch", id="e4",
           data={"values": ["go-git object.File IsBinary 2025"]}),
    ])
    files = {n["label"]: n["facts"] for n in doc["nodes"].values() if n["kind"] == "file"}
    assert files["src/orders.py"]["seq"] == 2 and files["src/orders.py"]["edits"] == 1  # touched, not read
    assert files["src/cart.ts"]["seq"] == 3 and "reads" not in files["src/cart.ts"]
    symbols = {n["label"]: n["facts"] for n in doc["nodes"].values() if n["kind"] == "symbol"}
    assert symbols["apply_discount"]["seq"] == 2 and symbols["OrderService"]["seq"] == 2
    assert symbols["IsBinary"]["seq"] == 4 and "object.File" in symbols
    assert not {"hover", "goToDefinition", "name_path", "filePath"} & set(symbols)  # never a key, never the operation


def test_a_windows_sessions_commands_are_the_same_command_in_every_worktree() -> None:
    """On Windows the root is ``/c/Users/ada/app`` (Git Bash's form) and a command may write it
    ``C:\\Users\\ada\\app``, ``C:/Users/ada/app`` or ``/c/Users/ada/app``: each is the worktree."""
    doc = new_document("s")
    doc["gate"]["root"] = "/c/Users/ada/app"
    for i, cmd in enumerate((r"go vet C:\Users\ada\app\cmd\billing", "go vet C:/Users/ada/app/cmd/billing",
                             "go vet c:/Users/ada/app/cmd/billing", "go vet /c/Users/ada/app/cmd/billing"), 1):
        apply(doc, [ev(f"$ {cmd}\nall good", event="PostToolUse", tool="Bash", data={"cmd": cmd}, id=f"e{i}")])
    labels = sorted(n["label"] for n in doc["nodes"].values() if n["kind"] == "command")
    assert labels == ["go vet cmd/billing"], labels
    assert all("Users" not in n["label"] for n in doc["nodes"].values()), [n["label"] for n in doc["nodes"].values()]


def test_a_file_said_by_part_of_its_path_is_the_file_the_session_knows_not_a_second_node() -> None:
    """Claude's summary says ``strategy/session.go``, the user ``cli/strategy/session.go``, a
    command ``head strategy/session.go``: each is ``cmd/entire/cli/strategy/session.go``, which
    the session edited. A partial path two files end with, a bare name and a path the session
    never saw stay files of their own (or none)."""
    doc = apply(new_document("s"), [
        ev("Edit cmd/entire/cli/strategy/session.go", event="PostToolUse", tool="Edit",
           paths=["cmd/entire/cli/strategy/session.go"], id="e1"),
        ev("Read cmd/entire/cli/checkpoint/session.go", event="PostToolUse", tool="Read",
           paths=["cmd/entire/cli/checkpoint/session.go"], id="e2"),
    ])
    apply(doc, [
        ev("Summary: the fix is in strategy/session.go and cli/session.go; docs/notes.md explains it",
           event="CompactSummary", paths=["strategy/session.go", "cli/session.go", "docs/notes.md"], id="e3"),
        ev("now look at cli/strategy/session.go again", paths=["cli/strategy/session.go"], id="e4"),
        ev("$ head -5 strategy/session.go", event="PostToolUse", tool="Bash", data={"cmd": "head -5 strategy/session.go"}, id="e5"),
    ])
    files = {n["label"]: n.get("facts") or {} for n in doc["nodes"].values() if n["kind"] == "file"}
    assert sorted(files) == ["cli/session.go", "cmd/entire/cli/checkpoint/session.go", "cmd/entire/cli/strategy/session.go",
                             "docs/notes.md"]
    known = files["cmd/entire/cli/strategy/session.go"]
    assert known["seq"] == 5, "the command touched the file it meant"
    assert known["by"] == "user", "the user named it (who named a file first ranks above a tool's touch)"
    assert files["cli/session.go"]["by"] == "assistant", "no file the session knows ends with cli/session.go"


def test_a_subagents_brief_names_the_code_the_work_is_about_and_touches_the_files_it_lists() -> None:
    doc = apply(new_document("s"), [ev("Read lib/web/live/session_live.ex", event="PostToolUse", tool="Read",
                                       paths=["lib/web/live/session_live.ex"], id="e1")])
    brief = ("Very thorough exploration. How does `SessionLive` render, and what does `TranscriptRenderer.render` return?\n"
             "Key files to read:\n- lib/web/live/session_live.ex\n- test/web/renderer_test.exs\n"
             "- /home/USER/.claude/plans/old-plan.md\nDocs: https://hexdocs.pm/phoenix/overview.html")
    data = {"desc": "Explore transcript rendering", "agent": "Explore", "prompt": brief}
    apply(doc, [ev("Task Explore transcript rendering", event="PostToolUse", tool="Task", data=data, id="e3")])
    labels = {n["label"]: n for n in doc["nodes"].values()}
    assert labels["SessionLive"]["kind"] == "symbol" and labels["TranscriptRenderer.render"]["kind"] == "symbol"
    assert labels["SessionLive"]["facts"]["by"] == "assistant"
    # A listed file the session holds is touched by the brief; one only the subagent was
    # sent to read gets no node; nor do the harness's own plan file and a web page.
    read = labels["lib/web/live/session_live.ex"]["facts"]
    assert read["seq"] == 3 and read["by"] == "assistant" and read["reads"] == 1
    assert not [label for label in labels if "renderer_test" in label or "old-plan" in label or "overview.html" in label]


def test_names_already_in_the_graph_are_activated_not_duplicated() -> None:
    doc = new_document("s")
    apply(doc, [ev("We're using Redis for sessions.", id="e1")])
    weight = doc["nodes"]["redis"]["weight"]
    apply(doc, [ev("Is Redis configured with a password?", id="e2")])
    assert doc["nodes"]["redis"]["weight"] > weight
    assert doc["nodes"]["redis"]["activations"] == 2
    # The decision and the entity (each prompt is also a request, in the user's words).
    assert sum(1 for nid, n in doc["nodes"].items() if "redis" in nid and n["kind"] != "request") == 2


def test_the_same_batch_gives_the_same_proposal() -> None:
    events = [ev("Let's go with Kafka; actually no, use RabbitMQ instead of Kafka.", id="e1")]
    a = OfflineProbe().run(events, new_document("s"))
    b = OfflineProbe().run(events, new_document("s"))
    assert a.patch == b.patch and a.rationale == b.rationale


def test_proposals_stay_within_the_validators_bounds() -> None:
    text = " ".join(f"Component{i} talks to Service{i}." for i in range(80))
    result = OfflineProbe().run([ev(text)], new_document("s"))
    validate_ops(result.patch, new_document("s"), NOW, trusted=True)  # does not raise


# -- decisions read as the user meant them (issue 33, item 4) ----------------------------------


def _choices(doc: dict) -> dict[str, str]:
    return {n["id"]: n["label"] for n in doc["nodes"].values() if n["kind"] in ("decision", "correction")}


def test_a_negated_option_is_rejected_never_chosen() -> None:
    doc = apply(new_document("s"), [ev("Let's go with PostgreSQL for the orders table, not SQLite.")])
    (did,) = _choices(doc)
    assert f"{did}|decides|postgresql" in doc["edges"]
    assert f"{did}|decides|sqlite" not in doc["edges"]
    assert f"{did}|contradicts|sqlite" in doc["edges"], "SQLite is the option turned away from"


def test_every_negation_turns_a_name_away() -> None:
    for prompt in ("Let's use Redis for caching instead of Memcached.", "We'll use Redis rather than Memcached for the cache.",
                   "Let's go with Redis and drop Memcached.", "Let's go with Redis and keep Memcached out of it."):
        doc = apply(new_document("s"), [ev(prompt)])
        edges = [k for k in doc["edges"] if "|decides|" in k or "|contradicts|" in k]
        assert any(k.endswith("|decides|redis") for k in edges), prompt
        assert not any(k.endswith("|decides|memcached") for k in edges), prompt
        assert any(k.endswith("|contradicts|memcached") for k in edges), prompt


def test_a_correction_naming_an_earlier_choice_supersedes_it_and_decides_nothing_else() -> None:
    doc = new_document("s")
    apply(doc, [ev("Let's go with SQLite for the local cache.", id="e1")])
    apply(doc, [ev("Let's go with PostgreSQL for the orders table.", id="e2")])
    apply(doc, [ev("Actually, keep SQLite out entirely. Then make save_order write to PostgreSQL.", id="e3")])
    correction = next(n for n in doc["nodes"].values() if n["kind"] == "correction")
    assert correction["label"] == "Keep SQLite out entirely"
    assert f"{correction['id']}|supersedes|use-sqlite-for-the-local-cache" in doc["edges"]
    assert not any(k.startswith(f"{correction['id']}|supersedes|use-postgresql") for k in doc["edges"])
    assert f"{correction['id']}|contradicts|sqlite" in doc["edges"]
    assert not any(k.startswith(f"{correction['id']}|decides|") for k in doc["edges"]), "save_order is no choice of the correction"


def test_a_correction_that_rejects_what_no_decision_chose_supersedes_nothing() -> None:
    doc = new_document("s")
    apply(doc, [ev("Let's go with PostgreSQL for the orders table, not SQLite.", id="e1")])
    apply(doc, [ev("Actually, keep SQLite out entirely.", id="e2")])
    assert not any("|supersedes|" in k for k in doc["edges"]), "the PostgreSQL choice already keeps SQLite out"


def test_near_duplicate_decisions_merge_into_the_fuller_wording() -> None:
    doc = new_document("s")
    apply(doc, [ev("Use PostgreSQL.", id="e1")])
    apply(doc, [ev("Use PostgreSQL for the orders table.", id="e2")])
    assert list(_choices(doc).values()) == ["Use PostgreSQL for the orders table"]
    doc = new_document("s")
    apply(doc, [ev("We're switching to Bento for the newsletter.", id="e1")])
    apply(doc, [ev("Use Bento.", id="e2")])
    assert len(_choices(doc)) == 1, _choices(doc)
    assert "bento" in next(iter(_choices(doc).values())).lower()


def test_decisions_about_different_things_do_not_merge() -> None:
    doc = new_document("s")
    apply(doc, [ev("Use Redis for sessions.", id="e1")])
    apply(doc, [ev("Use Redis for the job queue.", id="e2")])
    assert len(_choices(doc)) == 2


def test_a_decision_label_is_a_plain_sentence() -> None:
    doc = apply(new_document("s"), [ev("We decided: the cache is Redis, not memcached.")])
    assert list(_choices(doc).values()) == ["The cache is Redis, not memcached"]
    doc = apply(new_document("s"), [ev("Let's set the retry limit to 3 for the importer, since it flaps.")])
    assert list(_choices(doc).values()) == ["Set the retry limit to 3 for the importer"]


def test_headings_plan_titles_emphasis_and_fragments_are_no_decisions_and_shouting_is_no_name() -> None:
    doc = new_document("s")
    brief = ("Put your brief here:\n\n# Extraction brief\n\n## Rules\n- DO NOT edit the vendored files.\n"
             "- IMPORTANT: keep the output short.\n")
    apply(doc, [ev(brief, id="e1")])
    apply(doc, [ev("## Plan: Extraction and Documentation Plan\n\n**Critical Issue**: The repository fundamentally misinterprets "
                   "the spec, so use the parser.\n\nI'll go with the existing parser.", event="AssistantText", id="a2")])
    apply(doc, [ev("Plan approved", event="PostToolUse", tool="ExitPlanMode",
                   data={"plan": "# Plan: Extraction and Documentation Plan\n\nRewrite `parse_doc` first."}, id="e3")])
    labels = _choices(doc).values()
    assert not any(label.startswith(("Put your", "Plan:", "**", "#")) or "Critical Issue" in label for label in labels), labels
    assert "Go with the existing parser" in labels
    names = {n["label"] for n in doc["nodes"].values() if n["kind"] in ("entity", "symbol")}
    assert not names & {"DO NOT", "IMPORTANT", "Rules", "Extraction"}, names
    plan = doc["nodes"]["plan-extraction-and-documentation-plan"]
    assert plan["kind"] == "summary", "an approved plan summarises the work to come; its title is no decision"


def test_an_assent_that_names_nothing_and_pasted_output_are_no_requests() -> None:
    from rolling_graph.probe.offline_tasks import is_request

    for text in ("yes, please do", "ok, let's do this", "yes do option 1", "let's try 2=", "1+2", "that was the idea, yes",
                 "Operation stopped by hook: Another session is active", "=== Step 11: Check attribution ===\nFound x"):
        assert not is_request(text), text
    for text in ("Lets do the implementation too", "can you do a mixed scenario?", "integration tests are failing", "fix it"):
        assert is_request(text), text
    doc = new_document("s")
    apply(doc, [ev("Can you add a retry to the importer?", id="e1")])
    apply(doc, [ev("yes, please do", id="e2")])
    assert [n["label"] for n in doc["nodes"].values() if n["kind"] == "request"] == ["Can you add a retry to the importer?"]


def test_an_answer_to_claudes_question_is_the_users_choice() -> None:
    data = {"qa": [["Directory", "Where should the e2e tests live?", "Separate e2e_test/ (Recommended)"], ["", "Which one?", "3"]]}
    doc = apply(new_document("s"), [ev("answered", event="PostToolUse", tool="AskUserQuestion", data=data)])
    choices = [n for n in doc["nodes"].values() if n["kind"] == "decision"]
    assert [n["label"] for n in choices] == ["Separate e2e_test/ (Directory)"]
    assert not any(n["kind"] == "request" for n in doc["nodes"].values()), "a bare number names nothing"


def test_a_line_that_exited_zero_settles_the_failures_of_each_of_its_steps() -> None:
    """A rebase stops on a conflict; ``git add a.go && git rebase --continue`` finishes it.
    The rebase's error is settled by the rebase in that line, not only by a ``git add``."""
    doc = apply(new_document("s"), [
        ev("$ git rebase origin/main\nerror: could not apply a4f7a52... multi session", event="PostToolUse", tool="Bash",
           error=True, data={"cmd": "git rebase origin/main", "failed": True}, id="e1"),
    ])
    errors = [nid for nid, n in doc["nodes"].items() if n["kind"] == "error"]
    assert len(errors) == 1 and doc["nodes"][errors[0]]["facts"]["state"] == "open"
    apply(doc, [
        ev("$ git add a.go && git rebase --continue\nSuccessfully rebased and updated refs/heads/main.", event="PostToolUse",
           tool="Bash", data={"cmd": "git add a.go && git rebase --continue"}, id="e2"),
    ])
    assert doc["nodes"][errors[0]]["facts"]["state"] == "resolved"


def test_a_passing_lint_does_not_settle_a_failing_test_run_of_the_same_task_runner() -> None:
    doc = apply(new_document("s"), [
        ev("$ mise run test\n--- FAIL: TestResume_SessionLogAlreadyExists (0.46s)\nFAIL", event="PostToolUse", tool="Bash",
           error=True, data={"cmd": "mise run test", "failed": True}, id="e1"),
        ev("$ mise run lint\n0 issues.", event="PostToolUse", tool="Bash", data={"cmd": "mise run lint"}, id="e2"),
        ev("$ mise run fmt\n", event="PostToolUse", tool="Bash", data={"cmd": "mise run fmt"}, id="e3"),
    ])
    errors = [n for n in doc["nodes"].values() if n["kind"] == "error"]
    assert [e["label"] for e in errors] == ["--- FAIL: TestResume_SessionLogAlreadyExists (0.46s)"]
    assert errors[0]["facts"]["state"] == "open"
    apply(doc, [ev("$ mise run test\nok  \tentire.io/cli\t2.0s", event="PostToolUse", tool="Bash", data={"cmd": "mise run test"}, id="e4")])
    assert [n for n in doc["nodes"].values() if n["kind"] == "error"][0]["facts"]["state"] == "resolved"
    assert doc["nodes"]["mise-run-test"]["facts"]["outcome"] == "pass"


def test_a_japanese_prompt_names_the_code_and_the_file_it_is_about() -> None:
    from rolling_graph.capture.entities import paths_in

    text = "src/config.tsのloadConfig関数を直してください。TestLoadConfigが失敗します"
    doc = apply(new_document("s"), [ev(text, paths=paths_in(text))])
    labels = {node["label"]: node["kind"] for node in doc["nodes"].values()}
    assert labels.get("loadConfig") == "symbol" and labels.get("TestLoadConfig") == "symbol", labels
    assert "src/config.ts" in {node.get("facts", {}).get("path", node["label"]) for node in doc["nodes"].values() if node["kind"] == "file"}, labels


def test_a_failing_go_test_run_behind_a_pipe_is_a_failure_and_settles_nothing() -> None:
    """``mise run test 2>&1 | tail -40`` exits as tail does, and Go prints no count: the run
    was recorded as passed and settled every open error of its family (73 of the entire-cli
    sessions' piped test runs that showed ``--- FAIL`` or ``[build failed]``)."""
    cmd = "mise run test 2>&1 | tail -40"
    doc = apply(new_document("s"), [
        ev("$ mise run test\nError: Exit code 1\n--- FAIL: TestResume_SessionLogAlreadyExists (0.46s)\nFAIL", event="PostToolUse",
           tool="Bash", error=True, data={"cmd": "mise run test", "failed": True}, id="e1"),
    ])
    [error] = [nid for nid, n in doc["nodes"].items() if n["kind"] == "error"]
    apply(doc, [ev(f"$ {cmd}\n[test] $ go test ./...\nok  \tentire.io/cli/paths\t(cached)\n# entire.io/cli/strategy\n"
                   "strategy/session.go:256:29: undefined: plumbing\nFAIL\tentire.io/cli/strategy [build failed]\n[test] ERROR task failed",
                   event="PostToolUse", tool="Bash", error=True, data={"cmd": cmd}, id="e2")])
    assert doc["nodes"][error]["facts"]["state"] == "open", "a failing run settles no error"
    run = doc["nodes"]["mise-run-test"]["facts"]
    assert run["outcome"] == "fail" and "undefined: plumbing" in run["result"]
    apply(doc, [ev(f"$ {cmd}\n[test] $ go test ./...\nok  \tentire.io/cli/paths\t0.3s\nok  \tentire.io/cli/strategy\t1.2s",
                   event="PostToolUse", tool="Bash", data={"cmd": cmd}, id="e3")])
    assert doc["nodes"][error]["facts"]["state"] == "resolved"
    assert doc["nodes"]["mise-run-test"]["facts"]["outcome"] == "pass"


def todo_write(items: list[tuple[str, str]], id: str) -> dict:
    return ev("TodoWrite", event="PostToolUse", tool="TodoWrite", data={"todos": [list(i) for i in items]}, id=id)


def statuses(doc: dict) -> dict[str, str]:
    return {n["label"]: n["facts"]["status"] for n in doc["nodes"].values() if n["kind"] == "task"}


def test_a_todo_list_that_leaves_open_items_out_takes_them_off_the_list() -> None:
    # TodoWrite states the whole list: a new plan that leaves out earlier items still open
    # dropped them (not done); items finished before stay done; what it lists is as it says.
    doc = new_document("s")
    apply(doc, [todo_write([("Read the PR", "completed"), ("Run review agents", "in_progress"), ("Write the summary", "pending")], "e1")])
    apply(doc, [todo_write([("Fix the hash length", "in_progress"), ("Run the tests", "pending")], "e2")])
    assert statuses(doc) == {"Read the PR": "completed", "Run review agents": "dropped", "Write the summary": "dropped",
                             "Fix the hash length": "in_progress", "Run the tests": "pending"}
    # The same item listed again is back on the list.
    apply(doc, [todo_write([("Fix the hash length", "completed"), ("Write the summary", "pending")], "e3")])
    assert statuses(doc) == {"Read the PR": "completed", "Run review agents": "dropped", "Write the summary": "pending",
                             "Fix the hash length": "completed", "Run the tests": "dropped"}


def test_a_todo_list_leaves_tracker_tasks_and_earlier_sessions_tasks_alone() -> None:
    doc = new_document("s")
    apply(doc, [ev("TaskCreate", event="PostToolUse", tool="TaskCreate", data={"subject": "Port the parser", "ref": "7"}, id="e1")])
    apply(doc, [todo_write([("Plan the port", "in_progress")], "e2")])
    doc["nodes"]["task-plan-the-port"]["pulled"] = True  # as if an earlier session's, from the warm graph
    apply(doc, [todo_write([("Write the port", "pending")], "e3")])
    assert statuses(doc) == {"Port the parser": "pending", "Plan the port": "in_progress", "Write the port": "pending"}


def test_a_deleted_task_is_dropped() -> None:
    doc = new_document("s")
    apply(doc, [ev("TaskCreate", event="PostToolUse", tool="TaskCreate", data={"subject": "Port the parser", "ref": "7"}, id="e1")])
    apply(doc, [ev("TaskUpdate", event="PostToolUse", tool="TaskUpdate", data={"ref": "7", "status": "deleted", "subject": ""}, id="e2")])
    assert statuses(doc) == {"Port the parser": "dropped"}


def bash(cmd: str, output: str, id: str, failed: bool = False, **kw) -> dict:
    return ev(f"$ {cmd}\n{output}", event="PostToolUse", tool="Bash", error=failed, data={"cmd": cmd, "failed": failed}, id=id, **kw)


def error_states(doc: dict) -> dict[str, str]:
    return {n["label"]: n["facts"]["state"] for n in doc["nodes"].values() if n["kind"] == "error"}


def assert_open_until(events: list[dict], settling: dict) -> None:
    """Every error ``events`` open stays open through them, and ``settling`` resolves them all."""
    doc = apply(new_document("s"), events)
    assert error_states(doc) and set(error_states(doc).values()) == {"open"}, "nothing before the last run settles it"
    apply(doc, [settling])
    assert set(error_states(doc).values()) == {"resolved"}


def test_code_that_compiles_again_has_no_compile_error_whichever_command_compiled_it() -> None:
    # (the entire-cli sessions: a block said "Open problems: rewind.go:579:13: undefined: agent"
    # after `mise run lint` and `mise run test` had passed)
    doc = apply(new_document("s"), [
        ev("Edit cmd/entire/cli/rewind.go", event="PostToolUse", tool="Edit", paths=["cmd/entire/cli/rewind.go"], id="e1"),
        bash("go build ./...", "# entire.io/cli/cmd/entire/cli\ncmd/entire/cli/rewind.go:579:13: undefined: agent", "e2", failed=True),
        bash("go test -run TestX ./session", "FAIL ./session [setup failed]\nsession_test.go:4:2: \"context\" imported and not used",
             "e3", failed=True),
    ])
    assert set(error_states(doc).values()) == {"open"} and len(error_states(doc)) == 2
    # A passing run elsewhere compiles neither: `go test ./paths` builds another package.
    apply(doc, [bash("go test ./paths", "ok  \tentire.io/cli/paths\t0.2s", "e4")])
    assert set(error_states(doc).values()) == {"open"}
    # `go build` compiles the package's code, not its tests; the task runner's tests compile both.
    apply(doc, [bash("go build ./cmd/...", "", "e5")])
    assert error_states(doc)["rewind.go:579:13: undefined: agent"] == "resolved"
    assert error_states(doc)['session_test.go:4:2: "context" imported and not used'] == "open"
    apply(doc, [bash("mise run test", "ok  \tentire.io/cli/session\t0.4s", "e6")])
    assert set(error_states(doc).values()) == {"resolved"}


def test_a_linters_finding_is_settled_by_the_linter_not_by_a_build() -> None:
    assert_open_until([
        bash("mise run lint", "resume.go:406:4: error is not nil (line 400) but it returns nil (nilerr)", "e1", failed=True),
        bash("go build ./...", "", "e2"),
        bash("mise run test", "ok  \tentire.io/cli\t1.0s", "e3"),
    ], bash("mise run lint", "0 issues.", "e4"))


def test_a_failing_test_run_again_by_name_and_passing_is_settled() -> None:
    # (another test's run settles nothing)
    assert_open_until([
        bash("mise run test:integration", "--- FAIL: TestResume_SessionLogAlreadyExists (0.46s)\nFAIL", "e1", failed=True),
        bash('go test -tags=integration -v -run "TestShadow" ./cmd/entire/cli/integration_test/...', "ok", "e2"),
    ], bash('go test -tags=integration -v -run "TestResume_" ./cmd/entire/cli/integration_test/...', "ok", "e3"))


def test_a_go_command_in_a_subdirectory_compiles_only_that_directorys_packages() -> None:
    assert_open_until([
        ev("Edit cmd/entire/cli/rewind.go", event="PostToolUse", tool="Edit", paths=["cmd/entire/cli/rewind.go"], id="e1"),
        bash("go build ./...", "cmd/entire/cli/rewind.go:579:13: undefined: agent", "e2", failed=True),
        bash("go vet ./...", "", "e3", cwd="session"),
    ], bash("go vet ./...", "", "e4", cwd="cmd/entire"))


def test_a_passing_go_test_of_other_packages_does_not_settle_a_failing_one() -> None:
    assert_open_until([
        bash("go test ./session", "--- FAIL: TestSessionID (0.01s)\nFAIL\tentire.io/cli/session\t0.2s", "e1", failed=True),
        bash("go test ./paths", "ok  \tentire.io/cli/paths\t0.2s", "e2"),
    ], bash("go test ./...", "ok  \tentire.io/cli/session\t0.3s", "e3"))


def test_a_compile_error_of_tagged_files_is_settled_only_by_a_run_that_compiles_them() -> None:
    # Neither untagged nor integration-tagged runs compiled the e2e files. The label names the
    # file alone (two testenv.go): the settling run covers the failing run's packages.
    assert_open_until([
        ev("Edit", event="PostToolUse", tool="Edit", paths=["cmd/cli/integration_test/testenv.go"], id="e1"),
        ev("Edit", event="PostToolUse", tool="Edit", paths=["cmd/cli/e2e_test/testenv.go"], id="e2"),
        bash("go build -tags=e2e ./cmd/cli/e2e_test/...", "cmd/cli/e2e_test/testenv.go:42:26: undefined: defaultAgent", "e3", failed=True),
        bash("mise run test", "ok  \tentire.io/cli\t1.0s", "e4"),
        bash("go vet -tags=integration ./cmd/cli/...", "", "e5"),
    ], bash("go vet -tags=e2e ./cmd/cli/e2e_test/...", "", "e6"))


def test_a_failing_test_run_that_ran_its_tests_compiled_its_packages() -> None:
    doc = apply(new_document("s"), [
        bash("go test ./cmd/cli/integration_test/...", "FAIL ./cmd/cli/integration_test [setup failed]", "e1", failed=True),
    ])
    assert list(error_states(doc).values()) == ["open"]
    apply(doc, [bash("go test -run TestOverlap ./cmd/cli/integration_test/...",
                     "=== RUN   TestOverlap\n--- FAIL: TestOverlap (0.28s)\nFAIL\tentire.io/cli/cmd/cli/integration_test\t0.4s", "e2", failed=True)])
    assert error_states(doc) == {"FAIL ./cmd/cli/integration_test [setup failed]": "resolved", "--- FAIL: TestOverlap (0.28s)": "open"}


def test_a_cd_that_failed_is_no_problem_of_the_work() -> None:
    doc = apply(new_document("s"), [
        bash("cd cmd/cli/integration_test && go test ./...", "(eval):cd:1: no such file or directory: cmd/cli/integration_test", "e1", failed=True),
    ])
    assert error_states(doc) == {}


def test_a_subagents_todo_list_takes_nothing_off_the_sessions_list() -> None:
    from rolling_graph.capture.events import event_from_payload

    doc = new_document("s")
    apply(doc, [todo_write([("Port the parser", "in_progress")], "e1")])
    # The hook's pending event from a tool a subagent called (Claude Code's agent_id).
    payload = {"session_id": "s", "hook_event_name": "PostToolUse", "tool_name": "TodoWrite", "agent_id": "a1b2",
               "tool_input": {"todos": [{"content": "Read the grammar", "status": "in_progress", "activeForm": "Reading"}]},
               "tool_response": {}}
    sub = event_from_payload("PostToolUse", payload, "e2", NOW)
    assert sub.get("subagent") is True
    apply(doc, [sub])
    assert statuses(doc) == {"Port the parser": "in_progress", "Read the grammar": "in_progress"}
    apply(doc, [todo_write([("Port the parser", "completed")], "e3")])  # the session's own next list
    assert statuses(doc) == {"Port the parser": "completed", "Read the grammar": "dropped"}
